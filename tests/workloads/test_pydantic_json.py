"""The pydantic-ai reader's JSON spelling against pydantic's own (`pydantic_core.to_json`) on
generated values: floats of every magnitude, infinities and NaN both ways, text of any script."""

from __future__ import annotations

import pydantic_core
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.workloads.importers.pydantic_json import pydantic_json

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
FLOATS = st.one_of(
    st.floats(),
    st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10), st.integers(-12, 20)),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), FLOATS, TEXT)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=2_000)
@given(VALUES)
def test_values_are_spelt_as_pydantic_spells_them(value: object) -> None:
    assert pydantic_json(value) == pydantic_core.to_json(value, inf_nan_mode="null").decode()
    assert pydantic_json(value, constants=True) == pydantic_core.to_json(value).decode()


def test_a_value_nested_deeper_than_the_interpreter_recurses_is_spelt() -> None:
    deep: object = 1e-05
    for _ in range(5_000):
        deep = {"a": [deep]}
    assert pydantic_json(deep) == '{"a":[' * 5_000 + "0.00001" + "]}" * 5_000
