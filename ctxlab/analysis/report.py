"""`<out>/index.md`: every scenario's key numbers and figures on one page.

Invariants:
- One section per results folder under the root, sorted by scenario name; the page depends only
  on the results files (never on the wall clock), so the same results give the same page.
- Links are relative to the root, so the folder can be moved or published as it is.
- A folder that cannot be read (cut short, edited) gets a section that says so, and the others
  are shown; a column a later version added reads as empty in a folder written before it.
"""

from __future__ import annotations

import csv
import math
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.analysis.folders import (
    ResultsError,
    check_runs,
    first_line,
    read_manifest,
    result_folders,
    swept_columns,
)
from ctxlab.analysis.labels import value_text

EMBEDDED = ("overlay", "cumulative", "heatmap", "sweep", "cache-hit-rate", "retention")
"""Figure kinds shown inline; per-run sawtooth plots are shown inline only for small scenarios."""

MAX_INLINE_SAWTOOTH = 3
NO_FIGURES = (
    "_No figures: a sawtooth is drawn per run of a scenario of at most 16 runs, an overlay of 2 to 8 "
    "runs on one workload, and sweep figures of swept strategies; read `runs.csv` and `calls.csv`._"
)
"""What the index says of a folder whose figures are none (every preset in one scenario)."""


@dataclass(frozen=True, slots=True)
class Runs:
    """What the index shows of one results folder: its manifest and its `runs` table as plain
    rows (a missing value is None), in file order."""

    folder: Path
    manifest: dict[str, Any]
    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]

    @property
    def name(self) -> str:
        """The scenario's name."""
        return str(self.manifest["scenario"])


def read_runs(folder: Path) -> Runs:
    """A results folder's manifest and runs: from `runs.csv`, typed as its manifest describes the
    columns (the standard library reads it, so writing the index imports neither pyarrow nor
    pandas); a folder without either from `runs.parquet` with pyarrow, or through `load_results`.

    Raises:
        ResultsError: a file of it cannot be read.
    """
    manifest = read_manifest(folder)
    types = _column_types(manifest)
    csv_file, parquet = folder / "runs.csv", folder / "runs.parquet"
    if csv_file.is_file() and types is not None:
        columns, rows = _csv_rows(csv_file, types)
        check_runs(csv_file, manifest, columns, [str(row.get("run_id")) for row in rows])
    elif parquet.is_file():
        import pyarrow.parquet as pq

        try:
            table = pq.ParquetFile(parquet).read()  # `read_table` would import pandas
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
            raise ResultsError(parquet, first_line(error)) from None
        columns, rows = tuple(table.column_names), table.to_pylist()
        check_runs(parquet, manifest, columns, [str(row.get("run_id")) for row in rows])
    else:
        from ctxlab.analysis.results import load_results

        frame = load_results(folder).runs
        columns = tuple(str(c) for c in frame.columns)
        records = frame.astype(object).where(frame.notna(), None).to_dict("records")
        rows = [{str(key): value for key, value in record.items()} for record in records]
    return Runs(folder=folder, manifest=manifest, columns=columns, rows=tuple(rows))


def _column_types(manifest: dict[str, Any]) -> dict[str, str] | None:
    """The runs columns' types as the manifest describes them (`int: ...`), or None for a
    manifest without descriptions."""
    described = manifest.get("columns", {}).get("runs")
    if not isinstance(described, dict) or not described:
        return None
    return {str(name): str(text).split(":", 1)[0] for name, text in described.items()}


def _truth(cell: str) -> bool:
    if cell not in ("true", "false"):
        raise ValueError(f"{cell!r} is neither true nor false")
    return cell == "true"


_READ: dict[str, Callable[[str], Any]] = {
    "int": int,
    "float": float,
    "bool": _truth,
    "string": str,
}


def _csv_rows(path: Path, types: dict[str, str]) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """A CSV table's header and rows, each cell as its column's type (an empty cell None)."""
    rows: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8", newline="") as file:
            reader = csv.reader(file)
            header = tuple(next(reader, ()))
            read = [_READ.get(types.get(name, "string"), str) for name in header]
            for record in reader:
                rows.append(_typed_row(header, read, record, reader.line_num))
    except (OSError, UnicodeDecodeError, csv.Error, ValueError) as error:
        raise ResultsError(path, first_line(error)) from None
    return header, rows


def _typed_row(
    header: tuple[str, ...], read: list[Callable[[str], Any]], record: list[str], line: int
) -> dict[str, Any]:
    if len(record) != len(header):
        raise ValueError(f"line {line} has {len(record)} cells, the header {len(header)}")
    try:
        cells = zip(header, read, record, strict=True)
        return {name: typed(cell) if cell else None for name, typed, cell in cells}
    except ValueError as bad:
        raise ValueError(f"line {line}: {bad}") from None


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return value_text(value).replace("|", "\\|")


def _table(results: Runs) -> list[str]:
    swept = swept_columns(results.manifest, results.columns)
    columns = [
        ("run", "run_id"),
        ("strategy", "strategy"),
        *[(c.removeprefix("param."), c) for c in swept],
        ("calls", "calls"),
        ("peak input tokens", "peak_input_tokens"),
        ("total input tokens", "total_input_tokens"),
        ("compressions", "compressions"),
        ("cost", "cost"),
        ("violations (openai/anthropic/bedrock)", "violations"),
        ("over-window calls", "over_window_calls"),
        ("status", "status"),
    ]
    lines = ["| " + " | ".join(title for title, _ in columns) + " |", "|" + "---|" * len(columns)]
    for row in results.rows:
        cells = []
        for _, column in columns:
            if column == "violations":
                cells.append(
                    "/".join(_cell(row.get(f"violations_{p}")) for p in ("openai", "anthropic", "bedrock"))
                )
            elif column == "status" and row["status"] != "ok":
                cells.append(f"**{row['status']}**: {_cell(row.get('error'))[:120]}")
            else:
                cells.append(_cell(row.get(column)))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _figures(results: Runs, root: Path) -> list[str]:
    folder = results.folder / "figures"
    if not folder.is_dir():
        return ["_No figures (run without `--no-plots`, or `ctxlab plot` the folder)._"]
    pngs = sorted(folder.glob("*.png"))
    if not pngs:
        return [NO_FIGURES]
    link = {p: Path(os.path.relpath(p, root)).as_posix() for p in pngs}
    inline = [p for p in pngs if p.stem.split("-")[0] in EMBEDDED or p.stem.startswith("cache-hit-rate")]
    sawtooth = [p for p in pngs if p.stem.startswith("sawtooth-")]
    if len(sawtooth) <= MAX_INLINE_SAWTOOTH:
        inline = sawtooth + inline
        sawtooth = []
    lines = [line for p in inline for line in (f"![{p.stem}]({link[p]})", "")]
    if sawtooth:
        runs = ", ".join(f"[{p.stem.removeprefix('sawtooth-')}]({link[p]})" for p in sawtooth)
        lines += [f"Sawtooth per run: {runs}", ""]
    return lines


def section(results: Runs, root: Path) -> list[str]:
    """The index section of one scenario, headed by its folder's name (the table of contents
    links to it), with the scenario's name beside it where the folder was renamed."""
    manifest = results.manifest
    base = Path(os.path.relpath(results.folder, root)).as_posix()
    failed = sum(1 for row in results.rows if row["status"] != "ok")
    lines = [f"## {results.folder.name}", ""]
    if results.name != results.folder.name:
        lines += [f"Scenario `{results.name}`.", ""]
    if manifest.get("description"):
        lines += [str(manifest["description"]), ""]
    files = " · ".join(f"[{name}]({base}/{name})" for name in ("runs.csv", "calls.csv", "manifest.json"))
    count = f"{len(results.rows)} runs" + (f" (**{failed} failed**)" if failed else "")
    lines += [
        f"`{manifest.get('source', '')}` · {count} · {files}",
        "",
        *_table(results),
        "",
    ]
    for warning in manifest.get("warnings", []):
        lines.append(f"- {warning}")
    reasons: dict[str, list[str]] = {}
    for column, reason in manifest.get("unmeasured", {}).items():
        reasons.setdefault(reason, []).append(f"`{column}`")
    for reason, columns in reasons.items():
        lines.append(f"- Empty {', '.join(columns)}: {reason}.")
    lines += ["", *_figures(results, root), ""]
    return lines


def tune_folders(root: Path) -> list[Path]:
    """The `<scenario>/tune/` folders `ctxlab tune` wrote under `root`, sorted by scenario."""
    return sorted(p.parent for p in root.glob("*/tune/tune.json") if not p.parent.parent.name.startswith("."))


def tune_section(folders: list[Path], root: Path) -> list[str]:
    """The index's links to every tune search: its summary, trials, best settings and front."""
    if not folders:
        return []
    lines = ["## Tuned settings", ""]
    for folder in folders:
        base = Path(os.path.relpath(folder, root)).as_posix()
        files = " · ".join(
            f"[{name}]({base}/{name})" for name in ("summary.md", "trials.csv", "pareto.csv", "best.yaml")
        )
        lines += [f"### {folder.parent.name}", "", files, "", f"![pareto]({base}/figures/pareto.png)", ""]
    return lines


def heading_anchors(lines: list[str]) -> dict[int, str]:
    """The anchors GitHub's Markdown renderer gives the headings among `lines`, by line: the
    heading's text (a closing run of `#` left out) in lower case, characters other than letters,
    combining marks, digits, `_`, `-` and spaces left out, spaces as `-`; an anchor met before
    gets `-1`, `-2`, ... as the renderer numbers it. Headings are plain names here (a folder's,
    the lab's own): Markdown inside one (`__init__` read as bold) is not rendered first."""
    seen: dict[str, int] = {}
    anchors: dict[int, str] = {}
    for at, line in enumerate(lines):
        hashes = len(line) - len(line.lstrip("#"))
        if not 1 <= hashes <= 6 or not line[hashes:].startswith(" "):
            continue
        title = re.sub(r"(^|\s)#+\s*$", "", line[hashes:]).strip().lower()
        slug = "".join(c for c in title if _kept(c)).replace(" ", "-")
        anchor = slug
        while anchor in seen:
            seen[slug] += 1
            anchor = f"{slug}-{seen[slug]}"
        seen.setdefault(anchor, 0)
        anchors[at] = anchor
    return anchors


def _kept(character: str) -> bool:
    """Whether an anchor keeps a heading's character."""
    return character.isalnum() or character in "_- " or unicodedata.category(character).startswith("M")


def write_index(root: Path) -> Path:
    """Write `<root>/index.md` over every results folder under `root`, its table of contents
    linking each section's heading."""
    head = [
        "# ctxlab results",
        "",
        "Written by `ctxlab run` (regenerate figures with `ctxlab plot`). One section per scenario: the "
        "key numbers of every run, then its figures (PNG; an SVG beside each with `--svg`). Token counts "
        "are the lab's own; cost is in the scenario's price units per million tokens.",
        "",
    ]
    body: list[str] = []
    entries: list[tuple[str, int]] = []  # a contents entry and where its heading is in `body`
    for folder in result_folders(root):
        entries.append((folder.name, len(body)))
        try:
            body += section(read_runs(folder), root)
        except ResultsError as error:  # one unreadable folder leaves the others' sections
            where = Path(os.path.relpath(error.path, root)).as_posix()
            body += [f"## {folder.name}", "", f"_Not shown: `{where}` cannot be read ({error.why})._", ""]
    tuned = tune_folders(root)
    if tuned:
        entries.append(("Tuned settings", len(body)))
        body += tune_section(tuned, root)
    anchors = heading_anchors(head + body)
    contents = [f"- [{name}](#{anchors[len(head) + at]})" for name, at in entries]
    lines = [*head, *contents, "", *body]
    path = root / "index.md"
    temporary = root / f".index.md.tmp-{os.getpid()}"
    temporary.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return path
