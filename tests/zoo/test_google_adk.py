"""The Google ADK presets without ADK: their config checks, the session's ranges, what a run records.

Call-for-call parity with the installed package is `tests/parity/test_adk_parity.py`.
"""

from __future__ import annotations

import json

import pytest

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.message import text_message
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.engine.session import run_script
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.google_adk import session
from ctxlab.presets.google_adk.preset import AdkParams, EventsCompactionConfig, build
from ctxlab.texts import CTXLAB_TEXTS
from tests.parity.openhands_workloads import TOOLS


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({}, "at least one compaction trigger"),
        ({"compaction_interval": 2}, "compaction_interval and overlap_size"),
        ({"token_threshold": 10}, "token_threshold and event_retention_size"),
        ({"compaction_interval": 0, "overlap_size": 0}, "compaction_interval must be at least 1"),
        ({"token_threshold": 5, "event_retention_size": -1}, "event_retention_size must be at least 0"),
    ],
)
def test_the_config_is_checked_as_adk_checks_it(given: dict[str, int], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        EventsCompactionConfig(**given)


def raw(count: int) -> tuple[session.RawEvent, ...]:
    return session.events_of(tuple(text_message("user", f"m{k}") for k in range(count)), list(range(count)))


def test_a_containing_range_supersedes_the_ranges_it_contains() -> None:
    events = raw(6)
    inner = session.Compacted(start=1, end=2, text="A", after=2)
    outer = session.Compacted(start=1, end=4, text="B", after=4)
    partial = session.Compacted(start=3, end=5, text="C", after=5)
    assert session.surviving((inner, outer, partial)) == [1, 2]
    shown = session.effective(events, (inner, outer, partial))
    assert [getattr(x, "text", None) or x.ts for x in shown] == ["B", "C", 6]  # type: ignore[union-attr]


def script(turns: int) -> Script:
    return Script(
        system_prompt="You are a test.",
        tools=TOOLS[:1],
        turns=tuple(
            ScriptedTurn(
                user=(TextBlock(text=f"Task {t}"),),
                rounds=(
                    ScriptedRound(
                        text=None,
                        calls=(
                            ScriptedCall(
                                tool="run",
                                input=json.dumps({"command": f"ls {t}"}),
                                result=(TextBlock(text=f"out {t} " * 200),),
                                id=f"c{t}",
                            ),
                        ),
                    ),
                ),
                final=f"done {t}",
            )
            for t in range(turns)
        ),
    )


def test_a_window_compaction_is_recorded_with_the_requests_it_shrank() -> None:
    params = AdkParams(events_compaction_config=EventsCompactionConfig(compaction_interval=2, overlap_size=0))
    outcome = run_script(
        script(5),
        build(params, CTXLAB_TEXTS),
        model=ScriptModel(script(5)),
        summarizer=FixedSummarizer(fields={}, text="notes"),
        texts=CTXLAB_TEXTS,
        context_size=100_000,
    )
    kinds = "".join("S" if c.kind == "summary" else "r" for c in outcome.calls)
    assert kinds == "rrrrSrrrrSrr"  # after turns 2 and 4, shown before the next turn's first call
    assert [c.before_call for c in outcome.compressions] == [5, 10]  # the reasoning call after each summary
    assert all(c.tokens_after < c.tokens_before for c in outcome.compressions)
    # No call loses its result; a request opened by the summary (a model turn) is Bedrock's refusal.
    found = {(c.call_index, v.rule, v.index, v.kind) for c in outcome.calls for v in c.violations}
    after = [c.call_index for c in outcome.calls if c.kind == "reasoning" and c.call_index >= 5]
    assert found == {(i, "bedrock", 1, "assistant_first") for i in after}
