"""A scenario document validated as a whole: the `Scenario` it is, or every problem it has.

Invariants:
- A document that validates gives the `Scenario` pydantic makes of it; the checks below run only
  on a refused one, to find what its first refusal hid.
- Every problem is located (`file:line:col`, the field path as the document writes it: union
  tags dropped, `clean_loc`), and the problems are told in file order, each once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from ctxlab.problems import UNION_TAGS, Loc, Problem, ScenarioError
from ctxlab.scenarios.located import Located, validate
from ctxlab.scenarios.registry import SUMMARIZERS
from ctxlab.scenarios.schema import Scenario, entry_model
from ctxlab.scenarios.sweep import description_at, fields_at

SUMMARIZER_PATHS = {("model", "summarizer"), ("delegate", "summarizer")}
"""Where a summarizer is chosen by its kind (pydantic puts the kind in an error's path there)."""


def clean_loc(path: Loc) -> Loc:
    """pydantic's error path as a document path: union tags dropped.

    >>> clean_loc(("delegate", "summarizer", "fixed", "fields"))
    ('delegate', 'summarizer', 'fields')
    >>> clean_loc(("workload", "script", "turns", 0, "user", "{bytes}", "bytes"))
    ('workload', 'script', 'turns', 0, 'user', 'bytes')
    """
    out: list[str | int] = []
    for key in path:
        after_summarizer = tuple(out) in SUMMARIZER_PATHS and key in SUMMARIZERS
        if key in UNION_TAGS or after_summarizer:
            continue
        out.append(key)
    return tuple(out)


def validated_scenario(located: Located, context: dict[str, Any]) -> Scenario:
    """The document as a Scenario, or every problem it has. Two kinds of refusal hide others, so
    the document is checked again without what hides them: sweep and tune paths are checked
    before the fields (they resolve against the raw document; `strategy:` for `strategies:`
    leaves every sweep path naming nothing), and an entry of an unknown preset stops the other
    entries from being checked (it is checked again as a `none` entry, its own problems left
    out: its keys are an unknown preset's). The problems are told in file order."""

    def check(target: Located) -> Scenario:
        keys = partial(fields_at, doc=target.data, root=Scenario, entry_model=entry_model)
        describe = partial(description_at, doc=target.data, root=Scenario, entry_model=entry_model)
        return validate(target, Scenario, context, clean=clean_loc, keys=keys, describe=describe)

    try:
        return check(located)
    except ScenarioError as refused:
        paths = [p for p in refused.problems if p.loc[:1] in (("sweep",), ("tune",))]
        fields = [p for p in refused.problems if p not in paths]
        data = located.data
        if not fields:
            data = {k: v for k, v in data.items() if k not in ("sweep", "tune")}
            fields = _problems(check, replace(located, data=data))
        unknown = {p.loc[1] for p in fields if p.loc[:1] == ("strategies",) and p.loc[2:] == ("preset",)}
        if unknown and isinstance(data.get("strategies"), list):
            rest = {k: v for k, v in data.items() if k not in ("sweep", "tune")}
            rest["strategies"] = [
                {"preset": "none", "name": f"unknown-preset-{i}"} if i in unknown else entry
                for i, entry in enumerate(data["strategies"])
            ]
            hidden = _problems(check, replace(located, data=rest))
            fields += [p for p in hidden if p not in fields and not _within_entry(p, unknown)]
        raise ScenarioError(sorted([*fields, *paths], key=_in_file_order)) from None


def _problems(check: Callable[[Located], Scenario], target: Located) -> list[Problem]:
    """The problems `check` finds in `target` (none when it passes)."""
    try:
        check(target)
    except ScenarioError as refused:
        return list(refused.problems)
    return []


def _in_file_order(problem: Problem) -> tuple[int, int]:
    """A problem's place in the file (one without a place last, in the order found)."""
    return (problem.at.line, problem.at.column) if problem.at is not None else (sys.maxsize, 0)


def _within_entry(problem: Problem, entries: set[str | int]) -> bool:
    return problem.loc[:1] == ("strategies",) and len(problem.loc) > 1 and problem.loc[1] in entries
