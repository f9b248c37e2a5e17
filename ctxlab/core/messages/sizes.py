"""How large a stored context and its view units are under a token counter.

Invariants:
- `unit_tallies(messages, counter)` has one size per unit of `view_units(messages)`, in order;
  with `unseen_size` (messages that yield no unit) they add up to `context_size(messages)`. A
  result's images count in its media unit, not in the result.
- A unit's size depends only on its own stored message, so each message's are kept
  (`message_tallies`, by identity), and so are the sizes of the histories last read
  (`LeadingConcat`): sizing the whole history at every step costs what changed.
- `Sizer` is how a family sizes a request: the counter, the tools, and the overhead the request
  carries besides the stored context.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import ZERO, Block, DataBlock, Tally, ToolResultBlock
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import TokenCounter, measure_all
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.messages.units import ViewUnit, own_units


def unit_tallies(messages: Sequence[Message], counter: TokenCounter) -> tuple[Tally, ...]:
    """The size of each unit of `view_units(messages)` under `counter`, hidden blocks included.

    A result's images count in its media unit, not in the result, so the tallies add up to the
    counter's tally of every message that yields a unit. A unit's size depends only on its own
    message, so each message's are kept (`message_tallies`).
    """
    return _unit_tallies(messages, counter)


def _message_tallies(message: Message, counter: TokenCounter) -> tuple[Tally, ...]:
    tallies: list[Tally] = []
    blocks = message.blocks
    for unit in own_units(message):
        owned = _sum(counter.measure(b) for b in blocks[unit.start : unit.end])
        if unit.kind == "media":
            owned = owned + _data_tally(counter, (blocks[i] for i in unit.blocks))
        elif unit.kind == "result":
            owned = owned - _data_tally(counter, (blocks[unit.blocks[0]],))
        tallies.append(owned)
    return tuple(tallies)


message_tallies = IdentityMemo[Message, tuple[Tally, ...]](_message_tallies)
"""The sizes of one message's view units, in order: `message_tallies(message, counter)`."""

_unit_tallies = LeadingConcat[Message, Tally](
    lambda message, _at, _before, counter: message_tallies(message, counter)
)


def _data_tally(counter: TokenCounter, results: Iterable[Block]) -> Tally:
    return _sum(
        counter.measure(part)
        for block in results
        if isinstance(block, ToolResultBlock)
        for part in block.output
        if isinstance(part, DataBlock)
    )


def _sum(tallies: Iterable[Tally]) -> Tally:
    nbytes = ndata = 0
    for tally in tallies:
        nbytes += tally.nbytes
        ndata += tally.ndata
    return Tally(nbytes, ndata)


def context_size(messages: Sequence[Message], counter: TokenCounter) -> Tally:
    """The counter's tally of every block of `messages`."""
    return measure_all(counter, messages)


def unseen_size(messages: Sequence[Message], units: Sequence[ViewUnit], counter: TokenCounter) -> Tally:
    """The tally of stored messages that yield no view unit (thinking only, or empty)."""
    seen = {unit.message for unit in units}
    return measure_all(counter, [message for m, message in enumerate(messages) if m not in seen])


@dataclass(frozen=True, slots=True, kw_only=True)
class Sizer:
    """How a family sizes a request: the counter, the tools sent, and the size of everything the
    request carries besides the stored context (system prompt, summary, ledger)."""

    counter: TokenCounter
    tools: tuple[ToolSchema, ...] = ()
    overhead: Tally = ZERO

    def tokens(self, context: Tally) -> int:
        """Request tokens when the context has size `context`."""
        return self.counter.total(self.overhead + context, self.tools)

    def size(self, messages: Sequence[Message]) -> Tally:
        """The counter's tally of `messages`."""
        return context_size(messages, self.counter)

    def count(self, messages: Sequence[Message]) -> int:
        """Request tokens when the context is `messages`."""
        return self.tokens(self.size(messages))


def tally_after(tally: Tally, counter: TokenCounter, old: Iterable[Block], new: Iterable[Block]) -> Tally:
    """`tally` once the blocks `old` are replaced by `new` (O(changed blocks))."""
    return tally - _sum(counter.measure(b) for b in old) + _sum(counter.measure(b) for b in new)
