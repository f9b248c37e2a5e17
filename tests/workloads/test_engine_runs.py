"""Every workload source runs through the engine: each round is one reasoning call, plus one for
each final answer, and the requests break no protocol rule, with and without compression."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.world.script import Script, assign_call_ids
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.engine.session import assemble
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.generators import GENERATORS, generate
from ctxlab.workloads.trace import read_trace
from tests.workloads.test_trace import TRACES

FIELDS = dict.fromkeys(
    ("task_overview", "current_state", "important_discoveries", "next_steps", "context_to_preserve"), "x"
)
SMALL = {
    "long_conversation": {"turns": 30},
    "huge_read": {"tool_result_limit": 3000, "excess_tokens": 500},
    "task_list": {"tasks": 3},
}


def run(script: Script, window: int) -> Loop:
    script = assign_call_ids(script)
    settings = RunSettings(
        max_iters=200,
        max_iters_hint=CTXLAB_TEXTS.max_iters_hint,
        max_iters_source=CTXLAB_TEXTS.max_iters_source,
    )
    params = AgentScopeParams(tool_result_limit=3000)
    strategy = AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params)
    return assemble(
        script,
        strategy,
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=window,
        counter=AgentScopeEstimator(),
        settings=settings,
        subagent_model=ScriptModel,  # delegated_research's searches run in sub-agents
    ).loop


def check_run(script: Script, window: int) -> None:
    outcome = run(script, window).run()
    reasoning = [c for c in outcome.calls if c.kind == "reasoning"]
    assert len(reasoning) == sum(len(t.rounds) + 1 for t in script.turns)
    assert [c.violations for c in outcome.calls if c.violations] == []


@pytest.mark.parametrize("window", [1_000_000, 8_000])
@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generated_scripts_run(name: str, window: int) -> None:
    check_run(generate(name, SMALL.get(name), seed=0).script, window)


@pytest.mark.parametrize("name", TRACES)
def test_replayed_transcripts_run(traces_dir: Path, name: str) -> None:
    check_run(read_trace(traces_dir / name).script, 8_000)


@pytest.mark.parametrize("window", [1_000_000, 4_000])
def test_the_retrieval_generator_is_the_ch08_workload(window: int) -> None:
    """With the book's tool schema, the generated workload gives the ch08 reconstruction's series."""
    from tests.parity.ch08 import RETRIEVE, ch08_workload
    from tests.parity.lab import run_lab

    book, config = ch08_workload(window)
    params = {"tool_description": RETRIEVE.description, "tool_parameters": json.loads(RETRIEVE.parameters)}
    generated = assign_call_ids(generate("retrieval", params, seed=0).script)
    assert generated.tools == book.tools
    series = [[c.tokens for c in run_lab(s, config).calls] for s in (book, generated)]
    assert series[0] == series[1] and len(series[0]) == (7 if window > 4_000 else 9)
