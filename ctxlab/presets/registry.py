"""Every preset, in the order `ctxlab presets` lists them, and how an entry becomes a strategy.

Adding a preset is one line in `PRESETS` (its family package describes it with a `Preset`). The
scenario schema, `ctxlab presets` and the JSON Schema for editors are all generated from it.

Invariants:
- Names are unique, and every preset is built the same way: `build_strategy(entry, texts)`
  turns the entry's parameters into the preset's strategy, named after the entry.
- `ENTRIES[name]` is the preset's scenario entry model (hand-written or generated).
- Families never import each other; only this module imports them all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from ctxlab.engine.hooks import Strategy
from ctxlab.presets.agentscope import preset as agentscope
from ctxlab.presets.anthropic import preset as anthropic
from ctxlab.presets.deepagents import preset as deepagents
from ctxlab.presets.entries import LATE_FIELDS, StrategyEntry, entry_model, entry_params
from ctxlab.presets.google_adk import preset as google_adk
from ctxlab.presets.langchain import preset as langchain
from ctxlab.presets.none import preset as none
from ctxlab.presets.nonoka import preset as nonoka
from ctxlab.presets.openai_agents import preset as openai_agents
from ctxlab.presets.openhands import preset as openhands
from ctxlab.presets.preset import Preset
from ctxlab.presets.pydantic_ai import preset as pydantic_ai
from ctxlab.presets.sliding_window import preset as sliding_window
from ctxlab.presets.strands import preset as strands
from ctxlab.presets.swe_agent import preset as swe_agent
from ctxlab.texts import Texts

PRESETS: dict[str, Preset[Any]] = {
    p.name: p
    for p in (
        agentscope.PRESET,
        nonoka.PRESET,
        anthropic.PRESET,
        langchain.CLEAR_PRESET,
        langchain.SUMMARY_PRESET,
        deepagents.PRESET,
        openhands.PRESET,
        openhands.HYBRID_PRESET,
        swe_agent.PRESET,
        strands.WINDOW_PRESET,
        strands.SUMMARY_PRESET,
        openai_agents.TRIMMER_PRESET,
        openai_agents.SESSION_PRESET,
        pydantic_ai.CLEAR_PRESET,
        pydantic_ai.WINDOW_PRESET,
        pydantic_ai.SUMMARY_PRESET,
        sliding_window.PRESET,
        google_adk.WINDOW_PRESET,
        google_adk.TOKENS_PRESET,
        none.PRESET,
    )
}

ENTRIES: dict[str, type[StrategyEntry]] = {
    name: p.entry if p.entry is not None else entry_model(p) for name, p in PRESETS.items()
}
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
