"""Observation masking and elision: old tool results replaced by a placeholder or a notice, per request.

Sources:
- `mask_observations`: the observation-masking condenser of OpenHands' first generation
  (`openhands/memory/condenser/impl/observation_masking_condenser.py`, config default
  `attention_window=100`), which the Complexity Trap study (arXiv:2508.21433) measures.
- `elide_observations`: SWE-agent `LastNObservations` (`sweagent/agent/history_processors.py`).

Invariants:
- Both are request views: apply them to the full stored history before each request (as
  OpenHands and SWE-agent do), not to their own output.
- Each call and its result stay in place, so no protocol rule is broken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.core.compaction.clearing import Clearing, replace_results, result_units
from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.units import (
    result_block,
    view_units,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ObservationMaskingParams:
    """OpenHands observation masking: results outside the last `attention_window` view messages
    (events, not observations) are masked (config default 100)."""

    attention_window: int = 100
    placeholder: str = "<observation masked>"


def mask_observations(
    messages: Sequence[Message], params: ObservationMaskingParams = ObservationMaskingParams()
) -> Clearing:
    """Mask every result whose view index is before `len(view) - attention_window`."""
    units = view_units(messages)
    edge = len(units) - params.attention_window
    masked = [u for u in result_units(units) if u.index < edge]
    return replace_results(messages, [(u, params.placeholder) for u in masked])


@dataclass(frozen=True, slots=True, kw_only=True)
class LastNObservationsParams:
    """SWE-agent `last_n_observations`.

    Attributes:
        n: observations kept in full (the paper: 5).
        polling: the kept count moves only every `polling` observations (SWE-agent: 1), which
            keeps between `n` and `n + polling` and breaks the cache less often.
        notice: what an elided result becomes; `{lines}` is its number of text lines.
        media_notice: appended when it held images or other data; `{count}` is how many.
    """

    n: int = 5
    polling: int = 1
    notice: str = "[earlier tool output elided: {lines} lines]"
    media_notice: str = " [{count} attachments elided]"


def elide_observations(
    messages: Sequence[Message], params: LastNObservationsParams = LastNObservationsParams()
) -> Clearing:
    """Replace all but the last `n` observations by a one-line notice.

    As in SWE-agent the first observation is never elided: SWE-agent's first observation is the
    task itself (its instance template); here it is the first user message, and every tool
    result after it is an observation.
    """
    units = view_units(messages)
    first_user = next((u.index for u in units if u.kind == "user"), None)
    observations = [u for u in units if u.kind == "result" or u.index == first_user]
    count = len(observations)
    last_removed = max(0, (count // params.polling) * params.polling - params.n)
    plan = [
        (u, _notice(result_block(messages, u), params))
        for u in observations[1:last_removed]
        if u.kind == "result"
    ]
    return replace_results(messages, plan)


def _notice(result: ToolResultBlock, params: LastNObservationsParams) -> str:
    lines = sum(len(p.text.splitlines()) for p in result.output if isinstance(p, TextBlock))
    data = sum(1 for p in result.output if isinstance(p, DataBlock))
    text = fill(params.notice, lines=lines)
    return text + fill(params.media_notice, count=data) if data else text
