"""The teeth of a run: one per compression, with its summary requests and the drop after it."""

from __future__ import annotations

import pandas as pd

from ctxlab.analysis import teeth
from ctxlab.analysis.results import Results


def _calls(kinds: list[str], tokens: list[int]) -> pd.DataFrame:
    indexes = range(len(kinds))
    return pd.DataFrame({"run_id": "r", "call_index": indexes, "kind": kinds, "input_tokens": tokens})


def _compressed(*indexes: int) -> pd.DataFrame:
    """An events table with one `compressed` event before each of `indexes`."""
    return pd.DataFrame({"run_id": "r", "call_index": list(indexes), "kind": "compressed"})


def test_one_tooth_per_compression_of_a_real_run(retrieval_results: Results) -> None:
    for run_id in retrieval_results.runs["run_id"]:
        calls = retrieval_results.calls[retrieval_results.calls["run_id"] == run_id]
        table = teeth.teeth(calls, retrieval_results.events, window=6000)
        row = retrieval_results.runs.set_index("run_id").loc[run_id]
        assert len(table) == row["compressions"]
        assert table["summary_attempts"].sum() == row["summary_calls"]
        summaries = calls.loc[calls["kind"] == "summary", "input_tokens"].tolist()
        assert table["summary_tokens"].dropna().astype(int).tolist() == summaries
        assert (table["summary_over_window"] == (table["summary_tokens"] > 6000)).all()


def test_attempts_of_one_compression_are_one_tooth_and_a_clearing_has_no_summary() -> None:
    calls = _calls(
        ["reasoning", "reasoning", "summary", "summary", "reasoning", "reasoning", "reasoning"],
        [100, 3000, 4200, 4200, 300, 1800, 900],
    )
    table = teeth.teeth(calls, _compressed(4, 6), window=4000)
    assert table[["tooth", "summary_attempts", "after_call", "drop"]].values.tolist() == [
        [1, 2, 4, 2700],
        [2, 0, 6, 900],
    ]
    assert table["summary_tokens"].tolist()[0] == 4200 and pd.isna(table["summary_tokens"].iloc[1])
    lines = teeth.describe(table, window=4000, trigger=0.8)
    assert "**105% of the window: a provider would reject it**" in lines[0]
    assert "trigger 0.8 × 4,000 = 3,200" in lines[0]
    assert "no summary was requested" in lines[1]


def test_a_compression_before_the_first_call() -> None:
    calls = _calls(["summary", "reasoning"], [5000, 3900])
    (line,) = teeth.describe(teeth.teeth(calls, _compressed(1), window=4000), window=4000, trigger=None)
    assert "already over the trigger" in line


def test_growth_skips_drops_and_the_fitting_trigger_needs_a_summary() -> None:
    calls, events = _calls(["reasoning"] * 4, [88, 1596, 187, 1695]), _compressed(2)
    assert teeth.growth(calls, events) == 1508
    assert teeth.growth(calls.iloc[:1], events) == 0
    empty = teeth.teeth(calls.iloc[:2], events, window=4000)
    assert empty.empty and teeth.fitting_trigger(empty, window=4000) is None
