"""Reading YAML safely and reporting every mistake at its file, line and column.

Invariants:
- Only YAML's safe constructors run: a tag that would build an object (`!!python/object`, any
  custom tag) is refused, so nothing in a scenario can run code.
- Every value read keeps the position of its node; a validation error names
  `file:line:col: field.path: the bad value, the rule it breaks, how to fix it`; unknown keys get
  "did you mean".
- Files that are not YAML text (a directory, binary data, an empty file, an over-large file) are
  refused with the same kind of message before parsing.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

MAX_SCENARIO_BYTES = 2_000_000
PathKey = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Problem:
    """One located mistake."""

    file: str
    line: int
    column: int
    field: str
    message: str
    path: PathKey = dataclasses.field(default=(), compare=False)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class ScenarioError(ValueError):
    """One or more located mistakes in an input file."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True, slots=True)
class Located:
    """A YAML document as plain data, with the position of every node by its path."""

    file: str
    data: Any
    positions: Mapping[PathKey, tuple[int, int]]

    def where(self, path: PathKey) -> tuple[int, int]:
        """The (line, column) of the deepest known node on `path` (1-based)."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.positions:
                return self.positions[path[:end]]
        return (1, 1)


def read_text(path: Path) -> str:
    """The file's text, or a located error saying why it cannot be a scenario."""
    name = str(path)
    if not path.exists():
        raise ScenarioError([Problem(name, 1, 1, "", "no such file; check the path")])
    if path.is_dir():
        raise ScenarioError([Problem(name, 1, 1, "", "is a directory; pass a .yaml file inside it")])
    size = path.stat().st_size
    if size > MAX_SCENARIO_BYTES:
        limit = f"{MAX_SCENARIO_BYTES:,}"
        raise ScenarioError(
            [
                Problem(
                    name,
                    1,
                    1,
                    "",
                    f"is {size:,} bytes, over the {limit}-byte limit; "
                    "a scenario describes a workload, it does not contain one",
                )
            ]
        )
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise ScenarioError(
            [Problem(name, 1, 1, "", "is binary (it contains NUL bytes); pass a YAML text file")]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = raw[: bad.start].count(b"\n") + 1
        raise ScenarioError([Problem(name, line, 1, "", "is not UTF-8 text; save it as UTF-8")]) from bad
    if not text.strip():
        raise ScenarioError([Problem(name, 1, 1, "", "is empty; see scenarios/*.yaml for examples")])
    return text


def parse_yaml(text: str, file: str) -> Located:
    """Parse one YAML document with the safe loader, keeping node positions."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as bad:
        raise ScenarioError([_yaml_problem(bad, file)]) from bad
    if node is None:
        raise ScenarioError(
            [Problem(file, 1, 1, "", "is empty (only blank lines or comments); see scenarios/*.yaml")]
        )
    positions: dict[PathKey, tuple[int, int]] = {}
    try:
        data = _build(node, (), positions, file)
    except yaml.MarkedYAMLError as bad:
        raise ScenarioError([_yaml_problem(bad, file)]) from bad
    return Located(file=file, data=data, positions=positions)


def _yaml_problem(bad: yaml.MarkedYAMLError, file: str) -> Problem:
    mark = bad.problem_mark or bad.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    return Problem(file, line, column, "", f"invalid YAML: {bad.problem or bad.context}")


def _build(node: yaml.Node, path: PathKey, positions: dict[PathKey, tuple[int, int]], file: str) -> Any:
    positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        return _build_mapping(node, path, positions, file)
    if isinstance(node, yaml.SequenceNode):
        _check_tag(node, path, file, "tag:yaml.org,2002:seq")
        return [_build(item, (*path, i), positions, file) for i, item in enumerate(node.value)]
    return _scalar(node, path, file)


def _build_mapping(
    node: yaml.MappingNode, path: PathKey, positions: dict[PathKey, tuple[int, int]], file: str
) -> Any:
    _check_tag(node, path, file, "tag:yaml.org,2002:map")
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = _scalar(key_node, path, file)
        if key in out:
            line, column = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            raise ScenarioError(
                [Problem(file, line, column, _dotted((*path, key)), "appears twice in one mapping; keep one")]
            )
        out[key] = _build(value_node, (*path, key), positions, file)
        positions[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
    return out


def _check_tag(node: yaml.Node, path: PathKey, file: str, *allowed: str) -> None:
    if node.tag not in allowed:
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        raise ScenarioError(
            [
                Problem(
                    file,
                    line,
                    column,
                    _dotted(path),
                    f"the YAML tag {node.tag!r} is not allowed (scenarios hold plain data "
                    "only); remove the tag",
                )
            ]
        )


_SCALAR_TAGS = tuple(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp"))


def _scalar(node: yaml.Node, path: PathKey, file: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        raise ScenarioError(
            [Problem(file, line, column, _dotted(path), "a mapping key must be a plain value")]
        )
    _check_tag(node, path, file, *_SCALAR_TAGS)
    constructor = yaml.SafeLoader(node.value)
    try:
        value = constructor.construct_object(node, deep=True)
    finally:
        constructor.dispose()
    if node.tag.endswith(":timestamp"):
        return node.value  # keep dates as written; the models parse them
    return value


def _dotted(path: PathKey) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


Clean = Callable[[PathKey], PathKey]
"""Turns pydantic's error path into the document's (drops union tags)."""
Keys = Callable[[PathKey], "Sequence[str] | None"]
"""The keys allowed at a document path, when the caller knows better than the model's annotations."""


def validate(
    located: Located,
    model: type[M],
    context: Mapping[str, Any] | None = None,
    *,
    clean: Clean | None = None,
    keys: Keys | None = None,
) -> M:
    """The document as `model`, or a ScenarioError listing every located problem."""
    try:
        return model.model_validate(located.data, context=dict(context or {}))
    except ValidationError as bad:
        raise ScenarioError(problems_of(located, bad, model, clean=clean, keys=keys)) from bad


def problems_of(
    located: Located,
    error: ValidationError,
    model: type[BaseModel],
    *,
    clean: Clean | None = None,
    keys: Keys | None = None,
) -> list[Problem]:
    """One located problem per pydantic error (duplicates dropped, order kept)."""
    out: list[Problem] = []
    for item in error.errors():
        path: PathKey = tuple(k for k in item["loc"] if isinstance(k, str | int))
        path = clean(path) if clean else path
        line, column = located.where(path)
        message = _message(item, path, located, model, keys)
        problem = Problem(located.file, line, column, _dotted(path), message, path)
        if problem not in out:
            out.append(problem)
    return out


def _message(error: Any, path: PathKey, located: Located, model: type[BaseModel], keys: Keys | None) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        known = keys(path[:-1]) if keys else None
        allowed = _allowed_keys(model, path[:-1]) if known is None else list(known)
        close = difflib.get_close_matches(str(path[-1]), allowed, n=1, cutoff=0.6)
        mean = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown key {path[-1]!r}{mean}; remove it or fix its spelling"
    if kind == "missing":
        return "is required but missing; add it"
    text = str(error["msg"]).removeprefix("Value error, ")
    value = error.get("input")
    if kind.startswith("ctxlab_") or kind == "value_error":
        return text  # ctxlab's own validators' messages name the value, the rule and the fix
    shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    bound = _bound_message(kind, error.get("ctx") or {})
    if bound:
        return f"{shown} {bound}"
    hint = _HINTS.get(kind)
    return f"{shown} is invalid: {text}" + (f"; {hint}" if hint else "")


def _bound_message(kind: str, ctx: Mapping[str, Any]) -> str | None:
    """`is above the maximum 0.9; use 0.9 or less`, for pydantic's bound errors."""
    match kind:
        case "greater_than":
            return f"is not above the minimum {ctx['gt']}; use a value above {ctx['gt']}"
        case "greater_than_equal":
            return f"is below the minimum {ctx['ge']}; use {ctx['ge']} or more"
        case "less_than":
            return f"is not below the maximum {ctx['lt']}; use a value below {ctx['lt']}"
        case "less_than_equal":
            return f"is above the maximum {ctx['le']}; use {ctx['le']} or less"
        case "too_short":
            return f"has too few items; at least {ctx.get('min_length')} needed"
        case "literal_error":
            return f"is not allowed; use {ctx.get('expected')}"
        case _:
            return None


_HINTS = {
    "int_type": "use a whole number",
    "int_parsing": "use a whole number",
    "int_from_float": "use a whole number",
    "float_type": "use a number",
    "float_parsing": "use a number",
    "bool_type": "use true or false",
    "bool_parsing": "use true or false",
    "string_type": "use a string (quote it if it looks like a number or a date)",
    "list_type": "use a list ([...] or '- item' lines)",
    "dict_type": "use a mapping ({key: value})",
    "model_type": "use a mapping ({key: value})",
    "model_attributes_type": "use a mapping ({key: value})",
}


def _allowed_keys(model: type[BaseModel], path: PathKey) -> list[str]:
    """Field names allowed at `path` in `model`, followed through nested models and lists."""
    current: Any = model
    for key in path:
        if isinstance(key, int):
            continue
        field = getattr(current, "model_fields", {}).get(key)
        if field is None:
            return []
        current = _inner_model(field.annotation)
        if current is None:
            return []
    return list(getattr(current, "model_fields", {}))


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def load(path: Path, model: type[M], context: Mapping[str, Any] | None = None) -> M:
    """Read, parse and validate one file."""
    return validate(parse_yaml(read_text(path), str(path)), model, context)
