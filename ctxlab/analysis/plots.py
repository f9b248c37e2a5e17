"""Figures of runs: the sawtooth, overlays, cumulative tokens and cost, cache hits, retention
(a sweep's figures are in `sweep_figures`).

Each function takes DataFrames (as `load_results` gives them) and returns a matplotlib `Figure`;
nothing here shows a window or touches pyplot's global state, so the functions work the same in
scripts, tests and notebooks (a notebook displays the returned figure).

Invariants:
- Every figure has a title, axis labels with units, and a legend or colour bar for what it
  encodes; token axes use thousands separators.
- `save` writes PNG (and SVG on request) whose bytes depend only on the figure: no software version or date
  in the metadata, a fixed SVG id salt.
- Saving draws a figure once: its layout is solved first (`laid_out`), not by an unseen draw.
"""

from __future__ import annotations

import contextlib
import functools
import math
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ParamSpec, cast

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator

from ctxlab.analysis.labels import value_text
from ctxlab.analysis.results import has_event
from ctxlab.core.events import EventKind
from ctxlab.experiments.measures import call_cost

STYLE: dict[str, Any] = {
    "svg.hashsalt": "ctxlab",
    "svg.fonttype": "path",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titley": 1.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8,
    "legend.framealpha": 0.85,
}
"""The style every figure is drawn and saved with. A fixed title height (no figure has ticks on
top for a title to clear) spares matplotlib measuring the axes again for every title it draws."""

P = ParamSpec("P")
THOUSANDS = FuncFormatter(lambda value, _: f"{value:,.0f}")
REASONING, SUMMARY, COMPRESSION = "#1f77b4", "#d62728", "#7f7f7f"
WINDOW, TRIGGER, RESERVE = "#222222", "#ff7f0e", "#2ca02c"


def styled(draw: Callable[P, Figure]) -> Callable[P, Figure]:
    """Draw under `STYLE` (rcParams apply when axes and artists are made, so the whole function)."""

    @functools.wraps(draw)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Figure:
        with mpl.rc_context(cast(Any, STYLE)):
            return draw(*args, **kwargs)

    return wrapper


def line_colours(count: int) -> list[Any]:
    """Distinct colours for `count` lines: matplotlib's ten, or twenty when there are more lines
    (every preset on one workload is eleven), repeating only past twenty."""
    palette = mpl.colormaps["tab10" if count <= 10 else "tab20"].colors  # type: ignore[attr-defined]
    return [palette[i % len(palette)] for i in range(count)]


LABEL_WIDTH = 48
TICK_WIDTH = 20
"""Lines of a long label under a slanted tick, which must not reach past the figure's edge."""


def wrapped(label: str, width: int = LABEL_WIDTH) -> str:
    """A run's label as a legend or tick shows it: a label longer than `LABEL_WIDTH` characters
    on lines of at most `width`, so a long strategy name cannot squeeze the plot to nothing."""
    return label if len(label) <= LABEL_WIDTH else "\n".join(textwrap.wrap(label, width))


def new_figure(width: float, height: float) -> Figure:
    """A figure of `width` x `height` inches, laid out by matplotlib's constrained layout (never
    pyplot's: no figure is registered globally)."""
    return Figure(figsize=(width, height), layout="constrained")


@contextlib.contextmanager
def laid_out(figure: Figure, dpi: float) -> Iterator[None]:
    """`figure` with its layout solved at `dpi` and its layout engine set aside, restored after.

    Saving a figure that has a layout engine draws it twice: once unseen, to place the axes,
    then for real. Solved here first, the layout is the same (so are the pixels) and the figure
    is drawn once, about a third less work for a PNG. An axis without minor ticks does not look
    for minor ticks on its major ones meanwhile (matplotlib would work out the major ticks once
    more at every measure and draw of the axis, to remove none).
    """
    engine = figure.get_layout_engine()
    if engine is None:
        yield
        return
    dpi_before = figure.dpi
    unticked = [axis for axis in _axes_of(figure) if _no_minor_ticks(axis)]
    try:
        for axis in unticked:
            axis.remove_overlapping_locs = False
        figure.dpi = dpi
        engine.execute(figure)
        with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            figure.set_layout_engine(None)
        yield
    finally:
        figure.set_layout_engine(engine)
        figure.dpi = dpi_before
        for axis in unticked:
            axis.remove_overlapping_locs = True


def _axes_of(figure: Figure) -> list[Axis]:
    return [axis for axes in figure.axes for axis in (axes.xaxis, axes.yaxis)]


def _no_minor_ticks(axis: Axis) -> bool:
    """The axis has no minor ticks and would remove those on major ones (matplotlib's default)."""
    return isinstance(axis.get_minor_locator(), NullLocator) and bool(axis.remove_overlapping_locs)


PNG_DPI = 110


def save(figure: Figure, folder: Path, stem: str, *, svg: bool = False) -> list[Path]:
    """Write `<stem>.png` (and `<stem>.svg` when asked) into `folder`; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / f"{stem}.png"]
    with mpl.rc_context(cast(Any, STYLE)):
        with laid_out(figure, PNG_DPI):
            figure.savefig(written[0], dpi=PNG_DPI, metadata={"Software": None})
        if svg:
            written.append(folder / f"{stem}.svg")
            figure.savefig(written[1], metadata={"Date": None, "Creator": None})
    return written


def _compression_calls(calls: pd.DataFrame, events: pd.DataFrame) -> list[int]:
    """Indexes of calls made right after a compression."""
    compressed = has_event(calls, events, EventKind.COMPRESSED)
    return [int(i) for i in calls.loc[compressed, "call_index"]]


def _zone_lines(axes: Any, window: int, trigger: float | None, reserve: float | None) -> None:
    axes.axhline(window, color=WINDOW, linewidth=1.2, label=f"window {window:,}")
    if trigger is not None:
        axes.axhline(
            trigger * window,
            color=TRIGGER,
            linestyle="--",
            linewidth=1,
            label=f"trigger {trigger:g} × window",
        )
    if reserve is not None:
        axes.axhline(
            reserve * window,
            color=RESERVE,
            linestyle=":",
            linewidth=1.2,
            label=f"reserve {reserve:g} × window",
        )


def whole_calls(axes: Axes) -> None:
    """Whole call numbers on the x axis, also when every point is at one call (matplotlib would
    spread a single call over fractions of a call around it), and none without a call."""
    low, high = axes.dataLim.intervalx
    if not (np.isfinite(low) and np.isfinite(high)):
        axes.xaxis.set_major_locator(NullLocator())
        return
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    if low == high:
        axes.set_xlim(low - 1, high + 1)


def token_axes(axes: Axes, title: str, xlabel: str = "model call (0-based, in order)") -> None:
    """Title, labels, thousands on the y axis from 0, whole calls on the x axis, and the legend
    outside on the right: how every input-tokens-per-call figure is finished."""
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel("input tokens per call")
    axes.yaxis.set_major_formatter(THOUSANDS)
    whole_calls(axes)
    axes.set_ylim(bottom=0)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


@styled
def sawtooth(
    calls: pd.DataFrame,
    events: pd.DataFrame,
    *,
    title: str,
    window: int,
    trigger: float | None = None,
    reserve: float | None = None,
    note: str | None = None,
) -> Figure:
    """Input tokens per call of one run, with the window, trigger and reserve lines.

    Reasoning and summary calls are marked apart; a dashed vertical line marks each compression
    (a `compressed` row of `events`, the results' events table). `note` is written across the
    plot (a run without calls says so there, rather than looking like a run of no tokens).
    """
    figure = new_figure(8, 4.2)
    axes = figure.add_subplot()
    x, y = calls["call_index"].astype(int), calls["input_tokens"].astype(float)
    axes.plot(x, y, color=REASONING, linewidth=1, alpha=0.6)
    kinds = calls["kind"].astype(str)
    for kind, color, marker, label in (
        ("reasoning", REASONING, "o", "reasoning call"),
        ("summary", SUMMARY, "v", "summary call"),
    ):
        mask = (kinds == kind).to_numpy()
        if mask.any():
            axes.scatter(x[mask], y[mask], color=color, marker=marker, s=22, zorder=3, label=label)
    for position, index in enumerate(_compression_calls(calls, events)):
        axes.axvline(
            index - 0.5,
            color=COMPRESSION,
            linestyle="--",
            linewidth=0.9,
            label="compression" if position == 0 else None,
        )
    _zone_lines(axes, window, trigger, reserve)
    token_axes(axes, title)
    if note:
        axes.text(0.5, 0.5, note, transform=axes.transAxes, ha="center", va="center", wrap=True)
    return figure


@styled
def overlay(calls: pd.DataFrame, labels: dict[str, str], *, title: str, window: int | None = None) -> Figure:
    """Input tokens per call of several runs on one workload, one line each."""
    figure = new_figure(8, 4.2)
    axes = figure.add_subplot()
    for (run_id, label), colour in zip(labels.items(), line_colours(len(labels)), strict=True):
        run = calls[calls["run_id"] == run_id]
        axes.plot(
            run["call_index"].astype(int),
            run["input_tokens"].astype(float),
            marker=".",
            linewidth=1.2,
            label=wrapped(label),
            color=colour,
        )
    if window is not None:
        axes.axhline(window, color=WINDOW, linewidth=1.2, label=f"window {window:,}")
    token_axes(axes, title)
    return figure


def call_costs(calls: pd.DataFrame, prices: dict[str, float]) -> pd.Series:
    """The cost of each call (the same function the run totals use)."""
    cached = calls["cached_tokens"]
    values = [
        call_cost(int(i), None if pd.isna(c) else int(c), int(o), prices)
        for i, c, o in zip(calls["input_tokens"], cached, calls["output_tokens"], strict=True)
    ]
    return pd.Series(values, index=calls.index, dtype="float64")


@styled
def cumulative(
    calls: pd.DataFrame, labels: dict[str, str], *, title: str, prices: dict[str, float]
) -> Figure:
    """Cumulative input tokens and cumulative cost over the calls of several runs."""
    figure = new_figure(10, 4)
    tokens_axes, cost_axes = figure.subplots(1, 2)
    for (run_id, label), colour in zip(labels.items(), line_colours(len(labels)), strict=True):
        run = calls[calls["run_id"] == run_id]
        x = run["call_index"].astype(int)
        marker = "o" if len(run) == 1 else None  # a line of one point draws nothing
        tokens_axes.plot(
            x,
            run["input_tokens"].astype(float).cumsum(),
            linewidth=1.4,
            label=wrapped(label),
            color=colour,
            marker=marker,
        )
        cost_axes.plot(
            x,
            call_costs(run, prices).cumsum(),
            linewidth=1.4,
            label=wrapped(label),
            color=colour,
            marker=marker,
        )
    tokens_axes.set_title("cumulative input tokens")
    tokens_axes.set_ylabel("input tokens (sum so far)")
    tokens_axes.yaxis.set_major_formatter(THOUSANDS)
    cost_axes.set_title("cumulative cost")
    cost_axes.set_ylabel("cost (price units, per-million prices)")
    for axes in (tokens_axes, cost_axes):
        axes.set_xlabel("model call (0-based, in order)")
        whole_calls(axes)
        axes.set_ylim(bottom=0)
    cost_axes.legend(loc="upper left", fontsize=7)
    figure.suptitle(title)
    return figure


@styled
def cache_hit_rates(runs: pd.DataFrame, labels: dict[str, str], *, title: str) -> Figure:
    """The cache hit rate of each run, as bars."""
    ticks = [wrapped(v, TICK_WIDTH) for v in labels.values()]
    lines = max((tick.count("\n") + 1 for tick in ticks), default=1)
    slant, pitch = _bar_ticks(lines)
    figure = new_figure(max(5, 1 + pitch * len(labels)), 3.8)
    axes = figure.add_subplot()
    rates = [float(runs.loc[runs["run_id"] == r, "cache_hit_rate"].iloc[0]) for r in labels]
    bars = axes.bar(range(len(labels)), rates, color=REASONING)
    axes.bar_label(bars, labels=[f"{r:.0%}" for r in rates], fontsize=8)
    axes.set_xticks(range(len(labels)), ticks, rotation=slant, ha="right")
    axes.set_ylim(0, 1.05)
    axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0%}"))
    axes.set_ylabel("cached share of input tokens")
    axes.set_title(title)
    return figure


def _bar_ticks(lines: int) -> tuple[float, float]:
    """The slant of bar tick labels of up to `lines` lines, in degrees, and the pitch from one
    bar to the next, in inches. Slanted labels side by side are parallel boxes, as far apart
    across their slant as the pitch times the sine of the slant, which must exceed a label's
    height (a line at the tick font is about 0.17 inch) or two labels overlap: one line fits a
    pitch of 0.7 inch at 20 degrees; wrapped labels turn to 45 degrees, where a narrower pitch
    keeps them apart."""
    slant = 20.0 if lines == 1 else 45.0
    across = 0.17 * lines + 0.06
    return slant, max(0.7, across / math.sin(math.radians(slant)))


RETENTION_KINDS = ("facts", "rules", "artifacts")


@styled
def retention(snapshots: dict[str, list[dict[str, Any]]], *, title: str) -> Figure:
    """Share of planted items visible without a re-read, after each compression and at the end;
    one panel per probe kind that was planted, one line per run."""
    kinds = [
        k for k in RETENTION_KINDS if any(s.get(k) is not None for run in snapshots.values() for s in run)
    ]
    figure = new_figure(4.2 * max(len(kinds), 1), 3.8)
    panels = np.atleast_1d(figure.subplots(1, max(len(kinds), 1), sharex=True))
    for axes, kind in zip(panels, kinds, strict=False):
        for label, run in snapshots.items():
            points = [(int(s["before_call"]), float(s[kind])) for s in run if s.get(kind) is not None]
            if points:
                xs, ys = zip(*points, strict=True)
                axes.step(xs, ys, where="post", marker="o", markersize=3, linewidth=1.3, label=wrapped(label))
        axes.set_ylim(-0.02, 1.05)
        axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0%}"))
        whole_calls(axes)
        axes.set_xlabel("model call it precedes (0-based)")
        axes.set_ylabel(f"planted {kind} visible")
        axes.set_title(f"{kind} retained")
    figure.axes[0].legend(loc="lower left", fontsize=7)
    figure.suptitle(f"{title}\nmeasured after each compression and at the end")
    return figure


def run_label(row: pd.Series, columns: Sequence[str]) -> str:
    """`strategy (name=value, ...)` with the given parameter columns' short names, and
    ` (failed)` after a run that did not finish (its line stops where it failed)."""
    parts = [
        f"{c.rsplit('.', 1)[-1]}={value_text(row[c])}" for c in columns if c in row and not pd.isna(row[c])
    ]
    label = f"{row['strategy']} ({', '.join(parts)})" if parts else str(row["strategy"])
    return label if row.get("status", "ok") == "ok" else f"{label} (failed)"
