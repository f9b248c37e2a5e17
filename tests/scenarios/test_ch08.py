"""The golden test of the book's chapter 8 experiment, through the command a user runs.

Every number comes from the book (section 8.5.1) and AgentScope 2.0.11's own texts and counting;
`scenarios/ch08-retrieval.yaml` explains the reconstruction.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ctxlab.cli import main

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "ch08-retrieval.yaml"


def run(tmp_path: Path, convention: str) -> dict[int, pd.DataFrame]:
    text = SCENARIO.read_text(encoding="utf-8").replace(
        "summary_token_count: messages", f"summary_token_count: {convention}"
    )
    scenario = tmp_path / f"ch08-{convention}.yaml"
    scenario.write_text(text, encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(tmp_path / "out"), "--no-plots", "--quiet"]) == 0
    calls = pd.read_csv(tmp_path / "out" / "ch08-retrieval" / "calls.csv")
    runs = pd.read_csv(tmp_path / "out" / "ch08-retrieval" / "runs.csv")
    windows = dict(zip(runs.run_id, runs["param.model.context_size"], strict=True))
    return {int(windows[rid]): group.reset_index(drop=True) for rid, group in calls.groupby("run_id")}


def test_the_book_numbers_as_the_book_counted_them(tmp_path: Path) -> None:
    by_window = run(tmp_path, "messages")
    large, small = by_window[1_000_000], by_window[4_000]
    assert list(large.input_tokens) == [144, 1652, 3160, 4668, 6176, 7684, 9192]
    assert set(large.kind) == {"reasoning"}
    assert (large.context_messages.iloc[-1], large.summary_chars.iloc[-1]) == (2, 0)
    assert list(small.input_tokens) == [144, 1652, 3160, 4936, 258, 1766, 3542, 258, 1766]
    assert list(small.kind.str[0]) == list("rrrsrrsrr")  # 4936 and 3542 are the summary calls
    assert small.input_tokens.max() == 4936 and small.input_tokens.iloc[-1] == 1766
    assert (small.context_messages.iloc[-1], small.summary_chars.iloc[-1]) == (1, 293)


def test_as_sent_the_first_summary_request_is_over_the_window(tmp_path: Path) -> None:
    small = run(tmp_path, "as_sent")[4_000]
    summaries = small[small.kind == "summary"]
    assert list(summaries.input_tokens) == [5363, 3969]
    assert list(summaries.over_window) == [True, False]
    assert not small[small.kind == "reasoning"].over_window.any()
