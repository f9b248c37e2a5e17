"""The Parquet tables: each column built from its buffers is the array `pyarrow.array` builds from
the same values, and writing a table does not import pandas (half a second of every run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.experiments.columns import Column, ColumnType
from ctxlab.experiments.tables import Table, arrow_column, write_parquet

ROOT = Path(__file__).resolve().parents[2]
TYPES: dict[ColumnType, Any] = {
    "string": pa.string(),
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
}
VALUES: dict[ColumnType, st.SearchStrategy[Any]] = {
    "string": st.text(),
    "int": st.integers(min_value=-(2**63), max_value=2**63 - 1),
    "float": st.floats(allow_nan=False),
    "bool": st.booleans(),
}


@st.composite
def columns(draw: st.DrawFn) -> tuple[ColumnType, list[Any]]:
    kind = draw(st.sampled_from(list(VALUES)))
    return kind, draw(st.lists(st.none() | VALUES[kind], max_size=40))


@given(columns())
def test_a_column_is_the_array_pyarrow_builds_from_its_values(column: tuple[ColumnType, list[Any]]) -> None:
    kind, values = column
    built = arrow_column(values, kind)
    built.validate(full=True)
    expected = pa.array(values, type=TYPES[kind])
    assert built.equals(expected)
    assert built.null_count == values.count(None)
    assert built.to_pylist() == values


def test_nan_and_infinities_round_trip_and_the_file_is_the_one_pyarrow_writes(tmp_path: Path) -> None:
    values: dict[ColumnType, list[Any]] = {
        "float": [float("nan"), float("inf"), -0.0, None, 1e-300],
        "string": ["é", "", None, "a\x00b"],
        "int": [None, None],
        "bool": [],
    }
    table = Table(
        columns=tuple(Column(name=k, type=k, meaning=k) for k in values),
        rows=tuple({k: v[i] for k, v in values.items() if i < len(v)} for i in range(5)),
    )
    write_parquet(table, tmp_path / "ours.parquet")
    padded = {k: [row.get(k) for row in table.rows] for k in values}
    reference = pa.Table.from_arrays(
        [pa.array(v, type=TYPES[k]) for k, v in padded.items()], names=list(values)
    )
    pq.write_table(reference, tmp_path / "pyarrow.parquet")
    assert (tmp_path / "ours.parquet").read_bytes() == (tmp_path / "pyarrow.parquet").read_bytes()
    assert str(pq.read_table(tmp_path / "ours.parquet").column("float").to_pylist()[0]) == "nan"


def test_writing_a_table_does_not_import_pandas(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ctxlab.experiments.columns import Column\n"
        "from ctxlab.experiments.tables import Table, write_parquet\n"
        "table = Table(columns=(Column(name='a', type='int', meaning='a'),), rows=({'a': 1}, {'a': None}))\n"
        f"write_parquet(table, Path({str(tmp_path / 't.parquet')!r}))\n"
        "print('pandas' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "False"
    assert pq.read_table(tmp_path / "t.parquet").column("a").to_pylist() == [1, None]
