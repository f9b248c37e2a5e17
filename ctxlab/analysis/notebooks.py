"""Executing the comparison notebooks against a results folder, with outputs that never churn.

`python -m ctxlab.analysis.notebooks notebooks/*.ipynb --results results` runs each notebook
with nbclient and writes it back in place (`make notebooks` does this). Cells read the results
root from `CTXLAB_RESULTS`; `show` and `say` are what they display figures and answers with.

Invariants:
- A notebook runs in its own folder, so relative paths in its cells resolve there; the kernel
  gets `CTXLAB_RESULTS` (the results root, absolute) and imports the same ctxlab as the runner.
- The file written depends only on the cells and what they display: execution counts from 1,
  cell ids numbered in order, no execution timings, the kernelspec fixed to `python3`, and
  `language_info` reduced to the language's name (no interpreter version). Figures are PNGs
  drawn by `show`, whose bytes depend only on the figure.
- A cell that raises stops that notebook and leaves its file as it was; the error names the
  notebook and the cell.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import io
import os
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO, cast

import matplotlib as mpl
import pandas as pd
from matplotlib.figure import Figure

import ctxlab
from ctxlab.analysis.plots import STYLE, laid_out
from ctxlab.experiments.processes import map_in_processes

KERNEL = "python3"
KERNELSPEC = {"name": KERNEL, "display_name": "Python 3 (ipykernel)", "language": "python"}
RESULTS_VARIABLE = "CTXLAB_RESULTS"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
DPI = 80
"""Figures in notebooks: small enough that a committed notebook stays a few hundred KB."""


class NotebookError(RuntimeError):
    """A notebook could not be executed; the message names it and the failing cell."""


def figure_png(figure: Figure, *, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes without software metadata (the same figure, the same bytes)."""
    buffer = io.BytesIO()
    with mpl.rc_context(cast(Any, STYLE)), laid_out(figure, dpi):
        figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def show(figure: Figure) -> None:
    """Display a figure in a notebook as a deterministic PNG."""
    ipython: Any = importlib.import_module("IPython.display")
    ipython.display(ipython.Image(data=figure_png(figure), format="png"))


def say(lines: str | Iterable[str]) -> None:
    """Display Markdown: one string, or lines joined by newlines."""
    ipython: Any = importlib.import_module("IPython.display")
    ipython.display(ipython.Markdown(lines if isinstance(lines, str) else "\n".join(lines)))


MISSING = "—"
"""How a table shows a value that was not measured (retention without probes) or does not apply
(a mean over no safe run)."""


def shown(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """A table as a notebook shows it: decimals with `digits` places, a missing value `MISSING`
    (pandas would print NaN, which reads as a broken measure).

    >>> shown(pd.DataFrame({"x": [0.12345, float("nan")], "n": [1, 2]})).to_dict("list")
    {'x': ['0.123', '—'], 'n': [1, 2]}
    """
    return frame.apply(lambda column: _shown_column(column, digits))


def _shown_column(column: pd.Series, digits: int) -> pd.Series:
    if pd.api.types.is_float_dtype(column):
        return column.map(lambda v: MISSING if pd.isna(v) else f"{v:.{digits}f}")
    return column.astype(object).where(column.notna(), MISSING)


def results_root(default: str = "../results") -> Path:
    """The results root a notebook reads: `CTXLAB_RESULTS` when set, else `default`."""
    return Path(os.environ.get(RESULTS_VARIABLE) or default)


def normalize(notebook: Any) -> Any:
    """Drop everything that changes from run to run (timings, random ids, interpreter version)."""
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.metadata.pop("widgets", None)
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index:02d}"
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
        cell.metadata.pop("scrolled", None)
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    return notebook


def kernel_env(results: Path) -> dict[str, str]:
    """The kernel's environment: this one, plus the results root and this ctxlab first on the path."""
    checkout = str(Path(ctxlab.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (checkout, os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        RESULTS_VARIABLE: str(results.resolve()),
        "PYTHONPATH": path,
        "PYTHONHASHSEED": "0",
        "MPLBACKEND": "agg",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }


def execute_notebook(path: Path, results: Path, *, out: Path | None = None, timeout: int = 900) -> Path:
    """Execute the notebook at `path` in its folder against `results`; write it to `out` (default:
    in place) and return where it was written.

    Raises:
        NotebookError: a cell raised, or the kernel could not start (the file is left as it was).
    """
    nbformat: Any = importlib.import_module("nbformat")
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=timeout,
        record_timing=False,
        allow_errors=False,
        resources={"metadata": {"path": str(path.resolve().parent)}},
    )
    try:
        client.execute(env=kernel_env(results))
    except CellExecutionError as error:
        plain = _ANSI.sub("", str(error))
        raise NotebookError(f"{path}: a cell failed:\n{plain}") from None
    target = out or path
    text = nbformat.writes(normalize(notebook))
    target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return target


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ctxlab.analysis.notebooks",
        description="Execute notebooks in place against a results folder (deterministic outputs).",
    )
    parser.add_argument("notebooks", nargs="+", type=Path, help="the .ipynb files to execute")
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="the results root (default: results)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="notebooks executed side by side, each in a worker process with a kernel of its own "
        "(default: cores)",
    )
    return parser


def _executed(results: Path, path: Path) -> str | None:
    """Execute one notebook in place; the failure's message, or None when it ran."""
    try:
        execute_notebook(path, results)
    except NotebookError as error:
        return str(error)
    return None


def main(argv: Sequence[str] | None = None, *, err: TextIO | None = None) -> int:
    """Execute every notebook given; 0 when all ran, 1 when one failed, 2 on bad input."""
    err = err or sys.stderr
    args = _parser().parse_args(argv)
    if not (args.results / "index.md").is_file() and not any(args.results.glob("*/manifest.json")):
        print(f"--results {args.results}: no results here; run `make experiments` first", file=err)
        return 2
    missing = [str(p) for p in args.notebooks if not p.is_file()]
    if missing:
        print(f"no such notebook: {', '.join(missing)}", file=err)
        return 2
    if args.workers is not None and args.workers < 1:
        print(f"--workers {args.workers}: give at least 1", file=err)
        return 2
    errors = map_in_processes(functools.partial(_executed, args.results), args.notebooks, args.workers)
    for path, error in zip(args.notebooks, errors, strict=True):
        print(f"executed {path}" if error is None else error, file=err)
    return 1 if any(errors) else 0


if __name__ == "__main__":
    raise SystemExit(main())
