"""Executors: run configs in this process, on a local process pool, or on a Dask cluster.

Invariants:
- Results come back in the order of the configs, whatever order they finish in, so the files
  written from them are byte-identical for any executor and any number of workers.
- A run that raises is a `failed` result (see `execute`); a worker that dies fails the runs it
  held, with the reason, and the other runs go on.
- `on_done` is called once per finished run, in completion order (for a progress bar only).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from ctxlab.experiments.collector import collect_less, collecting_less
from ctxlab.experiments.execute import RunResult, execute
from ctxlab.experiments.grid import RunConfig

T = TypeVar("T")
R = TypeVar("R")

ExecutorName = Literal["local", "dask"]


class ExecutorUnavailableError(RuntimeError):
    """The executor asked for cannot run here (a missing extra, an unreachable scheduler)."""


OnDone = Callable[[RunResult], None]


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has affinity
        return os.cpu_count() or 1


def run_all(
    configs: Sequence[RunConfig],
    *,
    executor: ExecutorName = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    on_done: OnDone | None = None,
    pool: cf.Executor | None = None,
) -> list[RunResult]:
    """Execute every config; results in config order. `pool` (from `local_pool`) is used, and
    kept, instead of a pool of this call's own, by a caller that runs many small batches."""
    workers = workers or default_workers()
    if executor == "dask":
        return _dask(configs, workers, scheduler, on_done)
    if workers == 1 or len(configs) <= 1:
        return _inline(configs, on_done)
    return _pool(configs, workers, on_done, pool)


def local_pool(workers: int) -> cf.ProcessPoolExecutor:
    """A pool of local worker processes for `run_all`, to shut down by its owner."""
    return _process_pool(workers)


def _process_pool(workers: int) -> cf.ProcessPoolExecutor:
    """Local worker processes that collect garbage less often for their whole life."""
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=collect_less)


def _inline(configs: Sequence[RunConfig], on_done: OnDone | None) -> list[RunResult]:
    results = []
    with collecting_less():
        for config in configs:
            result = execute(config)
            if on_done:
                on_done(result)
            results.append(result)
    return results


def execute_collecting_less(config: RunConfig) -> RunResult:
    """`execute` with the lab's collector settings, on a worker the lab did not start (Dask's):
    they last for the run only, so the worker's own settings are back after it."""
    with collecting_less():
        return execute(config)


def _lost(config: RunConfig, reason: BaseException) -> RunResult:
    return RunResult(
        run_id=config.run_id,
        index=config.index,
        status="failed",
        error=f"the worker running it failed: {type(reason).__name__}: {reason}",
    )


def _context() -> multiprocessing.context.BaseContext:
    """How worker processes start: forked where that is safe, else from a fork server.

    A forked worker starts in milliseconds with this process's modules imported; a fork-server or
    spawned one imports the lab again first, about two seconds before its first run, longer than
    most scenarios take. Forking a process that runs other threads (a Dask client's, a notebook
    kernel's) can leave the child holding a lock no thread will release, so a process is forked
    only on Linux (where it is the platform's own default) with no other thread alive.
    """
    methods = multiprocessing.get_all_start_methods()
    if sys.platform == "linux" and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def map_in_processes(work: Callable[[T], R], items: Sequence[T], workers: int | None = None) -> list[R]:
    """`work` over `items`, in local worker processes when there are several of both; results in
    the order of `items`. An exception in `work` is raised here. `work` must be picklable."""
    workers = min(workers or default_workers(), len(items))
    if workers <= 1:
        return [work(item) for item in items]
    with _process_pool(workers) as pool:
        return list(pool.map(work, items))


def _pool(
    configs: Sequence[RunConfig], workers: int, on_done: OnDone | None, kept: cf.Executor | None = None
) -> list[RunResult]:
    results: list[RunResult | None] = [None] * len(configs)
    own = kept is None
    pool = kept or _process_pool(min(workers, len(configs)))
    try:
        futures = {pool.submit(execute, config): position for position, config in enumerate(configs)}
        for future in cf.as_completed(futures):
            position = futures[future]
            try:
                result = future.result()
            except Exception as reason:
                result = _lost(configs[position], reason)
            results[position] = result
            if on_done:
                on_done(result)
    finally:
        if own:
            pool.shutdown()
    return [r for r in results if r is not None]


def _dask(
    configs: Sequence[RunConfig], workers: int, scheduler: str | None, on_done: OnDone | None
) -> list[RunResult]:
    try:
        import distributed
    except ModuleNotFoundError:
        raise ExecutorUnavailableError(
            "--executor dask needs dask.distributed; install the 'dask' extra (pip install 'ctxlab[dask]')"
        ) from None
    dask: Any = distributed  # untyped package
    cluster: Any = None
    if scheduler is None:
        cluster = dask.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
    try:
        client = dask.Client(cluster if cluster is not None else scheduler, timeout="20s")
    except (OSError, TimeoutError, ValueError) as unreachable:
        if cluster is not None:
            cluster.close()
        raise ExecutorUnavailableError(f"--scheduler {scheduler}: cannot connect ({unreachable})") from None
    try:
        futures = client.map(execute_collecting_less, list(configs), pure=False)
        positions = {future.key: position for position, future in enumerate(futures)}
        results: list[RunResult | None] = [None] * len(configs)
        for future in dask.as_completed(futures):
            position = positions[future.key]
            try:
                result = future.result()
            except Exception as reason:
                result = _lost(configs[position], reason)
            results[position] = result
            if on_done:
                on_done(result)
        return [r for r in results if r is not None]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
