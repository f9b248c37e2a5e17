"""The `ctxlab` command end to end: run, replay, plot, presets, schema, help and exit codes."""

from __future__ import annotations

import copy
import csv
import gzip
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxlab.cli import main
from ctxlab.experiments import executors
from ctxlab.experiments.processes import process_pool
from ctxlab.presets.registry import PRESETS
from ctxlab.scenarios.schema import scenario_json_schema
from ctxlab.workloads.generators import GENERATORS
from tests.oracles import anthropic_problems, anthropic_shape
from tests.scenarios.files import TINY, long_reply, write

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "scenarios" / "data"


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_a_small_scenario_end_to_end(tmp_path: Path) -> None:
    path = write(tmp_path, TINY)
    code, out, err = run_cli("run", str(path), "--out", str(tmp_path / "results"), "--workers", "1")
    assert code == 0, err
    folder = tmp_path / "results" / "tiny"
    assert f"{folder}/: 1 run, peak input" in out and f"index: {tmp_path / 'results' / 'index.md'}" in out
    assert err == ""  # no progress bar when stderr is not a terminal
    (run,) = list(csv.DictReader((folder / "runs.csv").open(encoding="utf-8")))
    assert run["status"] == "ok" and int(run["compressions"]) >= 1 and run["violations_openai"] == "0"
    assert (folder / "figures" / f"sawtooth-{run['run_id']}.png").is_file()
    assert "## tiny" in (tmp_path / "results" / "index.md").read_text(encoding="utf-8")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_counts_the_runs_then_the_scenarios_drawn_and_so_does_plot(
    tmp_path: Path,
) -> None:
    paths = [write(tmp_path, TINY), write(tmp_path, TINY.replace("name: tiny", "name: other"), "other.yaml")]
    err = _Terminal()
    code = main(
        ["run", *map(str, paths), "--out", str(tmp_path / "r"), "--workers", "1"], out=io.StringIO(), err=err
    )
    frames = [f.strip() for f in err.getvalue().split("\r") if f.strip()]
    assert code == 0
    assert frames[0].startswith("running:   0%") and "0/2" in frames[0], frames
    drawing = [f for f in frames if f.startswith("drawing:")]
    assert drawing[0].startswith("drawing:   0%") and "0/2" in drawing[0], frames
    assert drawing[-1].startswith("drawing: 100%") and "2/2" in drawing[-1], frames
    assert [f for f in frames if not f.startswith(("running:", "drawing:"))] == []
    err = _Terminal()
    main(["run", *map(str, paths), "--out", str(tmp_path / "r"), "--no-plots"], out=io.StringIO(), err=err)
    assert "running" in err.getvalue() and "drawing" not in err.getvalue()
    err = _Terminal()
    main(["plot", str(tmp_path / "r"), "--workers", "2"], out=io.StringIO(), err=err)
    frames = [f.strip() for f in err.getvalue().split("\r") if f.strip()]
    assert frames[0].startswith("drawing:   0%") and frames[-1].startswith("drawing: 100%"), frames
    assert "2/2" in frames[-1] and "scenario" in frames[-1]


def test_off_a_terminal_the_grid_is_expanded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting the runs ahead (a resolved config and its hash per run) is for the bar only."""
    import ctxlab.experiments.run as running
    from ctxlab.experiments import grid

    expanded: list[str] = []

    def counting(loaded: Any, **options: Any) -> Any:
        expanded.append(loaded.name)
        return real(loaded, **options)

    real = grid.expand
    monkeypatch.setattr(grid, "expand", counting)
    monkeypatch.setattr(running, "expand", counting)
    code, _, err = run_cli("run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--no-plots")
    assert (code, expanded) == (0, ["tiny"]), err
    main(
        ["run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--no-plots"],
        out=io.StringIO(),
        err=_Terminal(),
    )
    assert expanded == ["tiny"] * 3


def test_a_file_given_twice_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, TINY)
    code, _, err = run_cli("validate", str(path), str(tmp_path / "." / "scenario.yaml"))
    assert (code, err) == (
        2,
        f"{tmp_path / '.' / 'scenario.yaml'}: is given twice; give each scenario file once\n",
    )


def test_a_file_where_a_results_folder_goes_is_refused_and_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "results"
    out.mkdir()
    (out / "tiny").write_text("mine", encoding="utf-8")
    code, _, err = run_cli("run", str(write(tmp_path, TINY)), "--out", str(out), "--no-plots")
    assert (code, err) == (
        2,
        f"{out / 'tiny'}: is a file where results go; move it or choose another --out\n",
    )
    assert sorted(p.name for p in out.iterdir()) == ["tiny"] and (out / "tiny").read_text() == "mine"


def test_a_link_where_a_results_folder_goes_is_refused_and_left_alone(tmp_path: Path) -> None:
    """Results replace their folder whole, which would drop a link there (and a rerun failed
    half-way, leaving a stray link beside it): refused before any run, the link kept."""
    out, elsewhere = tmp_path / "results", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_text("mine", encoding="utf-8")
    (out / "tiny").symlink_to(elsewhere, target_is_directory=True)
    code, _, err = run_cli("run", str(write(tmp_path, TINY)), "--out", str(out), "--no-plots")
    assert (code, err) == (
        2,
        f"{out / 'tiny'}: is a symbolic link where results go; they replace it whole, so remove "
        "the link or choose another --out\n",
    )
    assert [p.name for p in out.iterdir()] == ["tiny"] and (out / "tiny").is_symlink()
    assert [p.name for p in elsewhere.iterdir()] == ["mine.txt"]


def test_quiet_prints_nothing_and_record_requests_writes_request_files(tmp_path: Path) -> None:
    path = write(tmp_path, TINY)
    out_dir = tmp_path / "results"
    code, out, err = run_cli(
        "run", str(path), "--out", str(out_dir), "--quiet", "--no-plots", "--record-requests"
    )
    assert (code, out, err) == (0, "", "")
    assert len(list((out_dir / "tiny" / "requests").iterdir())) == 1
    assert not (out_dir / "tiny" / "figures").exists()


def test_record_requests_in_the_anthropic_view(tmp_path: Path) -> None:
    out_dir = tmp_path / "results"
    args = ("run", str(write(tmp_path, TINY)), "--out", str(out_dir), "--quiet", "--no-plots")
    code, _, err = run_cli(*args, "--record-requests", "--wire", "anthropic")
    assert code == 0, err
    (recorded,) = (out_dir / "tiny" / "requests").iterdir()
    assert recorded.name.endswith(".anthropic.jsonl.gz")
    lines = gzip.decompress(recorded.read_bytes()).decode("utf-8").splitlines()
    for line in lines:
        request = json.loads(line)
        assert list(request) == ["call_index", "kind", "system", "messages", "tools"]
        assert anthropic_shape(request["system"], request["messages"]) == []
        assert anthropic_problems(request["messages"]) == []
    assert any(json.loads(line)["tools"] for line in lines)


def test_a_wire_with_no_request_recorded_is_bad_input_and_writes_nothing(tmp_path: Path) -> None:
    out_dir = tmp_path / "results"
    args = ("run", str(write(tmp_path, TINY)), "--out", str(out_dir), "--no-plots", "--wire", "anthropic")
    code, out, err = run_cli(*args)
    assert (code, out) == (2, "")
    assert err == (
        "--wire anthropic: no request is recorded, so it would change nothing; add --record-requests "
        "(or record_requests: true in the scenario)\n"
    )
    assert not out_dir.exists()
    recorded = write(tmp_path, TINY + "record_requests: true\n", "recorded.yaml")
    assert (
        run_cli("run", str(recorded), "--out", str(out_dir), "--quiet", "--no-plots", "--wire", "anthropic")[
            0
        ]
        == 0
    )


@pytest.mark.parametrize("command", ["run", "replay"])
def test_figure_options_with_no_plots_are_bad_input_and_write_nothing(tmp_path: Path, command: str) -> None:
    out_dir = tmp_path / "results"
    given = str(write(tmp_path, TINY)) if command == "run" else str(DATA / "support-session.jsonl")
    code, out, err = run_cli(command, given, "--out", str(out_dir), "--no-plots", "--svg", "--redraw")
    assert (code, out) == (2, "")
    assert err == "".join(
        f"{option}: --no-plots draws no figure, so it would change nothing; give one\n"
        for option in ("--svg", "--redraw")
    )
    assert not out_dir.exists()


def test_a_failed_run_exits_1_with_its_error(tmp_path: Path) -> None:
    text = TINY.replace(
        "  - preset: agentscope\n",
        "  - preset: agentscope\n    context: {compression_fallback_to_truncation: false}\n",
    )
    text = text.replace(
        "context_size: 4000", "context_size: 4000\n  summarizer: {fail_on: [1, 2], fail_mode: empty}"
    )
    code, _, err = run_cli("run", str(write(tmp_path, text)), "--out", str(tmp_path / "r"), "--no-plots")
    assert code == 1 and "failed: SummaryFailedError" in err
    assert (tmp_path / "r" / "tiny" / "runs.csv").is_file()


def test_replay_a_transcript_with_settings(tmp_path: Path) -> None:
    code, _out, err = run_cli(
        "replay",
        str(DATA / "support-session.jsonl"),
        "--tools",
        str(DATA / "support-tools.json"),
        "--context-size",
        "1600",
        "--set",
        "context.trigger_ratio=0.7",
        "--set",
        "model.summarizer.fail_on=[1]",
        "--out",
        str(tmp_path),
        "--record-requests",
    )
    assert code == 0, err
    folder = tmp_path / "support-session"
    (run,) = list(csv.DictReader((folder / "runs.csv").open(encoding="utf-8")))
    assert run["param.strategy.context.trigger_ratio"] == "0.7" and run["source_violations"] == "3"
    assert run["param.model.summarizer.fail_on"] == "[1]"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["resolved_scenario"]["model"]["context_size"] == 1600
    assert (folder / "requests").is_dir()


@pytest.mark.parametrize(
    ("setting", "needle"),
    [
        (
            "context.trigger_ration=0.5",
            "names nothing: under strategies.agentscope.context: 'trigger_ration'",
        ),
        (
            "context.trigger_ratio=1.5",
            "--preset agentscope: context.trigger_ratio: 1.5 is above the maximum 0.9",
        ),
        ("context.trigger_ratio", "write PATH=VALUE"),
        ("context.trigger_ratio=!!python/name:os.system", "is not allowed"),
        ("preset=none", "--set preset=none: choose the strategy with --preset none"),
        ("record_requests=true", "--set record_requests=true: use --record-requests"),
        ("name=mine", "--set name=mine: a replay is named after its transcript's file; to name it, write a"),
        ("sweep.model.context_size=[1000]", "a replay runs one setting; to sweep, write a scenario file"),
        ("workload.trace.path=other.jsonl", "--set workload.trace.path=other.jsonl: the transcript is the"),
        ("workload.trace.tools=t.json", "--set workload.trace.tools=t.json: use --tools"),
        ("workload.trace.session=1", "use --session"),
        ("workload={generator: {name: retrieval}}", "a replay's workload is its transcript; to run another"),
        ("workload.generator.name=retrieval", "a replay's workload is its transcript; to run another"),
        ("workload.script.turns=[]", "a replay's workload is its transcript; to run another"),
        ("workload.trace={path: a.jsonl}", "the transcript is the replay's first argument"),
    ],
)
def test_replay_rejects_bad_settings(tmp_path: Path, setting: str, needle: str) -> None:
    code, _, err = run_cli(
        "replay", str(DATA / "support-session.jsonl"), "--set", setting, "--out", str(tmp_path / "o")
    )
    assert code == 2 and needle in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_replay_tells_a_setting_by_what_was_given(tmp_path: Path) -> None:
    """A window set with --set is told as that --set; a list item missing is given by setting
    the whole list (--set takes no index)."""
    trace, out = str(DATA / "support-session.jsonl"), str(tmp_path / "o")
    code, _, err = run_cli("replay", trace, "--set", "model.context_size=0", "--out", out)
    assert code == 2 and "ctxlab replay: --set model.context_size=0: 0 is not above the minimum 0" in err
    code, _, err = run_cli(
        "replay", trace, "--preset", "langchain-summary", "--set", "trigger=[tokens]", "--out", out
    )
    assert code == 2 and err.rstrip().endswith("give it with the whole value: --set trigger=VALUE"), err


def test_replay_takes_a_setting_of_its_transcript_s_own(tmp_path: Path) -> None:
    """The transcript's own settings (its name, the clock) are the replay's to set; what would
    replace the transcript is refused above."""
    out = tmp_path / "o"
    trace = str(DATA / "support-session.jsonl")
    sets = ("--set", "workload.trace.name=renamed", "--set", "workload.clock.start=2026-02-01T00:00:00")
    code, _, err = run_cli("replay", trace, *sets, "--out", str(out), "--no-plots", "--quiet")
    assert code == 0, err
    manifest = json.loads((out / "support-session" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["resolved_scenario"]["workload"]["trace"]["name"] == "renamed"
    assert manifest["resolved_scenario"]["workload"]["clock"]["start"].startswith("2026-02-01")


def test_replay_plays_every_recorded_round_of_a_reply_past_the_loop_limit(tmp_path: Path) -> None:
    trace = long_reply(tmp_path, 60)
    code, _, err = run_cli("replay", str(trace), "--out", str(tmp_path / "all"), "--no-plots")
    assert code == 0, err
    assert err == (
        "ctxlab replay: note: the transcript's longest reply has 60 rounds, over agentscope's limit of "
        "50 (react.max_iters); it is raised to 61 so every recorded round is replayed "
        "(--set react.max_iters=50 keeps the preset's)\n"
    )
    (run,) = csv.DictReader((tmp_path / "all" / "long" / "runs.csv").open(encoding="utf-8"))
    assert run["calls"] == "61"
    kept = ("replay", str(trace), "--set", "react.max_iters=50", "--out", str(tmp_path / "cut"), "--no-plots")
    code, _, err = run_cli(*kept)
    assert (
        code == 0 and "ctxlab replay: --preset agentscope: react.max_iters: warning: turn 0 scripts 60" in err
    )
    assert "10 scripted rounds in 1 turn are never played" in err and "note" not in err
    (run,) = csv.DictReader((tmp_path / "cut" / "long" / "runs.csv").open(encoding="utf-8"))
    assert run["calls"] == "51"


@pytest.mark.parametrize(
    "preset",
    ["langchain-clear", "langchain-summary", "deepagents", "strands-sliding-window", "strands-summarizing"],
)
def test_a_family_s_own_loop_limit_holds_in_a_run_as_in_its_entry(tmp_path: Path, preset: str) -> None:
    """A run's entry is its resolved config validated again: a family's own loop limit (far
    above 60 rounds) is the default it keeps there, so every round plays, unforced and unannounced,
    unless the replay sets `react.max_iters`."""
    trace = long_reply(tmp_path, 60)
    code, _, err = run_cli(
        "replay", str(trace), "--preset", preset, "--out", str(tmp_path / "all"), "--no-plots"
    )
    assert code == 0 and err == "", err
    (run,) = csv.DictReader((tmp_path / "all" / "long" / "runs.csv").open(encoding="utf-8"))
    assert run["calls"] == "61"
    cut = (
        "replay",
        str(trace),
        "--preset",
        preset,
        "--set",
        "react.max_iters=50",
        "--out",
        str(tmp_path / "cut"),
    )
    code, _, err = run_cli(*cut, "--no-plots")
    assert code == 0 and "10 scripted rounds in 1 turn are never played" in err
    (run,) = csv.DictReader((tmp_path / "cut" / "long" / "runs.csv").open(encoding="utf-8"))
    assert run["calls"] == "51"


def test_a_replay_past_pydantic_ai_s_request_limit_is_warned_of_and_plays_whole_once_raised(
    tmp_path: Path,
) -> None:
    """pydantic-ai's run fails at its request limit, not at a round: loading says so and names
    the setting, and `request_limit` set to it plays every round, unforced."""
    trace = long_reply(tmp_path, 60)
    args = ("replay", str(trace), "--preset", "pydantic-ai-clear", "--no-plots")
    code, _, err = run_cli(*args, "--out", str(tmp_path / "cut"))
    assert code == 1 and "react.max_iters" not in err
    assert (
        "--preset pydantic-ai-clear: request_limit: warning: turn 0 scripts 60 rounds, but pydantic-ai-clear "
        "plays at most 49 a reply (request_limit): 11 scripted rounds in 1 turn are never played, the run "
        "fails first; set request_limit: 61 to play every round"
    ) in err
    (run,) = csv.DictReader((tmp_path / "cut" / "long" / "runs.csv").open(encoding="utf-8"))
    assert run["calls"] == "50" and run["status"] == "failed" and "request_limit of 50" in run["error"]
    code, _, err = run_cli(*args, "--set", "request_limit=61", "--out", str(tmp_path / "all"))
    assert code == 0 and err == "", err
    (run,) = csv.DictReader((tmp_path / "all" / "long" / "runs.csv").open(encoding="utf-8"))
    assert run["calls"] == "61" and run["status"] == "ok"


def test_a_transcript_saved_with_a_byte_order_mark_replays_and_imports(tmp_path: Path) -> None:
    trace = tmp_path / "bom.jsonl"
    trace.write_bytes(
        b'\xef\xbb\xbf{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n'
    )
    code, _, err = run_cli("replay", str(trace), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    assert code == 0, err
    (run,) = csv.DictReader((tmp_path / "r" / "bom" / "runs.csv").open(encoding="utf-8"))
    assert run["calls"] == "1"
    code, out, err = run_cli("import", str(trace), "--out", str(tmp_path / "plain.jsonl"))
    assert code == 0 and "2 messages" in out, err


def test_transcripts_named_in_other_scripts_keep_their_own_results(tmp_path: Path) -> None:
    for stem in ("会话一", "会话二"):
        trace = tmp_path / f"{stem}.jsonl"
        trace.write_text(
            '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n', "utf-8"
        )
        code, _, err = run_cli("replay", str(trace), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
        assert code == 0, err
    folders = sorted(p.name for p in (tmp_path / "r").iterdir() if p.is_dir())
    assert len(folders) == 2 and all(name.startswith("transcript-") for name in folders)


def test_transcripts_whose_names_read_alike_keep_their_own_results(tmp_path: Path) -> None:
    """Names that differ only in characters a folder name leaves out (`a b`, `a-b`, `a.b`, `_a-b`)
    and two conversations of one file get folders of their own; a replay that does replace
    another transcript's (a file of the same name elsewhere) says so."""
    chat = '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n'
    out = tmp_path / "r"
    for name in ("a b.jsonl", "a-b.jsonl", "a.b.jsonl", "_a-b.jsonl"):
        (tmp_path / name).write_text(chat, "utf-8")
        code, _, err = run_cli("replay", str(tmp_path / name), "--out", str(out), "--no-plots", "--quiet")
        assert code == 0, err
    tau = ROOT / "tests" / "data" / "importers" / "tau-bench" / "results.json"
    for session in ("0", "1"):
        quiet = ("--out", str(out), "--no-plots", "--quiet")
        code, _, err = run_cli("replay", str(tau), "--session", session, *quiet)
        assert code == 0, err
    folders = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert len(folders) == 6 and "a-b" in folders and {"results", "results-session-1"} <= set(folders)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a-b.jsonl").write_text(chat.replace("yo", "hello"), "utf-8")
    again = ("replay", str(tmp_path / "elsewhere" / "a-b.jsonl"), "--out", str(out), "--no-plots")
    code, _, err = run_cli(*again)
    replaced = f"note: {out / 'a-b'}/ held the replay of {tmp_path / 'a-b.jsonl'}; it is replaced"
    assert code == 0 and replaced in err
    code, _, err = run_cli(*again)
    assert code == 0 and "held the replay" not in err  # its own replay again: rewritten as a rerun is
    scenario = write(tmp_path, TINY)  # a scenario's results where a replay goes: said too
    assert run_cli("run", str(scenario), "--out", str(out), "--no-plots", "--quiet")[0] == 0
    (tmp_path / "tiny.jsonl").write_text(chat, "utf-8")
    code, _, err = run_cli("replay", str(tmp_path / "tiny.jsonl"), "--out", str(out), "--no-plots")
    assert code == 0 and f"note: {out / 'tiny'}/ held the results of {scenario}; it is replaced" in err


def test_a_transcript_with_a_long_file_name_is_replayed(tmp_path: Path) -> None:
    """The results folder is named after the file, and its temporary sibling
    (`.<name>.tmp-<pid>`) must fit a file name too: a long name is cut and ends in a digest."""
    names = ["a" * 245 + ".jsonl", "a" * 245 + "b.jsonl"]
    for name in names:
        (tmp_path / name).write_text(
            '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n', "utf-8"
        )
        code, _, err = run_cli("replay", str(tmp_path / name), "--out", str(tmp_path / "r"), "--quiet")
        assert code == 0, err
    folders = sorted(p.name for p in (tmp_path / "r").iterdir() if p.is_dir())
    assert len(folders) == 2 and all(len(name) == 100 and name.startswith("a" * 91) for name in folders)


def test_transcripts_that_are_not_text_say_why(tmp_path: Path) -> None:
    plain = b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "caf\xe9"}\n'
    (tmp_path / "latin.jsonl").write_bytes(plain)
    (tmp_path / "t.jsonl.gz").write_bytes(gzip.compress(plain.replace(b"\xe9", b"e")))
    cases = [
        ("t.jsonl.gz", "it is gzip-compressed; decompress it first (gunzip FILE)"),
        ("latin.jsonl", "it is not UTF-8 text"),
    ]
    for name, why in cases:
        code, _, err = run_cli("replay", str(tmp_path / name), "--out", str(tmp_path / "o"))
        assert code == 2 and why in err and "codec" not in err, err
        code, _, err = run_cli("import", str(tmp_path / name), "--out", str(tmp_path / "x.jsonl"))
        assert code == 2 and why in err and "codec" not in err, err
    code, _, err = run_cli("replay", str(tmp_path / "latin.jsonl"), "--out", str(tmp_path / "o"))
    assert "(line 2, byte 71)" in err
    code, _, err = run_cli("replay", str(tmp_path), "--out", str(tmp_path / "o"))
    assert code == 2 and "a folder that is no strands session directory" in err  # a folder is a store
    assert not (tmp_path / "o").exists()


_USER = '{"role": "user", "content": "hi"}'
_CALL = '{"role": "assistant", "content": "", "tool_calls": [{"id": %s, "function": {"name": "f"}}]}'


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        (
            "arguments.jsonl",
            _USER
            + "\n"
            + _CALL.replace('"name": "f"', '"name": "f", "arguments": "[\\"\\\\ud800\\"]"') % '"c1"',
            "arguments.jsonl:2: tool_calls[0].function.arguments: its JSON escapes a lone surrogate",
        ),
        (
            "deep.jsonl",
            _USER + '\n{"role": "assistant", "content": "ok", "x": ' + "[" * 5000 + "]" * 5000 + "}",
            "deep.jsonl:2: the JSON is nested too deep",
        ),
    ],
)
def test_transcripts_of_json_no_text_holds_are_refused_at_their_line(
    tmp_path: Path, name: str, text: str, why: str
) -> None:
    """A call's arguments whose JSON escapes a lone surrogate (no preset could write them back
    as UTF-8), and nesting past the parser's depth: both are bad input at their line, not a
    traceback or a run that fails after loading."""
    (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    code, _, err = run_cli("import", str(tmp_path / name), "--out", str(tmp_path / "x.jsonl"))
    assert code == 2 and err.startswith(f"{tmp_path}/{why}"), err
    assert not (tmp_path / "x.jsonl").exists()
    code, _, err = run_cli("replay", str(tmp_path / name), "--out", str(tmp_path / "o"), "--no-plots")
    assert code == 2 and f"{tmp_path}/{why}" in err, err
    assert not (tmp_path / "o").exists()


_CUT = "as a string cut between the two halves of an emoji holds"


@pytest.mark.parametrize(
    ("name", "text", "line", "mended"),
    [
        (
            "reasoning.jsonl",
            _USER + '\n{"role": "assistant", "content": "ok", "reasoning_content": "cut \\ud83d"}',
            2,
            {"role": "assistant", "content": "ok", "reasoning_content": "cut \ufffd"},
        ),
        (
            "thread.json",
            '{"values": {"messages": [\n{"type": "human", "content": "hi"},\n'
            '{"type": "ai", "content": "\\ud83d\\ude00 \\uD800"}]}}',
            1,
            {"role": "assistant", "content": "\U0001f600 \ufffd"},
        ),
    ],
)
def test_a_lone_surrogate_is_read_as_the_replacement_character_and_said(
    tmp_path: Path, name: str, text: str, line: int, mended: dict[str, str]
) -> None:
    """A string cut between the halves of a UTF-16 pair (an emoji in a tool output a writer
    shortened) leaves a lone half no UTF-8 text can carry: the transcript is read with U+FFFD in
    its place, a whole pair kept, and the import and the replay say which line held one."""
    (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    code, _, err = run_cli("import", str(tmp_path / name), "--out", str(tmp_path / "x.jsonl"))
    assert code == 0, err
    said = f"lone surrogates (halves of UTF-16 pairs, {_CUT}) of 1 entry, the first at line {line}"
    assert said in " ".join(err.split()), err
    written = [json.loads(row) for row in (tmp_path / "x.jsonl").read_text(encoding="utf-8").splitlines()]
    assert written[-1] == mended
    code, _, err = run_cli("replay", str(tmp_path / name), "--out", str(tmp_path / "o"), "--no-plots")
    assert code == 0 and said in " ".join(err.split()), err


def test_replay_of_a_missing_transcript(tmp_path: Path) -> None:
    code, _, err = run_cli("replay", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o"))
    assert code == 2 and "nope.jsonl: no such transcript file" in err and not (tmp_path / "o").exists()


def test_a_transcript_argument_that_is_no_file_says_why(tmp_path: Path) -> None:
    """A pipe (what /dev/stdin is) and a link to nothing exist, or seem to: each is told apart
    from a missing file, for `import`, `replay` and `tune --trace` alike."""
    pipe, loop, gone = tmp_path / "pipe", tmp_path / "loop", tmp_path / "gone"
    os.mkfifo(pipe)
    loop.symlink_to(loop)
    gone.symlink_to(tmp_path / "missing")
    why = {
        pipe: "is not a regular file (a device or a pipe)",
        loop: "is a symbolic link to no file (its target is missing, or the links loop)",
        gone: "is a symbolic link to no file",
    }
    for path, said in why.items():
        code, _, err = run_cli("import", str(path), "--out", str(tmp_path / "x.jsonl"))
        assert code == 2 and err.startswith(f"{path}: {said}"), err
        code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
        assert code == 2 and err.startswith(f"{path}: {said}"), err
    scenario = write(tmp_path, TINY)
    code, _, err = run_cli("tune", str(scenario), "--trace", str(pipe), "--out", str(tmp_path / "o"))
    assert code == 2 and f"--trace {pipe}: is not a regular file" in err, err
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "o").exists()


def test_an_imported_file_is_made_as_open_makes_a_file(tmp_path: Path, traces_dir: Path) -> None:
    trace = sorted(traces_dir.glob("*.jsonl"))[0]
    umask = os.umask(0o027)
    try:
        code, _, err = run_cli("import", str(trace), "--out", str(tmp_path / "x.jsonl"))
    finally:
        os.umask(umask)
    assert code == 0, err
    assert (tmp_path / "x.jsonl").stat().st_mode & 0o777 == 0o640  # not mkstemp's 0600


def test_replay_with_missing_tool_schemas_names_the_option(tmp_path: Path, traces_dir: Path) -> None:
    trace = str(sorted(traces_dir.glob("*.jsonl"))[0])
    for tools, why in ((tmp_path / "none.json", "no such file"), (tmp_path, "is a folder")):
        code, _, err = run_cli("replay", trace, "--tools", str(tools), "--out", str(tmp_path / "o"))
        assert code == 2 and err.startswith(f"--tools {tools}: {why}"), err
        assert "scenario's folder" not in err and not (tmp_path / "o").exists()


def test_replay_of_a_vendored_transcript(tmp_path: Path, traces_dir: Path) -> None:
    trace = sorted(traces_dir.glob("*.jsonl"))[0]
    code, _, err = run_cli("replay", str(trace), "--context-size", "8000", "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    (run,) = list(csv.DictReader(next(tmp_path.glob("*/runs.csv")).open(encoding="utf-8")))
    assert run["violations_openai"] == run["violations_anthropic"] == "0"


def test_plot_regenerates_and_refuses_what_is_not_results(tmp_path: Path) -> None:
    paths = [write(tmp_path, TINY), write(tmp_path, TINY.replace("name: tiny", "name: other"), "other.yaml")]
    run_cli("run", *map(str, paths), "--out", str(tmp_path / "results"), "--no-plots", "--quiet")
    code, out, _ = run_cli("plot", str(tmp_path / "results"), "--workers", "2")
    assert code == 0 and out.count("figures/: 1 file\n") == 2 and "index: " in out
    assert (tmp_path / "results" / "tiny" / "figures").is_dir()
    assert not [p for p in (tmp_path / "results" / "other").iterdir() if p.name.startswith(".")]
    (tmp_path / "nothing").mkdir()
    code, _, err = run_cli("plot", str(tmp_path / "nothing"))
    assert code == 2 and "no results here" in err


def test_plot_refuses_a_folder_whose_files_cannot_be_read_and_keeps_every_figure(tmp_path: Path) -> None:
    paths = [write(tmp_path, TINY), write(tmp_path, TINY.replace("name: tiny", "name: other"), "other.yaml")]
    run_cli("run", *map(str, paths), "--out", str(tmp_path / "results"), "--quiet")
    figures = sorted((tmp_path / "results" / "other" / "figures").iterdir())
    damaged = [("runs.parquet", b"PAR1 cut short"), ("manifest.json", b"{"), ("manifest.json", b"[]")]
    for name, content in damaged:
        (tmp_path / "results" / "tiny" / name).write_bytes(content)
        for workers in ("1", "2"):  # read in this process, or in a worker
            code, _, err = run_cli("plot", str(tmp_path / "results"), "--workers", workers)
            assert code == 2 and "Traceback" not in err, err
            assert f"tiny/{name}: cannot be read as ctxlab results (" in err
            assert "run its scenario again" in err
            assert sorted((tmp_path / "results" / "other" / "figures").iterdir()) == figures
            assert not [p for p in (tmp_path / "results").glob("*/.*")]
        run_cli("run", str(paths[0]), "--out", str(tmp_path / "results"), "--quiet")


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ({"runs": [1, 2]}, "`runs` is not a list of objects, each with its `run_id`"),
        ({"sweep": None}, "`sweep` is not a list of objects, each with its `path`"),
        ({"sweep": [{}]}, "`sweep` is not a list of objects, each with its `path`"),
        ({"unmeasured": ["retention_facts"]}, "`unmeasured` is not an object of texts"),
        ({"warnings": 3}, "`warnings` is not a list of texts"),
        ({"columns": []}, "`columns` is not an object of objects"),
        ({"prices": {"input": "one"}}, "`prices` is not an object of numbers"),
    ],
)
def test_an_edited_manifest_is_refused_by_plot_and_named_in_the_index_of_a_run(
    tmp_path: Path, edit: dict[str, object], why: str
) -> None:
    """A manifest edited by hand (or written by something else) reached the readers, which
    failed on it with a traceback, in `plot` and in the index every `run` writes of its root."""
    paths = [write(tmp_path, TINY), write(tmp_path, TINY.replace("name: tiny", "name: other"), "other.yaml")]
    run_cli("run", *map(str, paths), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    manifest = tmp_path / "r" / "other" / "manifest.json"
    manifest.write_text(
        json.dumps({**json.loads(manifest.read_text(encoding="utf-8")), **edit}), encoding="utf-8"
    )
    code, _, err = run_cli("plot", str(tmp_path / "r" / "other"))
    assert code == 2 and "Traceback" not in err, err
    assert f"other/manifest.json: cannot be read as ctxlab results (not a results manifest: {why})" in err
    code, _, err = run_cli("run", str(paths[0]), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    assert code == 0 and err == ""
    index = (tmp_path / "r" / "index.md").read_text(encoding="utf-8")
    assert (
        f"## other\n\n_Not shown: `other/manifest.json` cannot be read (not a results manifest: {why})"
        in index
    )


def test_a_runs_table_without_a_column_every_reader_takes_is_refused(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    run_cli("run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    runs = tmp_path / "r" / "tiny" / "runs.parquet"
    pq.write_table(pq.read_table(runs).drop(["status"]), runs)
    code, _, err = run_cli("plot", str(tmp_path / "r"))
    assert code == 2 and "Traceback" not in err, err
    assert "tiny/runs.parquet: cannot be read as ctxlab results (no `status` column)" in err


@pytest.mark.parametrize(
    ("edit", "file", "why"),
    [
        (("manifest", "prices", None), "manifest.json", "`prices` is not an object of numbers"),
        (
            ("manifest", "prices", {"input": 1}),
            "manifest.json",
            "`prices` is not an object of numbers for input",
        ),
        (("run", "model", None), "manifest.json", "its `model` has no whole-number `context_size`"),
        (("run", "model", {"context_size": "8000"}), "manifest.json", "no whole-number `context_size`"),
        (("run", "retention", ["x"]), "manifest.json", "its `retention` is not a list of objects"),
        (("runs", "cost", None), "runs.parquet", "no `cost` column, which its figures read"),
        (
            ("calls", "input_tokens", None),
            "calls.parquet",
            "no `input_tokens` column, which its figures read",
        ),
    ],
)
def test_plot_refuses_a_folder_without_what_its_figures_read_and_keeps_every_figure(
    tmp_path: Path, edit: tuple[str, str, object], file: str, why: str
) -> None:
    """Readers of a folder take it without these (an older folder, a hand edit); drawing failed
    on them with a traceback and exit 1."""
    import pyarrow.parquet as pq

    run_cli("run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--quiet")
    folder = tmp_path / "r" / "tiny"
    figures = sorted((folder / "figures").iterdir())
    where, key, value = edit
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    if where == "manifest":
        manifest[key] = value
    elif where == "run":
        manifest["runs"][0][key] = value
    else:
        table = folder / f"{where}.parquet"
        pq.write_table(pq.read_table(table).drop([key]), table)
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, _, err = run_cli("plot", str(tmp_path / "r"))
    assert code == 2 and "Traceback" not in err, err
    assert f"tiny/{file}: cannot be read as ctxlab results (" in err and why in err, err
    assert sorted((folder / "figures").iterdir()) == figures and not list(folder.glob(".*"))


def test_plot_refuses_a_figures_file_or_link_and_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    """Both failed as a run that failed (exit 1), the first with advice about --out, which plot
    does not take."""
    run_cli("run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    figures = tmp_path / "r" / "tiny" / "figures"
    figures.write_text("mine", encoding="utf-8")
    code, _, err = run_cli("plot", str(tmp_path / "r"))
    assert (code, err) == (2, f"{figures}: is a file where results go; move it\n")
    figures.unlink()
    figures.symlink_to(tmp_path, target_is_directory=True)
    code, _, err = run_cli("plot", str(tmp_path / "r" / "tiny"))
    assert code == 2 and err.startswith(f"{figures}: is a symbolic link where results go"), err
    code, _, err = run_cli("plot", str(tmp_path / "nowhere"))
    assert (code, err) == (
        2,
        f"{tmp_path / 'nowhere'}: does not exist; give a results folder (`ctxlab run` writes one)\n",
    )


def test_a_manifest_json_that_is_a_folder_is_no_results_folder(tmp_path: Path) -> None:
    run_cli("run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    (tmp_path / "r" / "odd" / "manifest.json").mkdir(parents=True)
    code, _, err = run_cli("plot", str(tmp_path / "r"))
    assert code == 0 and "Traceback" not in err, err
    code, _, err = run_cli("plot", str(tmp_path / "r" / "odd"))
    assert code == 2 and "no results here" in err, err


def test_plot_refuses_a_table_cut_short_at_a_line_boundary(tmp_path: Path) -> None:
    """A CSV cut after a whole line still parses: the rows it lost are found missing against the
    manifest and the runs' call counts, not drawn as a shorter run (or no run at all)."""
    path = write(tmp_path, TINY)
    run_cli("run", str(path), "--out", str(tmp_path / "r"), "--quiet")
    folder = tmp_path / "r" / "tiny"
    figures = {p.name: p.read_bytes() for p in (folder / "figures").iterdir()}
    for name in ("runs", "calls"):
        (folder / f"{name}.parquet").unlink()
        lines = (folder / f"{name}.csv").read_text(encoding="utf-8").splitlines(keepends=True)
        (folder / f"{name}.csv").write_text("".join(lines[:-1]), encoding="utf-8")
        code, _, err = run_cli("plot", str(folder))
        assert code == 2 and "Traceback" not in err, err
        assert f"tiny/{name}.csv: cannot be read as ctxlab results (" in err
        assert {p.name: p.read_bytes() for p in (folder / "figures").iterdir()} == figures
        run_cli("run", str(path), "--out", str(tmp_path / "r"), "--quiet")


def test_plot_refuses_a_runs_csv_the_index_cannot_read_beside_a_whole_parquet(tmp_path: Path) -> None:
    """The figures read `runs.parquet`, the index `runs.csv`: plot drew the figures, wrote an
    index saying the folder cannot be read, and exited 0."""
    paths = [write(tmp_path, TINY), write(tmp_path, TINY.replace("name: tiny", "name: other"), "other.yaml")]
    run_cli("run", *map(str, paths), "--out", str(tmp_path / "r"), "--quiet")
    index = (tmp_path / "r" / "index.md").read_bytes()
    runs = tmp_path / "r" / "tiny" / "runs.csv"
    runs.write_text(runs.read_text(encoding="utf-8")[:40], encoding="utf-8")
    code, _, err = run_cli("plot", str(tmp_path / "r"))
    assert code == 2 and "tiny/runs.csv: cannot be read as ctxlab results (" in err, err
    assert (tmp_path / "r" / "index.md").read_bytes() == index


def test_a_run_writes_the_index_beside_unreadable_and_older_results_folders(tmp_path: Path) -> None:
    """A results root kept across versions: a folder written before a column existed shows it
    empty, and one that cannot be read is named in the index without stopping the run."""
    import pyarrow.parquet as pq

    paths = [write(tmp_path, TINY), write(tmp_path, TINY.replace("name: tiny", "name: older"), "older.yaml")]
    run_cli("run", *map(str, paths), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    runs = tmp_path / "r" / "older" / "runs.parquet"
    pq.write_table(pq.read_table(runs).drop(["violations_bedrock"]), runs)
    csv_runs = tmp_path / "r" / "older" / "runs.csv"
    rows = list(csv.reader(csv_runs.read_text(encoding="utf-8").splitlines()))
    dropped = rows[0].index("violations_bedrock")
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([r[:dropped] + r[dropped + 1 :] for r in rows])
    csv_runs.write_text(out.getvalue(), encoding="utf-8")
    (tmp_path / "r" / "broken").mkdir()
    (tmp_path / "r" / "broken" / "manifest.json").write_text("{", encoding="utf-8")
    code, _, err = run_cli("run", str(paths[0]), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    assert code == 0 and err == ""
    index = (tmp_path / "r" / "index.md").read_text(encoding="utf-8")
    assert "## broken\n\n_Not shown: `broken/manifest.json` cannot be read (not JSON: " in index
    assert "## older" in index and "| 0/0/ |" in index and "## tiny" in index


def test_plot_draws_without_importing_the_run_path(tmp_path: Path) -> None:
    """Redrawing reads results: it needs neither the scenario loader nor the presets."""
    path = write(tmp_path, TINY)
    run_cli("run", str(path), "--out", str(tmp_path / "results"), "--no-plots", "--quiet")
    argv = ["plot", str(tmp_path / "results"), "--workers", "1"]
    code = f"import sys; from ctxlab.cli import main; main({argv!r}); print(sorted(sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    loaded = done.stdout.splitlines()[-1]
    assert (tmp_path / "results" / "tiny" / "figures").is_dir() and "'matplotlib'" in loaded
    assert "'ctxlab.scenarios.load'" not in loaded and "'ctxlab.presets.registry'" not in loaded


def test_presets_prints_one_line_per_preset() -> None:
    code, out, _ = run_cli("presets")
    lines = out.splitlines()
    assert code == 0 and [line.split()[0] for line in lines] == list(PRESETS)
    assert "context.trigger_ratio=0.8" in lines[0] and "context.reserve_ratio=0.1" in lines[0]
    code, out, _ = run_cli("presets", "--verbose")
    assert "source: agentscope 2.0.11" in out
    assert "note: tags: ctxlab's messages carry none" in out  # swe-agent's declared deviations


def test_the_committed_schema_is_the_generated_one(tmp_path: Path) -> None:
    target = tmp_path / "scenario.schema.json"
    code, _, _ = run_cli("schema", "--out", str(target))
    assert code == 0
    assert target.read_text(encoding="utf-8") == (ROOT / "scenarios" / "scenario.schema.json").read_text(
        encoding="utf-8"
    )
    assert json.loads(target.read_text())["title"] == "ctxlab scenario"
    assert scenario_json_schema()["properties"]["strategies"]["items"]["properties"]["preset"][
        "enum"
    ] == list(PRESETS)


@pytest.mark.parametrize("command", ["run", "replay", "tune"])
def test_help_shows_examples(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    help_text = capsys.readouterr().out
    assert "examples:" in help_text and f"ctxlab {command} " in help_text


def test_python_dash_m_ctxlab_is_the_command(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "ctxlab", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0 and "exit codes: 0 ok, 1 a run failed, 2 bad input" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "ctxlab"], capture_output=True, text=True, env=env, cwd=tmp_path, check=False
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_a_run_whose_output_reader_is_gone_finishes_its_work(tmp_path: Path) -> None:
    """`ctxlab run ... | head -1`: a closed pipe drops what is left to say; the results and the
    index are written and the exit code is the run's own, with nothing said of the pipe."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    scenario = str(write(tmp_path, TINY))
    command = [sys.executable, "-m", "ctxlab", "run", scenario, "--out", str(tmp_path / "r"), "--no-plots"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before the command says anything
    said = process.stderr.read().decode("utf-8")
    assert process.wait(timeout=120) == 0, said
    assert said == "" and (tmp_path / "r" / "index.md").is_file() and (tmp_path / "r" / "tiny").is_dir()


def test_output_whose_reader_is_gone_is_dropped_and_the_rest_is_the_stream_s() -> None:
    from ctxlab.cli.base import ReaderGone

    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def isatty(self) -> bool:
            return True

    assert ReaderGone(Closed()).isatty()  # a terminal's progress bar is still drawn on one
    stream = ReaderGone(Closed())
    assert stream.write("a line\n") == 7 and stream.gone
    stream.write("more")  # dropped, not raised
    stream.flush()
    assert not stream.isatty()
    closed = ReaderGone(None)  # a stream closed before the command started (`>&-`)
    assert closed.gone and closed.write("x") == 1 and not closed.isatty()
    closed.flush()
    assert copy.copy(closed).gone  # copying (or pickling) does not recurse for its stream


@pytest.mark.parametrize("closed", [">&-", "2>&-"])
def test_a_command_whose_stream_is_closed_from_the_start_exits_with_its_own_code(
    tmp_path: Path, closed: str
) -> None:
    """`ctxlab validate file.yaml >&-`: Python gives the command no stream at all (None)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for given, code in ((str(write(tmp_path, TINY)), 0), (str(tmp_path / "missing.yaml"), 2)):
        command = f'"$0" -m ctxlab validate "$1" {closed}'
        shell = ["bash", "-c", command, sys.executable, given]
        done = subprocess.run(shell, env=env, cwd=tmp_path, check=False, capture_output=True)
        assert done.returncode == code and b"Traceback" not in done.stderr, done.stderr


def test_a_run_without_figures_imports_neither_matplotlib_nor_pandas(tmp_path: Path) -> None:
    """Start-up is a large share of a small run: drawing libraries load only when figures are
    drawn, the tables are written and the index read without pandas, pyarrow or numpy, and a
    script workload imports no transcript reader."""
    path = write(tmp_path, TINY)
    argv = ["run", str(path), "--out", str(tmp_path / "r"), "--quiet", "--no-plots", "--workers", "1"]
    code = f"import sys; from ctxlab.cli import main; main({argv!r}); print(sorted(sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    loaded = done.stdout
    assert (tmp_path / "r" / "index.md").is_file()
    assert "'matplotlib'" not in loaded and "'ctxlab.analysis.plots'" not in loaded
    assert "'pandas'" not in loaded and "'pyarrow'" not in loaded and "'numpy'" not in loaded
    assert "'ctxlab.workloads.importers'" not in loaded  # the readers load for a transcript alone
    assert "'ctxlab.experiments.execute'" in loaded  # the probe sees the run's own imports


def test_the_parser_and_help_import_no_loader_readers_or_libraries() -> None:
    """`ctxlab --help` and every command's help come back at once: building the parser imports
    neither the scenario loader (and its preset registry) nor the transcript readers."""
    code = (
        "import sys; from ctxlab.cli import build_parser; build_parser()\n"
        "for line in ('import', 'replay', 'tune'):\n"
        "    try: build_parser().parse_args([line, '--help'])\n"
        "    except SystemExit: pass\n"
        "print(sorted(sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    loaded = done.stdout.splitlines()[-1]
    assert "'ctxlab.cli.transcripts'" in loaded  # the probe sees the parser's own imports
    for heavy in ("ctxlab.scenarios", "ctxlab.presets", "ctxlab.workloads", "pydantic", "yaml", "pandas"):
        assert f"'{heavy}'" not in loaded, heavy


def test_the_command_lists_every_format_the_readers_know_in_their_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ctxlab.cli.transcripts import FORMAT_SUMMARIES
    from ctxlab.workloads.importers import FORMATS

    assert list(FORMAT_SUMMARIES) == list(FORMATS)
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    help_text = capsys.readouterr().out
    assert all(f"  {name:<20}{summary}" in help_text for name, summary in FORMAT_SUMMARIES.items())


def test_the_index_reads_the_same_from_csv_and_from_parquet(tmp_path: Path) -> None:
    """The index reads `runs.csv` with the standard library (the same with `runs.parquet` gone),
    and a folder without the CSV from `runs.parquet` with pyarrow."""
    from ctxlab.analysis.report import write_index

    text = TINY.replace(
        "context_size: 4000", "context_size: 4000\n  summarizer: {fail_on: [1, 2], fail_mode: empty}"
    )
    text = text.replace(
        "  - preset: agentscope\n",
        "  - preset: agentscope\n    context: {compression_fallback_to_truncation: false}\n"
        "  - preset: none\n",
    )
    run_cli("run", str(write(tmp_path, text)), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    from_csv = (tmp_path / "r" / "index.md").read_text(encoding="utf-8")
    assert "**failed**: SummaryFailedError" in from_csv and "| none |" in from_csv
    folder = tmp_path / "r" / "tiny"
    csv_text = (folder / "runs.csv").read_bytes()
    (folder / "runs.csv").unlink()
    assert write_index(tmp_path / "r").read_text(encoding="utf-8") == from_csv
    (folder / "runs.csv").write_bytes(csv_text)
    (folder / "runs.parquet").unlink()
    assert write_index(tmp_path / "r").read_text(encoding="utf-8") == from_csv


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda lines: [*lines[:1], lines[1] + ",extra", *lines[2:]], "line 2 has "),
        (lambda lines: [lines[0].replace("status", "state"), *lines[1:]], "no `status` column"),
        (lambda lines: lines[:-1], "holds 1 of the manifest's 2 runs, or others"),
        (
            lambda lines: [
                lines[0],
                ",".join("x" if i == 3 else c for i, c in enumerate(lines[1].split(","))),
                *lines[2:],
            ],
            "line 2: invalid literal for int() with base 10: 'x'",
        ),
    ],
)
def test_an_edited_runs_csv_is_named_in_the_index(
    tmp_path: Path, edit: Callable[[list[str]], list[str]], why: str
) -> None:
    text = TINY.replace("  - preset: agentscope\n", "  - preset: agentscope\n  - preset: none\n")
    run_cli("run", str(write(tmp_path, text)), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    runs = tmp_path / "r" / "tiny" / "runs.csv"
    runs.write_text("\n".join(edit(runs.read_text(encoding="utf-8").splitlines())) + "\n", encoding="utf-8")
    from ctxlab.analysis.report import write_index

    index = write_index(tmp_path / "r").read_text(encoding="utf-8")
    assert f"_Not shown: `tiny/runs.csv` cannot be read ({why}" in index, index


def test_the_readme_scenario_example_is_valid(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    code, out, err = run_cli("validate", str(write(tmp_path, example)))
    assert code == 0, err
    assert "my-scenario, 8 runs" in out  # agentscope and none once per window, early four times


def _shown_default(value: object) -> str:
    """A parameter's default as the README's generator table writes it."""
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json.dumps(value, ensure_ascii=False)
    return f"{value:g}" if isinstance(value, float) else str(value)


def test_the_readme_generator_table_lists_every_generator_and_its_defaults() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    table = {row.split(" | ")[0].strip("| `"): row.rsplit(" | ", 1)[1].rstrip(" |") for row in rows}
    for name, generator in GENERATORS.items():
        fields = generator.params.model_fields.items()
        written = ", ".join(
            f"`{field}` {_shown_default(info.get_default(call_default_factory=True))}"
            for field, info in fields
            if field != "probes"
        )
        assert table.get(name) == written, name


def test_replay_names_the_setting_a_preset_rule_refuses(tmp_path: Path) -> None:
    """A rule of the preset's parameters reads at the setting given, the package's wording kept."""
    code, out, err = run_cli(
        "replay",
        str(DATA / "support-session.jsonl"),
        "--preset",
        "openhands",
        "--set",
        "condenser.max_size=0",
        "--out",
        str(tmp_path / "o"),
    )
    assert (code, out) == (2, "")
    assert err == (
        "ctxlab replay: --preset openhands: condenser.max_size: condenser max_size=0: the SDK's "
        "LLMSummarizingCondenser refuses it (its own check); use a value above 0\n"
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["import", "TRACE", "--out", "FILE/sub/x.jsonl"],
        ["import", "TRACE", "--out", "x.jsonl", "--tools-out", "FILE/tools.json"],
        ["run", "SCENARIO", "--out", "FILE/results"],
        ["replay", "TRACE", "--out", "FILE/results"],
        ["tune", str(ROOT / "scenarios" / "compare-coding.yaml"), "--trials", "2", "--out", "FILE/results"],
    ],
)
def test_an_output_path_inside_a_file_is_refused_before_any_work(tmp_path: Path, command: list[str]) -> None:
    """No folder can be made inside a file: said at once (exit 2), not after the runs."""
    file = write(tmp_path, b"x", "file")
    trace = long_reply(tmp_path, 2)
    scenario = write(tmp_path, TINY)
    given = [a.replace("TRACE", str(trace)).replace("SCENARIO", str(scenario)) for a in command]
    given = [
        str(tmp_path / a.replace("FILE", "file")) if a.startswith("FILE") or a == "x.jsonl" else a
        for a in given
    ]
    code, _, err = run_cli(*given)
    assert code == 2 and f"{file} is a file, so no folder can be made inside it" in err, err
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("command", ["run", "replay", "tune"])
def test_a_results_root_whose_index_is_a_folder_is_refused_before_any_work(
    tmp_path: Path, command: str
) -> None:
    """The index is written over `<out>/index.md` last: a folder there failed the command after
    every run, with a temporary file left beside it."""
    (tmp_path / "r" / "index.md").mkdir(parents=True)
    given = {
        "run": [str(write(tmp_path, TINY))],
        "replay": [str(long_reply(tmp_path, 2))],
        "tune": [str(ROOT / "scenarios" / "compare-coding.yaml"), "--trials", "2"],
    }[command]
    code, _, err = run_cli(command, *given, "--out", str(tmp_path / "r"))
    assert code == 2 and "its index.md is not a file; move it away, or give another folder" in err, err
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["index.md"]


def test_a_scenario_this_user_may_not_read_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading it said `[Errno 13] Permission denied` and exit 1; root reads any file, so the
    refusal is what the file system would raise."""
    from ctxlab.problems import ScenarioError
    from ctxlab.scenarios.text import read_text

    def refused(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    path = write(tmp_path, TINY)
    monkeypatch.setattr(Path, "read_bytes", refused)
    with pytest.raises(ScenarioError, match="cannot be read: Permission denied; check its permissions"):
        read_text(path)


def test_import_never_writes_its_tool_schemas_over_the_transcript_or_the_conversation(tmp_path: Path) -> None:
    """`--tools-out` naming the transcript replaced the transcript with its schemas (exit 0)."""
    trace = long_reply(tmp_path, 2)
    before = trace.read_bytes()
    out = tmp_path / "out.jsonl"
    for tools_out, what in ((trace, "the transcript itself"), (out, "the --out file")):
        code, _, err = run_cli("import", str(trace), "--out", str(out), "--tools-out", str(tools_out))
        assert code == 2 and f"--tools-out {tools_out}: is {what}; give another path" in err, err
        assert trace.read_bytes() == before and not out.exists()


@pytest.mark.parametrize("command", [["replay", "TRACE", "--context-size"], ["run", "SCENARIO", "--workers"]])
def test_an_option_number_past_64_bits_is_refused_before_any_work(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A window of 10^23 tokens replayed the transcript and then failed writing its results."""
    given = [
        str(long_reply(tmp_path, 2)) if a == "TRACE" else str(write(tmp_path, TINY)) if a == "SCENARIO" else a
        for a in command
    ]
    with pytest.raises(SystemExit) as done:
        run_cli(*given, "99999999999999999999999", "--out", str(tmp_path / "r"))
    assert done.value.code == 2
    assert (
        "99999999999999999999999 is above 9,223,372,036,854,775,807, the largest" in capsys.readouterr().err
    )
    assert not (tmp_path / "r").exists()


def test_a_tuning_timeout_that_is_no_number_of_seconds_is_refused() -> None:
    scenario = str(ROOT / "scenarios" / "compare-coding.yaml")
    code, _, err = run_cli("tune", scenario, "--timeout", "nan", "--trials", "2")
    assert code == 2 and "--timeout nan: give seconds, 0 or more" in err


def test_a_tuning_budget_above_a_files_most_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = str(ROOT / "scenarios" / "compare-coding.yaml")
    with pytest.raises(SystemExit) as done:
        run_cli("tune", scenario, "--trials", "10001")
    assert done.value.code == 2
    assert "argument --trials: 10001 is above 10,000, the most a study runs" in capsys.readouterr().err


def test_a_replays_warnings_name_the_command_not_a_line_it_has_not(tmp_path: Path) -> None:
    """A replay's document is made in memory: its warnings, on stderr and in the manifest, say
    they come from `ctxlab replay`, with no file position."""
    lines = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
        {"role": "tool", "tool_call_id": "c9", "content": "a result with no call"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]
    trace = tmp_path / "stray.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    code, _, err = run_cli("replay", str(trace), "--out", str(tmp_path / "o"), "--no-plots")
    told = "warning: line 3 (message 2): result for 'c9' answers no"
    assert code == 0 and err.startswith(f"ctxlab replay: {trace}: {told}")  # the file the user gave
    manifest = json.loads((tmp_path / "o" / "stray" / "manifest.json").read_text())
    expected = f"ctxlab replay: workload.trace.path: {told}"  # the results name the scenario's field
    assert [w[: len(expected)] for w in manifest["warnings"]] == [expected]


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "ls", "arguments": "{}"}}


def test_an_interruption_after_the_results_are_in_place_says_they_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the index is written, after every results folder is in place: the message
    may not say the results were discarded."""
    from ctxlab.analysis import report

    def interrupted(root: Path) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "write_index", interrupted)
    code, _, err = run_cli("run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--quiet")
    assert code == 130
    assert err == "interrupted: a results folder not yet complete was discarded; those in place stay\n"
    assert (tmp_path / "r" / "tiny" / "runs.csv").is_file()


def test_sigterm_while_results_are_written_discards_them_as_ctrl_c_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kill` or `timeout` stopped the command where it was, leaving a temporary folder beside the
    results; it now ends as an interruption does (exit 143), and its handler is removed after."""
    import os
    import signal

    from ctxlab.experiments import results

    def terminated(*args: object, **kwargs: object) -> None:  # as the figures are recorded
        os.kill(os.getpid(), signal.SIGTERM)

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(results, "record_drawn", terminated)
    code, _, err = run_cli("run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--quiet")
    assert code == 143
    assert err == "terminated: a results folder not yet complete was discarded; those in place stay\n"
    assert not (tmp_path / "r").exists() or not [p for p in (tmp_path / "r").iterdir()]
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_scheduler_without_the_dask_executor_is_refused_before_any_run(tmp_path: Path) -> None:
    """The runs would go to local processes and the command succeed: refused instead."""
    path = write(tmp_path, TINY)
    out = tmp_path / "results"
    for executor in ((), ("--executor", "local")):
        code, _, err = run_cli(
            "run", str(path), *executor, "--scheduler", "tcp://127.0.0.1:1", "--out", str(out)
        )
        assert (
            code == 2
            and "--scheduler tcp://127.0.0.1:1: a Dask scheduler needs --executor dask; add it" in err
        )
    assert not out.exists()


def test_a_replays_problems_name_the_options_that_set_them(tmp_path: Path) -> None:
    """The replay's scenario is made from the command line: its problems say `--preset`,
    `--session` or the transcript, not the paths of a scenario file the user never wrote."""
    trace = str(DATA / "support-session.jsonl")
    code, _, err = run_cli("replay", trace, "--preset", "swe-agent", "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.startswith("ctxlab replay: --preset swe-agent: n: is required but missing; add it (n: 5")
    assert err.rstrip().endswith("; give it with --set n=VALUE")
    code, _, err = run_cli("replay", trace, "--session", "3", "--out", str(tmp_path / "o"))
    assert code == 2 and err.startswith("ctxlab replay: --session 3: cannot replay: ")
    assert not (tmp_path / "o").exists()


def test_a_replay_setting_given_twice_is_refused(tmp_path: Path) -> None:
    trace, out = str(DATA / "support-session.jsonl"), str(tmp_path / "o")
    twice = ("--set", "context.trigger_ratio=0.6", "--set", "context.trigger_ratio=0.7")
    code, _, err = run_cli("replay", trace, *twice, "--out", out)
    assert code == 2 and "--set context.trigger_ratio=0.7: context.trigger_ratio is set twice" in err
    window = ("--context-size", "32000", "--set", "model.context_size=8000")
    code, _, err = run_cli("replay", trace, *window, "--out", out)
    assert code == 2 and "--set model.context_size=8000: the window is --context-size 32000; give one" in err
    assert not (tmp_path / "o").exists()


def test_a_replay_compares_presets_given_more_than_once_in_one_folder(tmp_path: Path) -> None:
    trace, out = str(DATA / "support-session.jsonl"), tmp_path / "o"
    chosen = ("--preset", "agentscope", "--preset", "none", "--set", "context.trigger_ratio=0.6")
    code, _, err = run_cli(
        "replay", trace, *chosen, "--context-size", "1600", "--out", str(out), "--no-plots"
    )
    assert code == 0, err
    rows = list(csv.DictReader((out / "support-session" / "runs.csv").open(encoding="utf-8")))
    assert [(r["strategy"], r["param.strategy.context.trigger_ratio"]) for r in rows] == [
        ("agentscope", "0.6"),
        ("none", ""),  # the setting goes to the preset that has it
    ]
    code, _, err = run_cli(
        "replay", trace, "--preset", "none", "--preset", "none", "--out", str(tmp_path / "x")
    )
    assert code == 2 and "--preset none: given twice; give each preset once" in err
    assert not (tmp_path / "x").exists()


def test_a_replay_of_several_presets_writes_the_same_bytes_on_any_number_of_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The presets of one replay run side by side (`--workers`, default: the cores), as a
    scenario's runs do: its tables and figures are a one-process replay's, byte for byte."""
    pools: list[int] = []
    monkeypatch.setattr(executors, "process_pool", lambda n: pools.append(n) or process_pool(n))
    chosen = ("--preset", "agentscope", "--preset", "none", "--preset", "sliding-window")
    folders = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}"
        argv = ("replay", str(DATA / "support-session.jsonl"), *chosen, "--context-size", "1600")
        code, _, err = run_cli(*argv, "--out", str(out), "--quiet", "--workers", workers)
        assert code == 0, err
        folders.append(out / "support-session")
    one, two = ({p.relative_to(f): p.read_bytes() for p in f.rglob("*") if p.is_file()} for f in folders)
    assert len([p for p in one if p.parts[0] == "figures"]) > 3
    del one[Path("manifest.json")], two[Path("manifest.json")]  # its `created` is the clock's
    assert one == two and pools == [2]


def test_the_index_contents_link_each_folder_s_heading_even_renamed(tmp_path: Path) -> None:
    """A results folder renamed (or copied) keeps a working link: its section is headed by the
    folder's name, the scenario's named beside it, and anchors are numbered as a Markdown
    renderer numbers repeated ones."""
    import shutil

    from ctxlab.analysis.report import heading_anchors, write_index

    run_cli("run", str(write(tmp_path, TINY)), "--out", str(tmp_path / "r"), "--no-plots", "--quiet")
    for renamed in ("tiny copy", "Tiny", "ctxlab-results"):
        shutil.copytree(tmp_path / "r" / "tiny", tmp_path / "r" / renamed)
    lines = write_index(tmp_path / "r").read_text(encoding="utf-8").splitlines()
    anchors = heading_anchors(lines)
    links = [line[3:-1].split("](#") for line in lines if line.startswith("- [")]
    contents = {name: anchor for name, anchor in links}
    headings = {lines[at].lstrip("# "): anchor for at, anchor in anchors.items() if lines[at][:3] == "## "}
    assert (
        contents
        == headings
        == {
            "ctxlab-results": "ctxlab-results-1",  # the page's own title took the first
            "Tiny": "tiny",
            "tiny": "tiny-1",
            "tiny copy": "tiny-copy",
        }
    )
    assert lines.count("Scenario `tiny`.") == 3  # beside every renamed copy, not the original


def test_heading_anchors_follow_the_renderer_s_rules() -> None:
    from ctxlab.analysis.report import heading_anchors

    lines = ["# A b", "text", "## a.b", "## A b", "##nope", "####### seven", "### ünï_code-x"]
    assert heading_anchors(lines) == {0: "a-b", 2: "ab", 3: "a-b-1", 6: "ünï_code-x"}
    # a closing run of # is no part of the heading; combining marks stay (हिंदी, a decomposed é)
    marked = ["## notes #", "## C# ##", "## हिंदी", "## cafe\u0301"]
    assert heading_anchors(marked) == {0: "notes", 1: "c", 2: "हिंदी", 3: "cafe\u0301"}
