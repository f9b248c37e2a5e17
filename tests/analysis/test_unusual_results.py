"""Figures of legitimate but unusual results: runs that failed before their first call, sweeps
over `null`, a run of one call, names longer than a plot is wide."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ctxlab.analysis import isolate, plots, sweep_figures
from ctxlab.analysis.folder_figures import figure_plan
from ctxlab.analysis.results import Results
from ctxlab.replay import run_document


def _document(name: str, **parts: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Unusual results for the figure tests.",
        "workload": {"generator": {"name": "retrieval", "params": {"rounds": 4}}},
        "model": {"context_size": 6000},
        **parts,
    }


def _texts(figure: Figure) -> list[str]:
    texts = [t.get_text() for axes in figure.axes for t in axes.texts]
    legends = [axes.get_legend() for axes in figure.axes if axes.get_legend() is not None]
    return texts + [t.get_text() for legend in legends for t in legend.get_texts()]


def _drawn(results: Results) -> dict[str, Figure]:
    return {stem: draw() for stem, draw in figure_plan(results)}


@pytest.fixture(scope="module")
def tiny_window(tmp_path_factory: pytest.TempPathFactory) -> Results:
    """deepagents fails before its first call at both windows; strands' window manager goes on."""
    document = _document(
        "tiny-window",
        model={"context_size": 300},
        strategies=[
            {"name": "deep", "preset": "deepagents"},
            {"name": "strands", "preset": "strands-sliding-window"},
        ],
        sweep={"model.context_size": [200, 300]},
    )
    return run_document(document, tmp_path_factory.mktemp("tiny-window"))


def test_a_run_that_failed_before_its_first_call_has_a_sawtooth_that_says_so(tiny_window: Results) -> None:
    failed = tiny_window.runs[tiny_window.runs["status"] != "ok"]
    assert len(failed) == 2 and (failed["calls"] == 0).all()
    figures = _drawn(tiny_window)
    for run_id in failed["run_id"]:
        figure = figures[f"sawtooth-{run_id}"]
        assert "(failed)" in figure.axes[0].get_title()
        assert any(t.startswith("no model call was made: the run failed first") for t in _texts(figure))
        assert not len(figure.axes[0].get_xticks())  # no call numbers without a call


def test_failed_runs_are_named_failed_in_overlays_and_sweeps(tiny_window: Results) -> None:
    figures = _drawn(tiny_window)
    legend = _texts(figures["overlay"])
    assert "deep (context_size=200) (failed)" in legend
    assert "strands (context_size=200)" in legend
    assert "deep (context_size=200) (failed)" in _texts(figures["cumulative"])
    assert _texts(figures["sweep-deep"]).count("failed") == 2 * len(sweep_figures.LINE_METRICS)
    assert "failed" not in _texts(figures["sweep-strands"])


@pytest.fixture(scope="module")
def null_sweep(tmp_path_factory: pytest.TempPathFactory) -> Results:
    document = _document(
        "null-sweep",
        strategies=[{"name": "sw", "preset": "sliding-window"}, {"name": "one", "preset": "sliding-window"}],
        sweep={
            "strategies.sw.max_tokens": [None, 3000],
            "strategies.sw.min_messages": [1, 4],
            "strategies.one.max_tokens": [None, 2000, 3000],
        },
    )
    return run_document(document, tmp_path_factory.mktemp("null-sweep"))


def test_a_swept_null_is_a_value_of_its_own(null_sweep: Results) -> None:
    figures = _drawn(null_sweep)
    assert "heatmap-sw" in figures and "sweep-sw" not in figures  # two paths vary, one with null
    heatmap = figures["heatmap-sw"]
    assert [t.get_text() for t in heatmap.axes[0].get_xticklabels()] == ["null", "3,000"]
    assert len(heatmap.axes[0].texts) == 4  # one number per run, none "failed"
    line = figures["sweep-one"]
    assert [t.get_text() for t in line.axes[0].get_xticklabels()] == ["null", "2,000", "3,000"]
    assert len(line.axes[0].lines[0].get_xdata()) == 3


def test_plots_tell_null_apart_from_numbers() -> None:
    assert sweep_figures.swept_key(float("nan")) is None and sweep_figures.swept_key(0) == 0
    assert sweep_figures.swept_text(None) == "null" and sweep_figures.swept_text(3000) == "3,000"


@pytest.fixture(scope="module")
def one_call(tmp_path_factory: pytest.TempPathFactory) -> Results:
    script = {"system_prompt": "You help.", "turns": [{"user": "Hello.", "final": "Hi."}]}
    document = _document(
        "one-call",
        workload={"script": script},
        strategies=[{"name": "agentscope", "preset": "agentscope"}, {"name": "none", "preset": "none"}],
    )
    return run_document(document, tmp_path_factory.mktemp("one-call"))


def test_a_run_of_one_call_is_drawn_at_whole_calls(one_call: Results) -> None:
    assert (one_call.runs["calls"] == 1).all()
    figures = _drawn(one_call)
    for stem in ("overlay", "cumulative", *(s for s in figures if s.startswith("sawtooth-"))):
        for axes in figures[stem].axes:
            assert list(axes.get_xticks()) == [-1, 0, 1], stem
    tokens = figures["cumulative"].axes[0]
    assert all(line.get_marker() == "o" for line in tokens.lines)  # one point is drawn, not lost


def test_a_long_label_is_wrapped_and_a_short_one_left_alone() -> None:
    name = "a" * 60 + "-very-long-strategy-name-that-goes-on-zz"
    assert plots.wrapped("agentscope (summary_token_count=preflight)") == (
        "agentscope (summary_token_count=preflight)"
    )
    assert all(len(line) <= plots.LABEL_WIDTH for line in plots.wrapped(name).split("\n"))
    assert plots.wrapped(name).replace("\n", "") == name
    assert max(len(line) for line in plots.wrapped(name, plots.TICK_WIDTH).split("\n")) <= plots.TICK_WIDTH


@pytest.mark.parametrize("length", [12, 60, 110])
def test_tick_labels_of_bars_never_overlap_however_long_the_names(length: int) -> None:
    import itertools
    import math

    import pandas as pd

    labels = {f"r{i}": f"{i}-" + "strategy name " * (length // 14) for i in range(6)}
    runs = pd.DataFrame({"run_id": list(labels), "cache_hit_rate": [0.5] * len(labels)})
    figure = plots.cache_hit_rates(runs, labels, title="cache")
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw_without_rendering()  # laid out as saved
    ticks = figure.axes[0].get_xticklabels()
    slant = ticks[0].get_rotation()
    places = [tick.get_window_extent(renderer).x1 for tick in ticks]  # right-aligned at the tick
    heights = []
    for tick in ticks:
        tick.set_rotation(0)
        heights.append(tick.get_window_extent(renderer).height)
    # parallel slanted boxes are apart across their slant by pitch x sin(slant)
    gaps = [(b - a) * math.sin(math.radians(slant)) for a, b in itertools.pairwise(places)]
    assert min(gaps) > max(heights), (slant, gaps, heights)


def test_an_empty_grid_cell_is_blank_and_a_failed_one_says_so(tmp_path: Path) -> None:
    import pandas as pd

    runs = pd.DataFrame(
        {
            "x": [1, 2, 1],
            "y": [1, 1, 2],
            "status": ["ok", "failed", "ok"],
            **{metric: [1.0, 2.0, 3.0] for metric in sweep_figures.METRICS},
        }
    )
    figure = sweep_figures.heatmap(runs, "x", "y", title="grid")
    assert sorted(t.get_text() for t in figure.axes[0].texts) == ["1", "3", "failed"]


def test_a_sweep_figure_refuses_two_runs_at_one_cell_or_value() -> None:
    """A fixed strategy beside a swept one, with the setting of one of its cells, would be drawn
    over that cell's run (the last one read wins): the figures refuse it and say what to give."""
    import pandas as pd

    runs = pd.DataFrame(
        {
            "run_id": ["tuned-1", "tuned-2", "baseline-1"],
            "strategy": ["tuned", "tuned", "baseline"],
            "x": [0.6, 0.7, 0.6],
            "y": [0.05, 0.05, 0.05],
            "status": ["ok"] * 3,
            **{metric: [1.0, 2.0, 3.0] for metric in sweep_figures.LINE_METRICS},
        }
    )
    both = "runs tuned-1 and baseline-1 are both at x=0.6"
    there = "the figure shows one run there; give it one strategy"
    with pytest.raises(ValueError, match=re.escape(f"{both}, y=0.05: {there}")):
        sweep_figures.heatmap(runs, "x", "y", title="grid")
    with pytest.raises(ValueError, match=re.escape(f"{both}: the figure")):
        sweep_figures.sweep_lines(runs, "x", title="line")
    own = runs[runs["strategy"] == "tuned"]
    assert sorted(t.get_text() for t in sweep_figures.heatmap(own, "x", "y", title="grid").axes[0].texts) == [
        "1",
        "2",
    ]


def test_the_index_says_why_a_folder_has_no_figures(tmp_path: Path) -> None:
    from ctxlab.analysis import folder_figures
    from ctxlab.analysis.report import NO_FIGURES, read_runs, section

    strategies = [{"name": f"s{k}", "preset": "none"} for k in range(folder_figures.MAX_SAWTOOTH_RUNS + 1)]
    results = run_document(_document("many", strategies=strategies), tmp_path)
    assert figure_plan(results) == []
    (results.folder / "figures").mkdir(exist_ok=True)
    assert NO_FIGURES in section(read_runs(results.folder), tmp_path)
    assert f"at most {folder_figures.MAX_SAWTOOTH_RUNS} runs" in NO_FIGURES
    assert f"2 to {folder_figures.MAX_OVERLAY_RUNS} " in NO_FIGURES


def test_the_isolate_comparison_says_which_side_of_its_sweep_is_missing(retrieval_results: Results) -> None:
    """Notebook 06 compares inline with delegated runs: results without one side (or without the
    sweep) say what is missing instead of an IndexError."""
    with pytest.raises(
        ValueError, match=r"no run sweeps workload\.generator\.params\.delegate; sweep it over"
    ):
        isolate.delegation(retrieval_results)
    swept = replace(retrieval_results, runs=retrieval_results.runs.assign(**{isolate.DELEGATE: "True"}))
    with pytest.raises(ValueError, match=r"no run with workload\.generator\.params\.delegate = false"):
        isolate.delegation(swept)
