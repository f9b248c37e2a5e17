"""Strategy comparison: the table copies the runs' measures, `safe` follows its definition, and
the picks and the answer follow from the table alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ctxlab.analysis import compare
from ctxlab.analysis.results import Results
from ctxlab.replay import run_document
from tests.analysis.conftest import retrieval


def test_table_copies_the_runs_and_marks_safe_runs(retrieval_results: Results, json_results: Results) -> None:
    table = compare.strategy_table([retrieval_results, json_results])
    assert len(table) == len(retrieval_results.runs) + len(json_results.runs)
    own = table[table["workload"] == "retrieval"].reset_index(drop=True)
    runs = retrieval_results.runs
    assert own["total tokens"].tolist() == runs["total_input_tokens"].tolist()
    assert own["over window"].tolist() == runs["over_window_calls"].tolist()
    assert own["preset"].tolist() == ["agentscope", "agentscope", "none"]
    assert (own["peak share"] == runs["peak_input_tokens"] / 6000).all()
    expected = (table["status"] == "ok") & (table["over window"] == 0) & (table["violations"] == 0)
    assert table["safe"].tolist() == expected.tolist()
    assert not own.loc[own["strategy"] == "none", "safe"].item()  # the whole history outgrows the window
    for _, group in table.groupby("workload"):
        assert group.loc[group["safe"], "cost vs best"].min() == pytest.approx(1.0)


def test_the_pick_keeps_the_most_then_costs_the_least(
    retrieval_results: Results, json_results: Results
) -> None:
    table = compare.strategy_table([retrieval_results, json_results])
    for pick in compare.picks(table):
        group = table[table["workload"] == pick.workload]
        safe = group[group["safe"]]
        best = safe[safe["retention"] == safe["retention"].max()].sort_values(
            ["cost", "total tokens", "strategy"]
        )
        assert pick.strategy == best.iloc[0]["strategy"]
        assert len(pick.unsafe) == int((~group["safe"]).sum())
    answer = "\n".join(compare.answer(table))
    assert "Ruled out: " in answer and "`none` (2 requests over the window)" in answer


def _row(workload: str, strategy: str, cost: float, *, safe: bool = True, **extra: Any) -> dict[str, Any]:
    row = {
        "workload": workload,
        "strategy": strategy,
        "preset": strategy,
        "cost": cost,
        "total tokens": int(cost * 1000),
        "peak share": 0.5,
        "cache hit rate": 0.9,
        "retention": 1.0,
        "status": "ok",
        "over window": 0 if safe else 3,
        "violations": 0,
        "bedrock violations": 0,
        "safe": safe,
    }
    return row | extra


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    table = pd.DataFrame(rows)
    best = table[table["safe"]].groupby("workload")["cost"].min()
    table["cost vs best"] = table["cost"] / table["workload"].map(best)
    return table


def test_retention_comes_before_cost_and_the_cheaper_one_is_named() -> None:
    table = _table([_row("a", "x", 2.0), _row("a", "y", 1.0, retention=0.5), _row("a", "z", 0.5, safe=False)])
    (line,) = compare.answer(table)
    assert line.startswith("- **a**: `x` — retention 100%, cost 2.0000")
    assert "`y` costs 50% less (1.0000) and is safe too, but keeps 50% of what was planted." in line
    assert line.endswith("Ruled out: `z` (3 requests over the window).")


def test_unmeasured_retention_ranks_below_measured() -> None:
    table = _table([_row("a", "x", 1.0, retention=float("nan")), _row("a", "y", 2.0, retention=0.0)])
    assert compare.picks(table)[0].strategy == "y"
    assert "retention not measured" in compare.answer(table.iloc[[0]])[0]


def test_start_from_the_strategy_safe_on_the_most_workloads() -> None:
    table = _table(
        [
            _row("a", "x", 1.0),
            _row("a", "y", 1.2),
            _row("b", "x", 2.2),
            _row("b", "y", 2.0),
            _row("b", "z", 1.0, safe=False),
            _row("c", "x", 1.0, safe=False),
            _row("c", "y", 1.5),
        ]
    )
    lines = compare.answer(table)
    assert lines[-2].startswith("- **Start from `y`**: safe on all 3 workloads it ran on (of 3)")
    assert lines[-1].startswith("- The cheapest where it was safe is `x` (1.05× on average")
    assert lines[-1].endswith("but it was unsafe on c: `x` (3 requests over the window).")


def test_no_strategy_safe_on_two_workloads() -> None:
    table = _table([_row("a", "x", 1.0), _row("b", "x", 1.0, safe=False), _row("b", "y", 2.0)])
    assert compare.answer(table)[-1].startswith(
        "- **No strategy was safe on two workloads or more** of the 2"
    )


def test_a_workload_without_a_safe_run_names_the_closest() -> None:
    table = _table([_row("a", "x", 1.0, safe=False, **{"over window": 1}), _row("a", "y", 0.5, safe=False)])
    (line,) = compare.answer(table)  # one workload: no line over all workloads
    assert "no strategy was safe" in line and "Closest: `x`" in line


def test_costlier_than_the_baseline_is_said_so() -> None:
    table = _table([_row("a", "x", 1.2, preset="agentscope"), _row("a", "none", 1.0, safe=False)])
    assert "20% more than sending everything" in compare.answer(table)[0]


def test_safe_runs_bedrock_would_refuse_are_named_last() -> None:
    table = _table(
        [
            _row("a", "x", 1.0, **{"bedrock violations": 4}),
            _row("b", "x", 1.0, **{"bedrock violations": 1}),
            _row("a", "y", 2.0),
            _row("a", "z", 0.5, safe=False, **{"bedrock violations": 9}),  # unsafe anyway: not named
        ]
    )
    lines = compare.answer(table)
    assert (
        lines[-1]
        == "- **On Bedrock**, the Converse API would refuse requests of these safe runs: `x` (a, b)."
    )
    assert compare.answer(_table([_row("a", "y", 2.0)]))[-1].startswith("- **a**")


def test_cost_vs_best_is_a_safe_runs_alone_and_one_where_every_safe_run_is_free() -> None:
    """A failed run stops early, so its cost is no measure against the others'; with zero prices
    every safe run is as cheap as the best."""
    table = pd.DataFrame([_row("a", "x", 2.0), _row("a", "y", 1.0), _row("a", "failed", 0.2, safe=False)])
    ratios = compare._cost_vs_best(table)
    assert ratios.iloc[:2].tolist() == [2.0, 1.0] and pd.isna(ratios.iloc[2])
    free = pd.DataFrame([_row("b", "x", 0.0), _row("b", "y", 0.0)])
    assert compare._cost_vs_best(free).tolist() == [1.0, 1.0]


def test_a_swept_window_makes_workloads_of_its_own_and_safe_on_counts_workloads(tmp_path: Path) -> None:
    """Runs of one scenario at two windows are two workloads: each is picked for and compared
    with its own cheapest run, and `safe on` counts workloads, not runs."""
    swept = {"sweep": {"model.context_size": [6000, 16000]}}
    document = retrieval("swept", context_size=6000, rounds=5) | swept
    table = compare.strategy_table([run_document(document, tmp_path)])
    assert list(dict.fromkeys(table["workload"])) == [
        "swept (model.context_size=6,000)",
        "swept (model.context_size=16,000)",
    ]
    assert [pick.workload for pick in compare.picks(table)] == list(dict.fromkeys(table["workload"]))
    ranking = compare.overall(table)
    assert ranking.loc["none", "workloads"] == 2 and ranking.loc["none", "safe on"] == 1  # over 6,000
    assert (ranking["safe on"] <= ranking["workloads"]).all()


def test_no_results_give_an_empty_table_every_answer_reads() -> None:
    table = compare.strategy_table([])
    assert table.empty and list(table.columns) == list(compare.COLUMNS)
    assert compare.picks(table) == [] and compare.answer(table) == [] and compare.overall(table).empty


def test_a_workload_label_tells_every_swept_value_apart_and_writes_null() -> None:
    assert [compare._exact(v) for v in (None, pd.NA, float("nan"), True, 20000, 1234567.0)] == [
        "null",
        "null",
        "null",
        "true",
        "20,000",
        "1,234,567",
    ]
    assert compare._exact(0.1234561) != compare._exact(0.1234564)  # one value_text writes as 0.123456
