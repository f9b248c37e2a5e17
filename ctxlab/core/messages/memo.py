"""Values computed from immutable objects, kept by the object's identity.

A run's context is rebuilt at every step from the same message objects, so a function of one
message (its provider form, its size, an edited copy) need be computed once per object, not
once per step. Keying by identity costs one dictionary lookup; an equal but distinct object is
computed afresh, which is never wrong for a pure function.

Invariants:
- `memo(obj, *args)` equals `compute(obj, *args)` for every object and hashable `args`:
  `compute` must be pure and `obj` immutable. The same object and equal `args` give back the
  very value made the first time (so an edited copy is the same object at every step).
- An entry holds its object alive, so its id cannot be reused by another object while the
  entry exists. Entries live in two generations: when the current one's entries weigh `limit`
  it becomes the previous one (the older previous one is dropped), and a value asked for again
  from the previous generation moves back into the current one without being computed. An
  entry weighs one, and one more for every `RESUMED_BLOCKS` blocks of a message it is kept for:
  what is made from a message is as long as the message, and a reply that grows at every call
  is a new message at every call, so a generation holds only its last few versions, not every
  one (which would hold memory in the square of the reply's length). When more than half of a
  full generation came back, the objects in use outweigh the limit, so the limit doubles
  instead: a context of any length is computed once per object, and at most two generations
  are held. `forget()` drops every memo's entries and limits; a run calls it when it is
  released, so no run's objects outlive it.
- `LeadingFold(step)(items, start, *args)` equals folding `step` over `items` from `start`, left
  to right, whatever it folded before: it keeps the running values of the last sequence folded
  from each start, and a sequence that begins with the same objects resumes after them. Each
  value is the one the plain fold computes, so even a float sum is bit for bit the same.
  `running(items, start, *args)[k]` is the fold of the first `k` items (`[0]` is `start`, `[-1]`
  the whole fold), from the same kept values; a value there is the very object of an earlier
  call's only while the items before it are the very same (a value is made once, after the
  items before it, and dropped with them). `LeadingConcat` and `LeadingScan` keep parts the
  same way: what an item contributes is worked out once while the items before it stay. A
  scan whose step does not read its position (`anywhere`) also resumes inside a kept sequence
  where a run of its items is entered with the carry its first few items, walked afresh from
  the start, end with: parts depend only on the carry and the items.
- They keep what they worked out in a `Resumable` (`ctxlab.core.messages.resumable`): a few
  sequences per start, the one a new sequence shares most with resumed. Every memo registers
  there, so `resumable.forget()` drops it.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import InitVar, dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from ctxlab.core.messages.message import GROWN, same_run
from ctxlab.core.messages.resumable import Resumable, register

K = TypeVar("K")
V = TypeVar("V")
P = TypeVar("P")
S = TypeVar("S")


RESUMED_BLOCKS = 16
"""A message this long is read by resuming an earlier read of the blocks it begins with (a reply
grows by a round at every call); a shorter one is read whole, cheaper than looking for one."""


class IdentityMemo(Generic[K, V]):
    """`compute` remembered per object and arguments (see the module invariants)."""

    __slots__ = (
        "__weakref__",
        "_compute",
        "_first_limit",
        "_held",
        "_kept",
        "_limit",
        "_previous",
        "_revived",
    )

    def __init__(self, compute: Callable[..., V], limit: int = 8192) -> None:
        self._compute = compute
        self._kept: dict[tuple[int, tuple[Hashable, ...]], tuple[K, V, int]] = {}
        self._previous: dict[tuple[int, tuple[Hashable, ...]], tuple[K, V, int]] = {}
        self._first_limit = self._limit = max(limit, 1)
        self._held = self._revived = 0  # the weights of the current generation, of what came back
        register(self)

    def clear(self) -> None:
        """Drop every entry, and the limit grown since the memo was made."""
        self._kept, self._previous = {}, {}
        self._limit, self._held, self._revived = self._first_limit, 0, 0

    def __len__(self) -> int:
        return len(self._kept)

    def __call__(self, obj: K, *args: Any) -> V:
        key = (id(obj), args)
        kept = self._kept.get(key)
        if kept is not None and kept[0] is obj:
            return kept[1]
        kept = self._previous.get(key)
        if kept is not None and kept[0] is obj:
            value, weight = kept[1], kept[2]
            self._revived += weight
        else:
            value, weight = self._compute(obj, *args), weight_of(obj)
        if self._held >= self._limit:
            self._make_room()
        self._kept[key] = (obj, value, weight)
        self._held += weight
        return value

    def _make_room(self) -> None:
        """Start a new generation, or double the limit when the objects in use outgrew it."""
        if 2 * self._revived > self._limit:
            self._limit *= 2
        else:
            self._kept, self._previous, self._held = {}, self._kept, 0
        self._revived = 0


def weight_of(obj: object) -> int:
    """How much of an `IdentityMemo`'s limit an entry kept for `obj` takes: one, and one more
    for every `RESUMED_BLOCKS` blocks when `obj` is a message (or anything holding a tuple of
    blocks).

    >>> from ctxlab.core.messages.message import text_message
    >>> weight_of(text_message("user", "hi")), weight_of("hi")
    (1, 1)
    """
    blocks = getattr(obj, "blocks", None)
    return 1 + len(blocks) // RESUMED_BLOCKS if type(blocks) is tuple else 1


class LeadingFold(Generic[K, V]):
    """A left fold remembered for the sequences it last folded (see the module invariants).

    A history mostly grows at its end, so a function that sums over the whole history at every
    step costs what the history gained, not its length. A few sequences are kept per start, as
    a step may fold a history and an edited copy of it in turn: a sequence resumes the kept one
    it shares most with when it shares at least half of it, and is kept beside them otherwise.
    """

    __slots__ = ("_kept", "_step")

    def __init__(self, step: Callable[..., V]) -> None:
        self._step = step
        self._kept = Resumable[tuple[V, tuple[Hashable, ...]], _Sequence[K, V, None]](
            _items_of, source=_source_of
        )

    def clear(self) -> None:
        """Drop every remembered sequence."""
        self._kept.clear()

    def __call__(self, items: Sequence[K], start: V, *args: Any) -> V:
        return self._values(items, start, args)[-1]

    def running(self, items: Sequence[K], start: V, *args: Any) -> tuple[V, ...]:
        """The fold of each leading part of `items`: `[k]` folds the first `k` items."""
        return tuple(self._values(items, start, args))

    def folds_at(self, items: Sequence[K], start: V, i: int, j: int, *args: Any) -> tuple[V, V]:
        """The folds of the first `i` and the first `j` items: `running(...)[i]` and `[j]`,
        without copying the running values."""
        values = self._values(items, start, args)
        return values[i], values[j]

    def _values(self, items: Sequence[K], start: V, args: tuple[Any, ...]) -> list[V]:
        """The kept running values, brought up to `items` (the memo's own list: not to be kept)."""
        kept, same = self._kept.resume((start, args), items, partial(_Sequence, start))
        kept.cut(same)
        value = kept.values[-1]
        for item in items[same:]:
            value = self._step(value, item, *args)
            kept.items.append(item)
            kept.values.append(value)
        _brought_up(kept, items)
        return kept.values


class LeadingConcat(Generic[K, P]):
    """The parts of every item of a sequence, in order, remembered for the sequences it last
    joined: `concat(items, *args)` equals `tuple(part for at, item in enumerate(items) for part
    in parts(item, at, before, *args))`, `before` the number of parts ahead of the item.

    A sequence that begins with the same objects as a kept one reuses their parts (the same
    item at the same place, with as many parts before it, has the same parts), so a view of the
    whole history costs the parts of what changed and a copy at C speed; a sequence joined
    again unchanged gives back the very tuple it gave before.
    """

    __slots__ = ("_kept", "_parts")

    def __init__(self, parts: Callable[..., Iterable[P]]) -> None:
        self._parts = parts
        self._kept = Resumable[tuple[Hashable, ...], _Sequence[K, int, P]](_items_of, source=_source_of)

    def clear(self) -> None:
        """Drop every remembered sequence."""
        self._kept.clear()

    def __call__(self, items: Sequence[K], *args: Any) -> tuple[P, ...]:
        kept, same = self._kept.resume(args, items, partial(_Sequence, 0))
        if same == len(items) == len(kept.items) and kept.whole is not None:
            return kept.whole
        before = kept.whole
        kept.cut(same)
        shared = len(kept.parts)
        for at in range(same, len(items)):
            item = items[at]
            kept.parts.extend(self._parts(item, at, len(kept.parts), *args))
            kept.items.append(item)
            kept.ends.append(len(kept.parts))
        kept.whole = tuple(kept.parts)
        _brought_up(kept, items, before, shared)
        return kept.whole


class LeadingScan(Generic[K, S, P]):
    """`LeadingConcat` for parts that depend on what came before: `scan(items, start, *args)`
    equals walking `items` with `step(carry, item, before, *args) -> (parts, carry)` from
    `start`, joining the parts (`before` is the number of parts ahead of the item).

    The parts and the carry after every item of the sequences last scanned are kept, so a
    sequence that begins with the same objects resumes after them.

    A scan whose step never reads `before` (`anywhere`) gives a run of items the same parts
    wherever the run stands, once the carry ahead of it is the same. A long sequence
    (`RESUMED_BLOCKS`) that shares no leading objects with a kept one, but goes on, after at
    most `_ENTERED - 1` items walked afresh, with a run of `RESUMED_BLOCKS` or more items of one,
    entered there with the carry the walk ended with (a window that cut a reply's front at a
    message boundary, or inside a round), then takes that run's parts and carries.
    """

    __slots__ = ("_anywhere", "_kept", "_step")

    def __init__(self, step: Callable[..., tuple[Iterable[P], S]], *, anywhere: bool = False) -> None:
        self._step, self._anywhere = step, anywhere
        self._kept = Resumable[tuple[S, tuple[Hashable, ...]], _Sequence[K, S, P]](
            _items_of, source=_source_of
        )

    def clear(self) -> None:
        """Drop every remembered sequence."""
        self._kept.clear()

    def __call__(self, items: Sequence[K], start: S, *args: Any) -> tuple[P, ...]:
        return self.with_carry(items, start, *args)[0]

    def walk(self, items: Sequence[K], start: S, *args: Any) -> tuple[list[P], S]:
        """The scan's parts (a new list) and its carry after the last item; a sequence shorter
        than `RESUMED_BLOCKS` is walked afresh and nothing is kept for it."""
        if len(items) >= RESUMED_BLOCKS:
            done, carry = self.with_carry(items, start, *args)
            return list(done), carry
        out: list[P] = []
        carry, step = start, self._step
        for item in items:
            parts, carry = step(carry, item, len(out), *args)
            if parts:
                out += parts
        return out, carry

    def finished(
        self, items: Sequence[K], start: S, finish: Callable[[S, Sequence[P]], Closing[P]], *args: Any
    ) -> tuple[P, ...]:
        """The scan's parts closed by `finish(carry, parts)` (the carry after the last item, the
        scan's parts: not to be changed), which says how many of them to keep and what follows
        them (the parts the carry still holds open; a last part that takes in what came after
        it), as one tuple.

        A long sequence's (`RESUMED_BLOCKS`) is made in one copy of its parts, and noted
        (`GROWN`) as beginning with the parts of the tuple the read it resumed made: a reader
        that kept that tuple finds what the two share at once."""
        if len(items) < RESUMED_BLOCKS:
            out, carry = self.walk(items, start, *args)
            keep, tail = finish(carry, out)
            del out[keep:]
            out += tail
            return tuple(out)
        kept, carry = self._scanned(items, start, args)
        keep, tail = finish(carry, kept.parts)
        out = kept.parts
        if keep == len(out) and not tail:
            return self._whole(kept)
        dropped = out[keep:]
        del out[keep:]
        out += tail
        closed = tuple(out)
        del out[keep:]
        out += dropped
        self._made(kept, closed, keep)
        return closed

    def with_carry(self, items: Sequence[K], start: S, *args: Any) -> tuple[tuple[P, ...], S]:
        """The scan's parts and its carry after the last item."""
        kept, carry = self._scanned(items, start, args)
        return self._whole(kept), carry

    def _scanned(self, items: Sequence[K], start: S, args: tuple[Any, ...]) -> tuple[_Sequence[K, S, P], S]:
        """The kept scan, its parts brought up to `items` (the memo's own: not to be kept), and
        its carry after the last item."""
        key = (start, args)
        kept, same = self._kept.resume(key, items, partial(_Sequence, start))
        if same == len(items) == len(kept.items):
            return kept, kept.values[-1]
        if not same and self._anywhere and len(items) >= RESUMED_BLOCKS:
            same = _resume_inside(kept, items, start, self._kept.slots(key), step=self._step, args=args)
        kept.cut(same)
        step, out, held, carries, ends = self._step, kept.parts, kept.items, kept.values, kept.ends
        carry = carries[-1]
        for item in items[same:]:
            parts, carry = step(carry, item, len(out), *args)
            if parts:
                out += parts
            held.append(item)
            carries.append(carry)
            ends.append(len(out))
        kept.whole = None
        _brought_up(kept, items)
        return kept, carry

    def _whole(self, kept: _Sequence[K, S, P]) -> tuple[P, ...]:
        """The scan's parts as a tuple, made once while they stay."""
        if kept.whole is None:
            kept.whole = tuple(kept.parts)
            self._made(kept, kept.whole, len(kept.whole))
        return kept.whole

    @staticmethod
    def _made(kept: _Sequence[K, S, P], made: tuple[P, ...], keeps: int) -> None:
        """`made` begins with the first `keeps` parts of `kept`: noted (`GROWN`) as sharing
        with the tuple made before it as many leading parts as both still hold."""
        before, shared = kept.made, min(kept.made_keeps, keeps)
        if before is not None and shared:
            GROWN.note(made, before, shared)
        kept.made, kept.made_keeps = made, keeps


def _resume_inside(
    kept: _Sequence[K, S, P],
    items: Sequence[K],
    start: S,
    slots: Sequence[_Sequence[K, S, P]],
    *,
    step: Callable[..., tuple[Iterable[P], S]],
    args: tuple[Any, ...],
) -> int:
    """Fill the empty `kept` with the first `k < _ENTERED` items walked afresh from `start` by
    `step` (given `args`), then the longest run (`RESUMED_BLOCKS` or more) that `items` goes on with inside
    another of `slots`, entered there with the carry the walk ended with (the fewest items
    walked first); how many items it holds (none found: the items walked, `_ENTERED` or all)."""
    carry, parts, carries, ends = start, list[P](), list[S](), list[int]()
    for k in range(min(_ENTERED, len(items))):
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


_ENTERED = 3
"""How many places a sequence may enter a kept one at: its first item, or one of the next two
after those before it are walked afresh (a window cutting inside a round keeps the round's
last blocks, whose carry no kept read entered them with)."""


def _run_inside(
    kept: _Sequence[K, S, P], items: Sequence[K], k: int, carry: S, slots: Sequence[_Sequence[K, S, P]]
) -> tuple[_Sequence[K, S, P], int, int] | None:
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


@dataclass(slots=True)
class _Sequence(Generic[K, V, P]):
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
"""Leading items `_Sequence.place` scans before it indexes them all."""


def _items_of(kept: _Sequence[K, V, P]) -> Sequence[object]:
    return kept.items


def _source_of(kept: _Sequence[K, V, P]) -> tuple[object, ...] | None:
    return kept.source


def _brought_up(
    kept: _Sequence[K, V, P],
    items: Sequence[object],
    before: tuple[P, ...] | None = None,
    shared: int = 0,
) -> None:
    """`kept` now holds exactly `items`: a tuple is noted as its source (a list may change). Its
    parts made anew begin with the first `shared` of those it held `before` (`GROWN`)."""
    kept.source = items if type(items) is tuple else None
    if before is not None and shared and kept.whole is not None:
        GROWN.note(kept.whole, before, shared)


class MappedAlong(Generic[K]):
    """`tuple(one(item, *args) for item in items)`, or `items` itself when every item maps to
    itself: each item's value kept by identity (`IdentityMemo`) and a sequence's values kept
    along it (`LeadingConcat`), so a sequence that grew costs what it gained. The form a
    framework sends a stored message in, message by message, is one.
    """

    __slots__ = ("_along", "_one")

    def __init__(self, one: Callable[..., K]) -> None:
        self._one = IdentityMemo[K, K](one)
        self._along = LeadingConcat[K, K](lambda item, _at, _before, *args: (self._one(item, *args),))

    def __call__(self, items: tuple[K, ...], *args: Any) -> tuple[K, ...]:
        mapped = self._along(items, *args)
        return items if all(map(operator.is_, mapped, items)) else mapped
