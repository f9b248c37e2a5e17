"""Figures of the comparison notebooks, beyond the per-scenario ones of `plots`: strategy costs
across workloads, regime maps of sweeps, and the byte estimate against real tokenizers.

Like `plots`, every function takes DataFrames and returns a matplotlib `Figure`, drawn under
`plots.STYLE` without pyplot; the same frames give the same figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from ctxlab.analysis import plots
from ctxlab.analysis.sensitivity import REGIMES

PERCENT = FuncFormatter(lambda value, _: f"{value:.0%}")
SAFE, UNSAFE = plots.REASONING, "#b0b0b0"
REGIME_COLOURS = {
    "fails": "#7f0000",
    "loops": "#d62728",
    "over window": "#ff7f0e",
    "thrashes": "#ffd92f",
    "ok": "#2ca02c",
}
ENCODING_COLOURS = ("#d62728", "#9467bd", "#8c564b")


@plots.styled
def strategy_costs(table: pd.DataFrame, *, title: str) -> Figure:
    """One panel per workload: each strategy's cost as a bar, grey when the run was unsafe (over
    the window, a protocol violation, or failed), labelled with its peak share of the window."""
    workloads = list(dict.fromkeys(table["workload"]))
    height = max(2.0, 0.45 * table.groupby("workload").size().max() + 1.2)
    figure = Figure(figsize=(4.2 * len(workloads), height), layout="constrained")
    panels = np.atleast_1d(figure.subplots(1, len(workloads), squeeze=False)[0])
    for axes, workload in zip(panels, workloads, strict=True):
        rows = table[table["workload"] == workload].sort_values("cost", ascending=False, kind="stable")
        colours = [SAFE if safe else UNSAFE for safe in rows["safe"]]
        bars = axes.barh(range(len(rows)), rows["cost"], color=colours)
        labels = [
            f"peak {p:.0%}" + ("" if s else " — unsafe")
            for p, s in zip(rows["peak share"], rows["safe"], strict=True)
        ]
        axes.bar_label(bars, labels=labels, fontsize=7, padding=2)
        axes.set_yticks(range(len(rows)), rows["strategy"].tolist())
        axes.set_xlim(0, float(rows["cost"].max()) * 1.6 or 1)
        axes.set_xlabel("cost (price units)")
        axes.set_title(workload)
    figure.legend(
        handles=[Patch(color=SAFE, label="safe"), Patch(color=UNSAFE, label="unsafe")],
        loc="outside lower center",
        ncols=2,
    )
    figure.suptitle(title)
    return figure


@plots.styled
def regime_map(table: pd.DataFrame, *, x: str, y: str, facet: str, title: str) -> Figure:
    """One panel per value of `facet`: the regime of each (`x`, `y`) cell, coloured, with the
    run's compressions written in it."""
    facets = sorted(table[facet].dropna().unique().tolist())
    xs, ys = sorted(table[x].dropna().unique()), sorted(table[y].dropna().unique())
    figure = Figure(figsize=(max(5.5, 3.3 * len(facets) + 1), 3.4), layout="constrained")
    panels = figure.subplots(1, len(facets), squeeze=False)[0]
    cmap = ListedColormap([REGIME_COLOURS[r] for r in REGIMES])
    for axes, value in zip(panels, facets, strict=True):
        grid = np.full((len(ys), len(xs)), np.nan)
        for row in table[table[facet] == value].itertuples(index=False):
            i, j = ys.index(getattr(row, y)), xs.index(getattr(row, x))
            grid[i, j] = REGIMES.index(row.regime)
            axes.text(j, i, f"{row.compressions}", ha="center", va="center", fontsize=7)
        axes.imshow(grid, origin="lower", aspect="auto", cmap=cmap, vmin=-0.5, vmax=len(REGIMES) - 0.5)
        axes.set_xticks(range(len(xs)), [plots.value_text(v) for v in xs])
        axes.set_yticks(range(len(ys)), [plots.value_text(v) for v in ys])
        axes.set_xlabel(x)
        axes.set_ylabel(y)
        axes.set_title(f"{facet} {plots.value_text(value)}")
        axes.grid(False)
    figure.legend(
        handles=[Patch(color=REGIME_COLOURS[r], label=r) for r in REGIMES],
        loc="outside right center",
        title="regime (cell: compressions)",
    )
    figure.suptitle(title)
    return figure


@plots.styled
def estimate_errors(counts: pd.DataFrame, encodings: Sequence[str], *, title: str) -> Figure:
    """One panel per encoding: the error of the byte estimate on each sample, by kind of text."""
    kinds = list(dict.fromkeys(counts["kind"]))
    figure = Figure(figsize=(max(6.0, 0.9 * len(kinds) + 1.5), 3.4 * len(encodings)), layout="constrained")
    panels = figure.subplots(len(encodings), 1, squeeze=False)[:, 0]
    for axes, name in zip(panels, encodings, strict=True):
        errors = [counts.loc[counts["kind"] == k, f"error {name}"].dropna().to_numpy() for k in kinds]
        axes.boxplot(errors, positions=range(len(kinds)), widths=0.5, showfliers=False)
        for position, values in enumerate(errors):
            offsets = (np.arange(len(values)) % 7 - 3) * 0.04  # a fixed spread, no random jitter
            axes.scatter(position + offsets, values, s=8, alpha=0.6, color=plots.REASONING, zorder=3)
        axes.axhspan(-0.4, -0.2, color=plots.SUMMARY, alpha=0.08, label="estimate 20–40% low")
        axes.axhspan(0.2, 0.4, color=plots.RESERVE, alpha=0.08, label="estimate 20–40% high")
        axes.axhline(0, color=plots.WINDOW, linewidth=0.8)
        axes.set_xticks(range(len(kinds)), kinds, rotation=15, ha="right")
        axes.yaxis.set_major_formatter(PERCENT)
        axes.set_ylabel("estimate / real − 1")
        axes.set_title(f"against {name}")
        axes.legend(loc="upper right", fontsize=7)
    figure.suptitle(title)
    return figure


@plots.styled
def fill_at_trigger(frame: pd.DataFrame, *, trigger: float, title: str) -> Figure:
    """The real share of the window at which the trigger fires, against the estimate's error."""
    figure = Figure(figsize=(6, 3.6), layout="constrained")
    axes = figure.add_subplot()
    axes.plot(frame["error"], frame["real fill at the trigger"], marker="o", color=plots.REASONING)
    axes.axhline(1.0, color=plots.WINDOW, linewidth=1.2, label="the window")
    axes.axhline(trigger, color=plots.TRIGGER, linestyle="--", linewidth=1, label=f"trigger {trigger:g}")
    axes.axvspan(-1, -(1 - trigger), color=plots.SUMMARY, alpha=0.08, label="fires over the window")
    axes.set_xlim(float(frame["error"].min()) - 0.05, float(frame["error"].max()) + 0.05)
    axes.set_ylim(0, max(1.1, float(frame["real fill at the trigger"].max()) * 1.05))
    axes.xaxis.set_major_formatter(PERCENT)
    axes.yaxis.set_major_formatter(PERCENT)
    axes.set_xlabel("error of the estimate (estimate / real − 1)")
    axes.set_ylabel("real fill of the window when it fires")
    axes.legend(loc="upper right")
    axes.set_title(title)
    return figure


@plots.styled
def estimate_vs_real(
    counts: pd.DataFrame, encodings: Sequence[str], *, window: int, trigger: float | None, title: str
) -> Figure:
    """Per call of a run the estimate decided (`estimator.recount`'s rows): what the estimate
    counted, and what each real encoding counts for the same request; window and trigger lines,
    compressions (its `compressed` column) marked."""
    figure = Figure(figsize=(8, 4.2), layout="constrained")
    axes = figure.add_subplot()
    x = counts["call_index"].astype(int)
    axes.plot(x, counts["estimate"], color=plots.REASONING, marker=".", linewidth=1.3, label="estimate")
    for name, colour in zip(encodings, ENCODING_COLOURS, strict=False):
        axes.plot(x, counts[name], color=colour, marker=".", linewidth=1, label=name)
    for position, index in enumerate(x[counts["compressed"].astype(bool)]):
        axes.axvline(
            index - 0.5,
            color=plots.COMPRESSION,
            linestyle="--",
            linewidth=0.9,
            label="compression" if position == 0 else None,
        )
    axes.axhline(window, color=plots.WINDOW, linewidth=1.2, label=f"window {window:,}")
    if trigger is not None:
        axes.axhline(trigger * window, color=plots.TRIGGER, linestyle="--", linewidth=1, label="trigger")
    axes.set_xlabel("model call (0-based, in order)")
    axes.set_ylabel("input tokens per call")
    axes.yaxis.set_major_formatter(plots.THOUSANDS)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylim(bottom=0)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    axes.set_title(title)
    return figure
