"""The same scenario gives byte-identical runs.csv, calls.csv and request files with one worker, two
worker processes and a Dask LocalCluster; results come back in grid order."""

from __future__ import annotations

import functools
import io
import os
import sys
import threading
from pathlib import Path

import pytest

from ctxlab.cli import main
from ctxlab.experiments import processes
from ctxlab.experiments.executors import run_all
from ctxlab.experiments.grid import expand
from ctxlab.scenarios.load import load_scenario
from tests.scenarios.files import write

SCENARIO = """\
name: determinism
workload:
  generator: {name: parallel_batches, params: {turns: 2, rounds: 3, fan_out: 6, result_bytes: 900}}
model:
  context_size: 6000
  summarizer: {fail_on: [2], fail_mode: malformed}
strategies:
  - name: agentscope
    preset: agentscope
    workspace: directory
  - name: small-results
    preset: agentscope
    texts: ctxlab
    context: {tool_result_limit: 150}
  - name: none
    preset: none
sweep:
  strategies.agentscope.context.reserve_ratio: [0.05, 0.3]
  model.context_size: [6000, 9000]
record_requests: true
"""


def files(folder: Path) -> dict[str, bytes]:
    """Every byte-stable result file, by path relative to the folder."""
    names = ["runs.csv", "calls.csv", *sorted(f"requests/{p.name}" for p in (folder / "requests").iterdir())]
    return {name: (folder / name).read_bytes() for name in names}


def run(tmp_path: Path, name: str, *options: str) -> dict[str, bytes]:
    path = write(tmp_path, SCENARIO)
    out = tmp_path / name
    code = main(
        ["run", str(path), "--out", str(out), "--no-plots", "--quiet", *options],
        out=io.StringIO(),
        err=io.StringIO(),
    )
    assert code == 0
    return files(out / "determinism")


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return run(tmp_path_factory.mktemp("one"), "one", "--workers", "1")


def test_two_worker_processes_give_the_same_bytes(tmp_path: Path, one_worker: dict[str, bytes]) -> None:
    assert run(tmp_path, "two", "--workers", "2") == one_worker
    assert len(one_worker) == 2 + 8  # agentscope at 4 points; `small-results` and `none` once per window


def test_workers_fork_from_a_lone_thread_and_come_from_a_fork_server_beside_other_threads(
    tmp_path: Path, one_worker: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked worker starts with the lab imported; beside another thread (a notebook kernel's)
    forking could deadlock, so workers come from a fork server, with the same bytes."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # pytest-timeout runs a thread of its own
    assert processes.start_context().get_start_method() == (
        "fork" if sys.platform == "linux" else "forkserver"
    )
    assert run(tmp_path, "forked", "--workers", "2") == one_worker
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert processes.start_context().get_start_method() in {"forkserver", "spawn"}
    assert run(tmp_path, "served", "--workers", "2") == one_worker


def test_a_dask_local_cluster_gives_the_same_bytes(tmp_path: Path, one_worker: dict[str, bytes]) -> None:
    assert run(tmp_path, "dask", "--executor", "dask", "--workers", "2") == one_worker


def test_rerunning_gives_the_same_bytes(tmp_path: Path, one_worker: dict[str, bytes]) -> None:
    assert run(tmp_path, "again", "--workers", "1") == one_worker


def test_results_come_back_in_config_order_whatever_finishes_first(tmp_path: Path) -> None:
    configs = expand(load_scenario(write(tmp_path, SCENARIO)))
    done: list[str] = []
    results = run_all(configs, workers=2, on_done=lambda r: done.append(r.run_id))
    assert [r.run_id for r in results] == [c.run_id for c in configs]
    assert sorted(done) == sorted(c.run_id for c in configs)


def _share_of(item: str, share: processes.Share) -> tuple[str, int, int, int]:
    return item, share.index, share.count, os.getpid()


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_map_shares_splits_each_item_into_at_most_its_size_and_returns_them_in_order(workers: int) -> None:
    done = processes.map_shares(_share_of, ["big", "one", "none"], [5, 1, 0], workers)
    count = min(workers, 5)
    assert [[r[:3] for r in results] for results in done] == [
        [("big", k, count) for k in range(count)],
        [("one", 0, 1)],
        [("none", 0, 1)],
    ]
    pids = {r[3] for results in done for r in results}
    assert (pids == {os.getpid()}) == (workers == 1)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_each_item_is_reported_done_once(workers: int) -> None:
    """Progress hears of each item once, whichever processes drew its shares."""
    reported: list[int] = []
    done = processes.map_shares(_share_of, ["big", "one", "none"], [5, 1, 0], workers, reported.append)
    assert sorted(reported) == [0, 1, 2]
    assert [len(results) for results in done] == [min(workers, 5), 1, 1]


def test_an_item_is_reported_done_after_its_work_ran() -> None:
    ran: list[str] = []
    reported: list[tuple[int, list[str]]] = []
    work = functools.partial(_noting, ran)  # in this process (one worker): the work can say when it ran
    processes.map_shares(work, ["big", "one"], [5, 1], 1, lambda k: reported.append((k, list(ran))))
    assert reported == [(0, ["big"]), (1, ["big", "one"])]


def _noting(ran: list[str], item: str, share: processes.Share) -> str:
    ran.append(item)
    return item


def test_shares_hold_every_position_once() -> None:
    for count in (1, 2, 5):
        held = [[p for p in range(11) if share.holds(p)] for share in processes.shares(count)]
        assert sorted(p for part in held for p in part) == list(range(11))
        assert max(map(len, held)) - min(map(len, held)) <= 1
