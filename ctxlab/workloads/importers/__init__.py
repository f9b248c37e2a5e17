"""Importers: the transcripts agents write, read as the OpenAI chat messages the lab replays.

One module per format, each a generator from JSON entries to OpenAI chat messages (`base`);
this registry names them, detects a file's format from its content, and maps the messages into
a replayable workload with `ctxlab.workloads.trace.map_wire`.

Invariants:
- A format is detected from the first entries of the file (`DETECT_ENTRIES`), never from its
  name; `format=` forces one. The lab's own OpenAI chat JSONL takes exactly the path it took
  before importers existed (`read_trace`), so its workloads do not change.
- Importers stream: a file is read a line at a time (a single-JSON format as one document);
  `write_jsonl` writes each message as it comes, and `read_any` / `replay_text` map each message
  into the workload as it comes (`ctxlab.workloads.trace.map_stream`), so a replay holds the
  workload and the entry being read, never the file's lines or a list of its messages.
- A file that cannot be imported raises `TraceError` at its `file:line` (the format not
  recognised, a line that is not JSON or is cut short, an unknown entry kind, a tool result
  without its call); entry kinds an importer skips by rule are counted in `Imported.warnings`.
- A file whose messages `replay` refuses as a whole (none, or nothing to replay: only a system
  prompt, only results answering no call) is refused by every reader alike, with replay's words
  (`ctxlab.workloads.trace.Replayable`), so `write_jsonl` never writes a file `replay` refuses.
- An entry of a shape its importer does not expect (a list where it reads an object, a field
  missing or of another type) is such an error too, at the line of the entry being read, by the
  first read of a format's `survey` as by the reading itself; a detector that cannot read the
  first entries does not recognise them.
- The source's own protocol breaks are computed on the imported messages (`source_violations`),
  for every format alike.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from ctxlab.core.messages.tools import NotJSONError, ToolSchema
from ctxlab.problems import unknown_name
from ctxlab.workloads.files import Mended
from ctxlab.workloads.importers import (
    openai_chat,
    stores,
)
from ctxlab.workloads.importers.base import (
    Entry,
    Reader,
    Report,
    SessionError,
    Wire,
    field_of,
    json_entries,
    one_conversation,
)
from ctxlab.workloads.importers.guard import OPENAI_CHAT, SHAPE_ERRORS, Reading, guarded, misshapen
from ctxlab.workloads.importers.registry import FORMATS, Format
from ctxlab.workloads.trace import (
    ImportFormat,
    TraceError,
    TraceWorkload,
    file_lines,
    map_stream,
    map_wire,
    read_trace,
    text_lines,
    trace_of_lines,
)

DETECT_ENTRIES = 8
"""How many entries detection looks at."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Imported:
    """A transcript imported: its format, its OpenAI chat messages, the tool schemas the file
    carries, and what could not be mapped (skipped entry kinds, counted; notes)."""

    format: str
    messages: tuple[Wire, ...]
    tools: tuple[ToolSchema, ...]
    warnings: tuple[str, ...]


def check_format(name: str) -> str:
    """`name` if it is a format.

    Raises:
        ValueError: an unknown format, with the known ones.
    """
    if name not in FORMATS:
        raise ValueError(unknown_name("format", name, FORMATS))
    return name


def _recognises(fmt: Format, values: list[object]) -> bool:
    try:
        return fmt.detect(values)
    except SHAPE_ERRORS:
        return False


def _detect(head: list[Entry], source: str) -> str:
    values = [entry.value for entry in head]
    for fmt in FORMATS.values():
        if _recognises(fmt, values):
            return fmt.name
    line = head[0].number if head else None
    if values and field_of(values[0], "object") == "chat.completion.chunk":
        raise TraceError(
            source,
            line,
            "a streamed response's chunk (object chat.completion.chunk) is no conversation: log "
            "each request with its assembled response",
        )
    raise TraceError(
        source,
        line,
        f"the format is not recognised; known formats: {', '.join(FORMATS)} "
        "(force one with --format, or `format:` in a trace workload)",
    )


Streamed = tuple[str, Iterator[Wire], Report]
"""A conversation's format, its messages (lazily), and the report they fill."""
Again = Callable[[], AbstractContextManager[Iterable[str]]]
"""The lines of the file being read, opened once more (for a format's `survey`)."""


def stream(
    lines: Iterable[str], source: str, fmt: str | None = None, *, again: Again | None = None, session: int = 0
) -> tuple[str, Iterator[Wire], Report]:
    """The format of a file's lines, the messages (lazily) of its conversation `session` (counted
    from 0), and the report they fill. Given `again`, a format with a `survey` reads the file once
    first (`Format.survey`).

    Raises:
        TraceError: the format is not recognised, or a first read's line is not JSON (reading
            errors come from the iterator, which also refuses, once it ends, a file with
            nothing to replay, as `replay` does: `guard.guarded`).
        SessionError: a session past 0 of a format of one conversation per file (one past the
            file's conversations comes from the iterator).
    """
    report = Report(source=source, session=session)
    entries = json_entries(lines, source, report.mended, report)
    head = list(itertools.islice(entries, DETECT_ENTRIES))
    name = check_format(fmt) if fmt is not None else (_detect(head, source) if head else OPENAI_CHAT)
    if session and not FORMATS[name].sessions:
        raise one_conversation(source, name, session)
    reading = Reading(itertools.chain(head, entries))
    return (
        name,
        guarded(_reader(FORMATS[name], source, again)(reading, report), reading, report, name),
        report,
    )


def _reader(fmt: Format, source: str, again: Again | None) -> Reader:
    """The reader of a format, after its survey where it has one and the lines can be read again.

    Raises:
        TraceError: a line the survey cannot read, at that line: one that is not JSON, or of a
            shape the format never writes (as reading raises for it, `guard.guarded`).
    """
    if fmt.survey is None or again is None:
        return fmt.read
    with again() as lines:  # the lines mended here are counted as the read proper reads them
        reading = Reading(json_entries(lines, source, Mended()))
        try:
            return fmt.survey(reading)
        except SHAPE_ERRORS as error:
            raise misshapen(error, source, reading.line, fmt.name) from None
        except NotJSONError as error:  # a tool declared with NaN or Infinity in its schema
            raise TraceError(source, reading.line, str(error)) from None


def _again(lines: Iterable[str]) -> Again | None:
    """Lines held in a list or tuple can be read again; others (a file being read) cannot."""
    return (lambda: contextlib.nullcontext(lines)) if isinstance(lines, list | tuple) else None


open_lines = file_lines
"""A file's lines, read lazily (`ctxlab.workloads.trace.file_lines`)."""


def import_lines(
    lines: Iterable[str], source: str, fmt: str | None = None, *, again: Again | None = None, session: int = 0
) -> Imported:
    """A transcript's lines imported whole (`again`, `session`: see `stream`; lines in a list or
    tuple are read again from it).

    Raises:
        TraceError: located at the first problem.
    """
    name, messages, report = stream(lines, source, fmt, again=again or _again(lines), session=session)
    listed = tuple(messages)
    return Imported(
        format=name, messages=listed, tools=tuple(report.tools), warnings=tuple(report.warnings())
    )


def import_file(path: Path | str, fmt: str | None = None, *, session: int = 0) -> Imported:
    """A transcript file (or a store of conversations, `stores`) imported whole (see `import_lines`)."""
    with opened(path, fmt, session=session) as (name, messages, report):
        listed = tuple(messages)
    return Imported(
        format=name, messages=listed, tools=tuple(report.tools), warnings=tuple(report.warnings())
    )


@contextlib.contextmanager
def opened(path: Path | str, fmt: str | None = None, *, session: int = 0) -> Iterator[Streamed]:
    """`stream` of a file, or of a store of conversations (`stores`: a database, a directory)."""
    kind = stores.kind_of(path)
    if kind is not None:
        yield _of_store(kind, stores.records(path, kind), str(path), fmt, session)
        return
    with open_lines(path) as lines:
        yield stream(lines, str(path), fmt, again=partial(open_lines, path), session=session)


def _of_store(
    kind: str, stored: Iterable[stores.Stored], source: str, fmt: str | None, session: int
) -> Streamed:
    """`stream` of a store's conversation `session`, read by the format its framework writes.

    Raises:
        TraceError: `fmt` names another format.
    """
    name = stores.FORMAT_OF[kind]
    if fmt is not None and check_format(fmt) != name:
        raise TraceError(
            source, None, f"{stores.WHAT[kind]} holds {name} entries, not {fmt}; give no --format"
        )
    messages, report = stores.conversation(stored, kind, source, session, FORMATS[name].read)
    return name, messages, report


def sniff(lines: Iterable[str], source: str, fmt: str | None = None) -> tuple[str, bool]:
    """A file's format (`fmt` when given), and whether it is the lab's own OpenAI chat JSONL,
    which takes `read_trace`'s path.

    Raises:
        TraceError: the format is not recognised, or the first entries are not JSON.
    """
    entries = json_entries(lines, source, Mended())
    head = list(itertools.islice(entries, DETECT_ENTRIES))
    name = check_format(fmt) if fmt is not None else (_detect(head, source) if head else OPENAI_CHAT)
    return name, name == OPENAI_CHAT and (not head or openai_chat.is_message(head[0].value))


def detect_file(path: Path | str, fmt: str | None = None) -> tuple[str, bool]:
    """`sniff` on a file."""
    with open_lines(path) as lines:
        return sniff(lines, str(path), fmt)


def _new_file_mode() -> int:
    """The mode a file `open` makes gets here: read and write for all, less the umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def write_jsonl(
    path: Path | str, out: Path | str, fmt: str | None = None, *, session: int = 0
) -> tuple[str, int, Report]:
    """Import `path` (its conversation `session`) and write its OpenAI chat JSONL to `out`, a
    message at a time; nothing is
    written unless the whole file imports and has something to replay (`stream`), so `replay`
    reads whatever `import` writes. Returns the format, the message count, the report.

    Raises:
        TraceError: located at the first problem; `out` is left as it was.
    """
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.fchmod(handle, _new_file_mode())  # as `open` would make it: mkstemp's 0600 is for secrets
    count = 0
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as sink, opened(path, fmt, session=session) as streamed:
            name, messages, report = streamed
            for message in messages:
                sink.write(json.dumps(message, ensure_ascii=False) + "\n")
                count += 1
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return name, count, report


def workload_of(
    imported: Imported, *, tools: Sequence[ToolSchema] = (), name: str, source: str
) -> TraceWorkload:
    """The replayable workload of imported messages: the given tool schemas, else the file's.

    Raises:
        TraceError: the transcript has no messages.
    """
    if not imported.messages:
        raise TraceError(source, None, "the transcript has no messages")
    try:
        workload = map_wire(imported.messages, tools=tuple(tools) or imported.tools, name=name)
    except ValueError as error:
        raise TraceError(source, None, str(error)) from None
    return replace(workload, notes=imported.warnings + workload.notes)


def read_any(
    path: Path | str,
    *,
    fmt: str | None = None,
    tools: Sequence[ToolSchema] = (),
    name: str | None = None,
    session: int = 0,
) -> TraceWorkload:
    """The workload of a transcript file of any supported format (see the module docstring), its
    conversation `session`, read in one pass: each message is mapped as the importer yields it,
    so memory holds the workload and the entry being read, never the file or its list of messages.

    Raises:
        TraceError: naming the file and line of the first problem.
    """
    name, source = name or Path(path).stem, str(path)
    chosen, native = (fmt, False) if stores.kind_of(path) else detect_file(path, fmt)
    if native:
        _one(source, session)
        return read_trace(path, tools=tools, name=name)
    with opened(path, chosen, session=session) as (_, messages, report):
        return _streamed(messages, report, tools=tools, name=name, source=source)


def _streamed(
    messages: Iterator[Wire], report: Report, *, tools: Sequence[ToolSchema], name: str, source: str
) -> TraceWorkload:
    """The workload of an importer's messages as they stream; the file's tool schemas and
    warnings are read from `report` once the stream has ended."""

    def fail(index: int, why: str) -> TraceError:
        return TraceError(source, None, f"message {index}: {why}")

    # the given tools, else those the file declares: `report.tools` fills as the stream is read,
    # and the mapping reads it at the stream's end (or the tools off the calls, when it is empty)
    workload = map_stream(enumerate(messages), fail=fail, name=name, tools=tuple(tools) or report.tools)
    return replace(workload, notes=tuple(report.warnings()) + workload.notes)


def replay_text(
    text: str,
    source: str,
    *,
    fmt: str | None = None,
    tools: Sequence[ToolSchema] = (),
    name: str,
    session: int = 0,
) -> TraceWorkload:
    """The workload of a transcript given as its text (a scenario's `files`), its conversation
    `session`, any format, read in one pass like `read_any`: no list of its lines or messages is
    made. A store's snapshot (`stores.snapshot`) is read as its store is."""
    if stores.is_snapshot(text):
        kind, stored = stores.parsed(text_lines(text), source)
        _, messages, report = _of_store(kind, stored, source, fmt, session)
        return _streamed(messages, report, tools=tools, name=name, source=source)
    chosen, native = sniff(text_lines(text), source, fmt)
    if native:
        _one(source, session)
        return trace_of_lines(text_lines(text), source, tools=tools, name=name)
    again = lambda: contextlib.nullcontext(text_lines(text))  # noqa: E731
    _, messages, report = stream(text_lines(text), source, chosen, again=again, session=session)
    return _streamed(messages, report, tools=tools, name=name, source=source)


def _one(source: str, session: int) -> None:
    """Refuse a session past 0 of the lab's own JSONL, one conversation per file."""
    if session:
        raise one_conversation(source, "a file of OpenAI chat messages", session)


__all__ = [
    "FORMATS",
    "OPENAI_CHAT",
    "Format",
    "ImportFormat",
    "Imported",
    "Report",
    "SessionError",
    "check_format",
    "detect_file",
    "import_file",
    "import_lines",
    "read_any",
    "replay_text",
    "sniff",
    "stream",
    "workload_of",
    "write_jsonl",
]
