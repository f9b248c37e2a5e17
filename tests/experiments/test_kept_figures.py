"""Figures kept from the results folder a rerun replaces (`ctxlab.experiments.kept_figures`):
kept only when drawing them again would give the same files, drawn anew otherwise."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxlab.analysis import folder_figures
from ctxlab.analysis.results import Results
from ctxlab.cli import main
from ctxlab.experiments import kept_figures
from ctxlab.experiments.execute import execute
from ctxlab.experiments.grid import expand
from ctxlab.experiments.kept_figures import RECORD, inputs_digest
from ctxlab.experiments.processes import WHOLE, Share
from ctxlab.experiments.results import Outcome, Written, write_scenarios
from ctxlab.scenarios.load import load_scenario
from tests.scenarios.files import SWEPT, TINY, write

Drawer = Callable[[Path, Share], None]


def counting_drawer() -> tuple[Drawer, list[str]]:
    """A drawer whose one figure is a digest of the folder's runs table, and the folders it drew."""
    drawn: list[str] = []

    def draw(folder: Path, share: Share) -> None:
        drawn.append(folder.name)
        figures = folder / "figures"
        figures.mkdir(exist_ok=True)
        (figures / f"runs-{share.index}.png").write_bytes(
            hashlib.sha256((folder / "runs.csv").read_bytes()).digest()
        )

    return draw, drawn


def written(
    tmp_path: Path, text: str, draw: Drawer, *, drawn_as: str | None = "png", redraw: bool = False
) -> Written:
    loaded = load_scenario(write(tmp_path, text))
    configs = tuple(expand(loaded))
    outcome = Outcome(loaded, configs, tuple(execute(c) for c in configs))
    (done,) = write_scenarios(tmp_path / "out", [outcome], plot=draw, drawn_as=drawn_as, redraw=redraw)
    return done


def _record_also(folder: Path, name: str) -> None:
    """Have the record name one more file (of the same digest as a figure it names)."""
    record = json.loads((folder / RECORD).read_text())
    record["files"][name] = next(iter(record["files"].values()))
    (folder / RECORD).write_text(json.dumps(record))


def _unreadable(path: Path) -> None:
    """Put a folder where the file was: the name is still there, its bytes cannot be read."""
    path.unlink()
    path.mkdir()


def figure_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "figures").iterdir())}


def test_a_rerun_with_the_same_results_keeps_the_figures_byte_for_byte(tmp_path: Path) -> None:
    draw, drawn = counting_drawer()
    first = figure_bytes(written(tmp_path, TINY, draw).folder)
    again = written(tmp_path, TINY, draw)
    assert len(drawn) == 1
    assert figure_bytes(again.folder) == first and again.plot_error is None
    assert set(first) == {"runs-0.png"} and (again.folder / RECORD).is_file()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["tiny"]


def test_other_results_other_options_or_other_code_draw_the_figures_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    draw, drawn = counting_drawer()
    written(tmp_path, TINY, draw)
    changed = written(tmp_path, TINY.replace("4000", "5000"), draw)
    assert len(drawn) == 2
    record = json.loads((changed.folder / RECORD).read_text())
    assert record["inputs"] == inputs_digest(changed.folder, "png")
    written(tmp_path, TINY.replace("4000", "5000"), draw, drawn_as="png+svg")
    assert len(drawn) == 3
    monkeypatch.setattr(kept_figures, "_code_digest", lambda: "other code")
    written(tmp_path, TINY.replace("4000", "5000"), draw, drawn_as="png+svg")
    assert len(drawn) == 4


@pytest.mark.parametrize(
    "tamper",
    [
        lambda figures: (figures / "runs-0.png").write_bytes(b"edited by hand"),
        lambda figures: (figures / "runs-0.png").unlink(),
        lambda figures: (figures / "extra.png").write_bytes(b"not drawn here"),
        lambda figures: (figures.parent / RECORD).write_text("{not json"),
        lambda figures: (figures.parent / RECORD).unlink(),
        lambda figures: _record_also(figures.parent, "../manifest.json"),
        lambda figures: _unreadable(figures / "runs-0.png"),
        shutil.rmtree,
    ],
    ids=["changed", "missing", "unknown", "unreadable record", "no record", "outside", "unreadable", "none"],
)
def test_figures_not_as_they_were_drawn_are_drawn_anew(
    tmp_path: Path, tamper: Callable[[Path], object]
) -> None:
    draw, drawn = counting_drawer()
    first = figure_bytes(written(tmp_path, TINY, draw).folder)
    tamper(tmp_path / "out" / "tiny" / "figures")
    again = written(tmp_path, TINY, draw)
    assert len(drawn) == 2 and figure_bytes(again.folder) == first


def test_redraw_draws_and_records_and_no_options_neither_keeps_nor_records(tmp_path: Path) -> None:
    draw, drawn = counting_drawer()
    written(tmp_path, TINY, draw)
    redrawn = written(tmp_path, TINY, draw, redraw=True)
    assert len(drawn) == 2 and (redrawn.folder / RECORD).is_file()
    written(tmp_path, TINY, draw)
    assert len(drawn) == 2
    unrecorded = written(tmp_path, TINY, draw, drawn_as=None)
    assert len(drawn) == 3 and not (unrecorded.folder / RECORD).exists()
    written(tmp_path, TINY, draw)
    assert len(drawn) == 4


def test_some_folders_keep_their_figures_while_others_are_drawn_in_workers(tmp_path: Path) -> None:
    draw, drawn = counting_drawer()
    outcomes = []
    for name, text in (("swept", SWEPT), ("tiny", TINY)):
        loaded = load_scenario(write(tmp_path, text, f"{name}.yaml"))
        configs = tuple(expand(loaded))
        outcomes.append(Outcome(loaded, configs, tuple(execute(c) for c in configs)))
    write_scenarios(tmp_path / "out", outcomes, plot=draw, drawn_as="png")
    before = {o.loaded.name: figure_bytes(tmp_path / "out" / o.loaded.name) for o in outcomes}
    (tmp_path / "out" / "swept" / "figures" / "runs-0.png").unlink()
    finished: list[int] = []
    again = write_scenarios(tmp_path / "out", outcomes, plot=draw, drawn_as="png", on_drawn=finished.append)
    assert sorted(finished) == [0, 1] and [w.plot_error for w in again] == [None, None]
    assert {w.folder.name: figure_bytes(w.folder) for w in again} == before
    assert [name.split(".tmp-")[0] for name in drawn].count(".swept") == 2  # drawn twice, tiny once


def test_the_inputs_digest_reads_every_result_file_but_the_manifest_s_creation_time(tmp_path: Path) -> None:
    draw, _ = counting_drawer()
    folder = written(tmp_path, TINY, draw).folder
    digest = inputs_digest(folder, "png")
    manifest = folder / "manifest.json"
    text = manifest.read_text(encoding="utf-8")
    created = json.loads(text)["created"]
    manifest.write_text(text.replace(created, "1999-01-01T00:00:00+00:00"), encoding="utf-8")
    (folder / "figures" / "more.png").write_bytes(b"figures are not inputs")
    (folder / RECORD).write_text("nor is what they were drawn from")
    (folder / "tune").mkdir()
    (folder / "tune" / "best.yaml").write_text("tuning is not an input")
    assert inputs_digest(folder, "png") == digest != inputs_digest(folder, "png+svg")
    manifest.write_text(text.replace('"seed": 0', '"seed": 1'), encoding="utf-8")
    assert inputs_digest(folder, "png") != digest
    manifest.write_text(text, encoding="utf-8")
    (folder / "runs.csv").write_bytes((folder / "runs.csv").read_bytes() + b"\n")
    assert inputs_digest(folder, "png") != digest


def test_the_inputs_digest_reads_a_large_result_file_a_piece_at_a_time(tmp_path: Path) -> None:
    """A recorded run's request file can be hundreds of megabytes: its digest is the one of its
    bytes whole (`data_digest`), made holding a piece of it, not the file."""
    draw, _ = counting_drawer()
    folder = written(tmp_path, TINY, draw).folder
    large = os.urandom(kept_figures._PIECE) * 24 + b"tail"
    (folder / "requests").mkdir()
    (folder / "requests" / "tiny.jsonl.gz").write_bytes(large)
    whole = kept_figures.data_digest("png", inputs_whole(folder))
    tracemalloc.start()
    try:
        digest = inputs_digest(folder, "png")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert digest == whole and len(large) > 8 * peak


def inputs_whole(folder: Path) -> list[tuple[str, bytes]]:
    """The result files figures are drawn from, each read whole, the manifest without its
    creation time."""
    manifest = folder / "manifest.json"
    return [
        (path.relative_to(folder).as_posix(), path.read_bytes())
        if path != manifest
        else ("manifest.json", kept_figures._CREATED.sub(b"", path.read_bytes(), count=1))
        for path in kept_figures._input_files(folder)
    ]


def test_ctxlab_run_keeps_the_figures_of_unchanged_results_unless_asked_to_redraw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[Path] = []
    real = folder_figures.plot_share

    def plot_share(folder: Path, share: Share = WHOLE, *, svg: bool = False) -> list[Path]:
        drawn.append(folder)
        return real(folder, share, svg=svg)

    monkeypatch.setattr(folder_figures, "plot_share", plot_share)
    path, out = write(tmp_path, TINY), tmp_path / "out"
    run = ["run", str(path), "--out", str(out), "--quiet", "--workers", "1"]
    assert main(run) == 0
    first = figure_bytes(out / "tiny")
    assert main(run) == 0 and len(drawn) == 1
    assert figure_bytes(out / "tiny") == first
    assert main([*run, "--redraw"]) == 0 and len(drawn) == 2
    assert figure_bytes(out / "tiny") == first
    assert main([*run, "--svg"]) == 0 and len(drawn) == 3
    assert any(name.endswith(".svg") for name in figure_bytes(out / "tiny"))


def test_figures_redrawn_by_ctxlab_plot_are_kept_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[Path] = []
    real = folder_figures.draw_figures

    def draw_figures(
        results: Results, folder: Path, *, svg: bool = False, share: Share = WHOLE
    ) -> list[Path]:
        drawn.append(folder)
        return real(results, folder, svg=svg, share=share)

    monkeypatch.setattr(folder_figures, "draw_figures", draw_figures)
    path, out = write(tmp_path, TINY), tmp_path / "out"
    run = ["run", str(path), "--out", str(out), "--quiet", "--workers", "1"]
    assert main([*run, "--no-plots"]) == 0 and not (out / "tiny" / RECORD).exists()
    assert main(["plot", str(out / "tiny"), "--workers", "1"], out=io.StringIO(), err=io.StringIO()) == 0
    plotted = figure_bytes(out / "tiny")
    assert len(drawn) == 1 and (out / "tiny" / RECORD).is_file()
    assert main(run) == 0 and len(drawn) == 1
    assert figure_bytes(out / "tiny") == plotted
