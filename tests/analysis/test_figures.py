"""Loading results, the figures a results folder gets (byte-stable), and the index page."""

from __future__ import annotations

import contextlib
import csv
import io
import re
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from ctxlab.analysis import load_results
from ctxlab.analysis.folder_figures import figure_plan, plot_folder
from ctxlab.analysis.folders import ResultsError
from ctxlab.analysis.labels import value_text
from ctxlab.analysis.plots import STYLE, laid_out, sawtooth
from ctxlab.cli import main
from ctxlab.experiments.processes import shares
from tests.scenarios.files import SWEPT, write


@pytest.fixture(scope="module")
def results_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("figures")
    path = write(folder, SWEPT)
    code = main(
        ["run", str(path), "--out", str(folder / "out"), "--workers", "1", "--svg"],
        out=io.StringIO(),
        err=io.StringIO(),
    )
    assert code == 0
    return folder / "out"


def test_every_kind_of_figure_is_drawn_as_png_and_svg(results_root: Path) -> None:
    figures = results_root / "swept" / "figures"
    stems = sorted({p.stem for p in figures.iterdir()})
    runs = load_results(results_root / "swept").runs
    assert [s for s in stems if s.startswith("sawtooth-")] == sorted(f"sawtooth-{r}" for r in runs["run_id"])
    assert {"overlay", "cumulative", "heatmap-agentscope", "sweep-none"} <= set(stems)
    for stem in stems:
        assert (figures / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        svg = (figures / f"{stem}.svg").read_text(encoding="utf-8")
        assert "<svg" in svg and "<dc:date>" not in svg and "Matplotlib v" not in svg


def test_redrawing_gives_the_same_bytes(results_root: Path) -> None:
    folder = results_root / "swept"
    before = {p.name: p.read_bytes() for p in (folder / "figures").iterdir()}
    written = plot_folder(folder, svg=True)
    assert sorted(p.name for p in written) == sorted(before)
    assert {p.name: p.read_bytes() for p in (folder / "figures").iterdir()} == before
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_figures_drawn_in_shares_by_several_workers_are_the_same_files(results_root: Path) -> None:
    folder = results_root / "swept"
    before = {p.name: p.read_bytes() for p in (folder / "figures").iterdir()}
    written = plot_folder(folder, svg=True, workers=3)
    assert [p.name for p in written] == sorted(before)
    assert {p.name: p.read_bytes() for p in (folder / "figures").iterdir()} == before
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_every_figure_is_in_exactly_one_share(results_root: Path) -> None:
    results = load_results(results_root / "swept")
    stems = [stem for stem, _ in figure_plan(results)]
    held = [[stem for position, stem in enumerate(stems) if share.holds(position)] for share in shares(3)]
    assert sorted(stem for part in held for stem in part) == sorted(stems) and all(held)
    assert len(stems) == len(set(stems)) == len(list((results_root / "swept" / "figures").glob("*.png")))


def test_csv_and_parquet_load_to_the_same_frames(results_root: Path, tmp_path: Path) -> None:
    folder = results_root / "swept"
    copy = tmp_path / "swept"
    copy.mkdir()
    for name in ("manifest.json", "runs.csv", "calls.csv"):
        (copy / name).write_bytes((folder / name).read_bytes())
    typed, from_csv = load_results(folder), load_results(copy)
    pd.testing.assert_frame_equal(typed.runs, from_csv.runs, check_dtype=False)
    pd.testing.assert_frame_equal(typed.calls, from_csv.calls, check_dtype=False)
    assert str(typed.runs["peak_input_tokens"].dtype) == "Int64"
    assert str(from_csv.calls["over_window"].dtype) == "boolean"
    assert typed.swept_columns() == ["param.model.context_size", "param.strategy.context.trigger_ratio"]


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (("runs.csv", "peak_input_tokens", "1.5"), "peak_input_tokens '1.5' is not a whole number"),
        (("runs.csv", "calls", "1e20"), "calls '1e20' is not a whole number"),  # wrapped round before
        (("runs.csv", "calls", "abc"), "calls 'abc' is not a whole number"),
        (("calls.csv", "over_window", "maybe"), "over_window 'maybe' is not true or false"),
    ],
)
def test_a_hand_edited_cell_of_another_type_is_named_not_read_as_another_value(
    results_root: Path, tmp_path: Path, edit: tuple[str, str, str], said: str
) -> None:
    """A CSV table read without its parquet file: `1.5` in a count was read as 1, `maybe` in a
    flag as missing."""
    copy = tmp_path / "swept"
    copy.mkdir()
    for name in ("manifest.json", "runs.csv", "calls.csv"):
        (copy / name).write_bytes((results_root / "swept" / name).read_bytes())
    table, column, cell = edit
    with (copy / table).open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    rows[1][column] = cell
    with (copy / table).open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(ResultsError, match=f"line 3: {said}"):
        load_results(copy)


def test_the_index_links_every_scenario_and_existing_files(results_root: Path) -> None:
    text = (results_root / "index.md").read_text(encoding="utf-8")
    assert (
        "## swept" in text
        and "| run | strategy | model.context_size | strategy.context.trigger_ratio |" in text
    )
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links and all((results_root / link).is_file() for link in links)
    assert "![heatmap-agentscope](swept/figures/heatmap-agentscope.png)" in text


def test_sawtooth_marks_summary_calls_compressions_and_the_zones() -> None:
    calls = pd.DataFrame(
        {
            "run_id": ["r"] * 4,
            "call_index": [0, 1, 2, 3],
            "kind": ["reasoning", "reasoning", "summary", "reasoning"],
            "input_tokens": [100, 3300, 3400, 300],
        }
    )
    events = pd.DataFrame({"run_id": ["r"], "call_index": [3], "kind": ["compressed"]})
    figure = sawtooth(calls, events, title="t", window=4000, trigger=0.8, reserve=0.1)
    labels = figure.axes[0].get_legend_handles_labels()[1]
    assert labels == [
        "reasoning call",
        "summary call",
        "compression",
        "window 4,000",
        "trigger 0.8 × window",
        "reserve 0.1 × window",
    ]
    assert figure.axes[0].get_ylabel() == "input tokens per call"


def test_value_text() -> None:
    assert [value_text(v) for v in (0.25, 128000, False, "o200k_base")] == [
        "0.25",
        "128,000",
        "False",
        "o200k_base",
    ]


def test_figures_are_png_only_unless_svg_is_asked_for(tmp_path: Path) -> None:
    path = write(tmp_path, SWEPT)
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--workers", "1"], out=io.StringIO())
    figures = tmp_path / "out" / "swept" / "figures"
    assert code == 0 and {p.suffix for p in figures.iterdir()} == {".png"}


def test_figures_drawn_in_worker_processes_are_the_same_bytes(results_root: Path, tmp_path: Path) -> None:
    first = write(tmp_path, SWEPT, "first.yaml")
    second = write(tmp_path, SWEPT.replace("name: swept", "name: other"), "second.yaml")
    code = main(["run", str(first), str(second), "--out", str(tmp_path / "out"), "--workers", "2", "--svg"])
    assert code == 0
    alone = {p.name: p.read_bytes() for p in (results_root / "swept" / "figures").iterdir()}
    side_by_side = {p.name: p.read_bytes() for p in (tmp_path / "out" / "swept" / "figures").iterdir()}
    assert side_by_side == alone
    assert sorted(p.name for p in (tmp_path / "out" / "other" / "figures").iterdir()) == sorted(alone)


def test_a_figure_laid_out_first_has_the_pixels_of_matplotlibs_own_layout(results_root: Path) -> None:
    """`laid_out` solves the layout before saving, so the figure is drawn once: every figure of
    a swept scenario (six kinds) must come out pixel for pixel as matplotlib's two-pass save
    draws it, and keep its layout engine, its dpi and how its axes treat minor ticks."""

    def pixels(figure: Any, *, first: bool) -> Any:
        buffer = io.BytesIO()
        with mpl.rc_context(STYLE), laid_out(figure, 110) if first else contextlib.nullcontext():
            figure.savefig(buffer, format="png", dpi=110)
        return np.asarray(Image.open(buffer))

    results = load_results(results_root / "swept")
    plan = figure_plan(results)
    kinds = {stem.split("-")[0] for stem, _ in plan}
    assert kinds == {"sawtooth", "overlay", "cumulative", "cache", "heatmap", "sweep"}
    for _, draw in plan:
        figure = draw()
        engine, dpi, overlaps = figure.get_layout_engine(), figure.dpi, removes_overlaps(figure)
        assert engine is not None
        laid = pixels(figure, first=True)
        assert figure.get_layout_engine() is engine and figure.dpi == dpi
        assert removes_overlaps(figure) == overlaps
        assert np.array_equal(laid, pixels(draw(), first=False))


def removes_overlaps(figure: Any) -> list[bool]:
    return [bool(axis.remove_overlapping_locs) for axes in figure.axes for axis in (axes.xaxis, axes.yaxis)]


def test_a_layout_that_fails_leaves_the_figure_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = pd.DataFrame(
        {"run_id": ["r"] * 2, "call_index": [0, 1], "kind": ["reasoning"] * 2, "input_tokens": [10, 20]}
    )
    events = pd.DataFrame({"run_id": ["r"], "call_index": [1], "kind": ["compressed"]})
    figure = sawtooth(calls, events, title="t", window=100)
    engine, dpi = figure.get_layout_engine(), figure.dpi
    assert engine is not None

    def fail(_: object) -> None:
        raise RuntimeError("no layout")

    monkeypatch.setattr(engine, "execute", fail)
    with pytest.raises(RuntimeError, match="no layout"), laid_out(figure, 300):
        pass
    assert figure.get_layout_engine() is engine and figure.dpi == dpi
    assert removes_overlaps(figure) == [True, True]
