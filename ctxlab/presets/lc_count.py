"""LangChain's approximate token count (`count_tokens_approximately`) of its history, and of a
stored history read along its messages, as LangChain's middleware counts to decide.

Source: langchain-core 1.8.3, `langchain_core.messages.utils.count_tokens_approximately`.

Invariants:
- `count_tokens` equals `count_tokens_approximately`: per message, characters (not bytes) of
  the content, the OpenAI role, the name (when counted), `repr` of the tool calls (AI messages
  whose content is not a list) and the tool call id, rounded up per message, plus a fixed
  overhead per message; images cost a flat amount; tool schemas are their JSON's characters;
  with usage scaling, the total is scaled by the last reported total over the count up to it,
  clamped to [1, 1.25], when every AI message names the same provider.
- `count_stored(messages, params)` equals `count_tokens(lc_view(messages), params)`, with the
  very float additions in the same order: read message by message, and a long message (a
  reply that grows) block by block, so a history counted at every step costs what changed. A
  copy with a few blocks or messages replaced (a clearing's) takes the sums kept after them,
  shifted by the difference, when every message counts a whole number (a whole overhead per
  message): a sum of whole numbers below 2**53 is exact in floats, so it is the same sum.
- `result_shift(result, cleared, params)` is how `count_stored` of any history holding `result`
  changes when `cleared` replaces it, or None: each becomes one tool message of its own, counted
  alike, when neither returned media (a batch's media message would change too) and every
  message counts a whole number. `noted_count(messages, total, params)` says a history's count
  was worked out otherwise (a clearing's count before and its edits' shifts): `count_stored` of
  that very tuple next gives `total` without reading it.
- Every function here is pure: equal inputs give equal outputs.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.core.messages.blocks import Block, DataBlock, ToolResultBlock
from ctxlab.core.messages.kept import shifted
from ctxlab.core.messages.memo import RESUMED_BLOCKS, IdentityMemo, LeadingFold
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.resumable import register
from ctxlab.core.wire.views import NO_WIRE, WireCarry, tool_wire, wire_step, wire_tail
from ctxlab.presets.lc_messages import LCCall, LCMessage, from_wire, lc_of, lc_view


def calls_repr(calls: Sequence[LCCall]) -> str:
    """`repr(message.tool_calls)` as LangChain holds them.

    >>> calls_repr([LCCall("ls", '{"path": "."}', "c1")])
    "[{'name': 'ls', 'args': {'path': '.'}, 'id': 'c1', 'type': 'tool_call'}]"
    """
    return repr([{"name": c.name, "args": c.arguments(), "id": c.id, "type": "tool_call"} for c in calls])


@dataclass(frozen=True, slots=True, kw_only=True)
class ApproxParams:
    """`count_tokens_approximately`'s parameters (LangChain's defaults)."""

    chars_per_token: float = 4.0
    extra_tokens_per_message: float = 3.0
    count_name: bool = True
    tokens_per_image: int = 85
    use_usage_metadata_scaling: bool = False


APPROX = ApproxParams()
ANTHROPIC_CHARS_PER_TOKEN = 3.3
"""What the summarization middleware divides by for Anthropic chat models."""


def chars_and_images(message: LCMessage) -> tuple[int, int]:
    """The characters LangChain counts of one message, and how many images it holds."""
    chars, images = 0, 0
    if isinstance(message.content, str):
        chars += len(message.content)
    else:
        for block in message.content:
            kind = block.get("type", "")
            if kind in {"image", "image_url"}:
                images += 1
            elif kind == "text":
                chars += len(block.get("text", ""))
            else:
                chars += len(repr(block))
    if message.kind == "ai" and isinstance(message.content, str) and message.tool_calls:
        chars += _calls_repr_length(message.tool_calls)
    if message.kind == "tool":
        chars += len(message.tool_call_id)
    return chars + len(message.role), images


@functools.lru_cache(maxsize=4096)
def _calls_repr_length(calls: tuple[LCCall, ...]) -> int:
    """`len(calls_repr(calls))`, kept by value: a reply's calls are counted again, as new
    messages, at every call that reads its last rounds afresh (a clearing's copy)."""
    return len(calls_repr(calls))


_chars_and_images = IdentityMemo[LCMessage, tuple[int, int]](chars_and_images)


def tools_chars(tools: Sequence[Mapping[str, Any]]) -> int:
    """Characters of the tool schemas as LangChain counts them (each one's JSON)."""
    return sum(len(json.dumps(dict(t))) for t in tools)


def count_tokens(
    messages: Sequence[LCMessage],
    params: ApproxParams = APPROX,
    tools: Sequence[Mapping[str, Any]] = (),
) -> int:
    """`count_tokens_approximately(messages, ...)` (see the module invariants).

    >>> count_tokens([LCMessage(kind="human", content="abcdefgh")])
    6
    """
    total = 0.0
    if tools:
        total += math.ceil(tools_chars(tools) / params.chars_per_token)
    if not params.use_usage_metadata_scaling:
        return math.ceil(_summed(messages, total, params))
    total, provider, mixed, last_total, at_last = _scaled(messages, (total, None, False, None, None), params)
    if len(messages) > 1 and not mixed and provider is not None and last_total is not None and at_last:
        total *= min(1.25, max(1.0, last_total / at_last))
    return math.ceil(total)


_Scaling = tuple[float, str | None, bool, int | None, float | None]
"""The running count with what usage scaling reads: the AI messages' provider, whether they mix
providers, and the last reported total with the count when it was reported (a plain tuple: one
is made per message counted)."""


def _add_scaled(read: _Scaling, message: LCMessage, params: ApproxParams) -> _Scaling:
    total = _add_message(read[0], message, params)
    if message.kind != "ai":
        return (total, *read[1:])
    _, provider, mixed, last_total, at_last = read
    if provider is None:
        provider = message.provider
    elif message.provider != provider:
        mixed = True
    if message.total_tokens is not None:
        last_total, at_last = message.total_tokens, total
    return total, provider, mixed, last_total, at_last


_scaled = LeadingFold[LCMessage, _Scaling](_add_scaled)
"""`count_tokens` with usage scaling, read like `_summed`."""


def _add_message(total: float, message: LCMessage, params: ApproxParams) -> float:
    """`total` after counting one more message (in LangChain's order of additions)."""
    return _added(total, _chars_and_images(message), message.name, params)


def _added(total: float, counted: tuple[int, int], name: str | None, params: ApproxParams) -> float:
    """`total` after counting a message of `counted` characters and images, sent by `name`."""
    chars, images = counted
    if name and params.count_name:
        chars += len(name)
    total += images * params.tokens_per_image
    total += math.ceil(chars / params.chars_per_token)
    return total + params.extra_tokens_per_message


_summed = LeadingFold[LCMessage, float](_add_message)
"""`count_tokens`' sum without scaling: a history counted again at every step costs what it gained."""


def count_stored(messages: Sequence[Message], params: ApproxParams = APPROX) -> int:
    """`count_tokens(lc_view(messages), params)`, read along the stored messages: each message's
    LangChain messages are added in the view's order (the very same float additions), so a
    history counted again at every step costs what it gained and no view of it is made (a copy
    as long as the history at every call). Usage scaling reads the view."""
    noted = _NOTED.last
    if noted is not None and noted[0] is messages and (noted[1] is params or noted[1] == params):
        return noted[2]
    if params.use_usage_metadata_scaling:
        return count_tokens(lc_view(messages), params)
    return math.ceil(_stored_sum(messages, 0.0, params))


def _add_stored(total: float, message: Message, params: ApproxParams) -> float:
    if len(message.blocks) >= RESUMED_BLOCKS:  # a reply that grew: summed along its blocks
        carry, total = _block_sum(message.blocks, (NO_WIRE, total), message.role, params)
        for wire in wire_tail(carry, message.role):
            total = _add_message(total, from_wire(wire), params)
        return total
    for part in lc_of(message):
        total = _add_message(total, part, params)
    return total


def _add_block(
    summed: tuple[WireCarry, float], block: Block, role: str, params: ApproxParams
) -> tuple[WireCarry, float]:
    """The sum after the LangChain messages `block` completes (a message's view messages as
    `views.wire_step` makes them, a tool message named after the result that makes it, as
    `lc_of` names it), and the view's carry after it."""
    carry, total = summed
    made, carry = wire_step(carry, block, 0, role)
    for wire in made:
        name = getattr(block, "name", None) if wire["role"] == "tool" else None
        total = _added(total, chars_and_images(from_wire(wire, name)), name, params)  # a new one: no memo
    return carry, total


def _block_sum_rejoined(
    kept: tuple[WireCarry, float], now: tuple[WireCarry, float], _role: str, params: ApproxParams
) -> Callable[[tuple[WireCarry, float]], tuple[WireCarry, float]] | None:
    """How the sums kept after a block map to those after it now, reached with the same view
    carry (then the same messages follow): shifted by the difference, exact when every count
    added is a whole number."""
    if kept[0] != now[0] or not _whole(params):
        return None
    total = shifted(kept[1], now[1])
    return lambda summed: (summed[0], total(summed[1]))


def _whole(params: ApproxParams) -> bool:
    """Whether every message's count is a whole number (a float sum of them is then exact, in
    any order, as long as it stays below 2**53)."""
    return float(params.extra_tokens_per_message).is_integer()


_block_sum = LeadingFold[Block, tuple[WireCarry, float]](_add_block, _block_sum_rejoined)
"""`_add_stored`'s sum over a long message, folded a block at a time from the view's start and
the sum before the message: the very float additions of its LangChain messages in order, kept
along a reply that grows (and along each cleared copy of it), so a count at every call costs
the blocks it gained, with no view of the reply made."""


def _stored_sum_rejoined(kept: float, now: float, params: ApproxParams) -> Callable[[float], float] | None:
    """The sums kept after a message map to those after it now by the difference, when exact."""
    return shifted(kept, now) if _whole(params) else None


_stored_sum = LeadingFold[Message, float](_add_stored, _stored_sum_rejoined)
"""`count_stored`'s sum: `_summed` of the view, folded a stored message at a time."""


def result_shift(
    result: ToolResultBlock, cleared: ToolResultBlock, params: ApproxParams = APPROX
) -> int | None:
    """How `count_stored` of a history changes when `cleared` replaces `result` (see the module
    invariants), or None when that cannot be told from the two alone."""
    if not _whole(params) or params.use_usage_metadata_scaling or _returned_media(result, cleared):
        return None
    return int(_tool_count(cleared, params) - _tool_count(result, params))


def _returned_media(*results: ToolResultBlock) -> bool:
    return any(isinstance(part, DataBlock) for result in results for part in result.output)


def _tool_count(result: ToolResultBlock, params: ApproxParams) -> float:
    """The count of the one tool message a result without media becomes (named after its tool)."""
    return _added(0.0, chars_and_images(from_wire(tool_wire(result), result.name)), result.name, params)


class _Noted:
    """The last count worked out otherwise: the very tuple, the parameters, the count."""

    __slots__ = ("__weakref__", "last")

    def __init__(self) -> None:
        self.last: tuple[tuple[Message, ...], ApproxParams, int] | None = None
        register(self)

    def clear(self) -> None:
        self.last = None


_NOTED = _Noted()


def noted_count(messages: tuple[Message, ...], total: int, params: ApproxParams = APPROX) -> int:
    """`total`, noted as `count_stored(messages, params)` (worked out otherwise and equal to it):
    the next count of that very tuple gives it without reading the history."""
    _NOTED.last = (messages, params, total)
    return total
