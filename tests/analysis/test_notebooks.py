"""The comparison notebooks: each executes without a cell error against a small results fixture,
opens with its question and ends with its answer, and is written back with outputs that do not
change from run to run; the committed notebooks are normalized and carry their outputs."""

from __future__ import annotations

import concurrent.futures as cf
import io
import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from matplotlib.figure import Figure

from ctxlab.analysis.notebooks import (
    KERNELSPEC,
    NotebookError,
    execute_notebook,
    figure_png,
    main,
    normalize,
)
from ctxlab.cli import main as ctxlab_main

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SCENARIOS = sorted((Path(__file__).parent / "notebook_scenarios").glob("*.yaml"))


@pytest.fixture(scope="module")
def fixture_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Results of the small fixture scenarios, written by the ctxlab command: `run` for every one,
    then `tune` for those with a tune: section."""
    out = tmp_path_factory.mktemp("notebook-results")
    args = ["run", *map(str, SCENARIOS), "--out", str(out), "--workers", "1", "--no-plots", "--quiet"]
    assert ctxlab_main(args, out=io.StringIO(), err=io.StringIO()) == 0
    tuned = [str(p) for p in SCENARIOS if "\ntune:" in p.read_text(encoding="utf-8")]
    assert tuned, "the fixture tunes a scenario (for 07-tune)"
    args = ["tune", *tuned, "--out", str(out), "--workers", "1", "--quiet"]
    assert ctxlab_main(args, out=io.StringIO(), err=io.StringIO()) == 0
    return out


@pytest.fixture(scope="module")
def executed(fixture_results: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every notebook executed against the fixture (two at a time), written to a temporary folder;
    the repository's notebooks are left as they are."""
    folder = tmp_path_factory.mktemp("executed")
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            path.name: pool.submit(execute_notebook, path, fixture_results, out=folder / path.name)
            for path in NOTEBOOKS
        }
        return {name: future.result() for name, future in futures.items()}


def _outputs(notebook: Any) -> list[dict[str, Any]]:
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]


def test_there_are_the_seven_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01-sawtooth.ipynb",
        "02-strategies.ipynb",
        "03-sensitivity.ipynb",
        "04-estimator.ipynb",
        "05-real-traces.ipynb",
        "06-isolate.ipynb",
        "07-tune.ipynb",
    ]


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_notebook_runs_on_the_fixture_and_answers(
    name: str, executed: dict[str, Path], fixture_results: Path
) -> None:
    notebook = nbformat.read(executed[name], as_version=4)
    outputs = _outputs(notebook)
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"], "a cell wrote to stderr (a warning?)"
    assert all(c.execution_count for c in notebook.cells if c.cell_type == "code")
    text = executed[name].read_text(encoding="utf-8")
    assert str(fixture_results) not in text and str(ROOT) not in text, "an absolute path in the outputs"
    # the answer: the last code cell displays Markdown with numbers, under an "Answer" heading
    answer = next(c for c in reversed(notebook.cells) if c.cell_type == "code")
    markdown = [o["data"]["text/markdown"] for o in answer.outputs if "text/markdown" in o.get("data", {})]
    assert markdown and any(ch.isdigit() for ch in markdown[0])
    index = notebook.cells.index(answer)
    assert any(c.source.startswith("## Answer") for c in notebook.cells[:index] if c.cell_type == "markdown")
    assert any(o["output_type"] == "display_data" and "image/png" in o["data"] for o in outputs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_opens_with_its_question_in_two_sentences(path: Path) -> None:
    first = nbformat.read(path, as_version=4).cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    question = first.source.split("**")[1]
    assert len(re.findall(r"[.?!](?:\s|$)", question)) == 2, question


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_notebook_is_normalized_and_has_outputs(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["metadata"] == {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    code = [c for c in data["cells"] if c["cell_type"] == "code"]
    assert [c["id"] for c in data["cells"]] == [f"cell-{i:02d}" for i in range(len(data["cells"]))]
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
    assert all("execution" not in c["metadata"] for c in data["cells"])
    assert any(c["outputs"] for c in code), "committed without outputs: run `make notebooks`"
    assert not [o for c in code for o in c["outputs"] if o.get("name") == "stderr" or "ename" in o]


def test_executing_twice_gives_the_same_bytes(fixture_results: Path, tmp_path: Path) -> None:
    source = ROOT / "notebooks" / "01-sawtooth.ipynb"
    first = execute_notebook(source, fixture_results, out=tmp_path / "a.ipynb").read_bytes()
    second = execute_notebook(source, fixture_results, out=tmp_path / "b.ipynb").read_bytes()
    assert first == second


def test_a_failing_cell_names_the_notebook_and_leaves_the_file(tmp_path: Path, fixture_results: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("raise ValueError('broken on purpose')")]
    path = tmp_path / "broken.ipynb"
    nbformat.write(notebook, path)
    before = path.read_bytes()
    with pytest.raises(
        NotebookError, match=r"(?s)broken\.ipynb: a cell failed.*ValueError: broken on purpose"
    ):
        execute_notebook(path, fixture_results)
    assert path.read_bytes() == before


def test_the_kernel_sees_the_results_root_and_this_checkout(tmp_path: Path, fixture_results: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import ctxlab, os\n"
            "from ctxlab.analysis.notebooks import results_root\n"
            "print(results_root() == __import__('pathlib').Path(os.environ['CTXLAB_RESULTS']))\n"
            "print(ctxlab.__file__)"
        )
    ]
    path = tmp_path / "env.ipynb"
    nbformat.write(notebook, path)
    execute_notebook(path, fixture_results)
    text = nbformat.read(path, as_version=4).cells[0].outputs[0]["text"]
    assert text.splitlines() == ["True", str(ROOT / "ctxlab" / "__init__.py")]


def test_normalize_drops_what_changes_between_runs() -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["language_info"] = {"name": "python", "version": "3.11.2"}
    cell = nbformat.v4.new_code_cell("1")
    cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00"}
    notebook.cells = [cell, nbformat.v4.new_markdown_cell("x")]
    normalize(notebook)
    assert notebook.metadata["language_info"] == {"name": "python"}
    assert notebook.metadata["kernelspec"] == KERNELSPEC
    assert [c["id"] for c in notebook.cells] == ["cell-00", "cell-01"]
    assert "execution" not in notebook.cells[0].metadata


def test_figure_png_has_no_software_stamp_and_is_stable() -> None:
    def draw() -> Figure:
        figure = Figure(figsize=(2, 2))
        figure.add_subplot().plot([0, 1], [1, 0])
        return figure

    png = figure_png(draw())
    assert png.startswith(b"\x89PNG") and png == figure_png(draw())
    assert b"Matplotlib" not in png


def test_the_command_checks_its_input(tmp_path: Path) -> None:
    err = io.StringIO()
    assert main([str(tmp_path / "missing.ipynb"), "--results", str(tmp_path)], err=err) == 2
    assert "run `make experiments` first" in err.getvalue()
    (tmp_path / "index.md").write_text("# results\n", encoding="utf-8")
    err = io.StringIO()
    assert main([str(tmp_path / "missing.ipynb"), "--results", str(tmp_path)], err=err) == 2
    assert "no such notebook" in err.getvalue()
    (tmp_path / "a.ipynb").write_text("{}", encoding="utf-8")
    err = io.StringIO()
    assert main([str(tmp_path / "a.ipynb"), "--results", str(tmp_path), "--workers", "0"], err=err) == 2
    assert err.getvalue() == "--workers 0: give at least 1\n"


def test_the_command_executes_notebooks_side_by_side_and_reports_them_in_order(
    tmp_path: Path, fixture_results: Path
) -> None:
    """`--workers 2` executes each notebook in a worker process of its own: a failing one is
    reported and left as it was, the others are written as one worker writes them."""
    cells = {"a": "print(sum(range(4)))", "broken": "raise ValueError('on purpose')", "c": "print('c')"}
    paths = []
    for name, source in cells.items():
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell(source)]
        paths.append(tmp_path / f"{name}.ipynb")
        nbformat.write(notebook, paths[-1])
    before = {path: path.read_bytes() for path in paths}
    written = []
    for workers in ("2", "1"):
        err = io.StringIO()
        argv = [*map(str, paths), "--results", str(fixture_results), "--workers", workers]
        assert main(argv, err=err) == 1
        lines = [line for line in err.getvalue().splitlines() if "broken.ipynb" in line or "executed" in line]
        assert lines == [f"executed {paths[0]}", f"{paths[1]}: a cell failed:", f"executed {paths[2]}"]
        assert paths[1].read_bytes() == before[paths[1]]
        written.append([path.read_bytes() for path in paths])
    assert written[0] == written[1] and written[0][0] != before[paths[0]]
    assert nbformat.reads(written[0][0].decode(), as_version=4).cells[0].outputs[0]["text"] == "6\n"
