"""Local worker processes: how they start, and work mapped over them in shares.

Invariants:
- Results come back in the order of the work given, whichever process did it and whenever it
  finished, so what is written from them does not depend on the number of workers.
- Workers collect cyclic garbage less often for their whole life (`collector`).
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ctxlab.experiments.collector import collect_less

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Share:
    """Part `index` of `count` of a list of work: the items at positions `index`, `index +
    count`, ... (`shares(count)` hold every item exactly once between them)."""

    index: int = 0
    count: int = 1

    def holds(self, position: int) -> bool:
        """Whether the item at `position` of the list is in this share."""
        return position % self.count == self.index


WHOLE = Share()
"""The whole list."""


def shares(count: int) -> list[Share]:
    """The `count` shares of a list of work, which hold every item once between them."""
    return [Share(index, count) for index in range(count)]


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has affinity
        return os.cpu_count() or 1


def process_pool(workers: int) -> cf.ProcessPoolExecutor:
    """Local worker processes that collect garbage less often for their whole life."""
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=start_context(), initializer=collect_less)


def start_context() -> multiprocessing.context.BaseContext:
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


def map_in_processes(
    work: Callable[[T], R],
    items: Sequence[T],
    workers: int | None = None,
    on_done: Callable[[int], None] | None = None,
) -> list[R]:
    """`work` over `items`, in local worker processes when there are several of both; results in
    the order of `items`. `on_done(position)` is called as each item finishes, in the order they
    finish (for progress). An exception in `work` is raised here. `work` must be picklable."""
    workers = min(workers or default_workers(), len(items))
    finished: dict[int, R] = {}
    if workers <= 1:
        for position, item in enumerate(items):
            finished[position] = work(item)
            if on_done is not None:
                on_done(position)
    else:
        with process_pool(workers) as pool:
            futures = {pool.submit(work, item): position for position, item in enumerate(items)}
            for future in cf.as_completed(futures):
                finished[futures[future]] = future.result()
                if on_done is not None:
                    on_done(futures[future])
    return [finished[position] for position in range(len(items))]


def map_shares(
    work: Callable[[T, Share], R],
    items: Sequence[T],
    sizes: Sequence[int],
    workers: int | None = None,
    on_item_done: Callable[[int], None] | None = None,
) -> list[list[R]]:
    """`work(item, share)` for each share of every item, as `map_in_processes` runs work: each
    item is split into as many shares as there are workers but no more than its `size` (the
    work it holds, in units a share should not split), and the largest shares go first, so
    the last to finish are short. `on_item_done(k)` is called once the last share of item `k`
    is done. Returns each item's results in the order of its shares."""
    count = workers or default_workers()
    split = [shares(max(1, min(count, size))) for size in sizes]
    jobs = [(k, share) for k, parts in enumerate(split) for share in parts]
    jobs.sort(key=lambda job: -sizes[job[0]] / job[1].count)
    left = [len(parts) for parts in split]

    def share_done(position: int) -> None:
        k = jobs[position][0]
        left[k] -= 1
        if left[k] == 0 and on_item_done is not None:
            on_item_done(k)

    work_on = functools.partial(_work_on_share, work)
    results = map_in_processes(work_on, [(items[k], s) for k, s in jobs], workers, share_done)
    done = dict(zip(jobs, results, strict=True))
    return [[done[k, share] for share in parts] for k, parts in enumerate(split)]


def _work_on_share(work: Callable[[T, Share], R], job: tuple[T, Share]) -> R:
    return work(*job)
