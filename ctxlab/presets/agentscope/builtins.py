"""Tools the lab runs itself: the four task tools and the agent's `CompressContext` tool.

Invariants:
- Task tools are pure transitions of the task board, which lives beside the context and
  survives compression; their replies use the run's texts.
- `CompressContext` runs the strategy's compression step (through the `on_compress_context`
  chain) with the trigger lowered to `trigger_ratio - context_buffer_ratio`; while it runs, its
  own call has no result yet, so the split keeps the call and everything after it. Its reply
  compares message counts before and after, as AgentScope's does, so a compression that keeps
  the same number of messages is reported as "too short".
- A failing compression becomes an error result; the state is left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ctxlab.core.agentscope.compress import EmptyContextError
from ctxlab.core.agentscope.split import SplitError
from ctxlab.core.agentscope.task_args import TASK_TOOL_NAMES
from ctxlab.core.agentscope.tasks import run_task_tool
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.engine.env import Env
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.agentscope.compression import SummaryFailedError
from ctxlab.texts import Texts, fill

if TYPE_CHECKING:
    from ctxlab.engine.hooks import BuiltinOutcome, Frame


def _result(call: ToolCallBlock, text: str, *, error: bool = False) -> ToolResultBlock:
    return ToolResultBlock(
        id=call.id, name=call.name, output=(TextBlock(text=text),), state="error" if error else "success"
    )


@dataclass(frozen=True, slots=True)
class TaskTool:
    """One of TaskCreate, TaskGet, TaskList, TaskUpdate."""

    texts: Texts

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        """Apply the call to the task board."""
        from ctxlab.engine.hooks import BuiltinOutcome

        outcome = run_task_tool(state.tasks, call.name, call.input, self.texts)
        result = _result(call, outcome.text, error=outcome.state == "error")
        return BuiltinOutcome(state=replace(state, tasks=outcome.board), result=result)


def task_tools(texts: Texts) -> dict[str, TaskTool]:
    """The four task tools by name."""
    tool = TaskTool(texts)
    return dict.fromkeys(TASK_TOOL_NAMES, tool)


@dataclass(frozen=True, slots=True)
class CompressTool:
    """The agent-driven compression tool."""

    texts: Texts
    trigger_ratio: float

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        """Compress now, at the lowered trigger."""
        from ctxlab.engine.hooks import BuiltinOutcome

        before = len(state.context)
        try:
            compressed = env.compress(state, CompressRequest(trigger_ratio=self.trigger_ratio))
        except (EmptyContextError, SummaryFailedError, SplitError) as failure:
            text = fill(self.texts.compress_failed, error=str(failure))
            return BuiltinOutcome(state=state, result=_result(call, text, error=True))
        changed = len(compressed.context) != before
        text = self.texts.compress_succeeded if changed else self.texts.compress_unchanged
        return BuiltinOutcome(state=compressed, result=_result(call, text))
