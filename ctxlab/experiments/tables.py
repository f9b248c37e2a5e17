"""The `runs`, `calls` and `events` tables: rows from run results, written as CSV and Parquet.

Invariants:
- Rows follow the configs' order (grid order), calls within a run in call order (the run's own
  calls, then each sub-agent's, labelled by `agent`), events within a call in the order they
  happened: never the order runs finished in.
- CSV bytes depend only on the values: `\\n` line ends, empty cell for a missing value, `true` /
  `false`, integers in decimal, floats as Python's shortest round-trip text, lists and mappings
  as compact JSON. The Parquet file holds the same values with typed columns.
- A `param.<path>` column's type is inferred from its values: bool, int, float (ints and floats
  mixed), else string (non-strings as compact JSON).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.experiments.columns import (
    CALL_COLUMNS,
    EVENT_COLUMNS,
    RUN_HEAD,
    RUN_MEASURES,
    Column,
    ColumnType,
)
from ctxlab.experiments.execute import RunResult
from ctxlab.experiments.grid import RunConfig
from ctxlab.experiments.parquet import write_parquet_file


@dataclass(frozen=True, slots=True, kw_only=True)
class Table:
    """Columns and rows (each row a mapping by column name)."""

    columns: tuple[Column, ...]
    rows: tuple[dict[str, Any], ...]


def infer_type(values: Sequence[Any]) -> ColumnType:
    """The column type of a `param.*` column.

    >>> infer_type([1, None, 2]), infer_type([1, 0.5]), infer_type([True]), infer_type([[2], "a"])
    ('int', 'float', 'bool', 'string')
    """
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    numbers = [v for v in present if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) == len(present):
        return "int" if all(isinstance(v, int) for v in numbers) else "float"
    return "string"


def _cast(value: Any, kind: ColumnType) -> Any:
    if value is None:
        return None
    if kind == "float":
        return float(value)
    if kind == "string" and not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


def runs_table(configs: Sequence[RunConfig], results: Sequence[RunResult]) -> Table:
    """One row per run, in config order."""
    names = list(dict.fromkeys(name for config in configs for name in config.params))
    params = tuple(
        Column(
            name=f"param.{name}",
            type=infer_type([c.params.get(name) for c in configs]),
            meaning=f"the run's `{name}` (swept or set in the scenario)",
        )
        for name in names
    )
    rows = []
    for config, result in zip(configs, results, strict=True):
        row: dict[str, Any] = {
            "run_id": config.run_id,
            "strategy": config.strategy,
            "config_hash": config.config_hash,
            "seed": config.config["seed"],
        }
        for column, name in zip(params, names, strict=True):
            row[column.name] = _cast(config.params.get(name), column.type)
        row.update({c.name: result.measures.get(c.name) for c in RUN_MEASURES})
        row["status"], row["error"] = result.status, result.error or None
        rows.append(row)
    return Table(columns=(*RUN_HEAD, *params, *RUN_MEASURES), rows=tuple(rows))


def calls_table(results: Sequence[RunResult]) -> Table:
    """One row per model call, runs in config order."""
    return Table(columns=CALL_COLUMNS, rows=tuple(row for result in results for row in result.calls))


def events_table(results: Sequence[RunResult]) -> Table:
    """One row per context event, runs in config order."""
    return Table(columns=EVENT_COLUMNS, rows=tuple(row for result in results for row in result.events))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str | int):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def csv_text(table: Table) -> str:
    """The table as CSV text."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([c.name for c in table.columns])
    for row in table.rows:
        writer.writerow([_cell(row.get(c.name)) for c in table.columns])
    return out.getvalue()


def write_csv(table: Table, path: Path) -> None:
    """Write the table as CSV (UTF-8)."""
    path.write_text(csv_text(table), encoding="utf-8", newline="")


def write_parquet(table: Table, path: Path) -> None:
    """Write the table as Parquet with typed columns (`ctxlab.experiments.parquet`)."""
    columns = [
        (c.name, c.type, [_cast(row.get(c.name), c.type) for row in table.rows]) for c in table.columns
    ]
    write_parquet_file(path, columns)
