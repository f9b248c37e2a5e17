"""`ctxlab tune` end to end: it finds the best feasible grid point's cost with fewer runs, its
best.yaml reruns to the same row, it is deterministic and resumes, and it writes nothing when
nothing is feasible."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ctxlab.cli import main
from ctxlab.tune import output
from tests.scenarios.files import write
from tests.tune.files import GRID, INFEASIBLE, RANGES, TUNED, WORKLOAD

OUTPUTS = (
    "trials.csv",
    "pareto.csv",
    "baseline.csv",
    "importance.csv",
    "best.yaml",
    "tune.json",
    "summary.md",
)


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def tune(tmp_path: Path, text: str, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("tune", str(write(tmp_path, text, "tuned.yaml")), "--out", str(out), *extra)


def feasible(row: dict[str, str], floor: float) -> bool:
    retention = min(float(row["retention_facts"]), float(row["retention_rules"]))
    broken = int(row["violations_openai"]) + int(row["violations_anthropic"]) + int(row["over_window_calls"])
    return row["status"] == "ok" and broken == 0 and retention >= floor


def test_tune_finds_the_grid_s_best_feasible_cost_with_fewer_runs_and_best_yaml_reruns_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "results"
    code, _, err = run_cli("run", str(write(tmp_path, GRID, "grid.yaml")), "--out", str(out), "--no-plots")
    assert code == 0, err
    grid = rows(out / "coding-grid" / "runs.csv")
    best_grid = min(float(r["cost"]) for r in grid if feasible(r, 0.8))
    cheaper_but_unsafe = [r for r in grid if float(r["cost"]) < best_grid and not feasible(r, 0.8)]
    assert cheaper_but_unsafe, "the space must hold cheaper settings that break a constraint"

    code, stdout, err = tune(tmp_path, TUNED, out, "--workers", "1")
    assert code == 0, err
    folder = out / "coding" / "tune"
    found = json.loads((folder / "tune.json").read_text(encoding="utf-8"))
    assert found["runs"] < len(grid) and found["trials"] == 12
    best = found["best"]
    assert best["why"] == [] and best["measures"]["cost"] <= best_grid * 1.02
    assert f"best feasible: trial {best['trial']}" in stdout

    code, _, err = run_cli("run", str(folder / "best.yaml"), "--out", str(out), "--no-plots")
    assert code == 0, err
    (rerun,) = rows(out / "coding-tuned" / "runs.csv")
    trial = rows(folder / "trials.csv")[best["trial"]]
    assert rerun["run_id"] == trial["run_id"] == best["run_id"]
    for column in ("cost", "total_input_tokens", "peak_input_tokens", "over_window_calls"):
        assert rerun[column] == trial[column], column
    assert "tuned settings" in (out / "index.md").read_text(encoding="utf-8").lower()


def test_every_output_is_written_and_the_pareto_front_is_feasible(tmp_path: Path) -> None:
    code, _, err = tune(tmp_path, RANGES, tmp_path / "results", "--workers", "1")
    assert code == 0, err
    folder = tmp_path / "results" / "ranges" / "tune"
    for name in (*OUTPUTS, "study.journal"):
        assert (folder / name).is_file(), name
    for figure in ("history", "pareto", "importance"):
        assert (folder / "figures" / f"{figure}.png").stat().st_size > 1000
    trials = rows(folder / "trials.csv")
    assert [t["trial"] for t in trials] == ["0", "1", "2", "3"]
    for trial in trials:
        limit = float(trial["param.agentscope.context.tool_result_limit"])
        assert 2000 <= limit <= 12000 and limit % 1000 == 0
        assert 0.02 <= float(trial["param.agentscope.context.reserve_ratio"]) <= 0.4
        assert trial["feasible"] == ("true" if not trial["why"] else "false")
    front = rows(folder / "pareto.csv")
    assert front and all(r["feasible"] == "true" for r in front)
    assert "workspace: none" in (folder / "best.yaml").read_text(encoding="utf-8")
    assert not list((tmp_path / "results").glob(".*journal"))


def test_the_same_seed_and_batch_give_the_same_bytes_whatever_the_workers(tmp_path: Path) -> None:
    folders = []
    for name, workers in (("a", ("--workers", "2")), ("b", ("--workers", "1", "--batch", "2"))):
        code, _, err = tune(tmp_path, RANGES, tmp_path / name, *workers, "--trials", "2")
        assert code == 0, err
        folders.append(tmp_path / name / "ranges" / "tune")
    for name in (*OUTPUTS, "figures/history.png", "figures/pareto.png", "figures/importance.png"):
        first, second = (f / name for f in folders)
        text = first.read_bytes()
        assert text == second.read_bytes().replace(b"/b/", b"/a/"), name


def test_an_interrupted_search_resumes_to_the_same_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = tune(tmp_path, RANGES, tmp_path / "straight", "--workers", "1")
    assert code == 0, err
    from ctxlab.tune import search

    real = search.run_grids
    batches: list[int] = []

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        batches.append(1)
        if len(batches) == 3:  # the third trial is asked, then the search is stopped while it runs
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(search, "run_grids", interrupted)
    code, _, err = tune(tmp_path, RANGES, tmp_path / "resumed", "--workers", "1")
    assert code == 130 and "the same command resumes it" in err
    assert not (tmp_path / "resumed" / "ranges").exists()
    assert len(list((tmp_path / "resumed").glob(".ranges.tune-*.journal"))) == 1
    monkeypatch.setattr(search, "run_grids", real)
    code, _, err = tune(tmp_path, RANGES, tmp_path / "resumed", "--workers", "1")
    assert code == 0, err
    straight, resumed = (tmp_path / n / "ranges" / "tune" / "trials.csv" for n in ("straight", "resumed"))
    assert straight.read_bytes() == resumed.read_bytes()


def test_a_larger_budget_extends_a_finished_search_and_a_timeout_says_it_cut_the_search(
    tmp_path: Path,
) -> None:
    out = tmp_path / "results"
    code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")
    assert code == 0, err
    first = rows(out / "ranges" / "tune" / "trials.csv")
    code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--timeout", "0")
    assert code == 0, err
    assert "--timeout cut the search after 2 of 4 trials" in err and "--trials 2" in err
    assert '"stopped": "timeout"' in (out / "ranges" / "tune" / "tune.json").read_text(encoding="utf-8")
    code, _, err = tune(tmp_path, RANGES, out, "--workers", "1")
    assert code == 0, err
    extended = rows(out / "ranges" / "tune" / "trials.csv")
    assert len(extended) == 4 and extended[:2] == first
    fresh = tmp_path / "fresh"
    assert tune(tmp_path, RANGES, fresh, "--workers", "1", "--trials", "2")[0] == 0
    code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")  # fewer than the study's
    assert code == 0, err
    for name in ("trials.csv", "tune.json", "best.yaml", "summary.md"):  # as a fresh search of 2: the first 2
        again = (out / "ranges" / "tune" / name).read_text(encoding="utf-8")
        assert again == (fresh / "ranges" / "tune" / name).read_text(encoding="utf-8").replace(
            "/fresh/", "/results/"
        ), name


def test_no_feasible_setting_exits_1_writes_nothing_and_names_the_constraint(tmp_path: Path) -> None:
    out = tmp_path / "results"
    code, stdout, err = tune(tmp_path, INFEASIBLE, out, "--workers", "1")
    assert code == 1 and stdout == ""
    assert "no setting met every constraint in" in err and "nothing was written" in err
    assert "over_window: met by 0 of" in err and "<- no trial met it" in err
    assert "nearest: trial" in err
    assert not out.exists()


def test_a_run_of_the_scenario_keeps_its_tune_folder(tmp_path: Path) -> None:
    out = tmp_path / "results"
    code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")
    assert code == 0, err
    code, _, err = run_cli("run", str(tmp_path / "tuned.yaml"), "--out", str(out), "--no-plots")
    assert code == 0, err
    assert (out / "ranges" / "runs.csv").is_file() and (out / "ranges" / "tune" / "trials.csv").is_file()
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "## ranges" in index and "(ranges/tune/best.yaml)" in index


def test_tune_on_a_transcript_writes_a_best_yaml_that_reruns_to_the_same_row(tmp_path: Path) -> None:
    traces = Path(__file__).resolve().parents[1] / "data" / "traces"
    trace = traces / "tau-bench_gpt-4o_airline_task02_trial1.jsonl"
    text = RANGES.replace("constraints: {retention: 0.8}", "constraints: {over_window: 0}")
    out = tmp_path / "results"
    code, _, err = tune(
        tmp_path, text, out, "--workers", "1", "--trace", str(trace), "--context-size", "4000"
    )
    assert code == 0, err
    folder = out / "tau-bench_gpt-4o_airline_task02_trial1" / "tune"
    best = json.loads((folder / "tune.json").read_text(encoding="utf-8"))["best"]
    assert f"path: {trace}" in (folder / "best.yaml").read_text(encoding="utf-8")
    code, _, err = run_cli("run", str(folder / "best.yaml"), "--out", str(out), "--no-plots")
    assert code == 0, err
    (rerun,) = rows(out / "tau-bench_gpt-4o_airline_task02_trial1-tuned" / "runs.csv")
    assert rerun["run_id"] == best["run_id"]
    assert int(rerun["total_input_tokens"]) == best["measures"]["total_input_tokens"]


def test_without_optuna_the_command_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "optuna", None)
    code, _, err = tune(tmp_path, RANGES, tmp_path / "results")
    assert code == 2 and "pip install 'ctxlab[tune]'" in err
    assert not (tmp_path / "results").exists()


def test_a_file_without_a_tune_section_and_stray_options_are_bad_input(tmp_path: Path) -> None:
    plain = write(tmp_path, TUNED.split("tune:")[0], "plain.yaml")
    code, _, err = run_cli("tune", str(plain), "--out", str(tmp_path / "results"))
    assert code == 2 and f"{plain}:1:1: has no tune: section" in err
    code, _, err = run_cli("tune", str(plain), "--context-size", "4000", "--out", str(tmp_path / "results"))
    assert code == 2 and "go with --trace" in err
    tuned = write(tmp_path, RANGES, "tuned.yaml")
    code, _, err = run_cli(
        "tune", str(tuned), "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "results")
    )
    assert code == 2 and "--scheduler tcp://127.0.0.1:1: a Dask scheduler needs --executor dask" in err
    assert not (tmp_path / "results").exists()


def test_quiet_leaves_out_the_load_warnings_as_run_does(tmp_path: Path) -> None:
    warned = RANGES.replace(
        "  - {name: agentscope, preset: agentscope}",
        '  - {name: agentscope, preset: agentscope, injection: {time_format: "%H:%M"}}',
    )
    path = write(tmp_path, warned, "warned.yaml")
    for quiet, out in (((), "loud"), (("--quiet",), "quiet")):
        code, _, err = run_cli("tune", str(path), "--trials", "1", *quiet, "--out", str(tmp_path / out))
        assert code == 0
        assert ("warning: '%H:%M' has no full date" in err) is not quiet


def test_problems_of_the_trace_transcript_are_told_at_the_option(tmp_path: Path) -> None:
    """With `--trace`, the transcript's warnings name `--trace FILE`, not the file's own
    workload line, and a probe the transcript cannot hold says whose turns it counted."""
    lines = [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "c9", "content": "a result with no call"},
        {"role": "assistant", "content": "done"},
    ]
    trace = tmp_path / "stray.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    probes = ("  probes:", "    - {kind:")
    unprobed = "".join(line for line in RANGES.splitlines(True) if not line.startswith(probes))
    unprobed = unprobed.replace("constraints: {retention: 0.8}", "constraints: {over_window: 0}")
    on_trace = ("--trace", str(trace), "--trials", "1")
    code, _, err = run_cli(
        "tune", str(write(tmp_path, unprobed, "a.yaml")), *on_trace, "--out", str(tmp_path / "o")
    )
    assert code == 0, err
    assert err.startswith(f"--trace {trace}: warning: line 2 (message 1): result for 'c9' answers no")
    probed = write(tmp_path, RANGES, "b.yaml")  # a probe at turn 1, where the transcript has one turn
    code, _, err = run_cli("tune", str(probed), *on_trace, "--out", str(tmp_path / "p"))
    assert code == 2 and "turn 1 does not exist" in err
    assert err.rstrip().endswith("(the probes' turns are now the --trace transcript's)")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_shows_the_best_feasible_value_on_stderr(tmp_path: Path) -> None:
    out, err = io.StringIO(), _Terminal()
    path = write(tmp_path, RANGES, "tuned.yaml")
    code = main(
        ["tune", str(path), "--out", str(tmp_path / "r"), "--workers", "1", "--trials", "2"], out=out, err=err
    )
    assert code == 0
    assert "best feasible total_input_tokens:" in err.getvalue()
    assert (
        "best feasible total_input_tokens:"
        not in (tmp_path / "r" / "ranges" / "tune" / "trials.csv").read_text()
    )


def test_several_files_are_tuned_in_one_call_and_a_bad_one_stops_all_before_any_search(
    tmp_path: Path,
) -> None:
    first = write(tmp_path, RANGES, "first.yaml")
    second = write(tmp_path, RANGES.replace("name: ranges", "name: ranges-again"), "second.yaml")
    out = tmp_path / "results"
    code, stdout, err = run_cli(
        "tune", str(first), str(second), "--out", str(out), "--workers", "1", "--trials", "2"
    )
    assert code == 0, err
    assert (out / "ranges" / "tune" / "trials.csv").is_file()
    assert (out / "ranges-again" / "tune" / "trials.csv").is_file()
    assert stdout.count("best feasible:") == 2
    bad = write(tmp_path, RANGES.replace("high: 0.9", "high: 2.0"), "bad.yaml")
    code, _, err = run_cli("tune", str(first), str(bad), "--out", str(tmp_path / "none"), "--trials", "2")
    assert code == 2 and "bad.yaml" in err
    assert not (tmp_path / "none").exists()
    code, _, err = run_cli("tune", str(first), str(second), "--trace", str(first), "--out", str(out))
    assert code == 2 and "--trace goes with one SCENARIO" in err


def test_a_file_s_figures_are_drawn_by_a_worker_while_the_next_is_searched_and_an_interruption_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write(tmp_path, RANGES, "first.yaml")
    second = write(tmp_path, RANGES.replace("name: ranges", "name: ranges-again"), "second.yaml")
    from ctxlab.experiments import executors
    from ctxlab.tune import output, search

    drawn: list[str] = []
    real_draw, real_pool, real = output.draw_report_figures, executors.local_pool, search.run_grids

    def interrupted(loaded: Any, *args: Any, **kwargs: Any) -> Any:
        if loaded[0].name == "ranges-again":
            raise KeyboardInterrupt
        return real(loaded, *args, **kwargs)

    class Pool:
        """The one pool `cmd_tune` makes, wrapped to see what is submitted to it."""

        def __init__(self, workers: int) -> None:
            self.inner = real_pool(workers)

        def submit(self, fn: Any, *args: Any) -> Any:
            if fn is real_draw:
                drawn.append(args[0].title)
            return self.inner.submit(fn, *args)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    monkeypatch.setattr(executors, "local_pool", Pool)
    monkeypatch.setattr(search, "run_grids", interrupted)
    out = tmp_path / "results"
    code, _, err = run_cli(
        "tune", str(first), str(second), "--out", str(out), "--workers", "2", "--trials", "2"
    )
    assert code == 130 and "the same command resumes it" in err
    assert drawn == ["ranges"]
    folder = out / "ranges" / "tune"
    assert {p.name for p in (folder / "figures").iterdir()} == {"history.png", "pareto.png", "importance.png"}
    assert not list((out / "ranges").glob(".tune.tmp-*")) and not list(out.glob(".ranges.tune-*.journal"))
    assert (out / "index.md").is_file()
    straight = tmp_path / "straight"
    code, _, err = run_cli(
        "tune", str(first), "--out", str(straight), "--workers", "1", "--batch", "2", "--trials", "2"
    )
    assert code == 0, err
    for name in (*OUTPUTS, "figures/history.png", "figures/pareto.png", "figures/importance.png"):
        assert (folder / name).read_bytes() == (straight / "ranges" / "tune" / name).read_bytes().replace(
            b"/straight/", b"/results/"
        ), name


def test_importances_are_ordered_by_value_then_name_whatever_optuna_s_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxlab.tune.search import RECORD, optuna_module, param_importance

    optuna = optuna_module()
    study = optuna.create_study(direction="minimize")
    for number, value in enumerate((1.0, 2.0)):
        trial = study.ask()
        trial.suggest_float("x", 0.0, 1.0)
        trial.set_user_attr(RECORD, {"why": [], "trial": number})
        study.tell(trial, value)
    unordered = {"b": 0.0, "c": 0.7, "a": 0.0, "d": 0.3}  # as a set of names may iterate
    monkeypatch.setattr(optuna.importance, "get_param_importances", lambda *_a, **_k: unordered)
    assert list(param_importance(study, 2)) == ["c", "d", "a", "b"]


CONFLICTING = f"""\
name: conflicting
{WORKLOAD}strategies:
  - {{name: none, preset: none}}
tune:
  trials: 2
  space:
    - preset: agentscope
      fixed: {{context.trigger_ratio: 0.3, context.reserve_ratio: 0.5}}
    - preset: agentscope
      name: searched
      fixed: {{context.reserve_ratio: 0.5}}
      params: {{context.trigger_ratio: {{low: 0.1, high: 0.45}}}}
"""


def test_settings_valid_alone_that_no_trial_can_combine_are_refused_before_any_search(tmp_path: Path) -> None:
    code, _, err = tune(tmp_path, CONFLICTING, tmp_path / "results")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 2
    assert (
        ":14:7: tune.space[0].fixed: these settings break a rule together: context: reserve_ratio 0.5"
        in lines[0]
    )
    assert ":17:7: tune.space[1].fixed: no setting of candidate 'searched' can run" in lines[1]
    assert "below trigger_ratio 0.1" in lines[1]
    assert not (tmp_path / "results").exists()
    code, _, validated = run_cli("validate", str(tmp_path / "tuned.yaml"))
    assert code == 2 and validated == err


def test_a_range_only_partly_valid_with_the_fixed_settings_is_searched(tmp_path: Path) -> None:
    first = CONFLICTING.index("    - preset: agentscope\n      fixed")
    second = CONFLICTING.index("    - preset: agentscope\n      name: searched")
    partly = (CONFLICTING[:first] + CONFLICTING[second:]).replace("high: 0.45", "high: 0.9")
    code, _, err = tune(tmp_path, partly, tmp_path / "results", "--workers", "1")
    assert code in (0, 1), err
    assert "can run" not in err
    assert (tmp_path / "results").exists()


def test_a_range_narrower_than_optunas_rounding_still_writes_a_best_yaml_that_loads(tmp_path: Path) -> None:
    """Past its startup trials, Optuna's TPE sampler answers a numpy float for such a range."""
    text = (
        "name: narrow\nworkload:\n  generator: {name: retrieval, params: {rounds: 4}}\n"
        "model: {context_size: 4000}\nstrategies:\n  - {preset: agentscope}\ntune:\n  trials: 14\n"
        "  constraints: {over_window: 100}\n  space:\n    - preset: agentscope\n"
        "      params: {context.trigger_ratio: {low: 0.5, high: 0.5000000000000001}}\n"
    )
    code, _, err = tune(tmp_path, text, tmp_path / "results", "--quiet")
    assert code == 0 and "Traceback" not in err, err
    best = yaml.safe_load(
        (tmp_path / "results" / "narrow" / "tune" / "best.yaml").read_text(encoding="utf-8")
    )
    assert best["strategies"][0]["context"]["trigger_ratio"] in (0.5, 0.5000000000000001)
    assert len(rows(tmp_path / "results" / "narrow" / "tune" / "trials.csv")) == 14


def test_an_edited_finished_search_starts_afresh_and_an_edited_open_journal_is_bad_input(
    tmp_path: Path,
) -> None:
    """A finished search's summary or journal edited by hand, or an interrupted search's journal,
    was read with a traceback by the next `tune`; a finished one it cannot read is now searched
    afresh, and an open journal it cannot read is refused, saying how to start afresh."""
    out = tmp_path / "results"
    code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")
    assert code == 0, err
    first = rows(out / "ranges" / "tune" / "trials.csv")
    edits = (
        ("tune.json", ""),
        ("tune.json", "[]"),
        ("study.journal", "garbage\n"),
        ("study.journal", '{"op_code": 99}\n'),
    )
    for name, text in edits:
        (out / "ranges" / "tune" / name).write_text(text, encoding="utf-8")
        code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")
        assert code == 0 and "Traceback" not in err, err
        assert rows(out / "ranges" / "tune" / "trials.csv") == first  # the same search, run again
    study = json.loads((out / "ranges" / "tune" / "tune.json").read_text(encoding="utf-8"))["study"]
    open_journal = out / f".ranges.tune-{study.removeprefix('ranges-')}.journal"  # as an interruption leaves
    for text, where in (
        ("not a log\n", f"{open_journal}:1"),
        ('{"op_code": 0}\n', f"{open_journal}"),
        ('{"op_code": 99}\n', f"{open_journal}:1"),  # no operation of Optuna's: it failed on it
        ('{"op_code": "0"}\n', f"{open_journal}:1"),
    ):
        open_journal.write_text(text, encoding="utf-8")
        code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "3")
        assert code == 2 and "Traceback" not in err, err
        assert f"{where}: is not a log of an Optuna study" in err
        assert "remove the file to start the search afresh" in err


def test_a_file_given_twice_or_a_tune_folder_that_is_a_file_is_refused_before_any_search(
    tmp_path: Path,
) -> None:
    path = str(write(tmp_path, RANGES, "tuned.yaml"))
    out = tmp_path / "results"
    code, _, err = run_cli("tune", path, path, "--out", str(out))
    assert code == 2 and f"{path}: is given twice; give each scenario file once" in err, err
    assert not out.exists()
    (out / "ranges").mkdir(parents=True)
    (out / "ranges" / "tune").write_text("x", encoding="utf-8")
    code, _, err = run_cli("tune", path, "--out", str(out))
    assert code == 2 and f"{out / 'ranges' / 'tune'}: is a file where results go" in err, err
    assert not list(out.glob(".*.journal"))
    (out / "ranges" / "tune").unlink()
    (out / "ranges" / "tune").symlink_to(tmp_path, target_is_directory=True)
    code, _, err = run_cli("tune", path, "--out", str(out))
    assert code == 2 and f"{out / 'ranges' / 'tune'}: is a symbolic link where results go" in err, err


def test_an_interruption_while_the_folder_is_written_leaves_no_empty_scenario_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the results were written removed the unfinished `tune/` but left the empty
    `<out>/<scenario>/` the search had made for it; one a run made stays."""
    from ctxlab.tune import output

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(output, "draw_report_figures", interrupted)
    out = tmp_path / "results"
    code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")
    assert code == 130, err
    assert not (out / "ranges").exists() and len(list(out.glob(".ranges.tune-*.journal"))) == 1
    (out / "ranges").mkdir()
    (out / "ranges" / "runs.csv").write_text("kept\n", encoding="utf-8")
    code, _, err = tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")
    assert code == 130, err
    assert sorted(p.name for p in (out / "ranges").iterdir()) == ["runs.csv"]


def test_a_rerun_with_the_same_trials_keeps_the_figures_unless_asked_to_redraw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[str] = []
    real = output.draw_report_figures

    def draw(job: output.FigureJob) -> None:
        drawn.append(job.title)
        real(job)

    monkeypatch.setattr(output, "draw_report_figures", draw)
    out, folder = tmp_path / "results", tmp_path / "results" / "ranges" / "tune"
    figures = ("history.png", "pareto.png", "importance.png")
    assert tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")[0] == 0
    first = {name: (folder / "figures" / name).read_bytes() for name in figures}
    assert tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2")[0] == 0
    assert len(drawn) == 1 and (folder / "figures.json").is_file()
    assert {name: (folder / "figures" / name).read_bytes() for name in figures} == first
    assert tune(tmp_path, RANGES, out, "--workers", "1", "--trials", "2", "--redraw")[0] == 0
    assert len(drawn) == 2
    assert tune(tmp_path, RANGES, out, "--workers", "1")[0] == 0  # two more trials: other figures
    assert len(drawn) == 3
