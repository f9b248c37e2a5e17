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
- What the provider receives is sized apart (`sent_size`, `sent_view_sizes`, `sent_tokens`):
  thinking sent in no field counts nothing there, while the families' units count every block
  they keep, as their sources count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ctxlab.core.messages import memo
from ctxlab.core.messages.blocks import (
    ZERO,
    Block,
    DataBlock,
    Tally,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    sum_tallies,
    tally_of,
)
from ctxlab.core.messages.kept import shifted
from ctxlab.core.messages.memo import Closing, IdentityMemo, LeadingConcat, LeadingFold, LeadingScan
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import TokenCounter, measure_all
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.messages.units import ViewUnit


def unit_tallies(messages: Sequence[Message], counter: TokenCounter) -> tuple[Tally, ...]:
    """The size of each unit of `view_units(messages)` under `counter`, hidden blocks included.

    A result's images count in its media unit, not in the result, so the tallies add up to the
    counter's tally of every message that yields a unit. A unit's size depends only on its own
    message, so each message's are kept (`message_tallies`).
    """
    return _unit_tallies(messages, counter)


def _message_tallies(message: Message, counter: TokenCounter) -> tuple[Tally, ...]:
    return view_sizes(message, counter).sizes


message_tallies = IdentityMemo[Message, tuple[Tally, ...]](_message_tallies)
"""The sizes of one message's view units, in order: `message_tallies(message, counter)`."""

_unit_tallies = LeadingConcat[Message, Tally](
    lambda message, _at, _before, counter: message_tallies(message, counter)
)


class ViewSizes(NamedTuple):
    """The size of each message of a stored message's OpenAI view, and its size when it has none."""

    sizes: tuple[Tally, ...]
    unseen: Tally


def sent_size(counter: TokenCounter, block: Block) -> Tally:
    """The counter's size of `block` as a provider receives it: nothing for thinking the view
    leaves out (a `ThinkingBlock` sent in no field), the block's whole size otherwise."""
    if isinstance(block, ThinkingBlock) and not block.wire_field:
        return ZERO
    return counter.measure(block)


def sent_message_size(counter: TokenCounter, message: Message) -> Tally:
    """The counter's size of a stored message as a provider receives it: its blocks less the
    thinking no field carries (`sent_size`)."""
    return _sum(sent_size(counter, block) for block in message.blocks)


def sent_tokens(counter: TokenCounter, messages: Sequence[Message], tools: tuple[ToolSchema, ...]) -> int:
    """The counter's tokens of a request as the provider receives it: its messages as sent
    (`sent_message_size`) and its tools."""
    return counter.total(_sum(sent_message_size(counter, message) for message in messages), tools)


def view_sizes(message: Message, counter: TokenCounter) -> ViewSizes:
    """The counter's size of each message of `to_openai_one(message)`, in one pass over its blocks.

    Equal to `units.unit_tallies` over the message's view units (a property test holds them
    together): a view message owns its blocks and the hidden ones before it (thinking, empty
    hints), the last one also those after it; images a batch of results returned count in the
    batch's media message, not in the results. A message with no view message is `unseen` whole.

    A message of `RESUMED_BLOCKS` blocks or more (a reply that grows by a round at every call)
    resumes the pass over an earlier message whose blocks it begins with (`LeadingScan`).
    """
    sizes = _sizes_scan.finished(message.blocks, _NO_SIZES, _closed_sizes, counter)
    if not sizes:
        return ViewSizes((), counter.measure_message(message))
    return ViewSizes(sizes, ZERO)


def sent_view_sizes(message: Message, counter: TokenCounter) -> ViewSizes:
    """`view_sizes` as the provider receives them: thinking no field carries counts nothing
    (`sent_size`), so a message with no view message sends nothing. What the meters count; the
    families size their units with the thinking they keep (`view_sizes`), as their sources do."""
    sizes = _sent_sizes_scan.finished(message.blocks, _NO_SIZES, _closed_sizes, counter)
    if not sizes:
        return ViewSizes((), sent_message_size(counter, message))
    return ViewSizes(sizes, ZERO)


def _closed_sizes(carry: _SizeCarry, done: Sequence[Tally]) -> Closing[Tally]:
    """The sizes after the last block: the view messages still open, or, when none shows,
    hidden blocks the last view message takes in (none: the message has no view message)."""
    pending, media, shown, has_media = carry
    if shown:
        return len(done), [media, pending] if has_media else [pending]
    if has_media:
        return len(done), [media + pending]
    if done:
        return len(done) - 1, [done[-1] + pending]
    return 0, []


_SizeCarry = tuple[Tally, Tally, bool, bool]
"""What `view_sizes` carries from block to block (a plain tuple: made at every block): the size
of the view message being built and whether it shows, the size of the batch's media message and
whether there is one."""

_NO_SIZES: _SizeCarry = (ZERO, ZERO, False, False)


def _size_step(
    carry: _SizeCarry, block: Block, before: int, counter: TokenCounter
) -> tuple[list[Tally], _SizeCarry]:
    """The view messages' sizes `block` completes, and the carry after it."""
    return _sized_step(carry, block, counter.measure(block), counter)


def _sent_size_step(
    carry: _SizeCarry, block: Block, before: int, counter: TokenCounter
) -> tuple[list[Tally], _SizeCarry]:
    """`_size_step` with `block` sized as sent (`sent_size`)."""
    return _sized_step(carry, block, sent_size(counter, block), counter)


def _sized_step(
    carry: _SizeCarry, block: Block, size: Tally, counter: TokenCounter
) -> tuple[list[Tally], _SizeCarry]:
    """The view messages' sizes `block`, of size `size`, completes, and the carry after it."""
    pending, media, shown, has_media = carry
    done: list[Tally] = []
    if has_media and not isinstance(block, ToolResultBlock):
        done.append(media)  # the media message owns no block of its own
        media, has_media = ZERO, False
    if isinstance(block, TextBlock | DataBlock | ToolCallBlock):
        pending, shown = pending + size, True
    elif isinstance(block, ThinkingBlock):
        pending = pending + size
    else:
        if shown:
            done.append(pending)
            pending, shown = ZERO, False
        pending = pending + size
        if isinstance(block, ToolResultBlock):
            images = [counter.measure(p) for p in block.output if isinstance(p, DataBlock)]
            data = sum(images, ZERO)
            done.append(pending - data)
            pending, media, has_media = ZERO, media + data, has_media or bool(images)
        elif isinstance(block.hint, str) or block.hint:
            done.append(pending)
            pending = ZERO
    return done, (pending, media, shown, has_media)


_sizes_scan = LeadingScan[Block, _SizeCarry, Tally](_size_step, anywhere=True)
_sent_sizes_scan = LeadingScan[Block, _SizeCarry, Tally](_sent_size_step, anywhere=True)


def _sum(tallies: Iterable[Tally]) -> Tally:
    nbytes = ndata = 0
    for tally in tallies:
        nbytes += tally.nbytes
        ndata += tally.ndata
    return tally_of((nbytes, ndata))


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


def running_tally(blocks: Sequence[Block]) -> Tally:
    """The summed tally of `blocks`, resumed after the leading blocks it shares with a sequence
    summed before: a long message rebuilt at every call (an edited copy of a reply) is summed
    where it changed, for `Message.with_blocks`."""
    return _block_sums(blocks, ZERO)


def tally_between(blocks: Sequence[Block], start: int, stop: int) -> Tally:
    """The summed tally of `blocks[start:stop]`, `0 <= start <= stop <= len(blocks)`: for a long
    sequence, the difference of two of the running sums kept for it (`running_tally`), so a
    window cutting the front of a reply that grows at every call sums what the reply gained,
    not what it keeps. The sizes are integers, so the difference is the sum itself."""
    if len(blocks) < memo.RESUMED_BLOCKS:
        return sum_tallies(blocks[start:stop])
    before, through = _block_sums.folds_at(blocks, ZERO, start, stop)
    return through - before


_block_sums = LeadingFold[Block, Tally](lambda total, block: total + block.tally, shifted)
