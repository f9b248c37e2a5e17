"""A protocol-blind sliding window: drop the oldest view messages until the request fits.

Source: `trim_messages(strategy="last")` without `start_on="human"` (langchain #33245). It can
orphan a tool result, and the lab's checks must catch it: it is a baseline, not a strategy to use.
"""

from __future__ import annotations

import itertools
import operator
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ctxlab.core.messages import memo
from ctxlab.core.messages.blocks import ZERO, Tally
from ctxlab.core.messages.drops import drop_front, system_units_before
from ctxlab.core.messages.latest import Front
from ctxlab.core.messages.memo import IdentityMemo, LeadingFold
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import Sizer, message_tallies
from ctxlab.core.messages.tokens import TokenCounter, measure_since
from ctxlab.core.messages.units import ViewUnit, own_units, view_units


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
    the walk stops is found by bisection over running sizes, not by counting at every unit. The
    running sizes at each message are kept (`LeadingFold`) and the drop reads only what stays
    (`drop_front`), so a window over a long history costs what it keeps and what the history
    gained.
    """
    units = view_units(messages)
    marks = _marks.running(messages, _Mark(0, 0, 0, 0), sizer.counter, params.keep_system)
    whole = sizer.size(messages)

    def running(m: int) -> Sequence[Tally]:
        return _message_running_sizes(messages[m], sizer.counter)

    def stops(at: int) -> bool:
        dropped = _dropped_before(
            messages, units, marks, at, counter=sizer.counter, running=running, keep_system=params.keep_system
        )
        left = Tally(whole.nbytes - dropped.nbytes, whole.ndata - dropped.ndata)
        return (
            sizer.tokens(left) <= params.max_tokens or len(units) - dropped.droppable <= params.min_messages
        )

    stop = _with_its_results(units, bisect_left(range(len(units)), True, key=stops))
    spared = system_units_before(messages, units, stop) if params.keep_system else []
    dropped = _front(stop, spared)
    if not dropped and type(messages) is tuple:  # the very history: found at once where it was read
        return Window(messages=messages, dropped=dropped, tokens=sizer.tokens(whole))
    kept = drop_front(messages, units, stop, keep_system=params.keep_system)
    return Window(
        messages=kept, dropped=dropped, tokens=sizer.tokens(_kept_size(messages, units, stop, kept, sizer))
    )


def _kept_size(
    messages: Sequence[Message], units: Sequence[ViewUnit], stop: int, kept: Sequence[Message], sizer: Sizer
) -> Tally:
    """`sizer.size(kept)`, for `kept` what `drop_front` keeps of `messages` from unit `stop`: what
    it keeps before the message the cut falls in and of that message, summed, and the messages
    after it, which it keeps whole, read off the history's running sums."""
    end = units[stop].message if stop < len(units) else len(messages)
    after = max(len(messages) - end - 1, 0)
    head = sizer.size(kept[: len(kept) - after])
    return head + measure_since(sizer.counter, messages, len(messages) - after) if after else head


def _with_its_results(units: Sequence[ViewUnit], stop: int) -> int:
    """`stop`, or, when it falls on the images a batch of results returned (a media unit, which
    owns no block: its images are the results' own), the first of those results: they go
    together, or the images would be dropped with them and fewer than `min_messages` sent. The
    media unit follows its batch's results, so only the batch is walked back over."""
    if stop == len(units) or units[stop].kind != "media":
        return stop
    media, at, first = units[stop], stop, stop
    while at > 0 and units[at - 1].kind == "result" and units[at - 1].message == media.message:
        at -= 1
        if set(units[at].blocks) & set(media.blocks):
            first = at
    return first


class _Mark(NamedTuple):
    """Running sums before a stored message: its first unit, and the droppable units' bytes,
    data blocks and number."""

    first: int
    nbytes: int
    ndata: int
    droppable: int


def _add_message(mark: _Mark, message: Message, counter: TokenCounter, keep_system: bool) -> _Mark:
    tallies = message_tallies(message, counter)  # one per unit
    if keep_system and message.role == "system":
        for unit, size in zip(own_units(message), tallies, strict=True):
            mark = _add_unit(mark, unit, size, keep_system)
        return mark
    size = _summed(tallies, ZERO) if len(tallies) >= memo.RESUMED_BLOCKS else sum(tallies, ZERO)
    first, nbytes, ndata, droppable = mark
    return _Mark(first + len(tallies), nbytes + size.nbytes, ndata + size.ndata, droppable + len(tallies))


_marks = LeadingFold[Message, _Mark](_add_message)
_front = Front()


def _dropped_before(
    messages: Sequence[Message],
    units: Sequence[ViewUnit],
    marks: Sequence[_Mark],
    at: int,
    *,
    counter: TokenCounter,
    running: Callable[[int], Sequence[Tally]],
    keep_system: bool,
) -> _Mark:
    """The droppable units' sums over `units[:at]`: the marks before unit `at`'s message, and
    that message's units before it (`running(m)`: the sizes of message `m`'s first units)."""
    if at == len(units):
        return marks[-1]
    m = units[at].message
    mark = marks[m]
    if keep_system and messages[m].role == "system":
        for unit, size in zip(units[mark.first : at], message_tallies(messages[m], counter), strict=False):
            mark = _add_unit(mark, unit, size, keep_system)
        return mark
    first, nbytes, ndata, droppable = mark
    size, before = running(m)[at - first], at - first
    return _Mark(at, nbytes + size.nbytes, ndata + size.ndata, droppable + before)


def _add_unit(mark: _Mark, unit: ViewUnit, size: Tally, keep_system: bool) -> _Mark:
    first, nbytes, ndata, droppable = mark
    if keep_system and unit.kind == "system":
        return _Mark(first + 1, nbytes, ndata, droppable)
    return _Mark(first + 1, nbytes + size.nbytes, ndata + size.ndata, droppable + 1)


def _running_sizes(tallies: Sequence[Tally]) -> Sequence[Tally]:
    """The summed sizes of the first k units of a message, for k from 0 to all of them (a long
    message's are kept, `LeadingFold`: a reply grows by a round at every call)."""
    if len(tallies) < memo.RESUMED_BLOCKS:
        return list(itertools.accumulate(tallies, operator.add, initial=ZERO))
    return _summed.running(tallies, ZERO)


_summed = LeadingFold[Tally, Tally](operator.add)


def _message_sizes(message: Message, counter: TokenCounter) -> Sequence[Tally]:
    return _running_sizes(message_tallies(message, counter))


_message_running_sizes = IdentityMemo[Message, Sequence[Tally]](_message_sizes)
"""A message's running unit sizes, kept by the message: the bisection of every step reads the
messages it lands on, and a long message's would otherwise be summed again at every step."""
