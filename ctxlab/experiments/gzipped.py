"""Gzip members whose bytes are the same on every Python and platform (request files, Parquet
pages): results are byte-identical wherever a scenario runs."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable

GZIP_HEADER = b"\x1f\x8b\x08\x00" + bytes(4) + b"\x00\x03"
"""A gzip member's header: deflate, no flags, no timestamp, no extra flags, made on Unix."""


def gzipped(data: bytes, level: int = 6) -> bytes:
    """`data` as one gzip member whose header is `GZIP_HEADER` on every Python and platform.

    `gzip.compress(mtime=0)` leaves the header to zlib on Python 3.11 (the system it was built
    for: 3 on Linux) and writes 255 (unknown) from 3.12 on, so the same data would be
    different bytes; the compressed data (deflate at `level`) is zlib's either way.
    """
    return gzipped_parts((data,), level)


def gzipped_parts(parts: Iterable[bytes], level: int = 6) -> bytes:
    """`gzipped` of the parts joined, each compressed as it comes, so that only one part and the
    compressed bytes are held at a time (a request file's lines add up to hundreds of MB). The
    bytes are those of the joined data: deflate's output does not depend on how its input is cut."""
    deflate = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    body, crc, size = [], 0, 0
    for part in parts:
        body.append(deflate.compress(part))
        crc, size = zlib.crc32(part, crc), size + len(part)
    body.append(deflate.flush())
    return GZIP_HEADER + b"".join(body) + struct.pack("<II", crc, size & 0xFFFFFFFF)
