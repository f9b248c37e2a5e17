"""Results folders without pandas: which folders a root holds, and which run columns were swept.

Writing the index needs only these and the `runs` table, so `ctxlab run` does not import pandas.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


class ResultsError(ValueError):
    """A results folder whose files cannot be read: cut short, edited, or not written by ctxlab.
    The message names the file and says what to do."""

    def __init__(self, path: Path, why: str) -> None:
        self.path, self.why = path, why
        super().__init__(
            f"{path}: cannot be read as ctxlab results ({why}); run its scenario again to rewrite "
            "the folder, or remove it"
        )

    def __reduce__(self) -> tuple[type[ResultsError], tuple[Path, str]]:
        return type(self), (self.path, self.why)  # raised in a worker process, it is unpickled here


def result_folders(root: Path | str) -> list[Path]:
    """The scenario folders under a results root (or the folder itself), sorted by name."""
    root = Path(root)
    if (root / "manifest.json").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/manifest.json") if not p.parent.name.startswith("."))


def first_line(error: BaseException) -> str:
    """What an error says, on one line (its type when it says nothing)."""
    return str(error).strip().split("\n", 1)[0] or type(error).__name__


def read_manifest(folder: Path) -> dict[str, Any]:
    """The `manifest.json` of a results folder: a JSON object with its `scenario` and `runs`.

    Raises:
        ResultsError: it is not UTF-8 JSON, or not an object with those keys.
    """
    path = folder / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ResultsError(path, f"not JSON: {first_line(error)}") from None
    if not (isinstance(manifest, dict) and "scenario" in manifest and isinstance(manifest.get("runs"), list)):
        raise ResultsError(path, "not a results manifest: no `scenario` and `runs` list")
    return manifest


def swept_columns(manifest: Mapping[str, Any], run_columns: Iterable[str]) -> list[str]:
    """The `param.*` columns of swept paths, in sweep order, each named by its run column.

    >>> manifest = {"sweep": [{"path": "strategies.0.context.trigger_ratio"}, {"path": "seed"}]}
    >>> swept_columns(manifest, ["run_id", "param.strategy.context.trigger_ratio"])
    ['param.strategy.context.trigger_ratio']
    """
    present = set(run_columns)
    columns: list[str] = []
    for axis in manifest.get("sweep", []):
        path = str(axis["path"])
        if path.startswith("strategies."):
            path = "strategy." + path.split(".", 2)[2]
        if f"param.{path}" in present and f"param.{path}" not in columns:
            columns.append(f"param.{path}")
    return columns
