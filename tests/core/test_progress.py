"""No-progress compactions are flagged; the breaker stops repeated failures."""

from __future__ import annotations

from ctxlab.core.compaction.progress import (
    FUTILE_COMPACTION_LIMIT,
    SUMMARY_FAILURE_LIMIT,
    Breaker,
    ProgressParams,
    assess_compaction,
    compaction_floor,
)
from ctxlab.core.messages.message import text_message
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema


def test_a_compaction_reclaiming_under_one_percent_is_futile() -> None:
    futile = assess_compaction(before=100_000, after=99_600, floor=10_000, trigger=80_000)
    assert futile.futile and futile.flagged and futile.reclaimed == 400
    fine = assess_compaction(before=100_000, after=99_000, floor=10_000, trigger=80_000)
    assert not fine.futile and not fine.flagged  # exactly 1% is progress
    strict = assess_compaction(
        before=100_000, after=99_000, floor=0, trigger=1, params=ProgressParams(min_reclaim_ratio=0.05)
    )
    assert strict.futile


def test_a_floor_at_the_trigger_is_flagged_even_when_tokens_were_reclaimed() -> None:
    # kimi-code #2498: 29k of tool schemas against a lower threshold keep the trigger always true
    stuck = assess_compaction(before=90_000, after=30_000, floor=29_000, trigger=29_000)
    assert stuck.floor_at_trigger and stuck.flagged and not stuck.futile


def test_the_floor_counts_the_fixed_messages_the_tail_and_the_tools() -> None:
    counter = AgentScopeEstimator()
    tools = (ToolSchema.of("f", "d", {"type": "object"}),)
    fixed = [text_message("system", "s" * 40), text_message("user", "summary " * 10)]
    tail = [text_message("user", "latest")]
    assert compaction_floor(counter, fixed=fixed, tail=tail, tools=tools) == counter.count(
        [*fixed, *tail], tools
    )


def test_the_breaker_trips_after_consecutive_failures_and_stays_tripped() -> None:
    breaker = Breaker()
    assert breaker.limit == SUMMARY_FAILURE_LIMIT == 3
    breaker = breaker.record(False).record(False)
    assert breaker.strikes == 2 and not breaker.tripped
    assert breaker.record(True).strikes == 0  # a success resets the count (nonoka)
    tripped = breaker.record(False)
    assert tripped.tripped and tripped.record(True).tripped  # disabled for the rest of the run


def test_the_futility_breaker_gives_up_after_two() -> None:
    breaker = Breaker(limit=FUTILE_COMPACTION_LIMIT)
    assert breaker.record(False).record(False).tripped
