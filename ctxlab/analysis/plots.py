"""Figures of runs: the sawtooth, overlays, cumulative tokens and cost, cache hits, sweep heatmaps.

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
import numbers
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
METRICS = {
    "peak_input_tokens": "peak input tokens",
    "compressions": "compressions",
    "cost": "cost (price units)",
}
"""The default metrics of sweep heatmaps, with their axis labels."""
LINE_METRICS = {
    "peak_input_tokens": "peak input tokens",
    "total_input_tokens": "total input tokens",
    "compressions": "compressions",
    "summary_calls": "summary calls",
    "cost": "cost (price units)",
}
"""The default metrics of one-parameter sweep figures."""


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


def _figure(width: float, height: float) -> Figure:
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
    figure = _figure(8, 4.2)
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
    figure = _figure(8, 4.2)
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
    figure = _figure(10, 4)
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
    figure = _figure(max(5, 1 + 0.7 * len(labels)), 3.8)
    axes = figure.add_subplot()
    rates = [float(runs.loc[runs["run_id"] == r, "cache_hit_rate"].iloc[0]) for r in labels]
    bars = axes.bar(range(len(labels)), rates, color=REASONING)
    axes.bar_label(bars, labels=[f"{r:.0%}" for r in rates], fontsize=8)
    axes.set_xticks(
        range(len(labels)), [wrapped(v, TICK_WIDTH) for v in labels.values()], rotation=20, ha="right"
    )
    axes.set_ylim(0, 1.05)
    axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0%}"))
    axes.set_ylabel("cached share of input tokens")
    axes.set_title(title)
    return figure


RETENTION_KINDS = ("facts", "rules", "artifacts")


@styled
def retention(snapshots: dict[str, list[dict[str, Any]]], *, title: str) -> Figure:
    """Share of planted items visible without a re-read, after each compression and at the end;
    one panel per probe kind that was planted, one line per run."""
    kinds = [
        k for k in RETENTION_KINDS if any(s.get(k) is not None for run in snapshots.values() for s in run)
    ]
    figure = _figure(4.2 * max(len(kinds), 1), 3.8)
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


def swept_key(value: Any) -> Any:
    """A swept value as figures tell values apart: a missing one (a swept `null`) is None."""
    return None if pd.api.types.is_scalar(value) and pd.isna(value) else value


def grid_values(runs: pd.DataFrame, column: str) -> list[Any]:
    """The distinct values of a swept column: None (a swept `null`) first, then numbers in
    order, then the others in order of their text."""
    values = {swept_key(v) for v in runs[column].tolist()}
    present = [v for v in values if v is not None]
    numeric = sorted(v for v in present if isinstance(v, numbers.Real))
    others = sorted((v for v in present if not isinstance(v, numbers.Real)), key=str)
    return ([None] if None in values else []) + numeric + others


def swept_text(value: Any) -> str:
    """A swept value as a tick or title shows it (a swept `null` as `null`)."""
    return "null" if swept_key(value) is None else value_text(value)


@styled
def heatmap(
    runs: pd.DataFrame, x: str, y: str, *, title: str, metrics: dict[str, str] | None = None
) -> Figure:
    """One panel per metric: the metric over the grid of two swept parameters (cells annotated;
    a cell whose run failed says `failed`, a cell without a run is left blank)."""
    metrics = metrics or METRICS
    xs, ys = grid_values(runs, x), grid_values(runs, y)
    figure = _figure(4.2 * len(metrics), 3.9)
    for axes, (metric, label) in zip(
        np.atleast_1d(figure.subplots(1, len(metrics))), metrics.items(), strict=True
    ):
        grid = np.full((len(ys), len(xs)), np.nan)
        failed: set[tuple[int, int]] = set()
        for _, row in runs.iterrows():
            cell = ys.index(swept_key(row[y])), xs.index(swept_key(row[x]))
            if row["status"] == "ok" and not pd.isna(row[metric]):
                grid[cell] = float(row[metric])
            elif row["status"] != "ok":
                failed.add(cell)
        image = axes.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
        for (i, j), value in np.ndenumerate(grid):
            if np.isnan(value) and (i, j) not in failed:
                continue
            text = "failed" if np.isnan(value) else _short_number(value)
            light = not np.isnan(value) and image.norm(value) > 0.55  # viridis is light at its top end
            axes.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="black" if light or np.isnan(value) else "white",
            )
        axes.set_xticks(range(len(xs)), [swept_text(v) for v in xs])
        axes.set_yticks(range(len(ys)), [swept_text(v) for v in ys])
        axes.set_xlabel(x.removeprefix("param."))
        axes.set_ylabel(y.removeprefix("param."))
        axes.set_title(label)
        axes.grid(False)
        figure.colorbar(image, ax=axes, shrink=0.85, label=label)
    figure.suptitle(title)
    return figure


def _line_values(runs: pd.DataFrame, x: str) -> tuple[list[Any], bool]:
    """The values of `x` of every run, finished or not, and whether they are all numbers (then
    in order; otherwise in the order they were swept, a swept `null` as None)."""
    values = list(dict.fromkeys(swept_key(v) for v in runs[x].tolist()))
    numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_) for v in values)
    return (sorted(values) if numeric else values), numeric


@styled
def sweep_lines(runs: pd.DataFrame, x: str, *, title: str, metrics: dict[str, str] | None = None) -> Figure:
    """One panel per metric: the metric against one swept parameter (numbers in order, other
    values in the order they were swept). A value whose runs all failed has no point: `failed`
    is written at it instead."""
    metrics = metrics or LINE_METRICS
    ok = runs[runs["status"] == "ok"]
    keys = [swept_key(v) for v in ok[x].tolist()]
    values, numeric = _line_values(runs, x)
    figure = _figure(3.4 * len(metrics), 3.6)
    for axes, (metric, label) in zip(
        np.atleast_1d(figure.subplots(1, len(metrics))), metrics.items(), strict=True
    ):
        ys = [_first(ok[metric], keys, v) for v in values]
        finite = [y for y in ys if not np.isnan(y)]
        axes.set_ylim(bottom=0, top=max(finite) * 1.1 if max(finite, default=0) > 0 else 1)
        xs = [float(v) for v in values] if numeric else list(range(len(values)))
        axes.plot(xs, ys, marker="o", linewidth=1.4, color=REASONING)
        _failed_marks(axes, [p for p, y in zip(xs, ys, strict=True) if np.isnan(y)])
        if not numeric:
            axes.set_xticks(xs, [swept_text(v) for v in values], rotation=20, ha="right")
            axes.set_xlim(-0.5, len(values) - 0.5)
        axes.set_xlabel(x.removeprefix("param."))
        axes.set_ylabel(label)
        axes.set_title(label)
        if metric != "cost":
            axes.yaxis.set_major_locator(MaxNLocator(integer=True))
            axes.yaxis.set_major_formatter(THOUSANDS)
    figure.suptitle(title)
    return figure


def _first(column: pd.Series, keys: list[Any], value: Any) -> float:
    """The metric of the first finished run at `value` (NaN when none finished)."""
    for key, metric in zip(keys, column.tolist(), strict=True):
        if key == value and not pd.isna(metric):
            return float(metric)
    return float("nan")


def _failed_marks(axes: Axes, xs: list[float]) -> None:
    """`failed` written at each x without a finished run, inside the axes' x range."""
    if not xs:
        return
    axes.update_datalim([(x, 0.0) for x in xs])
    axes.autoscale_view(scaley=False)
    for x in xs:
        axes.text(
            x,
            0.5,
            "failed",
            transform=axes.get_xaxis_transform(),
            ha="center",
            va="center",
            rotation=90,
            color=SUMMARY,
            fontsize=8,
        )


def _short_number(value: float) -> str:
    """Cell text: integers with separators, small values with 3 significant digits.

    >>> _short_number(12345.0), _short_number(0.01234), _short_number(3.0)
    ('12,345', '0.0123', '3')
    """
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:.3g}"


def run_label(row: pd.Series, columns: Sequence[str]) -> str:
    """`strategy (name=value, ...)` with the given parameter columns' short names, and
    ` (failed)` after a run that did not finish (its line stops where it failed)."""
    parts = [
        f"{c.rsplit('.', 1)[-1]}={value_text(row[c])}" for c in columns if c in row and not pd.isna(row[c])
    ]
    label = f"{row['strategy']} ({', '.join(parts)})" if parts else str(row["strategy"])
    return label if row.get("status", "ok") == "ok" else f"{label} (failed)"
