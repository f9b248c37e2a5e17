"""`PolicyModel`: follows a workload script and reacts to what its requests show.

It answers like `ScriptModel` (round k of turn t, then the turn's final answer), with two
reactions that add rounds the script does not have:

- **Re-list tasks after a compression.** When a request's summary differs from the previous
  request's (a compression happened) while tasks it created are still open, it first calls
  `TaskList`.
- **Re-read what it needs.** The plan's `needs` say which probe the agent needs before which
  round (`Need(key, turn, round)`; `round` equal to the turn's number of rounds means before the
  final answer). If the probe is not visible in the request (context and summary), it calls the
  read tool on an offloaded file a reminder in the request names (a summary checkpoint's
  `active_checkpoint: <path>` among them): first the files named in the summary, then those
  named in the context, newest first, each file at most once per need. When the probe shows up
  it continues the script; when no unread file is left, or it has read `max_rereads` files for
  the need, it records `lost` and continues. (Reading a whole context
  offload back usually brings the request over the trigger again, so the next compression can
  sweep the read result away before the model sees it: the cap ends that loop.)

Invariants:
- Deterministic: its answers depend only on the requests, in order, and its parameters.
- Extra rounds never advance the script: round k of a turn is answered exactly once.
- Open tasks are counted from its own calls: each `TaskCreate` opens one, each `TaskUpdate` to
  `completed` or `deleted` closes one.
- Extra calls have ids `policy-0001`, `policy-0002`, ..., skipping ids the script uses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxlab.core.compaction.checkpoint import CHECKPOINT_LINE
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.world.reading import (
    is_summary_message,
    message_text,
    placeholder_values,
    request_summary,
    summary_index,
)
from ctxlab.core.world.reading import visible_text as request_text
from ctxlab.core.world.retention import Probe, probe_found
from ctxlab.core.world.script import Script, ScriptedRound, ScriptedTurn
from ctxlab.models.scripted import round_response
from ctxlab.texts import CTXLAB_TEXTS, Texts

PolicyEventKind = Literal["task_list", "reread", "found", "lost"]
CLOSED_TASK_STATES = ("completed", "deleted")


@dataclass(frozen=True, slots=True, kw_only=True)
class Need:
    """The agent needs probe `key` before it produces round `round` of turn `turn` (0-based)."""

    key: str
    turn: int
    round: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyEvent:
    """One reaction: at the request `call_index` of turn `turn`, what the model did and why.

    `task_list`: an extra `TaskList` round; `reread`: an extra read of `path` for probe `key`;
    `found`: `key` was visible when needed (`path`: the last file read for it, if any);
    `lost`: `key` was needed, not visible, and no unread offloaded file was left.
    """

    call_index: int
    turn: int
    kind: PolicyEventKind
    key: str = ""
    path: str = ""


@dataclass(slots=True)
class PolicyModel:
    """Follows `script` (ids assigned) and reacts to compressions and missing probes."""

    script: Script
    probes: tuple[Probe, ...] = ()
    needs: tuple[Need, ...] = ()
    offload_reminders: tuple[str, ...] = (
        CTXLAB_TEXTS.context_offload_reminder,
        CTXLAB_TEXTS.tool_result_offload,
        CHECKPOINT_LINE,
    )
    read_tool: str = "Read"
    read_argument: str = "file_path"
    task_list_tool: str = "TaskList"
    task_create_tool: str = "TaskCreate"
    task_update_tool: str = "TaskUpdate"
    relist_after_compression: bool = True
    max_rereads: int = 3
    # The requests answered, in order, for inspection; None keeps none, as a run does: each
    # request holds its whole context, so keeping them all costs O(calls x context) memory.
    requests: list[ModelRequest] | None = field(default_factory=list)
    events: list[PolicyEvent] = field(default_factory=list)
    turn: int = -1
    round_index: int = 0
    open_tasks: int = 0
    last_summary: str | None = None
    settled: set[Need] = field(default_factory=set)
    tried: dict[str, list[str]] = field(default_factory=dict)
    extra_calls: int = 0

    def __post_init__(self) -> None:
        keys = {p.key for p in self.probes}
        for need in self.needs:
            if need.key not in keys:
                raise ValueError(
                    f"need {need.key!r} names no probe; give the probe in `probes` (known: {sorted(keys)})"
                )

    @classmethod
    def for_texts(cls, script: Script, texts: Texts, **params: Any) -> PolicyModel:
        """A policy model that finds offloaded files by `texts`' reminders."""
        reminders = (texts.context_offload_reminder, texts.tool_result_offload, CHECKPOINT_LINE)
        return cls(script=script, offload_reminders=reminders, **params)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """A reaction round, else the next scripted round of the request's turn, else its final answer."""
        if self.requests is not None:
            self.requests.append(request)
        if request.turn != self.turn:
            self.turn, self.round_index = request.turn, 0
        turn = self.script.turns[request.turn]
        if request.tool_choice == "none":
            return _final(turn)
        reaction = self.react(request)
        if reaction is not None:
            return reaction
        if self.round_index >= len(turn.rounds):
            return _final(turn)
        round_ = turn.rounds[self.round_index]
        self.round_index += 1
        self._count_tasks(round_)
        return round_response(round_)

    def react(self, request: ModelRequest) -> ModelResponse | None:
        """The extra round this request calls for, if any."""
        summary = request_summary(request.messages)
        compressed = self.last_summary is not None and bool(summary) and summary != self.last_summary
        self.last_summary = summary
        if compressed and self.relist_after_compression and self.open_tasks > 0:
            return self._extra(request, "task_list", self.task_list_tool, {})
        for need in self.needs:
            if need.turn == request.turn and need.round == self.round_index and need not in self.settled:
                response = self._resolve(need, request)
                if response is not None:
                    return response
        return None

    def _resolve(self, need: Need, request: ModelRequest) -> ModelResponse | None:
        probe = next(p for p in self.probes if p.key == need.key)
        tried = self.tried.setdefault(need.key, [])
        if probe_found(probe, request_text(request.messages)):
            self._event(request, "found", need.key, tried[-1] if tried else "")
            self.settled.add(need)
            return None
        unread = [p for p in self.offload_paths(request) if p not in tried]
        if not unread or len(tried) >= self.max_rereads:
            self._event(request, "lost", need.key)
            self.settled.add(need)
            return None
        tried.append(unread[0])
        args = {self.read_argument: unread[0]}
        return self._extra(request, "reread", self.read_tool, args, key=need.key, path=unread[0])

    def offload_paths(self, request: ModelRequest) -> list[str]:
        """Offloaded files the request's reminders name: the summary's, then the context's,
        newest first."""
        messages = request.messages
        at = summary_index(messages)
        start = at + 1 if is_summary_message(messages, at) else at
        texts = [request_summary(messages), *(message_text(m) for m in reversed(messages[start:]))]
        paths: list[str] = []
        for text in texts:
            named = [p for t in self.offload_reminders for p in placeholder_values(t, "path", text)]
            paths.extend(sorted(named, key=text.rfind, reverse=True))
        return list(dict.fromkeys(paths))

    def _extra(
        self, request: ModelRequest, kind: PolicyEventKind, tool: str, args: dict[str, str], **about: str
    ) -> ModelResponse:
        self._event(request, kind, about.get("key", ""), about.get("path", ""))
        call = ToolCallBlock(id=self._next_id(), name=tool, input=json.dumps(args, ensure_ascii=False))
        return ModelResponse(blocks=(call,))

    def _event(self, request: ModelRequest, kind: PolicyEventKind, key: str = "", path: str = "") -> None:
        event = PolicyEvent(call_index=request.call_index, turn=request.turn, kind=kind, key=key, path=path)
        self.events.append(event)

    def _next_id(self) -> str:
        taken = {c.id for c in self.script.calls()}
        while True:
            self.extra_calls += 1
            candidate = f"policy-{self.extra_calls:04d}"
            if candidate not in taken:
                return candidate

    def _count_tasks(self, round_: ScriptedRound) -> None:
        for call in round_.calls:
            if call.tool == self.task_create_tool:
                self.open_tasks += 1
            elif call.tool == self.task_update_tool and _status(call.input) in CLOSED_TASK_STATES:
                self.open_tasks = max(0, self.open_tasks - 1)

    def params(self) -> dict[str, object]:
        """The model's parameters, for results."""
        return {
            "kind": "policy",
            "needs": [{"key": n.key, "turn": n.turn, "round": n.round} for n in self.needs],
            "read_tool": self.read_tool,
            "task_list_tool": self.task_list_tool,
            "relist_after_compression": self.relist_after_compression,
            "max_rereads": self.max_rereads,
        }


def _final(turn: ScriptedTurn) -> ModelResponse:
    return ModelResponse(blocks=(TextBlock(text=turn.final),)) if turn.final else ModelResponse()


def _status(raw: str) -> str:
    try:
        args = json.loads(raw)
    except json.JSONDecodeError:
        return ""
    status = args.get("status") if isinstance(args, dict) else None
    return status if isinstance(status, str) else ""
