"""Gzip members whose bytes are the same on every Python and platform (request files, Parquet
pages): results are byte-identical wherever a scenario runs."""

from __future__ import annotations

import struct
import zlib

GZIP_HEADER = b"\x1f\x8b\x08\x00" + bytes(4) + b"\x00\x03"
"""A gzip member's header: deflate, no flags, no timestamp, no extra flags, made on Unix."""


def gzipped(data: bytes, level: int = 6) -> bytes:
    """`data` as one gzip member whose header is `GZIP_HEADER` on every Python and platform.

    `gzip.compress(mtime=0)` leaves the header to zlib on Python 3.11 (the system it was built
    for: 3 on Linux) and writes 255 (unknown) from 3.12 on, so the same data would be
    different bytes; the compressed data (deflate at `level`) is zlib's either way.
    """
    deflate = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflate.compress(data) + deflate.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return GZIP_HEADER + body + trailer
