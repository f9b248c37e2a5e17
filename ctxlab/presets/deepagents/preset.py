"""The `deepagents` preset: `create_deep_agent`'s context engineering, exact to deepagents 0.7.32
(checked call for call against the installed package, `tests/parity/test_deepagents_parity.py`).

A deep agent offers its eight built-in tools (`ls`, `read_file`, `write_file`, `edit_file`,
`delete`, `glob`, `grep`, `task`) before the user's (a user's tool of a built-in's name in its
place; the user's as `create_agent` binds them, `ctxlab.presets.lc_tools`), and its middleware
works on the LangChain view of the history:
- `FilesystemMiddleware` evicts a tool result longer than `tool_token_limit_before_evict` x 4
  characters as it arrives: the text is saved at `/large_tool_results/<call id>` and the result
  becomes a stub with a numbered head-and-tail preview (`ctxlab.presets.deepagents.eviction`).
  A new user message longer than `human_message_token_limit_before_evict` x 4 characters is
  saved at `/conversation_history/<id>.md` and every request shows it as a stub with a preview.
- `SummarizationMiddleware`, as `create_summarization_middleware` sets it, truncates old file-tool
  arguments and summarizes at 0.85 of the window keeping the last 0.10, counting the system
  prompt, the messages and the tools; the span is saved to the session's history file, and an
  over-budget request has its trailing results evicted (`ctxlab.presets.deepagents.summary`).

Under `texts: deepagents` the strings and the built-in tools are the installed package's, read at
run time (`ctxlab.texts.deepagents`); otherwise the lab's own wording and tool descriptions.
The family decides with deepagents' own count (`strategy_tokens`), has no futile-compaction
breaker, and carries LangGraph's loop limit (`create_deep_agent` sets a recursion limit of 9,999).

Deviations (tests/parity/CHECKLIST.md, D-section): the history session and an evicted user
message are named by counters in the shape of deepagents' uuid4s; files are kept in the lab's
workspace under its own names (the model sees deepagents' paths); the history file holds the
lab's JSON of the span rather than deepagents' Markdown; the counter is 4 characters per token
(no Anthropic 3.3); arguments that are not JSON fail the run (deepagents keeps an invalid tool
call, not run). A call's arguments are stored as LangChain parses them and writes them back
(`lc_messages.lc_answer`).

Events: `offloaded` (a result evicted, the history saved), `compressed`, `truncated`,
`summary_failed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import TextBlock, ToolResultBlock
from ctxlab.core.messages.latest import REQUESTS
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, issue_id, memo, with_memo
from ctxlab.presets.deepagents.eviction import (
    HUMANS_KEY,
    evicted,
    human_path,
    human_to_evict,
    humans_evicted,
    result_text,
    should_evict,
)
from ctxlab.presets.deepagents.summary import (
    SummarizationSettings,
    SummarizeDeep,
    TruncateArgsSettings,
    counted,
    tool_tokens,
)
from ctxlab.presets.lc_messages import lc_answer, lc_of, lc_view
from ctxlab.presets.lc_tools import bound_tool
from ctxlab.presets.preset import EMPTY_SYSTEM_MESSAGE, Preset
from ctxlab.presets.steps import Edit, Step, Stepped, StepStrategy
from ctxlab.texts import Texts
from ctxlab.texts.deepagents import CTXLAB_DEEPAGENTS_TEXTS, DeepAgentsTexts

__all__ = [
    "PRESET",
    "SOURCE",
    "DeepAgentsParams",
    "FilesystemSettings",
    "SummarizationSettings",
    "TruncateArgsSettings",
    "build",
]

SOURCE = (
    "deepagents 0.7.32 graph.py (create_deep_agent), middleware/filesystem.py (FilesystemMiddleware), "
    "middleware/summarization.py (SummarizationMiddleware, create_summarization_middleware)"
)
LANGGRAPH_LOOP_LIMIT = 9_999
"""The recursion limit `create_deep_agent` sets (LangGraph supersteps; as a round cap it is never
reached by a workload)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FilesystemSettings:
    """`FilesystemMiddleware`'s eviction of large tool results.

    Attributes:
        tool_token_limit_before_evict: a result whose text is longer than 4 characters per token
            times this is saved to a file and replaced by a stub (20000; none: never).
        human_message_token_limit_before_evict: a new user message longer than 4 characters per
            token times this is saved to a file and shown to the model as a stub with a preview
            (50000; none: never).
    """

    tool_token_limit_before_evict: int | None = 20_000
    human_message_token_limit_before_evict: int | None = 50_000


@dataclass(frozen=True, slots=True, kw_only=True)
class DeepAgentsParams:
    """deepagents' settings, nested as its middleware names them."""

    filesystem: FilesystemSettings = field(default_factory=FilesystemSettings)
    summarization: SummarizationSettings = field(default_factory=SummarizationSettings)


@dataclass(frozen=True, slots=True)
class EvictLargeResults(Step):
    """`FilesystemMiddleware.wrap_tool_call`: a large result saved and replaced by its stub, and
    the built-in tools offered before the user's."""

    settings: FilesystemSettings
    texts: DeepAgentsTexts
    key: ClassVar[str] = "large_results"
    event: ClassVar[EventKind] = EventKind.OFFLOADED
    edits: ClassVar[bool] = True

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """A new user message over its limit is saved and marked evicted (the stored message
        stays whole; each request shows its stub)."""
        tagged: dict[str, str] = memo(state, HUMANS_KEY, {})
        limit = self.settings.human_message_token_limit_before_evict
        message = human_to_evict(state.context, tagged, limit)
        if message is None:
            return Stepped(state=state)
        if env.workspace is not None:
            env.workspace.offload_context((message,))
        minted = issue_id(state, "human")
        number = int("".join(c for c in minted.id if c.isdigit()) or "0")
        return Stepped(state=with_memo(minted.state, HUMANS_KEY, {**tagged, message.id: human_path(number)}))

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """Each evicted user message shown as its stub."""
        tagged: dict[str, str] = memo(state, HUMANS_KEY, {})
        return Edit(messages=humans_evicted(messages, tagged, self.texts), cleared=frozenset(tagged))

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """The stub once the text is saved (the result itself when small or excluded)."""
        if not should_evict(result, self.settings.tool_token_limit_before_evict):
            return result
        if env.workspace is not None:
            saved = (TextBlock(text=result_text(result)),)
            env.workspace.offload_tool_result(ToolResultBlock(id=result.id, name=result.name, output=saved))
        env.recorder.event(EventKind.OFFLOADED)
        return evicted(result, self.texts)

    def tools(self, tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The built-in tools, then the user's as `create_agent` binds them (`bound_tool`); as it
        keys the tools by name, a user's tool named as a built-in takes the built-in's place (one
        tool per name)."""
        offered = {t.schema.name: t.schema for t in self.texts.tools}
        for tool in tools:
            offered[tool.name] = bound_tool(tool)
        return tuple(offered.values())


def _deepagents_texts(texts: Texts) -> DeepAgentsTexts:
    """deepagents' own strings and tools under `texts: deepagents`, the lab's otherwise."""
    if texts.name == "deepagents":
        from ctxlab.texts.deepagents import deepagents_texts

        return deepagents_texts()
    return CTXLAB_DEEPAGENTS_TEXTS


def build(params: DeepAgentsParams, texts: Texts) -> StepStrategy:
    """The `deepagents` strategy: eviction, then summarization, as `create_deep_agent` stacks them."""
    own = _deepagents_texts(texts)
    builtin = {t.schema: t.counted_chars for t in own.tools}

    def request_counter(messages: tuple[Message, ...], tools: tuple[ToolSchema, ...]) -> int:
        """deepagents' count of a request: system prompt, messages and tools. A request opened
        by its system message is counted as that prompt before the view of the context it was
        joined to, which is the view the summarization step read: a view is made of each
        message's own part, and the view kept for the context is found at once."""
        head = lc_of(messages[0]) if messages else ()
        if len(head) == 1 and head[0].kind == "system":
            context = lc_view(REQUESTS.rest(messages, 1))
            return counted(context, str(head[0].content), tool_tokens(tools, builtin))
        view = lc_view(messages)
        system = str(view[0].content) if view and view[0].kind == "system" else None
        return counted(view if system is None else view[1:], system, tool_tokens(tools, builtin))

    steps = (EvictLargeResults(params.filesystem, own), SummarizeDeep(params.summarization, own))
    return StepStrategy(
        name="deepagents",
        steps=steps,
        config=params,
        source=SOURCE,
        futile_limit=0,
        kept_answer=lc_answer,
        request_counter=request_counter,
        empty_system=True,  # create_deep_agent writes its system message even with no prompt
    )


PRESET = Preset(
    name="deepagents",
    summary="deepagents create_deep_agent: 8 built-in tools; tool results over 20k tokens (user "
    "messages over 50k) evicted to files with a head/tail preview; old write_file/edit_file arguments "
    "truncated and the history summarized at 0.85 of the window (system prompt, messages and tools "
    "counted), keeping the last 0.10",
    source=SOURCE,
    params=DeepAgentsParams,
    build=build,
    loop_limit=LANGGRAPH_LOOP_LIMIT,
    peers=("deepagents", "langchain", "langchain-core"),
    no_system=f"{EMPTY_SYSTEM_MESSAGE}, counted (create_deep_agent writes one for system_prompt=None)",
    notes=(
        "exact to deepagents 0.7.32 under texts: deepagents (50 generated workloads call for call)",
        "deviations: the history session and evicted user messages named by counters, not uuid4s; "
        "files kept under the workspace's own names (the model sees deepagents' paths) and the history "
        "file as the lab's JSON; 4 characters per token (no Anthropic 3.3)",
        "a model's thinking is neither sent, counted nor summarized, as an OpenAI-compatible chat "
        "model's reasoning_content kept in additional_kwargs (Anthropic thinking blocks not modelled)",
        "a call's arguments are sent, counted and truncated as LangChain parses and writes them back; "
        "arguments that are not JSON (an invalid tool call, not run) fail the run there, naming the call",
        "inline media of the summarized span named in the summary prompt by deepagents' paths "
        "(/conversation_history/media/<sha256[:16]>.<ext>); the lab keeps no media files (its saved span "
        "holds them) and the kept messages and counts keep the media inline, as deepagents does; "
        "<ext> from a fixed table of mimetypes' answers (Debian 12, Python 3.11), where deepagents asks "
        "the machine's tables, so media are named alike on every machine",
    ),
)
