"""After loading, a scenario's trace and tools files are known by path and digest: what the lab
keeps (the loaded scenario, its run configs, the keys of built workloads) holds no text, a run
reads a file again only where its process no longer keeps what was built from it, and a file
changed or gone since loading fails that run saying so, never a run on another text."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from ctxlab.cli import main
from ctxlab.experiments.execute import execute
from ctxlab.experiments.executors import _with_texts
from ctxlab.experiments.grid import expand
from ctxlab.scenarios.load import load_scenario
from ctxlab.scenarios.sources import SourceChangedError, SourceFiles, text_sha256
from ctxlab.scenarios.workload import forget_kept
from tests.scenarios.files import long_reply, write

TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]


def _scenario(folder: Path, rounds: int = 40) -> Path:
    long_reply(folder, rounds)
    (folder / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    text = (
        "name: replayed\nworkload:\n  trace: {path: long.jsonl, tools: tools.json}\n"
        "model:\n  context_size: 4000\nstrategies:\n  - preset: agentscope\n  - preset: none\n"
    )
    return write(folder, text)


def test_what_loading_keeps_holds_no_text(tmp_path: Path) -> None:
    path = _scenario(tmp_path, rounds=400)
    transcript = (tmp_path / "long.jsonl").read_text(encoding="utf-8")
    loaded = load_scenario(path)
    configs = expand(loaded)
    assert loaded.files.digests == {
        "long.jsonl": text_sha256(transcript),
        "tools.json": text_sha256((tmp_path / "tools.json").read_text(encoding="utf-8")),
    }
    assert len(pickle.dumps(loaded.files)) < 1_000 < len(transcript)
    assert all(len(pickle.dumps(config.files)) < 1_000 for config in configs)


def test_a_swept_transcript_loads_and_runs_alike_on_any_number_of_workers(tmp_path: Path) -> None:
    """Every grid point is validated with a copy of the loading context: the digests read for the
    first point must reach the others (a sweep over a replayed transcript raised KeyError)."""
    path = _scenario(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + "sweep:\n  model.context_size: [4000, 6000]\n")
    loaded = load_scenario(path)
    assert sorted(loaded.files) == ["long.jsonl", "tools.json"]
    tables = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}"
        code = main(["run", str(path), "--out", str(out), "--no-plots", "--quiet", "--workers", workers])
        assert code == 0
        tables.append([(out / "replayed" / name).read_bytes() for name in ("runs.csv", "calls.csv")])
    assert tables[0] == tables[1]


def test_a_run_reads_the_file_again_when_its_process_keeps_nothing(tmp_path: Path) -> None:
    configs = expand(load_scenario(_scenario(tmp_path)))
    kept = [execute(config) for config in configs]
    forget_kept()  # as a worker started afresh
    again = [execute(config) for config in configs]
    assert [r.status for r in again] == ["ok", "ok"]
    assert [r.calls for r in again] == [r.calls for r in kept]


def test_a_file_changed_since_loading_fails_the_run_saying_so(tmp_path: Path) -> None:
    configs = expand(load_scenario(_scenario(tmp_path)))
    long_reply(tmp_path, 41)
    assert [execute(config).status for config in configs] == ["ok", "ok"]  # built while loading
    forget_kept()
    result = execute(configs[0])
    assert result.status == "failed"
    assert "long.jsonl: the file changed since the scenario was loaded" in result.error
    assert "run the scenario again" in result.error


def test_a_file_gone_since_loading_fails_the_run_saying_so(tmp_path: Path) -> None:
    configs = expand(load_scenario(_scenario(tmp_path)))
    (tmp_path / "tools.json").unlink()
    forget_kept()
    result = execute(configs[1])
    assert result.status == "failed"
    assert "tools.json: cannot read the file again" in result.error


def test_asking_what_files_there_are_reads_none(tmp_path: Path) -> None:
    files = load_scenario(_scenario(tmp_path)).files
    (tmp_path / "long.jsonl").unlink()
    assert "long.jsonl" in files and "other.jsonl" not in files
    assert sorted(files) == ["long.jsonl", "tools.json"] and len(files) == 2
    assert files == files.only(["long.jsonl", "tools.json"]) != files.only(["long.jsonl"])
    assert pickle.loads(pickle.dumps(files)) == files
    with pytest.raises(SourceChangedError, match=r"long\.jsonl: cannot read the file again"):
        files["long.jsonl"]


def test_dask_workers_are_sent_the_texts_read_once(tmp_path: Path) -> None:
    configs = expand(load_scenario(_scenario(tmp_path)))
    transcript = (tmp_path / "long.jsonl").read_text(encoding="utf-8")
    sent = _with_texts(configs)
    (tmp_path / "long.jsonl").unlink()
    shipped = [pickle.loads(pickle.dumps(config)) for config in sent]
    assert all(config.files["long.jsonl"] == transcript for config in shipped)
    assert sent[0].files is sent[1].files  # one read for the runs that share the files
    forget_kept()
    assert [execute(config).status for config in shipped] == ["ok", "ok"]


def test_a_file_that_cannot_be_read_for_dask_is_sent_as_it_is(tmp_path: Path) -> None:
    configs = expand(load_scenario(_scenario(tmp_path)))
    (tmp_path / "long.jsonl").write_text("changed\n", encoding="utf-8")
    sent = _with_texts(configs)
    assert [config.files for config in sent] == [config.files for config in configs]
    forget_kept()
    assert "changed since the scenario was loaded" in execute(sent[0]).error


def test_texts_held_are_given_without_reading() -> None:
    files = SourceFiles.of_texts(Path("/nowhere"), {"a.jsonl": "text"}, {})
    assert files["a.jsonl"] == "text" and files.digest("a.jsonl") == text_sha256("text")
    with pytest.raises(SourceChangedError, match=r"a\.jsonl: cannot read the file again"):
        files.released()["a.jsonl"]
