"""Figures of a sweep: a metric over the grid of two swept parameters (`heatmap`) or against one
(`sweep_lines`), and how swept values are told apart and shown.

Invariants:
- A swept `null` is a value of its own (None), shown as `null`; numbers come in order.
- A run that failed gives no value: a heatmap cell says `failed`, a line has no point there and
  `failed` is written at it; a cell or value without any run is left blank.
- A cell or value shows one run: two runs at one (a swept strategy beside another strategy that
  has the same setting, a third swept path) are refused, never drawn one over the other.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ctxlab.analysis.labels import value_text
from ctxlab.analysis.plots import REASONING, SUMMARY, THOUSANDS, new_figure, styled

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


def one_run_each(runs: pd.DataFrame, columns: list[str]) -> None:
    """Refuse runs two of which have the same values of `columns` (a figure draws one run at each).

    Raises:
        ValueError: naming the two runs and where they meet.
    """
    seen: dict[tuple[Any, ...], str] = {}
    ids = runs["run_id"].tolist() if "run_id" in runs else [f"at row {label}" for label in runs.index]
    for run_id, *values in zip(ids, *(runs[c].tolist() for c in columns), strict=True):
        key = tuple(swept_key(v) for v in values)
        if key in seen:
            places = zip(columns, key, strict=True)
            at = ", ".join(f"{c.removeprefix('param.')}={swept_text(v)}" for c, v in places)
            raise ValueError(
                f"runs {seen[key]} and {run_id} are both at {at}: the figure shows one run there; give it "
                "one strategy's runs (runs[runs['strategy'] == name]) and one value of every other swept path"
            )
        seen[key] = str(run_id)


@styled
def heatmap(
    runs: pd.DataFrame, x: str, y: str, *, title: str, metrics: dict[str, str] | None = None
) -> Figure:
    """One panel per metric: the metric over the grid of two swept parameters (cells annotated;
    a cell whose run failed says `failed`, a cell without a run is left blank).

    Raises:
        ValueError: two runs are at one cell (`one_run_each`).
    """
    metrics = metrics or METRICS
    one_run_each(runs, [x, y])
    xs, ys = grid_values(runs, x), grid_values(runs, y)
    figure = new_figure(4.2 * len(metrics), 3.9)
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
    values in the order they were swept). A value whose run failed has no point: `failed` is
    written at it instead.

    Raises:
        ValueError: two runs are at one value (`one_run_each`).
    """
    metrics = metrics or LINE_METRICS
    one_run_each(runs, [x])
    ok = runs[runs["status"] == "ok"]
    keys = [swept_key(v) for v in ok[x].tolist()]
    values, numeric = _line_values(runs, x)
    figure = new_figure(3.4 * len(metrics), 3.6)
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
