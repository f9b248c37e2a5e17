"""Which of a Google ADK session's compactions survive, and the layout a request takes from
them: the ranges of raw events they hide and where their summaries stand.

Source (`google/adk/`): `flows/llm_flows/context/_compaction.py` (`_get_compaction_ranges`,
`_process_compaction_events`).

Invariants:
- A compaction survives when no other contains it; surviving compactions contain none of each
  other, so sorted by start they are sorted by end.
- What depends on the compactions alone is worked out once per tuple of them (`layout_of`), and
  a tuple that is a laid-out one and a compaction ending past them all is laid on that layout
  (`_laid_on`): the layout is the same as laid out afresh, which a test holds.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.core.messages.memo import IdentityMemo
from ctxlab.core.messages.message import same_leading
from ctxlab.core.messages.resumable import register

if TYPE_CHECKING:
    from ctxlab.presets.google_adk.session import Compacted


def surviving(compactions: Sequence[Compacted]) -> list[int]:
    """Indices of the compactions no other contains (`_get_compaction_ranges`): sorted by start,
    descending end, descending index; each whose end passes every earlier one survives."""
    order = sorted(range(len(compactions)), key=lambda i: (compactions[i].start, -compactions[i].end, -i))
    kept: set[int] = set()
    max_end: int | None = None
    for i in order:
        if max_end is None or compactions[i].end > max_end:
            kept.add(i)
            max_end = compactions[i].end
    return sorted(kept)


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """What a request takes from the compactions alone.

    Attributes:
        hidden: the timestamps the surviving ranges cover, as disjoint inclusive ranges in order.
        summaries: the surviving compactions by end (those of one end in the order appended).
        ends: their ends, in the same order.
        latest: the surviving compaction appended last (None: there are no compactions).
    """

    hidden: tuple[tuple[int, int], ...]
    summaries: tuple[Compacted, ...]
    ends: tuple[int, ...]
    latest: Compacted | None = None


def _lay_out(compactions: tuple[Compacted, ...]) -> Layout:
    kept = surviving(compactions)
    summaries = sorted((compactions[i] for i in kept), key=lambda c: c.end)
    return Layout(
        hidden=merged([(c.start, c.end) for c in summaries if c.start <= c.end]),
        summaries=tuple(summaries),
        ends=tuple(c.end for c in summaries),
        latest=compactions[kept[-1]] if kept else None,
    )


def _laid_on(layout: Layout, new: Compacted) -> Layout | None:
    """The layout of the compactions of `layout` and then `new`, when `new` ends past every one
    of them (a window or token compaction covers the session up to a newer event); else None.

    Surviving compactions contain none of each other, so by start they are also by end, and
    `new`, which ends last, contains exactly those that start at or after it: the survivors are
    those that start before it, a leading run of them, then `new`. Every range dropped so lies
    within `new`'s, so the hidden ranges are the old ones with `new`'s added, which merges the
    trailing ones it overlaps or touches. The cost is a bisection and the copies."""
    if layout.ends and new.end <= layout.ends[-1]:
        return None
    kept = bisect.bisect_left(layout.summaries, new.start, key=_start)
    hidden = layout.hidden
    if new.start <= new.end:
        touched = bisect.bisect_left(hidden, new.start - 1, key=_range_end)
        start = min(new.start, hidden[touched][0]) if touched < len(hidden) else new.start
        hidden = (*hidden[:touched], (start, new.end))
    return Layout(
        hidden=hidden,
        summaries=(*layout.summaries[:kept], new),
        ends=(*layout.ends[:kept], new.end),
        latest=new,
    )


_start = operator.attrgetter("start")
_range_end = operator.itemgetter(1)


class _Layouts:
    """`_lay_out` of a session's compactions, kept by identity (they change only when one is
    appended); the compactions of a layout kept lately and one more are laid on it
    (`_laid_on`) instead of being laid out afresh. `forget()` drops them."""

    __slots__ = ("__weakref__", "_by_id", "_recent")

    RECENT = 4
    """How many layouts are looked at for the one a tuple extends: a request's, and the one the
    worth check lays out with an empty summary added."""

    def __init__(self) -> None:
        self._by_id: IdentityMemo[tuple[Compacted, ...], Layout] = IdentityMemo(self._made)
        self._recent: list[tuple[tuple[Compacted, ...], Layout]] = []
        register(self)

    def clear(self) -> None:
        self._by_id.clear()
        self._recent.clear()

    def __call__(self, compactions: tuple[Compacted, ...]) -> Layout:
        return self._by_id(compactions)

    def _made(self, compactions: tuple[Compacted, ...]) -> Layout:
        layout = None
        for before, kept in reversed(self._recent):
            if len(compactions) == len(before) + 1 and same_leading(before, compactions) == len(before):
                layout = _laid_on(kept, compactions[-1])
                break
        if layout is None:
            layout = _lay_out(compactions)
        self._recent = [*self._recent[1 - self.RECENT :], (compactions, layout)]
        return layout


layout_of = _Layouts()
"""The layout of a session's compactions (`_Layouts`)."""


def merged(ranges: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """The integers of inclusive `ranges` (each start at most its end) as disjoint ranges, in order.

    >>> merged([(5, 6), (1, 3), (2, 4), (8, 9)])
    ((1, 6), (8, 9))
    """
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def latest(compactions: Sequence[Compacted]) -> Compacted | None:
    """The latest surviving compaction in stream order (once per tuple of compactions)."""
    return layout_of(tuple(compactions)).latest
