"""Loading a results folder into pandas: the manifest, `runs`, `calls` and `events`, and which
calls had an event of a kind.

Invariants:
- Parquet is read when present (typed, nullable columns); otherwise CSV, with the same column
  types restored from the manifest's column descriptions.
- Nothing is recomputed here: the frames hold exactly what the run wrote. The one exception is a
  folder written before the `events` table existed: its events are read from `calls.events`.
- A folder whose runs are not the manifest's, or whose calls are not as many as its runs count,
  is refused (`ResultsError`): a file cut short at a line boundary still parses, and shows less.
- `calls` and `events` hold the runs' own calls (`agent` `parent`, or every row of a folder
  written before sub-agents' calls were), `subagent_calls` and `subagent_events` the sub-agents'
  rows, so every figure and analysis of a run's own calls reads `calls` as it always has.
- Figures and analyses ask which calls had an event through `has_event` over `events`; nothing
  outside this loader and the writer takes `calls.events` apart.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import pandas as pd

from ctxlab.analysis.folders import ResultsError, check_runs, first_line, read_manifest, swept_columns
from ctxlab.core.events import EventKind
from ctxlab.experiments.measures import PARENT

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
    events: pd.DataFrame
    """One row per context event: `run_id`, `call_index`, `order`, `kind`, `detail`, `agent`."""
    subagent_calls: pd.DataFrame
    """The sub-agents' calls (`agent` `sub-1`, `sub-1.1`, ...; `delegated_at`); empty without any."""
    subagent_events: pd.DataFrame
    """The events of the sub-agents' calls."""

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
        return swept_columns(self.manifest, self.runs.columns)


def _source(folder: Path, name: str) -> Path:
    """The file a table is read from: its Parquet file, or its CSV file without one."""
    parquet = folder / f"{name}.parquet"
    return parquet if parquet.is_file() else folder / f"{name}.csv"


def _frame(folder: Path, name: str, columns: dict[str, str]) -> pd.DataFrame:
    parquet = folder / f"{name}.parquet"
    path = _source(folder, name)
    try:
        if path == parquet:
            return pd.read_parquet(parquet, dtype_backend="numpy_nullable")
        return _csv_frame(path, columns)
    except (OSError, ValueError) as error:  # pyarrow's and pandas' read errors are ValueErrors
        raise ResultsError(path, first_line(error)) from None


def _csv_frame(path: Path, columns: dict[str, str]) -> pd.DataFrame:
    types: dict[str, Any] = {column: _DTYPES[text.split(":", 1)[0]] for column, text in columns.items()}
    frame = pd.read_csv(path, dtype="string", keep_default_na=False, na_values=[""])
    for column, dtype in types.items():
        if column in frame:
            source = frame[column]
            if dtype == "boolean":
                truth = source.map(_TRUTH, na_action="ignore")
                frame[column] = _typed(column, source, truth, "true or false").astype("boolean")
            elif dtype == "Int64":
                numbers = pd.to_numeric(source, errors="coerce")
                whole = numbers.where((numbers % 1 == 0) & (numbers.abs() < 2**63))  # what Int64 holds
                frame[column] = _typed(column, source, whole, "a whole number").astype("Int64")
            elif dtype != "string":
                frame[column] = pd.to_numeric(source).astype(dtype)
            elif column in LISTS:
                frame[column] = source.fillna("")
    return frame


_TRUTH = {"true": True, "false": False}


def _typed(column: str, cells: pd.Series, read: pd.Series, kind: str) -> pd.Series:
    """`read`, the column's cells as its type (missing where a cell was not one).

    Raises:
        ValueError: a cell that is not `kind`, named with its line.
    """
    wrong = read.isna() & cells.notna()
    if wrong.any():
        at = int(wrong.to_numpy().argmax())
        raise ValueError(f"line {at + 2}: {column} {cells.iloc[at]!r} is not {kind}")
    return read


def load_results(folder: Path | str) -> Results:
    """A scenario's results folder (`<out>/<scenario>/`) as DataFrames.

    Raises:
        FileNotFoundError: the folder has no `manifest.json`.
        ResultsError: a file of it cannot be read (cut short, edited, or not ctxlab's).
    """
    folder = Path(folder)
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise FileNotFoundError(
            f"{folder} is not a results folder (no manifest.json); run `ctxlab run` first"
        )
    manifest = read_manifest(folder)
    columns = manifest.get("columns", {})
    calls = _frame(folder, "calls", columns.get("calls", {}))
    written = (folder / "events.parquet").is_file() or (folder / "events.csv").is_file()
    events = _frame(folder, "events", columns.get("events", {})) if written else _events_of(calls)
    own_calls, sub_calls = _split(calls)
    own_events, sub_events = _split(events)
    runs = _frame(folder, "runs", columns.get("runs", {}))
    _check_runs(folder, manifest, runs)
    _check_calls(folder, runs, own_calls, "calls")
    _check_calls(folder, runs, sub_calls, "subagent_calls")
    return Results(
        folder=folder,
        manifest=manifest,
        runs=runs,
        calls=own_calls,
        events=own_events,
        subagent_calls=sub_calls,
        subagent_events=sub_events,
    )


def _check_runs(folder: Path, manifest: dict[str, Any], runs: pd.DataFrame) -> None:
    """The runs table holds the manifest's runs, in its order, with the columns every reader
    takes (`folders.check_runs`)."""
    found = runs["run_id"].astype(str).tolist() if "run_id" in runs.columns else []
    check_runs(_source(folder, "runs"), manifest, [str(c) for c in runs.columns], found)


def _check_calls(folder: Path, runs: pd.DataFrame, calls: pd.DataFrame, column: str) -> None:
    """Each run has as many rows in the calls table as its `column` (`calls` for its own,
    `subagent_calls` for its sub-agents'; not checked in a folder written before the column).

    Raises:
        ResultsError: a run has more or fewer.
    """
    if column not in runs.columns or "run_id" not in calls.columns:
        return
    counted = calls["run_id"].astype(str).value_counts()
    for run_id, expected in zip(runs["run_id"].astype(str), runs[column], strict=True):
        if not pd.isna(expected) and int(counted.get(run_id, 0)) != int(expected):
            why = f"run {run_id} has {int(counted.get(run_id, 0))} rows, its {column} is {int(expected)}"
            raise ResultsError(_source(folder, "calls"), why)


def _split(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The parent's rows and the sub-agents' (none in a folder without an `agent` column)."""
    if "agent" not in frame.columns:
        return frame, frame.iloc[0:0]
    own = (frame["agent"] == PARENT).fillna(True).to_numpy(dtype=bool)
    return frame.loc[own].reset_index(drop=True), frame.loc[~own].reset_index(drop=True)


def _events_of(calls: pd.DataFrame) -> pd.DataFrame:
    """The `events` table of a folder written before it existed, from `calls.events`."""
    agents = (
        calls["agent"] if "agent" in calls.columns else pd.Series([PARENT] * len(calls), index=calls.index)
    )
    cells = zip(calls["run_id"], calls["call_index"], calls["events"], agents, strict=True)
    rows = [
        {
            "run_id": run_id,
            "call_index": index,
            "order": order,
            "kind": kind,
            "detail": detail or pd.NA,
            "agent": agent,
        }
        for run_id, index, cell, agent in cells
        for order, (kind, _, detail) in enumerate(t.partition(":") for t in str(cell).split(";") if t)
    ]
    columns = ["run_id", "call_index", "order", "kind", "detail", "agent"]
    frame = pd.DataFrame(rows, columns=columns if "agent" in calls.columns else columns[:-1])
    types = {"call_index": "Int64", "order": "Int64", "kind": "string", "detail": "string"}
    if "agent" in calls.columns:
        types["agent"] = "string"
    return frame.astype({"run_id": "string", **types})


def has_event(calls: pd.DataFrame, events: pd.DataFrame, kind: EventKind) -> pd.Series:
    """Per row of `calls`, whether its call had an event of `kind` (matched on `run_id` and
    `call_index`; `events` may hold other runs too).

    >>> calls = pd.DataFrame({"run_id": ["a", "a", "b"], "call_index": [0, 1, 1]})
    >>> events = pd.DataFrame({"run_id": ["a", "b"], "call_index": [1, 1],
    ...     "kind": ["compressed", "cleared"]})
    >>> has_event(calls, events, EventKind.COMPRESSED).tolist()
    [False, True, False]
    """
    chosen = events[events["kind"] == kind.value]
    keys = set(zip(chosen["run_id"], chosen["call_index"].astype(int), strict=True))
    pairs = zip(calls["run_id"], calls["call_index"].astype(int), strict=True)
    return pd.Series([pair in keys for pair in pairs], index=calls.index, dtype=bool)


RequestWire = Literal["openai", "anthropic"]
"""The form a run's requests were recorded in (`--wire`)."""


def read_requests(results: Results, run_id: str, wire: RequestWire = "openai") -> list[dict[str, Any]]:
    """The recorded requests of a run, in call order: `requests/<run_id>.jsonl.gz`, or with
    `wire="anthropic"` those recorded as the Anthropic Messages API receives them
    (`<run_id>.anthropic.jsonl.gz`, `--wire anthropic`).

    Raises:
        FileNotFoundError: the run's requests were not recorded in that form, or there is no
            such run (the message says which, and the form they were recorded in).
        ResultsError: the file cannot be read (not gzip, cut short, a line that is not JSON),
            naming it and the line.
        ValueError: `wire` is neither form.
    """
    return list(iter_requests(results, run_id, wire))


def iter_requests(results: Results, run_id: str, wire: RequestWire = "openai") -> Iterator[dict[str, Any]]:
    """`read_requests` one request at a time, read from the file as they are asked for (a long
    run's requests, each its whole context, add up to far more than its file). A missing file
    is raised here, a file that cannot be read at the request where it fails (and a `wire` that
    names no form, a ValueError)."""
    if wire not in get_args(RequestWire):
        raise ValueError(f"wire={wire!r} names no form requests are recorded in; use 'openai' or 'anthropic'")
    path = results.folder / "requests" / _request_file(run_id, wire)
    if path.is_file():
        return _requests(path)
    if run_id not in {str(entry["run_id"]) for entry in results.manifest["runs"]}:
        raise FileNotFoundError(f"{results.folder}: no run {run_id!r} (its runs are in runs.csv)")
    other: RequestWire = "anthropic" if wire == "openai" else "openai"
    if (results.folder / "requests" / _request_file(run_id, other)).is_file():
        raise FileNotFoundError(
            f"{path}: its requests were recorded in the {other} form; read them with wire={other!r}"
        )
    raise FileNotFoundError(f"{path}: no recorded requests; run with record_requests (or `rerun`)")


def _request_file(run_id: str, wire: RequestWire) -> str:
    """The file of a run's recorded requests in `wire`'s form (as `ctxlab run` names it)."""
    return f"{run_id}.jsonl.gz" if wire == "openai" else f"{run_id}.{wire}.jsonl.gz"


def _requests(path: Path) -> Iterator[dict[str, Any]]:
    if path.stat().st_size == 0:
        raise ResultsError(path, "it is empty: a request file holds a line per call")
    read = 0  # lines read so far
    try:
        # lines end at "\n" alone: a JSON string may hold U+2028 and the like, which splitlines splits at
        with gzip.open(path, "rt", encoding="utf-8", newline="\n") as lines:
            for line in lines:
                read += 1
                if line.strip():
                    yield json.loads(line)
    except (
        OSError,
        EOFError,
        zlib.error,
        ValueError,
    ) as error:  # not gzip, cut short or damaged, not UTF-8 or JSON
        where = f"line {read}: " if isinstance(error, json.JSONDecodeError) else ""
        raise ResultsError(path, f"{where}{first_line(error)}") from None
