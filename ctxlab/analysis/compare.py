"""Strategies side by side: one row per run over several workloads, and which one to pick.

Invariants:
- Measures are the runs tables' own; the only derived numbers are ratios of them (the peak as a
  share of the window, cost relative to the cheapest safe run of the same workload, the mean of
  the retention kinds that were measured).
- A run is *safe* when it finished, sent no request over its window and broke no provider rule
  (OpenAI or Anthropic). Picks are made among safe runs only: the lowest cost, then the fewest
  input tokens, then the name, so the same table always gives the same pick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ctxlab.analysis.results import Results

RETENTION = ("retention_facts", "retention_rules", "retention_artifacts")


def _window(results: Results, run_id: str) -> int:
    return int(results.run_settings(run_id)["model"]["context_size"])


def _preset(results: Results, run_id: str) -> str:
    return str(results.run_settings(run_id)["strategy_settings"].get("preset", ""))


def strategy_table(results: Sequence[Results]) -> pd.DataFrame:
    """One row per run of every scenario given: its workload (scenario), strategy and preset,
    window, and the measures that decide between strategies; `safe` as defined above."""
    frames = []
    for result in results:
        runs = result.runs
        frame = pd.DataFrame(
            {
                "workload": result.name,
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
                "over window": runs["over_window_calls"],
                "status": runs["status"].astype(str),
            }
        )
        frame["peak share"] = frame["peak tokens"] / frame["window"]
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if table.empty:
        return table
    table["safe"] = (table["status"] == "ok") & (table["over window"] == 0) & (table["violations"] == 0)
    cheapest = table[table["safe"]].groupby("workload")["cost"].min()
    table["cost vs best"] = table["cost"] / table["workload"].map(cheapest)
    return table


def _retention(runs: pd.DataFrame) -> pd.Series:
    present = [c for c in RETENTION if c in runs]
    if not present:
        return pd.Series([float("nan")] * len(runs), index=runs.index)
    return runs[present].astype("float64").mean(axis=1, skipna=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pick:
    """The strategy picked for one workload, and the runs ruled out."""

    workload: str
    strategy: str | None
    preset: str | None
    cost: float
    total_tokens: int
    peak_share: float
    cache_hit_rate: float
    retention: float
    unsafe: tuple[str, ...]
    baseline_cost: float | None
    """Cost of the `none` preset on the same workload, when it ran."""


def picks(table: pd.DataFrame) -> list[Pick]:
    """The pick of each workload (in the table's order)."""
    out = []
    for workload, group in table.groupby("workload", sort=False):
        safe = group[group["safe"]].sort_values(["cost", "total tokens", "strategy"], kind="stable")
        unsafe = tuple(_why_unsafe(row) for _, row in group[~group["safe"]].iterrows())
        baseline = group[group["preset"] == "none"]
        best = safe.iloc[0] if len(safe) else None
        out.append(
            Pick(
                workload=str(workload),
                strategy=None if best is None else str(best["strategy"]),
                preset=None if best is None else str(best["preset"]),
                cost=math_or_nan(best, "cost"),
                total_tokens=0 if best is None else int(best["total tokens"]),
                peak_share=math_or_nan(best, "peak share"),
                cache_hit_rate=math_or_nan(best, "cache hit rate"),
                retention=math_or_nan(best, "retention"),
                unsafe=unsafe,
                baseline_cost=float(baseline["cost"].iloc[0]) if len(baseline) else None,
            )
        )
    return out


def math_or_nan(row: pd.Series | None, column: str) -> float:
    """A row's value as a float; NaN when there is no row or no value."""
    if row is None or pd.isna(row[column]):
        return float("nan")
    return float(row[column])


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
    """Per strategy name: on how many workloads it ran and was safe, and its mean cost relative to
    the cheapest safe run of each workload (over the workloads where it was safe), best first."""
    grouped = table.groupby("strategy", sort=False)
    frame = pd.DataFrame(
        {
            "workloads": grouped["workload"].nunique(),
            "safe on": grouped["safe"].sum().astype(int),
            "mean cost vs best": table[table["safe"]].groupby("strategy")["cost vs best"].mean(),
        }
    )
    frame.index.name = "strategy"
    return frame.sort_values(["safe on", "mean cost vs best"], ascending=[False, True], kind="stable")


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


def answer(table: pd.DataFrame) -> list[str]:
    """The answer in words, one Markdown bullet per workload, then the strategy to start from."""
    lines = []
    for pick in picks(table):
        if pick.strategy is None:
            lines.append(
                f"- **{pick.workload}**: no strategy was safe: "
                + "; ".join(pick.unsafe)
                + ". "
                + _closest(table[table["workload"] == pick.workload])
            )
            continue
        saving = ""
        if pick.baseline_cost and pick.preset != "none":
            change = pick.cost / pick.baseline_cost - 1
            saving = (
                f", {abs(change):.0%} {'less' if change <= 0 else 'more'} than sending everything (`none`)"
            )
        ruled_out = f" Ruled out: {'; '.join(pick.unsafe)}." if pick.unsafe else ""
        lost = " (the rest is not visible without re-reading a file)" if pick.retention < 1 else ""
        lines.append(
            f"- **{pick.workload}**: `{pick.strategy}` — cost {pick.cost:.4f}{saving}; peak at "
            f"{pick.peak_share:.0%} of the window, {pick.cache_hit_rate:.0%} of input tokens from the cache, "
            f"retention {percent(pick.retention)}{lost}.{ruled_out}"
        )
    if table["workload"].nunique() > 1:
        lines.append(_overall_line(table))
    return lines


def _closest(group: pd.DataFrame) -> str:
    """The unsafe run that came closest: fewest requests over the window, then fewest violations,
    then the lowest cost."""
    ranked = group.sort_values(["over window", "violations", "cost", "strategy"], kind="stable")
    best = ranked.iloc[0]
    return (
        f"Closest: `{best['strategy']}` (peak {best['peak share']:.0%} of the window, cost "
        f"{best['cost']:.4f}); a larger window, or a strategy that keeps requests smaller, is needed."
    )


def _overall_line(table: pd.DataFrame) -> str:
    """The strategy to start from: safe on every workload, the lowest mean relative cost; else
    the one safe on the most workloads, and where it was not."""
    ranking = overall(table)
    count = table["workload"].nunique()
    everywhere = ranking[(ranking["workloads"] == count) & (ranking["safe on"] == count)]
    if len(everywhere):
        return (
            f"- **Start from `{everywhere.index[0]}`**: safe on all {count} workloads, at "
            f"{everywhere['mean cost vs best'].iloc[0]:.2f}× the cost of the cheapest safe run of each, "
            "on average."
        )
    ranking = ranking.sort_values(["safe on", "workloads"], ascending=False, kind="stable")
    best = str(ranking.index[0])
    unsafe = table[(table["strategy"] == best) & ~table["safe"]]
    where = "; ".join(f"{row['workload']}: {_why_unsafe(row)}" for _, row in unsafe.iterrows())
    missing = count - int(ranking["workloads"].iloc[0])
    absent = f", and did not run on {missing}" if missing else ""
    return (
        f"- **No strategy was safe on all {count} workloads.** `{best}` was safe on "
        f"{int(ranking['safe on'].iloc[0])}{absent}" + (f" (unsafe on {where})" if where else "") + "; "
        "pick per workload as above."
    )
