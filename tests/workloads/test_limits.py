"""The filler one workload builds is bounded in total, not only item by item."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.problems import ScenarioError, WorkloadError
from ctxlab.scenarios.load import load_scenario
from ctxlab.workloads import limits
from ctxlab.workloads.filler import filler_at
from tests.scenarios.files import TINY, write


def test_a_budget_counts_every_item_and_refuses_past_its_total(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_WORKLOAD_BYTES", 1000)
    with limits.filler_budget():
        assert len(filler_at(0, "a", "prose", 600)) == 600
        with pytest.raises(WorkloadError, match="its filler adds up to over 1,000 bytes"):
            filler_at(0, "b", "prose", 401)
    with limits.filler_budget():  # each workload has its own
        assert len(filler_at(0, "b", "prose", 1000)) == 1000
    assert len(filler_at(0, "c", "prose", 5000)) == 5000  # no budget open: no bound


def test_a_workload_whose_items_add_up_past_the_total_is_a_located_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_WORKLOAD_BYTES", 10_000)
    text = TINY.replace("params: {rounds: 4}", "params: {rounds: 6, result_bytes: 2000}")
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    (problem,) = raised.value.problems
    assert str(problem).startswith(f"{path}:4:3: workload.generator: its filler adds up to over 10,000 bytes")
    assert load_scenario(write(tmp_path, text.replace("rounds: 6", "rounds: 4"))).name == "tiny"
