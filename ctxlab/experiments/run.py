"""Loaded scenarios to results folders: expand, run, write. The one path `ctxlab run`, `ctxlab
replay`, `ctxlab.replay` (the notebooks) and `ctxlab tune` (its trials, through `run_grids`) all take.

Invariants:
- Every scenario's grid runs in one batch on the chosen executor; results come back in config
  order whatever the executor or worker count, so each folder's bytes are the same.
- Each folder is written atomically (`write_scenario`); a scenario whose figures fail to draw
  still has its tables, and says why in `Written.plot_error`. With figures, folders are written
  in worker processes side by side; their bytes do not depend on which process wrote them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

from ctxlab.core.wire.views import WireName
from ctxlab.experiments.execute import RunResult
from ctxlab.experiments.executors import ExecutorName, OnDone, run_all
from ctxlab.experiments.grid import expand
from ctxlab.experiments.results import Outcome, Plotter, Written, write_scenarios
from ctxlab.scenarios.load import LoadedScenario


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioRun:
    """One scenario's folder as written, and the results of its runs in grid order."""

    scenario: LoadedScenario
    written: Written
    results: tuple[RunResult, ...]


def run_scenarios(
    loaded: Sequence[LoadedScenario],
    out: Path,
    *,
    record_requests: bool | None = None,
    wire: WireName = "openai",
    executor: ExecutorName = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    on_done: OnDone | None = None,
    plot: Plotter | None = None,
    on_drawn: Callable[[int], None] | None = None,
    drawn_as: str | None = None,
    redraw: bool = False,
) -> list[ScenarioRun]:
    """Run every scenario's grid and write `out/<name>/` for each, in the order given.
    `on_done` is called as each run finishes, `on_drawn(k)` as the figures of `loaded[k]` are
    done (both for progress, in the order they finish).

    With `drawn_as` (the drawing's options), figures are recorded as drawn from their folder's
    results, and a folder whose figures in place were drawn from the same results keeps them
    unless `redraw` (`write_scenarios`).

    `record_requests` None keeps each scenario's own setting; True or False overrides it. `wire`
    is the API form requests are recorded in (`requests/<run_id>.anthropic.jsonl.gz` for Anthropic).

    Raises:
        ExecutorUnavailableError: the executor cannot be used here.
        OSError: a folder could not be written (the previous results are kept).
    """
    outcomes = run_grids(
        loaded,
        record_requests=record_requests,
        wire=wire,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        on_done=on_done,
    )
    written = write_scenarios(
        out,
        outcomes,
        plot=plot,
        workers=workers,
        on_drawn=on_drawn,
        drawn_as=drawn_as,
        redraw=redraw,
    )
    return [
        ScenarioRun(scenario=o.loaded, written=w, results=o.results)
        for o, w in zip(outcomes, written, strict=True)
    ]


def run_grids(
    loaded: Sequence[LoadedScenario],
    *,
    record_requests: bool | None = None,
    wire: WireName = "openai",
    executor: ExecutorName = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    on_done: OnDone | None = None,
    pool: Executor | None = None,
) -> list[Outcome]:
    """Run every scenario's grid in one batch, writing nothing: each scenario's configs and
    results in grid order (`run_scenarios` writes them; `ctxlab tune` reads its trials from them).

    Raises:
        ExecutorUnavailableError: the executor cannot be used here.
    """
    plans = [(item, expand(item, record_requests=record_requests, wire=wire)) for item in loaded]
    configs = [config for _, plan in plans for config in plan]
    results = run_all(
        configs, executor=executor, workers=workers, scheduler=scheduler, on_done=on_done, pool=pool
    )
    outcomes: list[Outcome] = []
    start = 0
    for item, plan in plans:
        own = tuple(results[start : start + len(plan)])
        start += len(plan)
        outcomes.append(Outcome(item, plan, own))
    return outcomes
