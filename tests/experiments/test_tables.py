"""The Parquet tables: pyarrow and pandas read a file of `ctxlab.experiments.parquet` as the table
pyarrow writes from the same values, and writing one imports neither pyarrow, numpy nor pandas
(a tenth of a 2,000-reply run)."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.experiments.columns import Column, ColumnType
from ctxlab.experiments.parquet import ParquetColumn, parquet_bytes
from ctxlab.experiments.tables import Table, write_parquet

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
def tables(draw: st.DrawFn) -> list[ParquetColumn]:
    rows = draw(st.integers(min_value=0, max_value=40))
    kinds = draw(st.lists(st.sampled_from(list(VALUES)), min_size=1, max_size=5))
    names = draw(
        st.lists(st.text(min_size=1, max_size=12), min_size=len(kinds), max_size=len(kinds), unique=True)
    )
    return [
        (name, kind, draw(st.lists(st.none() | VALUES[kind], min_size=rows, max_size=rows)))
        for name, kind in zip(names, kinds, strict=True)
    ]


def reference(columns: list[ParquetColumn]) -> pa.Table:
    """The table pyarrow builds from the same values."""
    return pa.Table.from_arrays(
        [pa.array(values, type=TYPES[kind]) for _, kind, values in columns], names=[n for n, _, _ in columns]
    )


@given(tables(), st.integers(min_value=1, max_value=7))
def test_pyarrow_reads_the_table_it_would_write(columns: list[ParquetColumn], page_rows: int) -> None:
    read = pq.ParquetFile(pa.BufferReader(parquet_bytes(columns, page_rows))).read()
    expected = reference(columns)
    assert read.schema == expected.schema
    assert read.equals(expected)
    assert read.to_pylist() == expected.to_pylist()


@given(tables())
def test_pandas_reads_the_frame_of_pyarrows_file(columns: list[ParquetColumn]) -> None:
    ours = pa.BufferReader(parquet_bytes(columns))
    theirs = pa.BufferOutputStream()
    pq.write_table(reference(columns), theirs)
    frame = pd.read_parquet(ours, dtype_backend="numpy_nullable")
    expected = pd.read_parquet(pa.BufferReader(theirs.getvalue()), dtype_backend="numpy_nullable")
    pd.testing.assert_frame_equal(frame, expected)


def test_nan_infinities_and_a_zero_sign_round_trip() -> None:
    values = [float("nan"), float("inf"), -math.inf, -0.0, None, 1e-300]
    read = pq.ParquetFile(pa.BufferReader(parquet_bytes([("f", "float", values)]))).read()
    got = read.column("f").to_pylist()
    assert math.isnan(got[0]) and got[1:3] == [math.inf, -math.inf] and got[4:] == [None, 1e-300]
    assert math.copysign(1, got[3]) == -1


def test_a_long_column_spans_pages_and_reads_whole() -> None:
    values = [None if i % 7 == 0 else i for i in range(10_000)]
    data = parquet_bytes([("i", "int", values), ("s", "string", [str(v) for v in values])], page_rows=999)
    read = pq.ParquetFile(pa.BufferReader(data)).read()
    assert read.column("i").to_pylist() == values
    assert read.column("s").to_pylist() == [str(v) for v in values]


def test_the_bytes_are_pinned() -> None:
    """The file's bytes are the lab's (`gzipped` pages, no version or clock): the same on every
    Python, so a change to them is made on purpose, here."""
    data = parquet_bytes(
        [
            ("run_id", "string", ["a-1", "a-1", None]),
            ("calls", "int", [3, None, -1]),
            ("cost", "float", [0.5, None, 1e-9]),
            ("ok", "bool", [True, False, None]),
        ]
    )
    digest = "6d0708a734965b924d10316d6e1eef3ca08325ebe0e0f47c5412173b45360316"
    assert hashlib.sha256(data).hexdigest() == digest


def test_the_bytes_are_the_tables_alone() -> None:
    columns: list[ParquetColumn] = [("a", "string", ["x", None]), ("b", "int", [1, 2])]
    assert parquet_bytes(columns) == parquet_bytes([("a", "string", ["x", None]), ("b", "int", [1, 2])])
    assert parquet_bytes(columns) != parquet_bytes([("a", "string", ["y", None]), ("b", "int", [1, 2])])


def test_a_value_that_does_not_fit_raises_and_writes_nothing(tmp_path: Path) -> None:
    table = Table(columns=(Column(name="a", type="int", meaning="a"),), rows=({"a": 2**63},))
    with pytest.raises(ValueError, match="column 'a' holds a value its int type cannot"):
        write_parquet(table, tmp_path / "t.parquet")
    assert not (tmp_path / "t.parquet").exists()
    with pytest.raises(ValueError, match="column 's' holds a value its string type cannot"):
        parquet_bytes([("s", "string", ["\ud800"])])
    with pytest.raises(ValueError, match="as many values"):
        parquet_bytes([("a", "int", [1]), ("b", "int", [])])


def test_writing_a_table_imports_neither_pyarrow_numpy_nor_pandas(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ctxlab.experiments.columns import Column\n"
        "from ctxlab.experiments.tables import Table, write_parquet\n"
        "table = Table(columns=(Column(name='a', type='int', meaning='a'),), rows=({'a': 1}, {'a': None}))\n"
        f"write_parquet(table, Path({str(tmp_path / 't.parquet')!r}))\n"
        "print(sorted({'pyarrow', 'numpy', 'pandas'} & set(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "[]"
    assert pq.read_table(tmp_path / "t.parquet").column("a").to_pylist() == [1, None]
