"""The registry of names a scenario may use: presets, summarizer kinds, workload generators.

Adding a preset is one entry in `PRESETS`: its parameter model (a `StrategyEntry` subclass with
the source's defaults), a one-line summary, the source it follows, and its `build` function.
The scenario schema, `ctxlab presets` and the JSON Schema for editors are all generated from it.

Invariants:
- Names are unique; an unknown name fails with the known names and a "did you mean"; a name
  DESIGN.md plans but ctxlab does not implement yet says so instead.
- `Preset.build(entry, texts)` returns an engine `Strategy` named after the entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ctxlab.engine.hooks import Strategy
from ctxlab.scenarios.presets import (
    AgentScopeEntry,
    NoneEntry,
    StrategyEntry,
    build_agentscope,
    build_none,
)
from ctxlab.scenarios.summarizers import ExtractiveSummarizerSpec, FixedSummarizerSpec
from ctxlab.scenarios.zoo import entry_builder, entry_model
from ctxlab.strategies.zoo import PRESETS as ZOO
from ctxlab.texts import Texts
from ctxlab.workloads.generators import GENERATORS
from ctxlab.workloads.problems import did_you_mean


@dataclass(frozen=True, slots=True, kw_only=True)
class Preset:
    """A named strategy: its parameters with the source's defaults, and how to build it."""

    name: str
    summary: str
    source: str
    params: type[StrategyEntry]
    build: Callable[[Any, Texts], Strategy]
    notes: tuple[str, ...] = ()

    def defaults(self) -> dict[str, Any]:
        """The preset's own parameters and their defaults, by dotted path (common settings left out)."""
        entry = self.params.model_validate({"preset": self.name})
        dumped = entry.model_dump(mode="json", exclude=set(StrategyEntry.model_fields))
        return dict(flatten(dumped)) if dumped else {}


@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizerKind:
    """A named fake summarizer and its settings model."""

    name: str
    summary: str
    params: type[BaseModel]


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="agentscope",
            summary="AgentScope 2.0.11: tool-result truncation and offload, image cap, structured-summary "
            "compression with a protocol-aware split, runtime-state injection, task tools",
            source="agentscope 2.0.11, agent/_agent.py and agent/_config.py",
            params=AgentScopeEntry,
            build=build_agentscope,
        ),
        *(
            Preset(
                name=info.name,
                summary=info.summary,
                source=info.source,
                params=entry_model(info),
                build=entry_builder(info),
            )
            for info in ZOO
            if info.name != "none"
        ),
        Preset(
            name="none",
            summary="no context management: the whole conversation in every request (the baseline)",
            source="ctxlab",
            params=NoneEntry,
            build=build_none,
        ),
    )
}

PLANNED_PRESETS: tuple[str, ...] = ()
"""Presets DESIGN.md plans whose strategies are not built yet."""

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
"""Summarizer kinds DESIGN.md plans that are not built yet."""


def unknown_name(what: str, name: object, known: Iterable[str], planned: Iterable[str] = ()) -> str:
    """The message for a name not in a registry.

    >>> unknown_name("preset", "agentscop", ["agentscope", "none"])
    "unknown preset 'agentscop' (did you mean 'agentscope'?); known: agentscope, none"
    >>> unknown_name("preset", "nonoka", ["none"], ["nonoka"])
    "preset 'nonoka' is planned but not implemented yet; known: none"
    """
    known = list(known)
    listed = ", ".join(known)
    if name in set(planned):
        return f"{what} {name!r} is planned but not implemented yet; known: {listed}"
    return f"unknown {what} {name!r}{did_you_mean(str(name), known)}; known: {listed}"


def preset_problem(name: object) -> str | None:
    """Why `name` is not a preset, or None."""
    return None if name in PRESETS else unknown_name("preset", name, PRESETS, PLANNED_PRESETS)


def summarizer_problem(kind: object) -> str | None:
    """Why `kind` is not a summarizer kind, or None."""
    return (
        None
        if kind in SUMMARIZERS
        else unknown_name("summarizer kind", kind, SUMMARIZERS, PLANNED_SUMMARIZERS)
    )


def generator_names() -> tuple[str, ...]:
    """The workload generators' names."""
    return tuple(GENERATORS)


def build_strategy(entry: StrategyEntry, texts: Texts) -> Strategy:
    """The engine strategy of a validated entry."""
    return PRESETS[entry.preset].build(entry, texts)


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Leaves of nested mappings by dotted path; lists and empty mappings are leaves.

    >>> list(flatten({"a": {"b": 1, "c": [2]}, "d": {}}))
    [('a.b', 1), ('a.c', [2]), ('d', {})]
    """
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from flatten(item, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value
