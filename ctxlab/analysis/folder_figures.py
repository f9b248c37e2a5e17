"""Which figures a results folder gets, drawn into its `figures/`.

- `sawtooth-<run_id>`: every run, when the scenario has at most `MAX_SAWTOOTH_RUNS` runs (a run
  with sub-agents shows them too, every call in the order it was made: `analysis.agents`; a run
  that made no call says so, and why when it failed).
- `overlay[-k]` and `cumulative[-k]`: the runs that share a workload (the same values of every
  swept `workload.*` path and seed), when there are 2 to `MAX_OVERLAY_RUNS` of them; each line
  is labelled with its strategy and the other swept values.
- `cache-hit-rate[-k]`: the same groups, when cached tokens were measured.
- `retention[-k]`: the same groups, when probes were planted: the share of each kind still
  visible after every compression and at the end (from the manifest's snapshots).
- `heatmap-<strategy>[-k]`: a strategy swept over two or more paths: the first two are the axes,
  one figure per combination of the others; `sweep-<strategy>`: swept over one path.

The figures are planned first (`figure_plan`: each file's stem and how to draw it), so the
processes drawing one folder side by side can each draw a share of the plan.

Invariant: the same results give the same figure files, byte for byte, whichever share and
process draws each.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from ctxlab.analysis import agents, plots
from ctxlab.analysis.folders import ResultsError, read_manifest
from ctxlab.analysis.results import Results, load_results
from ctxlab.analysis.sweep_figures import grid_values, heatmap, sweep_lines, swept_key, swept_text
from ctxlab.core.wire.cache import Prices
from ctxlab.experiments.kept_figures import RECORD, drawing_options, inputs_digest, record_drawn
from ctxlab.experiments.processes import WHOLE, Share, map_shares
from ctxlab.experiments.replace import replace_folder
from ctxlab.problems import NAME_PATTERN

MAX_SAWTOOTH_RUNS = 16
MAX_OVERLAY_RUNS = 8
MAX_HEATMAPS = 12


Draw = Callable[[], Figure]
"""Draws one figure of a folder, from results already loaded."""


def figure_plan(results: Results) -> list[tuple[str, Draw]]:
    """Every figure of `results` in file order: its file stem and how to draw it (nothing is
    drawn here, so a share of the list can be drawn in each of several processes)."""
    plan: list[tuple[str, Draw]] = []
    runs = results.runs
    if len(runs) <= MAX_SAWTOOTH_RUNS:
        for _, row in runs.iterrows():
            plan.append((f"sawtooth-{row['run_id']}", _sawtooth(results, row)))
    plan += _groups(results)
    plan += _sweeps(results)
    return plan


def draw_figures(results: Results, folder: Path, *, svg: bool = False, share: Share = WHOLE) -> list[Path]:
    """Draw the figures of `results` in `share` (by default all of them) into `folder` (PNG, and
    SVG with `svg`); returns the files written, in order."""
    written: list[Path] = []
    for position, (stem, draw) in enumerate(figure_plan(results)):
        if share.holds(position):
            written.extend(plots.save(draw(), folder, stem, svg=svg))
    return written


def _sawtooth(results: Results, row: pd.Series) -> Draw:
    calls = results.calls[results.calls["run_id"] == row["run_id"]]
    settings = results.run_settings(str(row["run_id"]))
    context = settings.get("strategy_settings", {}).get("context", {})
    title = f"{results.name}: {plots.run_label(row, results.swept_columns())}"
    subagents = results.subagent_calls[results.subagent_calls["run_id"] == row["run_id"]]
    if not subagents.empty:
        window = int(settings["model"]["context_size"])
        return functools.partial(
            agents.sawtooth,
            calls,
            results.events,
            subagents,
            results.subagent_events,
            title=title,
            window=window,
            subagent_window=int(settings.get("delegate", {}).get("context_size") or window),
        )
    return functools.partial(
        plots.sawtooth,
        calls,
        results.events,
        title=title,
        window=int(settings["model"]["context_size"]),
        trigger=context.get("trigger_ratio"),
        reserve=context.get("reserve_ratio"),
        note=None if len(calls) else _no_calls(row),
    )


def _no_calls(row: pd.Series) -> str:
    """What the sawtooth of a run without a model call says instead of a line."""
    if row["status"] == "ok":
        return "no model call was made"
    error = "" if pd.isna(row.get("error")) else f":\n{str(row['error'])[:160]}"
    return f"no model call was made: the run failed first{error}"


def _shared_columns(results: Results) -> list[str]:
    """Swept columns that change the workload itself: runs are overlaid only within one value."""
    return [c for c in results.swept_columns() if c.startswith(("param.workload.", "param.seed"))]


def _grouped(results: Results) -> list[tuple[str, pd.DataFrame]]:
    """Runs sharing a workload and model, each group with a caption of its shared values."""
    shared = _shared_columns(results)
    if not shared:
        return [("", results.runs)]
    groups = []
    for key, group in results.runs.groupby(shared, sort=False, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        caption = ", ".join(
            f"{c.removeprefix('param.')}={swept_text(v)}" for c, v in zip(shared, values, strict=True)
        )
        groups.append((caption, group))
    return groups


def _groups(results: Results) -> list[tuple[str, Draw]]:
    groups = [(c, g) for c, g in _grouped(results) if 2 <= len(g) <= MAX_OVERLAY_RUNS]
    shared = _shared_columns(results)
    strategy_columns = [c for c in results.swept_columns() if c not in shared]
    plan: list[tuple[str, Draw]] = []
    for k, (caption, group) in enumerate(groups, start=1):
        suffix = "" if len(groups) == 1 else f"-{k}"
        labels = {str(r["run_id"]): plots.run_label(r, strategy_columns) for _, r in group.iterrows()}
        calls = results.calls[results.calls["run_id"].isin(list(labels))]
        where = f" ({caption})" if caption else ""
        window = _common_window(results, list(labels))
        title = f"{results.name}: input tokens per call{where}"
        plan.append(
            (f"overlay{suffix}", functools.partial(plots.overlay, calls, labels, title=title, window=window))
        )
        title = f"{results.name}: tokens and cost{where}"
        prices = results.manifest["prices"]
        plan.append(
            (
                f"cumulative{suffix}",
                functools.partial(plots.cumulative, calls, labels, title=title, prices=prices),
            )
        )
        if group["cache_hit_rate"].notna().all():
            title = f"{results.name}: cache hit rate{where}"
            plan.append(
                (
                    f"cache-hit-rate{suffix}",
                    functools.partial(plots.cache_hit_rates, group, labels, title=title),
                )
            )
        snapshots = {labels[r]: results.run_settings(r).get("retention", []) for r in labels}
        if any(
            s.get(k) is not None for run in snapshots.values() for s in run for k in plots.RETENTION_KINDS
        ):
            title = f"{results.name}: retention of planted items{where}"
            plan.append((f"retention{suffix}", functools.partial(plots.retention, snapshots, title=title)))
    return plan


def _common_window(results: Results, run_ids: list[str]) -> int | None:
    windows = {int(results.run_settings(r)["model"]["context_size"]) for r in run_ids}
    return windows.pop() if len(windows) == 1 else None


def _sweeps(results: Results) -> list[tuple[str, Draw]]:
    runs = results.runs
    swept = results.swept_columns()
    plan: list[tuple[str, Draw]] = []
    for strategy in dict.fromkeys(runs["strategy"].tolist()):
        own = runs[runs["strategy"] == strategy]
        dims = [c for c in swept if own[c].nunique(dropna=False) > 1]  # a swept null is a value
        if len(dims) == 1:
            title = f"{results.name}: {strategy} over {dims[0].removeprefix('param.')}"
            plan.append((f"sweep-{strategy}", functools.partial(sweep_lines, own, dims[0], title=title)))
        elif len(dims) >= 2:
            plan += _heatmaps(results.name, strategy, own, dims)
    return plan


def _heatmaps(name: str, strategy: str, runs: pd.DataFrame, dims: list[str]) -> list[tuple[str, Draw]]:
    x, y, rest = dims[0], dims[1], dims[2:]
    combos = list(itertools.product(*(grid_values(runs, c) for c in rest)))[:MAX_HEATMAPS]
    plan: list[tuple[str, Draw]] = []
    for k, combo in enumerate(combos, start=1):
        subset = runs
        for column, value in zip(rest, combo, strict=True):
            subset = subset[[swept_key(v) == value for v in subset[column].tolist()]]
        fixed = ", ".join(
            f"{c.removeprefix('param.')}={swept_text(v)}" for c, v in zip(rest, combo, strict=True)
        )
        title = f"{name}: {strategy}" + (f" ({fixed})" if fixed else "")
        suffix = "" if len(combos) == 1 else f"-{k}"
        plan.append(
            (
                f"heatmap-{strategy}{suffix}",
                functools.partial(heatmap, subset, x, y, title=title),
            )
        )
    return plan


def plot_share(folder: Path, share: Share = WHOLE, *, svg: bool = False) -> list[Path]:
    """Draw `share` of the figures of the results in `folder` into `folder/figures/`: for a
    folder no reader sees yet (a results folder being written). Shares drawn side by side never
    write the same file."""
    return _draw_into(svg, (folder, folder / "figures"), share)


def plot_folder(folder: Path, *, svg: bool = False, workers: int | None = 1) -> list[Path]:
    """`plot_folders` of one folder: its figure files, sorted."""
    return plot_folders([folder], svg=svg, workers=workers)[0]


def plot_folders(
    folders: Sequence[Path],
    *,
    svg: bool = False,
    workers: int | None = 1,
    on_drawn: Callable[[int], None] | None = None,
) -> list[list[Path]]:
    """Redraw the figures of the results in each folder into its `figures/`, each replaced as a
    whole once every folder's figures are drawn, and recorded as drawn from its results (so a
    rerun with the same results keeps them: `experiments.kept_figures`); with `workers` (None:
    the cores), shares of them are drawn in that many processes side by side. `on_drawn(k)` is
    called as the figures of `folders[k]` are done, in the order they finish (for progress).
    Returns each folder's files, sorted."""
    temporaries = [folder / f".figures.tmp-{os.getpid()}" for folder in folders]
    try:
        for temporary in temporaries:
            shutil.rmtree(temporary, ignore_errors=True)
        pairs = list(zip(folders, temporaries, strict=True))
        runs = [_runs(f) for f in folders]
        drawn = map_shares(functools.partial(_draw_into, svg), pairs, runs, workers, on_drawn)
        for folder, temporary in pairs:
            (folder / RECORD).unlink(missing_ok=True)  # until it names the new figures
            replace_folder(temporary, folder / "figures")
            record_drawn(folder, inputs_digest(folder, drawing_options(svg)))
    except BaseException:
        for temporary in temporaries:
            shutil.rmtree(temporary, ignore_errors=True)
        raise
    return [
        sorted(folder / "figures" / path.name for part in parts for path in part)
        for folder, parts in zip(folders, drawn, strict=True)
    ]


def _runs(folder: Path) -> int:
    return len(read_manifest(folder)["runs"])


FIGURE_COLUMNS = {
    "runs": ("strategy", "cost", "peak_input_tokens", "cache_hit_rate"),
    "calls": ("call_index", "input_tokens"),
}
"""The columns the figures read beyond those every reader takes (`folders.RUN_KEYS`)."""
RUN_ID = re.compile(NAME_PATTERN)
"""A run id: a strategy's name and a hash, safe as a file's name (`sawtooth-<run_id>.png`)."""


def check_drawable(results: Results) -> None:
    """Whether the figures of `results` can be drawn: what they read beyond what every reader of
    a folder checks (`load_results`) is there and of its kind (a folder edited by hand, or
    written by another version).

    Raises:
        ResultsError: naming the file and what is missing or of another kind.
    """
    for table, columns in FIGURE_COLUMNS.items():
        frame = getattr(results, table)
        missing = next((c for c in columns if c not in frame.columns), None)
        if missing is not None:
            raise ResultsError(
                _table_file(results.folder, table), f"no `{missing}` column, which its figures read"
            )
    manifest = results.folder / "manifest.json"
    prices = results.manifest.get("prices")
    fields = [f.name for f in dataclasses.fields(Prices)]
    if not isinstance(prices, dict) or any(not _number(prices.get(f)) for f in fields):
        raise ResultsError(manifest, f"`prices` is not an object of numbers for {', '.join(fields)}")
    for entry in results.manifest["runs"]:
        why = _run_entry_problem(entry)
        if why is not None:
            raise ResultsError(manifest, f"run {entry['run_id']!r}: {why}")


def _run_entry_problem(entry: dict[str, Any]) -> str | None:
    if not RUN_ID.fullmatch(str(entry["run_id"])):
        return "its id is not a name (letters, digits, - and _), which figure files are named by"
    window = entry.get("model", {}).get("context_size") if isinstance(entry.get("model"), dict) else None
    if type(window) is not int:
        return "its `model` has no whole-number `context_size`"
    retention = entry.get("retention", [])
    if not isinstance(retention, list) or not all(isinstance(r, dict) for r in retention):
        return "its `retention` is not a list of objects"
    return None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _table_file(folder: Path, table: str) -> Path:
    parquet = folder / f"{table}.parquet"
    return parquet if parquet.exists() else folder / f"{table}.csv"


def _draw_into(svg: bool, source_and_target: tuple[Path, Path], share: Share) -> list[Path]:
    """Draw `share` of the figures of the results in the first folder into the second."""
    source, into = source_and_target
    into.mkdir(parents=True, exist_ok=True)
    results = load_results(source)
    check_drawable(results)  # a folder that fails it fails them all: no figures/ is replaced
    return draw_figures(results, into, svg=svg, share=share)
