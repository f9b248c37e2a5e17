"""A run takes back the workload its loading built: a generator's section is keyed with its
parameters resolved (as the run's config holds them), and loading builds a sweep's workloads
last to first, so the process keeps those of the first points the runs reach."""

from __future__ import annotations

from pathlib import Path

import pytest

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
