"""deepagents 0.7.32's `SummarizationMiddleware.wrap_model_call`, call for call.

Before every model call, on the LangChain view of the context (`ctxlab.presets.lc_messages`):
1. The request is counted as deepagents counts it: LangChain's approximate counter over the
   system prompt and the messages, plus the tools' schemas (the built-in tools included).
2. Old tool calls' arguments are truncated for this request when `truncate_args_settings`'
   trigger holds: in the messages before its kept tail, each string argument of a `write_file`
   or `edit_file` call longer than `max_length` becomes its first 20 characters and the
   truncation text. The stored history keeps them whole; each request is truncated anew.
3. It summarizes when a trigger clause holds (LangChain's clauses, on the truncated messages
   and the count above) or when the count is over the input budget (95% of the window).
4. The kept tail is LangChain's (`keep`, counted over the messages alone). A cut at 0: nothing
   is summarized, but the over-budget check below still runs.
5. The span is written to the session's history file, `/conversation_history/<session>.md`
   (the session named once per run), and summarized: its inline media named by the paths
   deepagents saves them at (`ctxlab.presets.deepagents.media`), trimmed to
   `trim_tokens_to_summarize` (none by default: the whole span) and sent as LangChain's XML
   transcript in deepagents' prompt; a trim that leaves nothing gives LangChain's fixed text
   without a call; a failing call is tried 3 times in all, then the run fails (a blank answer is
   an empty summary, as in LangChain). The summary enters the context as a user message naming
   the history file, followed by the kept tail. The kept tail and every count keep the media.
6. The request is checked against the input budget: when over, the trailing batch of tool
   results is cut, in the stored history too (a `read_file` result to its first 4,000 characters
   and a notice naming the file; any other saved at `/large_tool_results/<call id>` and replaced
   by its stub); when still over, the run fails with deepagents' context overflow.

Events: `truncated` (arguments cut in a request), `compressed` (a summary replaced a span),
`offloaded` (the span saved; a tail result evicted), `summary_failed`.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import Block, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.edits import replace_blocks
from ctxlab.core.messages.latest import Joined
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.model import ModelError
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.messages.units import BlockRef, split_at_unit, view_units
from ctxlab.core.settings import SettingError, setting
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, issue_id, memo, with_context, with_memo
from ctxlab.presets.deepagents.eviction import HUMANS_KEY, evicted, humans_evicted, result_text
from ctxlab.presets.deepagents.media import offloaded_media
from ctxlab.presets.lc_count import ApproxParams, count_tokens
from ctxlab.presets.lc_messages import LCMessage, lc_view, trim_last, xml_transcript
from ctxlab.presets.lc_summary import (
    SUMMARY_ATTEMPTS,
    TriggerForm,
    checked,
    clauses,
    keep_cutoff,
    should_summarize,
    summary_failure,
)
from ctxlab.presets.lc_tools import BoundTool
from ctxlab.presets.steps import Compaction, Edit, Step, Stepped, record_compaction
from ctxlab.texts.deepagents import DeepAgentsTexts, counted_chars

TRUNCATED_TOOLS = ("write_file", "edit_file")
READ_CUT_CHARS = 4000
"""Characters of a `read_file` result kept when an over-budget request cuts it."""
KEPT_CHARS = 20
"""Characters of a truncated argument kept before the truncation text."""
BUDGET_SHARE = 0.95
"""The input budget: this share of the window (no output tokens are reserved: the lab's models
set none)."""
HISTORY_DIR = "/conversation_history"
SESSION_KEY = "deepagents_session"
TRUNCATE_KEY = "deepagents_truncated"
SCALED = ApproxParams(use_usage_metadata_scaling=True)
PLAIN = ApproxParams()
AT_85_PERCENT = ContextSize("fraction", 0.85)
LAST_10_PERCENT = ContextSize("fraction", 0.10)


class ContextOverflowError(ModelError):
    """The request is over the input budget after summarizing and evicting the tail (deepagents
    raises langchain-core's `ContextOverflowError`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncateArgsSettings:
    """`truncate_args_settings`: when and how old `write_file` / `edit_file` arguments are cut.

    Attributes:
        trigger: when to truncate: `[tokens, N]`, `[messages, N]` or `[fraction, F]`; none: never.
        keep: the recent messages left whole: `[messages, N]`, `[tokens, N]` or `[fraction, F]`.
        max_length: arguments longer than this many characters are truncated.
        truncation_text: what follows the first 20 characters (none: the text set's,
            deepagents' "...(argument truncated)" under `texts: deepagents`).
    """

    trigger: ContextSize | None = AT_85_PERCENT
    keep: ContextSize = LAST_10_PERCENT
    max_length: int = 2000
    truncation_text: str | None = None

    def __post_init__(self) -> None:
        if self.trigger is not None:
            with setting("trigger"):
                checked(self.trigger.kind, self.trigger.value, "truncate_args_settings trigger")
        with setting("keep"):
            checked(self.keep.kind, self.keep.value, "truncate_args_settings keep")
        if self.max_length < 0:
            raise SettingError(("max_length",), f"max_length is at least 0, got {self.max_length}")


@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizationSettings:
    """deepagents' summarization, as `create_summarization_middleware` sets it for a model whose
    window is known.

    Attributes:
        trigger: when to summarize: `[fraction, 0.85]` (default), `[tokens, N]`, an AND clause
            `{tokens: N, messages: M}`, or a list of either (OR).
        keep: the tail kept verbatim: `[fraction, 0.10]` (default), `[messages, N]`, `[tokens, N]`.
        trim_tokens_to_summarize: the span sent to the summarizer is trimmed to its last this many
            tokens (none, the default: the whole span).
        truncate_args_settings: the truncation of old file-tool arguments.
    """

    trigger: TriggerForm | None = AT_85_PERCENT
    keep: ContextSize = LAST_10_PERCENT
    trim_tokens_to_summarize: int | None = None
    truncate_args_settings: TruncateArgsSettings = TruncateArgsSettings()

    def __post_init__(self) -> None:
        with setting("trigger"):
            clauses(self.trigger)
        with setting("keep"):
            checked(self.keep.kind, self.keep.value, "keep")


def tool_tokens(tools: Sequence[ToolSchema], builtin: dict[ToolSchema, int]) -> int:
    """The tools' share of deepagents' count: their counted characters over 4, rounded up (a
    built-in tool as deepagents binds it, a user's as it was given, any other from its schema)."""
    if not tools:
        return 0
    chars = (builtin.get(t, t.counted_chars if isinstance(t, BoundTool) else counted_chars(t)) for t in tools)
    return math.ceil(sum(chars) / SCALED.chars_per_token)


def input_budget(window: int) -> int:
    """`_input_budget`: 95% of the window (no output tokens reserved)."""
    return max(0, int(window * BUDGET_SHARE))


def counted(view: Sequence[LCMessage], system: str | None, tools: int) -> int:
    """deepagents' count of a request: the system message (an empty one too; None: none), the
    messages and the tools."""
    return count_tokens(_REQUEST_VIEWS(_system_head(system), view), SCALED) + tools


_REQUEST_VIEWS = Joined()
"""The requests `counted` reads, joined so that the count of a request that grew from the last
one resumes after what they share (`Joined`), however long the history."""


@functools.lru_cache(maxsize=16)
def _system_head(system: str | None) -> tuple[LCMessage, ...]:
    """The system prompt as the request's first message: the same object for the same text, so
    the count of a request resumes after what the one before shared with it."""
    return () if system is None else (LCMessage(kind="system", content=system),)


def _scaled(view: Sequence[LCMessage]) -> int:
    return count_tokens(view, SCALED)


def _plain(view: Sequence[LCMessage]) -> int:
    return count_tokens(view, PLAIN)


def _holds(kind: str, value: float, count: int, tokens: int, window: int) -> bool:
    if kind == "messages":
        return count >= value
    if kind == "tokens":
        return tokens >= value
    return tokens >= max(1, int(window * value))


def truncation_cutoff(view: Sequence[LCMessage], keep: ContextSize, window: int) -> int:
    """Where the messages left whole start (`_determine_truncate_cutoff_index`)."""
    kind, value = keep
    n = len(view)
    if kind == "messages":
        return n if n <= value else int(n - value)
    target = max(1, int(value) if kind == "tokens" else int(window * value))
    kept = 0
    for i in range(n - 1, -1, -1):
        tokens = count_tokens([view[i]])
        if kept + tokens > target:
            return i + 1
        kept += tokens
    return 0


def _cut(value: object, max_length: int, text: str) -> object:
    return value[:KEPT_CHARS] + text if isinstance(value, str) and len(value) > max_length else value


def truncated_input(call: ToolCallBlock, max_length: int, text: str) -> str | None:
    """The call's arguments with long strings cut, or None when nothing is cut."""
    if call.name not in TRUNCATED_TOOLS:
        return None
    try:
        args = json.loads(call.input)
    except json.JSONDecodeError:
        return None
    if not isinstance(args, dict):
        return None
    cut = {k: _cut(v, max_length, text) for k, v in args.items()}
    return None if cut == args else json.dumps(cut, ensure_ascii=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Summarized:
    """A summary's new state, the summary message's text, and where the lab kept the span."""

    state: EpisodeState
    text: str
    saved_at: str | None


@dataclass(frozen=True, slots=True)
class SummarizeDeep(Step):
    """deepagents' summarization step (see the module docstring)."""

    settings: SummarizationSettings
    texts: DeepAgentsTexts
    key: ClassVar[str] = "summarization"
    event: ClassVar[EventKind] = EventKind.TRUNCATED
    edits: ClassVar[bool] = True

    @property
    def builtin_chars(self) -> dict[ToolSchema, int]:
        """Counted characters of the built-in tools, by schema (a user's tool of the same name is
        counted as itself)."""
        return {t.schema: t.counted_chars for t in self.texts.tools}

    def truncations(
        self, messages: tuple[Message, ...], view: Sequence[LCMessage], tokens: int, window: int
    ) -> dict[str, str]:
        """The calls whose arguments this request truncates, by call id (`_truncate_args`); `view`
        is the LangChain view of `messages`."""
        t = self.settings.truncate_args_settings
        if t.trigger is None or not _holds(t.trigger.kind, t.trigger.value, len(view), tokens, window):
            return {}
        cutoff = truncation_cutoff(view, t.keep, window)
        if cutoff >= len(view):
            return {}
        text = self.texts.argument_truncation if t.truncation_text is None else t.truncation_text
        cut: dict[str, str] = {}
        for unit in view_units(messages)[:cutoff]:
            for i in unit.blocks:
                block = messages[unit.message].blocks[i]
                if isinstance(block, ToolCallBlock):
                    new = truncated_input(block, t.max_length, text)
                    if new is not None:
                        cut[block.id] = new
        return cut

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Truncate, summarize and check the budget as `wrap_model_call` does."""
        window, tools = env.context_size, tool_tokens(frame.tools, self.builtin_chars)
        stored = state.context
        context = humans_evicted(stored, memo(state, HUMANS_KEY, {}), self.texts)
        view = lc_view(context)
        tokens = counted(view, frame.system_prompt, tools)
        edits = self.truncations(context, view, tokens, window)
        shown = truncated(context, edits)
        if edits:
            view = lc_view(shown)
            tokens = counted(view, frame.system_prompt, tools)
        over = tokens > input_budget(window)
        if not (should_summarize(clauses(self.settings.trigger), len(view), tokens, window) or over):
            return Stepped(state=_with_truncations(state, edits))
        cut = keep_cutoff(view, self.settings.keep, window, _scaled, _plain)
        if cut <= 0:
            state = _with_truncations(state, edits)
            return Stepped(state=self._within_budget(state, env, frame, shown))
        done = self._summarized(state, env, stored, view, cut)
        new = _with_truncations(done.state, edits)
        new = self._within_budget(new, env, frame, self._request(new))
        after = counted(lc_view(new.context), frame.system_prompt, tools)
        record_compaction(
            env,
            before=tokens,
            after=after,
            threshold=tokens,
            compressed=cut,
            kept=len(view) - cut,
            summary_ok=True,
            summary=done.text,
            offload_path=done.saved_at,
        )
        return Stepped(state=new, compaction=Compaction(before=tokens, after=after, floor=0, trigger=tokens))

    def _summarized(
        self, state: EpisodeState, env: Env, context: tuple[Message, ...], view: Sequence[LCMessage], cut: int
    ) -> Summarized:
        """The state with the span replaced by the summary message (the span saved)."""
        session, state = _session(state)
        path = f"{HISTORY_DIR}/{session}.md"
        span = split_at_unit(context, view_units(context), cut)
        kept_at = env.workspace.offload_context(span.head) if env.workspace is not None else None
        env.recorder.event(EventKind.OFFLOADED)
        text = self.texts.summary_message.format(path=path, summary=self._summary(state, view[:cut], env))
        minted = issue_id(state, "msg")
        summary = text_message("user", text, id=minted.id)
        new = with_context(minted.state, (summary, *span.tail), env.counter)
        env.recorder.event(EventKind.COMPRESSED)
        return Summarized(state=new, text=text, saved_at=kept_at)

    def _summary(self, state: EpisodeState, span: Sequence[LCMessage], env: Env) -> str:
        limit = self.settings.trim_tokens_to_summarize
        span = offloaded_media(span, self.texts)
        shown = span if limit is None else trim_last(span, limit, _scaled)
        if not shown:
            return self.texts.too_long
        prompt = self.texts.summary_prompt.format(messages=xml_transcript(shown)).rstrip()
        request = (text_message("user", prompt),)
        error: Exception | None = None
        for attempt in range(SUMMARY_ATTEMPTS):
            outcome = env.summarize_text(state, request, retry=attempt > 0, failure="error")
            if outcome.text is not None:
                return outcome.text.strip()
            error = summary_failure(outcome.error)
        env.recorder.event(EventKind.SUMMARY_FAILED)
        assert error is not None
        raise error

    def _within_budget(
        self, state: EpisodeState, env: Env, frame: Frame, request: tuple[Message, ...]
    ) -> EpisodeState:
        """`_call_with_budget`: over the budget, the trailing results are evicted; still over, the
        run fails."""
        tools = tool_tokens(frame.tools, self.builtin_chars)
        budget = input_budget(env.context_size)
        if counted(lc_view(request), frame.system_prompt, tools) <= budget:
            return state
        tail = _tail_results(state.context)
        if not tail:
            raise ContextOverflowError("the context remains above the input budget after compaction")
        edits: dict[BlockRef, Block] = {}
        for ref in tail:
            result = state.context[ref.message].blocks[ref.block]
            assert isinstance(result, ToolResultBlock)
            edits[ref] = self._clipped(result, state.context, env)
        state = with_context(state, replace_blocks(state.context, edits), env.counter)
        request = self._request(state)
        if counted(lc_view(request), frame.system_prompt, tools) > budget:
            raise ContextOverflowError("the context remains above the input budget after compaction")
        return state

    def _clipped(self, result: ToolResultBlock, messages: tuple[Message, ...], env: Env) -> ToolResultBlock:
        """A trailing result of an over-budget request (`_clip_one_tail_message`): a `read_file`
        result cut to its first 4,000 characters and a notice naming the file it read, any other
        evicted to `/large_tool_results/<call id>`."""
        path = read_path(messages, result.id)
        if path is not None:
            env.recorder.event(EventKind.TRUNCATED)
            text = result_text(result)[:READ_CUT_CHARS] + self.texts.read_cut_notice.format(path=path)
            return ToolResultBlock(
                id=result.id, name=result.name, output=(TextBlock(text=text),), state=result.state
            )
        env.recorder.event(EventKind.OFFLOADED)
        if env.workspace is not None:
            saved = (TextBlock(text=result_text(result)),)
            env.workspace.offload_tool_result(ToolResultBlock(id=result.id, name=result.name, output=saved))
        return evicted(result, self.texts)

    def _request(self, state: EpisodeState) -> tuple[Message, ...]:
        """The messages the next request sends: evicted user messages as stubs, arguments cut."""
        shown = humans_evicted(state.context, memo(state, HUMANS_KEY, {}), self.texts)
        return truncated(shown, memo(state, TRUNCATE_KEY, {}))

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """This request's argument truncations (worked out before the call)."""
        edits: dict[str, str] = memo(state, TRUNCATE_KEY, {})
        if not edits:
            return Edit(messages=messages)
        return Edit(messages=truncated(messages, edits), cleared=frozenset(edits))


def _with_truncations(state: EpisodeState, edits: dict[str, str]) -> EpisodeState:
    if memo(state, TRUNCATE_KEY, {}) == edits:
        return state
    return with_memo(state, TRUNCATE_KEY, dict(edits))


def truncated(messages: tuple[Message, ...], inputs: dict[str, str]) -> tuple[Message, ...]:
    """`messages` with the calls named in `inputs` given those arguments."""
    if not inputs:
        return messages
    edits: dict[BlockRef, Block] = {
        BlockRef(m, i): ToolCallBlock(id=block.id, name=block.name, input=inputs[block.id])
        for m, message in enumerate(messages)
        for i, block in enumerate(message.blocks)
        if isinstance(block, ToolCallBlock) and block.id in inputs
    }
    return replace_blocks(messages, edits)


def read_path(messages: tuple[Message, ...], call_id: str) -> str | None:
    """The file a `read_file` call read, when `call_id` is such a call with a `file_path`."""
    for message in messages:
        for block in message.blocks:
            if isinstance(block, ToolCallBlock) and block.id == call_id:
                if block.name != "read_file":
                    return None
                try:
                    args = json.loads(block.input)
                except json.JSONDecodeError:
                    return None
                path = args.get("file_path") if isinstance(args, dict) else None
                return path if isinstance(path, str) and path else None
    return None


def _session(state: EpisodeState) -> tuple[str, EpisodeState]:
    """The run's history session (named at the first summary; deepagents names it with a uuid4,
    the lab with a counter of the same length)."""
    session = memo(state, SESSION_KEY, "")
    if session:
        return session, state
    minted = issue_id(state, "session")
    number = int("".join(c for c in minted.id if c.isdigit()) or "0")
    name = f"session_{number:032x}"
    return name, with_memo(minted.state, SESSION_KEY, name)


def _tail_results(messages: tuple[Message, ...]) -> tuple[BlockRef, ...]:
    """The tool results that end the view (the trailing batch of tool messages)."""
    units = view_units(messages)
    refs: list[BlockRef] = []
    for unit in reversed(units):
        if unit.kind != "result":
            break
        refs.append(BlockRef(unit.message, unit.blocks[0]))
    return tuple(reversed(refs))
