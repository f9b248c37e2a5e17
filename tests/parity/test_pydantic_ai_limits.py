"""pydantic-ai's limit of 50 requests a run against the real agent (pydantic-ai-slim 2.62.0 with
pydantic-ai-harness 0.62.0): each user turn is a run; the harness's summary requests, a retried
blank one too, count among its requests and must leave room for the request already approved.
Found by replaying `traces/tau-bench_gpt-4o_airline_task02_trial1.jsonl` with a summary before
every request, where the run's 50th request was a summary (CHECKLIST PA17)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.parity.pa_driver import PAConfig
from tests.parity.test_pydantic_ai_parity import compact, compare
from tests.parity.workloads import retrieval_loop

SUMMARY_EACH_TIME = {"max_messages": 4, "keep_messages": 2}
"""A summary before every request from the third on: 2 rounds make 2 requests and 1 summary."""


@pytest.mark.parametrize(
    ("capability", "settings", "rounds", "refused"),
    [
        ("window", {"max_messages": 4, "keep_messages": 2}, 49, False),  # 50 requests: the last allowed
        ("window", {"max_messages": 4, "keep_messages": 2}, 50, True),
        ("clear", {"max_messages": 3, "keep_pairs": 1}, 50, True),
        ("summary", SUMMARY_EACH_TIME, 25, False),  # 26 reasoning requests and 24 summaries
        ("summary", SUMMARY_EACH_TIME, 26, True),  # the 51st request, a reasoning one, is refused
    ],
)
def test_a_run_makes_at_most_50_requests_summaries_included(
    capability: str, settings: dict[str, Any], rounds: int, refused: bool
) -> None:
    config = PAConfig(capability=capability, settings=settings)
    ours, theirs = compare(retrieval_loop([50] * rounds, encode=compact), config)
    assert (ours.error is not None) == (theirs.error is not None) == refused
    assert len(theirs.calls) == min(rounds + 1 + (rounds - 1) * (capability == "summary"), 50)


def test_a_retried_blank_summary_counts_and_a_summary_leaves_room_for_the_approved_request() -> None:
    config = PAConfig(capability="summary", settings=SUMMARY_EACH_TIME, answers=("  ",))
    ours, theirs = compare(retrieval_loop([50] * 24, encode=compact), config)  # the retry is a request
    assert ours.error is None and len(theirs.calls) == 49
    ours, theirs = compare(retrieval_loop([50] * 25, encode=compact), config)
    assert ours.error is not None and len(theirs.calls) == 49  # a 50th, a summary: no room left
    assert theirs.calls[-1].kind == "reasoning"


def test_each_turn_is_a_run_with_its_own_limit() -> None:
    config = PAConfig(capability="window", settings={"max_messages": 4, "keep_messages": 2})
    ours, theirs = compare(retrieval_loop([50] * 30, turns=2, encode=compact), config)
    assert ours.error is None and len(theirs.calls) == 62


@pytest.mark.parametrize(
    ("request_limit", "rounds", "refused"), [(60, 59, False), (60, 60, True), (None, 80, False)]
)
def test_a_run_s_request_limit_is_the_one_set(request_limit: int | None, rounds: int, refused: bool) -> None:
    """`request_limit` is pydantic-ai's `UsageLimits.request_limit`: another limit moves the
    refusal with it, and none refuses nothing (no round forces an answer either)."""
    config = PAConfig(
        capability="window", settings={"max_messages": 4, "keep_messages": 2}, request_limit=request_limit
    )
    ours, theirs = compare(retrieval_loop([50] * rounds, encode=compact), config)
    assert (ours.error is not None) == (theirs.error is not None) == refused
    assert len(theirs.calls) == (request_limit if refused else rounds + 1)
