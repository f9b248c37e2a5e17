"""Loading a results folder into pandas: the manifest, `runs` and `calls`.

Invariants:
- Parquet is read when present (typed, nullable columns); otherwise CSV, with the same column
  types restored from the manifest's column descriptions.
- Nothing is recomputed here: the frames hold exactly what the run wrote.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

_DTYPES: dict[str, Any] = {"string": "string", "int": "Int64", "float": "Float64", "bool": "boolean"}
LISTS = ("events", "violations")
"""`;`-joined columns: an empty cell is an empty list, not a missing value."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Results:
    """One scenario's results."""

    folder: Path
    manifest: dict[str, Any]
    runs: pd.DataFrame
    calls: pd.DataFrame

    @property
    def name(self) -> str:
        """The scenario's name."""
        return str(self.manifest["scenario"])

    def run_settings(self, run_id: str) -> dict[str, Any]:
        """The manifest's entry for one run (params, model and strategy settings)."""
        for entry in self.manifest["runs"]:
            if entry["run_id"] == run_id:
                return dict(entry)
        raise KeyError(f"no run {run_id!r} in {self.folder}")

    def swept_columns(self) -> list[str]:
        """The `param.*` columns of swept paths, in sweep order, each named by its run column."""
        columns = []
        for axis in self.manifest.get("sweep", []):
            path = str(axis["path"])
            if path.startswith("strategies."):
                path = "strategy." + path.split(".", 2)[2]
            if f"param.{path}" in self.runs.columns and f"param.{path}" not in columns:
                columns.append(f"param.{path}")
        return columns


def _frame(folder: Path, name: str, columns: dict[str, str]) -> pd.DataFrame:
    parquet = folder / f"{name}.parquet"
    if parquet.is_file():
        return pd.read_parquet(parquet, dtype_backend="numpy_nullable")
    types: dict[str, Any] = {column: _DTYPES[text.split(":", 1)[0]] for column, text in columns.items()}
    frame = pd.read_csv(folder / f"{name}.csv", dtype="string", keep_default_na=False, na_values=[""])
    for column, dtype in types.items():
        if column in frame:
            source = frame[column]
            if dtype == "boolean":
                frame[column] = source.map({"true": True, "false": False}, na_action="ignore").astype(
                    "boolean"
                )
            elif dtype != "string":
                frame[column] = pd.to_numeric(source).astype(dtype)
            elif column in LISTS:
                frame[column] = source.fillna("")
    return frame


def load_results(folder: Path | str) -> Results:
    """A scenario's results folder (`<out>/<scenario>/`) as DataFrames.

    Raises:
        FileNotFoundError: the folder has no `manifest.json`.
    """
    folder = Path(folder)
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise FileNotFoundError(
            f"{folder} is not a results folder (no manifest.json); run `ctxlab run` first"
        )
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    columns = manifest.get("columns", {})
    return Results(
        folder=folder,
        manifest=manifest,
        runs=_frame(folder, "runs", columns.get("runs", {})),
        calls=_frame(folder, "calls", columns.get("calls", {})),
    )


def result_folders(root: Path | str) -> list[Path]:
    """The scenario folders under a results root (or the folder itself), sorted by name."""
    root = Path(root)
    if (root / "manifest.json").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/manifest.json") if not p.parent.name.startswith("."))


def read_requests(results: Results, run_id: str) -> list[dict[str, Any]]:
    """The recorded requests of a run (`requests/<run_id>.jsonl.gz`), in call order.

    Raises:
        FileNotFoundError: the run's requests were not recorded.
    """
    path = results.folder / "requests" / f"{run_id}.jsonl.gz"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no recorded requests; run with record_requests (or `rerun`)")
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    return [json.loads(line) for line in lines if line]
