"""The agentscope preset's agent features through the engine, with scripted models:
runtime-state injection and its edge cases, the task tools, the compression tool, the summary
circuit breaker and every summarizer failure mode. Every scripted test checks assert_complete()."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from ctxlab.core.agentscope.inject import InjectionParams
from ctxlab.core.messages.blocks import HintBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.model import ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedTurn
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop, RunOutcome
from ctxlab.models.scripted import ScriptedModel, Step
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS

FIELDS = dict.fromkeys(
    ("task_overview", "current_state", "important_discoveries", "next_steps", "context_to_preserve"), "x"
)
TOOL = ToolSchema.of("retrieve", "Retrieve.", {"type": "object"})
START = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)


def turn(text: str = "go", *, advance: float = 0, timezone: str | None = None) -> ScriptedTurn:
    return ScriptedTurn(user=(TextBlock(text=text),), advance_seconds=advance, timezone=timezone)


def call(cid: str, name: str = "retrieve", arguments: str = '{"q": 1}') -> ModelResponse:
    return ModelResponse(blocks=(ToolCallBlock(id=cid, name=name, input=arguments),))


def answer(text: str = "done") -> ModelResponse:
    return ModelResponse.of_text(text)


def play(
    turns: list[ScriptedTurn],
    steps: list[Step],
    *,
    params: AgentScopeParams | None = None,
    window: int = 100_000,
    results: dict[str, str] | None = None,
    summarizer: FixedSummarizer | None = None,
    breaker: int = 0,
) -> tuple[RunOutcome, ScriptedModel]:
    """Run turns answered by `steps`; tool calls get `results[id]` (or "ok") unless built in."""
    from ctxlab.core.world.script import ScriptedCall, ScriptedRound

    model = ScriptedModel(list(steps))
    calls = [
        ScriptedCall(
            tool=b.name,
            input=b.input,
            id=b.id,
            result=(TextBlock(text=(results or {}).get(b.id, "ok")),),
            error=(results or {}).get(b.id, "").startswith("Error"),
        )
        for s in steps
        if isinstance(s, ModelResponse)
        for b in s.calls
        if not b.name.startswith(("Task", "Compress"))
    ]
    script_turns = list(turns)
    if calls:  # the world's results live on the first turn's rounds; the model's queue drives the run
        script_turns[0] = replace(script_turns[0], rounds=(ScriptedRound(calls=tuple(calls)),))
    script = Script(system_prompt="You help.", tools=(TOOL,), turns=tuple(script_turns), start=START)
    env = Env(
        counter=AgentScopeEstimator(),
        model=model,
        summarizer=summarizer or FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=window,
        breaker_limit=breaker,
    )
    settings = RunSettings(
        max_iters_hint=CTXLAB_TEXTS.max_iters_hint, max_iters_source=CTXLAB_TEXTS.max_iters_source
    )
    loop = Loop(
        script=script,
        strategy=AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params or AgentScopeParams()),
        env=env,
        settings=settings,
    )
    outcome = loop.run()
    model.assert_complete()
    return outcome, model


def hints(outcome: RunOutcome) -> list[str]:
    return [b.text for m in outcome.state.context for b in m.blocks if isinstance(b, HintBlock)]


def events(outcome: RunOutcome) -> list[str]:
    return [str(e) for c in outcome.calls for e in c.events]


# --- time ---------------------------------------------------------------------------------------


def test_time_is_injected_first_then_only_after_the_interval() -> None:
    outcome, _ = play([turn(), turn(advance=600), turn(advance=1500)], [answer(), answer(), answer()])
    times = [h for h in hints(outcome) if "<current-time>" in h]
    # 09:00 first; 09:10 is within 0.5 h; 09:35 is 35 minutes after 09:00, so again.
    assert ["09:00:00" in times[0], "09:35:00" in times[1]] == [True, True] and len(times) == 2
    assert events(outcome).count("injected:current-time") == 2


def test_clock_going_backwards_reinjects() -> None:
    outcome, _ = play([turn(), turn(advance=-60)], [answer(), answer()])
    assert len([h for h in hints(outcome) if "<current-time>" in h]) == 2


def test_a_timezone_move_alone_does_not_reinject_and_shows_the_new_zone_later() -> None:
    outcome, _ = play([turn(), turn(timezone="Asia/Shanghai"), turn(advance=3600)], [answer()] * 3)
    times = [h for h in hints(outcome) if "<current-time>" in h]
    assert len(times) == 2
    assert "<timezone>Asia/Shanghai</timezone>" in times[1] and "18:00:00" in times[1]


def test_a_dateless_format_parses_back_to_1900_and_reinjects_every_step() -> None:
    params = AgentScopeParams(injection=InjectionParams(time_format="%H:%M"))
    outcome, _ = play([turn(), turn()], [call("c1"), answer(), answer()], params=params)
    assert len([h for h in hints(outcome) if "<current-time>" in h]) == 3


# --- context usage, tool errors, tasks, extras ---------------------------------------------------


def test_context_length_hint_only_at_the_first_iteration_inside_the_buffer() -> None:
    big = "x" * 2900  # 725 tokens: over (0.9 - 0.2) × 1000 = 700, under the 900 trigger
    outcome, _ = play(
        [turn(big)],
        [call("c1"), answer()],
        window=1000,
        params=AgentScopeParams(trigger_ratio=0.9, injection=InjectionParams()),
    )
    lengths = [h for h in hints(outcome) if "<context-length>" in h]
    assert len(lengths) == 1 and "900 tokens" in lengths[0]


def test_repeated_identical_failures_bring_the_tool_error_hint_with_a_growing_count() -> None:
    steps = [call(f"c{i}", arguments='{"q": "same"}') for i in range(4)] + [answer()]
    results = {f"c{i}": "Error: timeout" for i in range(4)}
    outcome, _ = play([turn()], steps, results=results)
    errors = [h for h in hints(outcome) if "<tool-error>" in h]
    assert len(errors) == 2 and "3 times" in errors[0] and "4 times" in errors[1]


def test_extra_fields_ride_along_but_never_trigger() -> None:
    params = AgentScopeParams(injection=InjectionParams(extra_fields=(("user", "Ada"),), time_interval=10))
    outcome, _ = play([turn(), turn(advance=60)], [answer(), answer()], params=params)
    assert len(hints(outcome)) == 1 and "<user>Ada</user>" in hints(outcome)[0]


def test_task_tools_keep_the_board_and_the_tasks_hint_returns_after_compression() -> None:
    params = AgentScopeParams(task_tools=True, trigger_ratio=0.5)
    steps = [
        call("t1", "TaskCreate", '{"subject": "A", "description": "do A"}'),
        call("t2", "TaskUpdate", '{"task_id": "1", "status": "in_progress"}'),
        call("t3", "TaskList", "{}"),
        call("t4", "TaskGet", '{"task_id": "9"}'),
        answer(),
        call("c1"),
        answer(),
    ]
    outcome, _ = play([turn(), turn("y" * 44000)], steps, params=params, window=20_000)
    assert [t.state for t in outcome.state.tasks] == ["in_progress"]
    assert outcome.compressions  # the task calls were compressed away...
    assert any("<tasks>" in h for h in hints(outcome))  # ...so the hint tells the agent again


def test_task_tools_reply_and_fail_cleanly() -> None:
    params = AgentScopeParams(task_tools=True)
    steps = [
        call("t1", "TaskCreate", '{"subject": "A", "description": "d"}'),
        call("t2", "TaskGet", '{"task_id": "9"}'),
        call("t3", "TaskUpdate", "{not json"),
        answer(),
    ]
    outcome, _ = play([turn()], steps, params=params)
    results = [b for b in outcome.state.context[-1].blocks if isinstance(b, ToolResultBlock)]
    assert [r.state for r in results] == ["success", "error", "error"]
    assert CTXLAB_TEXTS.task_created.split("{")[0] in results[0].text


# --- the compression tool -------------------------------------------------------------------------


def test_compression_tool_compresses_at_the_lowered_trigger_and_keeps_its_own_call() -> None:
    params = AgentScopeParams(compression_tool_enabled=True, trigger_ratio=0.8, context_buffer_ratio=0.5)
    steps = [call("c1"), call("z", "CompressContext", "{}"), answer()]
    outcome, _ = play([turn()], steps, params=params, window=10_000, results={"c1": "r" * 14000})
    # 3500+ tokens: below the automatic trigger (8000) but above the lowered one (3000).
    assert len(outcome.compressions) == 1
    reply = outcome.state.context[-1]
    kinds = [type(b).__name__ for b in reply.blocks]
    assert kinds[:2] == ["ToolCallBlock", "ToolResultBlock"]  # the running call and its result
    assert reply.blocks[1].text == CTXLAB_TEXTS.compress_succeeded  # type: ignore[union-attr]


def test_compression_tool_reports_too_short_by_message_count() -> None:
    params = AgentScopeParams(compression_tool_enabled=True)
    outcome, _ = play([turn()], [call("z", "CompressContext", "{}"), answer()], params=params)
    result = next(b for b in outcome.state.context[-1].blocks if isinstance(b, ToolResultBlock))
    assert result.text == CTXLAB_TEXTS.compress_unchanged and not outcome.compressions


# --- breaker and failure modes ------------------------------------------------------------------


def compressing(n: int) -> tuple[list[ScriptedTurn], list[Step]]:
    """n turns, each over the trigger (0.5) of a 4000-token window, leaving room for the summary
    request, so no overflow retry adds invocations."""
    return [turn("q" * 9600) for _ in range(n)], [answer() for _ in range(n)]


def test_breaker_stops_calling_the_summarizer_after_three_failures() -> None:
    turns, steps = compressing(5)
    failing = FixedSummarizer(fields=FIELDS, fail_on=frozenset(range(1, 20)), fail_mode="raise")
    params = AgentScopeParams(trigger_ratio=0.5)
    outcome, _ = play(turns, steps, params=params, window=4000, summarizer=failing, breaker=3)
    assert len(outcome.compressions) >= 4
    assert len(failing.requests) == 3  # then the fallback, without another summary call
    assert [c.summary_ok for c in outcome.compressions] == [False] * len(outcome.compressions)


def test_a_success_resets_the_breaker() -> None:
    turns, steps = compressing(5)
    flaky = FixedSummarizer(fields=FIELDS, fail_on=frozenset({1, 2, 4, 5}), fail_mode="raise")
    outcome, _ = play(
        turns, steps, params=AgentScopeParams(trigger_ratio=0.5), window=4000, summarizer=flaky, breaker=3
    )
    assert [c.summary_ok for c in outcome.compressions][:4] == [False, False, True, False]
    assert len(flaky.requests) == len(outcome.compressions)


@pytest.mark.parametrize(
    ("mode", "attempts"),
    [("no_tool_call", 3), ("empty", 3), ("malformed", 3), ("missing_field", 3), ("raise", 1)],
)
def test_each_failure_mode_costs_its_attempts(mode: str, attempts: int) -> None:
    turns, steps = compressing(1)
    summarizer = FixedSummarizer(fields=FIELDS, fail_on=frozenset({1}), fail_mode=mode)  # type: ignore[arg-type]
    outcome, _ = play(
        turns, steps, params=AgentScopeParams(trigger_ratio=0.5), window=4000, summarizer=summarizer
    )
    assert not outcome.compressions[0].overflow
    assert len([c for c in outcome.calls if c.kind == "summary"]) == attempts
    assert outcome.compressions[0].summary == CTXLAB_TEXTS.truncated_summary


def test_a_summarizer_with_a_small_window_overflows() -> None:
    small = FixedSummarizer(fields=FIELDS, window=500)
    outcome, _ = play(
        [turn("q" * 100_000)],
        [answer()],
        params=AgentScopeParams(trigger_ratio=0.5),
        window=40_000,
        summarizer=small,
    )
    assert not outcome.compressions[0].summary_ok


def test_read_cache_holds_read_files_until_their_reads_are_compressed_away() -> None:
    steps = [
        call("r1", "Read", '{"file_path": "a.py"}'),
        call("r2", "Read", '{"file_path": "b.py"}'),
        answer(),
        answer(),
    ]
    outcome, _ = play(
        [turn(), turn("q" * 9600)],
        steps,
        params=AgentScopeParams(trigger_ratio=0.5),
        window=4000,
        results={"r1": "A" * 40, "r2": "B" * 40},
    )
    assert outcome.compressions  # the second turn compressed the first reply away...
    assert outcome.state.read_cache == frozenset()  # ...so both files need a fresh read
    small, _ = play([turn()], steps[:3], results={"r1": "A", "r2": "B"})
    assert small.state.read_cache == frozenset({"a.py", "b.py"})
