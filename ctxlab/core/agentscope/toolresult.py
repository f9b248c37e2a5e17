"""Truncation of one oversized tool result: what stays in context, what is offloaded, the reminder.

AgentScope 2.0.11 truncates each tool result at acting time, before saving it. The engine runs
`split_tool_result`; when it returns a split, the workspace (if any) stores `offloaded` and gives
a path, and `attach_reminder(kept, truncation_reminder(texts, path))` is what enters the context.

Invariants:
- A result whose tokens (its output parts alone, in one message, with no tools) are at most the
  limit is never split.
- A split keeps a prefix of the output and offloads the rest: the text of `kept` followed by the
  text of `offloaded` is the text of the original, character for character, and the parts of both,
  with adjacent texts merged, are the original's parts with adjacent texts merged. Neither side
  gets an empty text: a boundary text cut at either end leaves no empty half, and an empty
  boundary text leaves no part at all (AgentScope adds a half only when it has characters).
- `kept` and `offloaded` carry the original's id, name and state. The split never looks at the
  state: AgentScope truncates a failed local tool's result like any other (only the results it
  makes itself for denied calls, unknown tools and bad arguments skip truncation, and the engine
  never passes those here).
- The kept part is never larger than the original; the reminder is added after the budget is
  spent, so a truncated result ends above the limit by the reminder's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import NamedTuple, Protocol, assert_never

from ctxlab.core.messages.blocks import ZERO, DataBlock, Part, Tally, TextBlock, ToolResultBlock
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.tokens import TokenCounter


class TruncationTexts(Protocol):
    """The texts a truncation reminder is made of (`ctxlab.texts.Texts` has them)."""

    @property
    def tool_result_truncated(self) -> str:
        """The reminder, with an `{offload_reminder}` placeholder."""
        ...

    @property
    def tool_result_offload(self) -> str:
        """The sentence naming where the rest is, with a `{path}` placeholder."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultSplit:
    """A truncated tool result: the part kept in context and the part cut off."""

    kept: ToolResultBlock
    offloaded: ToolResultBlock


class _Cut(NamedTuple):
    """Both sides of a split after the boundary block was placed."""

    kept: tuple[Part, ...]
    offloaded: tuple[Part, ...]


def merge_text_parts(parts: Sequence[Part]) -> tuple[Part, ...]:
    """Merge each run of consecutive text parts into one, as a tool response accumulates.

    >>> T, D = TextBlock, DataBlock
    >>> merged = merge_text_parts((T(text="a"), T(text="b"), D(media_type="image/png", source="u"),
    ...                            T(text="c")))
    >>> [type(p).__name__ for p in merged], merged[0].text
    (['TextBlock', 'DataBlock', 'TextBlock'], 'ab')
    """
    merged: list[Part] = []
    for part in parts:
        if isinstance(part, TextBlock) and merged and isinstance(merged[-1], TextBlock):
            merged[-1] = TextBlock(text=merged[-1].text + part.text)
        else:
            merged.append(part)
    return tuple(merged)


def parts_tokens(parts: Sequence[Part], counter: TokenCounter) -> int:
    """Tokens of `parts` counted as the content of one message sent with no tools.

    >>> from ctxlab.core.messages.tokens import AgentScopeEstimator
    >>> parts_tokens((TextBlock(text="abcdef"), DataBlock(media_type="image/png", source="u")),
    ...              AgentScopeEstimator())
    2002
    """
    return counter.total(_sum_tallies(parts, counter), ())


def _sum_tallies(parts: Sequence[Part], counter: TokenCounter) -> Tally:
    total = ZERO
    for part in parts:
        total = total + counter.measure(part)
    return total


def split_tool_result(result: ToolResultBlock, limit: int, counter: TokenCounter) -> ResultSplit | None:
    """Split a tool result over `limit` tokens into a kept prefix and an offloaded rest.

    The boundary block is the one at the longest proper prefix counting strictly under `limit`,
    found by a linear scan from the end that never tests the empty prefix (so it defaults to the
    first block). A text boundary block is cut by characters in proportion to the token budget
    left; any other boundary block goes whole to the offloaded side.

    Args:
        result: The tool result, as saved (consecutive texts already merged, see
            `merge_text_parts`).
        limit: The per-result token limit (AgentScope's `tool_result_limit`); zero and negative
            limits are taken as they are.
        counter: The token counter.

    Returns:
        None when the result is kept whole: its tokens are at most `limit`, it has no output,
        or nothing would be cut off. Otherwise the split.
    """
    output = result.output
    if not output or parts_tokens(output, counter) <= limit:
        # An empty output over a negative limit makes AgentScope index past the end; keeping it
        # whole is the only sensible reading.
        return None
    index = _boundary_index(output, limit, counter)
    cut = _place_boundary(output[:index], output[index], output[index + 1 :], limit, counter)
    if not cut.offloaded:
        return None
    return ResultSplit(kept=_with_output(result, cut.kept), offloaded=_with_output(result, cut.offloaded))


def _boundary_index(output: tuple[Part, ...], limit: int, counter: TokenCounter) -> int:
    prefixes = tuple(accumulate((counter.measure(part) for part in output), initial=ZERO))
    for index in range(len(output) - 1, 0, -1):
        if counter.total(prefixes[index], ()) < limit:
            return index
    return 0


def _place_boundary(
    kept: tuple[Part, ...], block: Part, rest: tuple[Part, ...], limit: int, counter: TokenCounter
) -> _Cut:
    match block:
        case TextBlock():
            head, tail = _cut_text(kept, block, limit, counter)
            return _Cut(kept=_append_text(kept, head), offloaded=_prepend_text(tail, rest))
        case DataBlock():
            return _Cut(kept=kept, offloaded=(block, *rest))
        case _:
            assert_never(block)


class _Halves(NamedTuple):
    head: str
    tail: str


def _cut_text(kept: tuple[Part, ...], block: TextBlock, limit: int, counter: TokenCounter) -> _Halves:
    """Cut `block` so the kept characters match the budget's share of the block's tokens."""
    before = parts_tokens(kept, counter)
    delta = parts_tokens((*kept, block), counter) - before
    budget = limit - before
    length = len(block.text)
    # The same float expression as AgentScope, so rounding matches to the character.
    keep = (length if budget > 0 else 0) if delta <= 0 else int(budget / delta * length)
    keep = max(0, min(length, keep))
    return _Halves(head=block.text[:keep], tail=block.text[keep:])


def _append_text(parts: tuple[Part, ...], text: str) -> tuple[Part, ...]:
    if not text:
        return parts
    if parts and isinstance(parts[-1], TextBlock):
        return (*parts[:-1], TextBlock(text=parts[-1].text + text))
    return (*parts, TextBlock(text=text))


def _prepend_text(text: str, parts: tuple[Part, ...]) -> tuple[Part, ...]:
    if not text:
        return parts
    if parts and isinstance(parts[0], TextBlock):
        return (TextBlock(text=text + parts[0].text), *parts[1:])
    return (TextBlock(text=text), *parts)


def _with_output(result: ToolResultBlock, output: tuple[Part, ...]) -> ToolResultBlock:
    return ToolResultBlock(id=result.id, name=result.name, output=output, state=result.state)


def truncation_reminder(texts: TruncationTexts, path: str | None) -> str:
    """The reminder added to a truncated result; it names `path` when the rest was stored.

    Args:
        texts: The text set.
        path: Where the workspace stored the offloaded part, or None when there is no workspace.
            An empty path still gets the sentence, as AgentScope writes it for any offloader.

    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(tool_result_truncated="[cut{offload_reminder}]",
    ...                     tool_result_offload=" see {path}")
    >>> truncation_reminder(t, "r/1.txt"), truncation_reminder(t, None)
    ('[cut see r/1.txt]', '[cut]')
    """
    offload = "" if path is None else fill(texts.tool_result_offload, path=path)
    return fill(texts.tool_result_truncated, offload_reminder=offload)


def attach_reminder(kept: ToolResultBlock, reminder: str) -> ToolResultBlock:
    """`kept` with `reminder` appended to its last part's text, or as a new text part.

    >>> r = ToolResultBlock(id="c", name="t", output=(TextBlock(text="abc"),))
    >>> attach_reminder(r, "!").output
    (TextBlock(text='abc!'),)
    """
    output = kept.output
    if output and isinstance(output[-1], TextBlock):
        return _with_output(kept, (*output[:-1], TextBlock(text=output[-1].text + reminder)))
    return _with_output(kept, (*output, TextBlock(text=reminder)))
