"""The messages of a Claude Code conversation, line by line: the streamed lines of one answer
merged, the results that came between them held, and the text an attachment line says Claude
Code sent placed where a replay can hold it (`claude_code` states the rules).

An attachment line (`type: attachment`) records context Claude Code adds to a request: hook
output, an @-mentioned file, a todo or other reminder, a message typed while the model worked
(`queued_command`), ...; its `attachment` holds the data, from which Claude Code renders the
text it sends with templates of its own. Newer versions also keep that text on the line,
`rendered`: a list of `{content}`, each a string or text blocks, the content of one user message
sent (`renderedRole: system` marks one sent as a system turn to a model that takes them).

Invariants: messages come out in the order of their lines, but for the results held until the
answer they follow is whole and attachment texts held until a request follows them; an
attachment's text is replayed only between turns (after a prompt, or after an answer and
before the next message), never within a reply, and never after the last request.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers.anthropic import Answer, user_blocks
from ctxlab.workloads.importers.base import Calls, Report, Wire, field_of

UNRENDERED = (
    "attachment lines without `rendered` (older Claude Code versions, and kinds sent as no text) "
    "hold data Claude Code renders into what it sends with templates of its own; that text is "
    "not in the log, so they are not replayed"
)


class Replay:
    """The messages of the conversation's lines, fed one at a time."""

    def __init__(self, report: Report) -> None:
        self.report, self.calls = report, Calls(report)
        self.pending: tuple[str, Answer] | None = None  # an answer still streaming
        self.held: list[Wire] = []  # results that came between lines of the pending answer
        self.waiting: list[tuple[str, list[Wire]]] = []  # attachment texts, by attachment kind
        self.last: Wire | None = None  # the last message given
        self.unrendered = False

    def assistant(self, message: Mapping[str, Any], number: int) -> Iterator[Wire]:
        """An assistant line: one more block of the pending answer, or a new answer. A server
        tool's result closes the message holding its call, which the results held so far then
        follow, before that result (`anthropic.Answer`)."""
        mid = message.get("id")
        if self.pending is not None and mid is not None and self.pending[0] == mid:
            self._drop_waiting("sent within a reply")
        else:
            yield from self._release()
            self.pending = (str(mid), Answer(self.calls, self.report))
        for wire in self.pending[1].add(message.get("content"), number):
            yield from self._give([wire])
            if wire["role"] == "assistant":  # the results of its calls that came between its lines
                yield from self._give(self.held)
                self.held = []
        if mid is None:
            yield from self._flush()

    def user(self, message: Mapping[str, Any], number: int) -> Iterator[Wire]:
        """A user line: results of the pending answer, or a prompt (and the results before it)."""
        wires = list(user_blocks(message.get("content"), self.calls, self.report, number))
        if self.pending is not None and all(w["role"] == "tool" for w in wires):
            self.held.extend(wires)
            return
        yield from self._release()
        self.pending = None
        yield from self._give(wires)

    def attachment(self, value: Mapping[str, Any], number: int) -> None:
        """An attachment line: its text waits for the next request, where a replay can hold it."""
        kind = attachment_kind(value)
        texts = rendered(value)
        if texts is None:
            missing = "rendered" not in value
            self.unrendered = self.unrendered or missing
            shape = "no `rendered` text" if missing else "`rendered` not as Claude Code writes it"
            self.report.skip(f"attachment:{kind} ({shape})")
        elif not self._between_turns():
            self.report.skip(f"attachment:{kind} (sent within a reply, beside tool results)")
        else:
            wires = [w for text in texts for w in user_blocks(text, self.calls, self.report, number)]
            self.waiting.append((kind, wires))

    def finish(self) -> Iterator[Wire]:
        """The rest: the pending answer and its results; attachment texts that join a last
        prompt, others counted (no request carried them)."""
        yield from self._flush()
        if self.last is not None and self.last["role"] == "user":
            yield from self._release()
        self._drop_waiting("after the last request: never sent")
        if self.unrendered:
            self.report.notes.append(UNRENDERED)

    def _between_turns(self) -> bool:
        if self.held:
            return False
        if self.pending is not None:
            return not self.pending[1].parts.calls
        return (
            self.last is None
            or self.last["role"] == "user"
            or (self.last["role"] == "assistant" and not self.last.get("tool_calls"))
        )

    def _release(self) -> Iterator[Wire]:
        yield from self._flush()
        yield from self._give([w for _, wires in self.waiting for w in wires])
        self.waiting.clear()

    def _flush(self) -> Iterator[Wire]:
        if self.pending is not None:
            yield from self._give(list(self.pending[1].rest()))
        yield from self._give(self.held)
        self.held = []
        self.pending = None

    def _give(self, wires: list[Wire]) -> Iterator[Wire]:
        if wires:
            self.last = wires[-1]
        yield from wires

    def _drop_waiting(self, why: str) -> None:
        for kind, _ in self.waiting:
            self.report.skip(f"attachment:{kind} ({why})")
        self.waiting.clear()


def attachment_kind(value: Mapping[str, Any]) -> str:
    """The kind of an attachment line's attachment (`attachment.type`), or `unknown`."""
    kind = field_of(value, "attachment", "type")
    return kind if isinstance(kind, str) and kind else "unknown"


def rendered(value: Mapping[str, Any]) -> list[object] | None:
    """The contents of the messages Claude Code sent for an attachment line, as it checks them
    before using them (a non-empty list of `{content}`, each a non-empty string or non-empty text
    blocks); None when the line has none, or none of that shape."""
    items = value.get("rendered")
    if not isinstance(items, list) or not items:
        return None
    contents = [field_of(item, "content") for item in items]
    return contents if all(_text(content) for content in contents) else None


def _text(content: object) -> bool:
    if isinstance(content, str):
        return bool(content)
    return isinstance(content, list) and bool(content) and all(_text_block(b) for b in content)


def _text_block(block: object) -> bool:
    text = field_of(block, "text")
    return field_of(block, "type") == "text" and isinstance(text, str) and bool(text)
