"""Parquet files of the results tables, written by the standard library alone.

A run writes three tables; pyarrow would write them at the price of importing pyarrow and numpy
(0.16 s in a process of its own, some 0.07 s of a 2,000-reply run's). The tables need little of
the format, so it is written here: one row group; per column, data pages (v1) of at most
`PAGE_ROWS` rows, each holding the definition levels (RLE / bit-packed hybrid, bit width 1) and
the present values PLAIN-encoded, the page gzip-compressed at zlib's fastest level (a sixth of
level 6's time for 8% more bytes); the footer in Thrift's compact protocol.

Invariants:
- pyarrow and pandas read a file written here as the table of typed, nullable columns pyarrow
  writes from the same values: `string` (UTF-8 byte arrays), `int` (int64), `float` (double),
  `bool`; a test compares the two for arbitrary tables.
- The bytes depend only on the table: no clock, version or host goes into the file (`gzipped`
  pages), so a results folder is byte-identical from run to run and from Python to Python.
- A value that does not fit its column (an int past 64 bits, text that is not UTF-8) raises a
  ValueError naming the column, before anything is written.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.experiments.columns import ColumnType
from ctxlab.experiments.gzipped import gzipped

PAGE_ROWS = 1 << 16
"""Rows per data page: a page is read (and decompressed) whole, so a long table has many."""

MAGIC = b"PAR1"

# Thrift compact protocol: the field types used here
_I32, _I64, _BINARY, _LIST, _STRUCT = 5, 6, 8, 9, 12

# Parquet's enums (parquet.thrift): physical types, repetition, encodings, codecs, page types
_PHYSICAL = {"bool": 0, "int": 2, "float": 5, "string": 6}
_OPTIONAL = 1
_PLAIN, _RLE = 0, 3
_GZIP = 2
_DATA_PAGE = 0
_UTF8 = 0  # the converted type of text
_FORMAT_VERSION = 2

Field = tuple[int, int, Any]
"""A Thrift struct's field: its id, its compact type and its value (a field whose value is None
is left out)."""


ParquetColumn = tuple[str, ColumnType, Sequence[Any]]
"""A column's name, type and values (None for a missing value)."""


def write_parquet_file(path: Path, columns: Sequence[ParquetColumn]) -> None:
    """Write `columns` (all of one length) as one Parquet file at `path`."""
    path.write_bytes(parquet_bytes(columns))


def parquet_bytes(columns: Sequence[ParquetColumn], page_rows: int = PAGE_ROWS) -> bytes:
    """The Parquet file of `columns`, in data pages of at most `page_rows` rows."""
    rows = len(columns[0][2]) if columns else 0
    if any(len(values) != rows for _, _, values in columns):
        raise ValueError("every column of a Parquet table holds as many values as the first")
    out = bytearray(MAGIC)
    chunks = []
    full_size = 0
    for name, kind, values in columns:
        start = len(out)
        try:
            pages = [_page(kind, values[i : i + page_rows]) for i in range(0, max(rows, 1), page_rows)]
        except (struct.error, UnicodeEncodeError) as bad:
            raise ValueError(
                f"the Parquet column {name!r} holds a value its {kind} type cannot: {bad}"
            ) from bad
        for page in pages:
            out += page.header + page.body
        chunks.append(_column_chunk(name, kind, rows, start, pages))
        full_size += sum(p.full_size for p in pages)
    footer = _struct(
        [
            (1, _I32, _FORMAT_VERSION),
            (2, _LIST, (_STRUCT, [_root(len(columns)), *(_schema(n, k) for n, k, _ in columns)])),
            (3, _I64, rows),
            (4, _LIST, (_STRUCT, [_row_group(chunks, rows, full_size)])),
            (6, _BINARY, "ctxlab"),
        ]
    )
    return bytes(out + footer + len(footer).to_bytes(4, "little") + MAGIC)


@dataclass(frozen=True, slots=True)
class _Page:
    """A data page as written (its Thrift header, then its compressed body) and its body's size
    before compression, which the footer sums."""

    header: bytes
    body: bytes
    raw_size: int

    @property
    def stored_size(self) -> int:
        return len(self.header) + len(self.body)

    @property
    def full_size(self) -> int:
        return len(self.header) + self.raw_size


def _page(kind: ColumnType, values: Sequence[Any]) -> _Page:
    present = [v for v in values if v is not None]
    levels = _levels(values, len(present))
    raw = len(levels).to_bytes(4, "little") + levels + _plain(kind, present)
    body = gzipped(raw, level=1)
    header = _struct(
        [
            (1, _I32, _DATA_PAGE),
            (2, _I32, len(raw)),
            (3, _I32, len(body)),
            (5, _STRUCT, [(1, _I32, len(values)), (2, _I32, _PLAIN), (3, _I32, _RLE), (4, _I32, _RLE)]),
        ]
    )
    return _Page(header, body, len(raw))


def _levels(values: Sequence[Any], present: int) -> bytes:
    """The definition levels (1 present, 0 missing) in the RLE / bit-packed hybrid: one RLE run
    when every value is present or every one missing, else one bit-packed run."""
    if present in (0, len(values)):
        return _varint(len(values) << 1) + (b"\x01" if present else b"\x00") if values else b""
    groups = (len(values) + 7) // 8
    return _varint(groups << 1 | 1) + _bits([v is not None for v in values], groups)


def _bits(flags: Sequence[bool], size: int) -> bytes:
    """`flags` packed eight to a byte, the first in the lowest bit, padded to `size` bytes."""
    text = "".join("1" if flag else "0" for flag in reversed(flags))
    return int(text or "0", 2).to_bytes(size, "little")


def _plain(kind: ColumnType, values: list[Any]) -> bytes:
    if kind == "int":
        return struct.pack(f"<{len(values)}q", *values)
    if kind == "float":
        return struct.pack(f"<{len(values)}d", *values)
    if kind == "bool":
        return _bits([bool(v) for v in values], (len(values) + 7) // 8)
    encoded = [v.encode() for v in values]
    return b"".join(len(e).to_bytes(4, "little") + e for e in encoded)


def _column_chunk(name: str, kind: ColumnType, rows: int, start: int, pages: list[_Page]) -> list[Field]:
    metadata: list[Field] = [
        (1, _I32, _PHYSICAL[kind]),
        (2, _LIST, (_I32, [_PLAIN, _RLE])),
        (3, _LIST, (_BINARY, [name])),
        (4, _I32, _GZIP),
        (5, _I64, rows),
        (6, _I64, sum(p.full_size for p in pages)),
        (7, _I64, sum(p.stored_size for p in pages)),
        (9, _I64, start),
    ]
    return [(2, _I64, start), (3, _STRUCT, metadata)]


def _row_group(chunks: list[list[Field]], rows: int, full_size: int) -> list[Field]:
    return [(1, _LIST, (_STRUCT, chunks)), (2, _I64, full_size), (3, _I64, rows)]


def _root(children: int) -> list[Field]:
    return [(4, _BINARY, "schema"), (5, _I32, children)]


def _schema(name: str, kind: ColumnType) -> list[Field]:
    text = kind == "string"
    return [
        (1, _I32, _PHYSICAL[kind]),
        (3, _I32, _OPTIONAL),
        (4, _BINARY, name),
        (6, _I32, _UTF8 if text else None),
        (10, _STRUCT, [(1, _STRUCT, [])] if text else None),  # LogicalType STRING
    ]


def _struct(fields: Iterable[Field]) -> bytes:
    """A Thrift struct in the compact protocol. Field ids ascend by at most 15 in every struct
    written here, so each field's header is one byte."""
    out = bytearray()
    last = 0
    for field_id, kind, value in fields:
        if value is None:
            continue
        out.append((field_id - last) << 4 | kind)
        out += _value(kind, value)
        last = field_id
    out.append(0)
    return bytes(out)


def _value(kind: int, value: Any) -> bytes:
    if kind in (_I32, _I64):
        return _varint(value << 1 if value >= 0 else (-value << 1) - 1)  # zigzag
    if kind == _BINARY:
        data: bytes = value.encode()
        return _varint(len(data)) + data
    if kind == _STRUCT:
        return _struct(value)
    item_kind, items = value
    size = len(items)
    head = bytes([size << 4 | item_kind]) if size < 15 else bytes([0xF0 | item_kind]) + _varint(size)
    return head + b"".join(_value(item_kind, item) for item in items)


def _varint(number: int) -> bytes:
    out = bytearray()
    while number > 0x7F:
        out.append(number & 0x7F | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)
