"""What plugs into the loop: strategies, built-in tools, and what every request shares.

A strategy is data plus steps at the loop's hook points: the tools it sends, the system prompt,
the compression step (wrapped by `on_compress_context`), the steps after it (injection), and the
per-result step (truncation). Built-in tools are tools the lab runs itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ctxlab.core.messages.blocks import Block, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.engine.env import Env
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.state import EpisodeState


class Strategy(Protocol):
    """What a context-management strategy does at the loop's hook points."""

    @property
    def name(self) -> str:
        """The strategy's name (read-only, so frozen dataclasses qualify)."""
        ...

    def tools(self, script_tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The tool schemas sent with reasoning requests."""
        ...

    def system_prompt(self, base: str) -> str | None:
        """The system prompt as sent (strategies may add to it); None: the requests carry no
        system message (what most frameworks send for an empty prompt)."""
        ...

    def compress(self, state: EpisodeState, env: Env, frame: Frame, request: CompressRequest) -> EpisodeState:
        """The compression step before each reasoning call (wrapped by `on_compress_context`)."""
        ...

    def view(self, state: EpisodeState, env: Env, frame: Frame) -> tuple[Message, ...]:
        """The context as the next request shows it: `state.context` itself unless the strategy
        edits only what is sent (clearing that is not persisted, masking, prompt-only trimming).
        Returning the very same tuple when nothing changes keeps counting O(1)."""
        ...

    def prepare(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """Steps after compression and before the call (runtime-state injection, ...)."""
        ...

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """The result as saved (truncation and offload, ...)."""
        ...

    def builtins(self) -> Mapping[str, BuiltinTool]:
        """The tools this strategy runs itself, by name (task tools, the compression tool)."""
        ...


KeptAnswer = Callable[[tuple[Block, ...]], tuple[Block, ...]]
"""How a framework stores a model's answer: the blocks it keeps of the blocks the model gave. A
strategy may carry one as `kept_answer` (read with `getattr`, None: the blocks as given, and
nothing for an empty answer); the response itself is recorded as the model gave it. A strategy
may also carry `keeps_empty_answer` (read with `getattr`, default False): an answer kept as no
blocks still gives the reply its message, empty, where it has none yet."""


StandIn = Callable[[EpisodeState], tuple[Block, ...]]
"""An answer a framework gives in the model's place: before a reasoning call (after compression and
the steps that prepare the call), the blocks it answers for the state, or none to call the model.
A strategy may carry one as `stand_in` (read with `getattr`, None: the model is always called);
blocks given are stored as the reply's answer, no call is made, the run warns of it, and the
reply ends."""


class BuiltinTool(Protocol):
    """A tool the lab runs itself (task tools, the compression tool)."""

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        """Run the call; returns the new state and the result block."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class BuiltinOutcome:
    """A built-in tool's new state and result."""

    state: EpisodeState
    result: ToolResultBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings:
    """Loop settings that do not belong to a strategy."""

    max_iters: int = 50
    max_iters_hint: str = ""
    max_iters_source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Frame:
    """What every request of a run shares: the system prompt as sent (None: no system message),
    the tools, the settings."""

    system_prompt: str | None
    tools: tuple[ToolSchema, ...]
    settings: RunSettings
