"""Reading transcript and tool files: a located error, a file's lines read lazily, JSONL
entries one at a time, and tool schemas (`--tools FILE`, a trace's `tools:`).

Invariants:
- Every problem is a `TraceError` naming the file (and the line where there is one).
- Lines are read one at a time: no list of a file's lines is made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple

from ctxlab.core.messages.tools import NotJSONError, ToolSchema


class TraceError(ValueError):
    """A transcript or tool file that cannot be read: which file, which line, what is wrong."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source, self.line, self.message = source, line, message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


def why_no_file(path: Path) -> str | None:
    """Why `path` names no file to read, said as a phrase after the path ("is a folder"), or
    None when it is a regular file (or a link to one): missing, a folder, a device or pipe
    (/dev/stdin), a symbolic link to nothing (its target missing, or links in a loop), or a name
    the system cannot look up (longer than a file name may be)."""
    try:
        if path.is_file():
            return None
        if path.is_dir():
            return "is a folder"
        if path.exists():
            return "is not a regular file (a device or a pipe)"
        if path.is_symlink():
            return "is a symbolic link to no file (its target is missing, or the links loop)"
    except OSError as error:
        return f"cannot be looked up: {error.strerror}"
    return "does not exist"


def is_folder(path: Path) -> bool:
    """Whether `path` is a directory (a session store); a name the system cannot look up (longer
    than a file name may be) is none, for `why_no_file` to say why."""
    try:
        return path.is_dir()
    except OSError:
        return False


class JsonLine(NamedTuple):
    """One parsed line of a JSONL file: its 1-based number and its value."""

    number: int
    value: Any


_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
"""The escape of a high half with no low half after it, or of a low half with no high before."""


TOO_LONG = (
    "an integer has more digits than Python reads (over 4300); no transcript format writes such "
    "a number: write it as a string"
)
"""Why a JSON value with an integer past Python's conversion limit is refused: `json.loads`
raises a plain `ValueError` for it, not a decoding error."""
_LONG_INTEGER = re.compile(r"\d{4301,}")

JSON_DEPTH = 500
"""How deep a transcript's JSON may nest. Python's parser gives up near the interpreter's
recursion limit, which depends on the version (about 1,000 levels on 3.11, many more from 3.12
on) and on how deep the reader already is; a fixed limit below it refuses the same files on
every Python. No transcript format nests anywhere near it."""
TOO_DEEP = f"the JSON is nested too deep to read (over {JSON_DEPTH} levels); no transcript format nests so"


def json_depth(value: object) -> int:
    """How deep a JSON value nests (0 for a scalar, 1 for an empty list or object), read a level
    at a time (list comprehensions over each level: a few times faster than a walk in Python).

    >>> json_depth(5), json_depth([]), json_depth({"a": [{}, 1]})
    (0, 1, 3)
    """
    depth, level = 0, [value]
    while True:
        containers = [item for item in level if isinstance(item, dict | list)]
        if not containers:
            return depth
        depth += 1
        level = list(chain.from_iterable([c.values() if isinstance(c, dict) else c for c in containers]))


def nests_too_deep(text: str, value: object) -> bool:
    """Whether `value`, read from the JSON `text`, nests deeper than `JSON_DEPTH`: walked only when
    `text` holds enough brackets to (a count at C speed), so a line costs a walk only when it could.
    """
    return (
        len(text) > JSON_DEPTH
        and text.count("[") + text.count("{") > JSON_DEPTH
        and json_depth(value) > JSON_DEPTH
    )


@dataclass(slots=True)
class Mended:
    """The entries whose lone surrogates were read as U+FFFD: how many, and the first's line."""

    entries: int = 0
    first: int | None = None

    def note(self, line: int | None) -> None:
        """Count one more entry mended, at `line`."""
        self.entries += 1
        if self.first is None:
            self.first = line

    def warning(self) -> str | None:
        """What a replay or import says of them; None when there were none."""
        if not self.entries:
            return None
        where = f", the first at line {self.first}" if self.first is not None else ""
        return (
            f"read the lone surrogates (halves of UTF-16 pairs, as a string cut between the two "
            f"halves of an emoji holds) of {self.entries} entr{'y' if self.entries == 1 else 'ies'}"
            f"{where} as U+FFFD: no UTF-8 text can carry them"
        )


def json_value(text: str, source: str, line: int | None, mended: Mended | None = None) -> Any:
    """The JSON value of `text` (a line or a whole document starting at `line`), refusing what no
    transcript can mean: nesting deeper than `JSON_DEPTH` and an integer longer than
    Python converts (`TOO_LONG`). A lone surrogate (an escaped half of a UTF-16 pair, such as
    `"\\ud800"`: what a writer that counts UTF-16 units leaves when it cuts a string between
    the halves of a pair) is no character and cannot be written as the UTF-8 every request,
    count and result file is made of: given `mended`, it is read as U+FFFD, the replacement
    character, and the entry counted there; without, it is refused.

    Raises:
        json.JSONDecodeError: `text` is not JSON.
        TraceError: at `source:line`, nested too deep, an integer too long, or (without
            `mended`) a lone surrogate.
    """
    try:
        value = json.loads(text)
        escaped = "\\ud" in text or "\\uD" in text  # a surrogate can only come from an escape
        lone = escaped and holds_lone_surrogate(value)
    except RecursionError:
        raise TraceError(source, line, TOO_DEEP) from None
    except ValueError as error:
        if isinstance(error, json.JSONDecodeError):
            raise
        digits = _LONG_INTEGER.search(text)
        at = line + text.count("\n", 0, digits.start()) if digits and line is not None else line
        raise TraceError(source, at, TOO_LONG) from None
    if nests_too_deep(text, value):
        raise TraceError(source, line, TOO_DEEP)
    if lone:
        if mended is None:
            raise _lone_surrogate(text, value, source, line)
        value = _mended(value)
        mended.note(line)
    return value


def _lone_surrogate(text: str, value: object, source: str, line: int | None) -> TraceError:
    """The error naming the first lone surrogate of `value` (read from `text`), where it is."""
    found = _LONE_SURROGATE.search(text)
    if found is None:  # the first character UTF-8 refuses, as the encoder would name it
        dumped = json.dumps(value, ensure_ascii=False)
        half = ascii(next(c for c in dumped if _unencodable(c)))[1:-1]
    else:
        half = found.group()
    at = line + text.count("\n", 0, found.start()) if found and line is not None else line
    return TraceError(
        source,
        at,
        f"{_surrogate_path(value)}: {half} is a lone surrogate (half of a UTF-16 pair), not a "
        "character; write the character itself, or both halves of its pair",
    )


def _mended(value: Any) -> Any:
    """`value` with every lone surrogate of its strings and keys replaced by U+FFFD: written out
    with them, mended as UTF-16 text, read back (the same values otherwise, in the same order)."""
    dumped = json.dumps(value, ensure_ascii=False)
    return json.loads(dumped.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


def _surrogate_path(value: object) -> str:
    """The path (`tool_calls[0].id`, `<key>` for a key) of the first string in `value` that
    holds a lone surrogate; walked with a stack, as `value` may nest as deep as JSON allows."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str) and not item.isascii() and _unencodable(item):
            return path or "the value"
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in reversed(list(pairs)):
            if isinstance(key, str) and _unencodable(key):
                return f"{path}.<key>" if path else "<key>"
            stack.append(
                (f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key, child)
            )
    return "the value"


def holds_lone_surrogate(value: object) -> bool:
    """Whether a JSON value holds a lone surrogate (an escaped half of a UTF-16 pair), which no
    UTF-8 text, and so no request, count or result file, can carry."""
    return _unencodable(json.dumps(value, ensure_ascii=False))


def _unencodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def jsonl_entries(lines: Iterable[str], source: str, mended: Mended | None = None) -> Iterator[JsonLine]:
    """The JSON values of JSONL lines with their 1-based line numbers, one at a time; blank
    lines skipped; lines whose lone surrogates were mended counted in `mended` (`json_value`).

    Raises:
        TraceError: a line that is not JSON, or nested too deep.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield JsonLine(number, json_value(line, source, number, mended))
        except json.JSONDecodeError as error:
            raise TraceError(source, number, not_json(error)) from None


@contextmanager
def file_lines(path: Path | str) -> Iterator[Iterator[str]]:
    """A text file's lines, read lazily, split at `\n` only and stripped of it, as `text_lines`
    splits a file's text: the file and its text give the same lines, so `import` and `replay`
    read a file alike (a `\r` left at the end of a CRLF line is JSON whitespace).

    Raises:
        TraceError: the file cannot be read or is not UTF-8.
    """
    source = str(path)
    try:
        # newline="\n": text mode would also split at a lone "\r", which the text does not
        handle = Path(path).open(encoding="utf-8-sig", newline="\n")  # noqa: SIM115 (closed below)
    except OSError as error:
        raise TraceError(source, None, f"cannot read the transcript: {error}") from None

    def lines() -> Iterator[str]:
        try:
            for line in handle:
                yield line.rstrip("\n")
        except UnicodeDecodeError:
            raise TraceError(source, None, f"cannot read the transcript: {_not_text(path)}") from None

    with handle:
        yield lines()


GZIP_MAGIC = b"\x1f\x8b"
GZIPPED = "it is gzip-compressed; decompress it first (gunzip FILE)"
UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
"""The byte-order marks a UTF-16 file opens with."""


def not_json(error: json.JSONDecodeError) -> str:
    """Why a line is not JSON, at its column.

    >>> try:
    ...     json.loads('{"a": "b')
    ... except json.JSONDecodeError as error:
    ...     not_json(error)
    'not JSON (Unterminated string starting at column 7)'
    """
    where = "column" if error.msg.endswith(" at") else "at column"
    why = f"not JSON ({error.msg} {where} {error.colno})"
    if error.msg == "Extra data" and _LONE_CR.search(error.doc):
        return f"{why}; its lines end in a bare carriage return (\\r): save it with \\n line ends"
    if error.msg == "Extra data":
        return f"{why}; a second JSON value starts there: write JSONL, one value a line, or one JSON value"
    return why


_LONE_CR = re.compile(r"\r(?!\n|$)")
"""A carriage return ending a line within the text (an old Mac line end), not one before a
line feed (a Windows line end)."""


def unreadable(raw: bytes, error: UnicodeDecodeError) -> str:
    """Why a file's bytes are not a transcript's text: compressed, or not UTF-8 at a line.

    >>> unreadable(b"\\x1f\\x8b\\x08", UnicodeDecodeError("utf-8", b"", 1, 2, "invalid"))
    'it is gzip-compressed; decompress it first (gunzip FILE)'
    """
    if raw[:2] == GZIP_MAGIC:
        return GZIPPED
    if raw[:2] in UTF16_MARKS:  # what Windows PowerShell's `>` writes
        return "it is UTF-16 text; save it as UTF-8"
    line = raw[: error.start].count(b"\n") + 1
    return f"it is not UTF-8 text (line {line}, byte {error.start}); save it as UTF-8"


def _not_text(path: Path | str) -> str:
    """Why a file that failed to decode is not a transcript's text, at the line and byte where
    it stops being UTF-8, as `unreadable` says it for a scenario's files. Only reached on that
    failure, so reading the bytes whole costs nothing a readable file pays."""
    raw = Path(path).read_bytes()
    try:
        raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return unreadable(raw, error)
    return "it is not UTF-8 text; save it as UTF-8"


def text_lines(text: str) -> Iterator[str]:
    """A text's lines, split at newlines only, one at a time: no list of lines and no buffer the
    size of the text is made (`io.StringIO` would hold four bytes a character)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def read_jsonl(path: Path | str) -> list[JsonLine]:
    """The JSON values of a JSONL file with their 1-based line numbers; blank lines skipped.

    Raises:
        TraceError: unreadable, not UTF-8, or a line that is not JSON.
    """
    with file_lines(path) as lines:
        return list(jsonl_entries(lines, str(path)))


def parse_tools(data: object, *, source: str = "<tools>") -> tuple[ToolSchema, ...]:
    """Tool schemas from a JSON list of flat `{name, description, parameters}` or OpenAI-form
    `{"type": "function", "function": {...}}` items.

    Raises:
        TraceError: not a list, or an item that is neither form, or whose parameters hold NaN or
            Infinity (naming its index).
    """
    if not isinstance(data, list):
        raise TraceError(source, None, f"expected a JSON list of tool schemas, got {type(data).__name__}")
    schemas = []
    for k, item in enumerate(data):
        flat = item.get("function") if isinstance(item, Mapping) and item.get("type") == "function" else item
        if not isinstance(flat, Mapping) or not isinstance(flat.get("name"), str):
            raise TraceError(
                source, None, f"item {k}: expected {{name, description, parameters}} or the OpenAI form"
            )
        parameters = flat.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(parameters, Mapping):
            raise TraceError(source, None, f"item {k} ({flat['name']}): 'parameters' must be an object")
        try:
            schemas.append(ToolSchema.of(flat["name"], str(flat.get("description", "")), parameters))
        except NotJSONError as error:
            raise TraceError(source, None, f"item {k}: {error}") from None
    return tuple(schemas)


def load_tools(path: Path | str) -> tuple[ToolSchema, ...]:
    """Tool schemas from a JSON file (`--tools FILE`): one JSON list of schemas, or JSONL, one
    schema a line (blank lines skipped), read as the list of its lines.

    Raises:
        TraceError: unreadable, not JSON, or not a list of schemas.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise TraceError(str(path), None, f"cannot read the tool schemas: {error}") from None
    try:
        data = json_value(text, str(path), 1)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data" or _LONE_CR.search(text):
            raise TraceError(str(path), error.lineno, not_json(error)) from None
        data = _schema_lines(text, str(path))
    return parse_tools(data, source=str(path))


def _schema_lines(text: str, source: str) -> list[Any]:
    """The JSON values of a tools file's lines, one schema a line (JSONL)."""
    values = []
    for number, line in enumerate(text_lines(text), start=1):
        if not line.strip():
            continue
        try:
            values.append(json_value(line, source, number))
        except json.JSONDecodeError as error:
            why = not_json(error).split("; ")[0]
            raise TraceError(
                source, number, f"{why}; a tools file is one JSON list of schemas, or one schema a line"
            ) from None
    return values
