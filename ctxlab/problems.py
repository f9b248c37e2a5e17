"""Located, actionable errors for workload input: field path, value, rule, and how to fix it.

Invariants:
- A `Problem` names its field by `loc` (the path of keys and list indexes from the section's
  root, as pydantic reports it, with union tags removed) and says what is wrong and how to fix
  it. A loader that knows where each path sits in a file can prefix `file:line:col`.
- `describe_errors` turns every pydantic error into one `Problem`; the messages ctxlab writes
  itself (unknown keys, bad forms, cross-field rules) already say how to fix them and are kept.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One thing wrong with workload input, at one field."""

    loc: Loc
    message: str

    @property
    def path(self) -> str:
        """The field path, e.g. `turns[0].user`."""
        return format_loc(self.loc)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class WorkloadError(ValueError):
    """Workload input that cannot be used; `problems` says where and why."""

    def __init__(self, problems: Sequence[Problem], *, source: str | None = None) -> None:
        self.problems = tuple(problems)
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + str(p) for p in self.problems))


_HINTS: dict[str, str] = {
    "missing": "this field is required; add it",
    "int_type": "use a whole number",
    "int_parsing": "use a whole number",
    "int_from_float": "use a whole number",
    "float_type": "use a number",
    "float_parsing": "use a number",
    "bool_type": "use true or false",
    "bool_parsing": "use true or false",
    "string_type": "use a string (quote it in YAML if it looks like a number or a date)",
    "list_type": "use a list (`[...]` or `- item` lines)",
    "dict_type": "use a mapping (`{key: value}`)",
    "model_type": "use a mapping (`{key: value}`)",
    "dataclass_type": "use a mapping (`{key: value}`)",
    "literal_error": "use one of the allowed values",
    "greater_than_equal": "use a larger value",
    "greater_than": "use a larger value",
    "less_than_equal": "use a smaller value",
    "less_than": "use a smaller value",
    "too_short": "add items",
    "too_long": "remove items",
    "extra_forbidden": "remove it or fix its spelling",
}


def _message(error: Any) -> str:
    kind = str(error["type"])
    message = str(error["msg"])
    if kind.startswith("ctxlab_"):
        return message
    if kind.startswith("value_error"):
        message = message.removeprefix("Value error, ")
        return message
    value = error.get("input")
    shown = "" if kind == "missing" else f" (got {_short(value)})"
    hint = _HINTS.get(kind)
    return f"{message}{shown}" + (f"; {hint}" if hint else "")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_errors(error: ValidationError, *, prefix: Loc = ()) -> tuple[Problem, ...]:
    """One `Problem` per pydantic error, with union tags removed from the paths."""
    problems = []
    for item in error.errors():
        loc = prefix + tuple(p for p in item["loc"] if p not in UNION_TAGS)
        problems.append(Problem(loc=loc, message=_message(item)))
    return tuple(problems)


def located_error(title: str, problems: Sequence[tuple[Loc, str, object]]) -> ValidationError:
    """A pydantic `ValidationError` with ctxlab's own messages at the given paths.

    Raised inside a validator, its paths are nested under the validated field's path.
    """
    details = [
        InitErrorDetails(type=PydanticCustomError("ctxlab_rule", message), loc=loc, input=value)
        for loc, message, value in problems
    ]
    return ValidationError.from_exception_data(title, details)
