"""Example middlewares: a per-reply token budget and a tracer of every hook.

They double as templates for writing your own: override only the hooks you need.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.world.script import ScriptedTurn
from ctxlab.engine.middleware import (
    Acted,
    ActingNext,
    CompressNext,
    CompressRequest,
    Middleware,
    ModelNext,
    Reasoned,
    ReasoningNext,
    ReplyNext,
)
from ctxlab.engine.state import EpisodeState


@dataclass
class TokenBudget(Middleware):
    """Stops a reply once its reasoning requests have used `budget` input tokens.

    The reply then ends with `message` as its final answer, without another model call.
    """

    budget: int
    message: str = "Stopping: this reply's token budget is used up."
    spent: int = 0
    stopped_replies: int = 0

    def on_reply(self, state: EpisodeState, turn: ScriptedTurn, next: ReplyNext) -> EpisodeState:
        """Each reply starts with a fresh budget."""
        self.spent = 0
        return next(state, turn)

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        """Count the input tokens of every reasoning request."""
        self.spent += request.input_tokens
        return next(request)

    def on_reasoning(self, state: EpisodeState, tool_choice: str, next: ReasoningNext) -> Reasoned:
        """Answer for the model once the budget is gone."""
        if self.spent < self.budget:
            return next(state, tool_choice)
        self.stopped_replies += 1
        response = ModelResponse(blocks=(TextBlock(text=self.message),))
        return Reasoned(state=state, response=response, saved=False)


@dataclass
class Tracer(Middleware):
    """Records each hook's entry and exit, in order: `("on_reasoning", "before", ...)`."""

    events: list[tuple[str, str, str]] = field(default_factory=list)

    def on_reply(self, state: EpisodeState, turn: ScriptedTurn, next: ReplyNext) -> EpisodeState:
        """Trace a reply."""
        self.events.append(("on_reply", "before", f"turn {state.turn}"))
        out = next(state, turn)
        self.events.append(("on_reply", "after", f"{len(out.context)} messages"))
        return out

    def on_reasoning(self, state: EpisodeState, tool_choice: str, next: ReasoningNext) -> Reasoned:
        """Trace a reasoning step."""
        self.events.append(("on_reasoning", "before", tool_choice))
        out = next(state, tool_choice)
        self.events.append(("on_reasoning", "after", f"{len(out.response.calls)} calls"))
        return out

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        """Trace a model call."""
        self.events.append(("on_model_call", "before", f"{request.input_tokens} tokens"))
        return next(request)

    def on_acting(self, state: EpisodeState, call: ToolCallBlock, next: ActingNext) -> Acted:
        """Trace a tool call."""
        self.events.append(("on_acting", "before", call.name))
        return next(state, call)

    def on_compress_context(
        self, state: EpisodeState, request: CompressRequest, next: CompressNext
    ) -> EpisodeState:
        """Trace a compression check."""
        self.events.append(("on_compress_context", "before", f"{len(state.context)} messages"))
        out = next(state, request)
        self.events.append(("on_compress_context", "after", f"{len(out.context)} messages"))
        return out

    def on_system_prompt(self, prompt: str) -> str:
        """Trace the system prompt."""
        self.events.append(("on_system_prompt", "before", f"{len(prompt)} chars"))
        return prompt
