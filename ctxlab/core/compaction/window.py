"""A protocol-blind sliding window: drop the oldest view messages until the request fits.

Source: `trim_messages(strategy="last")` without `start_on="human"` (langchain #33245). It can
orphan a tool result, and the lab's checks must catch it: it is a baseline, not a strategy to use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.core.messages.message import Message
from ctxlab.core.messages.units import (
    Sizer,
    drop_units,
    unit_tallies,
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
    """Drop view messages from the front, blind to calls and results, down to `max_tokens`."""
    units = view_units(messages)
    tallies = unit_tallies(messages, units, sizer.counter)
    tally = sizer.size(messages)
    dropped: list[int] = []
    for unit in units:
        if sizer.tokens(tally) <= params.max_tokens or len(units) - len(dropped) <= params.min_messages:
            break
        if params.keep_system and unit.kind == "system":
            continue
        dropped.append(unit.index)
        tally = tally - tallies[unit.index]
    kept = drop_units(messages, units, dropped)
    return Window(messages=kept, dropped=tuple(dropped), tokens=sizer.count(kept))
