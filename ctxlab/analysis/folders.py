"""Results folders without pandas: which folders a root holds, and which run columns were swept.

Writing the index needs only these and the `runs` table, so `ctxlab run` does not import pandas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def result_folders(root: Path | str) -> list[Path]:
    """The scenario folders under a results root (or the folder itself), sorted by name."""
    root = Path(root)
    if (root / "manifest.json").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/manifest.json") if not p.parent.name.startswith("."))


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
