"""Problems with input: one `Problem`, one wording, for scenario files and workloads alike.

Invariants:
- A `Problem` names its field by `loc` (keys and list indexes from the input's root, union tags
  removed) and says what is wrong and how to fix it; once a loader knows where `loc` sits in a
  file, the problem also carries its `Position` and reads
  `file:line:col: field.path: the bad value, the rule it breaks, how to fix it`.
- Every pydantic error is worded by `explain`, with the one hint table `HINTS`; unknown keys are
  worded by `unknown_key`, unknown names (a preset, a generator) by `unknown_name`, and close
  names suggested by `did_you_mean`, whichever layer finds them, so the same mistake reads the
  same in a strategy, a script or a generator's parameters.
- Messages ctxlab writes itself (error types `ctxlab_*` and validators' `ValueError`s) already
  name the value, the rule and the fix, and are kept as written.
- `InputError` is the one error carrying problems: a `ScenarioError`'s problems all carry their
  position in a file, a `WorkloadError`'s are located by field path only.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

Loc = tuple[str | int, ...]

UNION_TAGS = frozenset({"string", "{text}", "{bytes}", "{tokens}", "{blocks}", "{image}"})
"""Tags of the size-form unions; pydantic puts them in error paths, `describe_errors` drops them."""


def format_loc(loc: Sequence[str | int]) -> str:
    """A field path as written in docs: keys joined by dots, list indexes in brackets.

    >>> format_loc(("turns", 0, "rounds", 2, "calls", 1, "result"))
    'turns[0].rounds[2].calls[1].result'
    >>> format_loc(())
    '(top level)'
    """
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ' (did you mean 'x'?)' suffix when a choice is close to `word`, else ''.

    >>> did_you_mean("reslt", ["result", "error"])
    " (did you mean 'result'?)"
    >>> did_you_mean("zzz", ["result"])
    ''
    """
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def name_list(names: Iterable[str]) -> str:
    """Names from a file joined for a message: each as written, or quoted with its escapes when
    it holds a line break or another unprintable character, so a problem stays on one line.

    >>> name_list(["db-port", "two\\nlines"])
    "db-port, 'two\\\\nlines'"
    """
    return ", ".join(name if name.isprintable() else repr(name) for name in names)


def unknown_name(what: str, name: object, known: Iterable[str], planned: Iterable[str] = ()) -> str:
    """The message for a name not in a registry (a preset, a generator, a summarizer kind).

    >>> unknown_name("preset", "agentscop", ["agentscope", "none"])
    "unknown preset 'agentscop' (did you mean 'agentscope'?); known: agentscope, none"
    >>> unknown_name("preset", "nonoka", ["none"], ["nonoka"])
    "preset 'nonoka' is planned but not implemented yet; known: none"
    >>> unknown_name("preset", {"name": "none"}, ["none"])
    "a preset is a name, not {'name': 'none'}; known: none"
    """
    known = list(known)
    listed = ", ".join(known)
    if not isinstance(name, str):
        return f"a {what} is a name, not {name!r}; known: {listed}"
    if name in set(planned):
        return f"{what} {name!r} is planned but not implemented yet; known: {listed}"
    return f"unknown {what} {name!r}{did_you_mean(str(name), known)}; known: {listed}"


def unknown_key(key: object, allowed: Sequence[str]) -> str:
    """The message for a key that is not allowed where it is written.

    >>> unknown_key("reslt", ["tool", "result"])
    "unknown key 'reslt' (did you mean 'result'?); remove it or fix its spelling; allowed here: tool, result"
    """
    listed = f"; allowed here: {', '.join(allowed)}" if allowed else ""
    return f"unknown key {key!r}{did_you_mean(str(key), allowed)}; remove it or fix its spelling{listed}"


@dataclass(frozen=True, slots=True)
class Position:
    """Where in an input file a problem is: the file's name, 1-based line and column; line 0 for
    a document with no lines (one a command or a notebook made in memory), named alone."""

    file: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One thing wrong with input, at one field; `at` is its position once a loader knows it."""

    loc: Loc
    message: str
    at: Position | None = None

    @property
    def field(self) -> str:
        """The field path, e.g. `turns[0].user`."""
        return format_loc(self.loc)

    def __str__(self) -> str:
        if self.at is None:
            return f"{self.field}: {self.message}"
        return f"{self.at}: {self.field}: {self.message}" if self.loc else f"{self.at}: {self.message}"


class InputError(ValueError):
    """Input that cannot be used; `problems` says where and why, one line each."""

    def __init__(self, problems: Sequence[Problem], *, source: str | None = None) -> None:
        self.problems = tuple(problems)
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + str(p) for p in self.problems))


class ScenarioError(InputError):
    """A scenario file that cannot be used; every problem carries its position in the file."""


class WorkloadError(InputError):
    """Workload input that cannot be used; problems are at field paths from the workload's root."""


HINTS: Mapping[str, str] = {
    "int_type": "use a whole number",
    "int_parsing": "use a whole number",
    "int_from_float": "use a whole number",
    "float_type": "use a number",
    "float_parsing": "use a number",
    "bool_type": "use true or false",
    "bool_parsing": "use true or false",
    "string_type": "use a string (quote it in YAML if it looks like a number or a date)",
    "list_type": "use a list ([...] or '- item' lines)",
    "tuple_type": "use a list ([...] or '- item' lines)",
    "named_tuple_type": "use a list ([...] or '- item' lines)",
    "datetime_type": "write an ISO date and time such as 2026-01-01T09:00:00",
    "datetime_parsing": "write an ISO date and time such as 2026-01-01T09:00:00",
    "datetime_from_date_parsing": "write an ISO date and time such as 2026-01-01T09:00:00",
    "invalid_key": "quote the key: every key is a name",
    "dict_type": "use a mapping ({key: value})",
    "model_type": "use a mapping ({key: value})",
    "model_attributes_type": "use a mapping ({key: value})",
    "dataclass_type": "use a mapping ({key: value})",
}
"""How to fix a value of the wrong type, by pydantic error type."""
_MAPPING_TYPES = frozenset({"dict_type", "model_type", "model_attributes_type", "dataclass_type"})


def explain(error: ErrorDetails, allowed: Sequence[str] = ()) -> str:
    """One pydantic error as a message: the value, the rule, the fix (`allowed`: keys allowed here)."""
    kind = error["type"]
    if kind == "extra_forbidden":
        return unknown_key(error["loc"][-1] if error["loc"] else "", allowed)
    if kind == "missing":
        return "is required but missing; add it"
    text = str(error["msg"]).removeprefix("Value error, ")
    if kind.startswith("ctxlab_") or kind == "value_error":
        return text
    shown = _shown(error.get("input"))
    bound = _bound(kind, error.get("ctx") or {})
    if bound:
        return f"{shown} {bound}"
    if kind == "finite_number":
        return f"{shown} is not a finite number; write a number"
    if kind in _MAPPING_TYPES:  # pydantic's text names the model's class, which no scenario writes
        return f"{shown} is not a mapping; {HINTS[kind]}"
    hint = _whole_number_hint(error.get("input")) if kind == "int_parsing" else None
    hint = hint or HINTS.get(kind)
    return f"{shown} is invalid: {text}" + (f"; {hint}" if hint else "")


def _whole_number_hint(value: object) -> str | None:
    """The fix for a whole number YAML read as text: an exponent without YAML's dot and sign
    (`1e5`, which YAML reads only as `1.0e+5`), or digits grouped with commas (`128,000`).

    >>> _whole_number_hint("1e5")
    'YAML reads it as text, not a number; write 100000'
    >>> _whole_number_hint("128,000"), _whole_number_hint("1.5e0"), _whole_number_hint("x")
    ('YAML reads it as text, not a number; write 128000', None, None)
    """
    if not isinstance(value, str):
        return None
    try:
        number = float(value.replace(",", ""))
    except ValueError:
        return None
    if not math.isfinite(number) or not number.is_integer():
        return None
    return f"YAML reads it as text, not a number; write {int(number)}"


def _shown(value: object) -> str:
    shown = as_written(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def as_written(value: object, depth: int = 0) -> str:
    """A value read from YAML or JSON as a user would write it: null, true and false by their
    names, text quoted, lists and mappings in flow style (shortened past a few levels or items:
    a message shows the start of a value).

    >>> [as_written(v) for v in (None, True, 3, "a", {"k": [1, None]})]
    ['null', 'true', '3', "'a'", "{'k': [1, null]}"]
    """
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, dict | list | tuple) and depth >= _SHOWN_DEPTH:
        return "..."
    if isinstance(value, dict):
        pairs = [f"{as_written(k, depth + 1)}: {as_written(v, depth + 1)}" for k, v in _first(value.items())]
        return "{" + ", ".join(pairs) + (", ..." if len(value) > _SHOWN_ITEMS else "") + "}"
    if isinstance(value, list | tuple):
        items = [as_written(item, depth + 1) for item in _first(value)]
        return "[" + ", ".join(items) + (", ..." if len(value) > _SHOWN_ITEMS else "") + "]"
    return repr(value)


_SHOWN_DEPTH, _SHOWN_ITEMS = 4, 12


def _first(items: Iterable[Any]) -> Iterator[Any]:
    return itertools.islice(items, _SHOWN_ITEMS)


NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
"""Strategy and scenario names: a word that is safe in a path, a run id and a sweep path."""


def _bound(kind: str, ctx: Mapping[str, Any]) -> str | None:
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
        case "too_long":
            return f"has too many items; at most {ctx.get('max_length')} allowed"
        case "string_too_short":
            return f"is too short; write at least {ctx.get('min_length')} character(s)"
        case "string_too_long":
            return f"is longer than {ctx.get('max_length')} characters; shorten it"
        case "literal_error":
            return f"is not allowed; use {ctx.get('expected')}"
        case "string_pattern_mismatch" if str(ctx.get("pattern")).endswith(NAME_PATTERN):
            return "is not a name: use ASCII letters, digits, - and _, starting with a letter or digit"
        case "string_pattern_mismatch":
            return f"does not match the pattern {ctx.get('pattern')}"
        case _:
            return None


Clean = Callable[[Loc], Loc]
"""Turns pydantic's error path into the input's own (drops union tags)."""
Keys = Callable[[Loc], "Sequence[str] | None"]
"""The keys allowed at a path, when the caller knows better than the model's annotations."""
Describe = Callable[[Loc], "str | None"]
"""The description of the field at a path, when the caller knows better than the model."""


def drop_union_tags(loc: Loc) -> Loc:
    """pydantic's error path without the size-form union tags.

    >>> drop_union_tags(("turns", 0, "user", "{bytes}", "bytes"))
    ('turns', 0, 'user', 'bytes')
    """
    return tuple(key for key in loc if key not in UNION_TAGS)


_NO_DOCUMENT: Any = object()


def describe_errors(
    error: ValidationError,
    model: type[BaseModel] | None = None,
    *,
    prefix: Loc = (),
    clean: Clean = drop_union_tags,
    keys: Keys | None = None,
    document: Any = _NO_DOCUMENT,
    describe: Describe | None = None,
) -> tuple[Problem, ...]:
    """One `Problem` per pydantic error (duplicates dropped, order kept), at `prefix` + its path.

    An unknown key's allowed keys come from `keys`, else from `model`'s fields at that path.
    Given the validated `document`, a value that fits no form of a union is told once: by the
    forms that took it in (a branch that failed inside the value, not at its type), or else
    as fitting none of them, with the field's description (from `describe`, else `model`).
    """
    items: list[Any] = error.errors()
    if document is not _NO_DOCUMENT:
        items = _union_choices(items, document, describe or partial(_model_description, model))
    out: list[Problem] = []
    for item in items:
        loc = clean(tuple(k for k in item["loc"] if isinstance(k, str | int)))
        allowed = _allowed(loc[:-1], model, keys) if item["type"] == "extra_forbidden" else ()
        problem = Problem(loc=(*prefix, *loc), message=explain(item, allowed))
        if problem not in out:
            out.append(problem)
    return tuple(out)


class _Placed(NamedTuple):
    """An error and its path, each key marked by whether it is the document's (a key the
    document does not hold and that names a type is a union branch's tag)."""

    item: ErrorDetails
    path: Loc
    held: tuple[bool, ...]

    def tag_from(self, start: int) -> int | None:
        """The position of the first tag at or after `start`, if any."""
        return next((n for n in range(start, len(self.path)) if not self.held[n]), None)


def _placed(item: ErrorDetails, document: Any) -> _Placed:
    here, held = document, []
    path = tuple(k for k in item["loc"] if isinstance(k, str | int))
    for key in path:
        holds = _holds(here, key)
        held.append(holds or not _names_a_type(key))  # a field left out: defaulted or missing
        if holds:
            here = here[key]
    return _Placed(item, path, tuple(held))


def _names_a_type(key: str | int) -> bool:
    """Whether a path key is pydantic's tag of a union branch (a type's name), not a field's."""
    if not isinstance(key, str) or not key:
        return False
    return key[0].isupper() or any(c in key for c in "[]-,{") or key in _PLAIN_TYPES


_PLAIN_TYPES = frozenset({"int", "float", "str", "bool", "none", "bytes", "list", "dict", "tuple", "string"})


def _holds(value: Any, key: str | int) -> bool:
    if isinstance(value, Mapping):
        return key in value
    return isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value)


def _union_choices(items: list[ErrorDetails], document: Any, describe: Describe) -> list[Any]:
    """The errors with each union's failed branches told once (see `describe_errors`)."""
    placed = [_placed(item, document) for item in items]
    chosen = _choose(placed, 0, document, describe)
    return [
        {**p.item, "loc": tuple(k for k, held in zip(p.path, p.held, strict=True) if held)}
        if isinstance(p, _Placed)
        else p
        for p in chosen
    ]


def _choose(
    placed: list[_Placed], start: int, document: Any, describe: Describe
) -> list[_Placed | dict[str, Any]]:
    """At each union (the keys before a tag), the branch that explains the value in the fewest
    errors among those that took it in (failed inside it, not at its type); a union no branch
    took in is told as fitting none of its forms."""
    out: list[_Placed | dict[str, Any]] = []
    unions: dict[Loc, list[_Placed]] = {}
    for p in placed:
        tag = p.tag_from(start)
        if tag is None:
            out.append(p)
        else:
            unions.setdefault(p.path[:tag], []).append(p)
    for union, errors in unions.items():
        at = len(union)
        branches: dict[str | int, list[_Placed]] = {}
        for p in errors:
            if len(p.path) > at + 1:  # failed inside the branch
                branches.setdefault(p.path[at], []).append(p)
        explained = [_choose(inside, at + 1, document, describe) for inside in branches.values()]
        if explained:
            out.extend(explained[min(range(len(explained)), key=lambda n: len(explained[n]))])
        else:
            where = tuple(k for k, held in zip(union, errors[0].held, strict=False) if held)
            out.append(_fits_no_form(_value_at(document, where), where, describe(where)))
    return out


def _fits_no_form(value: object, union: Loc, described: str | None) -> dict[str, Any]:
    message = f"{_shown(value)} fits none of the forms this setting takes"
    if described:
        message += f" ({described.rstrip('.')})"
    return {"type": "ctxlab_union", "loc": union, "msg": message, "input": value}


def _value_at(document: Any, loc: Loc) -> object:
    for key in loc:
        document = document[key]
    return document


def _model_description(model: type[BaseModel] | None, loc: Loc) -> str | None:
    return field_description(model, loc) if model else None


def field_description(model: type[BaseModel], loc: Loc) -> str | None:
    """The description of the field at `loc` in `model`, followed through nested models."""
    current: Any = model
    described = None
    for key in loc:
        if isinstance(key, int):
            continue
        field = getattr(current, "model_fields", {}).get(key)
        if field is None:
            return None
        described = field.description
        current = _inner_model(field.annotation)
    return described


def _allowed(loc: Loc, model: type[BaseModel] | None, keys: Keys | None) -> Sequence[str]:
    known = keys(loc) if keys else None
    if known is not None:
        return known
    return allowed_keys(model, loc) if model else ()


def allowed_keys(model: type[BaseModel], loc: Loc) -> list[str]:
    """Field names allowed at `loc` in `model`, followed through nested models and lists."""
    current: Any = model
    for key in loc:
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


def located_error(title: str, problems: Sequence[tuple[Loc, str, object]]) -> ValidationError:
    """A pydantic `ValidationError` with ctxlab's own messages at the given paths.

    Raised inside a validator, its paths are nested under the validated field's path.
    """
    details = [
        InitErrorDetails(type=PydanticCustomError("ctxlab_rule", message), loc=loc, input=value)
        for loc, message, value in problems
    ]
    return ValidationError.from_exception_data(title, details)
