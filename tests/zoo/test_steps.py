"""Strategies made of steps: composition, request-only edits and their events, the futile breaker."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.events import Event, EventKind
from ctxlab.core.messages.blocks import ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.units import view_units
from ctxlab.core.world.script import ScriptedRound
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame, RunSettings
from ctxlab.presets.freetext import FreeTextSummaryParams, SummarizeOldest
from ctxlab.presets.steps import StepStrategy, unit_keys
from ctxlab.presets.swe_agent.preset import LastNObservations
from ctxlab.texts import CTXLAB_TEXTS
from tests.zoo.runs import COUNTER, run, text, tool_call, turns
from tests.zoo_strategies import agent_histories

CLEARED = Event(EventKind.CLEARED)


def retrieve(k: int, size: int = 400) -> ScriptedRound:
    return ScriptedRound(calls=(tool_call("retrieve", f'{{"q": {k}}}', text(size, tag=str(k % 10))),))


def test_a_request_only_edit_records_its_event_only_when_it_clears_something_new() -> None:
    strategy = StepStrategy(name="mask", steps=(LastNObservations(LastNObservationsParams(n=1)),))
    ran = run(strategy, turns((retrieve(0), retrieve(1), retrieve(2)), ()))
    # Turn 1's calls see 0, 1, 2, 3 results; the first observation (the task) is never elided,
    # so with n = 1 the 2nd and 3rd calls elide one more each; turn 2's call elides nothing new.
    assert [c.events for c in ran.outcome.calls] == [(), (), (CLEARED,), (CLEARED,), ()]
    stored = [b for m in ran.outcome.state.context for b in m.blocks]
    assert all("elided" not in getattr(b, "text", "") for b in stored)  # the history keeps everything
    shown = [b for m in ran.sent()[-1] for b in m.blocks if isinstance(b, ToolResultBlock)]
    assert ["elided" in r.text for r in shown] == [True, True, False]


def test_the_view_is_pure_and_the_context_itself_when_nothing_edits() -> None:
    strategy = StepStrategy(name="mask", steps=(LastNObservations(LastNObservationsParams(n=1)),))
    ran = run(strategy, turns((retrieve(0), retrieve(1))))
    state = ran.outcome.state
    env = Env(
        counter=COUNTER, model=ran.model, summarizer=ran.summarizer, texts=CTXLAB_TEXTS, context_size=1000
    )
    frame = Frame(system_prompt="", tools=(), settings=RunSettings())
    first = strategy.view(state, env, frame)
    assert first == strategy.view(state, env, frame) and first != state.context
    assert StepStrategy(name="plain", steps=()).view(state, env, frame) is state.context


def test_a_request_is_worked_out_once_per_call_and_is_the_view_of_its_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The compression step's request is kept for the call (`Env.keep_view`): the same requests
    and events as working every view out anew, with one edit per call instead of two."""
    strategy = StepStrategy(name="mask", steps=(LastNObservations(LastNObservationsParams(n=1)),))
    workload = turns((retrieve(0), retrieve(1), retrieve(2)), (retrieve(3),))
    edits: list[int] = []
    original = LastNObservations.edit

    def counted(self: LastNObservations, *args: Any) -> Any:
        edits.append(1)
        return original(self, *args)

    monkeypatch.setattr(LastNObservations, "edit", counted)
    kept = run(strategy, workload)
    kept_edits = len(edits)
    monkeypatch.setattr(Env, "kept_view", lambda self, owner, state: None)
    anew = run(strategy, workload)
    assert kept.sent() == anew.sent() and kept.events() == anew.events()
    reasoning = sum(1 for c in kept.outcome.calls if c.kind == "reasoning")
    assert kept_edits == reasoning and len(edits) - kept_edits == 2 * reasoning


def test_steps_compose_masking_and_summary() -> None:
    summary = FreeTextSummaryParams(trigger=(ContextSize("messages", 12),), keep=ContextSize("messages", 4))
    strategy = StepStrategy(
        name="hybrid",
        steps=(SummarizeOldest(summary), LastNObservations(LastNObservationsParams(n=2))),
    )
    ran = run(strategy, turns(tuple(retrieve(k) for k in range(10))))
    assert "compressed" in ran.events() and "cleared" in ran.events()
    assert ran.outcome.state.summary and ran.violations() == []
    last = ran.sent()[-1]
    assert "Summary of the conversation to date" in str(last[1].blocks)


def failing_summary() -> StepStrategy:
    params = FreeTextSummaryParams(
        trigger=(ContextSize("messages", 4),), keep=ContextSize("messages", 2), keep_on_failure=True
    )
    return StepStrategy(name="stubborn", steps=(SummarizeOldest(params),))


def test_futile_compactions_are_flagged_then_stopped_until_the_next_turn() -> None:
    """OpenHands #8630, hermes-agent #53008: a compaction that cannot make progress repeats at every
    check; the zoo strategies stop after two flagged ones and try again at the next user turn."""
    script = turns(tuple(retrieve(k) for k in range(6)), tuple(retrieve(k) for k in range(6, 12)))
    ran = run(failing_summary(), script, fail_on=range(1, 100))
    summaries = [c for c in ran.outcome.calls if c.kind == "summary"]
    assert [c.turn for c in summaries] == [0, 0, 1, 1]  # two tries per turn, then stopped
    events = ran.events()
    assert events.count(EventKind.LOOP_WARNING) == 4 and events.count(EventKind.COMPACTION_STOPPED) == 2
    assert any("stops compacting after 2 futile compactions" in w for w in ran.outcome.warnings)


def test_without_the_breaker_a_futile_compaction_repeats_at_every_call() -> None:
    script = turns(tuple(retrieve(k) for k in range(6)))
    stubborn = failing_summary()
    unlimited = StepStrategy(name="unlimited", steps=stubborn.steps, futile_limit=0)
    ran = run(unlimited, script, fail_on=range(1, 100))
    reasoning = [c for c in ran.outcome.calls if c.kind == "reasoning"]
    summaries = [c for c in ran.outcome.calls if c.kind == "summary"]
    assert len(summaries) >= len(reasoning) - 3  # every call past the trigger asks again
    assert EventKind.COMPACTION_STOPPED not in ran.events()


def test_a_successful_compaction_resets_the_strikes() -> None:
    script = turns(tuple(retrieve(k) for k in range(8)))
    ran = run(failing_summary(), script, fail_on=(1,))  # one failure, then summaries succeed
    events = ran.events()
    assert events.count(EventKind.LOOP_WARNING) == 1 and EventKind.COMPACTION_STOPPED not in events
    assert ran.events().count("compressed") >= 2


@given(st.lists(st.tuples(agent_histories(), st.integers(0, 30), st.data()), min_size=1, max_size=4))
def test_unit_names_equal_a_plain_naming_as_histories_grow_and_change(
    runs: list[tuple[list[Message], int, st.DataObject]],
) -> None:
    for history, cut, data in runs:
        grown = [*history, *history[: cut % (len(history) + 1)]] * 4
        for end in (len(grown), len(grown) // 2, len(grown)):
            msgs = tuple(grown[:end])
            units = view_units(msgs)
            picked = data.draw(st.lists(st.integers(0, max(len(units) - 1, 0)), max_size=8)) if units else []
            plain = tuple(f"{msgs[units[i].message].id}:{units[i].start}:{units[i].kind}" for i in picked)
            assert unit_keys(msgs, tuple(picked)) == plain
