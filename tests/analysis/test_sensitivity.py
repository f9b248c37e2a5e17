"""Regimes of swept runs: the first that applies, where each occurs, and the cheapest working run."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from ctxlab.analysis import sensitivity
from ctxlab.analysis.results import Results


def _run(**values: Any) -> pd.Series:
    base = {
        "status": "ok",
        "loop_warnings": 0,
        "over_window_calls": 0,
        "compressions": 1,
        "calls": 12,
        "summary_calls": 2,
    }
    return pd.Series(base | values)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"status": "failed", "loop_warnings": 3, "over_window_calls": 2}, "fails"),
        ({"loop_warnings": 1, "over_window_calls": 2, "compressions": 9}, "loops"),
        ({"over_window_calls": 1, "compressions": 9}, "over window"),
        ({"compressions": 5}, "thrashes"),  # 5 of 10 reasoning calls
        ({"compressions": 4}, "ok"),
        ({"loop_warnings": None}, "ok"),  # not measured counts as none
    ],
)
def test_regime_is_the_first_that_applies(values: dict[str, Any], expected: str) -> None:
    assert sensitivity.regime(_run(**values)) == expected


def test_regimes_of_real_runs_read_their_settings(retrieval_results: Results) -> None:
    table = sensitivity.regimes(retrieval_results)
    assert len(table) == len(retrieval_results.runs)
    early = table[table["strategy"] == "early"].iloc[0]
    assert (early["window"], early["trigger"], early["reserve"]) == (6000, 0.5, 0.1)
    assert pd.isna(table.loc[table["strategy"] == "none", "trigger"]).all()
    assert table.loc[table["strategy"] == "none", "regime"].item() == "over window"


def _cells(regimes: dict[tuple[float, float], str], window: int = 4000) -> list[dict[str, Any]]:
    return [
        {
            "scenario": "s",
            "run_id": f"r{t}{r}{window}",
            "window": window,
            "trigger": t,
            "reserve": r,
            "regime": regime,
            "cost": t + r,
            "compressions": 1,
            "over window": 0,
            "loop warnings": 0,
            "compression rate": 0.1,
        }
        for (t, r), regime in regimes.items()
    ]


def test_where_groups_whole_triggers_and_whole_windows() -> None:
    table = pd.DataFrame(
        _cells(
            {(0.5, 0.1): "ok", (0.5, 0.4): "thrashes", (0.9, 0.1): "over window", (0.9, 0.4): "over window"}
        )
        + _cells({(0.5, 0.1): "over window", (0.9, 0.1): "over window"}, window=2000)
    )
    assert sensitivity.where(table, "over window") == [
        "s at window 4,000 (trigger 0.9)",
        "s at window 2,000 (every setting)",
    ]
    assert sensitivity.where(table, "thrashes") == ["s at window 4,000 (trigger 0.5 with reserve 0.4)"]
    assert sensitivity.where(table, "loops") == []
    best = sensitivity.best_settings(table)
    assert best[["window", "trigger", "reserve"]].values.tolist() == [[4000, 0.5, 0.1]]
    assert any("1 thrashes" in line for line in sensitivity.describe(table))


def test_where_and_describe_name_runs_without_a_trigger_or_reasoning_calls() -> None:
    """A strategy without a trigger (`none`, a zoo preset) is named, not `trigger nan`; a window
    whose runs made no reasoning call has no compression share to tell, not `nan%`."""
    none = _cells({(0.5, 0.1): "over window"})[0]
    none |= {"strategy": "none", "trigger": None, "reserve": None, "run_id": "none-1"}
    failed = _cells({(0.5, 0.1): "fails"}, window=2000)[0]
    failed |= {"reasoning calls": 0, "compressions": 0, "compression rate": float("nan")}
    table = pd.DataFrame([*_cells({(0.5, 0.1): "ok", (0.9, 0.1): "over window"}), none, failed])
    assert sensitivity.where(table, "over window") == ["s at window 4,000 (trigger 0.9, `none`)"]
    lines = sensitivity.describe(table)
    assert lines[-1] == (
        "- **s, window 2,000** (1 run): 1 fails — at worst 0 requests over the window and 0 looping "
        "compressions."
    )
    assert not any("nan" in line for line in lines)
