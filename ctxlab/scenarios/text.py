"""A scenario file's text, checked before YAML reads it.

Invariants:
- Files that are not YAML text (a directory, binary data, an empty file, an over-large file, bytes
  that are not UTF-8) are refused with a located `ScenarioError` before parsing.
- A character YAML does not allow is refused at its line and column (`unprintable`), so no YAML
  reader error without a position reaches the user; so is a line break only YAML 1.1 reads as
  one (`hidden_break`: NEL, U+2028, U+2029). Both count lines as editors do, and with no hidden
  break left, every position YAML tells is the one an editor shows.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxlab.problems import Loc, Position, Problem, ScenarioError

MAX_SCENARIO_BYTES = 2_000_000


def refuse(file: str, message: str, line: int = 1, column: int = 1, loc: Loc = ()) -> ScenarioError:
    """One located problem of a file, as the error that stops its load."""
    return ScenarioError([Problem(loc=loc, message=message, at=Position(file, line, column))])


def read_text(path: Path) -> str:
    """The file's text, or a located error saying why it cannot be a scenario."""
    name = str(path)
    if not path.exists():
        raise refuse(name, "no such file; check the path")
    if path.is_dir():
        raise refuse(name, "is a directory; pass a .yaml file inside it")
    size = path.stat().st_size
    if size > MAX_SCENARIO_BYTES:
        raise refuse(
            name,
            f"is {size:,} bytes, over the {MAX_SCENARIO_BYTES:,}-byte limit; "
            "a scenario describes a workload, it does not contain one",
        )
    try:
        raw = path.read_bytes()
    except OSError as error:  # no permission to read it, or a device that refuses
        raise refuse(name, f"cannot be read: {error.strerror or error}; check its permissions") from None
    if b"\x00" in raw:
        raise refuse(name, "is binary (it contains NUL bytes); pass a YAML text file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = raw[: bad.start].count(b"\n") + 1
        raise refuse(name, "is not UTF-8 text; save it as UTF-8", line) from bad
    if not text.strip():
        raise refuse(name, "is empty; see scenarios/*.yaml for examples")
    return text


_UNPRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""A character YAML does not allow in a document's text (its reader refuses the file with no
line, so it is found here first): C0 and C1 controls but tab, newline, return and NEL, DEL,
surrogates, U+FFFE and U+FFFF."""
_EDITOR_BREAK = re.compile("\r\n|[\r\n]")
"""What editors count as a line break (YAML 1.1 also counts `_HIDDEN_BREAK`, which is refused)."""


def _editor_place(text: str, start: int) -> tuple[int, int]:
    """The line and column (1-based) an editor shows for the character at `start` of `text`."""
    breaks = [b.end() for b in _EDITOR_BREAK.finditer(text, 0, start)]
    return len(breaks) + 1, start - (breaks[-1] if breaks else 0) + 1


def unprintable(text: str, file: str) -> ScenarioError | None:
    """The located refusal of the first character YAML does not allow in `text`, or None."""
    found = _UNPRINTABLE.search(text)
    if found is None:
        return None
    line, column = _editor_place(text, found.start())
    code = ord(found.group())
    if 0xD800 <= code <= 0xDFFF:  # only text not read from a UTF-8 file holds one (an argument)
        what = "is half of a UTF-16 pair (or a byte that is not UTF-8), not a character"
        fix = "write the character itself in UTF-8"
    else:
        what = "is a control character or a non-character, which YAML does not allow"
        fix = 'write it as an escape inside a double-quoted string ("\\x07" for U+0007)'
    message = f"invalid YAML: U+{code:04X} {what}; delete it, or {fix}"
    return refuse(file, message, line, column)


_HIDDEN_BREAK = re.compile("[\x85\u2028\u2029]")
"""The line breaks YAML 1.1 reads that editors do not show as breaks."""
_BREAK_NAMES = {"\x85": "NEXT LINE", "\u2028": "LINE SEPARATOR", "\u2029": "PARAGRAPH SEPARATOR"}


def hidden_break(text: str, file: str) -> ScenarioError | None:
    """The located refusal of the first line break in `text` that YAML reads and editors do not
    show (it would end a comment early, fold a quoted text and shift every later line told), at
    the line and column an editor shows; or None."""
    found = _HIDDEN_BREAK.search(text)
    if found is None:
        return None
    line, column = _editor_place(text, found.start())
    code = ord(found.group())
    message = (
        f"invalid YAML: U+{code:04X} ({_BREAK_NAMES[found.group()]}) is a line break to YAML but not "
        f'to editors; delete it, or write it as an escape inside a double-quoted string ("\\u{code:04x}")'
    )
    return refuse(file, message, line, column)
