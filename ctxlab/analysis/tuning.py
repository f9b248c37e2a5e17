"""The Tune notebook's analyses: for each scenario `ctxlab tune` searched, the best setting against
the scenario's own strategies (the presets of its space at their defaults among them), what it
saves and what it keeps, and what its retention floor costs.

Everything is read from `<root>/<name>/tune/` (`tune.json`, `trials.csv`, `baseline.csv`) and, for
the strategies' own settings, `<root>/<name>/runs.csv` when `ctxlab run` wrote it; nothing is run
here. `saving` is the share of a strategy's cost the tuned setting saves (negative: it costs more).

Invariants:
- A strategy's `settings` are the `param.strategy.*` values `ctxlab run` recorded for its run
  (`defaults` when it sets none; empty when the scenario's runs are not in the folder).
- `retention` is the lowest retention share of the planted probes, empty when none was planted;
  nothing is filled in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ctxlab.analysis import plots
from ctxlab.analysis.tune import BEST, FEASIBLE, INFEASIBLE

TUNED = "tuned"
"""The `strategy` of the tuned setting's row in `against`."""
COLUMNS = (
    "strategy",
    "preset",
    "settings",
    "cost",
    "saving",
    "total_input_tokens",
    "peak_input_tokens",
    "retention",
    "violations",
    "over_window_calls",
    "feasible",
    "why",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Tuned:
    """One scenario's search: its summary, every trial, its baselines and their own settings."""

    name: str
    summary: dict[str, Any]
    trials: pd.DataFrame
    baseline: pd.DataFrame
    settings: dict[str, str]

    @property
    def presets(self) -> list[str]:
        """The presets the search tried, in trial order."""
        return list(dict.fromkeys(self.trials["preset"]))

    @property
    def best(self) -> pd.Series:
        """The best feasible trial's row."""
        number = int(self.summary["best"]["trial"])
        return self.trials.loc[self.trials["trial"] == number].iloc[0]

    @property
    def measures_retention(self) -> bool:
        """Whether the workload plants probes (retention is measured)."""
        return bool(self.trials["retention"].notna().any())


def tuned_folders(root: Path | str) -> list[Path]:
    """The `tune/` folders under a results root, sorted by scenario name."""
    return sorted(p.parent for p in Path(root).glob("*/tune/tune.json"))


def _words(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.3g}"
    return str(value)


def _strategy_settings(runs: Path) -> dict[str, str]:
    """Each run's own settings in words, by run id."""
    if not runs.is_file():
        return {}
    table = pd.read_csv(runs)
    own = [c for c in table.columns if c.startswith("param.strategy.") and c != "param.strategy.preset"]
    found = {}
    for _, row in table.iterrows():
        values = [f"{c.removeprefix('param.strategy.')} {_words(row[c])}" for c in own if pd.notna(row[c])]
        found[str(row["run_id"])] = ", ".join(values) or "defaults"
    return found


def load_tuned(folder: Path | str) -> Tuned:
    """A `tune/` folder, with the settings of its scenario's runs from the folder above."""
    folder = Path(folder)
    summary = json.loads((folder / "tune.json").read_text(encoding="utf-8"))
    return Tuned(
        name=str(summary["scenario"]),
        summary=summary,
        trials=pd.read_csv(folder / "trials.csv"),
        baseline=pd.read_csv(folder / "baseline.csv"),
        settings=_strategy_settings(folder.parent / "runs.csv"),
    )


def constraints_words(tuned: Tuned) -> str:
    """The search's constraints in words (`no violation under openai, anthropic; ...`)."""
    rules = tuned.summary["constraints"]
    words = [
        f"no violation under {', '.join(rules['providers'])}",
        "no request over the window"
        if not rules["over_window"]
        else f"at most {rules['over_window']} over the window",
        "no failed run",
    ]
    if rules.get("retention") is not None:
        words.append(f"retention at least {rules['retention']}")
    return "; ".join(words)


def best_setting(tuned: Tuned) -> str:
    """The best trial's values in words (`context.trigger_ratio 0.523, ...`)."""
    params: dict[str, Any] = tuned.summary["best"]["params"]
    label = str(tuned.summary["best"]["candidate"])
    return ", ".join(f"{k.removeprefix(label + '.')} {_words(v)}" for k, v in params.items()) or "defaults"


def _row(record: pd.Series, strategy: str, settings: str, tuned_cost: float) -> dict[str, Any]:
    cost = float(record["cost"])
    return {
        "strategy": strategy,
        "preset": record["preset"],
        "settings": settings,
        "cost": cost,
        "saving": 1 - tuned_cost / cost if cost else None,
        "total_input_tokens": int(record["total_input_tokens"]),
        "peak_input_tokens": int(record["peak_input_tokens"]),
        "retention": None if pd.isna(record["retention"]) else float(record["retention"]),
        "violations": int(record["violations_openai"]) + int(record["violations_anthropic"]),
        "over_window_calls": int(record["over_window_calls"]),
        "feasible": bool(record["feasible"]),
        "why": "" if pd.isna(record["why"]) else str(record["why"]),
    }


def against(tuned: Tuned) -> pd.DataFrame:
    """The tuned setting's row, then every baseline's: cost, what the tuned setting saves against
    it, tokens, retention, violations, requests over the window, and the verdict."""
    top = tuned.best
    cost = float(top["cost"])
    rows = [_row(top, TUNED, f"{top['candidate']}: {best_setting(tuned)}", cost)]
    for _, base in tuned.baseline.iterrows():
        rows.append(_row(base, str(base["candidate"]), tuned.settings.get(str(base["run_id"]), ""), cost))
    return pd.DataFrame(rows, columns=list(COLUMNS)).set_index("strategy")


def in_percent(table: pd.DataFrame) -> pd.DataFrame:
    """The table as the notebook shows it: shares (savings, retention) as percentages, one decimal."""
    shares = [c for c in table.columns if "saving" in c or c == "retention"]
    shown = table.copy()
    for column in shares:
        shown[column] = (pd.to_numeric(shown[column], errors="coerce") * 100).round(1)
    return shown.rename(columns={c: f"{c} %" for c in shares})


def overview(everything: Sequence[Tuned]) -> pd.DataFrame:
    """One row per workload: the search's size, the tuned setting, and what it saves against the
    scenario's own defaults of its best preset and against the cheapest feasible baseline."""
    rows = []
    for tuned in everything:
        table = against(tuned)
        top = table.iloc[0]
        own = _defaults_of(table, str(top["preset"]))
        cheapest = _cheapest_feasible(table)
        rows.append(
            {
                "workload": tuned.name,
                "trials": int(tuned.summary["trials"]),
                "runs": int(tuned.summary["runs"]),
                "feasible trials": int(tuned.summary["feasible_trials"]),
                "tuned": f"{top['preset']} ({best_setting(tuned)})",
                "cost": float(top["cost"]),
                "retention": top["retention"],
                "defaults cost": None if own is None else float(own["cost"]),
                "saving vs defaults": None if own is None else own["saving"],
                "defaults feasible": None if own is None else bool(own["feasible"]),
                "cheapest feasible baseline": None if cheapest is None else cheapest.name,
                "saving vs it": None if cheapest is None else cheapest["saving"],
            }
        )
    return pd.DataFrame(rows).set_index("workload")


def _defaults_of(table: pd.DataFrame, preset: str) -> pd.Series | None:
    """The baseline that runs `preset` at its defaults, if the scenario has one."""
    rows = table.iloc[1:]
    found = rows[(rows["preset"] == preset) & (rows["settings"] == "defaults")]
    return None if found.empty else found.iloc[0]


def _cheapest_feasible(table: pd.DataFrame) -> pd.Series | None:
    rows = table.iloc[1:]
    feasible = rows[rows["feasible"]]
    return None if feasible.empty else feasible.sort_values("cost", kind="stable").iloc[0]


def floor_price(tuned: Tuned) -> pd.Series | None:
    """The cheapest trial that met every constraint but the retention floor (None: no such trial
    was cheaper than the tuned setting): what keeping the planted probes costs."""
    trials = tuned.trials
    only = trials["why"].fillna("").str.startswith("retention:") & ~trials["why"].fillna("").str.contains(";")
    cheaper = trials[only & (trials["cost"] < float(tuned.best["cost"]))]
    return None if cheaper.empty else cheaper.sort_values(["cost", "trial"], kind="stable").iloc[0]


@plots.styled
def costs(everything: Sequence[Tuned], *, title: str) -> Figure:
    """One panel per workload: the tuned setting's cost, each baseline's of the presets the search
    tried and the cheapest feasible baseline's, grey where a constraint was not met, labelled with
    retention."""
    figure = Figure(figsize=(4.2 * len(everything), 3.4), layout="constrained")
    panels = np.atleast_1d(figure.subplots(1, len(everything), squeeze=False)[0])
    for axes, tuned in zip(panels, everything, strict=True):
        table = against(tuned)
        cheapest = _cheapest_feasible(table)
        named = {TUNED} | ({str(cheapest.name)} if cheapest is not None else set())
        shown = table[table.index.isin(named) | table["preset"].isin(tuned.presets)].iloc[::-1]
        colours = [
            BEST if name == TUNED else FEASIBLE if ok else INFEASIBLE
            for name, ok in zip(shown.index, shown["feasible"], strict=True)
        ]
        bars = axes.barh(range(len(shown)), shown["cost"], color=colours)
        labels = ["retention " + ("not measured" if pd.isna(r) else f"{r:.0%}") for r in shown["retention"]]
        axes.bar_label(bars, labels=labels, fontsize=7, padding=2)
        axes.set_yticks(range(len(shown)), shown.index.tolist())
        axes.set_xlim(0, float(shown["cost"].max()) * 1.7 or 1)
        axes.set_xlabel("cost (price units)")
        axes.set_title(tuned.name)
    figure.legend(
        handles=[
            Patch(color=BEST, label="tuned"),
            Patch(color=FEASIBLE, label="baseline, feasible"),
            Patch(color=INFEASIBLE, label="baseline, a constraint not met"),
        ],
        loc="outside lower center",
        ncols=3,
    )
    figure.suptitle(title)
    return figure


@plots.styled
def tradeoff(everything: Sequence[Tuned], *, title: str) -> Figure:
    """One panel per workload that measures retention: every trial's cost against its retention,
    feasible or not, the tuned setting marked."""
    measured = [t for t in everything if t.measures_retention]
    figure = Figure(figsize=(4.2 * max(len(measured), 1), 3.4), layout="constrained")
    panels = np.atleast_1d(figure.subplots(1, max(len(measured), 1), squeeze=False)[0])
    for axes, tuned in zip(panels, measured, strict=False):
        trials = tuned.trials[tuned.trials["cost"].notna()]
        for ok, colour, label in ((False, INFEASIBLE, "a constraint not met"), (True, FEASIBLE, "feasible")):
            part = trials[trials["feasible"] == ok]
            axes.scatter(part["cost"], part["retention"], s=16, color=colour, label=label)
        top = tuned.best
        axes.scatter([top["cost"]], [top["retention"]], s=90, marker="*", color=BEST, label="tuned", zorder=3)
        axes.set_xlabel("cost (price units)")
        axes.set_ylabel("retention (lowest share kept)")
        axes.set_ylim(-0.05, 1.05)
        axes.set_title(tuned.name)
        axes.legend(loc="best", fontsize=7)
    figure.suptitle(title)
    return figure


def _pct(share: float) -> str:
    return f"saves {share:.0%}" if share >= 0 else f"costs {-share:.0%} more"


def _kept(value: Any) -> str:
    return "not measured" if value is None or pd.isna(value) else f"{float(value):.0%}"


def _versus(name: str, row: pd.Series, top: pd.Series) -> str:
    verdict = "" if row["feasible"] else f" (not feasible: {row['why']})"
    kept = _kept(top["retention"]), _kept(row["retention"])
    retention = "retention not measured" if kept[0] == kept[1] == _kept(None) else " against ".join(kept)
    if not retention.startswith("retention"):
        retention = f"retention {retention}"
    return (
        f"`{name}` ({row['settings'] or row['preset']}): cost {row['cost']:.4f}, the tuned setting "
        f"{_pct(float(row['saving']))}; {retention}{verdict}"
    )


def workload_answer(tuned: Tuned) -> list[str]:
    """The answer for one workload, with its numbers."""
    table = against(tuned)
    top = table.iloc[0]
    lines = [
        f"- **{tuned.name}** ({tuned.summary['trials']} trials, {tuned.summary['runs']} runs): the best "
        f"setting is {top['settings']} at cost {top['cost']:.4f}, retention {_kept(top['retention'])}, "
        f"{top['violations']} violations, {top['over_window_calls']} requests over the window."
    ]
    same = table.iloc[1:][table.iloc[1:]["preset"].isin(tuned.presets)]
    lines += [f"  - against {_versus(str(name), row, top)}." for name, row in same.iterrows()]
    cheapest = _cheapest_feasible(table)
    if cheapest is None:
        lines.append("  - none of the scenario's own strategies met every constraint.")
    elif cheapest.name not in same.index:
        lines.append(
            "  - against the cheapest feasible strategy of the file, "
            f"{_versus(str(cheapest.name), cheapest, top)}."
        )
    unmanaged = table.iloc[1:][table.iloc[1:]["preset"] == "none"]
    if not unmanaged.empty and int(unmanaged.iloc[0]["total_input_tokens"]) == int(top["total_input_tokens"]):
        lines.append(
            f"  - the tuned setting never acts here: its {int(top['total_input_tokens']):,} input tokens are "
            f"those of `{unmanaged.index[0]}` (no management), which "
            + ("is feasible too." if unmanaged.iloc[0]["feasible"] else "is not feasible.")
        )
    lines.append(f"  - {_floor_words(tuned)}")
    return lines


def _floor_words(tuned: Tuned) -> str:
    if not tuned.measures_retention:
        return "retention is not measured (the workload plants no probes): no floor applies."
    floor = tuned.summary["constraints"].get("retention")
    cheaper = floor_price(tuned)
    if cheaper is None:
        return f"no trial that broke only the retention floor ({floor}) was cheaper: keeping it cost nothing."
    saved = 1 - float(cheaper["cost"]) / float(tuned.best["cost"])
    return (
        f"the retention floor ({floor}) has a price: trial {int(cheaper['trial'])} "
        f"(`{cheaper['candidate']}`) met every other constraint at cost {float(cheaper['cost']):.4f}, "
        f"{saved:.0%} less than the tuned setting, but kept {_kept(cheaper['retention'])}."
    )


def answer(everything: Sequence[Tuned]) -> list[str]:
    """The answer for every workload, with the numbers."""
    return [line for tuned in everything for line in workload_answer(tuned)]
