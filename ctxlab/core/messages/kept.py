"""What a leading fold, concatenation or scan (`ctxlab.core.messages.memo`) keeps of a sequence
it read, and how a new sequence takes up such a read where it does not simply extend it.

Invariants:
- A `KeptSequence` holds the items read, the value after each leading run of them (a fold's
  value, a scan's carry), and for a concatenation or a scan the parts, how many the first `i`
  items made (`ends[i]`), and their tuple once made. Every function here leaves it describing
  the plain read of the items it then holds, and says how many leading items of the new
  sequence those are; the caller reads the rest.
- `rejoined_fold` and `rejoined_scan` take up a read past a few items a sequence replaced (a
  clearing's copy of a reply): each differing item is read afresh, and where the next item is
  the kept one at its place, entered as before (a fold's `rejoin` maps the kept values on; a
  scan whose step does not read its position needs the same carry), the kept values or parts
  of the run of same objects that follows are taken. `resume_inside` enters a read at a later
  place of another (a window that cut a reply's front). Each stops after `ENTERED` items read
  afresh in a row, so what it walks is bounded by what changed.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any, Generic, Protocol, TypeVar, overload

from ctxlab.core.messages.message import GROWN, same_run

K = TypeVar("K")
V = TypeVar("V")
P = TypeVar("P")
S = TypeVar("S")


RESUMED_BLOCKS = 16
"""A message this long is read by resuming an earlier read of the blocks it begins with (a reply
grows by a round at every call); a shorter one is read whole, cheaper than looking for one."""


class Summable(Protocol):
    """A value that adds and subtracts: a running sum (a float, a `Tally`)."""

    def __add__(self, other: Any, /) -> Any: ...
    def __sub__(self, other: Any, /) -> Any: ...


A = TypeVar("A", bound=Summable)


def shifted(kept: A, now: A) -> Callable[[A], A]:
    """A fold's `rejoin` for a running sum: the sums kept after an item map to those after it now
    by what the two differ by there. Exact for sums of whole numbers (a float one below 2**53).

    >>> shifted(10.0, 7.0)(25.0)
    22.0
    """
    gained = now - kept

    def moved(total: A) -> A:
        return total + gained  # type: ignore[no-any-return]

    return moved


def rejoined_fold(
    kept: KeptSequence[K, V, None],
    items: Sequence[K],
    same: int,
    *,
    step: Callable[..., V],
    rejoin: Callable[..., Callable[[V], V] | None],
    args: tuple[Any, ...],
) -> int:
    """Bring a fold `kept` to `items` from `same` on (`_rejoin_walk`): an item folded afresh
    rejoins when `rejoin` maps the kept values after it. How many leading items it now holds."""
    values = kept.values

    def fold(at: int) -> Callable[[int, int], None] | None:
        value = step(values[at], items[at], *args)
        mapped, values[at + 1] = rejoin(values[at + 1], value, *args), value
        if mapped is None:
            return None

        def take(first: int, run: int) -> None:
            values[first + 1 : first + 1 + run] = map(mapped, values[first + 1 : first + 1 + run])

        return take

    return _rejoin_walk(kept, items, same, fold)


def rejoined_scan(
    kept: KeptSequence[K, S, P],
    items: Sequence[K],
    same: int,
    *,
    step: Callable[..., tuple[Iterable[P], S]],
    args: tuple[Any, ...],
) -> int:
    """Bring a scan whose step does not read its position to `items` from `same` on
    (`_rejoin_walk`): an item walked afresh, its parts in place of the kept item's, rejoins when
    the carry after it is the kept one. How many leading items `kept` now holds."""
    carries, ends, parts = kept.values, kept.ends, kept.parts
    moved = 0  # how far the kept parts after the items walked have moved
    kept.made_keeps, kept.whole = min(kept.made_keeps, ends[same]), None

    def walk(at: int) -> Callable[[int, int], None] | None:
        nonlocal moved
        made, carry = step(carries[at], items[at], ends[at], *args)
        high, held_parts = ends[at + 1] + moved, len(parts)  # where the kept item's parts end
        parts[ends[at] : high] = made
        moved += len(parts) - held_parts
        ends[at + 1], rejoins, carries[at + 1] = (
            high + len(parts) - held_parts,
            carries[at + 1] == carry,
            carry,
        )
        shift = moved

        def take(first: int, run: int) -> None:
            ends[first + 1 : first + 1 + run] = map(shift.__add__, ends[first + 1 : first + 1 + run])

        return take if rejoins else None

    return _rejoin_walk(kept, items, same, walk)


def _rejoin_walk(
    kept: KeptSequence[K, V, P],
    items: Sequence[K],
    same: int,
    read: Callable[[int], Callable[[int, int], None] | None],
) -> int:
    """Bring `kept` to `items` from `same` on (the first item that differs) as far as both go:
    each item read afresh (`read(at)`, which puts what it makes in place of the kept item's and
    says how to take the kept run after it, entered alike, or None), and where the next item is
    the kept one at its place and `read` said how, the run of same objects that follows taken
    from `kept`; until `ENTERED` items in a row are read without one. How many leading items
    `kept` now holds."""
    held = kept.items
    stop, at, walked = min(len(items), len(held)), same, 0
    while at < stop and walked < ENTERED:
        take = read(at)
        held[at], at, walked = items[at], at + 1, walked + 1
        if take is not None and at < stop and items[at] is held[at]:
            run = same_run(held, at, items, at, stop - at)
            take(at, run)
            at, walked = at + run, 0
    kept.placed = min(kept.placed, same)
    return at


def resume_inside(
    kept: KeptSequence[K, S, P],
    items: Sequence[K],
    start: S,
    slots: Sequence[KeptSequence[K, S, P]],
    *,
    step: Callable[..., tuple[Iterable[P], S]],
    args: tuple[Any, ...],
) -> int:
    """Fill the empty `kept` with the first `k < ENTERED` items walked afresh from `start` by
    `step` (given `args`), then the longest run (`RESUMED_BLOCKS` or more) that `items` goes on with inside
    another of `slots`, entered there with the carry the walk ended with (the fewest items
    walked first); how many items it holds (none found: the items walked, `ENTERED` or all)."""
    carry, parts, carries, ends = start, list[P](), list[S](), list[int]()
    for k in range(min(ENTERED, len(items))):
        found = _run_inside(kept, items, k, carry, slots)
        if found is not None:
            other, q, run = found
            stop, base = q + run, other.ends[q]
            kept.items[:] = [*items[:k], *other.items[q:stop]]
            kept.values[:] = [start, *carries, *other.values[q + 1 : stop + 1]]
            kept.ends[:] = [0, *ends, *map((len(parts) - base).__add__, other.ends[q + 1 : stop + 1])]
            kept.parts[:] = [*parts, *other.parts[base : other.ends[stop]]]
            return k + run
        made, carry = step(carry, items[k], len(parts), *args)
        parts += made
        carries.append(carry)
        ends.append(len(parts))
    kept.items[:], kept.values[:], kept.ends[:], kept.parts[:] = (
        items[: len(carries)],
        [start, *carries],
        [0, *ends],
        parts,
    )
    return len(carries)


ENTERED = 3
"""How many places a sequence may enter a kept one at: its first item, or one of the next two
after those before it are walked afresh (a window cutting inside a round keeps the round's
last blocks, whose carry no kept read entered them with)."""


def _run_inside(
    kept: KeptSequence[K, S, P], items: Sequence[K], k: int, carry: S, slots: Sequence[KeptSequence[K, S, P]]
) -> tuple[KeptSequence[K, S, P], int, int] | None:
    """The longest run (`RESUMED_BLOCKS` or more) of `items` from `k` on that another of `slots`
    holds from a place it entered with `carry`: that sequence, the place, and the run's length.
    The latest used are asked first; one whose run could be no longer than the longest found is
    not compared (a window moving along is found in the read before it, compared once)."""
    first, best, at = items[k], RESUMED_BLOCKS - 1, None
    for other in reversed(slots):
        if other is kept:
            continue
        q = other.place(first)
        if q is None or q == 0 or other.values[q] != carry:
            continue
        most = min(len(other.items) - q, len(items) - k)
        if most <= best:
            continue
        shared = same_run(other.items, q, items, k, most)
        if shared > best:
            best, at = shared, (other, q)
    return None if at is None else (at[0], at[1], best)


Closing = tuple[int, Sequence[P]]
"""How `LeadingScan.finished` closes a scan: how many of its parts stay, and the parts after them."""


class ClosedParts(Sequence[P]):
    """The first `keep` of `done`, then `tail`, read in place (`LeadingScan.closed`)."""

    __slots__ = ("_done", "_keep", "_tail")

    def __init__(self, done: Sequence[P], keep: int, tail: Sequence[P]) -> None:
        self._done, self._keep, self._tail = done, keep, tail

    def __len__(self) -> int:
        return self._keep + len(self._tail)

    @overload
    def __getitem__(self, at: int) -> P: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[P]: ...
    def __getitem__(self, at: int | slice) -> P | Sequence[P]:
        if isinstance(at, slice):
            return [self[k] for k in range(*at.indices(len(self)))]
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError(at)
        return self._done[at] if at < self._keep else self._tail[at - self._keep]


@dataclass(slots=True)
class KeptSequence(Generic[K, V, P]):
    """One remembered sequence: its items, the value after each leading run of them
    (`values[i]`: after the first i items: a fold's value, a scan's carry), and for a
    concatenation or a scan the parts, how many the first i items made (`ends[i]`), and their
    tuple."""

    start: InitVar[V]
    items: list[K] = field(default_factory=list)
    values: list[V] = field(init=False)
    parts: list[P] = field(default_factory=list)
    whole: tuple[P, ...] | None = None
    ends: list[int] = field(default_factory=lambda: [0])
    source: tuple[object, ...] | None = None
    made: tuple[P, ...] | None = None
    made_keeps: int = 0
    places: dict[int, int] | None = None  # id(item) -> a place of it, for the first `placed` items
    placed: int = 0

    def __post_init__(self, start: V) -> None:
        self.values = [start]

    def place(self, item: object) -> int | None:
        """Where the very object `item` stands among the items (None: nowhere): among the first
        `_NEAR` by a scan at C speed (a window that moved on begins a little after the last), else
        by an index made when first asked and brought up to the items at every later ask."""
        near = map(operator.is_, self.items[:_NEAR], itertools.repeat(item))
        found = next(itertools.compress(itertools.count(), near), None)
        if found is not None:
            return found
        if self.places is None:
            self.places = {}
        placed, held = self.placed, len(self.items)
        if placed < held:
            self.places.update(zip(map(id, self.items[placed:]), range(placed, held), strict=True))
            self.placed = held
        # an entry may name a place since cut: the object found there must be `item` itself
        at = self.places.get(id(item))
        return at if at is not None and at < len(self.items) and self.items[at] is item else None

    def cut(self, same: int) -> None:
        """Keep the first `same` items only (and no source until brought up again)."""
        self.source = None
        self.placed = min(self.placed, same)
        if same < len(self.items):
            del self.items[same:], self.values[same + 1 :], self.ends[same + 1 :]
            del self.parts[self.ends[-1] :]
            self.whole = None
            self.made_keeps = min(self.made_keeps, len(self.parts))


_NEAR = 16
"""Leading items `KeptSequence.place` scans before it indexes them all."""


def items_of(kept: KeptSequence[K, V, P]) -> Sequence[object]:
    return kept.items


def source_of(kept: KeptSequence[K, V, P]) -> tuple[object, ...] | None:
    return kept.source


def brought_up(
    kept: KeptSequence[K, V, P],
    items: Sequence[object],
    before: tuple[P, ...] | None = None,
    shared: int = 0,
) -> None:
    """`kept` now holds exactly `items`: a tuple is noted as its source (a list may change). Its
    parts made anew begin with the first `shared` of those it held `before` (`GROWN`)."""
    kept.source = items if type(items) is tuple else None
    if before is not None and shared and kept.whole is not None:
        GROWN.note(kept.whole, before, shared)
