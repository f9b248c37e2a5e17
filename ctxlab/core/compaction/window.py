"""A protocol-blind sliding window: drop the oldest view messages until the request fits.

Source: `trim_messages(strategy="last")` without `start_on="human"` (langchain #33245). It can
orphan a tool result, and the lab's checks must catch it: it is a baseline, not a strategy to use.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from ctxlab.core.messages.blocks import ZERO, Tally
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
    unit_tallies,
)
from ctxlab.core.messages.units import (
    drop_units,
    view_units,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SlidingWindowParams:
    """A protocol-blind window: drop view messages from the front while over `max_tokens`.

    Attributes:
        max_tokens: the request budget.
        keep_system: never drop system view messages.
        min_messages: never keep fewer view messages than this.
    """

    max_tokens: int = 8192
    keep_system: bool = True
    min_messages: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Window:
    """The context after the window: `dropped` view indices, and the request's tokens."""

    messages: tuple[Message, ...]
    dropped: tuple[int, ...]
    tokens: int


def slide_window(
    messages: Sequence[Message], *, sizer: Sizer, params: SlidingWindowParams = SlidingWindowParams()
) -> Window:
    """Drop view messages from the front, blind to calls and results, down to `max_tokens`.

    Walking from the front, each droppable unit (any but a kept system message) is dropped until
    the request fits or only `min_messages` would be left. Both stops only ever start to hold
    further along (a counter's tokens never grow as the context shrinks), so the first place
    the walk stops is found by bisection over running sizes, not by counting at every unit.
    """
    units = view_units(messages)
    sizes = unit_tallies(messages, sizer.counter)
    if params.keep_system:
        droppable = [unit.kind != "system" for unit in units]
        sizes = tuple(size if d else ZERO for size, d in zip(sizes, droppable, strict=True))
    else:
        droppable = [True] * len(units)
    unit_bytes, unit_data = zip(*sizes, strict=True) if sizes else ((), ())
    nbytes, ndata = list(accumulate(unit_bytes, initial=0)), list(accumulate(unit_data, initial=0))
    count = list(accumulate(droppable, initial=0))
    whole = sizer.size(messages)

    def stops(at: int) -> bool:
        left = Tally(whole.nbytes - nbytes[at], whole.ndata - ndata[at])
        return sizer.tokens(left) <= params.max_tokens or len(units) - count[at] <= params.min_messages

    stop = bisect_left(range(len(units)), True, key=stops)
    dropped = tuple(unit.index for unit, d in zip(units[:stop], droppable, strict=False) if d)
    kept = drop_units(messages, units, dropped)
    return Window(messages=kept, dropped=dropped, tokens=sizer.count(kept))
