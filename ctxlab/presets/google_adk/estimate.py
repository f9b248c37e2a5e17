"""Google ADK 2.13.0's token estimate of a session's events and of a request's messages
(`_estimate_prompt_token_count`: characters // 4), which its token-threshold compaction reads
when no model usage is known.

Invariants:
- The characters of an event or a message are counted once per object (`IdentityMemo`), and
  the sum over a request resumes after the leading messages it shares with one summed before
  (`LeadingFold`); a long message (a reply that grows by a round at every call) resumes the sum
  of an earlier version it begins with. Integer sums: the same numbers as counting afresh.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ctxlab.core.messages.blocks import Block, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.memo import RESUMED_BLOCKS, IdentityMemo, LeadingFold
from ctxlab.core.messages.message import Message
from ctxlab.presets.google_adk.session import Compacted, Item, RawEvent, arguments
from ctxlab.presets.google_adk.wire import CONTINUATION_ID, escaped_length


def estimate_tokens(items: Sequence[Item]) -> int | None:
    """`_estimate_prompt_token_count`: characters of the request's contents // 4 (texts, call and
    response names, arguments and responses as `json.dumps`), None when there are none."""
    total = sum(len(item.text) if isinstance(item, Compacted) else _counted(item) for item in items)
    return total // 4 if total > 0 else None


def estimated_request_tokens(messages: Sequence[Message]) -> int:
    """`estimate_tokens` of the events of a request's messages (results as sent, `sent_response`),
    system messages and the adapter's continuation left out (0 for none). A message's events hold
    its blocks between them, so the characters are summed message by message, and resumed after
    the leading messages it shares with a request summed before."""
    return _request_chars(messages, 0) // 4


def _block_chars(block: Block) -> int:
    """The characters `estimate_tokens` counts of one block (a thought part's text too)."""
    if isinstance(block, TextBlock):
        return len(block.text)
    if isinstance(block, ThinkingBlock):
        return len(block.thinking)
    if isinstance(block, ToolCallBlock):
        args = arguments(block)
        return len(block.name) + (len(json.dumps(args)) if args else 0)
    if isinstance(block, ToolResultBlock):
        return len(block.name) + len(json.dumps({"result": block.text}))
    return 0


def _counted_chars(event: RawEvent) -> int:
    return sum(_block_chars(block) for block in event.blocks)


_counted = IdentityMemo[RawEvent, int](_counted_chars)
"""The characters `estimate_tokens` counts of one raw event, kept by identity."""


def _sent_block_chars(block: Block) -> int:
    """`_block_chars` of a block of a request, whose results are written as ADK sends them
    (`sent_response`): a result's JSON is counted as `json.dumps` writes it by default."""
    if isinstance(block, ToolResultBlock):
        return len(block.name) + escaped_length(block.text)
    return _block_chars(block)


def _message_chars(message: Message) -> int:
    """A long message (a reply that gains a round at every call) is summed by resuming the sum of
    an earlier version it begins with (`LeadingFold`), so a call costs the blocks it gained."""
    if message.role == "system" or message.id == CONTINUATION_ID:
        return 0
    if len(message.blocks) >= RESUMED_BLOCKS:
        return _blocks_chars(message.blocks, 0)
    return sum(_sent_block_chars(block) for block in message.blocks)


_blocks_chars = LeadingFold[Block, int](lambda total, block: total + _sent_block_chars(block))


_counted_message = IdentityMemo[Message, int](_message_chars)
"""The characters `estimate_tokens` counts of one message's events, kept by identity."""


def _add_message(total: int, message: Message) -> int:
    return total + _counted_message(message)


_request_chars = LeadingFold[Message, int](_add_message)
"""The characters of a request's events: a request that grew at its end costs what it gained."""
