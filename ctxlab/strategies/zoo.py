"""Every zoo preset's description, in the order DESIGN.md §2 lists the families.

`PRESETS` is what a registry imports: each entry names the preset, its parameter class (the
source's defaults), a one-line summary, the source and the build function. The `agentscope`
preset is not here: its parameters are AgentScope's own configs (`ctxlab.strategies.agentscope`).
"""

from __future__ import annotations

from typing import Any

from ctxlab.strategies import (
    anthropic,
    deepagents,
    langchain,
    none,
    nonoka,
    openhands,
    sliding_window,
    swe_agent,
)
from ctxlab.strategies.steps import PresetInfo

PRESETS: tuple[PresetInfo[Any], ...] = (
    nonoka.PRESET,
    anthropic.PRESET,
    langchain.CLEAR_PRESET,
    langchain.SUMMARY_PRESET,
    deepagents.PRESET,
    openhands.PRESET,
    openhands.HYBRID_PRESET,
    swe_agent.PRESET,
    sliding_window.PRESET,
    none.PRESET,
)


def preset(name: str) -> PresetInfo[Any]:
    """The zoo preset called `name`.

    Raises:
        KeyError: no such preset (the message lists the known names).
    """
    for info in PRESETS:
        if info.name == name:
            return info
    raise KeyError(f"unknown zoo preset {name!r}; known: {', '.join(p.name for p in PRESETS)}")
