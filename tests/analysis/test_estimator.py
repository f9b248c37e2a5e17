"""The byte estimate against real tokenizers: samples, counts and errors, recounted requests, and
the arithmetic of a trigger fired by a wrong estimate."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ctxlab.analysis import estimator
from ctxlab.analysis.results import Results
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.replay import rerun


def test_generated_samples_have_their_size_and_do_not_change() -> None:
    samples = estimator.generated_samples(sizes=[300, 2000], seeds=[0, 1])
    assert len(samples) == len(estimator.FILLER_KINDS) * 4
    assert [len(s.text.encode()) for s in samples[:4]] == [300, 300, 2000, 2000]
    assert samples == estimator.generated_samples(sizes=[300, 2000], seeds=[0, 1])
    assert samples[0].text != samples[1].text  # seeds differ


def test_counts_and_errors_follow_their_definition() -> None:
    counts = estimator.count_samples(estimator.generated_samples(["prose", "log"], [4096], [0]))
    for row in counts.to_dict("records"):
        assert row["estimate"] == (row["bytes"] + 2) // 4
        for name in estimator.ENCODINGS:
            assert row[f"error {name}"] == pytest.approx(row["estimate"] / row[name] - 1)
    errors = counts.set_index("kind")["error o200k_base"]
    assert errors["prose"] > 0.1 and errors["log"] < -0.2  # English words pack; timestamps and ids do not
    summary = estimator.error_summary(counts).set_index(["kind", "encoding"])
    prose = counts[counts["kind"] == "prose"]
    assert summary.loc[("prose", "cl100k_base"), "error (all text)"] == pytest.approx(
        prose["estimate"].sum() / prose["cl100k_base"].sum() - 1
    )


def test_transcript_samples_take_every_piece_of_both_line_forms(tmp_path: Path) -> None:
    long = "word " * 20
    lines = [
        {"role": "user", "content": long},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": json.dumps({"q": long})}}],
        },
        {"messages": [{"role": "tool", "tool_call_id": "1", "content": [{"type": "text", "text": long}]}]},
        {"role": "user", "content": "short"},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    samples = estimator.transcript_samples(path)
    assert [s.kind for s in samples] == ["transcript user", "transcript assistant", "transcript tool"]
    assert {s.source for s in samples} == {"t.jsonl"}


def test_transcript_samples_take_lines_that_end_at_newlines_alone(tmp_path: Path) -> None:
    """A JSON string may hold U+2028, U+2029 or NEL raw: each is text of its message's line."""
    text = "word\u2028" * 10 + "then\u2029more\x85end"
    path = tmp_path / "t.jsonl"
    line = json.dumps({"role": "user", "content": text}, ensure_ascii=False)
    path.write_text(line + "\n", encoding="utf-8")
    assert [s.text for s in estimator.transcript_samples(path)] == [text]


def test_recounting_with_the_estimate_gives_back_what_was_recorded(retrieval_results: Results) -> None:
    counters = {"estimate again": AgentScopeEstimator(), "o200k": estimator.bpe_counter("o200k_base")}
    for run_id in retrieval_results.runs["run_id"]:
        counts = estimator.recount(retrieval_results, run_id, counters)
        calls = retrieval_results.calls[retrieval_results.calls["run_id"] == run_id]
        assert counts["call_index"].tolist() == calls["call_index"].tolist()
        assert counts["estimate again"].tolist() == counts["estimate"].tolist() == counts["recorded"].tolist()
        compressions = retrieval_results.runs.set_index("run_id").loc[run_id, "compressions"]
        assert counts["compressed"].sum() == compressions
        big = counts[counts["estimate"] > 1000]  # mostly prose results: the estimate counts too many
        assert len(big) and (big["o200k"] < big["estimate"]).all()


def test_trigger_fill_and_what_if() -> None:
    assert estimator.trigger_fill(0.8, 0.0) == 0.8
    frame = estimator.what_if(0.8, errors=[-0.3, 0.0, 0.25])
    assert frame["over the window"].tolist() == [True, False, False]
    assert frame["window wasted below the trigger"].tolist() == pytest.approx([0.0, 0.0, 0.16])


def test_timing_of_calls() -> None:
    calls = pd.DataFrame(
        {"call_index": [0, 1, 2, 3], "compressed": [False, False, True, False], "t": [100, 5000, 200, 900]}
    )
    timing = estimator.timing(calls, tokens="t", window=4000)
    assert (timing.compressions, timing.first_compression, timing.over_window) == (1, 2, 1)
    assert timing.peak_share == 1.25


def test_decided_by_measures_both_runs_by_the_same_tokenizer(
    retrieval_results: Results, scratch: Path
) -> None:
    run_id = str(retrieval_results.runs["run_id"].iloc[0])
    estimated = rerun(retrieval_results, run_id, scratch, tokenizer="agentscope")
    real = {"o200k_base": rerun(retrieval_results, run_id, scratch, tokenizer="o200k_base")}
    (row,) = estimator.decided_by(estimated, real, workload="w").to_dict("records")
    assert row["workload"] == "w" and row["encoding"] == "o200k_base"
    assert row["error"] > 0  # prose
    decided = real["o200k_base"].runs.iloc[0]
    assert row["compressions (real decides)"] == decided["compressions"]
    # the real-decided run's reasoning calls were counted by o200k already
    assert row["peak/window (real decides)"] >= decided["peak_input_tokens"] / 6000 - 0.2
