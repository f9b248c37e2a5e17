"""Free-text summary calls, and the loop warning for compactions that cannot make progress."""

from __future__ import annotations

import pytest

from ctxlab.core.agentscope.inject import InjectionParams
from ctxlab.core.compaction.progress import assess_compaction
from ctxlab.core.events import Event, EventKind
from ctxlab.core.messages.message import text_message
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.world.script import DEFAULT_START, Script, ScriptedRound
from ctxlab.engine.clock import VirtualClock
from ctxlab.engine.env import Env
from ctxlab.engine.progress import flag_progress, progress_warning
from ctxlab.engine.state import EpisodeState
from ctxlab.models.scripted import FunctionModel, ScriptModel
from ctxlab.models.summarizers import FailMode, FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS
from tests.zoo.runs import COUNTER, FIELDS, one_turn, run, text, tool_call

STATE = EpisodeState(clock=VirtualClock(instant=DEFAULT_START))
REQUEST = (text_message("user", "Summarize: ..."),)


def env(summarizer: object, breaker: int = 0) -> Env:
    return Env(
        counter=COUNTER,
        model=ScriptModel(Script(system_prompt="")),
        summarizer=summarizer,  # type: ignore[arg-type]
        texts=CTXLAB_TEXTS,
        context_size=1000,
        breaker_limit=breaker,
    )


def test_a_free_text_summary_is_one_call_without_tools() -> None:
    seen: list[ModelRequest] = []

    def answer(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        return ModelResponse.of_text("The notes.")

    e = env(FunctionModel(answer))
    outcome = e.summarize_text(STATE, REQUEST)
    assert outcome.text == "The notes." and outcome.error is None
    (request,) = seen
    assert request.kind == "summary" and request.tools == () and request.invocation == 1
    (record,) = e.recorder.calls
    assert record.kind == "summary" and set(record.tokens.values()) == {COUNTER.count(REQUEST, ())}
    assert record.cache_write_tokens == record.tokens["messages"]


@pytest.mark.parametrize("mode", ["no_tool_call", "empty", "raise"])
def test_blank_answers_and_model_errors_are_failures_the_breaker_counts(mode: FailMode) -> None:
    e = env(FixedSummarizer(fields=FIELDS, fail_on=frozenset({1, 2}), fail_mode=mode), breaker=2)
    first, second = e.summarize_text(STATE, REQUEST), e.summarize_text(STATE, REQUEST)
    assert first.text is None and second.text is None and first.error is not None
    third = e.summarize_text(STATE, REQUEST)
    assert third.skipped and third.text is None  # the breaker is open: no call at all
    assert len(e.recorder.calls) == 2 and e.consecutive_failures == 2


def test_a_success_resets_the_failure_count() -> None:
    e = env(FixedSummarizer(fields=FIELDS, fail_on=frozenset({1})), breaker=2)
    assert e.summarize_text(STATE, REQUEST).text is None
    assert e.summarize_text(STATE, REQUEST).text and e.consecutive_failures == 0


def test_a_flagged_compaction_adds_a_loop_warning_and_a_located_warning() -> None:
    e = env(FixedSummarizer(fields=FIELDS))
    futile = assess_compaction(before=10_000, after=9_950, floor=1_000, trigger=8_000)
    assert flag_progress(e, futile, "lab")
    assert not flag_progress(
        e, assess_compaction(before=10_000, after=4_000, floor=1_000, trigger=8_000), "lab"
    )
    assert e.recorder.pending_events == [Event(EventKind.LOOP_WARNING)]
    assert e.recorder.warnings == [progress_warning(futile, "lab", 0)]
    assert "0.5%" in e.recorder.warnings[0] and "floor" not in e.recorder.warnings[0]


QUIET = AgentScopeParams(injection=InjectionParams(inject_runtime_state=False))


def test_agentscope_flags_a_compaction_whose_floor_is_at_the_trigger_and_compresses_again() -> None:
    """kimi-code #2498 / pipecat #5505: a fixed floor at the trigger makes every check fire; the
    agentscope preset flags each compression but, as AgentScope, keeps compressing."""
    rounds = [ScriptedRound(calls=(tool_call("retrieve", "{}", text(800)),)) for _ in range(4)]
    script = one_turn(*rounds, system="s" * 3300)  # 825 tokens of a 1000-token window: trigger 800
    ran = run(AgentScopeStrategy(texts=CTXLAB_TEXTS, params=QUIET), script, window=1000)
    compressions = ran.outcome.compressions
    assert len(compressions) >= 4  # every call compresses again
    assert ran.events().count(EventKind.LOOP_WARNING) == len(compressions)
    assert all("at or above the trigger 800" in w for w in ran.outcome.warnings)
    assert all(c.floor_tokens == c.tokens_after >= 800 for c in compressions)


def test_agentscope_compressions_that_land_under_the_trigger_are_not_flagged() -> None:
    rounds = [ScriptedRound(calls=(tool_call("retrieve", "{}", text(2000)),)) for _ in range(6)]
    ran = run(AgentScopeStrategy(texts=CTXLAB_TEXTS, params=QUIET), one_turn(*rounds), window=2000)
    assert ran.outcome.compressions and EventKind.LOOP_WARNING not in ran.events()
    assert ran.outcome.warnings == ()
