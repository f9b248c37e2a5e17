"""The notebooks' figures: each is drawn from its frames alone, titled, and gives the same PNG twice."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest
from matplotlib.figure import Figure

from ctxlab.analysis import compare, estimator, plots, sensitivity
from ctxlab.analysis.notebooks import figure_png
from ctxlab.analysis.results import Results


def _same_twice(draw: Callable[[], Figure]) -> Figure:
    figure = draw()
    assert figure_png(figure) == figure_png(draw())
    assert figure.get_suptitle() or any(a.get_title() for a in figure.axes)
    return figure


def test_strategy_costs(retrieval_results: Results, json_results: Results) -> None:
    table = compare.strategy_table([retrieval_results, json_results])
    figure = _same_twice(lambda: compare.strategy_costs(table, title="costs"))
    assert [a.get_title() for a in figure.axes] == ["retrieval", "retrieval-json"]


def test_regime_map_one_panel_per_window(retrieval_results: Results) -> None:
    one = sensitivity.regimes(retrieval_results)
    table = pd.concat([one, one], ignore_index=True)
    table.loc[len(one) :, "window"] = 8000
    table = table.dropna(subset=["trigger"])
    figure = _same_twice(
        lambda: sensitivity.regime_map(table, x="trigger", y="reserve", facet="window", title="r")
    )
    assert [a.get_title() for a in figure.axes] == ["window 6,000", "window 8,000"]
    twice = pd.concat([table, table.iloc[:1]], ignore_index=True)  # a run drawn over another
    at = r"are both at window=6,000, trigger=\S+, reserve=\S+: the figure shows one run"
    with pytest.raises(ValueError, match=at):
        sensitivity.regime_map(twice, x="trigger", y="reserve", facet="window", title="r")


def test_estimator_figures(retrieval_results: Results) -> None:
    counts = estimator.count_samples(estimator.generated_samples(["prose", "json"], [512], [0, 1]))
    _same_twice(lambda: estimator.estimate_errors(counts, estimator.ENCODINGS, title="errors"))
    _same_twice(lambda: estimator.fill_at_trigger(estimator.what_if(0.8), trigger=0.8, title="fill"))
    run_id = str(retrieval_results.runs["run_id"].iloc[0])
    recounted = estimator.recount(
        retrieval_results, run_id, {"o200k_base": estimator.bpe_counter("o200k_base")}
    )
    figure = _same_twice(
        lambda: estimator.estimate_vs_real(
            recounted, ["o200k_base"], window=6000, trigger=0.5, title="replay"
        )
    )
    labels = figure.axes[0].get_legend_handles_labels()[1]
    assert {"estimate", "o200k_base", "compression", "window 6,000", "trigger"} <= set(labels)


def test_every_preset_on_one_workload_gets_its_own_colour() -> None:
    assert len(set(plots.line_colours(11))) == 11
    assert plots.line_colours(3) == plots.line_colours(10)[:3]
