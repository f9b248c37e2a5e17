"""The prompt-cache meter of a run: `ctxlab.core.cache` accounting behind the engine's `CacheMeter`.

Invariants:
- Requests are observed in call order, each once; the meter's state is the core `CacheState`,
  replaced as a whole at every request.
- A request's cached tokens are those of the longest run of leading OpenAI-view messages (with
  identical tools) it shares with the previous reasoning request, or for a summary request the
  larger of that and the previous summary request; the rest of its input is written to the
  cache (DESIGN.md §8). Cost is not computed here: results price the figures in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxlab.core.cache import CacheState, account, request_view
from ctxlab.core.messages import Message
from ctxlab.core.model import CallKind
from ctxlab.core.tokens import TokenCounter
from ctxlab.core.tools import ToolSchema
from ctxlab.engine.env import CacheUse


@dataclass(slots=True)
class PromptCacheMeter:
    """Cached and written tokens of each request of one run."""

    counter: TokenCounter
    state: CacheState = field(default_factory=CacheState)

    def observe(
        self, kind: CallKind, messages: tuple[Message, ...], tools: tuple[ToolSchema, ...]
    ) -> CacheUse:
        """Account one request (the model's output does not enter the cache figures)."""
        view = request_view(messages, self.counter, tools)
        step = account(self.state, view, kind=kind, output_tokens=0, counter=self.counter)
        self.state = step.state
        return CacheUse(step.usage.cached_tokens, step.usage.written_tokens)
