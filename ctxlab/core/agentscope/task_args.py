"""Typed arguments of the four task tools, and their parsing from the raw JSON a model produced.

Invariants:
- Parsing is total: it returns typed arguments or raises `ArgumentError` whose message names the
  field, the value and the rule, so the tool can answer the model with a clear error.
- The input is strict JSON (NaN and Infinity are rejected); a blank input means `{}`, as
  AgentScope reads a call that streamed no arguments. Unknown fields are rejected.
- Two common slips are repaired, as AgentScope's argument repair does: a task id given as a JSON
  integer is read as its decimal text, and a lone id where a list of ids is expected is read as a
  one-item list. Nothing else is coerced.
- Metadata values are kept as canonical JSON text (`json.dumps(value, ensure_ascii=False)`), so
  arguments are immutable values; the text `null` is JSON null.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

TaskState = Literal["pending", "in_progress", "completed"]
UpdateStatus = Literal["pending", "in_progress", "completed", "deleted"]
_STATUSES: tuple[UpdateStatus, ...] = get_args(UpdateStatus)
Metadata = tuple[tuple[str, str], ...]
"""Metadata as (key, JSON text of the value) pairs in insertion order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskCreateArgs:
    """`TaskCreate(subject, description, metadata=None)`."""

    subject: str
    description: str
    metadata: Metadata | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskGetArgs:
    """`TaskGet(task_id)`."""

    task_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskListArgs:
    """`TaskList()`: no arguments."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskUpdateArgs:
    """`TaskUpdate(task_id, ...)`: every other field is optional; None means not given."""

    task_id: str
    subject: str | None = None
    description: str | None = None
    add_blocks: tuple[str, ...] | None = None
    status: UpdateStatus | None = None
    add_blocked_by: tuple[str, ...] | None = None
    owner: str | None = None
    metadata: Metadata | None = None  # a value `null` deletes the key


TaskArgs = TaskCreateArgs | TaskGetArgs | TaskListArgs | TaskUpdateArgs


class ArgumentError(ValueError):
    """The arguments of a task tool call cannot be used; the message says why."""


def metadata_of(mapping: Mapping[str, object]) -> Metadata:
    """Metadata pairs from a mapping of JSON values.

    >>> metadata_of({"k": [1, "é"], "n": None})
    (('k', '[1, "é"]'), ('n', 'null'))
    """
    return tuple((key, json.dumps(value, ensure_ascii=False)) for key, value in mapping.items())


def metadata_dict(metadata: Metadata) -> dict[str, object]:
    """The metadata as a dict of JSON values (what AgentScope stores, and shows with `repr`).

    >>> metadata_dict((("k", "[1, 2]"),))
    {'k': [1, 2]}
    """
    return {key: json.loads(text) for key, text in metadata}


def _text(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise ArgumentError(f"'{field}' must be a string, got {_shown(value)}")
    return value


def _task_id(field: str, value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ArgumentError(f"'{field}' must be a task id (a string), got {_shown(value)}")
    return value


def _ids(field: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return (_task_id(field, value),)
    return tuple(_task_id(f"{field}[{i}]", item) for i, item in enumerate(value))


def _status(field: str, value: object) -> UpdateStatus:
    for status in _STATUSES:
        if value == status:
            return status
    choices = ", ".join(_STATUSES)
    raise ArgumentError(f"'{field}' must be one of {choices}, got {_shown(value)}")


def _metadata(field: str, value: object) -> Metadata:
    if not isinstance(value, dict):
        raise ArgumentError(f"'{field}' must be a JSON object, got {_shown(value)}")
    return metadata_of(value)


def _shown(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


Reader = Callable[[str, object], object]


@dataclass(frozen=True, slots=True)
class _Field:
    read: Reader
    required: bool = False


_FIELDS: dict[str, dict[str, _Field]] = {
    "TaskCreate": {
        "subject": _Field(_text, required=True),
        "description": _Field(_text, required=True),
        "metadata": _Field(_metadata),
    },
    "TaskGet": {"task_id": _Field(_task_id, required=True)},
    "TaskList": {},
    "TaskUpdate": {
        "task_id": _Field(_task_id, required=True),
        "subject": _Field(_text),
        "description": _Field(_text),
        "add_blocks": _Field(_ids),
        "status": _Field(_status),
        "add_blocked_by": _Field(_ids),
        "owner": _Field(_text),
        "metadata": _Field(_metadata),
    },
}
_BUILDERS: dict[str, Callable[..., TaskArgs]] = {
    "TaskCreate": TaskCreateArgs,
    "TaskGet": TaskGetArgs,
    "TaskList": TaskListArgs,
    "TaskUpdate": TaskUpdateArgs,
}
TASK_TOOL_NAMES = tuple(_FIELDS)
"""The task tools, in AgentScope's default `task_tool_names` order."""


def _reject_constant(name: str) -> object:
    raise ArgumentError(f"{name} is not a valid JSON number")


def _decoded(input_json: str) -> dict[str, object]:
    if not input_json.strip():
        return {}
    try:
        value = json.loads(input_json, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise ArgumentError(
            f"the input is not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    if not isinstance(value, dict):
        raise ArgumentError(f"the input must be a JSON object, got {_shown(value)}")
    return value


def parse_task_args(name: str, input_json: str) -> TaskArgs:
    """The typed arguments of a call to the task tool `name`.

    Raises:
        KeyError: `name` is not a task tool.
        ArgumentError: the input is not a JSON object, or a field is missing, unknown or of the
            wrong type.

    >>> args = parse_task_args("TaskUpdate", '{"task_id": 2, "add_blocks": "1", "owner": null}')
    >>> args.task_id, args.add_blocks, args.owner
    ('2', ('1',), None)
    """
    if name not in _FIELDS:
        raise KeyError(f"{name!r} is not a task tool; the task tools are {', '.join(_FIELDS)}")
    fields = _FIELDS[name]
    given = _decoded(input_json)
    unknown = [key for key in given if key not in fields]
    if unknown:
        raise ArgumentError(f"unknown field '{unknown[0]}' (the fields are: {', '.join(fields) or 'none'})")
    missing = [key for key, spec in fields.items() if spec.required and given.get(key) is None]
    if missing:
        raise ArgumentError(f"the required field '{missing[0]}' is missing or null")
    values = {key: fields[key].read(key, value) for key, value in given.items() if value is not None}
    return _BUILDERS[name](**values)
