"""Values kept for the last tuple read, carried along its lineage (`message.GROWN`).

A reply grows by a round at every call, and a request-only edit makes a new copy of it each
time; what is read off such a tuple is kept for the last one only, and the next one keeps what
its lineage (or a comparison at C speed) vouches for and reads the rest.

Invariants:
- `Running(make)(items)` equals a fresh accumulator fed every item of `items`; `Replaced(key)`
  (original, copy) equals the keys of the items the copy replaced; `Indexed()(pairs)` equals
  `dict(pairs)`; `Unseen()(keys, before)` says whether `keys` holds one `before` does not;
  `Distinct()(keys)` equals `set(keys)` when no key repeats, else None;
  `Picked()(table, indices)` equals `tuple(table[i] for i in indices)`; `Front()(stop, spared)`
  equals `tuple(i for i in range(stop) if i not in spared)`; `Joined()(head, tail)` equals
  `(*head, *tail)` and its `rest(items, start)` `items[start:]`; `Leading()(items, count)`
  equals `items[:count]`. Each equals a reading from scratch
  whatever was read before.
- Each registers with `resumable.forget()`, so no run's objects outlive the run.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeVar, cast

from ctxlab.core.messages.message import GROWN, LINEAGE_WORTH
from ctxlab.core.messages.resumable import register

T = TypeVar("T")
V = TypeVar("V")
H = TypeVar("H", bound=Hashable)
V_co = TypeVar("V_co", covariant=True)


class Accumulator(Protocol[V_co]):
    """What `Running` carries along a growing tuple: it takes items one at a time, in order."""

    def take(self, item: Any) -> None: ...

    def value(self) -> V_co: ...


class Running(Generic[V]):
    """`running(items)` equals `make()` fed every item of the block tuple `items`, then read
    (`value()`, which must not share the accumulator's mutable state).

    One accumulator is kept, for the last tuple read; a tuple `Message.appended` grew from it
    (`GROWN`) takes it over and feeds it only the new items, so a reply that grows by a round at
    every call costs its new blocks. Any other tuple is read afresh (and the tuple it replaces
    can no longer be resumed). `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_items", "_kept", "_make")

    def __init__(self, make: Callable[[], Accumulator[V]]) -> None:
        self._make = make
        self._items: tuple[object, ...] | None = None
        self._kept: Accumulator[V] | None = None
        register(self)

    def clear(self) -> None:
        """Drop the kept accumulator."""
        self._items = self._kept = None

    def __call__(self, items: tuple[object, ...]) -> V:
        kept = self._kept
        if kept is None or self._items is None or not GROWN.extends(items, self._items):
            kept, start = self._make(), 0
        else:
            start = len(self._items)
        for item in items[start:]:
            kept.take(item)
        self._items, self._kept = items, kept
        return kept.value()


class Replaced(Generic[V]):
    """`replaced(original, copy)` equals `tuple(key(o) for o, c in zip(original, copy) if c is
    not o)`: what an edited copy of a tuple replaced (`copy` is as long as `original`).

    The pair last read is kept with where its replacements stand; a pair whose copy and original
    are each known (`GROWN`) to share leading objects with the kept ones keeps the replacements
    before the shorter of the two shares and compares only the rest. `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_at", "_copy", "_key", "_keys", "_original")

    def __init__(self, key: Callable[[Any], V]) -> None:
        self._key = key
        self._original: tuple[object, ...] = ()
        self._copy: tuple[object, ...] = ()
        self._at: list[int] = []
        self._keys: list[V] = []
        register(self)

    def clear(self) -> None:
        """Drop the kept pair."""
        self._original, self._copy, self._at, self._keys = (), (), [], []

    def __call__(self, original: tuple[object, ...], copy: tuple[object, ...]) -> tuple[V, ...]:
        same = 0
        if self._copy:
            copied, kept = GROWN.shared(copy, self._copy), GROWN.shared(original, self._original)
            if copied is not None and kept is not None:
                same = min(copied, kept)
        held = bisect.bisect_left(self._at, same)
        at, keys = self._at[:held], self._keys[:held]
        for i in range(same, len(original)):
            if copy[i] is not original[i]:
                at.append(i)
                keys.append(self._key(original[i]))
        self._original, self._copy, self._at, self._keys = original, copy, at, keys
        return tuple(keys)


class Indexed(Generic[H, V]):
    """`indexed(pairs)` equals `dict(pairs)` (a later pair of the same key wins), read-only.

    One dictionary is kept, for the last tuple read; a tuple that begins with pairs equal to
    that one's (the very same objects as far as `GROWN` knows, the rest compared as tuples are,
    each object first by identity) extends it in place with its new pairs, so a history's index
    costs what the history gained and a comparison at C speed. Its values may so be equal
    objects read earlier, not the very ones of `pairs`. The mapping given back is valid until
    the next call, which may extend it: not to be kept. Any other tuple gets a new dictionary.
    `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_index", "_pairs")

    def __init__(self) -> None:
        self._pairs: tuple[tuple[H, V], ...] = ()
        self._index: dict[H, V] = {}
        register(self)

    def clear(self) -> None:
        """Drop the kept dictionary."""
        self._pairs, self._index = (), {}

    def __call__(self, pairs: tuple[tuple[H, V], ...]) -> Mapping[H, V]:
        kept = self._pairs
        known = (GROWN.shared(pairs, kept) or 0) if kept else 0
        if kept and pairs[known : len(kept)] == kept[known:]:
            self._index.update(pairs[len(kept) :])
        else:
            self._index = dict(pairs)
        self._pairs = pairs
        return MappingProxyType(self._index)


class Unseen(Generic[H]):
    """`unseen(keys, before)` equals `not set(before).issuperset(keys)`: whether `keys` holds a
    key `before` does not (what a request-only edit clears that the last request did not show).

    The set of the last `keys` read is kept; when `before` is that very tuple and `keys` a tuple
    noted (`GROWN`) to begin with it, only the keys past it are looked up and added, so a
    clearing that clears one more result a call costs that one. `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_keys", "_set")

    def __init__(self) -> None:
        self._keys: Collection[H] | None = None
        self._set: set[H] = set()
        register(self)

    def clear(self) -> None:
        """Drop the kept set."""
        self._keys, self._set = None, set()

    def __call__(self, keys: Collection[H], before: Collection[H]) -> bool:
        if keys is before:
            return False
        held = self._set if before is self._keys else None
        if held is not None and type(keys) is tuple and type(before) is tuple and GROWN.extends(keys, before):
            extra = keys[len(before) :]
            found = not held.issuperset(extra)
            held.update(extra)
        else:
            found = not (set(before) if held is None else held).issuperset(keys)
            self._set = set(keys)
        self._keys = keys
        return found


class Distinct(Generic[H]):
    """`distinct(keys)` equals `set(keys)` when no key of `keys` repeats, else None: a set to read
    at once, not to keep or change (the next call may change it).

    The set of the last `keys` read is kept; when `keys` is a tuple noted (`GROWN`) to begin with
    that one, only the keys past it are added, so an old part of a history that grows by a turn
    costs that turn's keys. `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_distinct", "_keys", "_set")

    def __init__(self) -> None:
        self._keys: tuple[H, ...] | None = None
        self._set: set[H] = set()
        self._distinct = True
        register(self)

    def clear(self) -> None:
        """Drop the kept set."""
        self._keys, self._set, self._distinct = None, set(), True

    def __call__(self, keys: tuple[H, ...]) -> set[H] | None:
        last = self._keys
        if keys is not last:
            if last is not None and GROWN.extends(keys, last):
                if self._distinct:  # a repeat stays in every tuple that begins with it
                    size = len(self._set)
                    self._set.update(keys[len(last) :])
                    self._distinct = len(self._set) == size + len(keys) - len(last)
            else:
                self._set = set(keys)
                self._distinct = len(self._set) == len(keys)
            self._keys = keys
        return self._set if self._distinct else None


class Picked(Generic[T]):
    """`picked(table, indices)` equals `tuple(table[i] for i in indices)`.

    The last pick is kept: when `indices` begins with its indices and `table` with the items they
    reached (the very objects: `GROWN`, else compared at C speed), the pick is the last one
    extended by the items of the new indices, and noted (`GROWN`) as beginning with it. A window
    that drops a little more of a growing history at every call names what it dropped at the
    cost of what it dropped anew, and `Unseen` reads only the new names. `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_last")

    def __init__(self) -> None:
        self._last: tuple[Sequence[T], tuple[int, ...], tuple[T, ...], int] | None = None
        register(self)

    def clear(self) -> None:
        """Drop the kept pick."""
        self._last = None

    def __call__(self, table: Sequence[T], indices: tuple[int, ...]) -> tuple[T, ...]:
        last = self._last
        if last is not None:
            before, picked_at, picked, reach = last
            n = len(picked_at)
            # the indices begin with the last ones: known from their lineage (`Front`) or compared
            if (GROWN.extends(indices, picked_at) or indices[:n] == picked_at) and _begins_alike(
                table, before, reach
            ):
                if len(indices) > n:
                    grown = picked + tuple(map(table.__getitem__, indices[n:]))
                    GROWN.note(grown, picked, n)
                    picked = grown
                self._last = (table, indices, picked, max(reach, max(indices[n:], default=-1) + 1))
                return picked
        picked = tuple(map(table.__getitem__, indices))
        self._last = (table, indices, picked, max(indices, default=-1) + 1)
        return picked


class Front:
    """`front(stop, spared)` equals `tuple(i for i in range(stop) if i not in spared)` (`spared`
    rising): the places a window dropped, before `stop`, but those it spared.

    The last answer is kept: when `spared` is the same and `stop` has not moved back, the answer
    is the last one extended by the places between the two stops (the spared ones all stand
    before the last stop), noted (`GROWN`) as beginning with it, so a window that drops a little
    more of a growing history at every call makes only the new places, and `Picked` finds the
    old ones without comparing. `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_last")

    def __init__(self) -> None:
        self._last: tuple[tuple[int, ...], int, tuple[int, ...]] | None = None
        register(self)

    def clear(self) -> None:
        """Drop the kept answer."""
        self._last = None

    def __call__(self, stop: int, spared: Sequence[int]) -> tuple[int, ...]:
        spared = tuple(spared)
        last = self._last
        if last is not None and last[0] == spared and last[1] <= stop:
            before = last[2]
            if last[1] == stop:
                return before
            places = before + tuple(range(last[1], stop))
            GROWN.note(places, before)
        else:
            gaps = itertools.pairwise((-1, *spared, stop))
            places = tuple(itertools.chain.from_iterable(range(low + 1, high) for low, high in gaps))
        self._last = (spared, stop, places)
        return places


class Leading:
    """`leading(items, count)` equals `items[:count]`: the part of a history before a place (the
    turns before the current one, before the recent ones).

    The last part is kept: when `count` is the same and `items` is known (`GROWN`) to begin with
    the first `count` objects of the last history, the very same part is given back, so a reader
    that kept its work on it finds it unchanged at once, however long it is. A new part is noted
    as beginning with the last part (a new turn) where the history is known to have kept it; or,
    made `beside_history`, as the beginning of the history it was cut from, which relates it
    along the histories' lineage both to the last part and to the whole histories that the same
    readers are given in turn (each then resumes from the other). `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_beside", "_last")

    def __init__(self, *, beside_history: bool = False) -> None:
        self._last: tuple[tuple[object, ...], int, tuple[object, ...]] | None = None
        self._beside = beside_history
        register(self)

    def clear(self) -> None:
        """Drop the kept part."""
        self._last = None

    def __call__(self, items: tuple[T, ...], count: int) -> tuple[T, ...]:
        last = self._last
        shared = 0
        if last is not None and len(items) >= LINEAGE_WORTH:
            shared = len(last[0]) if items is last[0] else GROWN.shared(items, last[0]) or 0
            if count == last[1] <= shared:
                self._last = (items, count, last[2])  # the newest history, nearest the next one
                return cast(tuple[T, ...], last[2])
        part = items[:count]
        if len(part) >= LINEAGE_WORTH and self._beside and part is not items:
            GROWN.note(part, items, len(part))
        elif last is not None and len(part) >= LINEAGE_WORTH and last[1] <= min(shared, count):
            GROWN.note(part, last[2])
        self._last = (items, count, part)
        return part


class Joined:
    """`joined(head, tail)` equals `(*head, *tail)` (`tail` itself when `head` is empty and
    `tail` a tuple): a request, its fixed messages before its context.

    The last join is kept: when `head` holds the very objects of the last one and `tail` is known
    (`GROWN`) to begin with objects of the last tail, the join is noted as beginning with the
    head and those of the last join, so a meter that kept the last request resumes the next one
    without comparing them: a long history costs what it gained. `forget()` drops it.
    """

    __slots__ = ("__weakref__", "_last")

    def __init__(self) -> None:
        self._last: tuple[tuple[object, ...], tuple[object, ...], tuple[object, ...]] | None = None
        register(self)

    def clear(self) -> None:
        """Drop the kept join."""
        self._last = None

    def __call__(self, head: tuple[T, ...], tail: Sequence[T]) -> tuple[T, ...]:
        if not head and type(tail) is tuple:
            return tail
        # concatenated, a long history is copied once (unpacking copies it twice, via a list)
        made = head + tail if type(tail) is tuple else (*head, *tail)
        last = self._last
        if len(made) < LINEAGE_WORTH:
            last = None  # a short request is compared, not noted
        if last is not None and len(last[0]) == len(head) and all(map(operator.is_, last[0], head)):
            shared = GROWN.shared(tail, last[1])
            if shared:
                GROWN.note(made, last[2], len(head) + shared)
        self._last = (head, tuple(tail), made)
        return made

    def rest(self, items: tuple[T, ...], start: int) -> tuple[T, ...]:
        """`items[start:]`: the very tail of the last join when `items` is that join and `start`
        the length of its head (a request without its fixed messages is the context it was
        joined from, which every reader of that context has kept), else a new slice."""
        last = self._last
        if last is not None and items is last[2] and start == len(last[0]):
            return cast(tuple[T, ...], last[1])
        return items[start:]


REQUESTS = Joined()
"""The reasoning requests the engine sends: fixed messages, then the context. A family that
counts a request without its system message reads it back with `REQUESTS.rest`."""


def _begins_alike(table: Sequence[object], before: Sequence[object], reach: int) -> bool:
    """Whether the first `reach` items of `table` are those of `before`."""
    if table is before:
        return True
    if len(table) < reach:
        return False
    if type(table) is tuple and type(before) is tuple and (GROWN.shared(table, before) or 0) >= reach:
        return True
    return table[:reach] == before[:reach]
