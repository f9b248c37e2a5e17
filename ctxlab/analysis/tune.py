"""Figures of a `ctxlab tune` search, from its `trials.csv` and `importance.csv` as DataFrames:
the optimisation history, the Pareto front of cost against retention, parameter importance.

Invariants:
- Like every figure of the lab (`plots`), each has a title, labelled axes and a legend, is drawn
  without pyplot's global state, and saves to bytes that depend only on the data.
- Infeasible trials are drawn apart from feasible ones; only feasible trials make the best-so-far
  line and the front.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from matplotlib.figure import Figure

from ctxlab.analysis.plots import new_figure, styled

FEASIBLE, INFEASIBLE, BEST = "#1f77b4", "#bbbbbb", "#d62728"


@styled
def history(trials: pd.DataFrame, *, objective: str, title: str) -> Figure:
    """Each trial's objective in trial order, and the best feasible value so far."""
    figure = new_figure(7.0, 3.6)
    axes = figure.add_subplot()
    measured = trials[trials["objective"].notna()]
    ok = measured[measured["feasible"]]
    bad = measured[~measured["feasible"]]
    axes.scatter(bad["trial"], bad["objective"], s=14, color=INFEASIBLE, label="infeasible", zorder=2)
    axes.scatter(ok["trial"], ok["objective"], s=16, color=FEASIBLE, label="feasible", zorder=3)
    best = trials["objective"].where(trials["feasible"]).cummin().ffill()
    if best.notna().any():
        axes.step(trials["trial"], best, where="post", color=BEST, label="best feasible so far", zorder=4)
    axes.set_xlabel("trial")
    axes.set_ylabel(objective.replace("_", " "))
    axes.set_title(title)
    axes.legend(loc="best")
    return figure


@styled
def pareto(trials: pd.DataFrame, front: pd.DataFrame, *, title: str) -> Figure:
    """Cost against retention of the feasible trials, the Pareto front joined."""
    figure = new_figure(6.0, 4.0)
    axes = figure.add_subplot()
    feasible = trials[trials["feasible"] & trials["cost"].notna()]
    axes.scatter(feasible["cost"], feasible["retention"], s=16, color=FEASIBLE, label="feasible trial")
    if len(front):
        axes.plot(front["cost"], front["retention"], "o-", color=BEST, label="Pareto front", zorder=3)
    axes.set_xlabel("cost (price units)")
    axes.set_ylabel("retention (lowest share kept)")
    axes.set_title(title)
    axes.legend(loc="best")
    return figure


@styled
def importance(values: Mapping[str, float], *, title: str) -> Figure:
    """Each parameter's importance for reaching the best tenth of objective values (Optuna's
    PED-ANOVA), largest on top."""
    ordered = sorted(values.items(), key=lambda item: (item[1], item[0]))
    figure = new_figure(6.0, 1.2 + 0.35 * max(len(ordered), 1))
    axes = figure.add_subplot()
    if ordered:
        axes.barh([name for name, _ in ordered], [value for _, value in ordered], color=FEASIBLE)
    else:
        axes.text(0.5, 0.5, "not enough varied trials to measure", ha="center", transform=axes.transAxes)
    axes.set_xlabel("importance (for the best tenth of objective values)")
    axes.set_title(title)
    return figure
