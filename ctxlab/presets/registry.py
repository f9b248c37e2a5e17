"""Every preset, in the order `ctxlab presets` lists them, and how an entry becomes a strategy.

Adding a preset is one line in `PLACES` (its family package describes it with a `Preset`). The
scenario schema, `ctxlab presets` and the JSON Schema for editors are all generated from it.

A family is imported the first time one of its presets is used: a scenario of one preset loads
that family alone, and `ctxlab` starts without the others.

Invariants:
- Names are unique, each the `name` of the preset it places, and every preset is built the same
  way: `build_strategy(entry, texts)` turns the entry's parameters into the preset's strategy,
  named after the entry.
- `PRESETS[name]` is the preset, `ENTRIES[name]` its scenario entry model (hand-written or
  generated), each made once per process; `name in PRESETS` and iterating the names import nothing.
- Families never import each other; only this module imports them all.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ctxlab.engine.hooks import Strategy
from ctxlab.presets.entries import LATE_FIELDS, StrategyEntry, entry_model, entry_params
from ctxlab.presets.preset import Preset
from ctxlab.texts import Texts

PLACES: dict[str, str] = {
    "agentscope": "agentscope.preset:PRESET",
    "nonoka": "nonoka.preset:PRESET",
    "anthropic-clear": "anthropic.preset:PRESET",
    "langchain-clear": "langchain.preset:CLEAR_PRESET",
    "langchain-summary": "langchain.preset:SUMMARY_PRESET",
    "deepagents": "deepagents.preset:PRESET",
    "openhands": "openhands.preset:PRESET",
    "openhands-hybrid": "openhands.preset:HYBRID_PRESET",
    "swe-agent": "swe_agent.preset:PRESET",
    "strands-sliding-window": "strands.preset:WINDOW_PRESET",
    "strands-summarizing": "strands.preset:SUMMARY_PRESET",
    "openai-agents-trimmer": "openai_agents.preset:TRIMMER_PRESET",
    "openai-agents-session": "openai_agents.preset:SESSION_PRESET",
    "pydantic-ai-clear": "pydantic_ai.preset:CLEAR_PRESET",
    "pydantic-ai-window": "pydantic_ai.preset:WINDOW_PRESET",
    "pydantic-ai-summary": "pydantic_ai.preset:SUMMARY_PRESET",
    "sliding-window": "sliding_window.preset:PRESET",
    "google-adk-window": "google_adk.preset:WINDOW_PRESET",
    "google-adk-tokens": "google_adk.preset:TOKENS_PRESET",
    "none": "none.preset:PRESET",
}
"""Each preset's name and where it is defined: `module:attribute`, the module under `ctxlab.presets`."""

V = TypeVar("V")


class Loaded(Mapping[str, V]):
    """A read-only mapping over fixed names whose values are made on first use, once each."""

    def __init__(self, names: Mapping[str, object], make: Callable[[str], V]) -> None:
        self._names = names
        self._make = make
        self._made: dict[str, V] = {}

    def __getitem__(self, name: str) -> V:
        made = self._made.get(name)
        if made is None:
            if name not in self._names:
                raise KeyError(name)
            made = self._made[name] = self._make(name)
        return made

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _import(name: str) -> Preset[Any]:
    module, attribute = PLACES[name].split(":")
    found: Preset[Any] = getattr(importlib.import_module(f"ctxlab.presets.{module}"), attribute)
    assert found.name == name, f"PLACES[{name!r}] holds the preset {found.name!r}"
    return found


PRESETS: Mapping[str, Preset[Any]] = Loaded(PLACES, _import)


def _entry(name: str) -> type[StrategyEntry]:
    p = PRESETS[name]
    return p.entry if p.entry is not None else entry_model(p)


ENTRIES: Mapping[str, type[StrategyEntry]] = Loaded(PLACES, _entry)
"""Each preset's scenario entry model."""


def preset(name: str) -> Preset[Any]:
    """The preset called `name`.

    Raises:
        KeyError: no such preset (the message lists the known names).
    """
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    return PRESETS[name]


def params_of(entry: StrategyEntry) -> Any:
    """The preset's parameters from a validated entry."""
    p = PRESETS[entry.preset]
    return p.from_entry(entry) if p.from_entry is not None else entry_params(entry)


def build_strategy(entry: StrategyEntry, texts: Texts) -> Strategy:
    """The engine strategy of a validated entry, named after the entry."""
    strategy = PRESETS[entry.preset].build(params_of(entry), texts)
    return dataclasses.replace(strategy, name=entry.name)  # type: ignore[type-var]


def entry_defaults(name: str) -> dict[str, Any]:
    """A preset's own entry settings and their defaults, by dotted path (common settings left out);
    a setting the source leaves without a default shows as "(required)"."""
    model = ENTRIES[name]
    required = {
        field: "(required)"  # the source has no default: every scenario gives it
        for field, info in model.model_fields.items()
        if info.is_required() and field not in StrategyEntry.model_fields
    }
    own = [f for f in model.model_fields if f not in StrategyEntry.model_fields and f not in required]
    entry = model.model_construct(preset=name) if required else model.model_validate({"preset": name})
    dumped = {**required, **entry.model_dump(mode="json", include=set(own), context={LATE_FIELDS: True})}
    return dict(flatten(dumped)) if dumped else {}


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
