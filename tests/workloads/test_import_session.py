"""`--session N` and a trace's `session: N`: the N-th conversation (counted from 0, in file
order) of a file holding several is read, the others counted; 0 is the default and reads what
was read before the option existed; a session the file does not hold is refused, naming how
many it holds, and a session past 0 of a format of one conversation per file is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.problems import ScenarioError
from ctxlab.scenarios.load import load_scenario
from ctxlab.workloads.importers import import_file, import_lines, read_any
from ctxlab.workloads.importers.base import SessionError
from tests.workloads.importing import DATA, lines, run_cli

TAU_BENCH = DATA / "tau-bench/results.json"
TAU2 = DATA / "tau2/results.json"
ASK = {"role": "user", "content": "Fix the bug."}


def _example(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "Done."}]}


def _trajectory(text: str) -> dict[str, Any]:
    return {"history": [{"role": "user", "content": text}, {"role": "assistant", "content": "Done."}]}


def _users(messages: Any) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user"]


def test_session_0_is_the_default_and_reads_the_same_as_before() -> None:
    for source in (TAU_BENCH, TAU2):
        assert import_file(source) == import_file(source, session=0)
    assert read_any(TAU_BENCH) == read_any(TAU_BENCH, session=0)


@pytest.mark.parametrize(("source", "taken"), [(TAU_BENCH, "(task_id 7, trial 1)"), (TAU2, "(task_id '13'")])
def test_session_1_of_tau_results_is_their_second_run_named_in_the_note(source: Path, taken: str) -> None:
    first, second = import_file(source), import_file(source, session=1)
    assert first.messages != second.messages
    assert any(f"session 1 {taken}" in w and "--session N" in w for w in second.warnings), second.warnings
    assert any(w.startswith("skipped 1 × further") for w in second.warnings)


@pytest.mark.parametrize(("entry", "fmt"), [(_example, "openai-chat"), (_trajectory, "swe-agent")])
def test_a_jsonl_file_of_conversations_reads_its_line_n(entry: Any, fmt: str) -> None:
    text = lines(entry("first"), entry("second"), entry("third"))
    got = import_lines(text, "many.jsonl", session=2)
    assert got.format == fmt
    assert _users(got.messages) == ["third"]
    assert "skipped 2 × " in got.warnings[0]
    assert "session 2 of the file's 3 is replayed (counted from 0)" in got.warnings
    assert "session" not in " ".join(import_lines(text, "many.jsonl").warnings)


@pytest.mark.parametrize("source", [TAU_BENCH, TAU2])
def test_a_session_beyond_the_file_names_how_many_it_holds(source: Path) -> None:
    with pytest.raises(
        SessionError, match=r"session 2 is beyond the file's 2 (runs|simulations) .*give 0 to 1"
    ):
        import_file(source, session=2)


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        (lines(ASK, {"role": "assistant", "content": "Done."}), "a file of OpenAI chat messages"),
        (lines([ASK, {"role": "assistant", "content": "Done."}]), "a file of OpenAI chat messages"),
        (lines({"type": "session_meta", "payload": {"id": "x"}}), "codex"),
    ],
)
def test_a_format_of_one_conversation_refuses_a_session_past_0(text: list[str], holds: str) -> None:
    with pytest.raises(SessionError, match=f"{holds} holds one conversation per file: session 1"):
        import_lines(text, "one.jsonl", session=1)


def test_the_labs_own_jsonl_refuses_a_session_past_0_when_replayed(tmp_path: Path) -> None:
    path = tmp_path / "own.jsonl"
    path.write_text("\n".join(lines(ASK, {"role": "assistant", "content": "Done."})) + "\n", encoding="utf-8")
    assert read_any(path, session=0).name == "own"
    with pytest.raises(SessionError, match="one conversation per file"):
        read_any(path, session=1)


def test_ctxlab_import_takes_session(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    code, _, err = run_cli("import", str(TAU_BENCH), "--session", "1", "--out", str(out), "--quiet")
    assert code == 0, err
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert written == list(import_file(TAU_BENCH, session=1).messages)
    assert "session 1 (task_id 7, trial 1)" in err


def test_ctxlab_import_refuses_a_session_beyond_the_file(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    code, _, err = run_cli("import", str(TAU2), "--session", "5", "--out", str(out))
    assert code != 0
    assert "session 5 is beyond the file's 2 simulations" in err
    assert not out.exists()


def test_ctxlab_replay_takes_session_into_the_resolved_scenario(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "replay", str(TAU_BENCH), "--session", "1", "--preset", "none", "--out", str(tmp_path), "--quiet"
    )
    assert code == 0, err
    manifest = json.loads(next(tmp_path.glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert manifest["resolved_scenario"]["workload"]["trace"]["session"] == 1
    assert any("session 1 (task_id 7" in w for w in manifest["warnings"]), manifest["warnings"]


def test_ctxlab_replay_without_session_writes_no_session_key(tmp_path: Path) -> None:
    code, _, err = run_cli("replay", str(TAU_BENCH), "--preset", "none", "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    manifest = json.loads(next(tmp_path.glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert "session" not in manifest["resolved_scenario"]["workload"]["trace"]


def _scenario(tmp_path: Path, trace: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"name: s\nworkload:\n  trace: {trace}\n"
        "model: {context_size: 32000}\nstrategies: [{preset: none}]\n",
        encoding="utf-8",
    )
    return path


def test_a_trace_workload_reads_its_session(tmp_path: Path) -> None:
    loaded = load_scenario(_scenario(tmp_path, f"{{path: {TAU_BENCH}, session: 1}}"))
    assert loaded.scenario.workload.trace is not None
    assert loaded.scenario.workload.trace.session == 1
    assert any("session 1 (task_id 7, trial 1)" in str(w) for w in loaded.warnings), loaded.warnings
    default = load_scenario(_scenario(tmp_path, f"{{path: {TAU_BENCH}}}"))
    assert any("the first (task_id 7, trial 0)" in str(w) for w in default.warnings)


@pytest.mark.parametrize(
    ("source", "session", "said"),
    [
        (TAU_BENCH, 4, "session 4 is beyond the file's 2 runs"),
        (DATA / "claude-code/session.jsonl", 1, "claude-code holds one conversation per file"),
    ],
)
def test_a_trace_session_it_cannot_read_is_located_at_the_field(
    tmp_path: Path, source: Path, session: int, said: str
) -> None:
    path = _scenario(tmp_path, f"{{path: {source}, session: {session}}}")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    problems = [str(p) for p in caught.value.problems]
    assert any("workload.trace.session: cannot replay: " in p and said in p for p in problems), problems


def test_a_negative_session_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ScenarioError, match=r"workload\.trace\.session"):
        load_scenario(_scenario(tmp_path, f"{{path: {TAU_BENCH}, session: -1}}"))
    with pytest.raises(SystemExit):
        run_cli("import", str(TAU_BENCH), "--session", "-1", "--out", str(tmp_path / "s.jsonl"))
    assert "--session: -1 is below 0" in capsys.readouterr().err
