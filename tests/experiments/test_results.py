"""Result files (docs/architecture.md, Results): columns, the events table, counting conventions,
cost, request files, failed runs and atomic writes; grid expansion and run ids."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import hashlib
import itertools
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.analysis.results import load_results
from ctxlab.core.events import EventKind
from ctxlab.experiments import results as results_module
from ctxlab.experiments.execute import execute
from ctxlab.experiments.grid import RunConfig, canonical_json, config_hash, expand
from ctxlab.experiments.measures import call_cost
from ctxlab.experiments.processes import Share
from ctxlab.experiments.results import Outcome, indented_json, write_scenario, write_scenarios
from ctxlab.scenarios.load import load_scenario
from tests.scenarios.files import SWEPT, TINY, write

RUN_COLUMNS = [
    "calls",
    "summary_calls",
    "peak_input_tokens",
    "final_input_tokens",
    "total_input_tokens",
    "total_cached_tokens",
    "cache_hit_rate",
    "cost",
    "compressions",
    "offloaded_bytes",
    "truncations",
    "injections",
    "violations_openai",
    "violations_anthropic",
    "violations_bedrock",
    "source_violations",
    "over_window_calls",
    "retention_facts",
    "retention_rules",
    "retention_artifacts",
    "loop_warnings",
    "status",
    "error",
    "subagent_calls",
    "subagent_input_tokens",
    "subagent_cost",
]
CALL_COLUMNS = [
    "run_id",
    "call_index",
    "kind",
    "turn",
    "iteration",
    "input_tokens",
    "strategy_tokens",
    "cached_tokens",
    "output_tokens",
    "context_messages",
    "summary_chars",
    "over_window",
    "events",
    "violations",
    "agent",
    "delegated_at",
]
EVENT_COLUMNS = ["run_id", "call_index", "order", "kind", "detail", "agent"]


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def run_to(tmp_path: Path, text: str, *, record: bool | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    loaded = load_scenario(write(tmp_path, text))
    configs = expand(loaded, record_requests=record)
    written = write_scenario(tmp_path / "out", loaded, configs, [execute(c) for c in configs])
    return written.folder


def test_grid_expansion_order_ids_and_dedupe(tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path, SWEPT))
    configs = expand(loaded)
    # 4 points x 2 strategies, but `none` differs only by context_size: 2 of its 4 runs are dropped
    assert [c.strategy for c in configs] == [
        "agentscope",
        "none",
        "agentscope",
        "agentscope",
        "none",
        "agentscope",
    ]
    assert [c.index for c in configs] == list(range(6))
    for config in configs:
        digest = hashlib.sha256(canonical_json(config.config).encode()).hexdigest()[:12]
        assert config.config_hash == digest == config_hash(config.config)
        assert config.run_id == f"{config.strategy}-{digest}"
    assert configs[0].params["model.context_size"] == 4000
    assert configs[0].params["strategy.context.trigger_ratio"] == 0.6
    assert "strategy.context.trigger_ratio" not in configs[1].params  # another strategy's setting


def test_config_hash_ignores_names_and_file_location(tmp_path: Path) -> None:
    a = expand(load_scenario(write(tmp_path, TINY, "a.yaml")))[0]
    (tmp_path / "sub").mkdir()
    renamed = TINY.replace("name: tiny", "name: other").replace("Four retrieval", "Some")
    b = expand(load_scenario(write(tmp_path / "sub", renamed, "b.yaml")))[0]
    assert a.config_hash == b.config_hash
    changed = expand(load_scenario(write(tmp_path, TINY.replace("4000", "4001"), "c.yaml")))[0]
    assert changed.config_hash != a.config_hash


def test_config_hash_knows_a_transcript_by_its_bytes_not_its_path(tmp_path: Path) -> None:
    chat = '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n'
    for folder in ("one", "two/data"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "t.jsonl").write_text(chat, encoding="utf-8")
    generator = "generator: {name: retrieval, params: {rounds: 4}}"

    def first_run(folder: Path, trace: str) -> RunConfig:
        return expand(load_scenario(write(folder, TINY.replace(generator, f"trace: {{path: {trace}}}"))))[0]

    here = first_run(tmp_path / "one", "t.jsonl")
    assert first_run(tmp_path / "two", "data/t.jsonl").run_id == here.run_id
    assert first_run(tmp_path, str(tmp_path / "one" / "t.jsonl")).run_id == here.run_id
    assert here.config["workload"]["trace"]["path"] == "t.jsonl"  # the run still reads it by path
    (tmp_path / "two" / "data" / "t.jsonl").write_text(chat.replace("hello", "hey"), encoding="utf-8")
    assert first_run(tmp_path / "two", "data/t.jsonl").run_id != here.run_id


def test_generator_defaults_are_part_of_the_config(tmp_path: Path) -> None:
    config = expand(load_scenario(write(tmp_path, TINY)))[0].config
    assert config["workload"]["generator"]["params"]["result_bytes"] == 6012
    assert config["strategy"]["context"]["trigger_ratio"] == 0.8


def test_result_columns_are_the_designs(tmp_path: Path) -> None:
    folder = run_to(tmp_path, SWEPT)
    with (folder / "runs.csv").open(encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    assert header[:4] == ["run_id", "strategy", "config_hash", "seed"]
    params = [h for h in header[4:] if h.startswith("param.")]
    assert params[:2] == ["param.model.context_size", "param.strategy.context.trigger_ratio"]
    assert header[4 + len(params) :] == RUN_COLUMNS
    with (folder / "calls.csv").open(encoding="utf-8") as f:
        assert f.readline().strip().split(",") == CALL_COLUMNS
    with (folder / "events.csv").open(encoding="utf-8") as f:
        assert f.readline().strip().split(",") == EVENT_COLUMNS
    manifest = json.loads((folder / "manifest.json").read_text())
    assert list(manifest["columns"]["events"]) == EVENT_COLUMNS
    assert sorted(p.name for p in folder.iterdir()) == [
        "calls.csv",
        "calls.parquet",
        "events.csv",
        "events.parquet",
        "manifest.json",
        "requests",
        "runs.csv",
        "runs.parquet",
    ]


def test_runs_measures_agree_with_their_calls(tmp_path: Path) -> None:
    folder = run_to(tmp_path, SWEPT)
    calls = rows(folder / "calls.csv")
    for run in rows(folder / "runs.csv"):
        own = [c for c in calls if c["run_id"] == run["run_id"]]
        tokens = [int(c["input_tokens"]) for c in own]
        assert int(run["calls"]) == len(own) and [int(c["call_index"]) for c in own] == list(range(len(own)))
        assert int(run["summary_calls"]) == sum(c["kind"] == "summary" for c in own)
        assert int(run["peak_input_tokens"]) == max(tokens) and int(run["final_input_tokens"]) == tokens[-1]
        assert int(run["total_input_tokens"]) == sum(tokens)
        assert int(run["over_window_calls"]) == sum(c["over_window"] == "true" for c in own)
        prices = {"input": 1.0, "cached_read": 0.1, "cache_write": 1.25, "output": 4.0}
        cached = [int(c["cached_tokens"]) for c in own]
        assert all(0 <= k <= t for k, t in zip(cached, tokens, strict=True)) and cached[0] == 0
        cost = 0.0  # added in call order, one rounding a step, as on every Python (not `sum`)
        for t, k, c in zip(tokens, cached, own, strict=True):
            cost += call_cost(t, k, int(c["output_tokens"]), prices)
        assert float(run["cost"]) == cost
        assert int(run["total_cached_tokens"]) == sum(cached)
        assert float(run["cache_hit_rate"]) == pytest.approx(sum(cached) / sum(tokens))
        # no probes planted: empty retention cells, and the manifest says why
        assert run["retention_facts"] == run["retention_rules"] == run["retention_artifacts"] == ""
        assert run["loop_warnings"] == "0" and run["status"] == "ok" and run["error"] == ""
    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest["unmeasured"]) == {"retention_facts", "retention_rules", "retention_artifacts"}


def test_compressions_are_marked_on_the_call_after_them(tmp_path: Path) -> None:
    folder = run_to(tmp_path, TINY)
    calls = rows(folder / "calls.csv")
    (run,) = rows(folder / "runs.csv")
    marked = [int(e["call_index"]) for e in rows(folder / "events.csv") if e["kind"] == EventKind.COMPRESSED]
    assert len(marked) == int(run["compressions"]) > 0
    assert all(calls[i - 1]["kind"] == "summary" and calls[i]["kind"] == "reasoning" for i in marked)


def test_the_events_table_holds_each_calls_events_in_order(tmp_path: Path) -> None:
    folder = run_to(tmp_path, SWEPT)
    joined: dict[tuple[str, str], list[str]] = {}
    for event in rows(folder / "events.csv"):
        own = joined.setdefault((event["run_id"], event["call_index"]), [])
        assert int(event["order"]) == len(own) and event["kind"] in set(EventKind)
        own.append(f"{event['kind']}:{event['detail']}" if event["detail"] else event["kind"])
    calls = rows(folder / "calls.csv")
    assert {(c["run_id"], c["call_index"]): c["events"] for c in calls if c["events"]} == {
        key: ";".join(texts) for key, texts in joined.items()
    }
    injected = [e for e in rows(folder / "events.csv") if e["kind"] == EventKind.INJECTED]
    assert injected and all(e["detail"] for e in injected)
    runs = rows(folder / "runs.csv")
    assert sum(int(r["injections"]) for r in runs) == len(injected)


def test_the_events_table_loads_the_same_from_parquet_csv_and_an_older_folder(tmp_path: Path) -> None:
    folder = run_to(tmp_path, SWEPT)
    typed = load_results(folder).events
    assert len(typed) and list(typed.columns) == EVENT_COLUMNS
    assert str(typed["call_index"].dtype) == "Int64" and str(typed["kind"].dtype) == "string"
    (folder / "events.parquet").unlink()
    pd.testing.assert_frame_equal(load_results(folder).events, typed)
    (folder / "events.csv").unlink()  # written before the events table existed
    pd.testing.assert_frame_equal(load_results(folder).events, typed)


@pytest.mark.parametrize("convention", ["messages", "preflight", "as_sent"])
def test_summary_token_count_chooses_the_summary_calls_input_tokens(tmp_path: Path, convention: str) -> None:
    base = rows(
        run_to(tmp_path / "base", TINY.replace("4000", "4000\n  summary_token_count: messages")) / "calls.csv"
    )
    text = TINY.replace("4000", f"4000\n  summary_token_count: {convention}")
    calls = rows(run_to(tmp_path / convention, text) / "calls.csv")
    for before, after in zip(base, calls, strict=True):
        if after["kind"] == "reasoning" or convention == "messages":
            assert after["input_tokens"] == before["input_tokens"]
        else:  # preflight adds the schema tool; as_sent adds the instruction too
            assert int(after["input_tokens"]) > int(before["input_tokens"])


def test_request_files_hold_every_call_as_sent(tmp_path: Path) -> None:
    folder = run_to(tmp_path, TINY, record=True)
    (run,) = rows(folder / "runs.csv")
    path = folder / "requests" / f"{run['run_id']}.jsonl.gz"
    raw = path.read_bytes()
    # no timestamp, and a header of the lab's own: the same bytes on every machine and Python
    assert raw[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
    lines = [json.loads(line) for line in gzip.decompress(raw).decode("utf-8").split("\n")[:-1]]
    assert [line["call_index"] for line in lines] == list(range(int(run["calls"])))
    assert [set(line) for line in lines] == [{"call_index", "kind", "messages", "tools"}] * len(lines)
    summary = next(line for line in lines if line["kind"] == "summary")
    assert [t["function"]["name"] for t in summary["tools"]] == ["generate_structured_output"]
    assert lines[0]["messages"][0]["role"] == "system"


def test_a_run_that_raises_is_recorded_failed_and_the_others_go_on(tmp_path: Path) -> None:
    text = SWEPT.replace(
        "  - name: none\n",
        "  - name: strict\n    preset: agentscope\n"
        "    context: {compression_fallback_to_truncation: false}\n  - name: none\n",
    )
    text = text.replace("model:\n", "model:\n  summarizer: {fail_on: [1, 2], fail_mode: raise}\n")
    folder = run_to(tmp_path, text)
    runs = rows(folder / "runs.csv")
    failed = [r for r in runs if r["status"] == "failed"]
    assert failed and all(r["strategy"] == "strict" for r in failed)
    assert all(r["error"].startswith("SummaryFailedError: the summary failed") for r in failed)
    assert {r["status"] for r in runs if r["strategy"] != "strict"} == {"ok"}
    calls = rows(folder / "calls.csv")
    assert all(any(c["run_id"] == r["run_id"] for c in calls) for r in failed)  # calls before the failure
    manifest = json.loads((folder / "manifest.json").read_text())
    entry = next(e for e in manifest["runs"] if e["status"] == "failed")
    assert "Traceback" in entry["traceback"] and entry["error"].startswith("SummaryFailedError")
    root = str(Path(__file__).resolve().parents[2])
    assert (
        'File "ctxlab/' in entry["traceback"] and root not in entry["traceback"]
    )  # the same in any checkout


def test_a_config_that_no_longer_validates_fails_only_its_run(tmp_path: Path) -> None:
    config = expand(load_scenario(write(tmp_path, TINY)))[0]
    broken = dataclasses.replace(config, config={**config.config, "model": {"context_size": 0}})
    result = execute(broken)
    assert result.status == "failed" and result.error.startswith("ValidationError") and result.calls == ()


def test_a_failed_write_leaves_the_previous_results_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = run_to(tmp_path, TINY)
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}

    def broken(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(results_module, "write_parquet", broken)
    with pytest.raises(OSError, match="disk full"):
        run_to(tmp_path, TINY.replace("4000", "5000"))
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["tiny"]  # no temporary folder left


def test_an_interrupted_write_leaves_the_previous_results_untouched(tmp_path: Path) -> None:
    folder = run_to(tmp_path, TINY)
    before = (folder / "runs.csv").read_bytes()
    loaded = load_scenario(write(tmp_path, TINY.replace("4000", "5000")))
    configs = expand(loaded)

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    results = [execute(c) for c in configs]
    with pytest.raises(KeyboardInterrupt):
        write_scenario(tmp_path / "out", loaded, configs, results, plot=interrupt)
    assert (folder / "runs.csv").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["tiny"]


def test_a_plot_error_keeps_the_tables_and_is_reported(tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path, TINY))
    configs = expand(loaded)

    def broken(*_: object) -> None:
        raise ValueError("no figure")

    written = write_scenario(tmp_path / "out", loaded, configs, [execute(c) for c in configs], plot=broken)
    assert written.plot_error == "ValueError: no figure"
    assert (written.folder / "runs.csv").is_file() and not (written.folder / "figures").exists()


def _mark_share(folder: Path, share: Share) -> None:
    """A plotter that leaves one file for each share it is asked to draw."""
    (folder / "figures").mkdir(exist_ok=True)
    (folder / "figures" / f"share-{share.index}-of-{share.count}").write_text("drawn")


def _second_share_fails(folder: Path, share: Share) -> None:
    _mark_share(folder, share)
    if share.index == 1:
        raise ValueError("no figure")


def _outcomes(tmp_path: Path, *texts: str) -> list[Outcome]:
    outcomes = []
    for k, text in enumerate(texts):
        loaded = load_scenario(write(tmp_path, text, f"s{k}.yaml"))
        configs = tuple(expand(loaded))
        outcomes.append(Outcome(loaded, configs, tuple(execute(c) for c in configs)))
    return outcomes


def test_a_folder_s_figures_are_shared_among_the_workers_one_share_per_run_at_most(tmp_path: Path) -> None:
    written = write_scenarios(tmp_path / "out", _outcomes(tmp_path, SWEPT, TINY), plot=_mark_share, workers=2)
    swept, tiny = (sorted(p.name for p in (w.folder / "figures").iterdir()) for w in written)
    assert swept == ["share-0-of-2", "share-1-of-2"] and tiny == ["share-0-of-1"]
    assert [w.plot_error for w in written] == [None, None]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["swept", "tiny"]


def test_an_error_in_one_share_leaves_the_folder_without_figures(tmp_path: Path) -> None:
    written = write_scenarios(
        tmp_path / "out", _outcomes(tmp_path, SWEPT, TINY), plot=_second_share_fails, workers=2
    )
    assert written[0].plot_error == "ValueError: no figure" and written[1].plot_error is None
    assert not (written[0].folder / "figures").exists() and (written[0].folder / "runs.csv").is_file()
    assert [p.name for p in (written[1].folder / "figures").iterdir()] == ["share-0-of-1"]


def test_the_manifest_describes_the_scenario_and_every_run(tmp_path: Path) -> None:
    folder = run_to(tmp_path, SWEPT)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["scenario"] == "swept" and manifest["seed"] == 0
    assert manifest["versions"]["ctxlab"] and manifest["versions"]["pydantic"]
    assert manifest["resolved_scenario"]["model"]["summary_token_count"] == "as_sent"
    assert [a["path"] for a in manifest["sweep"]] == [
        "model.context_size",
        "strategies.agentscope.context.trigger_ratio",
    ]
    runs = rows(folder / "runs.csv")
    assert [e["run_id"] for e in manifest["runs"]] == [r["run_id"] for r in runs]
    assert all(e["config_hash"] == e["run_id"].rsplit("-", 1)[1] for e in manifest["runs"])
    assert set(manifest["columns"]["calls"]) == set(CALL_COLUMNS)


PROBED = TINY.replace(
    "workload:\n",
    "workload:\n"
    "  probes:\n"
    "    - {kind: rule, key: no-emoji, value: 'Never use emoji.', where: turn 0 user}\n"
    "    - {kind: fact, key: port, value: '5433', where: turn 0 round 0}\n",
).replace("context_size: 4000", "context_size: 4000\n  summarizer: {kind: extractive, rule_recall: 0.0}")


def test_retention_of_planted_probes_is_measured(tmp_path: Path) -> None:
    folder = run_to(tmp_path, PROBED)
    (run,) = rows(folder / "runs.csv")
    assert int(run["compressions"]) >= 1
    assert float(run["retention_facts"]) == 1.0  # the extractive summarizer keeps every fact it sees
    assert float(run["retention_rules"]) == 0.0  # and no rule (rule_recall 0)
    assert run["retention_artifacts"] == ""  # none planted
    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest["unmeasured"]) == {"retention_artifacts"}
    (entry,) = manifest["runs"]
    snapshots = entry["retention"]
    assert snapshots[-1]["final"] and not any(s["final"] for s in snapshots[:-1])
    assert len(snapshots) == int(run["compressions"]) + 1
    assert snapshots[-1]["rules_offload_only"] == 1.0  # the compressed span went to the workspace


def test_compressions_that_cannot_get_below_the_trigger_are_loop_warnings(tmp_path: Path) -> None:
    text = """\
name: overhead
workload:
  generator: {name: customer_service, params: {turns: 2, system_prompt_bytes: 14000}}
model: {context_size: 4000}
strategies: [{preset: agentscope}]
"""
    (run,) = rows(run_to(tmp_path, text) / "runs.csv")
    assert int(run["compressions"]) > 2 and run["loop_warnings"] == run["compressions"]


BLANK_SUMMARY = """\
name: openhands-blank-summary
workload:
  generator: {name: retrieval, params: {result_bytes: 1200, system_prompt_bytes: 0, user_bytes: 50}}
model:
  context_size: 300
  summarizer: {kind: fixed, fail_on: [1, 2, 5], fail_mode: no_tool_call}
strategies: [{name: oh, preset: openhands, condenser: {max_tokens: 100}}]
"""


def test_condensations_in_a_row_are_each_judged_and_events_after_the_last_call_are_kept(
    tmp_path: Path,
) -> None:
    """The fixed summary alone is over `max_tokens`, so the condenser resets at every step until
    the iteration limit, as the SDK does (its driver makes the same 496 summary calls): every
    condensation is a compression, each of the 493 that leave the request over the trigger is a
    loop warning, and the last condensation, its warning and the iteration limit, recorded after
    the last call, are in the events table too."""
    folder = run_to(tmp_path, BLANK_SUMMARY)
    (run,) = rows(folder / "runs.csv")
    events = [e["kind"] for e in rows(folder / "events.csv")]
    assert int(run["compressions"]) == int(run["summary_calls"]) == events.count("compressed") == 496
    assert int(run["loop_warnings"]) == events.count("loop_warning") == 493
    assert events[-1] == EventKind.ITERATION_LIMIT
    (entry,) = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["runs"]
    assert len(entry["warnings"]) == 493, entry["warnings"][:3]  # each flagged compaction, told
    assert all(w.startswith("call ") and " oh compaction " in w for w in entry["warnings"])


SUB_LIMIT = """\
name: sub-limit
workload:
  generator:
    name: delegated_research
    params: {questions: 1, rounds: 4, fan_out: 1, result_bytes: 800, finding_bytes: 100, delegate: true}
model: {context_size: 32000, summarizer: {kind: fixed}}
strategies: [{preset: agentscope}]
delegate: {strategy: {preset: openhands, max_iterations: 3}}
"""


def test_openhands_condensations_are_judged_in_the_sdks_tokens(tmp_path: Path) -> None:
    """At `max_tokens` 115 each condensation leaves 107 of the SDK's tokens (the units of its
    trigger; the lab's own counter reads 122): under the trigger, so the next step is a reasoning
    call, and no condensation is a loop warning."""
    folder = run_to(tmp_path, BLANK_SUMMARY.replace("max_tokens: 100", "max_tokens: 115"))
    (run,) = rows(folder / "runs.csv")
    assert int(run["compressions"]) > 2 and run["loop_warnings"] == "0"
    kinds = [c["kind"] for c in rows(folder / "calls.csv")]
    assert all(a != b for a, b in itertools.pairwise(kinds) if a == "summary")  # never two in a row


def test_a_subagents_events_after_its_last_call_are_kept_in_its_own_numbering(tmp_path: Path) -> None:
    """The sub-agent stops at its iteration limit after its third call: the event comes after
    its last call, at the index its next call would have had."""
    folder = run_to(tmp_path, SUB_LIMIT)
    sub_calls = [c for c in rows(folder / "calls.csv") if c["agent"] == "sub-1"]
    (limit,) = [e for e in rows(folder / "events.csv") if e["kind"] == EventKind.ITERATION_LIMIT]
    assert (limit["agent"], int(limit["call_index"])) == ("sub-1", len(sub_calls)) == ("sub-1", 3)
    (entry,) = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["runs"]
    assert "warnings" not in entry  # a run the engine warned nothing of has no list


def test_a_chains_condensations_are_each_judged_before_the_next_summary_call(tmp_path: Path) -> None:
    """A sub-agent whose window never fits under `max_tokens` condenses at every step: each
    condensation's `loop_warning` comes with it, before the next (summary) call, and the run's
    warnings in the manifest name each call, labelled with the sub-agent."""
    folder = run_to(
        tmp_path, SUB_LIMIT.replace("max_iterations: 3}", "max_iterations: 6, condenser: {max_tokens: 50}}")
    )
    events = [(int(e["call_index"]), e["kind"]) for e in rows(folder / "events.csv") if e["agent"] == "sub-1"]
    chain = [(call, kind) for call in range(1, 7) for kind in ("compressed", "loop_warning")]
    assert events == [*chain, (6, EventKind.ITERATION_LIMIT)]
    (entry,) = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["runs"]
    assert [w.split(" openhands ")[0] for w in entry["warnings"]] == [
        f"sub-1: call {k}:" for k in range(1, 7)
    ]


BREAKER = """\
name: breaker
description: A summarizer that always fails, with and without the circuit breaker.
workload:
  generator: {name: retrieval, params: {rounds: 12}}
model:
  context_size: 4000
  summarizer: {kind: fixed, fail_on: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], fail_mode: raise}
strategies:
  - {name: open, preset: agentscope}
  - {name: guarded, preset: agentscope, summary_breaker: 3}
"""


def test_the_summary_breaker_stops_calling_a_failing_summarizer(tmp_path: Path) -> None:
    folder = run_to(tmp_path, BREAKER)
    runs = {r["strategy"]: r for r in rows(folder / "runs.csv")}
    open_summaries, guarded_summaries = (
        int(runs["open"]["summary_calls"]),
        int(runs["guarded"]["summary_calls"]),
    )
    assert guarded_summaries == 3 < open_summaries
    assert runs["guarded"]["compressions"] == runs["open"]["compressions"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _floats(value: object) -> list[float]:
    if isinstance(value, float):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [f for item in items for f in _floats(item)]


@given(_JSON)
def test_the_manifest_text_is_pythons_indented_json_up_to_exponent_spelling(value: object) -> None:
    text = indented_json(value)
    assert json.loads(text) == value
    if all("e" not in repr(f) for f in _floats(value)):
        assert text == json.dumps(value, indent=2, ensure_ascii=False)
