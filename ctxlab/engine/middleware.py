"""Middleware: typed hook points around the loop's steps, chained as onions.

Hooks (AgentScope's set):
- `on_reply(state, turn, next)`: one whole reply;
- `on_reasoning(state, tool_choice, next)`: one model call and saving its response;
- `on_model_call(request, next)`: each reasoning request sent (summary calls bypass it, as in
  AgentScope);
- `on_acting(state, call, next)`: running one tool call (not truncation or saving);
- `on_compress_context(state, request, next)`: one compression check and its work;
- `on_system_prompt(prompt)`: a pipeline of pure string transforms (not an onion).

Invariants:
- A middleware implements any subset of the hooks by overriding the base class's methods; the
  engine buckets middlewares by hook once, in list order (the first is the outermost layer), and
  a hook no middleware implements costs nothing: the inner step is called directly.
- Onion hooks may act before and after `next`, change its inputs, change its output, or not call
  it at all (short-circuit).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast

from ctxlab.core.messages.blocks import HintBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.world.script import ScriptedTurn

if TYPE_CHECKING:
    from ctxlab.engine.state import EpisodeState

HOOKS = ("on_reply", "on_reasoning", "on_model_call", "on_acting", "on_compress_context", "on_system_prompt")


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoned:
    """The state after a reasoning step and its response.

    A middleware that answers without calling the model returns `saved=False`; the loop then
    saves the response into the reply as if the model had given it.
    """

    state: EpisodeState
    response: ModelResponse
    saved: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Acted:
    """The state after running one tool call, and its result (before truncation and saving).

    `local` is False for results the loop makes itself (a call of a tool the world lacks): those
    skip the strategy's per-result step, as AgentScope never truncates its own error results.
    """

    state: EpisodeState
    result: ToolResultBlock
    local: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class CompressRequest:
    """How a compression is asked for: the trigger ratio to use and optional instructions.

    `trigger_ratio` None means the strategy's own; the compression tool passes a lower one.
    """

    trigger_ratio: float | None = None
    instructions: tuple[HintBlock, ...] = ()


ReplyNext = Callable[["EpisodeState", ScriptedTurn], "EpisodeState"]
ReasoningNext = Callable[["EpisodeState", str], Reasoned]
ModelNext = Callable[[ModelRequest], ModelResponse]
ActingNext = Callable[["EpisodeState", ToolCallBlock], Acted]
CompressNext = Callable[["EpisodeState", CompressRequest], "EpisodeState"]


class Middleware:
    """Base class: override the hooks you need; the others are never called."""

    def on_reply(self, state: EpisodeState, turn: ScriptedTurn, next: ReplyNext) -> EpisodeState:
        """Wrap one reply."""
        return next(state, turn)

    def on_reasoning(self, state: EpisodeState, tool_choice: str, next: ReasoningNext) -> Reasoned:
        """Wrap one reasoning step."""
        return next(state, tool_choice)

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        """Wrap one reasoning request to the model."""
        return next(request)

    def on_acting(self, state: EpisodeState, call: ToolCallBlock, next: ActingNext) -> Acted:
        """Wrap running one tool call."""
        return next(state, call)

    def on_compress_context(
        self, state: EpisodeState, request: CompressRequest, next: CompressNext
    ) -> EpisodeState:
        """Wrap one compression check."""
        return next(state, request)

    def on_system_prompt(self, prompt: str) -> str:
        """Transform the system prompt (must be pure)."""
        return prompt

    def implements(self, hook: str) -> bool:
        """Whether this middleware overrides `hook`."""
        return getattr(type(self), hook) is not getattr(Middleware, hook)


N = TypeVar("N", bound=Callable[..., object])


def bucket(middlewares: Sequence[Middleware], hook: str) -> tuple[Middleware, ...]:
    """The middlewares that implement `hook`, in list order."""
    if hook not in HOOKS:
        raise ValueError(f"unknown hook {hook!r}; hooks are {', '.join(HOOKS)}")
    return tuple(m for m in middlewares if m.implements(hook))


def chain(layers: tuple[Middleware, ...], hook: str, inner: N) -> N:
    """`inner` wrapped by every layer's `hook` (the first layer outermost); `inner` itself when
    no layer implements it, so an unused hook costs nothing."""
    for layer in reversed(layers):
        inner = cast(N, functools.partial(getattr(layer, hook), next=inner))
    return inner


def transform_prompt(layers: tuple[Middleware, ...], prompt: str) -> str:
    """The system prompt after every layer's `on_system_prompt`, in order."""
    for layer in layers:
        prompt = layer.on_system_prompt(prompt)
    return prompt
