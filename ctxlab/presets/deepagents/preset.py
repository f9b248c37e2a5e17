"""The `deepagents` preset: large tool results evicted to files, then LangChain summarization.

Source: langchain-ai/deepagents @ 23b83ad: `libs/deepagents/deepagents/middleware/filesystem.py`
(`tool_token_limit_before_evict=20000`, `NUM_CHARS_PER_TOKEN=4`, a 5-line head and tail preview,
the excluded file tools), `_message_eviction.py`, and `middleware/summarization.py` (l.255–290:
trigger `("fraction", 0.85)` and keep `("fraction", 0.10)` when the model's window is known; the
summarized history saved to `/conversation_history/{session}.md`).

Steps: each tool result whose text is over 20,000 tokens (80,000 characters) is written to the
workspace and replaced by a stub naming the file with its first and last 5 lines (event
`offloaded`); before each call, LangChain's summarization at 0.85 of the window keeps the last
10% of the window verbatim, saves the summarized span to the workspace and names it in the
summary (events `compressed`, `offloaded`).

Deviations: without a workspace no result is evicted (deepagents always has a backend); files
get the workspace's own paths (`offload/tool-result-NNNN.txt`, `offload/context-NNNN.json`)
rather than `/large_tool_results/<id>` and a Markdown history; the eviction of large user
messages (≥ 50,000 tokens) and the truncation of old tool-call arguments are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ctxlab.core.compaction.cutoff import DEEPAGENTS_SUMMARY
from ctxlab.core.compaction.large_results import LargeResultParams, apply_result_offload, plan_result_offload
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import TextBlock, ToolResultBlock
from ctxlab.engine.env import Env
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.freetext import FreeTextSummaryParams, SummarizeOldest
from ctxlab.presets.preset import Preset
from ctxlab.presets.steps import Step, StepStrategy
from ctxlab.texts import Texts

SOURCE = "deepagents 23b83ad, middleware/filesystem.py and middleware/summarization.py"

DEEPAGENTS_SUMMARY_PARAMS = FreeTextSummaryParams(
    trigger=DEEPAGENTS_SUMMARY.trigger, keep=DEEPAGENTS_SUMMARY.keep, offload_history=True
)


@dataclass(frozen=True, slots=True)
class EvictLargeResults(Step):
    """deepagents' eviction of a large tool result to a file, a head and tail preview left."""

    params: LargeResultParams
    key: ClassVar[str] = "large_results"

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """The stub with its preview once the text is saved (the result itself when small)."""
        offload = plan_result_offload(result, self.params)
        if offload is None or env.workspace is None:
            return result
        saved = ToolResultBlock(id=result.id, name=result.name, output=(TextBlock(text=offload.content),))
        path = env.workspace.offload_tool_result(saved)
        env.recorder.event(EventKind.OFFLOADED)
        return apply_result_offload(result, offload, path, self.params)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeepAgentsParams:
    """deepagents' settings: large-result eviction and its summarization."""

    large_results: LargeResultParams = field(default_factory=LargeResultParams)
    summary: FreeTextSummaryParams = DEEPAGENTS_SUMMARY_PARAMS


def build(params: DeepAgentsParams, texts: Texts) -> StepStrategy:
    """The `deepagents` strategy."""
    steps = (EvictLargeResults(params.large_results), SummarizeOldest(params.summary))
    return StepStrategy(name="deepagents", steps=steps, config=params, source=SOURCE)


PRESET = Preset(
    name="deepagents",
    summary="deepagents: tool results over 20k tokens evicted to files with a 5-line head/tail preview; "
    "summary at 0.85 of the window keeping the last 0.10",
    source=SOURCE,
    params=DeepAgentsParams,
    build=build,
)
