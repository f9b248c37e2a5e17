"""A reply's loop limit against the rounds a workload scripts: the loader warns of every scripted
round a strategy never plays, and the warning counts exactly the rounds the run leaves out."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.experiments.execute import execute
from ctxlab.experiments.grid import expand
from ctxlab.presets.limits import ReplyLimit
from ctxlab.scenarios.load import LoadedScenario, load_scenario
from ctxlab.scenarios.rounds import RoundsCut, rounds_cut, scripted_rounds
from tests.scenarios.files import write

ROUND = "{calls: [{tool: look, result: seen}]}"


def scenario(rounds: list[int], strategies: list[str]) -> str:
    turns = "".join(
        f"      - user: Go {i}.\n        rounds: [{', '.join([ROUND] * n)}]\n        final: Done {i}.\n"
        for i, n in enumerate(rounds)
    )
    entries = "".join(f"  - {entry}\n" for entry in strategies)
    return (
        "name: limits\nworkload:\n  script:\n    system_prompt: Be terse.\n"
        "    tools: [{name: look, description: Look., parameters: {type: object, properties: {}}}]\n"
        f"    turns:\n{turns}model: {{context_size: 100000}}\nstrategies:\n{entries}"
    )


def cuts_of(loaded: LoadedScenario) -> list[RoundsCut]:
    scenario = loaded.scenario
    return rounds_cut(
        scenario.strategies, scripted_rounds(scenario.workload.build(scenario.seed, loaded.files))
    )


def test_each_strategy_whose_limit_cuts_a_turn_is_warned_of_at_its_setting(tmp_path: Path) -> None:
    entries = [
        "{name: a, preset: agentscope, react: {max_iters: 2}}",
        "{name: o, preset: openhands, max_iterations: 3}",
        "{name: l, preset: langchain-clear}",  # LangGraph's own limit, far above
        "{name: n, preset: none, react: {max_iters: 4}}",  # plays all 4, its answer forced
    ]
    path = write(tmp_path, scenario([4, 1, 3], entries))
    loaded = load_scenario(path)
    assert [str(w) for w in loaded.warnings] == [
        f"{path}:18:43: strategies[0].react.max_iters: warning: turn 0 scripts 4 rounds, but agentscope "
        "plays at most 2 a reply (react.max_iters): 3 scripted rounds in 2 turns are never played, the "
        "reply is made to answer first; set react.max_iters: 5 to play every round",
        f"{path}:19:34: strategies[1].max_iterations: warning: turn 0 scripts 4 rounds, but openhands "
        "plays at most 2 a reply (max_iterations): 3 scripted rounds in 2 turns are never played, the "
        "reply stops first; set max_iterations: 5 to play every round",
    ]
    (cut, _) = cuts_of(loaded)
    assert (cut.strategy, cut.limit, cut.turn, cut.needed) == (
        0,
        ReplyLimit(2, "react.max_iters", False),
        0,
        5,
    )


def test_a_workload_within_every_limit_loads_without_a_warning(tmp_path: Path) -> None:
    entries = ["{preset: agentscope, react: {max_iters: 3}}", "{preset: openhands, max_iterations: 4}"]
    assert load_scenario(write(tmp_path, scenario([3, 0, 2], entries))).warnings == ()


@settings(max_examples=15, deadline=None)
@given(
    rounds=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    max_iters=st.integers(1, 6),
    steps=st.integers(1, 7),
)
def test_the_rounds_a_warning_counts_are_the_rounds_the_run_leaves_out(
    tmp_path_factory: object, rounds: list[int], max_iters: int, steps: int
) -> None:
    folder = tmp_path_factory.mktemp("limits")  # type: ignore[attr-defined]
    entries = [
        f"{{name: a, preset: agentscope, react: {{max_iters: {max_iters}}}}}",
        f"{{name: o, preset: openhands, max_iterations: {steps}}}",
    ]
    loaded = load_scenario(write(folder, scenario(rounds, entries)))
    unplayed = {cut.strategy: cut.unplayed for cut in cuts_of(loaded)}
    for i, config in enumerate(expand(loaded)):
        result = execute(config)
        assert result.status == "ok", result.error
        calls = sum(1 for row in result.calls if row["kind"] == "reasoning")
        assert calls == sum(n + 1 for n in rounds) - unplayed.get(i, 0), json.dumps(result.measures)


def delegating(sub_rounds: int, strategies: list[str], delegate: str = "") -> str:
    """One call that delegates a one-turn script of `sub_rounds` rounds."""
    sub = f"{{tools: [{{name: look}}], turns: [{{user: Sub., rounds: [{', '.join([ROUND] * sub_rounds)}]}}]}}"
    entries = "".join(f"  - {entry}\n" for entry in strategies)
    return (
        "name: sub-limits\nworkload:\n  script:\n    tools: [{name: look}]\n    turns:\n"
        f"      - user: Go.\n        rounds: [{{calls: [{{tool: look, delegate: {sub}}}]}}]\n"
        f"model: {{context_size: 100000}}\nstrategies:\n{entries}{delegate}"
    )


def test_a_sub_agents_script_is_warned_of_under_the_limit_it_runs_with(tmp_path: Path) -> None:
    parent = write(tmp_path, delegating(4, ["{name: a, preset: agentscope, react: {max_iters: 2}}"]))
    (warning,) = load_scenario(parent).warnings
    assert str(warning) == (
        f"{parent}:10:43: strategies[0].react.max_iters: warning: a sub-agent's script: turn 0 scripts 4 "
        "rounds, but agentscope plays at most 2 a reply (react.max_iters): 2 scripted rounds in 1 turn "
        "are never played, the reply is made to answer first; set react.max_iters: 5 to play every round"
    )
    own = "delegate:\n  strategy: {name: sub, preset: agentscope, react: {max_iters: 3}}\n"
    path = write(tmp_path, delegating(4, ["{name: a, preset: agentscope}"], own), "own.yaml")
    (warning,) = load_scenario(path).warnings
    assert f"{path}:12:53: delegate.strategy.react.max_iters: warning: a sub-agent's script:" in str(warning)
    assert "1 scripted round in 1 turn is never played" in str(warning)
    result = execute(expand(load_scenario(path))[0])
    sub_calls = sum(1 for row in result.calls if row["kind"] == "reasoning" and row["agent"] != "parent")
    assert (result.status, sub_calls) == ("ok", 4)  # 3 of the 4 rounds, then the forced answer
    fitting = delegating(4, ["{name: a, preset: agentscope, react: {max_iters: 5}}"])
    fits = write(tmp_path, fitting, "fits.yaml")
    assert load_scenario(fits).warnings == ()
