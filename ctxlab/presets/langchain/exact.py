"""LangChain 1.5.0's `SummarizationMiddleware` and `ClearToolUsesEdit`, call for call.

Both work on the LangChain view of the stored context (`ctxlab.presets.lc_messages`): one message per
OpenAI message, counted with LangChain's approximate counter over the messages only (no system
prompt, no tools), as the middleware counts them. Sources: langchain 1.5.0
`agents/middleware/summarization.py` and `agents/middleware/context_editing.py`,
langchain-core 1.8.3 `messages/utils.py`.

Summarization, before every model call:
- The trigger is a tuple of clauses, OR-ed; each clause maps `tokens` / `messages` /
  `fraction` to a threshold, AND-ed; a clause holds when every count reaches its threshold
  (`>=`; a fraction of the window, at least 1). No clause (the default): never.
- The count is LangChain's with usage scaling (the scripted model reports no usage, so the
  scaling never applies) and 3.3 characters per token for an Anthropic model.
- The cut keeps the last `keep` messages (or the shortest tail within `keep` tokens, by
  LangChain's binary search); a cut on a tool message moves back to the AI message that made
  the call (or forward past the tool messages when there is none). A cut at 0: nothing happens.
- The span is trimmed to its last `trim_tokens_to_summarize` tokens, starting on a human message
  and maybe cutting one message to its last lines; when nothing is left the summary is the
  package's fixed text and no model is called. Otherwise the prompt (the span as LangChain's
  XML transcript) is sent as one user message; a failing call is retried (3 attempts in all)
  and then the run fails. The answer's text, stripped, is the summary: a blank answer (or one
  with no text) is no failure, the summary is empty.
- The summary becomes a user message at the start of the context (a message in state: it
  counts for later triggers and for `keep`, and is summarized again with the next span).
- No futile-compaction breaker and no round cap: the family's loop limit is LangGraph's
  recursion limit.

Clearing edits each request anew (`ContextEditingMiddleware` deep-copies the messages): when
the messages' count is above `trigger`, every tool result but the last `keep` is replaced by the
placeholder, oldest first, unless its tool is excluded or its call is not in the nearest AI
message before it; with `clear_at_least` > 0 it stops once that many tokens are reclaimed; with
`clear_tool_inputs` the cleared call's arguments become `{}`. A result already holding the
placeholder is not cleared again (it only happens with `persist`, an option off by default).

Both send the user's tools as `create_agent` binds them (`ctxlab.presets.lc_tools`: references
inlined, titles removed).

Events: `compressed` (a summary replaced a span), `cleared` (clearing).
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, cast

from ctxlab.core.compaction.clearing import Clearing
from ctxlab.core.compaction.cutoff import LANGCHAIN_KEEP, ContextSize
from ctxlab.core.compaction.plans import Plans, Verdict
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import Block, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.edits import holds_only, replace_blocks, with_output
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.messages.units import (
    BlockRef,
    ViewUnit,
    own_units,
    own_units_read,
    split_at_unit,
    view_units,
)
from ctxlab.core.settings import SettingError, setting
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, issue_id, with_context
from ctxlab.presets.lc_count import (
    ANTHROPIC_CHARS_PER_TOKEN,
    ApproxParams,
    count_stored,
    count_tokens,
    noted_count,
    result_shift,
)
from ctxlab.presets.lc_messages import Counter, LCMessage, lc_view, trim_last, xml_transcript
from ctxlab.presets.lc_summary import (
    SUMMARY_ATTEMPTS,
    TriggerForm,
    checked,
    clauses,
    keep_cutoff,
    should_summarize,
    summary_failure,
)
from ctxlab.presets.lc_tools import bound_tool
from ctxlab.presets.steps import (
    Compaction,
    PersistableClearing,
    Step,
    Stepped,
    record_compaction,
)
from ctxlab.texts.langchain import CTXLAB_LANGCHAIN_TEXTS, LangChainTexts


@dataclass(frozen=True, slots=True, kw_only=True)
class LangChainSummaryParams:
    """`SummarizationMiddleware` settings, with LangChain's defaults.

    Attributes:
        trigger: when to summarize: `[tokens, 4000]`, an AND clause `{tokens: 4000, messages: 50}`,
            or a list of either (OR); none (the default): never.
        keep: the tail kept verbatim: `[messages, 20]` (default), `[tokens, N]` or `[fraction, F]`.
        trim_tokens_to_summarize: the span sent to the summarizer is trimmed to its last this many
            tokens (4000; none: no trim).
        anthropic: count with 3.3 characters per token, as for an Anthropic chat model.
    """

    trigger: TriggerForm | None = None
    keep: ContextSize = LANGCHAIN_KEEP
    trim_tokens_to_summarize: int | None = 4000
    anthropic: bool = False

    def __post_init__(self) -> None:
        with setting("trigger"):
            clauses(self.trigger)
        with setting("keep"):
            checked(self.keep.kind, self.keep.value, "keep")


@dataclass(frozen=True, slots=True, kw_only=True)
class LangChainClearParams:
    """`ClearToolUsesEdit` settings, with LangChain's defaults.

    Attributes:
        trigger: clear when the messages count above this many tokens (100,000); 0 or more.
        keep: the most recent tool results never cleared (3); 0 or more (LangChain slices with
            a negative one, clearing only that many of the oldest results; ctxlab refuses it).
        clear_at_least: when positive, stop once this many tokens are reclaimed (0: clear all);
            0 or more.
        clear_tool_inputs: also replace a cleared call's arguments by `{}`.
        exclude_tools: tools whose results are never cleared.
        placeholder: what a cleared result holds (none: the text set's, LangChain's `[cleared]`
            under `texts: langchain`).
        persist: keep the edit in the stored history (an option, off as LangChain works: each
            request is edited anew from the full history).
    """

    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    clear_tool_inputs: bool = False
    exclude_tools: tuple[str, ...] = ()
    placeholder: str | None = None
    persist: bool = False

    def __post_init__(self) -> None:
        """`keep` is a count: ClearToolUsesEdit's `candidates[:-keep]` turns a negative one
        into "clear only the oldest -keep results", the opposite of what it reads as. `trigger`
        and `clear_at_least` are token counts: the edit compares them (`tokens <= trigger`,
        `clear_at_least > 0`), so a negative one acts as 0 would, and is refused as a count is."""
        for name in ("trigger", "clear_at_least"):
            value = getattr(self, name)
            if value < 0:
                raise SettingError(
                    (name,),
                    f"{name}={value}: a count of tokens is not negative (LangChain's ClearToolUsesEdit "
                    "reads a negative one as 0); use 0 or more",
                )
        if self.keep < 0:
            raise SettingError(
                ("keep",),
                f"keep={self.keep}: LangChain's ClearToolUsesEdit slices with it and would clear "
                f"at most the {-self.keep} oldest tool results; ctxlab refuses it: use 0 to clear "
                "every result, or the count of newest results to keep",
            )


@dataclass(frozen=True, slots=True)
class SummarizeExact(Step):
    """`SummarizationMiddleware.before_model` (see the module docstring)."""

    params: LangChainSummaryParams
    texts: LangChainTexts = CTXLAB_LANGCHAIN_TEXTS
    key: ClassVar[str] = "summarization"

    def counters(self) -> tuple[Counter, Counter]:
        """The middleware's counter (usage scaling on) and the one without scaling."""
        cpt = ANTHROPIC_CHARS_PER_TOKEN if self.params.anthropic else 4.0
        scaled = ApproxParams(chars_per_token=cpt, use_usage_metadata_scaling=True)
        plain = ApproxParams(chars_per_token=cpt)
        return partial(count_tokens, params=scaled), partial(count_tokens, params=plain)

    def tools(self, tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The tools as LangChain's agent sends them."""
        return tuple(bound_tool(t) for t in tools)

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Summarize the span before the kept tail when a clause holds."""
        p = self.params
        view = lc_view(state.context)
        counter, plain = self.counters()
        tokens = counter(view)
        if not should_summarize(clauses(p.trigger), len(view), tokens, env.context_size):
            return Stepped(state=state)
        cut = keep_cutoff(view, p.keep, env.context_size, counter, plain)
        if cut <= 0:
            return Stepped(state=state)
        text = self._summary(state, view[:cut], env, counter)
        minted = issue_id(state, "msg")
        summary = text_message("user", self.texts.summary_prefix.replace("{summary}", text), id=minted.id)
        kept = split_at_unit(state.context, view_units(state.context), cut).tail
        new = with_context(minted.state, (summary, *kept), env.counter)
        after = counter(lc_view(new.context))
        env.recorder.event(EventKind.COMPRESSED)
        record_compaction(
            env,
            before=tokens,
            after=after,
            threshold=tokens,
            compressed=cut,
            kept=len(view) - cut,
            summary_ok=True,
            summary=summary.blocks[0].text if isinstance(summary.blocks[0], TextBlock) else "",
        )
        return Stepped(state=new, compaction=Compaction(before=tokens, after=after, floor=0, trigger=tokens))

    def _summary(self, state: EpisodeState, span: Sequence[LCMessage], env: Env, counter: Counter) -> str:
        limit = self.params.trim_tokens_to_summarize
        shown = tuple(span) if limit is None else trim_last(span, limit, counter)
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
        assert error is not None
        raise error


@dataclass(frozen=True, slots=True)
class ClearExact(PersistableClearing):
    """`ContextEditingMiddleware` with one `ClearToolUsesEdit` (see the module docstring)."""

    params: LangChainClearParams
    texts: LangChainTexts = CTXLAB_LANGCHAIN_TEXTS
    key: ClassVar[str] = "clear_tool_results"

    def tools(self, tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The tools as LangChain's agent sends them."""
        return tuple(bound_tool(t) for t in tools)

    @property
    def persist(self) -> bool:
        """Whether the edit is kept in the stored history."""
        return self.params.persist

    @property
    def trigger(self) -> int:
        """The messages' count the edit waits for."""
        return self.params.trigger

    def clear(self, messages: tuple[Message, ...], sizer: Sizer) -> Clearing:
        """`clear_exact` with this step's parameters (LangChain counts; the sizer is unused)."""
        placeholder = self.texts.placeholder if self.params.placeholder is None else self.params.placeholder
        return clear_exact(messages, self.params, placeholder)


def clear_exact(messages: Sequence[Message], params: LangChainClearParams, placeholder: str) -> Clearing:
    """`ClearToolUsesEdit.apply` on the LangChain view of `messages`, edited in place.

    The verdicts of the history last cleared are kept (`plans`), so a request costs what its
    history gained; with `clear_at_least` or `clear_tool_inputs` the whole history is read. The
    count after is the count before and what each cleared result changed of it
    (`lc_count.result_shift`), noted for the engine's count of the request sent.
    """
    if params.clear_at_least > 0 or params.clear_tool_inputs:
        return _cleared_at_once(messages, params, placeholder)
    before = count_stored(messages)
    if before <= params.trigger:
        return Clearing(messages=tuple(messages), tokens_before=before, tokens_after=before)
    plan = _PLANS.plan(messages, (params, placeholder), _LangChainJudge(params, placeholder))
    applied = plan.applied(params.keep)
    edited = plan.edited(messages, applied)
    shift = plan.shift(applied)
    return Clearing(
        messages=edited,
        cleared=plan.cleared_ids(applied),
        tokens_before=before,
        tokens_after=count_stored(edited) if shift is None else noted_count(edited, before + shift),
    )


_Nearest = tuple[Message, ViewUnit] | None
"""The nearest AI message before a result: its stored message and view unit."""


@dataclass(frozen=True, slots=True)
class _LangChainJudge:
    """Every result counts toward `keep`; one is cleared when the nearest AI message before it
    made its call, its tool is not excluded and it does not hold the placeholder already."""

    params: LangChainClearParams
    placeholder: str

    def start(self) -> object:
        return None

    def resumable(self) -> bool:
        return True

    def judge(self, message: Message, position: int, carry: object) -> tuple[list[Verdict], object]:
        nearest = cast(_Nearest, carry)
        verdicts: list[Verdict] = []
        for unit in own_units(message):
            if unit.role == "assistant":
                nearest = (message, unit)
            elif unit.kind == "result":
                verdicts.append(self._verdict(message, position, unit, nearest))
        return verdicts, nearest

    def judge_from(
        self, message: Message, position: int, carry: object, first: int
    ) -> tuple[list[Verdict], object]:
        """`judge`'s verdicts of the results at blocks `first` on, and the carry after the message
        (a reply that grew is judged past what it gained): the units owning a block from `first`
        on are found by bisection (a unit's end never falls), the nearest AI unit before them by
        a walk back."""
        units = own_units_read(message)  # read here, before any other read of units
        k = bisect.bisect_right(units, first, key=operator.attrgetter("end"))
        nearest = cast(_Nearest, carry)
        for back in range(k - 1, -1, -1):
            if units[back].role == "assistant":
                nearest = (message, units[back])
                break
        verdicts: list[Verdict] = []
        for at in range(k, len(units)):
            unit = units[at]
            if unit.role == "assistant":
                nearest = (message, unit)
            elif unit.kind == "result" and unit.blocks[0] >= first:
                verdicts.append(self._verdict(message, position, unit, nearest))
        return verdicts, nearest

    def _verdict(self, message: Message, position: int, unit: ViewUnit, nearest: _Nearest) -> Verdict:
        ref, call_id = BlockRef(position, unit.blocks[0]), unit.call_ids[0]
        found = None if nearest is None else _call_at(*nearest, call_id)
        call = None if found is None else found[1]
        result = message.blocks[ref.block]
        assert isinstance(result, ToolResultBlock)
        if (
            call is None
            or holds_only(result, self.placeholder)
            or (result.name or call.name) in self.params.exclude_tools
        ):
            return Verdict(ref, call_id, reads=position)
        cleared = with_output(result, self.placeholder)
        return Verdict(ref, call.id, cleared=cleared, shift=result_shift(result, cleared), reads=position)


_PLANS = Plans()


def _cleared_at_once(messages: Sequence[Message], params: LangChainClearParams, placeholder: str) -> Clearing:
    """`clear_exact` worked out from the whole history (it may stop early or clear inputs)."""
    view = lc_view(messages)
    before = count_tokens(view)
    if before <= params.trigger:
        return Clearing(messages=tuple(messages), tokens_before=before, tokens_after=before)
    units = view_units(messages)
    edits: dict[BlockRef, Block] = {}
    cleared: list[str] = []
    inputs: list[str] = []
    current = view
    for unit, call_ref in _candidates(messages, units, params.keep):
        if call_ref is None:
            continue
        result = messages[unit.message].blocks[unit.blocks[0]]
        call = messages[call_ref.message].blocks[call_ref.block]
        assert isinstance(result, ToolResultBlock) and isinstance(call, ToolCallBlock)
        already = holds_only(result, placeholder)
        if already or (result.name or call.name) in params.exclude_tools:
            continue
        edits[BlockRef(unit.message, unit.blocks[0])] = with_output(result, placeholder)
        cleared.append(call.id)
        if params.clear_tool_inputs:
            edits[call_ref] = ToolCallBlock(id=call.id, name=call.name, input="{}")
            inputs.append(call.id)
        if params.clear_at_least > 0:
            current = lc_view(replace_blocks(messages, edits))
            if max(0, before - count_tokens(current)) >= params.clear_at_least:
                break
    edited = replace_blocks(messages, edits)
    return Clearing(
        messages=edited,
        cleared=tuple(cleared),
        inputs_cleared=tuple(inputs),
        tokens_before=before,
        tokens_after=count_stored(edited),
    )


def _candidates(
    messages: Sequence[Message], units: Sequence[ViewUnit], keep: int
) -> Iterator[tuple[ViewUnit, BlockRef | None]]:
    """Every result but the last `keep`, oldest first, with its call when the nearest AI message
    before it made it (in one pass: the nearest AI message is the last one passed)."""
    ranked = sum(1 for u in units if u.kind == "result") - keep
    nearest: ViewUnit | None = None
    for unit in units:
        if ranked <= 0:
            return
        if unit.role == "assistant":
            nearest = unit
        elif unit.kind == "result":
            ranked -= 1
            yield unit, None if nearest is None else _call_in(messages, nearest, unit.call_ids[0])


def _call_in(messages: Sequence[Message], unit: ViewUnit, call_id: str) -> BlockRef | None:
    """Where the AI message `unit` makes the call `call_id` (the first such call), if it does."""
    found = _call_at(messages[unit.message], unit, call_id)
    return None if found is None else BlockRef(unit.message, found[0])


def _call_at(message: Message, unit: ViewUnit, call_id: str) -> tuple[int, ToolCallBlock] | None:
    """The call `call_id` the AI unit `unit` of `message` makes (the first), and its block index."""
    for i in unit.blocks:
        block = message.blocks[i]
        if isinstance(block, ToolCallBlock) and block.id == call_id:
            return i, block
    return None
