"""`ctxlab.inputs`: no value a user wrote is read across yes/no and numbers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from ctxlab.inputs import InputModel, field_guard, refusals
from ctxlab.presets.registry import ENTRIES


class Size(NamedTuple):
    kind: Literal["messages", "tokens"]
    value: float


class Settings(InputModel):
    count: int = 0
    ratio: Annotated[float, Field(ge=0)] = 0.5
    limit: int | None = None
    flag: bool = False
    maybe: bool | None = None
    mode: Literal["auto", True] = "auto"
    ids: list[int] = Field(default_factory=list)
    size: Size = Size("messages", 20)
    free: Any = None
    label: str | int = ""


def _refused(**data: Any) -> list[tuple[tuple[str | int, ...], str]]:
    with pytest.raises(ValidationError) as caught:
        Settings.model_validate(data)
    return [(tuple(e["loc"]), e["msg"]) for e in caught.value.errors()]


@pytest.mark.parametrize("field", ["count", "ratio", "limit", "label"])
@pytest.mark.parametrize("value", [True, False])
def test_a_yes_no_value_is_refused_where_a_number_goes(field: str, value: bool) -> None:
    ((loc, message),) = _refused(**{field: value})
    assert loc == (field,)
    assert message.startswith(f"{str(value).lower()} is a yes/no value, not a number")
    assert message.endswith("write a number")


@pytest.mark.parametrize("value", [0, 1, 1.0, "yes", "off", "true"])
@pytest.mark.parametrize("field", ["flag", "maybe"])
def test_only_true_or_false_is_read_as_yes_no(field: str, value: object) -> None:
    ((loc, message),) = _refused(**{field: value})
    assert loc == (field,)
    assert message == f"{value!r} is not true or false; write true or false"


@pytest.mark.parametrize("value", [1, 0, 1.0, "yes", "true"])
def test_a_number_or_text_is_refused_where_only_yes_no_or_a_list_goes(value: object) -> None:
    class Clearing(InputModel):
        inputs: bool | tuple[str, ...] = False

    with pytest.raises(
        ValidationError, match="is not true or false, nor a list; write true or false, or a list"
    ):
        Clearing.model_validate({"inputs": value})
    assert Clearing.model_validate({"inputs": ["bash"]}).inputs == ("bash",)


def test_items_of_lists_and_named_tuples_are_checked_at_their_place() -> None:
    refused = _refused(ids=[1, True, 3], size=["tokens", False])
    assert [loc for loc, _ in refused] == [("ids", 1), ("size", 1)]


def test_values_of_the_right_kind_pass_unchanged() -> None:
    settings = Settings.model_validate(
        {"count": 3, "ratio": 1, "limit": None, "flag": True, "maybe": None, "mode": True, "ids": [1, 2]}
    )
    assert (settings.count, settings.ratio, settings.flag, settings.mode, settings.ids) == (
        3,
        1.0,
        True,
        True,
        [1, 2],
    )
    assert Settings.model_validate({"free": True, "label": "x", "size": ["tokens", 5]}).size == Size(
        "tokens", 5
    )


def test_refusals_reads_annotations_alone() -> None:
    assert list(refusals(tuple[int, ...], [1, 2])) == []
    assert [loc for loc, _, _ in refusals(tuple[int, ...], [1, False], ("x",))] == [("x", 1)]
    assert list(refusals(Literal["a", True], True)) == []
    assert list(refusals(dict[str, int], {"a": True})) == []  # a mapping's values: its own model's


def test_every_preset_entry_refuses_a_yes_no_number_and_a_numeric_flag() -> None:
    checked = 0
    for preset, entry in sorted(ENTRIES.items()):
        for name, field in entry.model_fields.items():
            if field.annotation in (int, float, bool):
                wrong: object = 1 if field.annotation is bool else True
                with pytest.raises(ValidationError, match=r"yes/no value|not true or false"):
                    entry.model_validate({"preset": preset, name: wrong})
                checked += 1
    assert checked >= 20


@pytest.mark.parametrize("text", ["inf", "-Infinity", "1e400", "nan"])
def test_every_preset_entry_refuses_text_that_reads_as_a_number_that_is_not_finite(text: str) -> None:
    """YAML reads `1e400` or a quoted `inf` as text, which pydantic would read as a float that is
    not finite: it would reach a run's config hash, which holds finite numbers, and fail there.
    Every float setting of every preset, nested ones too, refuses it."""
    checked = 0
    for preset, entry in sorted(ENTRIES.items()):
        for path in float_settings(entry):
            value: Any = text
            for key in reversed(path[1:]):
                value = {key: value}
            with pytest.raises(ValidationError, match="finite number"):
                entry.model_validate({"preset": preset, path[0]: value})
            checked += 1
    assert checked >= 8


def float_settings(model: type[BaseModel]) -> Iterator[tuple[str, ...]]:
    """The paths of a model's float fields, into nested models."""
    for name, field in model.model_fields.items():
        key = field.alias or name
        if field.annotation is float:
            yield (key,)
        elif isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            yield from ((key, *rest) for rest in float_settings(field.annotation))


_ANNOTATIONS: list[Any] = [
    int,
    float,
    bool,
    str,
    Any,
    object,
    type(None),
    int | None,
    bool | None,
    str | int,
    float | bool,
    Literal["auto", True],
    Literal["a", "b"],
    list[int],
    tuple[int, ...],
    tuple[str, float],
    list[bool],
    list[int] | None,
    Size,
    Size | None,
    Annotated[float, Field(ge=0)],
    dict[str, int],
    list[list[int]],
    tuple[int, ...] | bool,
    list[Any],
]
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False), st.sampled_from(["", "yes"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(st.just("a"), inner)
    ),
    max_leaves=6,
)


@settings(max_examples=1000)
@given(st.sampled_from(_ANNOTATIONS), _VALUES)
def test_a_value_the_guard_passes_over_has_nothing_to_refuse(annotation: Any, value: object) -> None:
    if list(refusals(annotation, value)):
        assert field_guard("k", annotation).suspects(value)


def test_the_guard_passes_over_values_of_a_kind_their_field_takes() -> None:
    assert not field_guard("k", int | None).suspects(3)
    assert not field_guard("k", bool).suspects(True)
    assert not field_guard("k", Any).suspects([True])
    assert field_guard("k", int).suspects(True)
    assert field_guard("k", bool | None).suspects("yes")
    assert field_guard("k", list[int]).suspects([1])
