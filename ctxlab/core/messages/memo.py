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
  A fold given `rejoin` also resumes past a few items a sequence replaced in a kept one (a
  clearing's copy of a reply), where `rejoin(kept, now, *args)` maps the values kept after them
  to the ones folding from `now` gives: the contract `rejoin` keeps is that whenever it maps
  rather than returning None, folding any items from `now` gives the map of folding them from
  `kept`. `running(items, start, *args)[k]` is the fold of the first `k` items (`[0]` is
  `start`, `[-1]` the whole fold), from the same kept values; a value there is the very object
  of an earlier call's only while the items before it are the very same (a value is made once,
  after the items before it, and dropped with them). `LeadingConcat` and `LeadingScan` keep
  parts the same way: what an item contributes is worked out once while the items before it
  stay. A scan whose step does not read its position (`anywhere`) also resumes inside a kept sequence
  where a run of its items is entered with the carry its first few items, walked afresh from
  the start, end with, and past a few items a copy replaced where the kept item after them is
  entered with the same carry: parts depend only on the carry and the items
  (`ctxlab.core.messages.kept`). `closed` gives `finished`'s parts without copying them, to be
  read before the scan is next asked.
- They keep what they worked out in a `Resumable` (`ctxlab.core.messages.resumable`): a few
  sequences per start, the one a new sequence shares most with resumed. Every memo registers
  there, so `resumable.forget()` drops it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import partial
from typing import Any, Generic, TypeVar

from ctxlab.core.messages.kept import (
    RESUMED_BLOCKS,
    ClosedParts,
    Closing,
    KeptSequence,
    brought_up,
    items_of,
    rejoined_fold,
    rejoined_scan,
    resume_inside,
    source_of,
)
from ctxlab.core.messages.message import GROWN
from ctxlab.core.messages.resumable import Resumable, register

__all__ = [
    "RESUMED_BLOCKS",
    "Closing",
    "IdentityMemo",
    "LeadingConcat",
    "LeadingFold",
    "LeadingScan",
    "weight_of",
]

K = TypeVar("K")
V = TypeVar("V")
P = TypeVar("P")
S = TypeVar("S")


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

    __slots__ = ("_kept", "_rejoin", "_step")

    def __init__(
        self, step: Callable[..., V], rejoin: Callable[..., Callable[[V], V] | None] | None = None
    ) -> None:
        self._step, self._rejoin = step, rejoin
        self._kept = Resumable[tuple[V, tuple[Hashable, ...]], KeptSequence[K, V, None]](
            items_of, source=source_of
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
        kept, same = self._kept.resume((start, args), items, partial(KeptSequence, start))
        if self._rejoin is not None and same < min(len(items), len(kept.items)):
            same = rejoined_fold(kept, items, same, step=self._step, rejoin=self._rejoin, args=args)
        kept.cut(same)
        value = kept.values[-1]
        for item in items[same:]:
            value = self._step(value, item, *args)
            kept.items.append(item)
            kept.values.append(value)
        brought_up(kept, items)
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
        self._kept = Resumable[tuple[Hashable, ...], KeptSequence[K, int, P]](items_of, source=source_of)

    def clear(self) -> None:
        """Drop every remembered sequence."""
        self._kept.clear()

    def __call__(self, items: Sequence[K], *args: Any) -> tuple[P, ...]:
        kept, same = self._kept.resume(args, items, partial(KeptSequence, 0))
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
        brought_up(kept, items, before, shared)
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
    most `ENTERED - 1` items walked afresh, with a run of `RESUMED_BLOCKS` or more items of one,
    entered there with the carry the walk ended with (a window that cut a reply's front at a
    message boundary, or inside a round), then takes that run's parts and carries.
    """

    __slots__ = ("_anywhere", "_kept", "_step")

    def __init__(self, step: Callable[..., tuple[Iterable[P], S]], *, anywhere: bool = False) -> None:
        self._step, self._anywhere = step, anywhere
        self._kept = Resumable[tuple[S, tuple[Hashable, ...]], KeptSequence[K, S, P]](
            items_of, source=source_of
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

    def closed(
        self, items: Sequence[K], start: S, finish: Callable[[S, Sequence[P]], Closing[P]], *args: Any
    ) -> Sequence[P]:
        """`finished`'s parts, not copied: the scan's own (`ClosedParts`), read before the scan is
        next asked, never kept."""
        if len(items) < RESUMED_BLOCKS:
            out, carry = self.walk(items, start, *args)
        else:
            kept, carry = self._scanned(items, start, args)
            out = kept.parts
        return ClosedParts(out, *finish(carry, out))

    def with_carry(self, items: Sequence[K], start: S, *args: Any) -> tuple[tuple[P, ...], S]:
        """The scan's parts and its carry after the last item."""
        kept, carry = self._scanned(items, start, args)
        return self._whole(kept), carry

    def _scanned(
        self, items: Sequence[K], start: S, args: tuple[Any, ...]
    ) -> tuple[KeptSequence[K, S, P], S]:
        """The kept scan, its parts brought up to `items` (the memo's own: not to be kept), and
        its carry after the last item."""
        key = (start, args)
        kept, same = self._kept.resume(key, items, partial(KeptSequence, start))
        if same == len(items) == len(kept.items):
            return kept, kept.values[-1]
        if not same and self._anywhere and len(items) >= RESUMED_BLOCKS:
            same = resume_inside(kept, items, start, self._kept.slots(key), step=self._step, args=args)
        elif self._anywhere and same < min(len(items), len(kept.items)):
            same = rejoined_scan(kept, items, same, step=self._step, args=args)
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
        brought_up(kept, items)
        return kept, carry

    def _whole(self, kept: KeptSequence[K, S, P]) -> tuple[P, ...]:
        """The scan's parts as a tuple, made once while they stay."""
        if kept.whole is None:
            kept.whole = tuple(kept.parts)
            self._made(kept, kept.whole, len(kept.whole))
        return kept.whole

    @staticmethod
    def _made(kept: KeptSequence[K, S, P], made: tuple[P, ...], keeps: int) -> None:
        """`made` begins with the first `keeps` parts of `kept`: noted (`GROWN`) as sharing
        with the tuple made before it as many leading parts as both still hold."""
        before, shared = kept.made, min(kept.made_keeps, keeps)
        if before is not None and shared:
            GROWN.note(made, before, shared)
        kept.made, kept.made_keeps = made, keeps
