"""The benchmark harness compares like with like; no test here reads a clock's value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.measures import best_in_turn, compression_timer, lab_run, plain_pass_timer
from benchmarks.run import Figure, growth_apart, peak_rss_mb
from benchmarks.sweep import AXES, sweep_configs
from benchmarks.workload import RESULT_BYTES, WINDOW, replies
from ctxlab.experiments.execute import execute


def test_the_workload_is_one_retrieve_call_of_4000_bytes_then_an_answer_per_reply() -> None:
    script = replies(3)
    assert len(script.turns) == 3
    for turn in script.turns:
        (round_,) = turn.rounds
        (call,) = round_.calls
        assert call.tool == "retrieve" and call.result is not None
        assert sum(len(part.text.encode()) for part in call.result if hasattr(part, "text")) == RESULT_BYTES
        assert turn.final


def test_the_lab_side_compresses_within_the_window_and_sends_only_well_formed_requests() -> None:
    outcome = lab_run(60)
    assert len(outcome.calls) >= 120  # a tool round and an answer per reply, and summary calls
    assert outcome.compressions, "60 replies of 1,000 tokens must overflow 80% of 32,768"
    assert all(not call.violations for call in outcome.calls)
    assert max(call.tokens["as_sent"] for call in outcome.calls) < WINDOW


def test_each_meter_can_be_left_out_and_the_calls_stay_the_same() -> None:
    runs = {meters: lab_run(30, meters=meters) for meters in ("both", "protocol", "cache", "none")}
    tokens = {meters: [c.tokens for c in run.calls] for meters, run in runs.items()}
    assert all(sent == tokens["both"] for sent in tokens.values())
    cached = {meters: any(c.cached_tokens for c in run.calls) for meters, run in runs.items()}
    assert cached == {"both": True, "protocol": False, "cache": True, "none": False}


def test_both_sides_run_the_same_workload_call_for_call() -> None:
    from benchmarks.measures import real_run

    assert real_run(25) == len(lab_run(25).calls)


def test_the_timed_real_loop_makes_the_recorded_runs_calls_and_compressions() -> None:
    """The bench times the real agent with an unrecorded scripted model: the same calls, of the
    same kinds, and the same compressions before the same calls as a recorded run."""
    from benchmarks.measures import FIELDS
    from tests.parity.driver import run_agentscope
    from tests.parity.spec import ParityConfig

    runs = {
        record: run_agentscope(
            replies(40),
            ParityConfig(context_size=WINDOW, summary_fields=FIELDS, workspace="memory", record=record),
        )
        for record in (True, False)
    }
    kinds = {record: [c.kind for c in run.calls] for record, run in runs.items()}
    before = {record: [c.before_call for c in run.compressions] for record, run in runs.items()}
    assert kinds[True] == kinds[False] and "summary" in kinds[True]
    assert before[True] == before[False]
    assert all(not c.request for c in runs[False].calls)  # nothing recorded


def test_the_compression_timer_times_a_real_compression_each_time() -> None:
    once = compression_timer(400)  # asserts inside that the state was compressed
    assert once() > 0 and once() > 0
    assert plain_pass_timer(400)() >= 0


def test_best_in_turn_keeps_each_measures_smallest_value() -> None:
    values = iter([3.0, 10.0, 1.0, 20.0, 2.0, 5.0])
    calls: list[str] = []

    def take(name: str) -> float:
        calls.append(name)
        return next(values)

    assert best_in_turn(3, lambda: take("a"), lambda: take("b")) == [1.0, 5.0]
    assert calls == ["a", "b"] * 3  # in turn, round after round


def test_the_sweep_is_64_distinct_runs() -> None:
    configs = sweep_configs(64, replies=2)
    assert len(configs) == 64 == len(AXES["model.context_size"]) ** 3
    assert len({c.run_id for c in configs}) == 64


def test_a_figure_row_says_whether_its_goal_is_met() -> None:
    assert Figure("x", 2.0, ">= 1.7x", True, "x").row().startswith("ok ")
    assert Figure("y", 1.0, ">= 1.7x", False, "x").row().startswith("MISS")


def test_the_scenario_file_is_the_same_workload_as_the_script(tmp_path: Path) -> None:
    from benchmarks.measures import FIELDS
    from benchmarks.workload import scenario_file
    from ctxlab.experiments.grid import expand
    from ctxlab.scenarios.load import load_scenario

    path = tmp_path / "bench.yaml"
    path.write_text(scenario_file(25, FIELDS), encoding="utf-8")
    (config,) = expand(load_scenario(path))
    result = execute(config)
    assert result.status == "ok" and len(result.calls) == len(lab_run(25).calls)
    built = load_scenario(path).scenario.workload.build(0, {})
    for mine, theirs in zip(built.script.turns, replies(25).turns, strict=True):
        assert (mine.user, mine.final) == (theirs.user, theirs.final)
        ((call,),), ((expected,),) = [r.calls for r in mine.rounds], [r.calls for r in theirs.rounds]
        assert (call.tool, call.input) == (expected.tool, expected.input)
        assert sum(len(p.text.encode()) for p in call.result if hasattr(p, "text")) == RESULT_BYTES


@pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="reads Linux's per-process high-water mark"
)
def test_peak_memory_is_the_child_s_own_whatever_the_parent_holds() -> None:
    held = bytearray(300 * 1024 * 1024)
    held[::4096] = b"x" * len(held[::4096])  # every page resident
    small, grown = peak_rss_mb("x = 1"), peak_rss_mb("x = bytearray(200 * 1024 * 1024)")
    assert small < 100 and 200 < grown < 300 and held


def test_a_long_reply_s_process_reports_its_growth_time_and_its_own_peak_memory() -> None:
    growth = growth_apart("none", repeats=1, rounds=(4, 16))
    assert growth.ratio > 0 and 30 < growth.peak_mb < 1000
    assert 0 < growth.seconds < 60


def test_a_replay_s_growth_is_measured_at_the_window_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The never-compressed rows replay at a window no transcript fills, not the long-reply one."""
    import ctxlab.replay
    from benchmarks.measures import NEVER_COMPRESSED_WINDOW, long_reply_seconds

    windows: list[int | None] = []
    replay = ctxlab.replay.replay_transcript

    def spied(transcript: Path, out: Path, **options: Any) -> Any:
        windows.append(options["context_size"])
        return replay(transcript, out, **options)

    monkeypatch.setattr(ctxlab.replay, "replay_transcript", spied)
    long_reply_seconds("none", (4, 8), repeats=1, shape="turns", window=NEVER_COMPRESSED_WINDOW)
    assert windows == [NEVER_COMPRESSED_WINDOW] * 2


def test_the_long_reply_is_one_user_turn_answered_in_its_rounds(tmp_path: Path) -> None:
    """Every round is replayed: one call each, and one for the answer after the last result."""
    from benchmarks.measures import LONG_REPLY_WINDOW
    from benchmarks.workload import long_reply
    from ctxlab.replay import replay_transcript

    path = tmp_path / "reply.jsonl"
    path.write_text(long_reply(60), encoding="utf-8")
    results = replay_transcript(path, tmp_path / "out", context_size=LONG_REPLY_WINDOW, presets=["none"])
    assert results.runs["calls"].tolist() == [61]


def test_the_many_turn_workload_is_a_call_and_an_answer_per_turn(tmp_path: Path) -> None:
    """Each turn is a question, one call and its result, then an answer: two calls a turn, and
    the history grows by whole messages (four a turn, after the system message)."""
    from benchmarks.measures import LONG_REPLY_WINDOW
    from benchmarks.workload import many_turns
    from ctxlab.replay import replay_transcript

    path = tmp_path / "turns.jsonl"
    path.write_text(many_turns(30), encoding="utf-8")
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1 + 4 * 30
    results = replay_transcript(path, tmp_path / "out", context_size=LONG_REPLY_WINDOW, presets=["none"])
    assert results.runs["calls"].tolist() == [60]
    growth = growth_apart("none", repeats=1, rounds=(4, 16), shape="turns")
    assert growth.ratio > 0 and 0 < growth.seconds < 60
