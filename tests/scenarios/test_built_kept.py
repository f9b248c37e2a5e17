"""A run takes back the workload its loading built: a generator's section is keyed with its
parameters resolved (as the run's config holds them), and loading builds a sweep's workloads
last to first, so the process keeps those of the first points the runs reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.core.messages.blocks import DataBlock, TextBlock
from ctxlab.core.world.documents import Document
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, held_chars
from ctxlab.experiments.execute import execute
from ctxlab.experiments.grid import expand
from ctxlab.problems import ScenarioError
from ctxlab.scenarios import workload
from ctxlab.scenarios.load import load_scenario
from ctxlab.scenarios.workload import BUILT_KEPT, WorkloadSpec, forget_kept
from tests.scenarios.files import write

GENERATED = (
    "name: generated\nworkload:\n  generator: {name: swe_loop, params: {turns: 3}}\n"
    "model:\n  context_size: 16000\nstrategies:\n  - preset: none\n"
)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The seeds of the workloads built from here on (none kept before)."""
    built: list[int] = []
    real = WorkloadSpec._build

    def counted(self: WorkloadSpec, seed: int, files: object) -> workload.Workload:
        built.append(seed)
        return real(self, seed, files)  # type: ignore[arg-type]

    monkeypatch.setattr(WorkloadSpec, "_build", counted)
    forget_kept()
    return built


def test_a_generators_run_takes_the_workload_its_loading_built(tmp_path: Path, builds: list[int]) -> None:
    """The scenario leaves most parameters to their defaults, which the run's config fills in."""
    configs = expand(load_scenario(write(tmp_path, GENERATED)))
    assert configs[0].config["workload"]["generator"]["params"]["cycles"] is not None
    assert [execute(config).status for config in configs] == ["ok"]
    assert builds == [0]


def test_a_sweeps_first_runs_take_the_workloads_loading_built_last(tmp_path: Path, builds: list[int]) -> None:
    seeds = list(range(BUILT_KEPT + 2))
    path = write(tmp_path, GENERATED + f"sweep:\n  seed: {seeds}\n")
    configs = expand(load_scenario(path))
    assert builds == seeds[::-1]
    del builds[:]
    assert all(execute(config).status == "ok" for config in configs)
    assert builds == seeds[BUILT_KEPT:]  # the first BUILT_KEPT were kept from loading


def test_a_sweeps_workload_problems_are_told_in_grid_order(tmp_path: Path) -> None:
    """Built last to first, the problems still read from the first grid point on."""
    probe = '\n  probes: [{kind: fact, key: k, value: "v", where: "turn 5 user"}]'
    text = GENERATED.replace("params: {turns: 3}}", "params: {turns: 3}}" + probe)
    path = write(tmp_path, text + "sweep:\n  workload.generator.params.turns: [2, 3]\n")
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    messages = [p.message for p in refused.value.problems]
    assert len(messages) == 2 and "(there are 2)" in messages[0] and "(there are 3)" in messages[1], messages


def test_workloads_whose_text_passes_the_kept_budget_are_not_kept(
    tmp_path: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `KEPT_CHARS` only the newest workload stays: the sweep's first, built last."""
    monkeypatch.setattr(workload, "KEPT_CHARS", 1)
    path = write(tmp_path, GENERATED + "sweep:\n  seed: [0, 1, 2]\n")
    configs = expand(load_scenario(path))
    assert builds == [2, 1, 0] and [key[0] for key in workload._BUILT] == [0]
    del builds[:]
    assert all(execute(config).status == "ok" for config in configs)
    assert builds == [1, 2] and [key[0] for key in workload._BUILT] == [2]


def test_held_chars_counts_every_text_a_script_keeps_through_its_sub_agents() -> None:
    inner = Script(system_prompt="sub", turns=(ScriptedTurn(user=(TextBlock(text="task"),), final="done"),))
    call = ScriptedCall(
        tool="t",
        input='{"q":1}',
        result=(TextBlock(text="12345"), DataBlock(media_type="image/png", source="u")),
    )
    turn = ScriptedTurn(
        user=(TextBlock(text="hi"),),
        rounds=(
            ScriptedRound(text="ab", thinking="c", calls=(call, ScriptedCall(tool="d", delegate=inner))),
        ),
        final="end",
    )
    script = Script(system_prompt="sys", turns=(turn,), documents=(Document(id="d", text="doc"),))
    sub = len("sub") + len("task") + len("done")
    assert held_chars(script) == 3 + 2 + 2 + 1 + len('{"q":1}') + 5 + 1 + 2 + sub + 3 + 3
