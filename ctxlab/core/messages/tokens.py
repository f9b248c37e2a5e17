"""Token counting: the `TokenCounter` protocol and AgentScope's byte estimator.

Invariants:
- A counter is additive over blocks: `count(messages, tools) == total(sum of measure(block),
  tools)`. The engine keeps running tallies, so counting after an append costs O(new blocks) and
  a full recount is needed only after an edit.
- A counter is monotone: `total(tally, tools)` never decreases when either field of `tally`
  grows, so a window may search for where a shrinking context first fits.
- `AgentScopeEstimator` equals `agentscope` 2.0.11 `ChatModelBase.count_tokens`: every text piece
  (text, thinking, hint text, tool-call input, tool-result text) and the tool list's JSON are
  joined with no separator, and `(utf8_bytes + 2) // 4` is taken once on the total; every data
  block adds a flat 2000. Roles, names, ids and tool names are not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ctxlab.core.messages.blocks import ZERO, Block, Tally, sum_tallies, tally_of
from ctxlab.core.messages.memo import LeadingFold
from ctxlab.core.messages.message import Message, same_leading, same_trailing
from ctxlab.core.messages.tools import ToolSchema, tools_bytes

DATA_BLOCK_TOKENS = 2000
"""AgentScope's flat estimate for one image/audio/pdf block (`model/_base.py`)."""


class TokenCounter(Protocol):
    """Counts the tokens of a request: messages plus tool schemas."""

    def measure(self, block: Block) -> Tally:
        """The additive size of one block, in this counter's units."""
        ...

    def measure_message(self, message: Message) -> Tally:
        """The additive size of one message: the sum of its blocks' sizes."""
        ...

    def total(self, tally: Tally, tools: tuple[ToolSchema, ...]) -> int:
        """Tokens of content of size `tally` sent with `tools`."""
        ...

    def count(self, messages: Sequence[Message], tools: tuple[ToolSchema, ...]) -> int:
        """Tokens of `messages` sent with `tools`."""
        ...


def measure_all(counter: TokenCounter, messages: Sequence[Message]) -> Tally:
    """The summed size of `messages` under `counter`.

    A long history is summed by `LeadingFold`, resuming after the leading messages it shares
    with one summed before: a step that sizes the whole history pays for what changed.
    """
    if len(messages) > _SUMMED_DIRECTLY:
        return _summed(messages, ZERO, counter)
    nbytes = ndata = 0
    for message in messages:
        size = counter.measure_message(message)
        nbytes += size.nbytes
        ndata += size.ndata
    return tally_of((nbytes, ndata))


def measure_since(counter: TokenCounter, messages: Sequence[Message], first: int) -> Tally:
    """`measure_all` of `messages[first:]`, `0 <= first <= len(messages)`.

    A long sequence's is its whole sum less that of its first `first` messages, both read from
    the running sums kept for it: a window cut from the front of a long history costs what the
    history gained, not what the window keeps. The sizes are integers, so the difference is
    the sum itself.
    """
    if len(messages) > _SUMMED_DIRECTLY:
        before, whole = _summed.folds_at(messages, ZERO, first, len(messages), counter)
        return whole - before
    return measure_all(counter, messages[first:])


def measure_edit(counter: TokenCounter, edited: Sequence[Message], history: Sequence[Message]) -> Tally:
    """`measure_all` of `edited`, a request-only edit of `history`.

    An edit that changed the history's first messages (a window that cut its front, a summary
    put before what it keeps) mostly ends with the history's own messages: that trailing run is
    read off the history's running sums and only what comes before it is summed, so a window
    sliding along a long history costs what changed, not what it keeps. An edit that kept the
    first messages is summed by `measure_all`, which resumes after what it shares with the
    edit summed before.
    """
    if len(edited) > _SUMMED_DIRECTLY and same_leading(edited[:_PROBED], history[:_PROBED]) < _PROBED:
        run = same_trailing(edited, history)
        if 2 * run >= len(edited):
            head = measure_all(counter, edited[: len(edited) - run])
            return head + measure_since(counter, history, len(history) - run)
    return measure_all(counter, edited)


_PROBED = 4
"""An edit whose first this many messages are the history's is summed by `measure_all`."""


def _add_message(total: Tally, message: Message, counter: TokenCounter) -> Tally:
    size = counter.measure_message(message)
    return tally_of((total.nbytes + size.nbytes, total.ndata + size.ndata))


_summed = LeadingFold[Message, Tally](_add_message)
_SUMMED_DIRECTLY = 32
"""Messages summed in a plain loop: a short list costs less than looking for one to resume."""


def bytes_to_tokens(nbytes: int) -> int:
    """AgentScope's rounding: `int(nbytes / 4 + 0.5)`, i.e. round half up on the quarter.

    >>> [bytes_to_tokens(n) for n in (0, 1, 2, 5, 6)]
    [0, 0, 1, 1, 2]
    """
    return (nbytes + 2) // 4


@dataclass(frozen=True, slots=True)
class AgentScopeEstimator:
    """`agentscope` 2.0.11's `count_tokens`: UTF-8 bytes / 4, 2000 per data block."""

    data_block_tokens: int = DATA_BLOCK_TOKENS

    def measure(self, block: Block) -> Tally:
        """The block's cached tally (bytes of counted text, data blocks)."""
        return block.tally

    def measure_message(self, message: Message) -> Tally:
        """The message's cached tally."""
        return message.tally

    def total(self, tally: Tally, tools: tuple[ToolSchema, ...]) -> int:
        """Tokens of content of size `tally` sent with `tools`."""
        nbytes = tally.nbytes + tools_bytes(tools)
        return tally.ndata * self.data_block_tokens + bytes_to_tokens(nbytes)

    def count(self, messages: Sequence[Message], tools: tuple[ToolSchema, ...]) -> int:
        """Tokens of `messages` sent with `tools`.

        >>> from ctxlab.core.messages.message import text_message
        >>> AgentScopeEstimator().count([text_message("user", "abcdef")], ())
        2
        """
        return self.total(sum_tallies(messages), tools)

    def text_tokens(self, text: str) -> int:
        """Tokens of a lone text piece."""
        return bytes_to_tokens(len(text.encode("utf-8")))
