"""Observation elision: all but the last observations replaced by a one-line notice, per request.

Source: SWE-agent `LastNObservations` (`sweagent/agent/history_processors.py`; `n` required, 5 in
the paper and the 0.7 config). OpenHands' SDK has no observation masking; the Complexity Trap's
masking (`openhands-hybrid`) is this one.

Invariants:
- A request view: apply it to the full stored history before each request (as SWE-agent does),
  not to its own output.
- Each call and its result stay in place, so no protocol rule is broken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.core.compaction.clearing import Clearing, replace_results
from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.units import (
    result_block,
    view_units,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LastNObservationsParams:
    """SWE-agent `last_n_observations`.

    Attributes:
        n: observations kept in full; required and positive, as in SWE-agent (the paper: 5).
        polling: the kept count moves only every `polling` observations (SWE-agent: 1), which
            keeps between `n` and `n + polling` and breaks the cache less often.
        notice: what an elided result becomes; `{lines}` is its number of text lines.
        media_notice: appended when it held images or other data; `{count}` is how many.
    """

    n: int
    polling: int = 1
    notice: str = "[earlier tool output elided: {lines} lines]"
    media_notice: str = " [{count} attachments elided]"

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError(
                f"n={self.n}: SWE-agent keeps a positive number of observations (its own check); "
                "give n: 5 as in the paper, or another count above 0"
            )


def elide_observations(messages: Sequence[Message], params: LastNObservationsParams) -> Clearing:
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
