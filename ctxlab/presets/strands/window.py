"""strands-agents 1.62's conversation as the managers see it, and their pure decisions on it.

A strands agent keeps a list of messages: a user prompt, an assistant message (its text and its
tool uses), one user message holding every tool result of that batch, and so on. The stored
context is seen that way here (`strands_view`): each view unit of the OpenAI view
(`ctxlab.core.messages.units`) is one strands message, except that the results of one batch
(and the media they return) form a single user message. Every decision is made on that list
and mapped back to stored blocks, so the managers edit the stored context and never a copy.

The functions reproduce the package's helpers: `find_valid_trim_point` and the tool-pair
fallback of the sliding window, its choice of the oldest message holding results and the
middle cut of their texts, and `adjust_split_point_for_tool_pairs` of the summarizing manager,
with their quirks (a window may start with an assistant message; the oldest results are picked
even when already cut, which then trims instead).

Invariants: pure, standard library and `ctxlab.core` only; a view covers every unit once, in order.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ctxlab.core.messages.blocks import Block, DataBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.edits import replace_blocks
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.units import BlockRef, ViewUnit

PRESERVE_CHARS = 200
"""Characters kept at each end of a cut tool-result text."""
CUT_MARK = "... [truncated:"
"""A text holding this is never cut again."""


class TrimError(ValueError):
    """The conversation cannot be reduced (the package's `ContextWindowOverflowException`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StrandsMessage:
    """One message of the strands list: its role, what it holds, and its view units `[first, end)`."""

    role: Literal["user", "assistant"]
    tool_use: bool
    tool_result: bool
    first: int
    end: int


def strands_view(units: Sequence[ViewUnit]) -> tuple[StrandsMessage, ...]:
    """The strands message list of a context's view units (the system prompt is not a message)."""
    out: list[StrandsMessage] = []
    for unit in units:
        if unit.kind == "system":
            continue
        if unit.kind in ("result", "media"):
            last = out[-1] if out else None
            if last is not None and last.tool_result and last.end == unit.index:
                out[-1] = StrandsMessage(
                    role="user", tool_use=False, tool_result=True, first=last.first, end=unit.index + 1
                )
                continue
            out.append(
                StrandsMessage(
                    role="user", tool_use=False, tool_result=True, first=unit.index, end=unit.index + 1
                )
            )
            continue
        role: Literal["user", "assistant"] = "assistant" if unit.role == "assistant" else "user"
        out.append(
            StrandsMessage(
                role=role,
                tool_use=unit.kind == "calls",
                tool_result=False,
                first=unit.index,
                end=unit.index + 1,
            )
        )
    return tuple(out)


def valid_trim_point(messages: Sequence[StrandsMessage], start: int) -> int:
    """The first index from `start` where a window may begin: a user message that holds no result
    and no unanswered tool use (`len(messages)` when there is none)."""
    index = start
    while index < len(messages):
        message = messages[index]
        if message.role != "user" or message.tool_result:
            index += 1
            continue
        if message.tool_use and not (index + 1 < len(messages) and messages[index + 1].tool_result):
            index += 1
            continue
        break
    return index


def tool_pair_trim_point(messages: Sequence[StrandsMessage], start: int) -> int | None:
    """The first message from `start` holding a tool use whose next message is a user message with
    results: the fallback window start, an assistant message (None when there is none)."""
    for index in range(start, len(messages)):
        following = messages[index + 1] if index + 1 < len(messages) else None
        if (
            messages[index].tool_use
            and following is not None
            and following.role == "user"
            and following.tool_result
        ):
            return index
    return None


def trim_index(messages: Sequence[StrandsMessage], window_size: int, *, overflow: bool) -> int | None:
    """How many leading messages the sliding window removes; None when it cannot trim and the
    reduction was routine (the package logs a warning and changes nothing).

    Raises:
        TrimError: it cannot trim and the reduction answers a context overflow.
    """
    if window_size == 0:
        return len(messages)
    start = 2 if len(messages) <= window_size else len(messages) - window_size
    index = valid_trim_point(messages, start)
    if index >= len(messages):
        fallback = tool_pair_trim_point(messages, start)
        if fallback is None:
            if overflow:
                raise TrimError("Unable to trim conversation context!")
            return None
        index = fallback
    if index == 0:
        if overflow:
            raise TrimError("Unable to trim conversation context!")
        return None
    return index


def oldest_with_results(messages: Sequence[StrandsMessage]) -> int | None:
    """The index of the oldest message holding tool results, cut already or not."""
    return next((i for i, m in enumerate(messages) if m.tool_result), None)


def image_placeholder(part: DataBlock) -> str:
    """What an image in a cut result becomes: its format and its size in bytes."""
    fmt = part.media_type.split("/", 1)[-1] if "/" in part.media_type else part.media_type
    size = 0
    if part.kind == "base64":
        try:
            size = len(base64.b64decode(part.source, validate=False))
        except (binascii.Error, ValueError):
            size = 0
    return f"[image: {fmt}, {size} bytes]"


def cut_text(text: str) -> str | None:
    """A long result text with its middle removed (None: kept, being short or cut already)."""
    if CUT_MARK in text or len(text) <= 2 * PRESERVE_CHARS:
        return None
    removed = len(text) - 2 * PRESERVE_CHARS
    return (
        f"{text[:PRESERVE_CHARS]}...\n\n... [truncated: {removed} chars removed] ...\n\n"
        f"...{text[-PRESERVE_CHARS:]}"
    )


def cut_result(result: ToolResultBlock) -> ToolResultBlock | None:
    """The result with its long texts cut and its images replaced (None: nothing changes)."""
    parts: list[Part] = []
    changed = False
    for part in result.output:
        if isinstance(part, DataBlock) and part.is_image:
            parts.append(TextBlock(text=image_placeholder(part)))
            changed = True
            continue
        cut = cut_text(part.text) if isinstance(part, TextBlock) else None
        parts.append(TextBlock(text=cut) if cut is not None else part)
        changed = changed or cut is not None
    if not changed:
        return None
    return ToolResultBlock(id=result.id, name=result.name, output=tuple(parts), state=result.state)


def cut_results(
    context: Sequence[Message], units: Sequence[ViewUnit], message: StrandsMessage
) -> tuple[Message, ...] | None:
    """The context with the results of one strands message cut (None when none changes)."""
    edits: dict[BlockRef, Block] = {}
    for unit in units[message.first : message.end]:
        if unit.kind != "result":
            continue
        ref = BlockRef(unit.message, unit.blocks[0])
        block = context[ref.message].blocks[ref.block]
        assert isinstance(block, ToolResultBlock)
        cut = cut_result(block)
        if cut is not None:
            edits[ref] = cut
    return replace_blocks(context, edits) if edits else None


def summary_split(messages: Sequence[StrandsMessage], ratio: float, preserve: int) -> int:
    """How many leading messages the summarizing manager summarizes.

    `max(1, int(n × ratio))`, at most `n - preserve`, then moved forward past a leading result
    message or a tool use whose next message holds no results (the whole list may go).

    Raises:
        TrimError: too few messages to summarize, or no valid split point.
    """
    count = min(max(1, int(len(messages) * ratio)), len(messages) - preserve)
    if count <= 0:
        raise TrimError("Cannot summarize: insufficient messages for summarization")
    return adjusted_split(messages, count)


def adjusted_split(messages: Sequence[StrandsMessage], split: int) -> int:
    """`split` moved forward until the message there neither holds results nor a tool use whose
    next message holds none (`len(messages)` is kept as it is).

    Raises:
        TrimError: the split passes the end, or walks off it.
    """
    if split > len(messages):
        raise TrimError("Split point exceeds message array length")
    if split == len(messages):
        return split
    while split < len(messages):
        here = messages[split]
        dangling = here.tool_use and split + 1 < len(messages) and not messages[split + 1].tool_result
        if here.tool_result or dangling:
            split += 1
        else:
            return split
    raise TrimError("Unable to trim conversation context!")
