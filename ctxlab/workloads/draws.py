"""Uniform draws from a `random.Random`, read from its generator in blocks rather than one call each.

Filler text draws about one word per eight bytes; drawing each through `choice` costs several
Python calls, so long fillers fetch the generator's 32-bit outputs in blocks and pick from them
with a few integer operations (`ctxlab.workloads.filler` does so for prose).

Invariants:
- Picking from `Outputs` as `pick` does gives exactly what `rng.randrange(n)` (or `rng.choice`
  of a sequence of length n) would have returned at the same point of the generator's stream,
  for every 0 < n < 2**32. CPython's `random.Random` draws below n by rejection: it takes
  `getrandbits(n.bit_length())`, which for at most 32 bits is one 32-bit output shifted right
  by `shift_below(n)`, and draws again while the value is n or more. `getrandbits(32 * m)`
  returns m consecutive outputs, the first in the lowest 32 bits.
- On leaving `outputs`, `rng` is exactly where the same draws made one by one would have left
  it: the outputs fetched but not used are given back, whether the block exits normally or not.
- Only an exact `random.Random` is read in blocks (`outputs` gives None for any other generator,
  such as a subclass, which may draw differently; callers then draw through its own methods).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

BLOCK = 1024
"""32-bit outputs fetched at a time."""

WORD_BITS = 32


@dataclass(slots=True)
class Outputs:
    """The 32-bit outputs of one generator in the order it produces them; `used` consumed so far.

    Mutable on purpose: it is the generator's position, advanced by whoever picks from `words`.
    """

    rng: random.Random
    words: list[int] = field(default_factory=list)
    used: int = 0

    def fetch(self, count: int = BLOCK) -> None:
        """Append the generator's next `count` outputs (at least one) to `words`."""
        count = max(1, count)
        raw = self.rng.getrandbits(WORD_BITS * count).to_bytes(4 * count, "little")
        self.words.extend(struct.unpack(f"<{count}I", raw))


def shift_below(n: int) -> int:
    """How far right a 32-bit output is shifted to draw below `n` (0 < n < 2**32).

    >>> shift_below(1), shift_below(6), shift_below(2**32 - 1)
    (31, 29, 0)
    """
    if not 0 < n < 1 << WORD_BITS:
        raise ValueError(f"cannot draw below {n}; give 0 < n < 2**32")
    return WORD_BITS - n.bit_length()


def pick(out: Outputs, n: int) -> int:
    """The next draw below `n`, as `randrange(n)`; fetches more outputs when needed.

    >>> with outputs(random.Random(5)) as out:
    ...     fast = [pick(out, n) for n in (6, 88, 1, 1000, 3)] if out else []
    >>> slow = random.Random(5)
    >>> fast == [slow.randrange(n) for n in (6, 88, 1, 1000, 3)]
    True
    """
    shift = shift_below(n)
    while True:
        if out.used == len(out.words):
            out.fetch()
        value = out.words[out.used] >> shift
        out.used += 1
        if value < n:
            return value


@contextmanager
def outputs(rng: random.Random) -> Iterator[Outputs | None]:
    """`rng`'s outputs to pick from (None unless `rng` is an exact `random.Random`); on exit `rng`
    has advanced by exactly the outputs used."""
    if type(rng) is not random.Random:
        yield None
        return
    saved = rng.getstate()
    out = Outputs(rng)
    try:
        yield out
    finally:
        rng.setstate(saved)
        if out.used:
            rng.getrandbits(WORD_BITS * out.used)
