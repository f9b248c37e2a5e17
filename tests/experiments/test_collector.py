"""The lab's processes collect garbage less often; the calling process gets its settings back, and
the results do not depend on when collections run."""

from __future__ import annotations

import gc
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxlab.cli import main
from ctxlab.experiments.collector import THRESHOLDS, collecting_less
from ctxlab.experiments.execute import execute
from ctxlab.experiments.executors import execute_collecting_less
from ctxlab.experiments.grid import expand
from ctxlab.experiments.processes import map_in_processes
from ctxlab.scenarios.load import load_scenario
from tests.experiments.test_executors import SCENARIO
from tests.scenarios.files import write


@pytest.fixture(autouse=True)
def python_defaults() -> Iterator[None]:
    """Each test starts from Python's own settings and leaves them as it found them."""
    before = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_a_block_collects_less_and_gives_the_settings_back() -> None:
    with collecting_less():
        assert gc.get_threshold() == THRESHOLDS and gc.get_freeze_count() > 0
        with collecting_less():  # nested: nothing changes, nothing is given back early
            pass
        assert gc.get_threshold() == THRESHOLDS and gc.get_freeze_count() > 0
    assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0


def test_objects_someone_else_froze_stay_frozen() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with collecting_less():
            assert gc.get_threshold() == THRESHOLDS
        assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """The collector's thresholds at the start of every run the executors start, in order."""
    from ctxlab.experiments import executors

    thresholds: list[tuple[int, int, int]] = []
    real = executors.execute

    def observed(config: object) -> object:
        thresholds.append(gc.get_threshold())
        return real(config)  # type: ignore[arg-type]

    monkeypatch.setattr(executors, "execute", observed)
    return thresholds


def test_the_command_collects_less_while_it_runs_and_not_after(
    tmp_path: Path, seen: list[tuple[int, int, int]]
) -> None:
    path = write(tmp_path, SCENARIO)
    code = main(
        ["run", str(path), "--out", str(tmp_path / "r"), "--no-plots", "--quiet", "--workers", "1"],
        out=io.StringIO(),
        err=io.StringIO(),
    )
    assert code == 0 and seen and set(seen) == {THRESHOLDS}
    assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0


def _threshold(_: int) -> tuple[int, int, int]:
    return gc.get_threshold()


def test_worker_processes_collect_less_for_their_whole_life() -> None:
    assert map_in_processes(_threshold, [0, 1, 2, 3], workers=2) == [THRESHOLDS] * 4


def test_runs_are_the_same_whenever_the_collector_runs(tmp_path: Path) -> None:
    configs = expand(load_scenario(write(tmp_path, SCENARIO)))[:4]
    default = [execute(c) for c in configs]
    with collecting_less():
        less = [execute(c) for c in configs]
    assert all(r.status == "ok" for r in default) and default == less


def test_a_run_on_a_worker_the_lab_did_not_start_collects_less_only_while_it_runs(
    tmp_path: Path, seen: list[tuple[int, int, int]]
) -> None:
    (config,) = expand(load_scenario(write(tmp_path, SCENARIO)))[:1]
    assert execute_collecting_less(config).status == "ok"
    assert seen == [THRESHOLDS] and gc.get_threshold() == (700, 10, 10)
