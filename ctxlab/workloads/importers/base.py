"""What every importer shares: reading JSON entries lazily, the report of what was not mapped,
and building OpenAI chat messages (the lab's replay format).

Invariants:
- An importer is a generator: it reads `Entry` values one at a time and yields OpenAI chat
  messages (`Wire`) as soon as they are complete, so memory is bounded by the largest entry
  (a JSONL line, or the whole document of a single-JSON format, with its text, kept to tell a
  problem's line) and by the one message an importer may hold back to merge (Claude Code
  lines sharing a `message.id`). What an importer
  keeps besides is small and says so: a request log's links of a chained conversation and its
  responses' identified output items (`responses_log`), a session log's line ids (`claude_code`).
- A file is JSONL when its first non-blank line is a JSON value on its own; otherwise it is one
  JSON document, read whole (its entry is numbered with the line it starts on).
- Every error is a `TraceError` naming the file and the line of the entry at fault, or, in a
  document over many lines, of the item the importer was reading (`Report.each`).
- Reasoning and thinking never join message text: they go to the `reasoning_content` key, and a
  result that is an error has `is_error: true` (`ctxlab.workloads.trace` reads both).
- A system or assistant message carries text only (`text_only`): its text parts are joined, so
  content written in several parts keeps every part's text; any other part is counted.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.workloads.files import Mended, json_value, not_json
from ctxlab.workloads.places import line_at, path_to
from ctxlab.workloads.trace import JsonLine, TraceError

Wire = dict[str, Any]
Entry = JsonLine
T = TypeVar("T")


@dataclass(slots=True)
class Report:
    """What an import found besides messages: tool schemas the file carries, entry kinds it
    skipped (counted by kind), and remarks on choices the mapping made; `session` is the
    conversation, counted from 0 in file order, a reader of a file of several reads."""

    source: str
    session: int = 0
    tools: list[ToolSchema] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    mended: Mended = field(default_factory=Mended)
    document: Document | None = None
    """The file's one JSON document, when it is one that spans lines (`json_entries`)."""
    item: tuple[object, int] | None = None
    """The item being read, as the list that holds it and its index (`each`)."""

    def skip(self, kind: str) -> None:
        """Count one skipped entry of `kind`."""
        self.skipped[kind] += 1

    def note_once(self, remark: str) -> None:
        """Add `remark` to the notes unless it is there already."""
        if remark not in self.notes:
            self.notes.append(remark)

    def each(self, items: Sequence[T]) -> Iterator[tuple[int, T]]:
        """`enumerate(items)`, noting each item as the one being read until the loop ends: a
        problem found meanwhile in a document that spans lines is told at that item's line
        (`located`), not at the document's first. A store per item; the line is only worked out
        for a problem."""
        for index, item in enumerate(items):
            self.item = (items, index)
            yield index, item
        self.item = None

    def located(self, line: int | None) -> int | None:
        """`line`, the entry's, or the line of the item being read when the entry is the file's
        one document and spans lines (`ctxlab.workloads.places`)."""
        document, item = self.document, self.item
        if document is None or item is None or line != document.first:
            return line
        path = path_to(document.value, item[0])
        found = None if path is None else line_at(document.text, document.first, (*path, item[1]))
        return line if found is None else found

    def error(self, line: int | None, message: str) -> TraceError:
        """A located error to raise (at the item being read, inside a document: `located`)."""
        return TraceError(self.source, self.located(line), message)

    def warnings(self) -> list[str]:
        """One line per skipped kind, then the notes."""
        counted = [f"skipped {n} × {kind} (not replayed)" for kind, n in sorted(self.skipped.items())]
        mended = self.mended.warning()
        return counted + self.notes + ([mended] if mended else [])


@dataclass(frozen=True, slots=True)
class Document:
    """A file's one JSON document that spans lines: the line it starts on, its text from there,
    and the value read from it."""

    first: int
    text: str
    value: Any


Reader = Callable[[Iterator[Entry], Report], Iterator[Wire]]
"""An importer: a generator of OpenAI chat messages from a file's entries, filling the report."""


def json_entries(
    lines: Iterable[str], source: str, mended: Mended | None = None, report: Report | None = None
) -> Iterator[Entry]:
    """The JSON values of a JSONL file (one per non-blank line), or its one JSON document; the
    entries whose lone surrogates were read as U+FFFD counted in `mended`
    (`ctxlab.workloads.files.json_value`). A document that spans lines is kept as the
    `report`'s `document`, so that its problems are told at their own lines.

    Raises:
        TraceError: a line (or the document) that is not JSON or nested too deep; a cut-short
            last line says so.
    """
    numbered = enumerate(lines, start=1)
    first, line = next(((n, text) for n, text in numbered if text.strip()), (0, ""))
    if not first:
        return
    try:
        value = json_value(line, source, first, mended)
    except json.JSONDecodeError as line_error:
        text = line + "\n" + "\n".join(later for _, later in numbered)
        try:
            document = json_value(text, source, first, mended)
        except json.JSONDecodeError as error:
            if error.lineno == 1:
                raise TraceError(source, first, not_json(line_error)) from None
            raise TraceError(source, first + error.lineno - 1, not_json(error)) from None
        if report is not None:
            report.document = Document(first, text, document)
        yield Entry(first, document)
        return
    yield Entry(first, value)
    pending: tuple[int, json.JSONDecodeError] | None = None
    for number, text in numbered:
        if not text.strip():
            continue
        if pending is not None:
            raise TraceError(source, pending[0], not_json(pending[1]))
        try:
            yield Entry(number, json_value(text, source, number, mended))
        except json.JSONDecodeError as error:
            pending = (number, error)
    if pending is not None:
        number, last = pending
        cut = "the last line is cut short: " if _ran_out(last) else ""
        raise TraceError(source, number, cut + not_json(last))


def _ran_out(error: json.JSONDecodeError) -> bool:
    """Whether the parser ran out of a line before its value ended (a line cut short), rather
    than meeting something no JSON holds."""
    return error.msg.startswith("Unterminated string") or error.pos >= len(error.doc.rstrip())


class SessionError(TraceError):
    """A `session` the file does not hold (a scenario locates it at its `session` field)."""


def beyond(report: Report, total: int, what: str) -> SessionError:
    """The error for a session past the `total` conversations (`what`: runs, threads) a file holds."""
    given = f"give 0 to {total - 1}" if total > 1 else "give 0" if total else "it holds none"
    return SessionError(
        report.source,
        None,
        f"session {report.session} is beyond the file's {total} {what} "
        f"(sessions are counted from 0: {given})",
    )


def one_conversation(source: str, fmt: str, session: int) -> SessionError:
    """The error for a session past 0 of a format that holds one conversation per file."""
    return SessionError(
        source, None, f"{fmt} holds one conversation per file: session {session} is none of it (give 0)"
    )


def session_entry(entries: Iterator[Entry], report: Report, kind: str) -> Iterator[Entry]:
    """The entry `report.session` of a file whose every entry is a whole session (a trajectory,
    a thread): the others, one a line of a JSONL file, are sessions of their own, each counted as
    `kind` and not read, rather than run together into one conversation.

    Raises:
        SessionError: the file holds no entry `report.session`.
    """
    for number, value, _ in chosen_run(
        entries, report, lambda value: [value], kind=kind, runs="conversations"
    ):
        yield Entry(number, value)
    if report.session:
        total = 1 + report.skipped[kind]
        report.notes.append(f"session {report.session} of the file's {total} is replayed (counted from 0)")


Picker = Callable[[object], list[Any] | None]
"""The runs an entry holds, or None when it holds none (a file of several runs an entry)."""


def chosen_run(
    entries: Iterator[Entry], report: Report, pick: Picker, *, kind: str, runs: str, expected: str = ""
) -> Iterator[tuple[int, object, Any]]:
    """The file's run `report.session` (counted from 0 in file order), with the line and value of
    the entry holding it; every other run is counted as `kind`, not read (each entry is still
    checked to hold runs).

    Raises:
        TraceError: an entry that holds no run, at its line (`expected` says what it should be).
        SessionError: the file holds no run `report.session` (`runs` names them).
    """
    total = 0
    for number, value in entries:
        listed = pick(value)
        if listed is None:
            raise report.error(number, expected)
        for run in listed:
            if total == report.session:
                yield number, value, run
            else:
                report.skip(kind)
            total += 1
    if report.session >= total:
        raise beyond(report, total, runs)


# ---------------------------------------------------------------------------------------------
# OpenAI chat messages


def text_part(text: str) -> Wire:
    """An OpenAI text content part."""
    return {"type": "text", "text": text}


def image_part(url: str) -> Wire:
    """An OpenAI image content part (a URL or a `data:` URL)."""
    return {"type": "image_url", "image_url": {"url": url}}


def cell_text(value: object) -> str:
    """A SQLite cell as text: bytes decoded as UTF-8 (an invalid byte as U+FFFD), anything else
    as `str` gives it."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def base64_bytes(data: object) -> bytes | None:
    """The bytes of strict base64 text; None for anything else (not text, not ASCII, a character
    outside the alphabet, bad padding)."""
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):  # ValueError: text that is not ASCII
        return None


def data_url(media_type: str, payload: str) -> str:
    """A `data:` URL of a base64 payload."""
    return f"data:{media_type};base64,{payload}"


def content(parts: list[Wire]) -> str | list[Wire]:
    """Parts as OpenAI content: a plain string for one text part ('' for none), else the list of
    parts (the source's parts stay apart)."""
    if not parts:
        return ""
    if len(parts) == 1 and parts[0]["type"] == "text":
        return str(parts[0]["text"])
    return parts


def text_only(body: str | list[Wire], report: Report, role: str) -> str:
    """The text of content for a message that carries only text (a system or assistant message
    in the replay): its text parts joined as the replay joins parts, with nothing between, so
    no text of a message in several parts is lost. Each other part (an image) is counted as
    skipped."""
    if isinstance(body, str):
        return body
    for part in body:
        if part["type"] != "text":
            report.skip(f"{role} message part {part['type']!r}")
    return "".join(str(part["text"]) for part in body if part["type"] == "text")


def call(call_id: str, name: str, arguments: object) -> Wire:
    """An OpenAI tool call; arguments that are not a string are JSON-encoded."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def system(text: str) -> Wire:
    """A system message."""
    return {"role": "system", "content": text}


def user(body: str | list[Wire]) -> Wire:
    """A user message."""
    return {"role": "user", "content": body}


def assistant(text: str, calls: Iterable[Wire] = (), reasoning: str = "") -> Wire:
    """An assistant message; `reasoning` is kept apart from the text."""
    wire: Wire = {"role": "assistant", "content": text}
    listed = list(calls)
    if listed:
        wire["tool_calls"] = listed
    if reasoning:
        wire["reasoning_content"] = reasoning
    return wire


def tool(call_id: str, body: str | list[Wire], *, error: bool = False) -> Wire:
    """A tool result message; `is_error` only on an error."""
    wire: Wire = {"role": "tool", "tool_call_id": call_id, "content": body}
    if error:
        wire["is_error"] = True
    return wire


def schema(name: object, description: object, parameters: object) -> ToolSchema | None:
    """A tool schema from a file's declaration, or None when it is not one."""
    if not isinstance(name, str) or not name:
        return None
    params = parameters if isinstance(parameters, Mapping) else {"type": "object", "properties": {}}
    return ToolSchema.of(name, description if isinstance(description, str) else "", params)


class Calls:
    """The call ids an importer has declared, to reject a result without its call (and, `once`, a
    second result of a call: a call declared again may be answered again)."""

    def __init__(self, report: Report, *, once: bool = False) -> None:
        self.report = report
        self.ids: set[str] = set()
        self.once = once
        self.answered: set[str] = set()

    def declare(self, call_id: str) -> str:
        """Record a declared call id; returns it."""
        self.ids.add(call_id)
        self.answered.discard(call_id)
        return call_id

    def answer(self, call_id: object, line: int | None, *, key: str) -> str:
        """The id of a result, read from its field `key`, which must answer a declared call.

        Raises:
            TraceError: the result names no call id (`key` missing or null), names one that is
                not a string, or names one with no call before it (or, `once`, one answered
                since it was last declared).
        """
        if call_id is None:
            raise self.report.error(
                line,
                f"a tool result names no call id ({key!r} is missing or null); "
                "set it to the id of the call the result answers",
            )
        if not isinstance(call_id, str):
            raise self.report.error(
                line,
                f"a tool result's call id ({key!r}) is {call_id!r}, not a string; "
                "write the id of the call the result answers, as a string",
            )
        if call_id not in self.ids:
            raise self.report.error(
                line, f"a tool result for {call_id!r} has no call before it; the file is cut or out of order"
            )
        if self.once and call_id in self.answered:
            raise self.report.error(
                line, f"a second tool result for {call_id!r}: its call was answered already; drop the repeat"
            )
        self.answered.add(call_id)
        return call_id


def field_of(value: object, *keys: str) -> Any:
    """`value[k1][k2]...`, or None where a key is missing or a value is not a mapping."""
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def json_kind(value: object) -> str:
    """What a value read from JSON is, in JSON's words.

    >>> [json_kind(v) for v in (None, True, 1, 1.5, "a", [], {})]
    ['null', 'true or false', 'a number', 'a number', 'text', 'a list', 'an object']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def name_of(item: Mapping[str, Any], key: str = "name") -> str:
    """A call's name, `item[key]`: text that is not empty.

    Raises:
        KeyError: it is missing, null or empty (a call names its tool).
        TypeError: it is of another kind (`text_of`).
    """
    name = text_of(item[key])
    if not name:
        raise KeyError(key)
    return name


def listed(value: object) -> list[Any]:
    """A list field's items, [] when it is null or missing (None).

    Raises:
        TypeError: any other value, reported as `text_of`'s are.
    """
    if isinstance(value, list):
        return value
    if value is None:
        return []
    raise TypeError(f"'{type(value).__name__}' is not a list")


def object_of(value: object) -> Mapping[str, Any]:
    """A value that must be an object (a content block, an item).

    Raises:
        TypeError: any other value, reported as `text_of`'s are.
    """
    if isinstance(value, Mapping):
        return value
    raise TypeError(f"'{type(value).__name__}' is not an object")


def text_of(value: object) -> str:
    """A text field's value, '' when it is null or missing (None).

    Raises:
        TypeError: any other value (a number, a list, an object): a field of a kind its format
            never writes, which the importer's guard reports at the entry's line
            (`guard.what_was_off`), rather than a text read as empty and lost.
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise TypeError(f"'{type(value).__name__}' is not text")
