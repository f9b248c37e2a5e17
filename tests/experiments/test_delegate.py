"""Sub-agents with their own strategy, window and summarizer (the `delegate:` section), their
calls in `calls.csv` beside the parent's, the sawtooth of both, and what delegating does to the
retention of facts the parent learned (the `delegated-retention` scenario)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ctxlab.analysis import agents, isolate
from ctxlab.analysis.folder_figures import draw_figures
from ctxlab.analysis.results import load_results, read_requests
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.world.script import Script, assign_call_ids
from ctxlab.engine.session import SubagentSetup, assemble
from ctxlab.experiments.execute import execute
from ctxlab.experiments.grid import expand
from ctxlab.experiments.results import write_scenario
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.presets.none.preset import PRESET as NONE
from ctxlab.problems import ScenarioError
from ctxlab.scenarios.load import load_scenario
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.gen_isolate import DelegatedResearchParams, delegated_research
from tests.scenarios.files import write

ROOT = Path(__file__).resolve().parents[2]

RESEARCH = """\
name: research
workload:
  generator: {name: delegated_research, params: {questions: 2, rounds: 3, result_bytes: 6000}}
model:
  context_size: 30000
strategies:
  - {name: agentscope, preset: agentscope}
"""


def configs(tmp_path: Path, text: str) -> list:  # type: ignore[type-arg]
    return list(expand(load_scenario(write(tmp_path, text))))


def test_without_a_delegate_section_a_run_config_and_its_hash_are_as_before(tmp_path: Path) -> None:
    plain = configs(tmp_path, RESEARCH)[0]
    assert "delegate" not in plain.config and not [k for k in plain.params if k.startswith("delegate")]
    given = configs(tmp_path, RESEARCH + "delegate: {context_size: 5000}\n")[0]
    assert given.config["delegate"] == {"strategy": None, "context_size": 5000, "summarizer": None}
    assert given.config_hash != plain.config_hash and given.params["delegate.context_size"] == 5000


def test_the_sub_agents_window_can_be_swept(tmp_path: Path) -> None:
    swept = configs(
        tmp_path, RESEARCH + "delegate: {context_size: 4000}\nsweep:\n  delegate.context_size: [4000, 8000]\n"
    )
    assert [c.config["delegate"]["context_size"] for c in swept] == [4000, 8000]
    assert [c.params["delegate.context_size"] for c in swept] == [4000, 8000]


def test_the_sub_agents_strategy_settings_can_be_swept(tmp_path: Path) -> None:
    swept = configs(
        tmp_path,
        RESEARCH
        + "delegate:\n  strategy: {preset: strands-sliding-window}\n"
        + "sweep:\n  delegate.strategy.window_size: [10, 20]\n",
    )
    assert [c.config["delegate"]["strategy"]["window_size"] for c in swept] == [10, 20]


def test_a_mistake_in_the_sub_agents_strategy_or_summarizer_is_reported_at_its_key(tmp_path: Path) -> None:
    text = RESEARCH + (
        "delegate:\n"
        "  strategy: {preset: strands-sliding-window, window_sise: 3}\n"
        "  summarizer: {kind: fixed, fieldz: 1}\n"
    )
    with pytest.raises(ScenarioError) as raised:
        load_scenario(write(tmp_path, text))
    strategy, summarizer = (str(p) for p in raised.value.problems)
    assert ":9:46: delegate.strategy.window_sise: unknown key" in strategy
    assert "did you mean 'window_size'?" in strategy  # the keys of the preset it names
    assert ":10:29: delegate.summarizer.fieldz: unknown key" in summarizer


def sub_rows(result: object) -> list[dict]:  # type: ignore[type-arg]
    return [r for r in result.calls if r["agent"] != "parent"]  # type: ignore[attr-defined]


def test_sub_agents_run_with_their_own_strategy_window_and_summarizer(tmp_path: Path) -> None:
    inherited = execute(configs(tmp_path, RESEARCH)[0])
    own = execute(
        configs(
            tmp_path,
            RESEARCH + "delegate:\n  strategy: {preset: none}\n  context_size: 4000\n",
        )[0]
    )
    assert inherited.status == own.status == "ok", own.error
    assert [r["agent"] for r in inherited.calls[: inherited.measures["calls"]]] == ["parent"] * int(
        inherited.measures["calls"]
    )
    assert [r for r in sub_rows(inherited) if r["over_window"]] == []  # 30000: nothing over
    over = [r for r in sub_rows(own) if r["over_window"]]
    assert over and not [r for r in sub_rows(own) if r["kind"] == "summary"]  # `none` never compresses
    assert [r["input_tokens"] for r in inherited.calls if r["agent"] == "parent"] == [
        r["input_tokens"] for r in own.calls if r["agent"] == "parent"
    ]  # the parent is the same run either way: only the findings come back
    squeezed = execute(configs(tmp_path, RESEARCH + "delegate: {context_size: 4000}\n")[0])
    assert [r for r in sub_rows(squeezed) if r["kind"] == "summary"]  # agentscope in 4000 compresses


def test_each_sub_agent_gets_a_summarizer_of_its_own() -> None:
    script = assign_call_ids(delegated_research(DelegatedResearchParams(questions=2, result_bytes=6000), 0))
    made: list[FixedSummarizer] = []

    def summarizer(sub: Script) -> FixedSummarizer:
        made.append(FixedSummarizer(fields={"task_overview": f"sub-agent {len(made)}"}))
        return made[-1]

    parent = FixedSummarizer(fields={"task_overview": "parent"})
    session = assemble(
        script,
        AgentScopeStrategy(texts=CTXLAB_TEXTS, params=AgentScopeParams()),
        model=ScriptModel(script),
        summarizer=parent,
        texts=CTXLAB_TEXTS,
        context_size=100_000,
        counter=AgentScopeEstimator(),
        subagent_model=ScriptModel,
        subagent=SubagentSetup(strategy=NONE.strategy(), context_size=3000, summarizer=summarizer),
    )
    session.run()
    children = session.loop.subagents
    assert len(made) == len(children) == 2 and [c.env.summarizer for c in children] == made
    assert all(c.env.context_size == 3000 and c.strategy.name == "none" for c in children)
    assert [c.delegated_at for c in children] == [0, 2]  # each turn: call 0 delegates, call 1 answers
    assert parent.requests == [] and all(s.requests == [] for s in made)  # nobody compressed


def test_sub_agent_calls_are_rows_of_calls_csv_and_the_runs_row_counts_them_apart(tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path, RESEARCH + "delegate: {context_size: 9000}\n"))
    configs_ = expand(loaded)
    folder = write_scenario(tmp_path / "out", loaded, configs_, [execute(c) for c in configs_]).folder
    results = load_results(folder)
    run = results.runs.iloc[0]
    subs = results.subagent_calls
    assert sorted(set(subs["agent"])) == ["sub-1", "sub-2"]
    assert subs.groupby("agent")["delegated_at"].nunique().tolist() == [1, 1]
    assert int(run["calls"]) == len(results.calls) and set(results.calls["agent"]) == {"parent"}
    assert int(run["subagent_calls"]) == len(subs)
    assert int(run["total_input_tokens"]) == int(results.calls["input_tokens"].sum())
    assert int(run["subagent_input_tokens"]) == int(subs["input_tokens"].sum())
    assert (subs["over_window"] == (subs["input_tokens"] > 9000)).all()  # the sub-agents' own window
    assert set(results.subagent_events["agent"]) <= set(subs["agent"])
    assert json.loads((folder / "manifest.json").read_text())["runs"][0]["delegate"]["context_size"] == 9000


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_sub_agent_s_requests_are_recorded_after_the_run_s_own(tmp_path: Path, wire: str) -> None:
    """The request file holds every call of `calls.csv`: the run's own, then each sub-agent's,
    naming its agent and the parent call that delegated to it, in each agent's own numbering."""
    loaded = load_scenario(write(tmp_path, RESEARCH + "record_requests: true\n"))
    configs_ = [replace(c, wire=wire) for c in expand(loaded)]
    folder = write_scenario(tmp_path / "out", loaded, configs_, [execute(c) for c in configs_]).folder
    results = load_results(folder)
    run_id = str(results.runs["run_id"].item())
    requests = read_requests(results, run_id, wire=wire)  # type: ignore[arg-type]
    own = [r for r in requests if "agent" not in r]
    subs = results.subagent_calls
    assert [r["call_index"] for r in own] == results.calls["call_index"].tolist()
    assert [(r["agent"], r["delegated_at"], r["call_index"]) for r in requests[len(own) :]] == list(
        zip(subs["agent"], subs["delegated_at"], subs["call_index"], strict=True)
    )
    assert len(subs) > 0 and all(r["messages"] for r in requests)


def test_the_timeline_puts_each_sub_agent_after_the_call_that_delegated_to_it() -> None:
    calls = pd.DataFrame({"agent": ["parent"] * 4, "call_index": [0, 1, 2, 3]})
    subs = pd.DataFrame(
        {
            "agent": ["sub-1", "sub-1", "sub-2", "sub-2.1"],
            "call_index": [0, 1, 0, 0],
            "delegated_at": [1, 1, 2, 0],
        }
    )
    assert agents.timeline(calls, subs).tolist() == [0, 1, 4, 7, 2, 3, 5, 6]


def test_the_sawtooth_of_a_run_with_sub_agents_draws_the_parent_and_each_of_them(tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path, RESEARCH + "delegate: {context_size: 9000}\n"))
    configs_ = expand(loaded)
    folder = write_scenario(tmp_path / "out", loaded, configs_, [execute(c) for c in configs_]).folder
    results = load_results(folder)
    run_id = str(results.runs.iloc[0]["run_id"])
    figure = agents.sawtooth(
        results.calls,
        results.events,
        results.subagent_calls,
        results.subagent_events,
        title="t",
        window=30000,
        subagent_window=9000,
    )
    axes = figure.axes[0]
    labels = axes.get_legend_handles_labels()[1]
    assert labels[0] == "parent" and "sub-agent sub-1" in labels and "sub-agent sub-2" in labels
    assert "sub-agent window 9,000" in labels
    drawn_lines = [line for line in axes.get_lines() if line.get_marker() in ("o", ".")]
    xs = sorted(int(x) for line in drawn_lines for x in np.asarray(line.get_xdata()))
    assert xs == list(range(len(results.calls) + len(results.subagent_calls)))
    drawn = draw_figures(results, tmp_path / "figures")
    assert tmp_path / "figures" / f"sawtooth-{run_id}.png" in drawn


def test_an_unknown_preset_for_the_sub_agents_is_located(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as error:
        load_scenario(write(tmp_path, RESEARCH + "delegate:\n  strategy: {preset: agentscop}\n"))
    assert "delegate" in str(error.value) and "agentscope" in str(error.value)


def test_delegating_searches_keeps_the_facts_the_agent_learned_that_inline_searches_lose(
    tmp_path: Path,
) -> None:
    """The `delegated-retention` scenario: findings carry planted facts; inline, the pages fill the
    window, compressions come and a half-recall summarizer loses some facts; delegated, the parent
    never compresses and keeps every finding verbatim."""
    loaded = load_scenario(ROOT / "scenarios" / "delegated-retention.yaml")
    configs_ = expand(loaded)
    ran = [execute(c) for c in configs_]
    by_variant = {
        c.config["workload"]["generator"]["params"]["delegate"]: r for c, r in zip(configs_, ran, strict=True)
    }
    inline, delegated = by_variant[False].measures, by_variant[True].measures
    assert inline["compressions"] > 0 and delegated["compressions"] == 0
    assert delegated["retention_facts"] == 1.0 > inline["retention_facts"]
    assert delegated["peak_input_tokens"] < inline["peak_input_tokens"] / 4
    assert delegated["subagent_calls"] > 0 and inline["subagent_calls"] == 0
    table = isolate.retention(load_results(write_scenario(tmp_path, loaded, configs_, ran).folder))
    assert table["retention_facts"].tolist() == [inline["retention_facts"], 1.0]
    assert "100% when they were delegated" in isolate.retention_answer(table)


def test_a_run_failed_by_its_sub_agent_says_so_in_its_error(tmp_path: Path) -> None:
    """The parent's row showed the sub-agent's error as if the parent had raised it."""
    text = RESEARCH + "delegate:\n  strategy: {preset: strands-summarizing}\n  context_size: 1500\n"
    result = execute(configs(tmp_path, text)[0])
    assert result.status == "failed"
    assert result.error.startswith("ContextOverflowError: Cannot summarize")
    assert result.error.endswith("(in the sub-agent call call-0001 delegated to)")
