"""Where compression works, loops or fails, over swept windows, triggers and reserves.

Each run is put in one regime, the first that applies:

- `fails`: the run did not finish;
- `loops`: a compression left the request at or above the trigger (or reclaimed almost
  nothing), so the next call compresses again (the run's `loop_warnings`);
- `over window`: some request, often the summary request itself, is larger than the window,
  which a provider that enforces the window rejects;
- `thrashes`: a compression before at least half of the reasoning calls;
- `ok`: none of these.

Invariant: the regime depends only on the run's row (status, loop warnings, over-window calls,
compressions and calls), so the same results always give the same map.

Figures: `regime_map` draws the regimes of a sweep; like `plots`, it takes frames and returns a
`Figure`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, cast

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ctxlab.analysis import plots
from ctxlab.analysis.compare import plural
from ctxlab.analysis.labels import value_text
from ctxlab.analysis.results import Results
from ctxlab.analysis.sweep_figures import one_run_each

REGIMES = ("fails", "loops", "over window", "thrashes", "ok")
THRASH_SHARE = 0.5


def regime(row: pd.Series) -> str:
    """The regime of one run (see the module docstring).

    >>> regime(pd.Series({"status": "ok", "loop_warnings": 0, "over_window_calls": 2,
    ...     "compressions": 1, "calls": 10, "summary_calls": 1}))
    'over window'
    """
    reasoning = int(row["calls"]) - int(row["summary_calls"])
    if row["status"] != "ok":
        return "fails"
    if int(_value(row, "loop_warnings")) > 0:
        return "loops"
    if int(row["over_window_calls"]) > 0:
        return "over window"
    if reasoning and int(row["compressions"]) >= THRASH_SHARE * reasoning:
        return "thrashes"
    return "ok"


def _value(row: pd.Series, column: str) -> Any:
    value = row.get(column, 0)
    return 0 if pd.isna(value) else value


def regimes(results: Results) -> pd.DataFrame:
    """One row per run: window, trigger and reserve (from its settings; empty for a strategy
    without them), the counts that decide its regime, and the regime."""
    rows = []
    for _, run in results.runs.iterrows():
        settings = results.run_settings(str(run["run_id"]))
        context = settings["strategy_settings"].get("context") or {}
        reasoning = int(run["calls"]) - int(run["summary_calls"])
        rows.append(
            {
                "scenario": results.name,
                "run_id": run["run_id"],
                "strategy": run["strategy"],
                "window": int(settings["model"]["context_size"]),
                "trigger": context.get("trigger_ratio"),
                "reserve": context.get("reserve_ratio"),
                "reasoning calls": reasoning,
                "summary calls": int(run["summary_calls"]),
                "compressions": int(run["compressions"]),
                "compression rate": int(run["compressions"]) / reasoning if reasoning else float("nan"),
                "over window": int(run["over_window_calls"]),
                "loop warnings": int(_value(run, "loop_warnings")),
                "peak tokens": run["peak_input_tokens"],
                "cost": float(run["cost"]),
                "status": run["status"],
                "regime": regime(run),
            }
        )
    return pd.DataFrame(rows).sort_values("window", kind="stable").reset_index(drop=True)


def describe(table: pd.DataFrame) -> list[str]:
    """Per scenario and window: how many runs fall in each regime, as Markdown bullets."""
    lines = []
    for (scenario, window), group in table.groupby(["scenario", "window"], sort=False):
        counts = group["regime"].value_counts()
        parts = [f"{counts[r]} {r}" for r in REGIMES if r in counts]
        worst = group[group["regime"] != "ok"]
        detail = ""
        if len(worst):
            over = plural(int(group["over window"].max()), "request")
            loops = plural(int(group["loop warnings"].max()), "looping compression")
            rate = float(group["compression rate"].max())  # NaN: no run made a reasoning call
            detail = (
                f" — at worst {over} over the window and {loops}"
                if np.isnan(rate)
                else f" — at worst {over} over the window, {loops}, and a compression before {rate:.0%} of "
                "reasoning calls"
            )
        lines.append(
            f"- **{scenario}, window {window:,}** ({plural(len(group), 'run')}): {', '.join(parts)}{detail}."
        )
    return lines


def where(table: pd.DataFrame, regime_name: str) -> list[str]:
    """Where a regime occurs, per scenario and window, as short phrases: `every setting`, the
    triggers at which every reserve falls in it, or the (trigger, reserve) cells; a run of a
    strategy without a trigger is named by its strategy."""
    phrases = []
    for (scenario, window), group in table.groupby(["scenario", "window"], sort=False):
        hit = group[group["regime"] == regime_name]
        if hit.empty:
            continue
        if len(hit) == len(group):
            phrases.append(f"{scenario} at window {window:,} (every setting)")
            continue
        everywhere = group.groupby("trigger", sort=True)["regime"].agg(
            lambda c: bool((c == regime_name).all())
        )
        whole = [float(cast(Any, t)) for t, flag in everywhere.items() if flag]
        rest = hit[~hit["trigger"].isin(whole)]
        parts = [f"trigger {t:g}" for t in whole]
        parts += [_setting(r) for r in rest.to_dict("records")]
        phrases.append(f"{scenario} at window {window:,} ({', '.join(parts)})")
    return phrases


def _setting(row: Mapping[Hashable, Any]) -> str:
    """One run's cell: its trigger and reserve, or its strategy's name when it has neither."""
    if pd.isna(row["trigger"]):
        return f"`{row['strategy']}`"
    if pd.isna(row["reserve"]):
        return f"trigger {row['trigger']:g}"
    return f"trigger {row['trigger']:g} with reserve {row['reserve']:g}"


def best_settings(table: pd.DataFrame, *, min_runs: int = 2) -> pd.DataFrame:
    """Per scenario and window with a choice (at least `min_runs` runs), the cheapest run in the
    `ok` regime (ties: fewer compressions, then the run id)."""
    sizes = table.groupby(["scenario", "window"])["run_id"].transform("size")
    ok = table[(table["regime"] == "ok") & (sizes >= min_runs)]
    ok = ok.sort_values(["cost", "compressions", "run_id"], kind="stable")
    best = ok.groupby(["scenario", "window"], sort=False).head(1)
    return best.sort_values(["scenario", "window"], kind="stable").reset_index(drop=True)


REGIME_COLOURS = {
    "fails": "#7f0000",
    "loops": "#d62728",
    "over window": "#ff7f0e",
    "thrashes": "#ffd92f",
    "ok": "#2ca02c",
}


@plots.styled
def regime_map(table: pd.DataFrame, *, x: str, y: str, facet: str, title: str) -> Figure:
    """One panel per value of `facet`: the regime of each (`x`, `y`) cell, coloured, with the
    run's compressions written in it.

    Raises:
        ValueError: two runs are at one cell of a panel (`one_run_each`): a table of several
            strategies, or of a third swept setting.
    """
    one_run_each(table, [facet, x, y])
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
        axes.set_xticks(range(len(xs)), [value_text(v) for v in xs])
        axes.set_yticks(range(len(ys)), [value_text(v) for v in ys])
        axes.set_xlabel(x)
        axes.set_ylabel(y)
        axes.set_title(f"{facet} {value_text(value)}")
        axes.grid(False)
    figure.legend(
        handles=[Patch(color=REGIME_COLOURS[r], label=r) for r in REGIMES],
        loc="outside right center",
        title="regime (cell: compressions)",
    )
    figure.suptitle(title)
    return figure
