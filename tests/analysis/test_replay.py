"""Running scenarios from Python: documents, one run again, transcripts through every preset."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctxlab import replay
from ctxlab.analysis.results import Results, iter_requests, read_requests
from ctxlab.presets.registry import PRESETS
from ctxlab.problems import ScenarioError
from ctxlab.scenarios import workload
from ctxlab.workloads import importers
from ctxlab.workloads.trace import TraceWorkload
from tests.scenarios.files import long_reply

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = ROOT / "scenarios" / "data" / "support-session.jsonl"
TOOLS = TRANSCRIPT.with_name("support-tools.json")
MEASURES = ["calls", "summary_calls", "peak_input_tokens", "total_input_tokens", "cost", "retention_facts"]


def test_rerun_keeps_everything_the_run_depended_on(retrieval_results: Results, scratch: Path) -> None:
    for _, row in retrieval_results.runs.iterrows():
        again = replay.rerun(retrieval_results, str(row["run_id"]), scratch)
        assert again.runs["run_id"].tolist() == [row["run_id"]]  # the same settings, the same id
        assert again.runs[MEASURES].iloc[0].tolist() == row[MEASURES].tolist()
        assert read_requests(again, str(row["run_id"]))


def test_rerun_with_a_tokenizer_changes_only_the_counter(retrieval_results: Results, scratch: Path) -> None:
    run_id = str(retrieval_results.runs["run_id"].iloc[0])
    document = replay.rerun_document(retrieval_results, run_id, tokenizer="cl100k_base")
    assert document["model"]["tokenizer"] == "cl100k_base"
    assert document["strategies"] == [retrieval_results.run_settings(run_id)["strategy_settings"]]
    again = replay.rerun(retrieval_results, run_id, scratch, tokenizer="cl100k_base")
    assert again.runs["run_id"].item() != run_id
    assert again.run_settings(again.runs["run_id"].item())["model"]["tokenizer"] == "cl100k_base"


def test_a_swept_workload_parameter_is_kept(scratch: Path) -> None:
    document = {
        "name": "swept-rounds",
        "workload": {"generator": {"name": "retrieval", "params": {"rounds": 2}}},
        "model": {"context_size": 50000},
        "strategies": [{"name": "none", "preset": "none"}],
        "sweep": {"workload.generator.params.rounds": [2, 3]},
    }
    results = replay.run_document(document, scratch)
    longer = results.runs.iloc[1]
    again = replay.rerun(results, str(longer["run_id"]), scratch / "again")
    assert again.runs["calls"].item() == longer["calls"] == 4


def test_a_rerun_keeps_the_sub_agents_own_settings(scratch: Path) -> None:
    """The `delegate:` section (the sub-agents' strategy, window and summarizer) is part of a run."""
    document = {
        "name": "delegated",
        "workload": {"generator": {"name": "delegated_research", "params": {"questions": 2, "rounds": 2}}},
        "model": {"context_size": 16000},
        "strategies": [{"name": "agentscope", "preset": "agentscope"}],
        "delegate": {"strategy": {"name": "sub", "preset": "agentscope"}, "context_size": 12000},
        "sweep": {"delegate.context_size": [4000, 12000]},
    }
    results = replay.run_document(document, scratch)
    for _, row in results.runs.iterrows():
        again = replay.rerun(results, str(row["run_id"]), scratch / str(row["run_id"]))
        assert again.runs["run_id"].tolist() == [row["run_id"]]
        assert again.runs["subagent_calls"].item() == row["subagent_calls"]
        assert again.manifest["warnings"] == []


def test_a_bad_document_is_refused_with_located_problems(scratch: Path) -> None:
    with pytest.raises(ScenarioError, match="context_size"):
        replay.run_document(
            {
                "name": "bad",
                "workload": {"generator": {"name": "retrieval"}},
                "model": {"context_size": -1},
                "strategies": [{"preset": "none"}],
            },
            scratch,
        )


def test_a_transcript_goes_through_every_preset(scratch: Path) -> None:
    results = replay.replay_transcript(TRANSCRIPT, scratch, tools=TOOLS)
    assert results.name == "support-session"
    assert results.runs["strategy"].tolist() == list(PRESETS)
    unmanaged = replay.run_document(
        replay.transcript_document(TRANSCRIPT, context_size=10**9, tools=TOOLS, presets=["none"]),
        scratch / "u",
    )
    peak = int(unmanaged.runs["peak_input_tokens"].item())
    window = int(results.run_settings(results.runs["run_id"].iloc[0])["model"]["context_size"])
    assert window == round(peak * replay.REPLAY_SHARE / 100) * 100
    assert (results.runs["source_violations"] == results.runs["source_violations"].iloc[0]).all()


def test_a_replay_takes_its_arguments_as_given(scratch: Path) -> None:
    """A window of 0 is refused as a scenario's would be (None chooses one), no presets named is
    refused (None replays through all), and the description names the presets."""
    with pytest.raises(ScenarioError, match=re.escape("model.context_size: 0 is not above the minimum 0")):
        replay.replay_transcript(TRANSCRIPT, scratch, context_size=0, presets=["none"])
    with pytest.raises(ValueError, match="presets names none"):
        replay.replay_transcript(TRANSCRIPT, scratch, context_size=5000, presets=[])
    assert not list(scratch.iterdir())  # nothing written, not even the window's probe
    named = iter(["none", "agentscope"])
    results = replay.replay_transcript(TRANSCRIPT, scratch, context_size=5000, presets=named)
    assert results.runs["strategy"].tolist() == ["none", "agentscope"]
    assert results.manifest["description"] == (
        "support-session.jsonl replayed through none, agentscope, each at its defaults."
    )


def test_requests_that_were_not_recorded_are_named(scratch: Path) -> None:
    results = replay.replay_transcript(TRANSCRIPT, scratch, context_size=5000, presets=["none"])
    with pytest.raises(FileNotFoundError, match="no recorded requests"):
        read_requests(results, str(results.runs["run_id"].item()))
    with pytest.raises(FileNotFoundError, match="no recorded requests"):
        iter_requests(results, str(results.runs["run_id"].item()))  # when asked, not at the first


def test_recorded_requests_are_read_back_whole_whatever_characters_their_texts_hold(scratch: Path) -> None:
    """The request file's lines end at newlines alone: a text holding U+2028, U+2029 or NEL
    (written raw, as JSON allows) is read back as it was sent."""
    said = "one\u2028two\u2029three\x85four"
    trace = scratch / "separators.jsonl"
    messages = [{"role": "user", "content": said}, {"role": "assistant", "content": "ok"}]
    trace.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    document = replay.transcript_document(trace, context_size=5000, presets=["none"])
    results = replay.run_document({**document, "record_requests": True}, scratch)
    run_id = str(results.runs["run_id"].item())
    (request,) = read_requests(results, run_id)
    assert {"role": "user", "content": said} in request["messages"]
    assert list(iter_requests(results, run_id)) == [request]


def test_a_transcript_plays_every_recorded_round_through_every_preset(scratch: Path) -> None:
    trace = long_reply(scratch, 60)
    results = replay.replay_transcript(trace, scratch, context_size=10**6, presets=["agentscope", "none"])
    assert results.runs["calls"].tolist() == [61, 61]  # 60 rounds and the answer, past max_iters 50
    document = replay.transcript_document(trace, context_size=10**6, presets=["none"], name="cut")
    assert replay.run_document(document, scratch).runs["calls"].tolist() == [51]


def test_a_replay_maps_its_transcript_once_and_sees_an_edited_one(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checking the trace, building it and raising the round limit (a second load) all take the
    one replay; the same path with other content is replayed anew."""
    replayed: list[str] = []
    real = importers.replay_text

    def counted(text: str, source: str, **kwargs: Any) -> TraceWorkload:
        replayed.append(source)
        return real(text, source, **kwargs)

    monkeypatch.setattr(importers, "replay_text", counted)  # the loader imports it as it replays
    workload.forget_kept()
    trace = long_reply(scratch, 60)
    runs = replay.replay_transcript(trace, scratch / "a", context_size=10**6, presets=["none"]).runs
    assert (len(replayed), runs["calls"].tolist()) == (1, [61])
    trace = long_reply(scratch, 70)  # the same path, other content
    runs = replay.replay_transcript(trace, scratch / "b", context_size=10**6, presets=["none"]).runs
    assert (len(replayed), runs["calls"].tolist()) == (2, [71])


def test_requests_recorded_in_the_anthropic_form_are_read_with_its_wire_and_a_broken_file_is_named(
    tmp_path: Path,
) -> None:
    """They were reported as not recorded; a request file cut short, not gzip or of a line that
    is not JSON raised gzip's or json's error without the file; an empty one read as no request."""
    import gzip

    from ctxlab.analysis.folders import ResultsError
    from ctxlab.analysis.results import load_results
    from ctxlab.cli import main

    out = tmp_path / "r"
    argv = ["replay", str(TRANSCRIPT), "--preset", "none", "--out", str(out), "--quiet", "--no-plots"]
    assert main([*argv, "--record-requests", "--wire", "anthropic"]) == 0
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    results = load_results(folder)
    run_id = str(results.runs["run_id"].item())
    requests = read_requests(results, run_id, wire="anthropic")
    assert requests and all("messages" in r for r in requests)
    with pytest.raises(
        FileNotFoundError, match="recorded in the anthropic form; read them with wire='anthropic'"
    ):
        read_requests(results, run_id)
    with pytest.raises(FileNotFoundError, match="no run 'nope'"):
        read_requests(results, "nope")
    with pytest.raises(ValueError, match="wire='bedrock' names no form requests are recorded in"):
        read_requests(results, run_id, wire="bedrock")  # type: ignore[arg-type]
    path = folder / "requests" / f"{run_id}.anthropic.jsonl.gz"
    packed = path.read_bytes()
    for broken, said in (
        (packed[: len(packed) // 2], "cannot be read as ctxlab results"),
        (b"not gzip", "cannot be read as ctxlab results"),
        (gzip.compress(b'{"messages": []}\n{cut\n'), "(line 2: "),
        (
            packed[:20] + bytes(b ^ 0xFF for b in packed[20:40]) + packed[40:],
            "cannot be read as ctxlab results",
        ),
        (b"", "it is empty: a request file holds a line per call"),
    ):
        path.write_bytes(broken)
        with pytest.raises(ResultsError, match=re.escape(said)) as caught:
            read_requests(results, run_id, wire="anthropic")
        assert str(path) in str(caught.value)
