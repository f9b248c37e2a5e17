"""Strategies side by side: one row per run over several workloads, and which one to pick.

Invariants:
- Measures are the runs tables' own; the only derived numbers are ratios of them (the peak as a
  share of the window, cost relative to the cheapest safe run of the same workload, the mean of
  the retention kinds that were measured).
- A run is *safe* when it finished, sent no request over its window and broke no provider rule
  (OpenAI or Anthropic). Bedrock's stricter refusals are counted apart (`bedrock violations`):
  the first-party APIs accept those requests. Picks are made among safe runs only: the highest
  retention (unmeasured counts lowest), then the lowest cost, the fewest input tokens, the name,
  so the same table always gives the same pick.

Figures: `strategy_costs` draws the strategies per workload; like `plots`, it takes frames and
returns a `Figure`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ctxlab.analysis import plots
from ctxlab.analysis.results import Results
from ctxlab.analysis.sweep_figures import swept_key, swept_text

RETENTION = ("retention_facts", "retention_rules", "retention_artifacts")


def _window(results: Results, run_id: str) -> int:
    return int(results.run_settings(run_id)["model"]["context_size"])


def _preset(results: Results, run_id: str) -> str:
    return str(results.run_settings(run_id)["strategy_settings"].get("preset", ""))


COLUMNS = (
    "workload",
    "strategy",
    "preset",
    "window",
    "calls",
    "summary calls",
    "compressions",
    "peak tokens",
    "total tokens",
    "cost",
    "cache hit rate",
    "retention",
    "violations",
    "bedrock violations",
    "over window",
    "status",
    "peak share",
    "safe",
    "cost vs best",
)
"""The columns of `strategy_table`, in order."""


def _workloads(result: Results) -> list[str]:
    """Each run's workload: the scenario's name, with the values of its swept paths other than
    a strategy's (a window, a generator's parameter, the seed) when it has any, so that runs are
    compared only with runs of the same workload and window."""
    runs = result.runs
    swept = [c for c in result.swept_columns() if not c.startswith("param.strategy.")]
    if not swept:
        return [result.name] * len(runs)
    names = [c.removeprefix("param.") for c in swept]
    return [
        f"{result.name} ({', '.join(f'{n}={_exact(v)}' for n, v in zip(names, row, strict=True))})"
        for row in zip(*(runs[c].tolist() for c in swept), strict=True)
    ]


def _exact(value: object) -> str:
    """A swept value as a workload's label shows it: whole numbers with separators, other numbers
    in full (two values never read alike), a swept null as `null`."""
    key = swept_key(value)
    if isinstance(key, bool | np.bool_):
        return "true" if key else "false"
    if isinstance(key, numbers.Integral):
        return f"{int(key):,}"
    if not isinstance(key, numbers.Real):
        return swept_text(key)
    number = float(key)
    return f"{int(number):,}" if number.is_integer() else repr(number)


def strategy_table(results: Sequence[Results]) -> pd.DataFrame:
    """One row per run of every scenario given: its workload (the scenario, and the values of
    its swept paths other than a strategy's), strategy and preset, window, and the measures that
    decide between strategies; `safe` as defined above. No results: no rows, the same columns."""
    frames = []
    for result in results:
        runs = result.runs
        frame = pd.DataFrame(
            {
                "workload": _workloads(result),
                "strategy": runs["strategy"].astype(str),
                "preset": [_preset(result, r) for r in runs["run_id"]],
                "window": [_window(result, r) for r in runs["run_id"]],
                "calls": runs["calls"],
                "summary calls": runs["summary_calls"],
                "compressions": runs["compressions"],
                "peak tokens": runs["peak_input_tokens"],
                "total tokens": runs["total_input_tokens"],
                "cost": runs["cost"].astype("float64"),
                "cache hit rate": runs["cache_hit_rate"].astype("float64"),
                "retention": _retention(runs),
                "violations": runs["violations_openai"] + runs["violations_anthropic"],
                "bedrock violations": runs["violations_bedrock"],
                "over window": runs["over_window_calls"],
                "status": runs["status"].astype(str),
            }
        )
        frame["peak share"] = frame["peak tokens"] / frame["window"]
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    table = pd.concat(frames, ignore_index=True)
    table["safe"] = (table["status"] == "ok") & (table["over window"] == 0) & (table["violations"] == 0)
    table["cost vs best"] = _cost_vs_best(table)
    return table


def _cost_vs_best(table: pd.DataFrame) -> pd.Series:
    """A safe run's cost over the cheapest safe run's of its workload (1 where both are free);
    missing for an unsafe run, whose cost does not compare (a failed run stops early)."""
    best = table["workload"].map(table[table["safe"]].groupby("workload")["cost"].min())
    ratio = (table["cost"] / best).mask((best == 0) & (table["cost"] == 0), 1.0)
    return ratio.where(table["safe"]).astype("float64")


def _retention(runs: pd.DataFrame) -> pd.Series:
    present = [c for c in RETENTION if c in runs]
    if not present:
        return pd.Series([float("nan")] * len(runs), index=runs.index)
    return runs[present].astype("float64").mean(axis=1, skipna=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pick:
    """The strategy picked for one workload, a cheaper safe one that keeps less, and the runs
    ruled out."""

    workload: str
    pick: pd.Series | None
    cheaper: pd.Series | None
    unsafe: tuple[str, ...]
    baseline_cost: float | None
    """Cost of the `none` preset on the same workload, when it ran."""

    @property
    def strategy(self) -> str | None:
        """The picked strategy's name (None: no run was safe)."""
        return None if self.pick is None else str(self.pick["strategy"])


ORDER = ["retention key", "cost", "total tokens", "strategy"]


def _ranked(safe: pd.DataFrame) -> pd.DataFrame:
    keyed = safe.assign(**{"retention key": -safe["retention"].fillna(-1.0)})
    return keyed.sort_values(ORDER, kind="stable")


def picks(table: pd.DataFrame) -> list[Pick]:
    """The pick of each workload (in the table's order)."""
    out = []
    for workload, group in table.groupby("workload", sort=False):
        safe = group[group["safe"]]
        ranked = _ranked(safe)
        best = ranked.iloc[0] if len(ranked) else None
        cheapest = safe.sort_values(["cost", "total tokens", "strategy"], kind="stable")
        cheaper = None
        if best is not None and cheapest.iloc[0]["strategy"] != best["strategy"]:
            cheaper = cheapest.iloc[0]
        baseline = group[group["preset"] == "none"]
        out.append(
            Pick(
                workload=str(workload),
                pick=best,
                cheaper=cheaper,
                unsafe=tuple(_why_unsafe(row) for _, row in group[~group["safe"]].iterrows()),
                baseline_cost=float(baseline["cost"].iloc[0]) if len(baseline) else None,
            )
        )
    return out


def _why_unsafe(row: pd.Series) -> str:
    reasons = []
    if row["status"] != "ok":
        reasons.append("failed")
    if row["over window"]:
        reasons.append(f"{plural(int(row['over window']), 'request')} over the window")
    if row["violations"]:
        reasons.append(plural(int(row["violations"]), "protocol violation"))
    return f"`{row['strategy']}` ({', '.join(reasons)})"


def overall(table: pd.DataFrame) -> pd.DataFrame:
    """Per strategy name: on how many workloads it ran, on how many a run of it was safe, and
    over its safe runs, its mean retention and its mean cost relative to the cheapest safe run
    of the workload; most workloads safe first, then retention, then cost."""
    grouped = table.groupby("strategy", sort=False)
    safe = table[table["safe"].astype(bool)].groupby("strategy")
    workloads = grouped["workload"].nunique()
    frame = pd.DataFrame(
        {
            "workloads": workloads,
            "safe on": safe["workload"].nunique().reindex(workloads.index, fill_value=0).astype(int),
            "mean retention": safe["retention"].mean(),
            "mean cost vs best": safe["cost vs best"].mean(),
        }
    )
    frame.index.name = "strategy"
    frame["retention key"] = -frame["mean retention"].fillna(-1.0)
    ordered = frame.sort_values(
        ["safe on", "retention key", "mean cost vs best"], ascending=[False, True, True]
    )
    return ordered.drop(columns="retention key")


def plural(count: int, noun: str) -> str:
    """`count noun`, with an `s` unless the count is one.

    >>> plural(1, "request"), plural(3, "request")
    ('1 request', '3 requests')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def percent(value: float) -> str:
    """A share as a whole percentage, or "not measured".

    >>> percent(0.934), percent(float("nan"))
    ('93%', 'not measured')
    """
    return "not measured" if pd.isna(value) else f"{value:.0%}"


def _compared(row: pd.Series, baseline: float | None) -> str:
    if not baseline or row["preset"] == "none":
        return ""
    change = float(row["cost"]) / baseline - 1
    return f", {abs(change):.0%} {'less' if change <= 0 else 'more'} than sending everything (`none`)"


def _pick_line(pick: Pick) -> str:
    row = pick.pick
    assert row is not None
    line = (
        f"- **{pick.workload}**: `{row['strategy']}` — retention {percent(row['retention'])}, cost "
        f"{row['cost']:.4f}{_compared(row, pick.baseline_cost)}; peak at {row['peak share']:.0%} of the "
        f"window, {row['cache hit rate']:.0%} of input tokens from the cache."
    )
    if pick.cheaper is not None:
        cheaper = pick.cheaper
        saving = 1 - float(cheaper["cost"]) / float(row["cost"])
        line += (
            f" `{cheaper['strategy']}` costs {saving:.0%} less ({cheaper['cost']:.4f}) and is safe too, but "
            f"keeps {percent(cheaper['retention'])} of what was planted."
        )
    if pick.unsafe:
        line += f" Ruled out: {'; '.join(pick.unsafe)}."
    return line


def answer(table: pd.DataFrame) -> list[str]:
    """The answer in words: one Markdown bullet per workload, then the strategy to start from."""
    lines = []
    for pick in picks(table):
        if pick.pick is None:
            group = table[table["workload"] == pick.workload]
            lines.append(
                f"- **{pick.workload}**: no strategy was safe: {'; '.join(pick.unsafe)}. {_closest(group)}"
            )
        else:
            lines.append(_pick_line(pick))
    if table["workload"].nunique() > 1:
        lines.extend(_overall_lines(table))
    return lines + _bedrock_lines(table)


def _bedrock_lines(table: pd.DataFrame) -> list[str]:
    """On Bedrock: the safe runs its Converse API would still refuse (a request starting with an
    assistant turn, or more results than uses), by strategy."""
    refused = table[table["safe"] & (table["bedrock violations"] > 0)]
    if refused.empty:
        return []
    named = ", ".join(
        f"`{name}` ({', '.join(sorted(group['workload']))})"
        for name, group in refused.groupby("strategy", sort=True)
    )
    return [f"- **On Bedrock**, the Converse API would refuse requests of these safe runs: {named}."]


def _closest(group: pd.DataFrame) -> str:
    """The unsafe run that came closest: fewest requests over the window, then fewest violations,
    then the lowest cost."""
    ranked = group.sort_values(["over window", "violations", "cost", "strategy"], kind="stable")
    best = ranked.iloc[0]
    return (
        f"Closest: `{best['strategy']}` (peak {best['peak share']:.0%} of the window, cost "
        f"{best['cost']:.4f}); a larger window, or a strategy that keeps requests smaller, is needed."
    )


def _overall_lines(table: pd.DataFrame) -> list[str]:
    """The strategy to start from (safe everywhere it ran, on the most workloads, then the best
    retention and cost), and the cheapest where safe when that is another one."""
    ranking = overall(table)
    count = table["workload"].nunique()
    everywhere = ranking[(ranking["safe on"] == ranking["workloads"]) & (ranking["workloads"] >= 2)]
    if everywhere.empty:
        return [f"- **No strategy was safe on two workloads or more** of the {count}: pick per workload."]
    top = everywhere[everywhere["workloads"] == everywhere["workloads"].max()]
    name, row = str(top.index[0]), top.iloc[0]
    lines = [
        f"- **Start from `{name}`**: safe on all {int(row['workloads'])} workloads it ran on (of {count}), "
        f"retention {percent(row['mean retention'])} on average, at {row['mean cost vs best']:.2f}× the cost "
        "of the cheapest safe run of each."
    ]
    cheap = ranking[ranking["workloads"] >= 2].sort_values("mean cost vs best", kind="stable")
    if len(cheap) and str(cheap.index[0]) != name:
        other, values = str(cheap.index[0]), cheap.iloc[0]
        unsafe = table[(table["strategy"] == other) & ~table["safe"]]
        where = "; ".join(f"{r['workload']}: {_why_unsafe(r)}" for _, r in unsafe.iterrows())
        lines.append(
            f"- The cheapest where it was safe is `{other}` ({values['mean cost vs best']:.2f}× on average, "
            f"retention {percent(values['mean retention'])})"
            + (f", but it was unsafe on {where}" if where else "")
            + "."
        )
    return lines


SAFE, UNSAFE = plots.REASONING, "#b0b0b0"


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
