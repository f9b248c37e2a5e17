"""Scenario entries for the zoo presets, made from their frozen parameter dataclasses.

Each zoo preset (`ctxlab.strategies.zoo.PRESETS`) has a frozen dataclass of parameters with its
source's defaults. Its scenario entry is a `StrategyEntry` with one field per dataclass field,
nested dataclasses becoming nested models, so a scenario sets `budget: {max_tokens: 16000}` for
`nonoka` and a sweep addresses `strategies.<name>.budget.max_tokens`.

Invariants:
- An entry's fields, types and defaults are the dataclass's (descriptions come from the
  dataclass's `Attributes:` docstring section); unknown keys are rejected at every level.
- `entry_params(entry)` rebuilds the dataclass value from a validated entry: the defaults give
  the dataclass's own defaults back exactly. The dataclass's own checks run when the entry is
  validated, so a broken rule fails at load time.
- A built strategy is named after its entry.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from ctxlab.engine.hooks import Strategy
from ctxlab.scenarios.presets import StrategyEntry
from ctxlab.strategies.steps import PresetInfo
from ctxlab.texts import Texts

ATTRIBUTE = re.compile(r"^\s{8}(\w+): (.*)$")


class ParamsModel(BaseModel):
    """A nested group of preset parameters: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def attribute_docs(cls: type) -> dict[str, str]:
    """Field descriptions from a Google-style `Attributes:` section of `cls`'s docstring.

    >>> from ctxlab.core.budget import BudgetParams
    >>> attribute_docs(BudgetParams)["max_tokens"]
    "the model's window."
    """
    docs: dict[str, str] = {}
    current = None
    section = False
    for line in (inspect.getdoc(cls) or "").splitlines():
        if line.strip() == "Attributes:":
            section = True
            continue
        if not section:
            continue
        match = ATTRIBUTE.match("    " + line)
        if match:
            current = match.group(1)
            docs[current] = match.group(2).strip()
        elif line.startswith("        ") and current:
            docs[current] += " " + line.strip()
        elif line.strip():
            current = None
    return docs


def _model_type(hint: Any) -> Any:
    """The pydantic-side type of a dataclass field's type."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return params_model(hint)
    if typing.get_origin(hint) in (Union, types.UnionType):
        return Union[tuple(_model_type(arg) for arg in typing.get_args(hint))]  # noqa: UP007
    return hint


def _model_value(value: Any) -> Any:
    """A dataclass default as the model's default."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return params_model(type(value)).model_validate(_as_fields(value))
    return value


def _as_fields(value: Any) -> dict[str, Any]:
    return {f.name: _model_value(getattr(value, f.name)) for f in dataclasses.fields(value)}


def _fields(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    docs = attribute_docs(cls)
    made: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        field = Field(default=_model_value(default), description=docs.get(f.name))
        made[f.name] = (_model_type(hints[f.name]), field)
    return made


@functools.cache
def params_model(cls: type) -> type[ParamsModel]:
    """The model of a parameter dataclass (cached: one model per dataclass)."""
    model = create_model(cls.__name__, __base__=ParamsModel, __doc__=inspect.getdoc(cls), **_fields(cls))
    _DATACLASS_OF[model] = cls
    return model


_DATACLASS_OF: dict[type[BaseModel], type] = {}


def _back(value: Any) -> Any:
    if isinstance(value, BaseModel):
        cls = _DATACLASS_OF[type(value)]
        return cls(**{f.name: _back(getattr(value, f.name)) for f in dataclasses.fields(cls)})
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_back(item) for item in value)
    return value


def entry_model(info: PresetInfo[Any]) -> type[StrategyEntry]:
    """The scenario entry of a zoo preset."""
    words = re.split(r"[-_]", info.name)
    fields = _fields(info.params)
    preset: Any = Literal[info.name]
    model = create_model(
        "".join(w.capitalize() for w in words) + "Entry",
        __base__=StrategyEntry,
        __doc__=f"{info.summary} (source: {info.source}).",
        __validators__={"_parameters_hold": cast(Any, model_validator(mode="after")(_parameters_hold))},
        preset=(preset, ...),
        **fields,
    )
    _DATACLASS_OF[model] = info.params
    return model


def _parameters_hold(entry: StrategyEntry) -> StrategyEntry:
    """The dataclass's own checks (e.g. OpenHands' room for a tail) run at load time.

    Raises:
        ValueError: the parameters break a rule of the preset's dataclass.
    """
    entry_params(entry)
    return entry


def entry_params(entry: StrategyEntry) -> Any:
    """The preset's parameter dataclass from a validated entry."""
    cls = _DATACLASS_OF[type(entry)]
    return cls(**{f.name: _back(getattr(entry, f.name)) for f in dataclasses.fields(cls)})


def entry_builder(info: PresetInfo[Any]) -> Callable[[Any, Texts], Strategy]:
    """The registry's build function for a zoo preset: the strategy named after the entry."""

    def build(entry: StrategyEntry, texts: Texts) -> Strategy:
        strategy = info.build(entry_params(entry), texts)
        return dataclasses.replace(strategy, name=entry.name)  # type: ignore[type-var]

    return build
