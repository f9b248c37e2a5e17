"""Executors: run configs in this process, on a local process pool, or on a Dask cluster.

Invariants:
- Results come back in the order of the configs, whatever order they finish in, so the files
  written from them are byte-identical for any executor and any number of workers.
- A run that raises is a `failed` result (see `execute`); a worker that dies fails the runs it
  held, with the reason, and the other runs go on.
- `on_done` is called once per finished run, in completion order (for a progress bar only).
- Local workers read a scenario's files again where they need them (they run where the files
  are); Dask's are sent their texts (`_with_texts`).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal

from ctxlab.experiments.collector import collecting_less
from ctxlab.experiments.execute import RunResult, execute
from ctxlab.experiments.grid import RunConfig
from ctxlab.experiments.processes import default_workers, process_pool
from ctxlab.scenarios.sources import SourceChangedError, SourceFiles

ExecutorName = Literal["local", "dask"]


class ExecutorUnavailableError(RuntimeError):
    """The executor asked for cannot run here (a missing extra, an unreachable scheduler)."""


OnDone = Callable[[RunResult], None]


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
    return process_pool(workers)


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


def _pool(
    configs: Sequence[RunConfig], workers: int, on_done: OnDone | None, kept: cf.Executor | None = None
) -> list[RunResult]:
    results: list[RunResult | None] = [None] * len(configs)
    own = kept is None
    pool = kept or process_pool(min(workers, len(configs)))
    futures: dict[cf.Future[RunResult], int] = {}
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
    except BaseException:  # Ctrl-C, SIGTERM: the runs not started are not run before it ends
        for future in futures:
            future.cancel()
        raise
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
        futures = client.map(execute_collecting_less, _with_texts(configs), pure=False)
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


def _with_texts(configs: Sequence[RunConfig]) -> list[RunConfig]:
    """The configs as sent to Dask's workers, which may run where the scenario's files are not:
    each with its files' texts held, each set of files read once. A file that cannot be read
    again is sent as it is, and the run that needs it fails saying why."""
    held: dict[tuple[tuple[str, str], ...], SourceFiles] = {}
    sent = []
    for config in configs:
        key = tuple(sorted(config.files.digests.items()))
        if key not in held:
            try:
                held[key] = config.files.holding()
            except SourceChangedError:
                held[key] = config.files
        sent.append(replace(config, files=held[key]))
    return sent
