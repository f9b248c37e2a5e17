"""Cutoff choosers of the summarizing families: what to summarize, what to keep verbatim.

The summary call itself belongs to the engine; these functions only decide whether to summarize
and where to cut the stored context. Sources:

- `langchain_cut`: LangChain `SummarizationMiddleware` (langchain v1
  `agents/middleware/summarization.py`; reference docs: trigger None, keep `("messages", 20)`),
  with the safe cutoff of PR #34609 (a cut inside a call batch moves back to include the call).
  deepagents configures it with trigger `("fraction", 0.85)` and keep `("fraction", 0.10)`
  (`deepagents/middleware/summarization.py`): `DEEPAGENTS_SUMMARY`.

OpenHands' condenser decides over its own event view, in its preset (the SDK's rules).

Invariants:
- A cut never separates a call batch from its results (nor a result from its images): every
  returned piece holds whole protocol units, so no piece orphans anything.
- `head + summarize + keep` is the whole context, in order.
- None means: do not summarize now (not triggered, or nothing safe to summarize).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ctxlab.core.messages.blocks import ZERO, Tally
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
    unit_tallies,
)
from ctxlab.core.messages.units import (
    protocol_units,
    safe_cut,
    split_at_unit,
    view_units,
)


class ContextSize(NamedTuple):
    """A LangChain context size: a message count, a token count, or a fraction of the window."""

    kind: Literal["messages", "tokens", "fraction"]
    value: float


LANGCHAIN_KEEP = ContextSize("messages", 20)
"""LangChain's default tail: the last 20 messages."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryParams:
    """`SummarizationMiddleware` settings.

    Attributes:
        trigger: summarize when any condition holds (LangChain's default is none: never).
        keep: what stays verbatim after the cut (LangChain: the last 20 messages).
    """

    trigger: tuple[ContextSize, ...] = ()
    keep: ContextSize = LANGCHAIN_KEEP


DEEPAGENTS_SUMMARY = SummaryParams(
    trigger=(ContextSize("fraction", 0.85),), keep=ContextSize("fraction", 0.10)
)
"""deepagents' settings when the model's window is known."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryCut:
    """Where a summarizing family cuts the context.

    Attributes:
        head: kept verbatim before the summary (OpenHands' first events; empty for LangChain).
        summarize: what the summary replaces.
        keep: kept verbatim after the summary.
        start: view index where `summarize` starts.
        end: view index where `keep` starts.
    """

    head: tuple[Message, ...]
    summarize: tuple[Message, ...]
    keep: tuple[Message, ...]
    start: int
    end: int


def langchain_cut(
    messages: Sequence[Message],
    *,
    sizer: Sizer,
    params: SummaryParams = SummaryParams(),
    context_size: int | None = None,
) -> SummaryCut | None:
    """LangChain's decision: summarize everything before the kept tail when a trigger holds.

    Triggers compare with `>=`. Token triggers count the whole request (the sizer decides what
    that includes; LangChain itself counts the messages only). Token and fraction `keep`s count
    the kept view messages alone, as LangChain does.

    Raises:
        ValueError: a fraction trigger or keep without `context_size`.
    """
    units = view_units(messages)
    tallies = unit_tallies(messages, sizer.counter)
    tokens = sizer.count(messages)
    if not any(_holds(c, len(units), tokens, context_size) for c in params.trigger):
        return None
    cut = _keep_cut(tallies, params.keep, sizer, context_size)
    cut = safe_cut(protocol_units(units), cut)
    if cut <= 0:
        return None
    head, tail = split_at_unit(messages, units, cut)
    return SummaryCut(head=(), summarize=head, keep=tail, start=0, end=cut)


def _holds(condition: ContextSize, count: int, tokens: int, context_size: int | None) -> bool:
    kind, value = condition
    if kind == "messages":
        return count >= value
    if kind == "tokens":
        return tokens >= value
    return tokens >= int(_window(context_size, "trigger") * value)


def _window(context_size: int | None, where: str) -> int:
    if context_size is None:
        raise ValueError(
            f"summary {where} ('fraction', ...) needs the model's context size; pass context_size= "
            "or use ('tokens', N)"
        )
    return context_size


def _keep_cut(tallies: Sequence[Tally], keep: ContextSize, sizer: Sizer, context_size: int | None) -> int:
    """The naive cut: where the kept tail starts, before the protocol adjustment."""
    n = len(tallies)
    kind, value = keep
    if kind == "messages":
        return 0 if n <= value else n - int(value)
    target = int(value) if kind == "tokens" else int(_window(context_size, "keep") * value)
    suffix = [ZERO] * (n + 1)
    for k in range(n - 1, -1, -1):
        suffix[k] = suffix[k + 1] + tallies[k]
    return _token_cut(n, target, lambda k: sizer.counter.total(suffix[k], ()))


def _token_cut(n: int, target: int, tail_tokens: Callable[[int], int]) -> int:
    """LangChain's binary search for the smallest cut whose tail fits `target` tokens."""
    if n == 0 or tail_tokens(0) <= target:
        return 0
    left, right, candidate = 0, n, n
    for _ in range(n.bit_length() + 1):
        if left >= right:
            break
        mid = (left + right) // 2
        if tail_tokens(mid) <= target:
            candidate, right = mid, mid
        else:
            left = mid + 1
    if candidate == n:
        candidate = left
    if candidate >= n:
        return 0 if n == 1 else n - 1
    return candidate
