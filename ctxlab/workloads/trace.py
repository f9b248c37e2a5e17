"""Replay of real transcripts: an OpenAI chat JSONL file mapped into a `Script`
(docs/architecture.md, Workloads); reading the files themselves is `ctxlab.workloads.files`.

One message per line: `role`, `content` (a string, null, or a list of parts), `tool_calls`,
`tool_call_id`, and two keys the importers write where a source has them: `reasoning_content`
(an assistant's reasoning, as DeepSeek's API names it) and `is_error` (a tool result that is an
error); an assistant's `refusal` is text after its content; other keys are ignored. The mapping:

- Leading system (or developer) messages form the system prompt, joined by a blank line; a later
  one is user text at its place.
- Each user message starts a turn. A user (or later system) message that follows another with no
  assistant message between joins that turn's user message as another part: the source made no
  model call between them, so neither does the replay.
- The assistant messages up to the next user message are the turn's reply. An assistant message
  with calls is a round (its text, joined after any text-only messages before it, then its
  calls); text-only messages after the last round are joined into the final answer. Texts are
  joined with a blank line, empty ones skipped.
- Legacy function calling (an assistant's `function_call`, answered by a `function` message) is
  read as a tool call and its result (`ctxlab.workloads.chat_legacy`).
- A `tool` message is the result of the earliest unanswered call with its id, wherever that
  call is (a result after an intervening message still lands on its call); `is_error: true`
  makes it an error result.
- An assistant message's `reasoning_content` is the thinking of the round its calls make (with
  that of text-only messages before it, joined like texts); it never joins the text. Reasoning
  after a turn's last round has no round to go with and is not replayed.
- Assistant messages before any user message are part of the first reply (of a turn with an
  empty user message when the file has no user message at all).
- A last user message with no reply is a turn with no rounds and an empty final answer: the
  replay ends with one final model call.
- A reply ends where its model answers without calls, as in every loop the lab runs. A reply the
  source ended on calls (a final `submit`, an interrupted run) is replayed with one more model
  call, answered with an empty final answer; the request the source never made is in `notes`.

Invariants:
- The tools are the ones given (a `--tools` file, or the file's own); a transcript with none
  offers one schema per tool it calls, read off the calls (`ctxlab.workloads.inferred_tools`),
  so that no request names a tool it does not declare.
- Call ids are the transcript's own. Where the source repeats an id, the later call is renamed
  `<id>_dupN` (the first free N from 2), so ids are unique in the script as `Script` requires.
- A transcript that breaks the protocol is mapped as faithfully as a `Script` allows: a result
  with no unanswered call is dropped, a call with no result gets an empty one. Each such repair
  is listed in `notes`, and the source's own violations, computed with
  `ctxlab.core.wire.protocol.violations` on the file's messages, are `source_violations`, but
  for the calls of a batch that closes the file unanswered (only results, if any, after it): the
  session stopped there, so no request of the source carried them.
- Mapping the transcript of a script (`ctxlab.workloads.transcript`) gives the script back, up
  to what a transcript cannot carry.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ctxlab.core.messages.blocks import Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.protocol import RULES, Rule, Violation, violations
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.workloads.chat_legacy import current_form
from ctxlab.workloads.chat_message import TraceMessage, parse_message
from ctxlab.workloads.files import (
    JsonLine,
    Mended,
    TraceError,
    file_lines,
    jsonl_entries,
    load_tools,
    parse_tools,
    read_jsonl,
    text_lines,
)
from ctxlab.workloads.inferred_tools import inferred_schemas

ImportFormat = Literal[
    "codex",
    "claude-code",
    "gemini-cli",
    "opencode",
    "google-adk",
    "openhands",
    "swe-agent",
    "mini-swe-agent",
    "langgraph",
    "tau-bench",
    "tau2",
    "pydantic-ai",
    "bedrock-converse",
    "agentscope",
    "autogen",
    "letta",
    "llamaindex",
    "ai-sdk",
    "anthropic-messages",
    "anthropic-history",
    "openai-responses",
    "openai-agents",
    "openai-chat",
]
"""The formats a transcript is imported from, in detection order (`ctxlab.workloads.importers`
reads them; named here, where the loader takes them, so that a scenario without a transcript
imports no reader)."""

JOIN = "\n\n"
"""Separator of assistant texts joined into one round text or final answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceWorkload:
    """A replayable transcript: the script, the source's own protocol violations, and its name."""

    script: Script
    source_violations: tuple[Violation, ...]
    name: str
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Reading


def read_trace(
    path: Path | str,
    *,
    tools: Sequence[ToolSchema] = (),
    name: str | None = None,
    rules: Iterable[Rule] = RULES,
) -> TraceWorkload:
    """The workload of a transcript file (named after the file unless `name` is given).

    Raises:
        TraceError: naming the file and line of the first bad message.
    """
    with file_lines(path) as lines:
        return trace_of_lines(lines, str(path), tools=tools, name=name or Path(path).stem, rules=rules)


def trace_of_lines(
    lines: Iterable[str],
    source: str,
    *,
    tools: Sequence[ToolSchema] = (),
    name: str,
    rules: Iterable[Rule] = RULES,
) -> TraceWorkload:
    """The workload of a transcript's JSONL lines, read in one pass: memory holds the workload
    and one line, never the whole transcript.

    Raises:
        TraceError: naming the source and line of the first bad message, or no message at all.
    """

    def fail(line: int, message: str) -> TraceError:
        return TraceError(source, line, message)

    mended = Mended()
    entries = jsonl_entries(lines, source, mended)
    first = next(entries, None)
    if first is None:
        raise TraceError(source, None, "the transcript has no messages")
    messages = current_form(itertools.chain([first], entries), fail)
    workload = map_stream(messages, fail=fail, tools=tools, name=name, rules=rules, lines=True)
    warning = mended.warning()
    return replace(workload, notes=(warning, *workload.notes)) if warning else workload


# ---------------------------------------------------------------------------------------------
# Mapping


@dataclass(slots=True)
class _Call:
    id: str
    tool: str
    input: str
    result: tuple[Part, ...] | None = None
    error: bool = False


@dataclass(slots=True)
class _Round:
    text: str
    calls: list[_Call]
    thinking: str = ""


@dataclass(slots=True)
class _Turn:
    user: list[Part]
    rounds: list[_Round] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    replied: bool = False
    prelude: bool = False

    def freeze(self) -> ScriptedTurn:
        rounds = tuple(
            ScriptedRound(
                text=round_.text or None,
                thinking=round_.thinking or None,
                calls=tuple(
                    ScriptedCall(
                        tool=c.tool,
                        input=c.input,
                        result=c.result if c.result is not None else (TextBlock(text=""),),
                        error=c.error,
                        id=c.id,
                    )
                    for c in round_.calls
                ),
            )
            for round_ in self.rounds
        )
        return ScriptedTurn(user=tuple(self.user), rounds=rounds, final=_join(self.pending))


def _join(texts: Iterable[str]) -> str:
    return JOIN.join(text for text in texts if text)


@dataclass(slots=True)
class _Mapper:
    """The mapping's state while it walks the messages (mutable, local to `map_messages`)."""

    system: list[str] = field(default_factory=list)
    turns: list[_Turn] = field(default_factory=list)
    unanswered: dict[str, deque[_Call]] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    unreplayed: Counter[str] = field(default_factory=Counter)
    started: bool = False
    at: tuple[int, int | None] = (0, None)  # the message being mapped: its index, its line

    def where(self) -> str:
        """The message being mapped, as a note names it: `message 3`, `line 4 (message 3)`."""
        index, line = self.at
        return f"line {line} (message {index})" if line is not None else f"message {index}"

    def feed(self, message: TraceMessage, index: int, line: int | None = None) -> None:
        """Map the next message, the `index`-th (at `line` of a JSONL file, when given)."""
        self.at = (index, line)
        self.started = self.started or message.role != "system"
        self.unreplayed.update(message.unreplayed)
        match message.role:
            case "system" if not self.started:
                self.system.append(message.text)
            case "system" | "user":
                self.user(message.parts)
            case "assistant":
                self.assistant(message)
            case "tool":
                self.tool(message)

    def user(self, parts: tuple[Part, ...]) -> None:
        last = self.turns[-1] if self.turns else None
        if last is not None and (last.prelude or not last.replied):
            last.user.extend(parts)
            last.prelude = last.replied = False  # a prelude's reply goes on after its user message
        else:
            self.turns.append(_Turn(user=list(parts)))

    def assistant(self, message: TraceMessage) -> None:
        if not self.turns:
            self.turns.append(_Turn(user=[], prelude=True))
        turn = self.turns[-1]
        turn.replied = True
        turn.reasoning.append(message.reasoning)
        if not message.calls:
            turn.pending.append(message.text)
            return
        calls = [_Call(id=self.fresh_id(c.id), tool=c.name, input=c.arguments) for c in message.calls]
        for source, call in zip(message.calls, calls, strict=True):
            self.unanswered.setdefault(source.id, deque()).append(call)
        turn.rounds.append(
            _Round(text=_join([*turn.pending, message.text]), calls=calls, thinking=_join(turn.reasoning))
        )
        turn.pending.clear()
        turn.reasoning.clear()

    def fresh_id(self, call_id: str) -> str:
        fresh, n = call_id, 2
        while fresh in self.ids:
            fresh, n = f"{call_id}_dup{n}", n + 1
        if fresh != call_id:
            self.notes.append(f"{self.where()}: call id {call_id!r} repeats; replayed as {fresh!r}")
        self.ids.add(fresh)
        return fresh

    def tool(self, message: TraceMessage) -> None:
        call_id = message.call_id or ""
        waiting = self.unanswered.get(call_id)
        if not waiting:
            self.notes.append(f"{self.where()}: result for {call_id!r} answers no unanswered call; dropped")
            return
        answered = waiting.popleft()
        answered.result, answered.error = message.parts, message.error

    def script(self, tools: Sequence[ToolSchema]) -> Script:
        for kind, n in sorted(self.unreplayed.items()):  # worded as an importer's `Report` counts
            self.notes.append(f"skipped {n} × content part {kind!r} (not replayed)")
        for waiting in self.unanswered.values():
            for call in waiting:
                self.notes.append(f"call {call.id!r} has no result in the source; replayed with an empty one")
        for number, turn in enumerate(self.turns):
            if turn.rounds and not turn.pending:
                self.notes.append(
                    f"turn {number}: the source's reply ends on its tool calls; the replay asks the model "
                    "once more, for an empty final answer (one request the source did not make)"
                )
        declared, notes = offered(
            tools
            or inferred_schemas(
                (c.tool, c.input) for turn in self.turns for round_ in turn.rounds for c in round_.calls
            )
        )
        self.notes.extend(notes)
        return Script(
            system_prompt=_join(self.system), tools=declared, turns=tuple(t.freeze() for t in self.turns)
        )


def offered(tools: Sequence[ToolSchema]) -> tuple[tuple[ToolSchema, ...], tuple[str, ...]]:
    """The tools a replayed request offers (declared, or read off the calls), each name once
    (Anthropic refuses a request that declares a name twice), the first declaration kept; and a
    note for each repeat and for each name OpenAI refuses."""
    kept: dict[str, ToolSchema] = {}
    notes: list[str] = []
    for tool in tools:
        first = kept.setdefault(tool.name, tool)
        if first is not tool:
            differs = "" if first == tool else " with another schema"
            notes.append(f"tool {tool.name!r} is declared twice{differs}; the first declaration is offered")
    for name in kept:
        if not TOOL_NAME.fullmatch(name):
            notes.append(
                f"tool {name!r}: OpenAI takes a tool name of letters, digits, _ and - only, at most 64, "
                "so every request offering it would be refused there (the violations columns count "
                "tool calls and results only)"
            )
    return tuple(kept.values()), tuple(notes)


TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""A tool name OpenAI's API takes (its reference: letters, digits, underscores and dashes, at
most 64 characters)."""


@dataclass(slots=True)
class Replayable:
    """Whether the messages seen so far, by role, give the replay a turn: a user or assistant
    message, or a system message after one that is not (`_Mapper.feed` makes a turn of exactly
    these). It holds three flags, so a stream of any length is judged in constant memory;
    `map_stream` refuses by it, and so does an import (`ctxlab.workloads.importers`), with the
    same words."""

    started: bool = False
    turn: bool = False
    results: bool = False

    def see(self, role: str) -> None:
        """Take the next message's role (a `TraceMessage`'s: `developer` read as `system`)."""
        self.turn = self.turn or role in {"user", "assistant"} or (role == "system" and self.started)
        self.started = self.started or role != "system"
        self.results = self.results or role == "tool"

    def refusal(self) -> str | None:
        """Why there is nothing to replay, or None when there is a turn. Without a turn no call
        was made, so every tool result answers none."""
        if self.turn:
            return None
        held = "only tool results that answer no call" if self.results else "only a system prompt"
        return f"the transcript has {held}; there is nothing to replay"


def _sent(found: tuple[Violation, ...], at: int, calls: frozenset[str]) -> tuple[Violation, ...]:
    """`found` without the dangling calls of the batch that closes the transcript (message `at`):
    the session stopped before their results (a final submit, an interrupted run), so no request
    of the source carried them unanswered."""
    return tuple(v for v in found if not (v.kind == "dangling_call" and v.call_id in calls and v.index >= at))


def map_messages(
    messages: Iterable[TraceMessage], *, tools: Sequence[ToolSchema] = (), name: str = "trace"
) -> TraceWorkload:
    """The workload of validated transcript messages (see the module docstring for the rules).

    `source_violations` is left empty here: it is computed on the raw file messages by
    `read_trace` and `map_wire`.
    """
    mapper = _Mapper()
    for index, message in enumerate(messages):
        mapper.feed(message, index)
    return TraceWorkload(
        script=mapper.script(tools), source_violations=(), name=name, notes=tuple(mapper.notes)
    )


def map_stream(
    entries: Iterable[tuple[int, Mapping[str, Any]]],
    *,
    fail: Callable[[int, str], Exception],
    tools: Sequence[ToolSchema] = (),
    name: str = "trace",
    rules: Iterable[Rule] = RULES,
    lines: bool = False,
) -> TraceWorkload:
    """The workload of OpenAI chat messages, each labelled (a line number or an index), with the
    source's own violations, in one pass: each message is checked and mapped as it comes, so
    memory holds the workload and one message, never the whole input. A note names a message
    by its index from 0, and by its label too where `lines` says labels are line numbers.

    Raises:
        Exception: `fail(label, why)` for the first message that is not one, or at the first
            message when no message is a user's or the agent's.
    """
    mapper, replayable = _Mapper(), Replayable()
    first: list[int] = []  # the first message's label, for a transcript with nothing to replay
    last_batch: list[tuple[int, frozenset[str]]] = []  # the closing calls, while only results follow

    def mapped() -> Iterator[Mapping[str, Any]]:
        for index, (label, wire) in enumerate(entries):
            try:
                message = parse_message(wire)
            except ValueError as error:
                raise fail(label, str(error)) from None
            mapper.feed(message, index, label if lines else None)
            replayable.see(message.role)
            if not first:
                first.append(label)
            if message.calls:
                last_batch[:] = [(index, frozenset(c.id for c in message.calls))]
            elif message.role != "tool":
                last_batch.clear()
            yield wire

    found = tuple(violations(mapped(), rules))
    if last_batch:
        found = _sent(found, *last_batch[0])
    refusal = replayable.refusal()
    if refusal is not None:
        raise fail(first[0] if first else 1, refusal)
    return TraceWorkload(
        script=mapper.script(tools), source_violations=found, name=name, notes=tuple(mapper.notes)
    )


def map_wire(
    wires: Iterable[Mapping[str, Any]],
    *,
    tools: Sequence[ToolSchema] = (),
    name: str = "trace",
    rules: Iterable[Rule] = RULES,
) -> TraceWorkload:
    """The workload of OpenAI chat messages given as mappings (any iterable, read once), with
    their own violations.

    Raises:
        ValueError: a message that is not one, naming its 0-based index.
    """

    def fail(index: int, why: str) -> ValueError:
        return ValueError(f"message {index}: {why}")

    return map_stream(enumerate(wires), fail=fail, tools=tools, name=name, rules=rules)


__all__ = [
    "JOIN",
    "JsonLine",
    "Replayable",
    "TraceError",
    "TraceWorkload",
    "file_lines",
    "jsonl_entries",
    "load_tools",
    "map_messages",
    "map_stream",
    "map_wire",
    "parse_tools",
    "read_jsonl",
    "read_trace",
    "text_lines",
    "trace_of_lines",
]
