"""Deterministic filler of an exact size: prose, code, JSON, logs, shell output, Chinese; images.

Invariants:
- Randomness comes only from a `random.Random` passed in, or from `item_rng(seed, path)`, which
  derives an independent generator per item from a stable hash (BLAKE2b) of the seed and the
  item's path; the global RNG and `hash()` are never used. Same seed and path give the same
  text, on every run and every machine; editing one item never changes another.
- `filler(kind, nbytes, rng)` is exactly `nbytes` UTF-8 bytes. Every kind but `zh` is pure
  ASCII. `zh` is Chinese prose (3 bytes per CJK character) padded with at most two ASCII bytes.
- `filler_tokens(kind, tokens, rng)` is exactly `4 * tokens` bytes, which `AgentScopeEstimator`
  counts as exactly `tokens`, alone or joined with other multiples of 4 bytes.
- Text is made of whole units read from `rng` in blocks (`prose.draws`), never a word at a
  time: prose of pool sentences (`ctxlab.workloads.prose`), every other kind of pool units (a
  function or class, a JSON record, a log line, a command with its output, a Chinese paragraph),
  each pool `_POOL` units made once per process from a fixed seed. A shorter filler of a kind
  and generator is the start of a longer one (Chinese up to its cut and padding).
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import hashlib
import itertools
import json
import random
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any, Literal, get_args

from ctxlab.core.messages.blocks import DataBlock, SourceKind
from ctxlab.workloads import banks as b
from ctxlab.workloads.limits import spend
from ctxlab.workloads.prose import draws, prose, sentence

FillerKind = Literal["prose", "code", "json", "log", "shell", "zh"]
FILLER_KINDS: tuple[FillerKind, ...] = get_args(FillerKind)
BYTES_PER_TOKEN = 4
"""ASCII bytes that `AgentScopeEstimator` counts as one token."""

_LOG_START = dt.datetime(2026, 1, 1, 8, 0, tzinfo=dt.UTC)


def derive_seed(seed: int, path: str) -> int:
    """A 64-bit sub-seed for the item at `path`, stable across runs, processes and platforms.

    >>> derive_seed(0, "turns[0].user") == derive_seed(0, "turns[0].user")
    True
    >>> derive_seed(0, "a") != derive_seed(1, "a") != derive_seed(0, "b")
    True
    """
    digest = hashlib.blake2b(f"{seed}\x00{path}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def item_rng(seed: int, path: str) -> random.Random:
    """An independent generator for the item at `path` of a workload seeded with `seed`."""
    return random.Random(derive_seed(seed, path))


def filler(kind: FillerKind, nbytes: int, rng: random.Random) -> str:
    """Exactly `nbytes` UTF-8 bytes of filler text of `kind`.

    >>> text = filler("prose", 40, random.Random(1))
    >>> len(text.encode()), text.isascii()
    (40, True)
    >>> len(filler("zh", 10, random.Random(1)).encode())
    10
    """
    if nbytes < 0:
        raise ValueError(f"filler size {nbytes} is negative; give a size of 0 or more bytes")
    if kind == "zh":
        return _zh_exact(nbytes, rng)
    return _take_ascii(_STREAMS[kind](rng), nbytes)


def filler_tokens(kind: FillerKind, tokens: int, rng: random.Random) -> str:
    """Filler that `AgentScopeEstimator` counts as exactly `tokens`: `4 * tokens` bytes.

    >>> from ctxlab.core.messages.tokens import AgentScopeEstimator
    >>> AgentScopeEstimator().text_tokens(filler_tokens("zh", 7, random.Random(0)))
    7
    """
    return filler(kind, BYTES_PER_TOKEN * tokens, rng)


def filler_at(seed: int, path: str, kind: FillerKind, nbytes: int) -> str:
    """`filler` for the item at `path`, with its own derived generator (counted against the
    workload's `filler_budget`)."""
    spend(nbytes)
    return filler(kind, nbytes, item_rng(seed, path))


def _take_ascii(stream: Iterator[str], nbytes: int) -> str:
    pieces: list[str] = []
    size = 0
    while size < nbytes:
        piece = next(stream)
        pieces.append(piece)
        size += len(piece)
    return "".join(pieces)[:nbytes]


def _zh_exact(nbytes: int, rng: random.Random) -> str:
    """Whole pool paragraphs up to `nbytes`, cut at a character, padded with 0 to 2 digits."""
    units, sizes = _pool("zh"), _zh_sizes()
    pieces: list[str] = []
    size = 0
    values = draws(rng)
    while size < nbytes:
        k = next(values) & (_POOL - 1)
        pieces.append(units[k])
        size += sizes[k]
    text = "".join(pieces).encode("utf-8")[:nbytes].decode("utf-8", errors="ignore")
    missing = nbytes - len(text.encode("utf-8"))  # 0, 1 or 2: a cut CJK character
    return text + "".join(str(rng.randrange(10)) for _ in range(missing))


# ---------------------------------------------------------------------------------------------
# Pools: prose picks sentences (`ctxlab.workloads.prose`); every other kind picks whole units (a
# function or class, a JSON record, a log line, a command with its output, a Chinese paragraph)
# from a pool of `_POOL` units made once per process by a generator of a fixed seed. An item's
# generator is read in blocks of 16-bit values (`prose.draws`): a value's low bits pick a unit,
# its high bits (or the next value) the little an item varies a unit by (a record's id, a
# line's time).

_POOL = 256
"""Units in each pool: a power of two, so that a value's low 8 bits pick one uniformly (a few
milliseconds to make a pool, once per process, where units made for each item cost several
times more per byte)."""
_POOL_SEEDS = {
    "code": 20_260_102,
    "json": 20_260_103,
    "log": 20_260_104,
    "shell": 20_260_105,
    "zh": 20_260_106,
}


@functools.cache
def _pool(kind: str) -> tuple[Any, ...]:
    """The `_POOL` units of a kind, the same in every process (`_UNITS` makes each)."""
    rng = random.Random(_POOL_SEEDS[kind])
    return tuple(_UNITS[kind](rng) for _ in range(_POOL))


# Python code


def _code_line(rng: random.Random, indent: str) -> str:
    a, c = rng.choice(b.IDENTIFIERS), rng.choice(b.IDENTIFIERS)
    values = {
        "a": a,
        "b": rng.choice(b.IDENTIFIERS),
        "c": c if c != a else "items",
        "key": rng.choice(b.IDENTIFIERS),
        "n": rng.randrange(0, 100),
        "msg": f"{rng.choice(b.CODE_VERBS)} %s",
        "verb": rng.choice(b.CODE_VERBS),
        "i": indent,
    }
    return indent + rng.choice(b.CODE_LINES).format(**values) + "\n"


def _function(rng: random.Random, indent: str) -> str:
    name = f"{rng.choice(b.CODE_VERBS)}_{rng.choice(b.NOUNS)}"
    args = ", ".join(f"{a}: {rng.choice(b.TYPES)}" for a in rng.sample(b.IDENTIFIERS, rng.randrange(1, 4)))
    args = "self, " + args if indent else args
    doc = sentence(rng)
    body = "".join(_code_line(rng, indent + "    ") for _ in range(rng.randrange(3, 8)))
    result = rng.choice(b.IDENTIFIERS)
    return (
        f'{indent}def {name}({args}) -> {rng.choice(b.TYPES)}:\n{indent}    """{doc}"""\n'
        f"{body}{indent}    return {result}\n\n"
    )


def _code_unit(rng: random.Random) -> str:
    """A class of two or three methods (a quarter of units) or a function, with its blank lines."""
    if rng.random() < 0.25:
        name = rng.choice(b.NOUNS).capitalize() + rng.choice(b.NOUNS).capitalize()
        methods = "".join(_function(rng, "    ") for _ in range(rng.randrange(2, 4)))
        return f'class {name}:\n    """{sentence(rng)}"""\n\n{methods}\n'
    return _function(rng, "") + "\n"


@functools.cache
def _code_headers() -> tuple[str, ...]:
    """64 module headers: `logging` and three other imports, sorted, then a logger."""
    rng = random.Random(20_260_107)
    return tuple(
        "".join(f"import {m}\n" for m in sorted({"logging", *rng.sample(b.MODULES, 3)}))
        + "\nlogger = logging.getLogger(__name__)\n\n\n"
        for _ in range(64)
    )


def _code(rng: random.Random) -> Iterator[str]:
    values = draws(rng)
    yield _code_headers()[next(values) & 63]
    units = _pool("code")
    for value in values:
        yield units[value & (_POOL - 1)]


# JSON


def _record(rng: random.Random) -> tuple[str, str]:
    """A record of a `results` list, indented as one, split where its id goes."""
    first, last = rng.choice(b.NAMES), rng.choice(b.NAMES)
    created = _LOG_START - dt.timedelta(minutes=rng.randrange(0, 500_000))
    record = {
        "id": _ID,
        "name": f"{first} {last}",
        "email": f"{first.lower()}.{last.lower()}@example.com",
        "status": rng.choice(b.STATUSES),
        "city": rng.choice(b.CITIES),
        "total": round(rng.uniform(5, 900), 2),
        "items": [
            {"sku": f"{p[:2].upper()}-{rng.randrange(1000, 9999)}", "product": p, "qty": rng.randrange(1, 5)}
            for p in rng.sample(b.PRODUCTS, rng.randrange(1, 4))
        ],
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    text = "    " + json.dumps(record, indent=2).replace("\n", "\n    ") + ",\n"
    before, _, after = text.partition(str(_ID))
    return before, after


_ID = 987_654_321  # where a record's id goes, replaced at every pick


def _json(rng: random.Random) -> Iterator[str]:
    """A `results` list whose records' ids rise (10,000 on, 7 apart, plus 0 to 6)."""
    values = draws(rng)
    yield '{\n  "count": ' + str(20 + next(values) % 4980) + ',\n  "results": [\n'
    records = _pool("json")
    for index, value in enumerate(values):
        before, after = records[value & (_POOL - 1)]
        yield f"{before}{10_000 + index * 7 + (value >> 8) % 7}{after}"


# Log lines


def _log_line(rng: random.Random) -> str:
    """A log line after its time stamp: level, service and event, with its newline."""
    service = f"{rng.choice(b.SERVICES)}-{rng.randrange(1, 9)}"
    if rng.random() < 0.5:
        route = f"/api/v1/{rng.choice(b.NOUNS)}s/{rng.randrange(1, 99999)}"
        code, ms = rng.choice(b.HTTP_CODES), rng.randrange(1, 900)
        event = f"{rng.choice(b.HTTP_METHODS)} {route} -> {code} in {ms}ms"
    else:
        values = {
            "key": f"{rng.choice(b.IDENTIFIERS)}:{rng.randrange(10**5)}",
            "n": rng.randrange(1, 5000),
            "id": f"{rng.getrandbits(32):08x}",
            "small": rng.randrange(1, 6),
            "table": rng.choice(b.NOUNS) + "s",
            "ms": rng.randrange(1, 3000),
            "path": f"/var/lib/{rng.choice(b.SERVICES)}/{rng.choice(b.FILE_STEMS)}.ckpt",
        }
        event = rng.choice(b.LOG_EVENTS).format(**values)
    return f" {rng.choice(b.LEVELS):<5} [{service}] {event}\n"


def _log(rng: random.Random) -> Iterator[str]:
    """Lines 1 to 3,999 ms apart from a time of 2026-01-01, each stamped to the millisecond, in
    chunks of 16 lines (a stamp's date, hour and minute are made once a minute)."""
    values = draws(rng)
    lines = _pool("log")
    ms = (next(values) << 16 | next(values)) % 86_400_000
    minute, head = -1, ""
    while True:
        chunk = []
        for value in itertools.islice(values, 16):
            ms += 1 + next(values) % 3999
            if ms // 60_000 != minute:
                minute = ms // 60_000
                head = _minute(minute)
            in_minute = ms % 60_000
            chunk.append(f"{head}{in_minute // 1000:02d}.{in_minute % 1000:03d}Z{lines[value & (_POOL - 1)]}")
        yield "".join(chunk)


def _minute(minutes: int) -> str:
    """The stamp of a minute after 2026-01-01T00:00, up to its seconds: `2026-01-01T08:05:`."""
    return (_LOG_START + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:")


# Shell output


def _file_name(rng: random.Random) -> str:
    return f"{rng.choice(b.DIRS)}/{rng.choice(b.FILE_STEMS)}.{rng.choice(b.EXTENSIONS)}"


def _ls(rng: random.Random) -> str:
    lines = ["$ ls -la", f"total {rng.randrange(40, 400)}"]
    for _ in range(rng.randrange(4, 12)):
        day, hour, minute = rng.randrange(1, 29), rng.randrange(8, 19), rng.randrange(60)
        date = f"{rng.choice(b.MONTHS)} {day:2d} {hour:02d}:{minute:02d}"
        name = f"{rng.choice(b.FILE_STEMS)}.{rng.choice(b.EXTENSIONS)}"
        lines.append(f"-rw-r--r--  1 dev  staff  {rng.randrange(90, 90_000):>6} {date} {name}")
    return "\n".join(lines)


def _git_status(rng: random.Random) -> str:
    changed = "\n".join(f"\tmodified:   {_file_name(rng)}" for _ in range(rng.randrange(1, 5)))
    branch = f"{rng.choice(b.CODE_VERBS)}-{rng.choice(b.NOUNS)}"
    return f"$ git status\nOn branch {branch}\nChanges not staged:\n{changed}"


def _git_log(rng: random.Random) -> str:
    lines = [
        f"{rng.getrandbits(28):07x} {rng.choice(b.CODE_VERBS).capitalize()} the {rng.choice(b.NOUNS)} "
        f"{rng.choice(b.PREPOSITIONS)} {rng.choice(b.FILE_STEMS)}"
        for _ in range(rng.randrange(3, 9))
    ]
    return "$ git log --oneline\n" + "\n".join(lines)


def _pytest(rng: random.Random) -> str:
    count = rng.randrange(3, 12)
    module = f"tests/test_{rng.choice(b.FILE_STEMS)}.py"
    lines = [f"$ python -m pytest {module} -q"]
    for k in range(count):
        outcome = "PASSED" if rng.random() < 0.85 else "FAILED"
        name = f"test_{rng.choice(b.CODE_VERBS)}_{rng.choice(b.NOUNS)}"
        lines.append(f"{module}::{name} {outcome} [{100 * (k + 1) // count:3d}%]")
    lines.append(f"==== {count} tests in {rng.randrange(1, 900) / 100:.2f}s ====")
    return "\n".join(lines)


def _grep(rng: random.Random) -> str:
    word = rng.choice(b.IDENTIFIERS)
    lines = [f"$ grep -rn {word} src"]
    for _ in range(rng.randrange(2, 8)):
        line = _code_line(rng, "    ").rstrip("\n").split("\n")[0]
        lines.append(f"{_file_name(rng)}:{rng.randrange(1, 900)}:{line}")
    return "\n".join(lines)


def _du(rng: random.Random) -> str:
    lines = [f"{rng.randrange(4, 900)}K\t{d}" for d in rng.sample(b.DIRS, 4)]
    return "$ du -sh *\n" + "\n".join(lines)


_SHELL: dict[str, Callable[[random.Random], str]] = {
    "ls": _ls,
    "git_status": _git_status,
    "git_log": _git_log,
    "pytest": _pytest,
    "grep": _grep,
    "du": _du,
}


def _command(rng: random.Random) -> str:
    """A command with its output and a newline."""
    return _SHELL[rng.choice(b.SHELL_COMMANDS)](rng) + "\n"


def _shell(rng: random.Random) -> Iterator[str]:
    units = _pool("shell")
    return (units[value & (_POOL - 1)] for value in draws(rng))


# Chinese prose


def _zh_sentence(rng: random.Random) -> str:
    head = rng.choice(b.ZH_CONNECTIVES) + "，" if rng.random() < 0.4 else ""
    where = rng.choice(b.ZH_ADVERBIALS) if rng.random() < 0.5 else ""
    subject = rng.choice(b.ZH_SUBJECTS)
    if rng.random() < 0.25:
        subject = f"{subject} {rng.choice(b.ZH_ASCII_TERMS)} "
    body = f"{where}{subject}{rng.choice(b.ZH_VERBS)}{rng.choice(b.ZH_OBJECTS)}"
    tail = "，" + rng.choice(b.ZH_CLAUSES) if rng.random() < 0.6 else ""
    return f"{head}{body}{tail}。"


def _zh_paragraph(rng: random.Random) -> str:
    return "".join(_zh_sentence(rng) for _ in range(rng.randrange(2, 6))) + "\n\n"


@functools.cache
def _zh_sizes() -> tuple[int, ...]:
    """The UTF-8 size of each Chinese paragraph of the pool."""
    return tuple(len(unit.encode("utf-8")) for unit in _pool("zh"))


_UNITS: dict[str, Callable[[random.Random], Any]] = {
    "code": _code_unit,
    "json": _record,
    "log": _log_line,
    "shell": _command,
    "zh": _zh_paragraph,
}
_STREAMS: dict[str, Callable[[random.Random], Iterator[str]]] = {
    "prose": prose,
    "code": _code,
    "json": _json,
    "log": _log,
    "shell": _shell,
}
"""The stream of each ASCII kind (`zh` is made to its size in bytes by `_zh_exact`)."""


# ---------------------------------------------------------------------------------------------
# Images


def image_block(
    media_type: str, *, seed: int, path: str, source: SourceKind = "url", name: str | None = None
) -> DataBlock:
    """A deterministic image (or other data) block for the item at `path`.

    A URL source points into the reserved `.invalid` domain; a base64 source carries a small
    valid PNG for `image/png` and random bytes otherwise. Counters charge a flat amount per
    data block, so the payload's size does not matter.

    >>> image_block("image/png", seed=0, path="x").source.startswith("https://assets.ctxlab.invalid/")
    True
    """
    rng = item_rng(seed, path)
    if source == "url":
        ext = media_type.partition("/")[2].partition("+")[0] or "bin"
        url = f"https://assets.ctxlab.invalid/{rng.getrandbits(64):016x}.{ext}"
        return DataBlock(media_type=media_type, source=url, kind="url", name=name)
    payload = _png(rng) if media_type == "image/png" else rng.randbytes(48)
    data = base64.b64encode(payload).decode("ascii")
    return DataBlock(media_type=media_type, source=data, kind="base64", name=name)


def _png(rng: random.Random) -> bytes:
    """A 2x2 single-colour PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    pixel = bytes(rng.randrange(256) for _ in range(3))
    rows = b"".join(b"\x00" + pixel * 2 for _ in range(2))
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )
