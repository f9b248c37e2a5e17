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
    """The scenario folders under a results root (or the folder itself), sorted by name: each
    holds a `manifest.json` file (a folder of that name makes none)."""
    root = Path(root)
    if (root / "manifest.json").is_file():
        return [root]
    return sorted(
        p.parent for p in root.glob("*/manifest.json") if not p.parent.name.startswith(".") and p.is_file()
    )


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
    except OSError as error:  # a folder of that name, or a file the user may not read
        raise ResultsError(path, f"cannot read it: {error.strerror or first_line(error)}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ResultsError(path, f"not JSON: {first_line(error)}") from None
    if not (isinstance(manifest, dict) and "scenario" in manifest and isinstance(manifest.get("runs"), list)):
        raise ResultsError(path, "not a results manifest: no `scenario` and `runs` list")
    wrong = _shape_problem(manifest)
    if wrong:
        raise ResultsError(path, f"not a results manifest: {wrong}")
    return manifest


def _shape_problem(manifest: Mapping[str, Any]) -> str | None:
    """Which part of a manifest that the readers of a folder take is not of its shape (an edited
    or foreign file), or None.

    >>> _shape_problem({"runs": [{"run_id": "a"}], "sweep": None})
    '`sweep` is not a list of objects, each with its `path`'
    """

    def objects(key: str, field: str) -> bool:
        value = manifest.get(key, [])
        return isinstance(value, list) and all(
            isinstance(i, dict) and isinstance(i.get(field), str) for i in value
        )

    def mapping(key: str, kinds: type | tuple[type, ...]) -> bool:
        value = manifest.get(key, {})
        return isinstance(value, dict) and all(isinstance(v, kinds) for v in value.values())

    warnings = manifest.get("warnings", [])
    checks = (
        (objects("runs", "run_id"), "`runs` is not a list of objects, each with its `run_id`"),
        (objects("sweep", "path"), "`sweep` is not a list of objects, each with its `path`"),
        (mapping("unmeasured", str), "`unmeasured` is not an object of texts"),
        (mapping("columns", dict), "`columns` is not an object of objects"),
        (mapping("prices", (int, float)), "`prices` is not an object of numbers"),
        (
            isinstance(warnings, list) and all(isinstance(w, str) for w in warnings),
            "`warnings` is not a list of texts",
        ),
    )
    return next((why for fits, why in checks if not fits), None)


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


RUN_KEYS = ("run_id", "status")
"""The `runs` columns every reader of a folder takes."""


def check_runs(path: Path, manifest: Mapping[str, Any], columns: Iterable[str], run_ids: list[str]) -> None:
    """The runs table read from `path` has the columns every reader takes and holds the
    manifest's runs, in its order (a file cut short at a line boundary still parses, with runs
    missing).

    Raises:
        ResultsError: it does not.
    """
    missing = [key for key in RUN_KEYS if key not in set(columns)]
    if missing:
        raise ResultsError(path, f"no `{missing[0]}` column")
    expected = [str(entry["run_id"]) for entry in manifest["runs"]]
    if run_ids != expected:
        raise ResultsError(path, f"holds {len(run_ids)} of the manifest's {len(expected)} runs, or others")
