"""The `extractive` summarizer: a deterministic fake that fills the five summary fields by
extracting from the summary request, with a configurable recall of planted probes.

What goes where (from the compressed messages, never from the system prompt or the prompt; the
probes from anywhere in the request):
- `task_overview`: the user requests, in order.
- `current_state`: the tool calls seen, as the tool's name and its main argument (a path, a
  command, a query, ...), once each; then the offloaded files the span's reminders name.
- `important_discoveries`: the first line of each error result, with its tool.
- `next_steps`: the tasks created (`TaskCreate` subjects) and not later completed or deleted,
  then the latest user request.
- `context_to_preserve`: the probes it remembers (their planted lines), then what the old summary
  preserved: its own `context_to_preserve` and what follows its template (the offload reminder),
  so summaries of summaries keep what the first one kept.

Invariants:
- Deterministic: the same request gives the same answer, in any order of requests. A probe the
  request shows (`ctxlab.core.world.retention.probe_found`) is kept iff a stable hash of
  `(seed, key)` falls below the recall of its kind; a probe not kept leaves no line in any field
  (lines holding it are dropped), and one kept once is kept in every later summary.
- Each field is at most `field_chars` characters: whole lines are kept while they fit (the
  newest for `current_state`, the first for the others); a single longer line is cut.
- Failure modes (`fail_on`, `fail_mode`, `window`) are `FixedSummarizer`'s, shared code; so is
  the answer's form: a structured-output call when the request offers the schema tool, the
  fields as free text when it offers none.
- A request that embeds the conversation as text in its prompt (instead of as messages) gives
  only probes in `context_to_preserve`: the other fields read messages.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxlab.core.messages.blocks import ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.world.reading import (
    format_fields,
    message_text,
    placeholder_values,
    read_summary_request,
    visible_text,
)
from ctxlab.core.world.retention import Probe, probe_found
from ctxlab.models.summarizers import FailMode, answer_with, scheduled_failure
from ctxlab.texts import CTXLAB_TEXTS, Texts

MAIN_ARGUMENTS = ("file_path", "command", "cmd", "query", "q", "pattern", "url", "path", "subject", "task_id")
"""Argument names that say what a call is about, in order of preference."""
CLOSED_TASK_STATES = ("completed", "deleted")
NONE = "(none)"
_ARGUMENT_CHARS = 120
_NUMBER = re.compile(r"\d+")


def keeps(seed: int, key: str, recall: float) -> bool:
    """Whether a probe is remembered: a stable hash of `(seed, key)` in [0, 1) is below `recall`.

    >>> keeps(0, "db-port", 1.0), keeps(0, "db-port", 0.0)
    (True, False)
    """
    digest = hashlib.sha256(f"{seed}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < recall


def cap_lines(lines: Sequence[str], limit: int, *, newest: bool = False) -> str:
    """Whole lines joined by newlines, at most `limit` characters: the first ones, or the last
    ones when `newest`; a first line longer than `limit` is cut to it.

    >>> cap_lines(["aaa", "bb", "c"], 6), cap_lines(["aaa", "bb", "c"], 6, newest=True)
    ('aaa\\nbb', 'bb\\nc')
    >>> cap_lines(["abcdefgh"], 3), cap_lines([], 3)
    ('abc', '(none)')
    """
    order = list(reversed(lines)) if newest else list(lines)
    kept: list[str] = []
    used = 0
    for line in order:
        cost = len(line) + (1 if kept else 0)
        if used + cost > limit:
            if not kept:
                kept.append(line[-limit:] if newest else line[:limit])
            break
        kept.append(line)
        used += cost
    if newest:
        kept.reverse()
    return "\n".join(kept) if kept else NONE


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def _first_line(text: str, limit: int = _ARGUMENT_CHARS) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def _arguments(raw: str) -> dict[str, Any]:
    try:
        loaded = json.loads(raw)
    except json.JSONDecodeError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def main_argument(raw: str) -> str:
    """What a call is about: its preferred argument, else its first scalar one, else ''.

    >>> main_argument('{"limit": 5, "file_path": "src/app.py"}'), main_argument('{"n": 3}')
    ('src/app.py', '3')
    """
    args = _arguments(raw)
    if not args:
        return "" if raw.strip() in ("", "{}") else _first_line(raw)
    preferred = [args[k] for k in MAIN_ARGUMENTS if k in args]
    scalars = [v for v in (*preferred, *args.values()) if isinstance(v, str | int | float)]
    return _first_line(str(scalars[0])) if scalars else ""


def _blocks(messages: Sequence[Message]) -> list[Any]:
    return [b for m in messages for b in m.blocks]


def user_requests(messages: Sequence[Message]) -> list[str]:
    """The user messages' lines: each request's first line marked `- `, the rest indented."""
    lines: list[str] = []
    for message in messages:
        if message.role != "user":
            continue
        texts = [line for line in message_text(message).splitlines() if line.strip()]
        lines.extend(f"- {line}" if i == 0 else f"  {line}" for i, line in enumerate(texts))
    return lines


def calls_seen(messages: Sequence[Message]) -> list[str]:
    """`- tool argument` for each distinct call, in order."""
    calls = [b for b in _blocks(messages) if isinstance(b, ToolCallBlock)]
    return _unique(f"- {c.name} {main_argument(c.input)}".rstrip() for c in calls)


def errors_seen(messages: Sequence[Message]) -> list[str]:
    """`- tool: first line` of each distinct error result."""
    results = [b for b in _blocks(messages) if isinstance(b, ToolResultBlock) and b.state == "error"]
    return _unique(f"- {r.name}: {_first_line(r.text, 200)}" for r in results)


def open_tasks(messages: Sequence[Message], create: str, update: str) -> list[str]:
    """Subjects of tasks created (with a successful result) and not completed or deleted later.

    A created task's id is the first number of its result (`Task (id=3) created`, `Created
    task 3: ...`).
    """
    blocks = _blocks(messages)
    results = {b.id: b for b in blocks if isinstance(b, ToolResultBlock)}
    created: list[tuple[str | None, str]] = []
    closed: set[str] = set()
    for call in (b for b in blocks if isinstance(b, ToolCallBlock)):
        args = _arguments(call.input)
        result = results.get(call.id)
        if call.name == create and result is not None and result.state == "success":
            number = _NUMBER.search(result.text)
            created.append((number.group() if number else None, str(args.get("subject", ""))))
        elif call.name == update and args.get("status") in CLOSED_TASK_STATES:
            closed.add(str(args.get("task_id")))
    return _unique(f"- {subject}" for task, subject in created if task is None or task not in closed)


@dataclass(slots=True)
class ExtractiveSummarizer:
    """Answers summary requests by extraction (see the module docstring).

    Attributes:
        probes: the planted probes it may remember.
        fact_recall, rule_recall, artifact_recall: the share of each kind it remembers, 0..1.
        seed: picks which probes fall under the recall.
        field_chars: the cap on each field, in characters.
        summary_template: the template summaries are rendered with (to read the old one back).
        offload_reminders: `{path}` templates of the reminders that name offloaded files.
        task_create_tool, task_update_tool: the task tools' names.
        fail_on, fail_mode, window: as `FixedSummarizer`'s.
    """

    probes: tuple[Probe, ...] = ()
    fact_recall: float = 1.0
    rule_recall: float = 1.0
    artifact_recall: float = 1.0
    seed: int = 0
    field_chars: int = 800
    summary_template: str = CTXLAB_TEXTS.summary_template
    offload_reminders: tuple[str, ...] = (
        CTXLAB_TEXTS.context_offload_reminder,
        CTXLAB_TEXTS.tool_result_offload,
    )
    task_create_tool: str = "TaskCreate"
    task_update_tool: str = "TaskUpdate"
    fail_on: frozenset[int] = frozenset()
    fail_mode: FailMode = "no_tool_call"
    window: int | None = None
    # The requests answered, in order, for inspection; None keeps none, as a run does: each
    # request holds its whole context, so keeping them all costs O(calls x context) memory.
    requests: list[ModelRequest] | None = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in ("fact_recall", "rule_recall", "artifact_recall"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} is {value}; a recall is a share in [0, 1]")
        if self.field_chars < 1:
            raise ValueError(f"field_chars is {self.field_chars}; each field needs at least 1 character")

    @classmethod
    def for_texts(cls, texts: Texts, **params: Any) -> ExtractiveSummarizer:
        """A summarizer that reads summaries and reminders written with `texts`."""
        reminders = (texts.context_offload_reminder, texts.tool_result_offload)
        return cls(summary_template=texts.summary_template, offload_reminders=reminders, **params)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The extracted summary, or a failure on the listed invocations or over the window."""
        if self.requests is not None:
            self.requests.append(request)
        failed = scheduled_failure(
            request, fail_on=self.fail_on, fail_mode=self.fail_mode, window=self.window
        )
        return answer_with(self.summarize(request.messages), request) if failed is None else failed

    def recall(self, probe: Probe) -> float:
        """The recall of the probe's kind."""
        recalls = {"fact": self.fact_recall, "rule": self.rule_recall, "artifact": self.artifact_recall}
        return recalls[probe.kind]

    def remembered(self, probe: Probe) -> bool:
        """Whether this summarizer keeps `probe` whenever it sees it."""
        return keeps(self.seed, probe.key, self.recall(probe))

    def summarize(self, messages: Sequence[Message]) -> dict[str, str]:
        """The five fields for a summary request's messages."""
        parts = read_summary_request(messages)
        seen = visible_text(messages)
        kept = [p for p in self.probes if probe_found(p, seen) and self.remembered(p)]
        forgotten = [p for p in self.probes if not self.remembered(p)]
        span = parts.compressed
        latest = [m for m in span if m.role == "user"][-1:]
        fields = {
            "task_overview": user_requests(span),
            "current_state": [*calls_seen(span), *self._saved(span)],
            "important_discoveries": errors_seen(span),
            "next_steps": [
                *open_tasks(span, self.task_create_tool, self.task_update_tool),
                *(f"- reply to: {_first_line(message_text(m), 200)}" for m in latest),
            ],
            "context_to_preserve": _unique([*(p.text for p in kept), *self._carried(parts.old_summary)]),
        }
        return {
            name: cap_lines(self._scrub(lines, forgotten), self.field_chars, newest=name == "current_state")
            for name, lines in fields.items()
        }

    def _saved(self, span: Sequence[Message]) -> list[str]:
        text = visible_text(span)
        paths = [p for t in self.offload_reminders for p in placeholder_values(t, "path", text)]
        return _unique(f"- saved: {p}" for p in paths)

    def _carried(self, old_summary: str) -> list[str]:
        if not old_summary:
            return []
        read = format_fields(self.summary_template, old_summary)
        if read is None:
            return old_summary.splitlines()
        preserved = read.fields.get("context_to_preserve", "")
        lines = [*preserved.splitlines(), *read.rest.splitlines()]
        return [line for line in lines if line.strip() and line != NONE]

    @staticmethod
    def _scrub(lines: Sequence[str], forgotten: Sequence[Probe]) -> list[str]:
        return [line for line in lines if not any(probe_found(p, line) for p in forgotten)]

    def params(self) -> dict[str, object]:
        """The summarizer's parameters, for results."""
        return {
            "kind": "extractive",
            "seed": self.seed,
            "fact_recall": self.fact_recall,
            "rule_recall": self.rule_recall,
            "artifact_recall": self.artifact_recall,
            "field_chars": self.field_chars,
            "probes": [p.key for p in self.probes],
            "fail_on": sorted(self.fail_on),
            "fail_mode": self.fail_mode,
            "window": self.window,
        }
