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
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

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


_MEMOS: weakref.WeakSet[IdentityMemo[Any, Any]] = weakref.WeakSet()


def forget() -> None:
    """Drop the entries of every memo (their values are made again when next asked for)."""
    for memo in list(_MEMOS):
        memo.clear()
