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
  entry exists. At most `limit` entries are held: past that, every entry is dropped (a context
  of more stored messages than that is recomputed each time, as without the memo). `forget()`
  drops every memo's entries; a run calls it when it is released, so no run's objects outlive it.
- `LeadingFold(step)(items, start, *args)` equals folding `step` over `items` from `start`, left
  to right, whatever it folded before: it keeps the running values of the last sequence folded
  from each start, and a sequence that begins with the same objects resumes after them. Each
  value is the one the plain fold computes, so even a float sum is bit for bit the same.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from ctxlab.core.messages.message import same_leading

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """`compute` remembered per object and arguments (see the module invariants)."""

    __slots__ = ("__weakref__", "_compute", "_kept", "_limit")

    def __init__(self, compute: Callable[..., V], limit: int = 8192) -> None:
        self._compute = compute
        self._kept: dict[tuple[int, tuple[Hashable, ...]], tuple[K, V]] = {}
        self._limit = limit
        _MEMOS.add(self)

    def clear(self) -> None:
        """Drop every entry."""
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)

    def __call__(self, obj: K, *args: Any) -> V:
        key = (id(obj), args)
        kept = self._kept.get(key)
        if kept is not None and kept[0] is obj:
            return kept[1]
        if len(self._kept) >= self._limit:
            self._kept.clear()
        value = self._compute(obj, *args)
        self._kept[key] = (obj, value)
        return value


class LeadingFold(Generic[K, V]):
    """A left fold remembered for the sequences it last folded (see the module invariants).

    A history mostly grows at its end, so a function that sums over the whole history at every
    step costs what the history gained, not its length. A few sequences are kept per start, as
    a step may fold a history and an edited copy of it in turn: a sequence resumes the kept one
    it shares most with when it shares at least half of it, and is kept beside them otherwise.
    """

    __slots__ = ("__weakref__", "_kept", "_step")

    def __init__(self, step: Callable[..., V]) -> None:
        self._step = step
        self._kept: dict[tuple[V, tuple[Hashable, ...]], list[tuple[list[K], list[V]]]] = {}
        _MEMOS.add(self)

    def clear(self) -> None:
        """Drop every remembered sequence."""
        self._kept.clear()

    def __call__(self, items: Sequence[K], start: V, *args: Any) -> V:
        key = (start, args)
        slots = self._kept.get(key)
        if slots is None:
            if len(self._kept) >= _FOLDS_KEPT:
                self._kept.clear()
            slots = self._kept[key] = []
        folded, values, same = _resumed(slots, items, start)
        del folded[same:], values[same + 1 :]
        value = values[-1]
        for item in items[same:]:
            value = self._step(value, item, *args)
            folded.append(item)
            values.append(value)
        return value


def _resumed(
    slots: list[tuple[list[K], list[V]]], items: Sequence[K], start: V
) -> tuple[list[K], list[V], int]:
    """The kept sequence `items` resumes, and how many leading items they share; the slot used
    moves last, and a new one (in place of the least recently used) when none is close."""
    best, same = -1, 0
    for k, (folded, _) in enumerate(slots):
        shared = same_leading(folded, items)
        if shared > same:
            best, same = k, shared
    if best < 0 or 2 * same < len(slots[best][0]):
        if len(slots) >= _SEQUENCES_KEPT:
            del slots[0]
        slots.append(([], [start]))
        return (*slots[-1], 0)
    slots.append(slots.pop(best))
    return (*slots[-1], same)


_FOLDS_KEPT = 16
"""Starts (and arguments) a fold keeps sequences for; past that it forgets them all."""
_SEQUENCES_KEPT = 4
"""Sequences a fold keeps for one start."""


class _Clearable(Protocol):
    def clear(self) -> None: ...


_MEMOS: weakref.WeakSet[_Clearable] = weakref.WeakSet()


def forget() -> None:
    """Drop the entries of every memo (their values are made again when next asked for)."""
    for memo in list(_MEMOS):
        memo.clear()
