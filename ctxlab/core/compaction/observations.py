"""Observation elision: all but the last observations replaced by a one-line notice, per request.

Source: SWE-agent `LastNObservations` (`sweagent/agent/history_processors.py`; `n` required, 5 in
the paper and the 0.7 config). OpenHands' SDK has no observation masking; the Complexity Trap's
masking (`openhands-hybrid`) is this one.

What counts as an observation, as SWE-agent counts them: one per step. The first user message
stands for SWE-agent's instance template (its first observation, never elided); then every round
of tool calls is one step, whose results are its observation. SWE-agent's function calling takes
one call per step, so its steps have one result; a ctxlab round of parallel calls counts once and
its results are elided together, each with its own notice.

Invariants:
- A request view: apply it to the full stored history before each request (as SWE-agent does),
  not to its own output.
- Each call and its result stay in place, so no protocol rule is broken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxlab.core.compaction.clearing import Clearing, replace_results
from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolResultBlock
from ctxlab.core.messages.memo import IdentityMemo
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.units import ViewUnit, protocol_units, result_block, view_units


@dataclass(frozen=True, slots=True, kw_only=True)
class LastNObservationsParams:
    """SWE-agent `last_n_observations`.

    Attributes:
        n: observations (steps) kept in full; required and positive, as in SWE-agent (the paper: 5).
        polling: the kept count moves only every `polling` observations (SWE-agent: 1), which
            keeps between `n` and `n + polling` and breaks the cache less often.
        keep_tools: results of these tools are always kept, as SWE-agent keeps an observation
            tagged `keep_output` (ctxlab's messages carry no tags: the tool's name stands for
            the tag; off by default).
        remove_tools: results of these tools are always elided, even among the last `n`, as
            SWE-agent elides an observation tagged `remove_output`; removal wins over keeping.
        notice: what an elided result becomes; `{lines}` is its number of text lines.
        media_notice: appended when it held images; `{count}` is how many.
    """

    n: int = field(metadata={"suggest": "n: 5, the SWE-agent paper's value"})
    polling: int = 1
    keep_tools: tuple[str, ...] = ()
    remove_tools: tuple[str, ...] = ()
    notice: str = "[earlier tool output elided: {lines} lines]"
    media_notice: str = " [{count} images elided]"

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError(
                f"n={self.n}: SWE-agent keeps a positive number of observations (its own check); "
                "give n: 5 as in the paper, or another count above 0"
            )
        if self.polling <= 0:
            raise ValueError(f"polling={self.polling}: use 1 (every step) or more")


def observation_steps(messages: Sequence[Message]) -> list[tuple[ViewUnit, ...]]:
    """The observations of `messages` in order, as SWE-agent counts them (see the module).

    Each is a tuple of view units: the first user message alone, or the results of one round.
    """
    units = view_units(messages)
    first_user = next((u.index for u in units if u.kind == "user"), None)
    steps: list[tuple[ViewUnit, ...]] = []
    for group in protocol_units(units):
        members = [units[i] for i in group.units]
        results = tuple(u for u in members if u.kind == "result")
        if results:
            steps.append(results)
        elif group.first == first_user:
            steps.append((units[first_user],))
    return steps


def elide_observations(messages: Sequence[Message], params: LastNObservationsParams) -> Clearing:
    """Replace all but the last `n` observations by a one-line notice.

    As in SWE-agent the first observation is never elided by the window: SWE-agent's first
    observation is the task itself (its instance template); here it is the first user message.
    Results of `keep_tools` escape the window, results of `remove_tools` are always elided.
    """
    steps = observation_steps(messages)
    last_removed = max(0, (len(steps) // params.polling) * params.polling - params.n)
    windowed = {u.index for step in steps[1:last_removed] for u in step}
    plan = []
    for unit in (u for step in steps for u in step if u.kind == "result"):
        result = result_block(messages, unit)
        kept = unit.index not in windowed or result.name in params.keep_tools
        if not kept or result.name in params.remove_tools:
            plan.append((unit, _notice(result, params)))
    return replace_results(messages, plan)


def _count_notice(result: ToolResultBlock, params: LastNObservationsParams) -> str:
    """SWE-agent's count: text lines of the text parts, and the images (other data not counted)."""
    lines = sum(len(p.text.splitlines()) for p in result.output if isinstance(p, TextBlock))
    images = sum(1 for p in result.output if isinstance(p, DataBlock) and p.is_image)
    text = fill(params.notice, lines=lines)
    return text + fill(params.media_notice, count=images) if images else text


_notice = IdentityMemo[ToolResultBlock, str](_count_notice)
"""`_count_notice`, worked out once per result object and parameters: the window elides the
same old results at every step."""
