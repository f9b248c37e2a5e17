"""The agent loop with scripted models: order, storage, forced last step, compression paths."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctxlab.core.agentscope.inject import InjectionParams
from ctxlab.core.events import Event, EventKind
from ctxlab.core.messages.blocks import HintBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.model import ModelError, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.engine.middleware import Middleware
from ctxlab.models.scripted import ScriptedModel, ScriptModel, UnexpectedModelCall
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.compression import SummaryFailedError
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS

FIELDS = dict.fromkeys(
    ("task_overview", "current_state", "important_discoveries", "next_steps", "context_to_preserve"), "x"
)
TOOL = ToolSchema.of("retrieve", "Retrieve.", {"type": "object"})
QUIET = AgentScopeParams(injection=InjectionParams(inject_runtime_state=False))
"""The preset without runtime-state hints: these tests look at the loop's mechanics."""


def text(t: str) -> tuple[TextBlock, ...]:
    return (TextBlock(text=t),)


def scripted_call(size: int, error: bool = False) -> ScriptedCall:
    return ScriptedCall(tool="retrieve", input='{"q": 1}', result=text("r" * size), error=error)


def script(*rounds: ScriptedRound, turns: int = 1) -> Script:
    turn = ScriptedTurn(user=text("question"), rounds=rounds, final="answer")
    return assign_call_ids(Script(system_prompt="system", tools=(TOOL,), turns=(turn,) * turns))


def run(
    s: Script,
    *,
    window: int = 100_000,
    summarizer: FixedSummarizer | None = None,
    params: AgentScopeParams | None = None,
    max_iters: int = 50,
    model: object = None,
    middlewares: tuple[Middleware, ...] = (),
) -> Loop:
    env = Env(
        counter=AgentScopeEstimator(),
        model=model or ScriptModel(s),  # type: ignore[arg-type]
        summarizer=summarizer or FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=window,
    )
    strategy = AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params or QUIET)
    settings = RunSettings(
        max_iters=max_iters,
        max_iters_hint=CTXLAB_TEXTS.max_iters_hint,
        max_iters_source=CTXLAB_TEXTS.max_iters_source,
    )
    return Loop(script=s, strategy=strategy, env=env, settings=settings, middlewares=middlewares)


def test_parallel_round_is_stored_calls_first_in_one_reply_message() -> None:
    s = script(ScriptedRound(text="two at once", calls=(scripted_call(10), scripted_call(20, error=True))))
    outcome = run(s).run()
    _user, reply = outcome.state.context
    kinds = [type(b).__name__ for b in reply.blocks]
    assert kinds == [
        "TextBlock",
        "ToolCallBlock",
        "ToolCallBlock",
        "ToolResultBlock",
        "ToolResultBlock",
        "TextBlock",
    ]
    assert [b.state for b in reply.blocks if isinstance(b, ToolResultBlock)] == ["success", "error"]
    assert [c.kind for c in outcome.calls] == ["reasoning", "reasoning"]
    assert outcome.calls[1].tokens["as_sent"] > outcome.calls[0].tokens["as_sent"]
    assert all(not c.violations for c in outcome.calls)


def test_each_turn_is_a_new_reply_and_iterations_count_rounds() -> None:
    s = script(ScriptedRound(calls=(scripted_call(10),)), ScriptedRound(calls=(scripted_call(10),)), turns=2)
    outcome = run(s).run()
    assert [(c.turn, c.iteration) for c in outcome.calls] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert [m.role for m in outcome.state.context] == ["user", "assistant", "user", "assistant"]


def test_max_iters_forces_a_final_answer_without_tools() -> None:
    s = script(*[ScriptedRound(calls=(scripted_call(10),))] * 5)
    loop = run(s, max_iters=2)
    outcome = loop.run()
    model = loop.env.model
    assert isinstance(model, ScriptModel)
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "none"]
    hints = [b for b in outcome.state.context[-1].blocks if isinstance(b, HintBlock)]
    assert hints and "2" in hints[-1].text
    assert outcome.state.context[-1].blocks[-1] == TextBlock(text="answer")


def test_scripted_model_queue_and_assert_complete() -> None:
    s = script()
    queue = ScriptedModel([ModelResponse.of_text("a"), ModelResponse.of_text("b")])
    run(s, model=queue).run()
    with pytest.raises(AssertionError, match="1 of 2 scripted answers unused"):
        queue.assert_complete()
    with pytest.raises(UnexpectedModelCall, match="after all 0 scripted answers"):
        run(s, model=ScriptedModel([])).run()


def big_script() -> Script:
    return script(*[ScriptedRound(calls=(scripted_call(3000),))] * 4)


def test_compression_with_a_fixed_summary() -> None:
    outcome = run(big_script(), window=1000).run()
    kinds = [c.kind for c in outcome.calls]
    assert "summary" in kinds
    assert outcome.compressions and outcome.compressions[0].summary_ok
    assert outcome.state.summary.startswith("<system-info>")
    assert all(not c.violations for c in outcome.calls)


def test_failed_invocation_makes_three_attempts_and_the_overflow_retry_one_more_invocation() -> None:
    # The summary request plus its schema tool is over the window, so the overflow flag is set:
    # after the failed first invocation (3 attempts), the retry without the oldest messages succeeds.
    outcome = run(
        big_script(), window=1000, summarizer=FixedSummarizer(fields=FIELDS, fail_on=frozenset({1}))
    ).run()
    assert outcome.compressions[0].overflow
    summaries = [c for c in outcome.calls if c.kind == "summary"]
    assert [c.call_index for c in summaries[:4]] == list(
        range(summaries[0].call_index, summaries[0].call_index + 4)
    )
    retry = Event(EventKind.OVERFLOW_RETRY)
    assert retry in summaries[3].events and retry not in summaries[2].events
    assert outcome.compressions[0].summary_ok


def test_when_every_invocation_fails_the_truncation_text_becomes_the_summary() -> None:
    summarizer = FixedSummarizer(fields=FIELDS, fail_on=frozenset({1, 2}))
    outcome = run(big_script(), window=1000, summarizer=summarizer).run()
    assert not outcome.compressions[0].summary_ok
    assert outcome.compressions[0].summary == CTXLAB_TEXTS.truncated_summary
    assert [c.kind for c in outcome.calls].count("summary") >= 6


def test_a_raising_summarizer_makes_one_attempt() -> None:
    summarizer = FixedSummarizer(fields=FIELDS, fail_on=frozenset({1}), fail_mode="raise")
    params = replace(QUIET, trigger_ratio=0.5)
    outcome = run(big_script(), window=3000, summarizer=summarizer, params=params).run()
    assert not outcome.compressions[0].overflow  # so no retry follows
    kinds = [c.kind for c in outcome.calls]
    first = kinds.index("summary")
    assert kinds[first + 1] == "reasoning"


def test_without_fallback_a_failed_summary_raises_and_keeps_the_context() -> None:
    summarizer = FixedSummarizer(fields=FIELDS, fail_on=frozenset({1, 2}), fail_mode="raise")
    params = replace(QUIET, compression_fallback_to_truncation=False)
    with pytest.raises(SummaryFailedError, match="summarizer unavailable"):
        run(big_script(), window=3000, summarizer=summarizer, params=params).run()


def test_model_errors_propagate() -> None:
    s = script()
    with pytest.raises(ModelError):
        run(s, model=ScriptedModel([ModelError("down")])).run()


def test_unknown_tool_gets_an_error_result() -> None:
    s = script()
    call = ToolCallBlock(id="zz", name="nope", input="{}")
    outcome = run(s, model=ScriptedModel([ModelResponse(blocks=(call,)), ModelResponse.of_text("ok")])).run()
    result = next(b for b in outcome.state.context[-1].blocks if isinstance(b, ToolResultBlock))
    assert result.state == "error" and "not available" in result.text


def test_a_compression_is_all_or_nothing() -> None:
    # A summary template naming a field the summary lacks raises while applying: the state the
    # compression started from is returned untouched by the failure, and nothing was offloaded.
    from ctxlab.core.messages.message import text_message
    from ctxlab.engine.state import EpisodeState, append_message
    from ctxlab.engine.workspace import InMemoryWorkspace
    from ctxlab.presets.agentscope.compression import CompressionSettings, compress_if_triggered

    workspace = InMemoryWorkspace()
    env = Env(
        counter=AgentScopeEstimator(),
        model=ScriptedModel([]),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=1000,
        workspace=workspace,
    )
    start = EpisodeState(clock=run(script()).run_clock())
    state = append_message(start, text_message("user", "u" * 4000), env.counter)
    settings = CompressionSettings(
        compression_prompt="P", summary_template="{no_such_field}", summary_schema=CTXLAB_TEXTS.summary_schema
    )
    before = (state.summary, state.context, state.context_tally)
    with pytest.raises(KeyError, match="no_such_field"):
        compress_if_triggered(state, env, settings, system_prompt="s", tools=())
    assert (state.summary, state.context, state.context_tally) == before
    assert workspace.files == {} and env.recorder.compressions == []
    applied = compress_if_triggered(
        state, env, replace(settings, summary_template="{task_overview}"), system_prompt="s", tools=()
    )
    assert applied.summary.startswith("x") and list(workspace.files) == ["offload/context-0001.json"]


def test_evolve_is_dataclass_replace() -> None:
    import datetime as dt

    from ctxlab.core.messages.message import text_message
    from ctxlab.engine.clock import VirtualClock
    from ctxlab.engine.state import EpisodeState, evolve

    state = EpisodeState(clock=VirtualClock(instant=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)), turn=3)
    changes = {"context": (text_message("user", "hi"),), "cur_iter": 2, "memos": (("k", 1),)}
    assert evolve(state, **changes) == replace(state, **changes)  # type: ignore[arg-type]
    assert evolve(state) == state and evolve(state) is not state
    with pytest.raises(TypeError, match="no field 'turns'"):
        evolve(state, turns=1)
