"""Writing a scenario's results folder (docs/architecture.md, Results), all at once or not at all.

`<out>/<scenario>/` holds `manifest.json`, `runs.csv`/`.parquet`, `calls.csv`/`.parquet`,
`events.csv`/`.parquet`, `requests/<run_id>.jsonl.gz` (when requests are recorded), `figures/` and
`figures.json` (what the figures were drawn from: a rerun with the same results keeps them).

Invariants:
- Everything is written into a temporary sibling folder (`.<scenario>.tmp-<pid>`) that replaces
  the results folder only once complete. A failed or interrupted write removes (or leaves
  behind, when killed) only the temporary folder: the previous results stay untouched.
- Only `manifest.json` may differ between two runs of the same scenario: it alone holds a
  creation time, versions and the git commit.
- A `tune/` folder `ctxlab tune` wrote into the results folder is carried into the new one.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib.metadata
import os
import platform
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pydantic_core

import ctxlab
from ctxlab.experiments.columns import CACHE_COLUMNS, CACHE_UNMEASURED, NO_PROBES, RETENTION_COLUMNS
from ctxlab.experiments.execute import RunResult, request_file_name
from ctxlab.experiments.grid import RunConfig
from ctxlab.experiments.kept_figures import inputs_digest, keep_drawn, record_drawn
from ctxlab.experiments.processes import Share, map_shares
from ctxlab.experiments.replace import replace_folder
from ctxlab.experiments.tables import (
    Table,
    calls_table,
    events_table,
    runs_table,
    write_csv,
    write_parquet,
)
from ctxlab.presets.registry import PRESETS
from ctxlab.scenarios.load import LoadedScenario

DEPENDENCIES = (
    "pydantic",
    "PyYAML",
    "numpy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "agentscope",
    "bpe-openai",
    "dask",
)
Plotter = Callable[[Path, Share], object]
"""Draws its share of the figures of a results folder into the folder's `figures/` (called on the
temporary folder, by several processes side by side)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Written:
    """A results folder and what is in it."""

    folder: Path
    runs: int
    failed: int
    plot_error: str | None = None


@functools.cache
def versions() -> dict[str, str | None]:
    """Installed versions of ctxlab's dependencies (None: not installed); read once per process
    (the caller gets a copy)."""
    found: dict[str, str | None] = {"python": platform.python_version(), "ctxlab": ctxlab.__version__}
    for name in DEPENDENCIES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


@functools.cache
def git_commit() -> dict[str, Any] | None:
    """The commit of the ctxlab checkout and whether it has changes; None outside a git checkout.

    Asked once per process: every folder a process writes comes from the same code. The status
    is read without git's optional locks: a plain `git status` refreshes the checkout's index
    (writing outside the results, and racing a commit the user makes meanwhile)."""
    root = Path(ctxlab.__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head, "dirty": bool(status.strip())}


def _columns(table: Table) -> dict[str, str]:
    return {c.name: f"{c.type}: {c.meaning}" for c in table.columns}


def unmeasured(results: Sequence[RunResult]) -> dict[str, str]:
    """Columns left empty in every row, and why."""
    out: dict[str, str] = {}
    for column in RETENTION_COLUMNS:
        if all(r.measures.get(column) is None for r in results):
            out[column] = NO_PROBES
    if not any(r.cache_metered for r in results):
        out.update(dict.fromkeys(CACHE_COLUMNS, CACHE_UNMEASURED))
    return out


def manifest(
    loaded: LoadedScenario,
    configs: Sequence[RunConfig],
    results: Sequence[RunResult],
    tables: Mapping[str, Table],
) -> dict[str, Any]:
    """The manifest: the resolved scenario, versions, commit, seed, one entry per run, and what
    every column of `tables` (by file name: `runs`, `calls`, `events`) means."""
    scenario = loaded.scenario
    return {
        "scenario": scenario.name,
        "description": scenario.description,
        "source": loaded.source,
        # provenance: the manifest's creation time is the one place a wall clock may appear
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),  # noqa: TID251 # provenance
        "versions": dict(versions()),
        "git": _copied(git_commit()),
        "seed": scenario.seed,
        "resolved_scenario": scenario.model_dump(mode="json"),
        "sweep": [{"path": axis.key, "values": list(axis.values)} for axis in loaded.axes],
        "counting": {
            "summary_calls": scenario.model.summary_token_count,
            "reasoning_calls": "messages + tools",
            "cost": "per call: input_tokens (and cached tokens, when measured) and output_tokens at the "
            "scenario's prices per million tokens",
        },
        "prices": scenario.prices.model_dump(mode="json"),
        "runs": [
            {
                "run_id": config.run_id,
                "strategy": config.strategy,
                "config_hash": config.config_hash,
                "status": result.status,
                "params": config.params,
                "model": config.config["model"],
                "strategy_settings": config.config["strategy"],
                **({"delegate": config.config["delegate"]} if "delegate" in config.config else {}),
                "retention": list(result.retention),
                **({"warnings": list(result.warnings)} if result.warnings else {}),
                **(
                    {"error": result.error, "traceback": result.traceback}
                    if result.status == "failed"
                    else {}
                ),
            }
            for config, result in zip(configs, results, strict=True)
        ],
        "warnings": [str(w) for w in loaded.warnings],
        "notes": {
            name: list(PRESETS[name].remarks)
            for name in PRESETS
            if _uses(scenario, name) and PRESETS[name].remarks
        },
        "unmeasured": unmeasured(results),
        "columns": {name: _columns(table) for name, table in tables.items()},
    }


def _copied(value: dict[str, Any] | None) -> dict[str, Any] | None:
    return dict(value) if value is not None else None


def _uses(scenario: Any, preset: str) -> bool:
    delegate = scenario.delegate.strategy if scenario.delegate is not None else None
    return any(entry.preset == preset for entry in (*scenario.strategies, *([delegate] if delegate else [])))


def write_scenario(
    out: Path,
    loaded: LoadedScenario,
    configs: Sequence[RunConfig],
    results: Sequence[RunResult],
    *,
    plot: Plotter | None = None,
) -> Written:
    """Write `<out>/<scenario>/` atomically; returns what was written.

    Raises:
        OSError: the folder could not be written (the previous results are kept).
    """
    (written,) = write_scenarios(out, [Outcome(loaded, tuple(configs), tuple(results))], plot=plot)
    return written


class Outcome(NamedTuple):
    """A scenario and what its runs gave, in grid order."""

    loaded: LoadedScenario
    configs: tuple[RunConfig, ...]
    results: tuple[RunResult, ...]


def write_scenarios(
    out: Path,
    outcomes: Sequence[Outcome],
    *,
    plot: Plotter | None = None,
    workers: int | None = 1,
    on_drawn: Callable[[int], None] | None = None,
    drawn_as: str | None = None,
    redraw: bool = False,
) -> list[Written]:
    """Write `<out>/<scenario>/` for each outcome, each folder atomically; returns what was written.

    Tables are written here; figures, most of the work, are drawn in up to `workers` worker
    processes side by side, a folder's figures shared among several of them (their bytes do not
    depend on the process), and each folder is put in place only once it is complete.
    `on_drawn(k)` is called as the figures of `outcomes[k]` are done, in the order they finish
    (for progress). With `drawn_as` (the drawing's options, which the figures depend on beside
    the results), each folder's figures are recorded as drawn from its results, and a folder whose
    figures in place were drawn from the same results, code and options keeps them rather than
    drawing them again, unless `redraw` (`kept_figures`).

    Raises:
        OSError: a folder could not be written (the previous results of those not yet in place are
            kept).
    """
    temporaries = [out / f".{o.loaded.name}.tmp-{os.getpid()}" for o in outcomes]
    try:
        for temporary, outcome in zip(temporaries, outcomes, strict=True):
            shutil.rmtree(temporary, ignore_errors=True)
            temporary.mkdir(parents=True)
            _fill(temporary, *outcome)
        errors: list[str | None] = [None] * len(outcomes)
        if plot is not None:
            inputs = [None if drawn_as is None else inputs_digest(t, drawn_as) for t in temporaries]
            kept = [
                not redraw and digest is not None and keep_drawn(out / o.loaded.name, temporary, digest)
                for temporary, o, digest in zip(temporaries, outcomes, inputs, strict=True)
            ]
            runs = [len(o.results) for o in outcomes]
            errors = _draw(plot, temporaries, runs, kept=kept, workers=workers, on_drawn=on_drawn)
            for temporary, digest, error, was_kept in zip(temporaries, inputs, errors, kept, strict=True):
                if digest is not None and error is None and not was_kept and (temporary / "figures").is_dir():
                    record_drawn(temporary, digest)
        for temporary, outcome in zip(temporaries, outcomes, strict=True):
            _keep_tuning(out / outcome.loaded.name, temporary)
            replace_folder(temporary, out / outcome.loaded.name)
    except BaseException:
        for temporary in temporaries:
            shutil.rmtree(temporary, ignore_errors=True)
        raise
    return [
        Written(
            folder=out / o.loaded.name,
            runs=len(o.results),
            failed=sum(1 for r in o.results if r.status == "failed"),
            plot_error=error,
        )
        for o, error in zip(outcomes, errors, strict=True)
    ]


def _keep_tuning(final: Path, temporary: Path) -> None:
    """`ctxlab tune`'s `tune/` folder survives a new run of the scenario (a copy: the old folder
    stays whole until the swap)."""
    if (final / "tune").is_dir():
        shutil.copytree(final / "tune", temporary / "tune")


def _draw(
    plot: Plotter,
    folders: Sequence[Path],
    runs: Sequence[int],
    *,
    kept: Sequence[bool],
    workers: int | None,
    on_drawn: Callable[[int], None] | None,
) -> list[str | None]:
    """Draw the figures of every folder whose figures were not kept, in shares side by side (no
    more shares than runs: a scenario has about as many figures as runs); a kept folder's are
    done at once. A drawing error leaves the folder's tables and no `figures/`, and is returned
    (its first share's), not raised."""
    notify = on_drawn or (lambda k: None)
    for k in (k for k, was_kept in enumerate(kept) if was_kept):
        notify(k)
    todo = [k for k, was_kept in enumerate(kept) if not was_kept]
    plotted = functools.partial(_plot, plot)
    drawn = map_shares(
        plotted, [folders[k] for k in todo], [runs[k] for k in todo], workers, lambda j: notify(todo[j])
    )
    errors: list[str | None] = [None] * len(folders)
    for k, folder_errors in zip(todo, drawn, strict=True):
        errors[k] = next((e for e in folder_errors if e is not None), None)
        if errors[k] is not None:
            shutil.rmtree(folders[k] / "figures", ignore_errors=True)
    return errors


def _plot(plot: Plotter, folder: Path, share: Share) -> str | None:
    """Draw one share of a folder's figures; an error is returned, not raised."""
    try:
        plot(folder, share)
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None


def _fill(
    folder: Path, loaded: LoadedScenario, configs: Sequence[RunConfig], results: Sequence[RunResult]
) -> None:
    tables = {
        "runs": runs_table(configs, results),
        "calls": calls_table(results),
        "events": events_table(results),
    }
    for name, table in tables.items():
        write_csv(table, folder / f"{name}.csv")
        write_parquet(table, folder / f"{name}.parquet")
    recorded = [r for r in results if r.requests_gz is not None]
    if recorded:
        (folder / "requests").mkdir()
        for result in recorded:
            assert result.requests_gz is not None
            name = request_file_name(result.run_id, result.requests_wire)
            (folder / "requests" / name).write_bytes(result.requests_gz)
    text = indented_json(manifest(loaded, configs, results, tables))
    (folder / "manifest.json").write_text(text + "\n", encoding="utf-8")


def indented_json(value: object) -> str:
    """`value` (JSON data: dicts, lists, strings, numbers, booleans, None) as JSON indented by two
    spaces with non-ASCII characters as they are: the text of `json.dumps(value, indent=2,
    ensure_ascii=False)` but for the spelling of a float with an exponent (`1e-05` is written
    `0.00001`, the same number). A manifest holds the whole resolved scenario (a replayed
    transcript's every turn with it), and Python's encoder indents in Python; this one does not."""
    return pydantic_core.to_json(value, indent=2).decode("utf-8")
