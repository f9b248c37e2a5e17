"""The names a scenario may use: presets (`ctxlab.presets.registry`), summarizer kinds, generators;
and the name a scenario made from a file takes (`scenario_name`).

Invariants:
- Names are unique; an unknown name fails with the known names and a "did you mean"; a name
  the lab plans but does not implement yet says so instead.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from ctxlab.presets.entries import NAME_MAX_LENGTH
from ctxlab.presets.registry import PRESETS
from ctxlab.problems import unknown_name
from ctxlab.scenarios.summarizers import ExtractiveSummarizerSpec, FixedSummarizerSpec
from ctxlab.workloads.generators import GENERATORS


@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizerKind:
    """A named fake summarizer and its settings model."""

    name: str
    summary: str
    params: type[BaseModel]


PLANNED_PRESETS: tuple[str, ...] = ()
"""Presets planned whose strategies are not built yet."""

SUMMARIZERS: dict[str, SummarizerKind] = {
    s.name: s
    for s in (
        SummarizerKind(
            name="fixed",
            summary="answers every summary request with the same field texts",
            params=FixedSummarizerSpec,
        ),
        SummarizerKind(
            name="extractive",
            summary="fills the five fields from the compressed messages, keeping planted probes at a recall",
            params=ExtractiveSummarizerSpec,
        ),
    )
}

PLANNED_SUMMARIZERS: tuple[str, ...] = ()
"""Summarizer kinds planned that are not built yet."""


def preset_problem(name: object) -> str | None:
    """Why `name` is not a preset, or None."""
    known = isinstance(name, str) and name in PRESETS
    return None if known else unknown_name("preset", name, PRESETS, PLANNED_PRESETS)


def summarizer_problem(kind: object) -> str | None:
    """Why `kind` is not a summarizer kind, or None."""
    known = isinstance(kind, str) and kind in SUMMARIZERS
    return None if known else unknown_name("summarizer kind", kind, SUMMARIZERS, PLANNED_SUMMARIZERS)


def generator_names() -> tuple[str, ...]:
    """The workload generators' names."""
    return tuple(GENERATORS)


def scenario_name(path: Path) -> str:
    """A scenario name from a file name (letters, digits, `-` and `_`): the file's stem where it
    is such a name; otherwise the stem with every run of other characters made one `-`, ending in
    a digest of the whole stem, so two stems never share a name (`a b`, `a-b`, `a.b`); and so
    does a stem longer than a name may be (`NAME_MAX_LENGTH`).

    >>> scenario_name(Path("runs/support_session-2.jsonl"))
    'support_session-2'
    >>> scenario_name(Path("runs/2024 session.v2.jsonl"))
    '2024-session-v2-9fe91a4f'
    >>> scenario_name(Path("会话一.jsonl")), scenario_name(Path("run-会话.jsonl"))
    ('transcript-8cfca12b', 'run-91c5d815')
    >>> len(scenario_name(Path("a" * 250 + ".jsonl")))
    100
    """
    stem = path.stem
    digest = hashlib.sha256(stem.encode("utf-8")).hexdigest()[:8]
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-_")
    if name != stem:
        name = f"{name or 'transcript'}-{digest}"
    if len(name) > NAME_MAX_LENGTH:
        name = f"{name[: NAME_MAX_LENGTH - len(digest) - 1].rstrip('-_')}-{digest}"
    return name
