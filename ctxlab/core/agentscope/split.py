"""Split points: which part of the context is compressed and which is kept verbatim.

The algorithm is AgentScope 2.0.11's `_split_context_for_compression`, reproduced exactly:

1. Message level: scan from the last message back; stop at the first index where the request
   made of the fixed part (system prompt and old summary), the messages from that index on, and
   the tools reaches the budget (`>=`). If none does, nothing is compressed.
2. The first message up to that index holding an unfinished call becomes the boundary instead.
3. Block level, inside the boundary message only: scan its blocks from the last back; stop at the
   first block whose inclusion makes the reserved request exceed the budget (strict `>`). That
   block and everything before it go to the compressed side.
4. An unfinished call and everything after it are always reserved.
5. Orphan fix, repeated until stable: a reserved result whose call is on the compressed side
   moves the cut to just after the last such result; when that would compress an unfinished call,
   the cut moves before the calls of those results instead.

Invariants: `compress + reserve` holds every block of the context in order (an empty boundary
part adds no message, so an empty boundary message disappears, as in AgentScope); the reserved
part never holds a result whose call is compressed, within the boundary message; messages before
the boundary are compressed whole and messages after it are kept whole.

Cost: O(messages + boundary blocks) through running tallies, not a recount per step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import Block, Tally, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import TokenCounter, measure_all
from ctxlab.core.messages.tools import ToolSchema

_MAX_FIX_STEPS = 10_000


class SplitError(RuntimeError):
    """The orphan fix cannot settle (AgentScope would raise or loop here)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Split:
    """The messages to compress and the messages to keep, in context order."""

    compress: tuple[Message, ...]
    reserve: tuple[Message, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SplitInput:
    """Everything a split depends on.

    Attributes:
        fixed: size of the system prompt and the old summary, which use up the budget first.
        context: the context messages.
        tools: the tool schemas sent with the request (they use up the budget too).
        budget: tokens to keep (`reserve_ratio × context_size`, or 0 in the fallback).
        unfinished: ids of the current reply's calls that have no result yet.
    """

    fixed: Tally
    context: tuple[Message, ...]
    tools: tuple[ToolSchema, ...]
    budget: float
    unfinished: frozenset[str] = frozenset()


def split_context(split: SplitInput, counter: TokenCounter) -> Split:
    """Cut the context into a compressed and a reserved part (see the module docstring)."""
    index = _message_cut(split, counter)
    if index < 0:
        return Split(compress=(), reserve=split.context)
    index = _first_unfinished_message(split.context[: index + 1], split.unfinished, index)
    boundary, later = split.context[index], split.context[index + 1 :]
    later_size = split.fixed + measure_all(counter, later)
    cut = _block_cut(boundary.blocks, later_size, split, counter)
    unfinished = tuple(i for i, b in enumerate(boundary.blocks) if _is_unfinished(b, split.unfinished))
    if unfinished:
        cut = min(cut, unfinished[0] - 1)
    cut = _fix_orphans(boundary.blocks, cut, unfinished)
    head, tail = boundary.blocks[: cut + 1], boundary.blocks[cut + 1 :]
    compress = split.context[:index] + ((boundary.with_blocks(head),) if head else ())
    reserve = ((boundary.with_blocks(tail),) if tail else ()) + later
    return Split(compress=compress, reserve=reserve)


def _message_cut(split: SplitInput, counter: TokenCounter) -> int:
    """The last index whose suffix reaches the budget, or -1 when everything fits."""
    size = split.fixed
    for index in range(len(split.context) - 1, -1, -1):
        size = size + counter.measure_message(split.context[index])
        if counter.total(size, split.tools) >= split.budget:
            return index
    return -1


def _first_unfinished_message(head: Sequence[Message], unfinished: frozenset[str], index: int) -> int:
    for position, message in enumerate(head):
        if any(_is_unfinished(b, unfinished) for b in message.blocks):
            return position
    return index


def _is_unfinished(block: Block, unfinished: frozenset[str]) -> bool:
    return isinstance(block, ToolCallBlock) and block.id in unfinished


def _block_cut(blocks: tuple[Block, ...], later: Tally, split: SplitInput, counter: TokenCounter) -> int:
    """The last block index whose inclusion makes the reserve exceed the budget, or -1."""
    size = later
    for index in range(len(blocks) - 1, -1, -1):
        size = size + counter.measure(blocks[index])
        if counter.total(size, split.tools) > split.budget:
            return index
    return -1


def _orphans(blocks: tuple[Block, ...], cut: int) -> dict[str, int]:
    """Reserved results (id -> position) whose call is not reserved after `cut`."""
    remaining: dict[str, int] = {}
    for index in range(len(blocks) - 1, cut, -1):
        block = blocks[index]
        if isinstance(block, ToolResultBlock):
            remaining[block.id] = index
        elif isinstance(block, ToolCallBlock):
            remaining.pop(block.id, None)
    return remaining


def _fix_orphans(blocks: tuple[Block, ...], cut: int, unfinished: tuple[int, ...]) -> int:
    """Move the cut until no reserved result lacks its call.

    Terminates: without an unfinished call every step sets the cut to the last orphan, which
    lies after it, so the cut strictly rises within the message. A step before an unfinished
    call moves it back instead, and AgentScope's own loop can then cycle; `_MAX_FIX_STEPS` turns
    that into a `SplitError` (more steps than the message has blocks cannot be needed otherwise).
    """
    for _ in range(_MAX_FIX_STEPS):
        orphans = _orphans(blocks, cut)
        if not orphans:
            return cut
        last = max(orphans.values())
        if unfinished and last >= unfinished[0]:
            cut = _before_calls_of(blocks, orphans) - 1
        else:
            cut = last
    raise SplitError("the orphan fix does not settle: results and unfinished calls interleave")


def _before_calls_of(blocks: tuple[Block, ...], orphans: dict[str, int]) -> int:
    positions = [i for i, b in enumerate(blocks) if isinstance(b, ToolCallBlock) and b.id in orphans]
    if not positions:
        raise SplitError(
            "an orphaned result's call is outside the boundary message, so the cut cannot move "
            "before it (AgentScope raises ValueError here)"
        )
    return min(positions)
