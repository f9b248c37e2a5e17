"""A strict reader of MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md), the
binary form LangGraph's checkpointers store checkpoints in; no MessagePack library is needed.

Every format of the spec is read: nil, booleans, the integers (fixint, uint and int 8 to 64),
float 32 and 64, str (fix, 8, 16, 32) as UTF-8 text, bin (8, 16, 32) as bytes, array (fix, 16,
32) as a list, map (fix, 16, 32) as a dict, ext (fixext 1 to 16, ext 8, 16, 32) as what the
caller's `hook` makes of its type and data (an `Ext` unless given).

Invariants:
- One value is the whole input: bytes left after it, a value cut short, the byte 0xc1 (which
  the spec never uses), a str that is not UTF-8 and a map key that is an array or a map are
  `MsgpackError`s naming the byte offset (where the part read begins: a value's first byte,
  a str's or bin's data, an array's or map's first item, an ext's type byte; inside an ext's
  data, the outermost ext's, then where the innermost one's data goes wrong); nothing is guessed.
- Arrays, maps and ext values nest at most `DEPTH` deep (an ext's own data counting as one
  level inside it), so no input can exhaust the interpreter's stack; a declared length larger
  than what is left is told as truncation before anything is made for it.
- A map key given twice keeps its last value, as MessagePack's libraries read it.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass

DEPTH = 100
"""How deep arrays, maps and ext values may nest."""


class MsgpackError(ValueError):
    """Bytes that are not one MessagePack value (the message says where and why)."""


@dataclass(frozen=True, slots=True)
class Ext:
    """An extension value: its type (-128 to 127) and its data, uninterpreted."""

    code: int
    data: bytes


Inner = Callable[[bytes], object]
"""Reads an ext's data as one MessagePack value, one level deeper."""
Hook = Callable[[int, bytes, Inner], object]
"""What an ext value is read as, from its type, its data, and a reader of its data."""


def kept(code: int, data: bytes, inner: Inner) -> object:
    """The default hook: the ext as it is."""
    return Ext(code, data)


def unpacked(data: bytes, hook: Hook = kept, depth: int = DEPTH) -> object:
    """The one MessagePack value `data` holds.

    Raises:
        MsgpackError: `data` is not one value (module docstring).
    """
    value, end = _value(_Input(bytes(data), hook), 0, depth)
    if end != len(data):
        raise MsgpackError(f"{len(data) - end} bytes follow the value, from byte {end}")
    return value


@dataclass(frozen=True, slots=True)
class _Input:
    data: bytes
    hook: Hook


_FIXED = {
    0xCA: (">f", "float 32"),
    0xCB: (">d", "float 64"),
    0xCC: (">B", "uint 8"),
    0xCD: (">H", "uint 16"),
    0xCE: (">I", "uint 32"),
    0xCF: (">Q", "uint 64"),
    0xD0: (">b", "int 8"),
    0xD1: (">h", "int 16"),
    0xD2: (">i", "int 32"),
    0xD3: (">q", "int 64"),
}
"""Numbers of a fixed size after their first byte: floats, then unsigned and signed integers."""
_SIZED = {
    0xC4: ("bin", ">B"),
    0xC5: ("bin", ">H"),
    0xC6: ("bin", ">I"),
    0xC7: ("ext", ">B"),
    0xC8: ("ext", ">H"),
    0xC9: ("ext", ">I"),
    0xD9: ("str", ">B"),
    0xDA: ("str", ">H"),
    0xDB: ("str", ">I"),
    0xDC: ("array", ">H"),
    0xDD: ("array", ">I"),
    0xDE: ("map", ">H"),
    0xDF: ("map", ">I"),
}
"""Values whose length (bytes, or items for an array or a map) follows their first byte."""
_FIXEXT = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}
_CONSTANTS: dict[int, object] = {0xC0: None, 0xC2: False, 0xC3: True}
_INSIDE = re.compile(r"^in the ext at byte [0-9]+: ")


def _take(source: _Input, at: int, size: int, what: str) -> bytes:
    """The `size` bytes from `at`, or a truncation error naming `what` needed them."""
    if at + size > len(source.data):
        left = max(len(source.data) - at, 0)
        raise MsgpackError(f"truncated: {what} at byte {at} needs {size} bytes, {left} left")
    return source.data[at : at + size]


def _number(source: _Input, at: int, layout: str, what: str) -> int | float:
    found: int | float = struct.unpack(layout, _take(source, at, struct.calcsize(layout), what))[0]
    return found


def _value(source: _Input, at: int, depth: int) -> tuple[object, int]:
    """The value starting at byte `at` and the offset after it."""
    first = _take(source, at, 1, "a value")[0]
    if first <= 0x7F or first >= 0xE0:
        return (first if first <= 0x7F else first - 0x100), at + 1
    if first in _CONSTANTS:
        return _CONSTANTS[first], at + 1
    if 0xA0 <= first <= 0xBF:
        return _sized(source, "str", first & 0x1F, at + 1, depth)
    if 0x80 <= first <= 0x9F:
        return _sized(source, "map" if first <= 0x8F else "array", first & 0x0F, at + 1, depth)
    if first in _FIXED:
        layout, name = _FIXED[first]
        return _number(source, at + 1, layout, f"a {name}"), at + 1 + struct.calcsize(layout)
    if first in _SIZED:
        kind, layout = _SIZED[first]
        length = int(_number(source, at + 1, layout, f"the length of {_a(kind)}"))
        return _sized(source, kind, length, at + 1 + struct.calcsize(layout), depth)
    if first in _FIXEXT:
        return _ext(source, _FIXEXT[first], at + 1, depth)
    raise MsgpackError(f"byte {at} is 0xc1, which MessagePack never uses")


def _sized(source: _Input, kind: str, length: int, at: int, depth: int) -> tuple[object, int]:
    """A str, bin, array, map or ext of `length` (bytes, or items) starting at `at`."""
    if kind == "str":
        raw = _take(source, at, length, "a str")
        try:
            return raw.decode("utf-8"), at + length
        except UnicodeDecodeError:
            raise MsgpackError(f"the str at byte {at} is not UTF-8") from None
    if kind == "bin":
        return _take(source, at, length, "a bin"), at + length
    if kind == "ext":
        return _ext(source, length, at, depth)
    if depth <= 0:
        raise MsgpackError(f"the {kind} at byte {at} is nested too deeply")
    # every item takes a byte at least: a length beyond what is left is truncation, told now
    _take(source, at, length * (2 if kind == "map" else 1), f"{_a(kind)} of {length} items")
    return (_map if kind == "map" else _array)(source, length, at, depth - 1)


def _a(kind: str) -> str:
    return ("an " if kind in {"array", "ext"} else "a ") + kind


def _array(source: _Input, length: int, at: int, depth: int) -> tuple[object, int]:
    items = []
    for _ in range(length):
        item, at = _value(source, at, depth)
        items.append(item)
    return items, at


def _map(source: _Input, length: int, at: int, depth: int) -> tuple[object, int]:
    pairs: dict[object, object] = {}
    for _ in range(length):
        start = at
        key, at = _value(source, at, depth)
        try:
            hash(key)
        except TypeError:
            raise MsgpackError(f"the map key at byte {start} is a {type(key).__name__}") from None
        pairs[key], at = _value(source, at, depth)
    return pairs, at


def _ext(source: _Input, length: int, at: int, depth: int) -> tuple[object, int]:
    """An ext of `length` data bytes (its type byte at `at`), read by the input's hook."""
    code = struct.unpack(">b", _take(source, at, 1, "an ext's type"))[0]
    data = _take(source, at + 1, length, "an ext's data")
    if depth <= 0:
        raise MsgpackError(f"the ext at byte {at} is nested too deeply")

    def inner(raw: bytes) -> object:
        try:
            value, end = _value(_Input(bytes(raw), source.hook), 0, depth - 1)
        except MsgpackError as error:  # offsets inside an ext count from its data: the outer one is told
            raise MsgpackError(f"in the ext at byte {at}: {_INSIDE.sub('', str(error))}") from None
        if end != len(raw):
            raise MsgpackError(f"in the ext at byte {at}: {len(raw) - end} bytes follow its value")
        return value

    return source.hook(code, data, inner), at + 1 + length


__all__ = ["DEPTH", "Ext", "Hook", "Inner", "MsgpackError", "kept", "unpacked"]
