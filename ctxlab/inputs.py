"""`InputModel`: the base of every model that reads what a user wrote (a scenario, a workload, a
strategy's settings), so that a yes/no value is never read as a number, nor the reverse.

pydantic reads `true` and `false` as 1 and 0 where a number goes, and `0`, `1`, `"yes"` or
`"off"` as a yes/no value where one goes; YAML reads `yes`, `no`, `on` and `off` as `true` and
`false`. So `keep: yes` would silently mean `keep: 1`. These models refuse such values instead.

Invariants:
- A field that takes numbers but not true/false refuses true and false; a field that takes only
  true/false (or nothing) refuses every other value, and one that takes true/false or else only
  collections (a list, a mapping, a model) refuses every number and text. Every other value goes
  on to pydantic's own validation unchanged.
- The rule reaches through alternatives (`int | None`) and into the items of lists and tuples
  (`tuple[str, float]`); a nested model or mapping is checked by its own model.
- A refused value is reported at its own path inside the model (a scenario shows its line), with
  what to write instead.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, Literal, NamedTuple, Union

from pydantic import BaseModel, ConfigDict, model_validator

from ctxlab.problems import Loc, located_error

_NUMBERS = (int, float)
_SEQUENCES = (list, tuple, Sequence, set, frozenset)


class InputModel(BaseModel):
    """Base of the lab's input models: unknown keys refused, validators built at first use
    (`defer_build`: a process builds only the models its input reaches), no value read across
    yes/no and numbers (the module docstring), and no number that is not finite (YAML reads
    `1e400` or `inf` as text, which pydantic would read as infinity; results and hashes hold
    finite numbers)."""

    model_config = ConfigDict(extra="forbid", defer_build=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_yes_no_numbers(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        found = [
            problem
            for guard in _guarded_fields(cls)
            if guard.key in data and guard.suspects(data[guard.key])
            for problem in refusals(guard.annotation, data[guard.key], (guard.key,))
        ]
        if found:
            raise located_error(cls.__name__, found)
        return data


class _Guard(NamedTuple):
    """One guarded field: its input key and type, and which kinds of value `refusals` can
    refuse for it (read once from the type, so that the values it cannot refuse, nearly all of
    them, cost a type test rather than a reading of the type)."""

    key: str
    annotation: Any
    yes_no: bool
    """true or false can be refused (a number goes here, and no yes/no value does)."""
    other: bool
    """a value of another kind than nothing can be refused (only true, false or nothing goes
    here, or else only collections)."""
    items: bool
    """a list or tuple's items can hold a refused value."""

    def suspects(self, value: object) -> bool:
        """Whether `refusals` could find a problem in `value` for this field: never False where
        it would (a property test holds the two together)."""
        if isinstance(value, bool):
            return self.yes_no
        if value is None:
            return False
        return self.other or (self.items and isinstance(value, list | tuple))


@functools.cache
def _guarded_fields(model: type[BaseModel]) -> tuple[_Guard, ...]:
    """The fields of `model` whose type mentions a number or true/false (read once per class: a
    scenario validates thousands of items)."""
    return tuple(
        field_guard(field.alias or name, field.annotation)
        for name, field in model.model_fields.items()
        if _mentions_plain(field.annotation)
    )


def field_guard(key: str, annotation: Any) -> _Guard:
    """The guard of a field `key` of type `annotation`: what `refusals` reads from the type,
    read once."""
    arms = _arms(annotation)
    if any(arm is Any or arm is object for arm in arms):
        return _Guard(key, annotation, yes_no=False, other=False, items=False)
    return _Guard(
        key,
        annotation,
        yes_no=not any(_takes_yes_no(arm) for arm in arms) and any(arm in _NUMBERS for arm in arms),
        other=_yes_no_or_collections(arms),
        items=any(_sequence_items(arm) is not None for arm in arms),
    )


def _mentions_plain(annotation: Any) -> bool:
    if annotation is bool or annotation in _NUMBERS:
        return True
    inner = _record_items(annotation) or typing.get_args(annotation)
    return any(_mentions_plain(arg) for arg in inner if not isinstance(arg, str | int))


def _record_items(annotation: Any) -> tuple[Any, ...]:
    """The field types of a named tuple (which pydantic reads from a list), else ()."""
    if isinstance(annotation, type) and issubclass(annotation, tuple) and hasattr(annotation, "_fields"):
        return tuple(typing.get_type_hints(annotation).values())
    return ()


def refusals(annotation: Any, value: object, loc: Loc = ()) -> Iterator[tuple[Loc, str, object]]:
    """Where `value`, given for a field of type `annotation`, crosses yes/no and numbers: each
    place's path (from `loc`), what is wrong and how to fix it, and the value there.

    >>> [message for _, message, _ in refusals(int | None, True)]
    ['true is a yes/no value, not a number (YAML reads yes, no, on and off as yes/no too); write a number']
    >>> [loc for loc, _, _ in refusals(tuple[str, float], ["messages", False], ("keep",))]
    [('keep', 1)]
    >>> list(refusals(bool, 1))[0][1]
    '1 is not true or false; write true or false'
    >>> list(refusals(int | None, 3)), list(refusals(bool | None, None))
    ([], [])
    >>> list(refusals(bool | tuple[str, ...], 1))[0][1]
    '1 is not true or false, nor a list; write true or false, or a list'
    """
    arms = _arms(annotation)
    if any(arm is Any or arm is object for arm in arms):
        return
    if isinstance(value, bool):
        if not any(_takes_yes_no(arm) for arm in arms) and any(arm in _NUMBERS for arm in arms):
            yield loc, f"{str(value).lower()} is a yes/no value, not a number " + _YAML_NOTE, value
    elif value is not None and any(arm is bool for arm in arms) and all(_plain_yes_no(arm) for arm in arms):
        yield loc, f"{value!r} is not true or false; write true or false", value
    elif isinstance(value, str | int | float) and _yes_no_or_collections(arms):
        held = " or ".join(dict.fromkeys(_collection_name(arm) for arm in arms if not _plain_yes_no(arm)))
        yield loc, f"{value!r} is not true or false, nor {held}; write true or false, or {held}", value
    elif isinstance(value, list | tuple):
        yield from _item_refusals(arms, value, loc)


def _yes_no_or_collections(arms: tuple[Any, ...]) -> bool:
    """Whether a field takes true or false and otherwise only collections (a list, a mapping, a
    model's settings): pydantic would read any other number or text given there as yes or no."""
    return any(arm is bool for arm in arms) and all(
        _plain_yes_no(arm) or _collection_name(arm) for arm in arms
    )


def _collection_name(arm: Any) -> str:
    """What an alternative holding only a collection is called ("a list", "a mapping", "its
    settings"); "" for an alternative that can hold a number or text."""
    if _sequence_items(arm) is not None:
        return "a list"
    origin = typing.get_origin(arm) or arm
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return "a mapping"
    if isinstance(origin, type) and issubclass(origin, BaseModel):
        return "its settings"
    return ""


_YAML_NOTE = "(YAML reads yes, no, on and off as yes/no too); write a number"


def _arms(annotation: Any) -> tuple[Any, ...]:
    """The alternatives of a type, `Annotated` metadata dropped."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _arms(typing.get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return tuple(arm for arg in typing.get_args(annotation) for arm in _arms(arg))
    return (annotation,)


def _takes_yes_no(arm: Any) -> bool:
    if arm is bool:
        return True
    return typing.get_origin(arm) is Literal and any(isinstance(v, bool) for v in typing.get_args(arm))


def _plain_yes_no(arm: Any) -> bool:
    """Whether an alternative is true/false or nothing (a value of neither is refused)."""
    return arm is bool or arm is type(None)


def _item_refusals(
    arms: tuple[Any, ...], value: list[Any] | tuple[Any, ...], loc: Loc
) -> Iterator[tuple[Loc, str, object]]:
    """The refusals among a list's items, by the item types of the first list-like alternative."""
    for arm in arms:
        items = _sequence_items(arm)
        if items is None:
            continue
        if items[-1] is Ellipsis:
            items = (items[0],) * len(value)
        for index, (item_type, item) in enumerate(zip(items, value, strict=False)):
            yield from refusals(item_type, item, (*loc, index))
        return


def _sequence_items(arm: Any) -> tuple[Any, ...] | None:
    """The item types of a list-like type: `(T, ...)` for a list or tuple of `T`, each place's
    type for a fixed tuple or a named tuple; None for any other type."""
    record = _record_items(arm)
    if record:
        return record
    origin = typing.get_origin(arm)
    if not (isinstance(origin, type) and issubclass(origin, _SEQUENCES)):
        return None
    items = typing.get_args(arm)
    if origin is tuple and items and items[-1] is not Ellipsis:
        return items
    return (items[0] if items else Any, Ellipsis)
