"""Template filling: named placeholders only, in one pass."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.templates import fill

values = st.lists(st.sampled_from(["{", "}", "a", "b", "{a}", "{b}", "{c}"]), max_size=6).map("".join)


def test_other_braces_stay() -> None:
    assert fill('{"a": {x}, "b": {y}}', x=1) == '{"a": 1, "b": {y}}'


def test_a_value_holding_a_placeholder_is_not_filled_again() -> None:
    assert fill("{a} {b}", a="{b}", b="B") == "{b} B"
    assert fill("{a} {b}", b="{a}", a="A") == "A {a}"


def test_no_values_leaves_the_template() -> None:
    assert fill("{a}") == "{a}"


@given(values, values)
def test_fill_equals_an_fstring(a: str, b: str) -> None:
    assert fill("<{a}|{b}|{c}>", a=a, b=b) == f"<{a}|{b}|{{c}}>"
