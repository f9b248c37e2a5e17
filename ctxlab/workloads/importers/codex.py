"""Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), as OpenAI chat
messages.

Each line is `{"timestamp", "type", "payload"}`. `response_item` lines hold the Responses items
the model was sent and returned (messages, reasoning, function calls and their outputs);
`event_msg` lines are the interface's copies of them (and token counts); `session_meta` and
`turn_context` describe the session; `compacted` marks a compaction: its `message` is the summary
Codex wrote, which it sends as a user message in place of the history before it (its
`replacement_history`, when written, is that new history).

Mapping rules (items as in `responses`):
- The `base_instructions` of the first line's `session_meta` (newer Codex writes the
  instructions it sends the model there) are the system prompt.
- `response_item` payloads are mapped in order. The `<environment_context>` message (and the
  `<user_instructions>` one) stays a user message, as Codex sent it. An MCP tool's call is a
  `function_call` answered by a `function_call_output` like any other (the `mcp_tool_call_end`
  event some Codex versions also write is an `event_msg`, ignored): named
  `mcp__<server>__<tool>`, or, where Codex offers each server's tools as a namespace, recorded
  with its `namespace` apart and named by joining the two (`responses.flat_name`).
- A `compacted` line's summary is a user message at its place, as Codex sent it (the lab's own
  strategies decide what of the history before it a replay keeps, so the `replacement_history`
  is not replayed); a compaction with no summary text (a remote one, whose summary is
  encrypted) is counted.
- Each call gets exactly one result, right after its batch of calls, as the replay needs it.
  Codex records a call as soon as the model gives it and its output when the tool returns, so a
  message the model gave after the call in the same response (or one an interruption adds) can
  come between them; and it sends a call with no output anywhere in its history the output
  `aborted` in its place. So a call with no output before the next message gets the output that
  comes later in the rollout, replayed after the call (the messages between are held back until
  it comes; a note says so), or, when the rollout holds none, `aborted` (a note says so); the
  calls that end the file stay unanswered. A first read of the rollout finds the late outputs;
  a rollout read once (a stream) gives such a call `aborted` and counts the late output. A
  further output of a call that has its result is counted; but a call id used again by a call
  of a later batch (model servers other than OpenAI's may repeat ids) names that new call, whose
  output is its result. So the first read (which maps the items as the reading does) tells the
  calls apart by their place too: an output answers the first call without one in the latest
  batch calling its id, and a call whose id comes again in a later batch before any
  output of it (an interrupted call, then a call reusing its id) has no output anywhere and
  gets `aborted`, the later call keeping its own. Two calls of one id in one batch (a model
  server numbering calls per response) are two calls: their outputs answer them in order, the
  first output the first call, and a note says so (the replay renames the later call, and gives
  a result of an id to its calls in order).
- A rollout of the first layout (mid-2025: a bare `{id, timestamp, instructions}` header, bare
  items, `{"record_type": "state"}` lines) is read as the same lines wrapped; its state lines
  are counted.
- `event_msg` copies of items are ignored; `session_meta` and `turn_context` lines are skipped;
  all are counted in the warnings.
- A line of a `type` this importer does not know (Codex adds rollout kinds from one version to
  the next) is skipped and counted too, unless its `payload` is a conversation item (a message,
  a call, an output, reasoning): then it is an error, as it may hold conversation. A line
  without a string `type` is an error.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial

from ctxlab.workloads.importers.base import Calls, Entry, Reader, Report, Wire, field_of, system, tool
from ctxlab.workloads.importers.responses import CALLS, OUTPUTS, ItemMapper
from ctxlab.workloads.trace import TraceError

SKIPPED = frozenset({"event_msg", "session_meta", "turn_context"})
KINDS = SKIPPED | {"response_item", "compacted"}
CONVERSATION_ITEMS = CALLS | OUTPUTS | {"message", "reasoning"}
ABORTED = "aborted"
"""The output Codex records for a call that has none."""
_EXPECTED = f"expected one of {', '.join(sorted(KINDS))}"


def is_codex(values: list[object]) -> bool:
    """Entries of a rollout: typed lines with a `payload` (the first line decides), or a rollout
    of the first layout (its bare session header first, then a conversation item or a state
    line among the lines after it)."""
    first = values[0] if values else None
    if isinstance(first, Mapping) and first.get("type") in KINDS and "payload" in first:
        return True
    return _is_header(first) and any(_is_bare(v) for v in values[1:])


def _is_header(value: object) -> bool:
    """The first line of a rollout of the first layout: the session's `id` and `timestamp`."""
    return isinstance(value, Mapping) and {"id", "timestamp"} <= value.keys() and "type" not in value


def _is_bare(value: object) -> bool:
    """A line of the first layout after its header: an item, or a `record_type` state line."""
    return isinstance(value, Mapping) and ("record_type" in value or value.get("type") in CONVERSATION_ITEMS)


def survey(entries: Iterator[Entry]) -> Reader:
    """The reader of a rollout whose lines `entries` gave once already: it knows which calls
    have an output anywhere in the rollout."""
    return partial(read_codex, answered=frozenset(_answered_calls(entries)))


Use = tuple[str, int]
"""A call told apart from other calls of its id: the id and how many calls of that id the
rollout holds up to it (1 for the first)."""


def _answered_calls(entries: Iterator[Entry]) -> Iterator[Use]:
    """The calls of the rollout that have an output, in either layout, found by mapping the items
    as the reading does (so a batch here is the reading's batch): an output answers the first
    call of its id without one in the latest batch calling that id (a call id used again in a
    later batch names the new call); an output of no such call gives none. A line the reading
    refuses ends the search there: the reading raises at it, with its file and line."""
    report = Report(source="")
    uses: Counter[str] = Counter()
    pending: dict[str, deque[int]] = {}
    mapper = ItemMapper(report, Calls(report))
    try:
        for message in _messages(_enveloped(entries, report), mapper, report, []):
            if message["role"] == "tool":
                left = pending.get(message["tool_call_id"])
                if left:
                    yield message["tool_call_id"], left.popleft()
                continue
            batch: dict[str, deque[int]] = {}
            for call_id in (c["id"] for c in message.get("tool_calls", ())):
                uses[call_id] += 1
                batch.setdefault(call_id, deque()).append(uses[call_id])
            pending.update(batch)
    except TraceError:
        return


def read_codex(
    entries: Iterator[Entry], report: Report, answered: frozenset[Use] = frozenset()
) -> Iterator[Wire]:
    """The conversation of a rollout (see the module docstring); `answered`, when a first read
    found them, are the calls with an output anywhere in the rollout.

    Raises:
        TraceError: at a line that cannot be a rollout's; and, when no line was conversation, at
            the first line of an unknown kind (the file is then likely of another format, such
            as a session log forced with `--format codex`).
    """
    mapper = ItemMapper(report, Calls(report))
    unknown: list[tuple[int, object]] = []
    found = False
    for wire in _answered(_messages(_enveloped(entries, report), mapper, report, unknown), report, answered):
        found = True
        yield wire
    if not found and unknown:
        raise report.error(unknown[0][0], f"unknown entry type {unknown[0][1]!r}; {_EXPECTED}")


def _enveloped(entries: Iterator[Entry], report: Report) -> Iterator[Entry]:
    """The lines as `{type, payload}` lines: those of a rollout of the first layout (a bare header,
    bare items, `record_type` state lines, counted) are wrapped; any other rollout's pass as
    they are."""
    first = next(entries, None)
    if first is None:
        return
    if not _is_header(first.value):
        yield first
        yield from entries
        return
    report.notes.append("the rollout is of Codex's first layout (lines not yet wrapped as {type, payload})")
    yield Entry(first.number, {"type": "session_meta", "payload": first.value})
    for number, value in entries:
        if isinstance(value, Mapping) and "record_type" in value:
            report.skip(f"record_type {value['record_type']!r}")
        else:
            yield Entry(number, {"type": "response_item", "payload": value})


def _messages(
    entries: Iterator[Entry], mapper: ItemMapper, report: Report, unknown: list[tuple[int, object]]
) -> Iterator[Wire]:
    """The messages of the lines; the first line of an unknown kind goes to `unknown`."""
    first = True
    for number, value in entries:
        kind = field_of(value, "type")
        prompt = field_of(value, "payload", "base_instructions", "text")
        if kind not in KINDS or not isinstance(value, Mapping):
            _skip_unknown(value, kind, number, report)
            unknown[:] = unknown or [(number, kind)]
        elif kind == "session_meta" and first and isinstance(prompt, str) and prompt:
            yield system(prompt)
        elif kind in SKIPPED:
            report.skip(str(kind))
        elif kind == "compacted":
            yield from _summary(value.get("payload"), mapper, number, report)
        else:
            yield from mapper.item(value.get("payload"), number)
        first = False
    yield from mapper.flush()


def _answered(messages: Iterator[Wire], report: Report, answered: frozenset[Use]) -> Iterator[Wire]:
    """The messages with one result for each call (see the module docstring); `answered` holds
    the calls with an output anywhere in the rollout (empty when it could be read once only)."""
    answers = _Answers(report, answered)
    while True:
        message = answers.queue.popleft() if answers.queue else next(messages, None)
        if message is not None:
            yield from answers.read(message)
        elif answers.held:
            yield from answers.end()
        else:
            return


@dataclass(slots=True)
class _Answers:
    """The calls of the last batch waiting for their results, and the messages held back until
    the late outputs of that batch come (`expected`); `done` maps each call with its result to
    whether that result is Codex's `aborted`; `uses` counts the calls of each id so far, which
    tells a call from an earlier one of its id (`Use`).

    Invariants: memory holds the call ids and the messages between a batch and its last late
    output, never more of the rollout. The calls of one id in a batch get their results in
    their order (the replay matches results of one id to its calls in order): first output to
    first call, an `aborted` at the place of the call it stands for."""

    report: Report
    answered: frozenset[Use]
    waiting: dict[str, deque[int]] = field(default_factory=dict)
    """The calls of the last batch without their results, by id: the use of each, in order."""
    uses: Counter[str] = field(default_factory=Counter)
    expected: dict[str, deque[bool]] = field(default_factory=dict)
    """The calls of a batch still to be answered once late outputs come, by id, in order: whether
    each has an output coming (else it gets `aborted` at its place)."""
    held: list[Wire] = field(default_factory=list)
    done: dict[str, bool] = field(default_factory=dict)
    queue: deque[Wire] = field(default_factory=deque)
    """Held messages released, read again before the next message of the rollout."""

    def read(self, message: Wire) -> Iterator[Wire]:
        """The messages one message of the rollout completes."""
        if message["role"] == "tool":
            yield from self._result(message)
        elif self.expected:
            self.held.append(message)
        else:
            yield from self._next_batch(message)

    def end(self) -> Iterator[Wire]:
        """The rollout ended before late outputs it promised: those calls get `aborted`."""
        for call_id, coming in self.expected.items():
            for _ in coming:
                yield self._abort(call_id)
        self.expected = {}
        self._release()

    def _result(self, message: Wire) -> Iterator[Wire]:
        call_id = message["tool_call_id"]
        if call_id in self.expected:
            yield from self._late(call_id, message)
        elif self.expected:  # read after the held messages, whose calls it may answer
            self.held.append(message)
        elif call_id in self.done and call_id not in self.waiting:
            self._second(call_id)
        else:
            left = self.waiting.get(call_id)
            if left:
                left.popleft()
            if not left:
                self.waiting.pop(call_id, None)
                self.done[call_id] = False
            yield message

    def _late(self, call_id: str, message: Wire) -> Iterator[Wire]:
        """A late output: the result of the first call of its id expecting one (`_next_batch`
        answered those before it that have none), then the `aborted` of those right after it."""
        coming = self.expected[call_id]
        coming.popleft()
        yield message
        while coming and not coming[0]:
            coming.popleft()
            yield self._abort(call_id)
        if not coming:
            del self.expected[call_id]
            self.done[call_id] = False
        if self.held and not self.expected:
            self._release()

    def _next_batch(self, message: Wire) -> Iterator[Wire]:
        """A message after a batch: its calls without output get `aborted`, unless their output
        comes later, which holds the message back until it has come."""
        late: dict[str, deque[bool]] = {}
        for call_id, left in self.waiting.items():
            coming = deque((call_id, use) in self.answered for use in left)
            while coming and not coming[0]:
                coming.popleft()
                yield self._abort(call_id)
            if coming:
                late[call_id] = coming
        self.waiting = {}
        if late:
            self.expected, self.held = late, [message]
            for call_id in late:
                self.report.notes.append(
                    f"call {call_id!r}'s output comes after a later message: replayed after the call"
                )
            return
        for call_id in (c["id"] for c in message.get("tool_calls", ())):
            self.uses[call_id] += 1
            self.waiting.setdefault(call_id, deque()).append(self.uses[call_id])
            self.done.pop(call_id, None)  # a call id used again is a new call, awaiting its own output
        for call_id, left in self.waiting.items():
            if len(left) > 1:
                self.report.notes.append(
                    f"call id {call_id!r} names {len(left)} calls of one response: their outputs "
                    "answer them in order (the replay renames the later calls)"
                )
        yield message

    def _abort(self, call_id: str) -> Wire:
        self.report.notes.append(f"call {call_id!r} has no output in the rollout: given {ABORTED!r}")
        self.done[call_id] = True
        return tool(call_id, ABORTED)

    def _second(self, call_id: str) -> None:
        """A further result of a call that has one: counted; said when the first is `aborted`
        only because the rollout could not be read twice to find the late output."""
        self.report.skip("further output of a call that has its result")
        if self.done[call_id]:
            self.report.notes.append(
                f"call {call_id!r} has an output after a later message, but the rollout was read once "
                f"(a stream), so the call keeps {ABORTED!r}"
            )

    def _release(self) -> None:
        self.queue.extendleft(reversed(self.held))
        self.held = []


def _summary(payload: object, mapper: ItemMapper, number: int, report: Report) -> Iterator[Wire]:
    """The user message of a compaction's summary (none, counted, when it has no text)."""
    message = field_of(payload, "message")
    if not isinstance(message, str) or not message:
        report.skip("compacted (no summary text)")
        return
    yield from mapper.item({"type": "message", "role": "user", "content": message}, number)


def _skip_unknown(value: object, kind: object, number: int, report: Report) -> None:
    """Count a line of a kind not known here, or raise when it has no string `type` or its
    payload is a conversation item."""
    if not isinstance(value, Mapping) or not isinstance(kind, str):
        raise report.error(number, f"unknown entry type {kind!r}; {_EXPECTED}")
    payload = value.get("payload")
    if isinstance(payload, Mapping) and (payload.get("type") in CONVERSATION_ITEMS or "role" in payload):
        raise report.error(number, f"unknown entry type {kind!r} carries a conversation item; {_EXPECTED}")
    report.skip(f"{kind} (an entry type not known here)")
