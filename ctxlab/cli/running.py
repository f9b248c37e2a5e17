"""How `run` and `replay` load scenarios, execute them and report: one path for both."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from ctxlab.cli.base import BadInput, Progress, out_dir, shows_progress

if TYPE_CHECKING:  # the loader and the run path are imported by the commands that use them
    from ctxlab.core.wire.views import WireName
    from ctxlab.experiments.processes import Share
    from ctxlab.experiments.results import Plotter
    from ctxlab.scenarios.load import LoadedScenario

REPLAY_SOURCE = "ctxlab replay"
"""What a replay's problems and warnings are said to come from (its document has no lines)."""


def load_all(paths: Sequence[str]) -> list[LoadedScenario]:
    from ctxlab.problems import ScenarioError
    from ctxlab.scenarios.load import load_scenario

    loaded: list[LoadedScenario] = []
    messages = given_twice(paths)
    firsts: dict[Path, str] = {}
    for path in paths:
        firsts.setdefault(Path(path).resolve(), path)
    for path in firsts.values():
        try:
            loaded.append(load_scenario(Path(path)))
        except ScenarioError as error:
            messages.extend(str(p) for p in error.problems)
    messages += shared_names(loaded)
    if messages:
        raise BadInput(messages)
    return loaded


def given_twice(paths: Sequence[str]) -> list[str]:
    """What to say of every scenario file given again after its first time."""
    seen: set[Path] = set()
    messages: list[str] = []
    for path in paths:
        if Path(path).resolve() in seen:
            messages.append(f"{path}: is given twice; give each scenario file once")
        seen.add(Path(path).resolve())
    return messages


def shared_names(loaded: Sequence[LoadedScenario]) -> list[str]:
    """What to say of every scenario whose name an earlier one has: both would write one folder."""
    names: dict[str, str] = {}
    messages: list[str] = []
    for item in loaded:
        if item.name in names:
            messages.append(
                f"{item.source}:1:1: name: {item.name!r} is also the name of {names[item.name]}; both would "
                "write the same results folder, so give each scenario its own name"
            )
        names.setdefault(item.name, item.source)
    return messages


def warn(loaded: Sequence[LoadedScenario], err: TextIO) -> None:
    for item in loaded:
        for warning in item.warnings:
            print(warning, file=err)


@dataclass(frozen=True, slots=True, kw_only=True)
class Execution:
    """How `run` and `replay` execute and write: the options they share."""

    out_dir: str
    record_requests: bool = False
    wire: WireName = "openai"
    quiet: bool = False
    plots: bool = True
    svg: bool = False
    redraw: bool = False
    executor: Literal["local", "dask"] = "local"
    workers: int | None = None
    scheduler: str | None = None


def execution_of(args: Any, **more: Any) -> Execution:
    """The options `run` and `replay` share (`add_run_options`), read from their arguments."""
    return Execution(
        out_dir=args.out,
        record_requests=args.record_requests,
        wire=args.wire,
        quiet=args.quiet,
        plots=not args.no_plots,
        svg=args.svg,
        redraw=args.redraw,
        workers=args.workers,
        **more,
    )


def execute(loaded: Sequence[LoadedScenario], how: Execution, out: TextIO, err: TextIO) -> int:
    """Run every scenario, write its folder and the index; 1 when a run failed."""
    from ctxlab.analysis.report import write_index
    from ctxlab.experiments.executors import ExecutorUnavailableError
    from ctxlab.experiments.grid import expand
    from ctxlab.experiments.kept_figures import drawing_options
    from ctxlab.experiments.replace import unreplaceable
    from ctxlab.experiments.run import run_scenarios

    root = out_dir(how.out_dir)
    blocked = [why for why in (unreplaceable(root / item.name) for item in loaded) if why is not None]
    if blocked:
        raise BadInput(blocked)
    if (
        how.wire != "openai"
        and not how.record_requests
        and not any(i.scenario.record_requests for i in loaded)
    ):
        raise BadInput(
            [
                f"--wire {how.wire}: no request is recorded, so it would change nothing; add "
                "--record-requests (or record_requests: true in the scenario)"
            ]
        )
    counted = shows_progress(quiet=how.quiet, err=err)  # expanding a large grid twice costs
    total = sum(len(expand(item)) for item in loaded) if counted else 0
    phases = [("running", "run", total), ("drawing", "scenario", len(loaded) if how.plots else 0)]
    with Progress(phases, quiet=how.quiet, err=err) as progress:
        try:
            runs = run_scenarios(
                loaded,
                root,
                record_requests=True if how.record_requests else None,
                wire=how.wire,
                executor=how.executor,
                workers=how.workers,
                scheduler=how.scheduler,
                on_done=progress.step,
                plot=_plotter(how.svg) if how.plots else None,
                on_drawn=progress.step,
                drawn_as=drawing_options(how.svg),
                redraw=how.redraw,
            )
        except ExecutorUnavailableError as unavailable:
            raise BadInput([str(unavailable)]) from None
    failed = 0
    for run in runs:
        item, written = run.scenario, run.written
        failed += written.failed
        if written.plot_error:
            failed += 1
            print(f"{item.source}: the figures could not be drawn: {written.plot_error}", file=err)
        if not how.quiet:
            print(_summary(written.folder, run.results), file=out)
        for result in run.results:
            if result.status == "failed":
                print(f"{item.source}: run {result.run_id} failed: {result.error}", file=err)
    index = write_index(root)
    if not how.quiet:
        print(f"index: {index}", file=out)
    return 1 if failed else 0


def _plotter(svg: bool) -> Plotter:
    """The figure drawer. matplotlib and pandas are slow to import, so each process imports them
    when it first draws: a rerun whose every folder keeps its figures imports neither."""
    return functools.partial(_draw_share, svg)


def _draw_share(svg: bool, folder: Path, share: Share) -> object:
    from ctxlab.analysis.folder_figures import plot_share

    return plot_share(folder, share, svg=svg)


def _summary(folder: Path, results: Sequence[Any]) -> str:
    failed = sum(1 for r in results if r.status == "failed")
    peaks = [
        r.measures.get("peak_input_tokens")
        for r in results
        if r.measures.get("peak_input_tokens") is not None
    ]
    peak = f", peak input {max(peaks):,} tokens" if peaks else ""
    status = f", {failed} FAILED" if failed else ""
    return f"{folder}/: {len(results)} run{'s' if len(results) != 1 else ''}{status}{peak}"
