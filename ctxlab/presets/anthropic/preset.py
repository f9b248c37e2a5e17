"""The `anthropic-clear` preset: Anthropic context editing, `clear_tool_uses_20250919`.

Source: docs.claude.com/en/docs/build-with-claude/context-editing (beta
`context-management-2025-06-27`; defaults: trigger 100,000 input tokens, keep 3 tool uses,
`clear_at_least` none, `exclude_tools` none, `clear_tool_inputs` false) and
anthropic.com/news/context-management (2025-09-29). Once the prompt exceeds the trigger, every
tool result but the `keep` most recent is replaced by a placeholder, oldest first, unless that
reclaims fewer tokens than `clear_at_least`.

The API edits each request on the server and the client keeps the full history
(`persist=False`, the default): every request past the trigger is edited anew from the full
history, so the cleared boundary moves with each new tool use and the cached prefix is broken
just before it. `persist=True` keeps the edit in the stored history instead (what a client that
saves the edited history gets): the history then grows back to the trigger before the next
clearing, and `clear_at_least` makes each clearing, and each cache break, worth it.

Events: `cleared` on a call whose request clears a result the previous request showed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.compaction.clearing import AnthropicClearParams, Clearing, clear_tool_uses
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.presets.preset import UNSENT_THINKING, Preset
from ctxlab.presets.steps import PersistableClearing, StepStrategy
from ctxlab.texts import Texts

SOURCE = (
    "Anthropic context editing clear_tool_uses_20250919 "
    "(docs.claude.com/en/docs/build-with-claude/context-editing)"
)


@dataclass(frozen=True, slots=True)
class ClearToolUses(PersistableClearing):
    """Anthropic's clearing: request-only by default, stored with `persist`."""

    params: AnthropicClearParams
    key: ClassVar[str] = "clear_tool_uses"

    @property
    def persist(self) -> bool:
        """Whether the clearing is kept in the stored history."""
        return self.params.persist

    @property
    def trigger(self) -> int:
        """The request size the clearing waits for."""
        return self.params.trigger

    def clear(self, messages: tuple[Message, ...], sizer: Sizer) -> Clearing:
        """`clear_tool_uses` with this step's parameters."""
        return clear_tool_uses(messages, sizer=sizer, params=self.params)


def build(params: AnthropicClearParams, texts: Texts) -> StepStrategy:
    """The `anthropic-clear` strategy.

    Persisted clearing only reports its compactions (a floor at the trigger makes it clear a
    little at every call, breaking the cache each time); it is never stopped.
    """
    return StepStrategy(name="anthropic-clear", steps=(ClearToolUses(params),), config=params, source=SOURCE)


PRESET = Preset(
    name="anthropic-clear",
    summary="Anthropic clear_tool_uses: past 100k input tokens, all but the 3 newest tool results cleared",
    source=SOURCE,
    params=AnthropicClearParams,
    build=build,
    notes=(UNSENT_THINKING,),
)
