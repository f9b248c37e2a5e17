"""Where a value stands in a JSON document that spans many lines: the path of a container read
from it (found by identity), and the line that path's value starts on in the document's text.

A transcript written as one JSON document (a SWE-agent trajectory, an OpenHands event list,
tau-bench results) is one entry, numbered with the line it starts on; a problem inside it is
told at the line of the item being read instead (`Report.located`).

Invariants:
- Both functions are read only when a problem is located: each costs a walk over the document
  (its parsed value, then its text up to the place), never anything while a file imports well.
- `offset_of` reads the text as `json.loads` does: a key given twice is the last one's value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

JsonPath = tuple[str | int, ...]

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def path_to(root: Any, target: object) -> JsonPath | None:
    """The keys and indices from `root` to the very object `target` (a dict or list read from
    the same document), or None where `root` does not hold it.

    >>> doc = {"history": [{"role": "user"}, {"role": "tool"}]}
    >>> path_to(doc, doc["history"][1])
    ('history', 1)
    """
    stack: list[tuple[JsonPath, Any]] = [((), root)]
    while stack:
        path, value = stack.pop()
        if value is target:
            return path
        if isinstance(value, dict):
            stack.extend(((*path, key), item) for key, item in value.items() if isinstance(item, dict | list))
        elif isinstance(value, list):
            stack.extend(
                ((*path, index), item) for index, item in enumerate(value) if isinstance(item, dict | list)
            )
    return None


def offset_of(text: str, path: Sequence[str | int]) -> int | None:
    """Where the value at `path` starts in the JSON `text` (a character offset), or None where
    the text holds no such value or cannot be read.

    >>> text = '{"a": 1,\\n "b": [10,\\n  {"c": 2}]}'
    >>> text[offset_of(text, ("b", 1)):]
    '{"c": 2}]}'
    """
    try:
        at = _space(text, 0)
        for step in path:
            found = _in_array(text, at, step) if isinstance(step, int) else _in_object(text, at, step)
            if found is None:
                return None
            at = found
    except (ValueError, IndexError):  # not JSON where it was walked, or an integer too long to read
        return None
    return at


def line_at(text: str, first: int, path: Sequence[str | int]) -> int | None:
    """The line, counted as the file counts it, that the value at `path` starts on in a document
    whose `text` begins on line `first`; None where the text holds no such value."""
    offset = offset_of(text, path)
    return None if offset is None else first + text.count("\n", 0, offset)


def _space(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found else at


def _skip(text: str, at: int) -> int:
    """The offset just past the JSON value starting at `at`, and the space after it."""
    return _space(text, _DECODER.raw_decode(text, at)[1])


def _in_array(text: str, at: int, index: int) -> int | None:
    if text[at] != "[" or index < 0:
        return None
    at = _space(text, at + 1)
    if text[at] == "]":
        return None
    for _ in range(index):
        at = _skip(text, at)
        if text[at] != ",":
            return None
        at = _space(text, at + 1)
    return at


def _in_object(text: str, at: int, key: str) -> int | None:
    if text[at] != "{":
        return None
    at, found = _space(text, at + 1), None
    while text[at] != "}":
        name, end = _DECODER.raw_decode(text, at)
        at = _space(text, end)
        if not isinstance(name, str) or text[at] != ":":
            return None
        at = _space(text, at + 1)
        if name == key:
            found = at  # a later repeat of the key wins, as in `json.loads`
        at = _skip(text, at)
        if text[at] == ",":
            at = _space(text, at + 1)
        elif text[at] != "}":
            return None
    return found
