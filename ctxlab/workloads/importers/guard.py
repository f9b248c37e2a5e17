"""Reading an importer's messages as `replay` reads them, so `import` refuses what `replay`
would, each refusal located at the line of the entry being read.

Invariants:
- Only the roles' flags of the messages passed are kept, so the messages still stream.
- A shape error (`SHAPE_ERRORS`) raised by an importer is a `TraceError` at the entry's line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ctxlab.core.messages.tools import NotJSONError
from ctxlab.workloads.chat_message import parse_message, role_of
from ctxlab.workloads.importers.base import Entry, Report, Wire
from ctxlab.workloads.trace import Replayable, TraceError

OPENAI_CHAT = "openai-chat"
"""The lab's own format, whose messages its importer has parsed already."""

SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError)
"""What reading JSON of an unexpected shape raises (`None.get`, `value["missing"]`, a list
hashed as a role, ...)."""


@dataclass(slots=True)
class Reading:
    """Entries handed to an importer, remembering the line of the last one."""

    entries: Iterator[Entry]
    line: int | None = None

    def __iter__(self) -> Iterator[Entry]:
        return self

    def __next__(self) -> Entry:
        entry = next(self.entries)
        self.line = entry.number
        return entry


def guarded(messages: Iterator[Wire], reading: Reading, report: Report, fmt: str) -> Iterator[Wire]:
    """An importer's messages, each one the replay reads (`parse_message`), so `import` refuses
    what `replay` would: an entry of a shape the importer does not expect, or whose message the
    replay refuses (arguments no preset reads), or that declares a tool whose schema holds NaN or
    Infinity (`NotJSONError`), raises `TraceError` at that entry's line, like every other
    reading error; a file with no message, or with nothing to replay (`Replayable`),
    raises it once the last message has passed, at the first message's line. Only the roles'
    flags are kept, so the messages still stream. Inside a file's one document, the line is
    the item's the importer was reading (`Report.located`)."""
    replayable, first, source = Replayable(), None, report.source
    try:
        for index, message in enumerate(messages):
            try:  # the OpenAI chat importer parsed its messages: their role is known good
                replayable.see(role_of(message) if fmt == OPENAI_CHAT else parse_message(message).role)
            except ValueError as error:
                raise TraceError(source, report.located(reading.line), f"message {index}: {error}") from None
            first = reading.line if first is None else first
            yield message
    except SHAPE_ERRORS as error:
        raise misshapen(error, source, report.located(reading.line), fmt) from None
    except NotJSONError as error:  # a tool declared with NaN or Infinity in its schema
        raise TraceError(source, report.located(reading.line), str(error)) from None
    if first is None:
        raise TraceError(source, None, "the transcript has no messages")
    refusal = replayable.refusal()
    if refusal is not None:
        raise TraceError(source, first, refusal)


def misshapen(error: Exception, source: str, line: int | None, fmt: str) -> TraceError:
    """The located error for an entry of a shape `fmt` never writes, found reading it, told in
    the JSON's terms (`what_was_off`)."""
    return TraceError(
        source,
        line,
        f"an entry is not shaped as {fmt} writes it: {what_was_off(error, fmt)}; is the file of this format?",
    )


def what_was_off(error: Exception, fmt: str) -> str:
    """What a shape error says of the JSON read: the kind of value met where `fmt` writes another,
    a key it always writes, a list too short; Python's own words only where none of these fits.

    >>> what_was_off(TypeError("unhashable type: 'list'"), "codex")
    'a value is a list where codex writes text (a type or a role)'
    >>> what_was_off(KeyError("content"), "codex")
    "an object has no 'content', which codex writes"
    """
    text = str(error)
    if isinstance(error, KeyError) and error.args:
        return f"an object has no {error.args[0]!r}, which {fmt} writes"
    if isinstance(error, IndexError):
        return f"a list is shorter than {fmt} writes it"
    for pattern, written in _SHAPES:
        found = pattern.search(text)
        if found is not None:
            met = _JSON_KINDS.get(found.group(1), "a value") if found.groups() else "text"
            return f"a value is {met} where {fmt} writes {written}"
    return f"a value is of another kind than {fmt} writes ({type(error).__name__}: {text})"


_SHAPES = (
    (re.compile(r"'(\w+)' object has no attribute"), "an object"),
    (re.compile(r"unhashable type: '(\w+)'"), "text (a type or a role)"),
    (re.compile(r"'(\w+)' object is not subscriptable"), "an object or a list"),
    (re.compile(r"'(\w+)' object is not iterable"), "a list"),
    (re.compile(r"argument of type '(\w+)' is not"), "an object or a list"),  # `key in value`
    (re.compile(r"must be an iterable, not (\w+)"), "a list"),
    (re.compile(r"must be a mapping, not (\w+)"), "an object"),
    (re.compile(r"^string indices must be integers"), "an object"),
    (re.compile(r"^(list) indices must be integers"), "an object"),
    (re.compile(r"^'(\w+)' is not text$"), "text"),  # `base.text_of`
    (re.compile(r"^'(\w+)' is not a list$"), "a list"),  # `base.listed`
    (re.compile(r"^'(\w+)' is not an object$"), "an object"),  # `base.object_of`
)
"""Python's words for a value of the wrong kind, with what the format writes there instead."""
_JSON_KINDS = {
    "dict": "an object",
    "list": "a list",
    "str": "text",
    "int": "a number",
    "float": "a number",
    "bool": "true or false",
    "NoneType": "null",
}
