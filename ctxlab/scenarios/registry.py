"""The names a scenario may use: presets (`ctxlab.presets.registry`), summarizer kinds, generators.

Invariants:
- Names are unique; an unknown name fails with the known names and a "did you mean"; a name
  the lab plans but does not implement yet says so instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

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
