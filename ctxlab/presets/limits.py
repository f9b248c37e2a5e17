"""How many scripted rounds a reply can play under a strategy, and the setting that raises it.

A reply stops at its loop limit: AgentScope's `react.max_iters` forces an answer at that round
(a family may carry its own limit, the default of its entries' `react.max_iters`), and a
framework that counts its condensations as steps (OpenHands' `max_iterations`, Google ADK's
`max_llm_calls`) stops the reply after that many steps. A scripted turn with more rounds than
that never plays the rest; the scenario loader warns of it and `ctxlab replay` raises the limit
to fit the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlab.engine.hooks import Strategy
from ctxlab.presets.entries import StrategyEntry

STEP_LIMIT_SETTINGS = ("max_iterations", "max_llm_calls")
"""The entry settings that hold a family's step limit (OpenHands, Google ADK)."""


def loop_limit(entry: StrategyEntry) -> int:
    """Rounds per reply: the entry's `react.max_iters`, whose default is the family's own limit
    where it has one (`Preset.loop_limit`: LangChain's is far above any workload), else 50."""
    return entry.react.max_iters


@dataclass(frozen=True, slots=True)
class ReplyLimit:
    """The most scripted rounds one reply plays in full under a strategy.

    Attributes:
        rounds: under `react.max_iters` M, M rounds (a turn of exactly M gets a forced answer,
            as the framework gives it); under a step limit S, S - 1 (the answer is a step too,
            and a condensation takes one more); under a request limit R, R - 1 (the answer is a
            request too, and a summary one more).
        setting: the entry's dotted path that sets the limit.
        steps: whether it is a framework's own limit of steps or requests (condensations or
            summaries counted) rather than rounds.
        fails: whether the request past it ends the run with an error (pydantic-ai's request
            limit) rather than the reply.
    """

    rounds: int
    setting: str
    steps: bool
    fails: bool = False


def reply_limit(entry: StrategyEntry, strategy: Strategy) -> ReplyLimit:
    """What limits a reply of `strategy`, built from `entry`: a framework's step limit, else the
    tighter of its request limit (an entry's `request_limit`) and `react.max_iters`."""
    steps = getattr(strategy, "iteration_limit", None)
    if isinstance(steps, int):
        fields = type(entry).model_fields
        setting = next((name for name in STEP_LIMIT_SETTINGS if name in fields), "iteration limit")
        return ReplyLimit(rounds=steps - 1, setting=setting, steps=True)
    rounds = loop_limit(entry)
    requests = getattr(entry, "request_limit", None)
    if isinstance(requests, int) and requests - 1 < rounds:
        return ReplyLimit(rounds=requests - 1, setting="request_limit", steps=True, fails=True)
    return ReplyLimit(rounds=rounds, setting="react.max_iters", steps=False)
