"""The AI SDK and OpenCode readers' JSON spelling against JavaScript's own: Node 20's
`JSON.stringify(JSON.parse(text))` recorded for numbers of every form, strings and objects
(tests/data/js-json, written by `generate.mjs` beside it); a table of the cases that
tell JavaScript from Python; and, on generated values, text that reads back to the same value."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.workloads.importers.js_json import js_json, js_number, js_string

NODE = Path(__file__).parents[1] / "data/js-json/stringify.json"
NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?(e[+-][1-9][0-9]*)?")
"""How JavaScript writes a finite number: no `+` mantissa, no trailing zero, exponent unpadded."""


def _recorded() -> list[tuple[str, str]]:
    loaded: dict[str, Any] = json.loads(NODE.read_text(encoding="utf-8"))
    return [(text, written) for text, written in loaded["cases"]]


def test_every_recorded_text_is_written_as_node_writes_it() -> None:
    recorded = _recorded()
    assert len(recorded) > 2_000
    wrong = [(text, written, js_json(json.loads(text))) for text, written in recorded]
    assert [case for case in wrong if case[1] != case[2]] == []


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node to write the record again")
def test_the_record_is_what_node_writes_now() -> None:
    script = NODE.with_name("generate.mjs")
    ran = subprocess.run(["node", script.name], cwd=script.parent, capture_output=True, check=True, text=True)
    assert json.loads(ran.stdout)["cases"] == [list(case) for case in _recorded()]


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (0.1, "0.1"),
        (1e-7, "1e-7"),
        (-1e-7, "-1e-7"),
        (1e-6, "0.000001"),
        (123e-20, "1.23e-18"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (5e-324, "5e-324"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),
        (12345678901234567890, "12345678901234567000"),
        (10**400, "null"),
        (math.inf, "null"),
        (math.nan, "null"),
        (True, "true"),
        (None, "null"),
        ("\x00\x08\x1f\x7f", '"\\u0000\\b\\u001f\x7f"'),
        ("\u2028 😀", '"\u2028 😀"'),
        ("\ud800 \udfff\ud83d", '"\\ud800 \\udfff\\ud83d"'),
        ("\ud83d\ude00", '"😀"'),
        ({"b": [1.0, {"c": -0.0}], "1": [], "01": {}}, '{"1":[],"b":[1,{"c":0}],"01":{}}'),
    ],
)
def test_the_cases_that_tell_javascript_from_python(value: object, written: str) -> None:
    assert js_json(value) == written


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_is_written_as_javascript_writes_a_number_and_reads_back(number: float) -> None:
    text = js_number(number)
    assert NUMBER.fullmatch(text), text
    assert float(text) == number
    digits = text.lstrip("-").split("e")[0].replace(".", "").strip("0")
    assert digits == repr(abs(number)).split("e")[0].replace(".", "").strip("0")  # no more digits


@given(st.integers())
def test_an_integer_is_the_double_nearest_it(number: int) -> None:
    text = js_number(number)
    if abs(number) >= 2**1024:
        assert text == "null"
    else:
        assert float(text) == float(number) and NUMBER.fullmatch(text)


UNITS = st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))
"""Characters and lone surrogates, as a JavaScript string may hold them."""


@given(st.text(UNITS))
def test_a_string_reads_back_as_its_utf16_units_and_escapes_only_what_it_must(text: str) -> None:
    written = js_string(text)
    paired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    assert json.loads(written) == paired  # a high and a low surrogate are one character
    assert not re.search("[\x00-\x1f\ud800-\udfff]", written)
    assert len(written) == len(paired) + 2 or "\\" in written


def test_a_value_nested_deeper_than_the_interpreter_recurses_is_written() -> None:
    deep: object = 1e-7
    for _ in range(5_000):
        deep = {"a": [deep]}
    assert js_json(deep) == '{"a":[' * 5_000 + "1e-7" + "]}" * 5_000
