"""The `none` preset: no context management at all, the baseline every strategy is measured against.

Nothing is truncated, offloaded, capped, compressed or injected: every request carries the whole
conversation, so its input tokens grow without bound and the run shows when a window would
overflow and what managing the context saves. Appending only, it is also the best case for the
prompt cache: every request shares all but its newest messages with the previous one.

Invariant: the context is exactly what the loop appended; this strategy never edits it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.core.messages.blocks import ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import BuiltinTool, Frame
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.preset import UNSENT_THINKING, Preset
from ctxlab.texts import Texts

SOURCE = "ctxlab (no context management)"


@dataclass(frozen=True, slots=True, kw_only=True)
class NoneParams:
    """The `none` preset has no parameters."""


@dataclass(frozen=True, slots=True)
class NoStrategy:
    """The `none` preset: every hook passes its input through unchanged."""

    name: str = "none"

    def tools(self, script_tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The script's tools."""
        return script_tools

    def system_prompt(self, base: str) -> str | None:
        """The base prompt; an empty one is no system message."""
        return base or None

    def compress(self, state: EpisodeState, env: Env, frame: Frame, request: CompressRequest) -> EpisodeState:
        """Never compresses."""
        return state

    def view(self, state: EpisodeState, env: Env, frame: Frame) -> tuple[Message, ...]:
        """The stored context, as it is."""
        return state.context

    def prepare(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """Injects nothing."""
        return state

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """Keeps every result whole."""
        return result

    def builtins(self) -> Mapping[str, BuiltinTool]:
        """No built-in tools."""
        return {}

    def params(self) -> dict[str, Any]:
        """No parameters."""
        return {}

    def describe(self) -> dict[str, Any]:
        """The name and source; no parameters."""
        return {"name": self.name, "source": SOURCE, "params": {}}


def build(params: NoneParams, texts: Texts) -> NoStrategy:
    """The `none` strategy."""
    return NoStrategy()


PRESET = Preset(
    name="none",
    summary="no context management: the whole conversation in every request (the baseline)",
    source=SOURCE,
    params=NoneParams,
    build=build,
    notes=(UNSENT_THINKING,),
)
