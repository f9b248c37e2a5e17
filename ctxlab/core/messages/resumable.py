"""Readings of histories kept for the next history to resume, and the one switch that drops
every kept reading.

Invariants:
- `Resumable` is where the memos of `ctxlab.core.messages.memo` (and other histories' plans and
  views) keep what they worked out: a few per key, and a new history resumes the one it shares
  most leading objects with (`closest`), or starts afresh. Which one it resumes decides what is
  recomputed, never a value. How many leading objects two tuples share is learnt from their
  lineage (`message.GROWN`: every tuple made from another is noted so, the parts a resumed read
  made among them) where it is known, and compared where it is not.
- Everything that keeps values across steps `register`s here (every memo, every `Resumable`,
  what `latest` keeps for the last tuple read, and `GROWN`), so `forget()` drops it all; a run
  calls it when it is released, so no run's objects outlive it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, Protocol, TypeVar

from ctxlab.core.messages.message import GROWN, LINEAGE_WORTH, same_leading

T = TypeVar("T")
H = TypeVar("H", bound=Hashable)


class Resumable(Generic[H, T]):
    """A few things worked out from a history (a fold, a plan, a view), kept per key so that the
    next history resumes the one it shares most with.

    At most `per_key` are kept per key, the last used last, and `keys` keys (past that all are
    forgotten); `held(thing)` is the history a thing was worked out from. `forget()` drops them.
    """

    __slots__ = ("__weakref__", "_held", "_kept", "_keys", "_per_key", "_source")

    def __init__(
        self,
        held: Callable[[T], Sequence[object]],
        keys: int = 16,
        per_key: int = 4,
        source: Callable[[T], tuple[object, ...] | None] | None = None,
    ) -> None:
        self._held, self._keys, self._per_key, self._source = held, keys, per_key, source
        self._kept: dict[H, list[T]] = {}
        register(self)

    def clear(self) -> None:
        """Drop everything kept."""
        self._kept.clear()

    def resume(self, key: H, items: Sequence[object], make: Callable[[], T]) -> tuple[T, int]:
        """The thing kept for `key` that `items` resumes, moved last, and how many leading items
        they share; or a new one from `make` (in place of the least recently used), sharing 0,
        when none shares at least half of its own history."""
        slots = self._kept.get(key)
        if slots is None:
            if len(self._kept) >= self._keys:
                self._kept.clear()
            slots = self._kept[key] = []
        at, same = closest(slots, items, self._held, self._source)
        if at < 0 or 2 * same < len(self._held(slots[at])):
            if len(slots) >= self._per_key:
                del slots[0]
            slots.append(make())
            return slots[-1], 0
        slots.append(slots.pop(at))
        return slots[-1], same

    def slots(self, key: H) -> Sequence[T]:
        """What is kept for `key`, the last used last."""
        return self._kept.get(key, ())


def closest(
    slots: Sequence[T],
    items: Sequence[object],
    held: Callable[[T], Sequence[object]],
    source: Callable[[T], tuple[object, ...] | None] | None = None,
) -> tuple[int, int]:
    """Which of `slots` (each holding the sequence `held(slot)`, the last used last) `items`
    shares the most leading objects with (of those, the shortest, then the latest used), and how
    many it shares; (-1, 0) when there is none.

    The last slot (the one used last) is taken at once when `items` extends it whole: a history
    read at every step mostly grows, and each comparison walks it. When a slot holds exactly
    the tuple `source(slot)` and `items` is known to share at least half of it (`GROWN`: that
    tuple, one grown from it by `Message.appended`, or an edited or resumed copy of a relative),
    the latest used such slot is taken without comparing at all, with what is known shared
    (perhaps less than what is: then a little more is worked out again). Every slot is asked,
    not only the last: a reader may alternate between a growing reply and copies of it that do
    not begin with it (a window that cuts the reply's front), and a comparison walks the reply.
    """
    if source is not None:
        for k in reversed(range(len(slots))):
            origin = source(slots[k])
            if origin is None:
                continue
            known = GROWN.shared(items, origin)
            if known is not None and 2 * known >= len(origin):  # one `Resumable.resume` resumes
                return k, known
    best, same, score = -1, 0, (-1, 0)
    for k in reversed(range(len(slots))):
        kept = held(slots[k])
        shared = same_leading(kept, items)
        if shared == len(kept) and k == len(slots) - 1:
            _learn(items, slots[k], shared, source)
            return k, shared
        if (shared, -len(kept)) > score:  # the most shared; the least to cut; the latest used
            best, same, score = k, shared, (shared, -len(kept))
    if best >= 0:
        _learn(items, slots[best], same, source)
    return best, same


def _learn(
    items: Sequence[object], slot: T, shared: int, source: Callable[[T], tuple[object, ...] | None] | None
) -> None:
    """Note (`GROWN`) what a comparison found `items` to share with the tuple a slot holds, so
    that the next history grown from either is known to share it without comparing (two equal
    histories read in turn, a request and its context, then resume one kept reading)."""
    origin = source(slot) if source is not None else None
    if origin is not None and shared >= LINEAGE_WORTH and type(items) is tuple and items is not origin:
        GROWN.note(items, origin, shared)


class Clearable(Protocol):
    """Anything that keeps values `forget()` must drop."""

    def clear(self) -> None: ...


_MEMOS: weakref.WeakSet[Clearable] = weakref.WeakSet()
_MEMOS.add(GROWN)


def register(kept: Clearable) -> None:
    """Have `forget()` clear `kept` (held weakly: a memo that is gone is not kept alive)."""
    _MEMOS.add(kept)


def forget() -> None:
    """Drop the entries of every memo (their values are made again when next asked for)."""
    for memo in list(_MEMOS):
        memo.clear()
