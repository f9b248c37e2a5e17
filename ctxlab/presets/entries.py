"""Scenario entries of the presets: what every entry has, and entries made from parameter dataclasses.

`StrategyEntry` holds the settings every strategy has (name, preset, texts, workspace, loop
limits, summary breaker). A preset with a frozen dataclass of parameters (the source's defaults)
gets its entry generated: a `StrategyEntry` with one field per dataclass field,
nested dataclasses becoming nested models, so a scenario sets `budget: {max_tokens: 16000}` for
`nonoka` and a sweep addresses `strategies.<name>.budget.max_tokens`.

Invariants:
- An entry's fields, types and defaults are the dataclass's (descriptions come from the
  dataclass's `Attributes:` docstring section); unknown keys are rejected at every level.
- `entry_params(entry)` rebuilds the dataclass value from a validated entry: the defaults give
  the dataclass's own defaults back exactly. The dataclass's own checks run when the entry is
  validated, so a broken rule fails at load time: at the setting a `SettingError` names (a
  nested dataclass's error under the field holding it), else at the entry, its message as written.
- A built strategy is named after its entry.
- Fields a dataclass lists in `__late_fields__` are left out of an entry's dump while they hold
  their defaults (the config hash of a run that does not use them stays as it was).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import types
import typing
from typing import Any, Literal, Union, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    create_model,
    model_serializer,
    model_validator,
)
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from ctxlab.core.settings import SettingError, SettingPath, at_setting
from ctxlab.inputs import InputModel
from ctxlab.presets.preset import Preset
from ctxlab.problems import NAME_PATTERN, Problem
from ctxlab.texts import TextsName


class ReActConfig(InputModel):
    """Loop limits (AgentScope's `ReActConfig.max_iters`)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    max_iters: int = Field(default=50, gt=0, description="Rounds per reply before a forced answer.")


NAME_MAX_LENGTH = 100
"""The longest strategy or scenario name. Names are parts of file names (`.<scenario>.tmp-<pid>`,
`sawtooth-<strategy>-<hash>.png`), which file systems cut at 255 bytes: a longer name would load
and then fail when its results are written."""

WorkspaceKind = Literal["memory", "directory", "none"]


class StrategyEntry(InputModel):
    """What every strategy entry has, whatever its preset."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str = Field(
        default="",
        pattern=r"^$|" + NAME_PATTERN,
        max_length=NAME_MAX_LENGTH,
        description="The strategy's name in sweep paths (`strategies.<name>.…`), run ids and results. "
        "Default: the preset's name.",
    )
    preset: str = Field(description="Which preset (see `ctxlab presets`).")
    texts: TextsName = Field(
        default="ctxlab",
        description="Prompt and hint texts: `ctxlab` (the lab's own) or a framework's exact strings, "
        "which its family's presets read from the installed package: `agentscope`, `langchain`, "
        "`deepagents` (with its built-in tools), `openhands`, `swe-agent` (its notices), "
        "`google-adk`, `strands`, `openai-agents` or `pydantic-ai`.",
    )
    workspace: WorkspaceKind = Field(
        default="memory",
        description="Where offloads go: `memory`, `directory` (files in a temporary folder per run) or "
        "`none` (truncate without saving).",
    )
    react: ReActConfig = Field(default_factory=ReActConfig, description="Loop limits.")
    summary_breaker: int = Field(
        default=0,
        ge=0,
        description="Summary circuit breaker: after this many summaries in a row fail, stop calling the "
        "summarizer and use the strategy's fallback for the rest of the run; a success resets the count. "
        "0: no breaker (AgentScope has none); nonoka and Claude Code use 3.",
    )

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        # only an absent, null or empty name: `name: 0` or `name: false` is told it is no name
        if isinstance(data, dict) and data.get("name") in (None, "") and isinstance(data.get("preset"), str):
            return {**data, "name": data["preset"]}
        return data

    def warnings(self) -> tuple[Problem, ...]:
        """Legal but suspicious settings of this entry, at their paths inside it."""
        return ()


ATTRIBUTE = re.compile(r"^\s{8}(\w+): (.*)$")


class ParamsModel(InputModel):
    """A nested group of preset parameters: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def attribute_docs(cls: type) -> dict[str, str]:
    """Field descriptions from a Google-style `Attributes:` section of `cls`'s docstring.

    >>> from ctxlab.core.compaction.budget import BudgetParams
    >>> attribute_docs(BudgetParams)["max_tokens"]
    "the model's window; 1 or more."
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


def _model_type(hint: Any, default: Any = None, owner: type | None = None) -> Any:
    """The pydantic-side type of a field's type in dataclass `owner`; a nested dataclass's model
    takes its field defaults from `default`, the field's default value, where that is one of its
    values."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return params_model(hint, default if type(default) is hint else None, owner)
    if typing.get_origin(hint) in (Union, types.UnionType):
        return Union[tuple(_model_type(arg, default, owner) for arg in typing.get_args(hint))]  # noqa: UP007
    return hint


def _model_value(value: Any, owner: type | None = None) -> Any:
    """A dataclass default as the model's default."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return params_model(type(value), value, owner).model_validate(_as_fields(value))
    return value


def _as_fields(value: Any) -> dict[str, Any]:
    return {f.name: _model_value(getattr(value, f.name)) for f in dataclasses.fields(value)}


def _fields(cls: type, base: Any = None) -> dict[str, Any]:
    """The model fields of dataclass `cls`: its own defaults, or `base`'s values (an instance of
    `cls` that a parent holds as its default) when given."""
    hints = typing.get_type_hints(cls)
    docs = attribute_docs(cls)
    made: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        default = _own_default(f) if base is None else getattr(base, f.name)
        if default is dataclasses.MISSING:
            # a parameter the source leaves without a default: the scenario must give it
            made[f.name] = (_model_type(hints[f.name]), Field(description=docs.get(f.name)))
            continue
        field = Field(default=_model_value(default, cls), description=docs.get(f.name))
        made[f.name] = (_model_type(hints[f.name], default, cls), field)
    return made


def _own_default(f: dataclasses.Field[Any]) -> Any:
    """A dataclass field's default (made afresh from its factory), or `MISSING`."""
    return f.default if f.default_factory is dataclasses.MISSING else f.default_factory()


def params_model(cls: type, base: Any = None, owner: type | None = None) -> type[ParamsModel]:
    """The model of a parameter dataclass (one model per dataclass), or of a group nested in
    dataclass `owner` whose default there (`base`) differs from the dataclass's own defaults: a
    mapping that sets some of its settings keeps `base`'s values for the others, the defaults
    `ctxlab presets` shows (ADK's `events_compaction_config: {compaction_interval: 2}` keeps
    `overlap_size: 1`). Such a model is named after both classes."""
    if base is None or all(getattr(base, f.name) == _own_default(f) for f in dataclasses.fields(cls)):
        return _params_model(cls, None, "")
    return _params_model(cls, base, owner.__name__ if owner else "")


@functools.cache
def _params_model(cls: type, base: Any, owner: str) -> type[ParamsModel]:
    model = create_model(
        owner + cls.__name__,
        __base__=ParamsModel,
        __doc__=inspect.getdoc(cls),
        __validators__={"_placed_errors": cast(Any, model_validator(mode="wrap")(_placed_errors(cls)))},
        **_fields(cls, base),
    )
    _DATACLASS_OF[model] = cls
    return model


_DATACLASS_OF: dict[type[BaseModel], type] = {}


def _back(value: Any) -> Any:
    """A validated model's value as the dataclass value it stands for.

    Raises:
        SettingError: a nested dataclass refuses its values; the path starts at `value`.
    """
    if isinstance(value, BaseModel):
        return _built(_DATACLASS_OF[type(value)], value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_within(i, _back, item) for i, item in enumerate(value))
    return value


def _built(cls: type, model: BaseModel) -> Any:
    """The dataclass `cls` from the fields of `model`; a nested dataclass's error is placed under
    the field holding it."""
    return cls(**{f.name: _within(f.name, _back, getattr(model, f.name)) for f in dataclasses.fields(cls)})


def _within(key: str | int, make: Any, value: Any) -> Any:
    """`make(value)`, a `ValueError` it raises placed at `key` (`at_setting`)."""
    try:
        return make(value)
    except ValueError as error:
        raise at_setting(error, key) from error


LATE_FIELDS = "__late_fields__"
"""A parameter dataclass's class attribute naming fields added after results were published: an
entry's dump leaves them out while they hold their defaults, so a run that does not set them
keeps its config hash (and run id)."""


def _late_defaults(cls: type) -> dict[str, Any]:
    late = getattr(cls, LATE_FIELDS, ())
    return {f.name: _model_value(f.default) for f in dataclasses.fields(cls) if f.name in late}


def _without_late_defaults(
    self: BaseModel, handler: SerializerFunctionWrapHandler, info: SerializationInfo
) -> dict[str, Any]:
    """An entry's dump without its late fields at their defaults (a model serializer, so `self`);
    a dump with the context `{LATE_FIELDS: True}` keeps them (`ctxlab presets` lists them)."""
    dumped: dict[str, Any] = handler(self)
    if isinstance(info.context, dict) and info.context.get(LATE_FIELDS):
        return dumped
    for name, default in _late_defaults(_DATACLASS_OF[type(self)]).items():
        if getattr(self, name) == default:
            dumped.pop(name, None)
    return dumped


def entry_model(info: Preset[Any]) -> type[StrategyEntry]:
    """The scenario entry of a zoo preset."""
    words = re.split(r"[-_]", info.name)
    fields = _fields(info.params)
    preset: Any = Literal[info.name]
    if info.loop_limit is not None:
        fields["react"] = _react_field("".join(w.capitalize() for w in words), info.loop_limit)
    hooks: dict[str, Any] = {
        "_parameters_hold": model_validator(mode="after")(_parameters_hold),
        "_placed_errors": model_validator(mode="wrap")(_placed_errors(info.params)),
    }
    if _late_defaults(info.params):
        hooks["_without_late_defaults"] = model_serializer(mode="wrap")(_without_late_defaults)
    model = create_model(
        "".join(w.capitalize() for w in words) + "Entry",
        __base__=StrategyEntry,
        __doc__=f"{info.summary} (source: {info.source}).",
        __validators__=cast(Any, hooks),
        preset=(preset, ...),
        **fields,
    )
    _DATACLASS_OF[model] = info.params
    return model


def _react_field(prefix: str, limit: int) -> tuple[type[ReActConfig], Any]:
    """A `react` field whose `max_iters` defaults to a framework's own loop limit, whether the
    entry leaves `react` out or gives it without `max_iters`: a default held by the model, so an
    entry dumped and validated again (a run's resolved config) keeps it."""
    react = create_model(
        f"{prefix}ReActConfig",
        __base__=ReActConfig,
        max_iters=(int, Field(default=limit, gt=0, description="Rounds per reply before a forced answer.")),
    )
    return react, Field(default_factory=react, description="Loop limits.")


def _parameters_hold(entry: StrategyEntry) -> StrategyEntry:
    """The dataclass's own checks (e.g. OpenHands' room for a tail) run at load time.

    Raises:
        ValueError: the parameters break a rule of the preset's dataclass (a `SettingError`
            names the setting at fault; `_placed_errors` reports it there).
    """
    reason = workspace_need(entry)
    if reason and entry.workspace == "none":
        raise SettingError(
            ("workspace",),
            f"workspace: none keeps no files, but {reason}; use workspace: memory or directory",
        )
    return entry


def workspace_need(entry: StrategyEntry) -> str | None:
    """Why a run of `entry` writes to its workspace (its parameters' `needs_workspace()`), or None.

    Raises:
        ValueError: the parameters break a rule of the preset's dataclass.
    """
    if type(entry) not in _DATACLASS_OF:
        return None
    need = getattr(entry_params(entry), "needs_workspace", None)
    reason = need() if callable(need) else None
    return str(reason) if reason else None


def _placed_errors(cls: type) -> Any:
    """A wrap validator that words and places two kinds of error better than pydantic would.

    - A missing required parameter: a dataclass field without a default may carry
      `metadata={"suggest": "n: 5, the paper's value"}`; its "is required but missing" error then
      ends with that suggestion.
    - A rule of the dataclass (`_parameters_hold`) that names the setting at fault
      (`SettingError`): the error moves from the entry to that setting, so a scenario reports it
      at the setting's own line; its message is kept as written.

    Every other error passes unchanged. (Wrapping the entry's after-validator, this validator
    is declared after it.)
    """
    suggestions = {f.name: f.metadata["suggest"] for f in dataclasses.fields(cls) if "suggest" in f.metadata}

    def place(entry: type[BaseModel], data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(data)
        except ValidationError as error:
            errors = error.errors()
            if not any(_suggestion(e, suggestions) or _setting_at_fault(e) for e in errors):
                raise
            details = [_placed(e, suggestions, data) for e in errors]
            raise ValidationError.from_exception_data(error.title, details) from None

    return classmethod(place)


def _suggestion(error: ErrorDetails, suggestions: dict[str, str]) -> str | None:
    if error["type"] != "missing" or len(error["loc"]) != 1:
        return None
    return suggestions.get(str(error["loc"][0]))


def _setting_at_fault(error: ErrorDetails) -> SettingError | None:
    """The `SettingError` of a rule broken by the whole entry, when it names a setting."""
    found = (error.get("ctx") or {}).get("error")
    if error["loc"] or not isinstance(found, SettingError) or not found.path:
        return None
    return found


def _placed(error: ErrorDetails, suggestions: dict[str, str], data: Any) -> InitErrorDetails:
    suggestion = _suggestion(error, suggestions)
    if suggestion is not None:
        message = f"is required but missing; add it ({suggestion})"
        return InitErrorDetails(
            type=PydanticCustomError("ctxlab_rule", message), loc=error["loc"], input=error["input"]
        )
    fault = _setting_at_fault(error)
    if fault is not None:
        return InitErrorDetails(
            type="value_error", loc=fault.path, input=_given(data, fault.path), ctx={"error": fault}
        )
    return InitErrorDetails(
        type=error["type"], loc=error["loc"], input=error["input"], ctx=error.get("ctx", {})
    )


def _given(data: Any, path: SettingPath) -> Any:
    """What the input holds at `path`, or None where it sets nothing (a default is at fault)."""
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def entry_params(entry: StrategyEntry) -> Any:
    """The preset's parameter dataclass from a validated entry."""
    return _built(_DATACLASS_OF[type(entry)], entry)
