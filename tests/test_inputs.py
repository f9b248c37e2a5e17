"""`ctxlab.inputs`: no value a user wrote is read across yes/no and numbers."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple

import pytest
from pydantic import Field, ValidationError

from ctxlab.inputs import InputModel, refusals
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
