"""Which figures a results folder gets, drawn into its `figures/`.

- `sawtooth-<run_id>`: every run, when the scenario has at most `MAX_SAWTOOTH_RUNS` runs (a run
  with sub-agents shows them too, every call in the order it was made: `analysis.agents`).
- `overlay[-k]` and `cumulative[-k]`: the runs that share a workload (the same values of every
  swept `workload.*` path and seed), when there are 2 to `MAX_OVERLAY_RUNS` of them; each line
  is labelled with its strategy and the other swept values.
- `cache-hit-rate[-k]`: the same groups, when cached tokens were measured.
- `retention[-k]`: the same groups, when probes were planted: the share of each kind still
  visible after every compression and at the end (from the manifest's snapshots).
- `heatmap-<strategy>[-k]`: a strategy swept over two or more paths: the first two are the axes,
  one figure per combination of the others; `sweep-<strategy>`: swept over one path.

Invariant: the same results give the same figure files, byte for byte.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from ctxlab.analysis import agents, plots
from ctxlab.analysis.labels import value_text
from ctxlab.analysis.results import Results, load_results
from ctxlab.experiments.results import replace_folder

MAX_SAWTOOTH_RUNS = 16
MAX_OVERLAY_RUNS = 8
MAX_HEATMAPS = 12


def draw_figures(results: Results, folder: Path, *, svg: bool = False) -> list[Path]:
    """Draw every figure of `results` into `folder` (PNG, and SVG with `svg`); returns the files
    written, in order."""
    written: list[Path] = []

    def keep(figure: Figure, stem: str) -> None:
        written.extend(plots.save(figure, folder, stem, svg=svg))

    runs = results.runs
    if len(runs) <= MAX_SAWTOOTH_RUNS:
        for _, row in runs.iterrows():
            figure = _sawtooth(results, row)
            if figure is not None:
                keep(figure, f"sawtooth-{row['run_id']}")
    _groups(results, keep)
    _sweeps(results, keep)
    return written


def _sawtooth(results: Results, row: pd.Series) -> Figure | None:
    calls = results.calls[results.calls["run_id"] == row["run_id"]]
    if calls.empty:
        return None
    settings = results.run_settings(str(row["run_id"]))
    context = settings.get("strategy_settings", {}).get("context", {})
    title = f"{results.name}: {plots.run_label(row, results.swept_columns())}"
    if row["status"] != "ok":
        title += " (failed)"
    subagents = results.subagent_calls[results.subagent_calls["run_id"] == row["run_id"]]
    if not subagents.empty:
        window = int(settings["model"]["context_size"])
        return agents.sawtooth(
            calls,
            results.events,
            subagents,
            results.subagent_events,
            title=title,
            window=window,
            subagent_window=int(settings.get("delegate", {}).get("context_size") or window),
        )
    return plots.sawtooth(
        calls,
        results.events,
        title=title,
        window=int(settings["model"]["context_size"]),
        trigger=context.get("trigger_ratio"),
        reserve=context.get("reserve_ratio"),
    )


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
            f"{c.removeprefix('param.')}={value_text(v)}" for c, v in zip(shared, values, strict=True)
        )
        groups.append((caption, group))
    return groups


def _groups(results: Results, keep: Any) -> None:
    groups = [(c, g) for c, g in _grouped(results) if 2 <= len(g) <= MAX_OVERLAY_RUNS]
    shared = _shared_columns(results)
    strategy_columns = [c for c in results.swept_columns() if c not in shared]
    for k, (caption, group) in enumerate(groups, start=1):
        suffix = "" if len(groups) == 1 else f"-{k}"
        labels = {str(r["run_id"]): plots.run_label(r, strategy_columns) for _, r in group.iterrows()}
        calls = results.calls[results.calls["run_id"].isin(list(labels))]
        where = f" ({caption})" if caption else ""
        window = _common_window(results, list(labels))
        keep(
            plots.overlay(
                calls, labels, title=f"{results.name}: input tokens per call{where}", window=window
            ),
            f"overlay{suffix}",
        )
        prices = results.manifest["prices"]
        keep(
            plots.cumulative(calls, labels, title=f"{results.name}: tokens and cost{where}", prices=prices),
            f"cumulative{suffix}",
        )
        if group["cache_hit_rate"].notna().all():
            keep(
                plots.cache_hit_rates(group, labels, title=f"{results.name}: cache hit rate{where}"),
                f"cache-hit-rate{suffix}",
            )
        snapshots = {labels[r]: results.run_settings(r).get("retention", []) for r in labels}
        if any(
            s.get(k) is not None for run in snapshots.values() for s in run for k in plots.RETENTION_KINDS
        ):
            keep(
                plots.retention(snapshots, title=f"{results.name}: retention of planted items{where}"),
                f"retention{suffix}",
            )


def _common_window(results: Results, run_ids: list[str]) -> int | None:
    windows = {int(results.run_settings(r)["model"]["context_size"]) for r in run_ids}
    return windows.pop() if len(windows) == 1 else None


def _sweeps(results: Results, keep: Any) -> None:
    runs = results.runs
    swept = results.swept_columns()
    for strategy in dict.fromkeys(runs["strategy"].tolist()):
        own = runs[runs["strategy"] == strategy]
        dims = [c for c in swept if own[c].nunique(dropna=True) > 1]
        if len(dims) == 1:
            title = f"{results.name}: {strategy} over {dims[0].removeprefix('param.')}"
            keep(plots.sweep_lines(own, dims[0], title=title), f"sweep-{strategy}")
        elif len(dims) >= 2:
            _heatmaps(results.name, strategy, own, dims, keep)


def _heatmaps(name: str, strategy: str, runs: pd.DataFrame, dims: list[str], keep: Any) -> None:
    x, y, rest = dims[0], dims[1], dims[2:]
    combos = list(itertools.product(*(sorted(runs[c].dropna().unique().tolist()) for c in rest)))[
        :MAX_HEATMAPS
    ]
    for k, combo in enumerate(combos, start=1):
        subset = runs
        for column, value in zip(rest, combo, strict=True):
            subset = subset[subset[column] == value]
        fixed = ", ".join(
            f"{c.removeprefix('param.')}={value_text(v)}" for c, v in zip(rest, combo, strict=True)
        )
        title = f"{name}: {strategy}" + (f" ({fixed})" if fixed else "")
        suffix = "" if len(combos) == 1 else f"-{k}"
        keep(plots.heatmap(subset, x, y, title=title), f"heatmap-{strategy}{suffix}")


def plot_folder(folder: Path, *, svg: bool = False) -> list[Path]:
    """Draw the figures of the results in `folder` into `folder/figures/` (replaced as a whole)."""
    results = load_results(folder)
    final = folder / "figures"
    temporary = folder / f".figures.tmp-{os.getpid()}"
    shutil.rmtree(temporary, ignore_errors=True)
    try:
        written = draw_figures(results, temporary, svg=svg)
        temporary.mkdir(exist_ok=True)
        replace_folder(temporary, final)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return [final / p.name for p in written]
