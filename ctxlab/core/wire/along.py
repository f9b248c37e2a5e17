"""A value for each OpenAI view message of a stored message, kept along a long message that
grows: a reply that gains a round at every call is read again only past what it gained.

Invariants:
- `ViewParts(part)(message)` equals `tuple(part(message, wire, unit) for wire, unit in
  zip(to_openai_one(message), placed_units(message, 0, 0)))` for a pure `part` whose value
  depends only on the view message, the unit and the blocks the unit shows.
- A long message's (`RESUMED_BLOCKS` blocks or more) leading view messages that are the very
  objects of one of the last `KEPT` long messages read come from the same leading blocks, with
  the same units (`openai_one`), so their values are taken from that read (the latest that
  leaves no more than a reply gains, else the one that shares the most); only the rest are made
  (a clearing reads a reply and its edited copy in turn). What the two share is what the
  lineage knows of their view tuples (`GROWN`), compared on past it. The tuple is noted
  (`GROWN`) as sharing those values with that read's, so a fold kept along it (`LeadingFold`)
  resumes without comparing. `forget()` drops the kept reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import GROWN, Message, same_leading
from ctxlab.core.messages.resumable import register
from ctxlab.core.messages.units import ViewUnit, placed_units
from ctxlab.core.wire.views import Wire, openai_one

P = TypeVar("P")

_GAINED = 2
"""Views a reply gains between two reads of it (a call and its result): a kept read that leaves
no more than these to make is taken without comparing the older ones."""


class ViewParts(Generic[P]):
    """`parts(message)`: `part(message, wire, unit)` of each view message (see the invariants)."""

    __slots__ = ("__weakref__", "_part", "_reads")

    KEPT = 4

    def __init__(self, part: Callable[[Message, Wire, ViewUnit], P]) -> None:
        self._part = part
        self.clear()
        register(self)

    def clear(self) -> None:
        """Drop the kept reads."""
        self._reads: list[tuple[tuple[Wire, ...], tuple[P, ...]]] = []

    def __call__(self, message: Message) -> tuple[P, ...]:
        wires, units, part = openai_one(message), placed_units(message, 0, 0), self._part
        if len(message.blocks) < RESUMED_BLOCKS:
            return tuple(map(part, [message] * len(wires), wires, units))
        best, same = None, 0
        for k in reversed(range(len(self._reads))):  # the latest first: one that grew is found at once
            shared = _shared(self._reads[k][0], wires)
            if shared > same:
                best, same = k, shared
                if same >= len(wires) - _GAINED:
                    break
        made = tuple(part(message, wires[i], units[i]) for i in range(same, len(wires)))
        if best is None or not same:
            parts = made
        else:
            kept = self._reads.pop(best)[1]
            parts = kept[:same] + made
            GROWN.note(parts, kept, same)
        self._reads = [*self._reads, (wires, parts)][-self.KEPT :]
        return parts


def _shared(kept: tuple[Wire, ...], wires: tuple[Wire, ...]) -> int:
    """How many leading objects `wires` shares with `kept`: what the lineage knows (`GROWN`),
    then compared on from there."""
    known = GROWN.shared(wires, kept)
    if not known:
        return same_leading(kept, wires)
    end = min(len(kept), len(wires))
    while known < end and kept[known] is wires[known]:  # a few at most: what the reply gained
        known += 1
    return known
