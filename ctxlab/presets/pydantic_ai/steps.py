"""The harness's three compaction capabilities as lab steps: each runs before every model request
(`before_model_request`) and edits the stored history, as the capabilities do (`ctx.messages`).

A step reads the stored context as pydantic-ai's history (`pa_view`), asks `harness` what the
capability does, and applies that to the stored context: results and arguments blanked in place,
view units dropped, a summary inserted as a user message framed as pydantic-ai sends it.

pydantic-ai merges adjacent requests when a run starts from a history, which happens at every new
user turn: a step keeps the keys of the merged parts in its memo (`Merges`), so the harness's
message counts and cutoffs see the history as pydantic-ai holds it.

Invariants:
- A step that changes nothing returns the state it was given (its memo aside).
- The summarizer is called once per summary, twice when its first answer is blank (whitespace or
  no text): the second request is the first, the blank answer and the feedback for its kind. An
  error, or a second blank answer, ends the run (raised). Each summary request counts among the
  run's requests and is refused at pydantic-ai's limit (`limits`).

Events: `cleared` (ClearToolResults), `dropped` (SlidingWindowCompaction), `compressed`
(SummarizingCompaction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import Block, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.drops import drop_units
from ctxlab.core.messages.edits import replace_blocks, with_output
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.model import ModelError
from ctxlab.core.messages.units import BlockRef, call_blocks, view_units
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, issue_id, memo, with_context, with_memo
from ctxlab.presets.pydantic_ai import harness, limits
from ctxlab.presets.pydantic_ai.params import (
    ClearToolResultsParams,
    SlidingWindowParams,
    SummarizingParams,
    token_trigger,
)
from ctxlab.presets.pydantic_ai.view import Frame as SummaryFrame
from ctxlab.presets.pydantic_ai.view import (
    PAMessage,
    estimate_tokens,
    merged_keys,
    pa_view,
    stored_chars,
    tokens_of,
)
from ctxlab.presets.steps import Compaction, Step, Stepped, record_compaction
from ctxlab.texts.pydantic_ai import PydanticAITexts

MERGES_KEY = "pydantic_ai_merges"


@dataclass(frozen=True, slots=True, kw_only=True)
class Merges:
    """The parts appended to the request before them (by stored message id), as of `turn`."""

    joined: frozenset[str] = frozenset()
    turn: int = -1


def summary_frame(texts: PydanticAITexts) -> SummaryFrame:
    """How the text set frames a stored summary."""
    return SummaryFrame(head=texts.summary_head, tail=texts.summary_tail, file_reference=texts.file_reference)


def joined_of(history: Sequence[PAMessage]) -> frozenset[str]:
    """The keys of every part after the first of a request."""
    return frozenset(p.key for m in history if m.is_request for p in m.parts[1:] if p.key)


@dataclass(frozen=True, slots=True)
class HarnessStep(Step):
    """What the three capabilities share: the history as pydantic-ai holds it, merges included."""

    texts: PydanticAITexts

    @property
    def frame(self) -> SummaryFrame:
        """How a stored summary is framed."""
        return summary_frame(self.texts)

    def history(self, state: EpisodeState) -> tuple[EpisodeState, tuple[PAMessage, ...]]:
        """The history before this request, merging adjacent requests at a new turn."""
        merges = memo(state, MERGES_KEY, Merges())
        if merges.turn != state.turn:
            joined = merges.joined | merged_keys(pa_view(state.context, self.frame, merges.joined))
            merges = Merges(joined=joined, turn=state.turn)
            state = with_memo(state, MERGES_KEY, merges)
        return state, pa_view(state.context, self.frame, merges.joined)

    def remember(self, state: EpisodeState, history: Sequence[PAMessage]) -> EpisodeState:
        """The state with the merges of the new history."""
        return with_memo(state, MERGES_KEY, Merges(joined=joined_of(history), turn=state.turn))


def kept_context(messages: tuple[Message, ...], history: Sequence[PAMessage]) -> tuple[Message, ...]:
    """The stored context without the view units no part of `history` stands for (a batch's
    files, which stand for no part, go with the last of their returns)."""
    units = view_units(messages)
    kept = {p.unit for m in history for p in m.parts}
    return drop_units(messages, units, [u.index for u in units if u.index not in kept and u.kind != "media"])


@dataclass(frozen=True, slots=True)
class ClearStep(HarnessStep):
    """`ClearToolResults`: blank the oldest results once the trigger holds."""

    params: ClearToolResultsParams
    key: ClassVar[str] = "clear_tool_results"

    @property
    def placeholder(self) -> str:
        """What a cleared result holds."""
        return self.params.placeholder if self.params.placeholder is not None else self.texts.placeholder

    def due(self, history: Sequence[PAMessage], env: Env, tokens: int) -> bool:
        """Whether either trigger holds (`before_model_request`); `tokens` is the harness's
        estimate of `history`."""
        p = self.params
        if (
            p.max_messages is not None
            and harness.since_last_clear(history, self.placeholder) > p.max_messages
        ):
            return True
        limit = token_trigger(p.max_tokens, p.max_fraction, p.context_window, env.context_size)
        return limit is not None and tokens > limit

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Clear when due, unless it reclaims less than `min_clear_tokens`.

        The history is counted from the stored context (`stored_chars`, kept running sums) and
        the cleared one by what clearing took, not part by part at every call."""
        state, history = self.history(state)
        chars = stored_chars(state.context, self.frame)
        before = tokens_of(chars, frame.system_prompt or "")
        if not self.due(history, env, before):
            return Stepped(state=state)
        p = self.params
        plan = harness.clear_plan(
            history, keep_pairs=p.keep_pairs, exclude_tools=p.exclude_tools, clear_inputs=p.clear_tool_inputs
        )
        new = harness.cleared(history, plan, self.placeholder)
        if new == history:
            return Stepped(state=state)
        after = tokens_of(chars - harness.chars_cleared(history, new), frame.system_prompt or "")
        if p.min_clear_tokens is not None and before - after < p.min_clear_tokens:
            return Stepped(state=state)
        edited = replace_blocks(state.context, self._edits(state.context, history, new))
        env.recorder.event(EventKind.CLEARED)
        done = Compaction(before=before, after=after, floor=after, trigger=before)
        return Stepped(state=with_context(state, edited, env.counter), compaction=done)

    def _edits(
        self, messages: tuple[Message, ...], old: Sequence[PAMessage], new: Sequence[PAMessage]
    ) -> dict[BlockRef, Block]:
        units = view_units(messages)
        calls = call_blocks(messages)
        edits: dict[BlockRef, Block] = {}
        for was, now in (
            (a, b)
            for m, n in zip(old, new, strict=True)
            if m is not n
            for a, b in zip(m.parts, n.parts, strict=True)
        ):
            if was == now:
                continue
            if now.kind == "return":
                unit = units[now.unit]
                ref = BlockRef(unit.message, unit.blocks[0])
                result = messages[ref.message].blocks[ref.block]
                assert isinstance(result, ToolResultBlock)
                edits[ref] = with_output(result, now.text)
            else:
                ref, call = calls[now.call_id]
                edits[ref] = ToolCallBlock(id=call.id, name=call.name, input=now.text)
        return edits


def triggered_cutoff(
    p: SlidingWindowParams | SummarizingParams, history: Sequence[PAMessage], env: Env, frame: Frame
) -> tuple[int | None, int | None]:
    """The token trigger in force, and where the kept tail starts once the trigger holds (None
    while it does not): what the window and the summary share."""
    limit = token_trigger(p.max_tokens, p.max_fraction, p.context_window, env.context_size)
    instructions = frame.system_prompt or ""
    if not harness.over_trigger(
        history, max_messages=p.max_messages, max_tokens=limit, instructions=instructions
    ):
        return limit, None
    cutoff = harness.window_cutoff(
        history, keep_messages=p.keep_messages, keep_tokens=p.keep_tokens, instructions=instructions
    )
    return limit, cutoff


@dataclass(frozen=True, slots=True)
class WindowStep(HarnessStep):
    """`SlidingWindowCompaction`: drop the oldest messages once the trigger holds."""

    params: SlidingWindowParams
    key: ClassVar[str] = "sliding_window_compaction"

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Cut to the kept tail (and the first user request) when over the trigger."""
        state, history = self.history(state)
        p = self.params
        limit, cutoff = triggered_cutoff(p, history, env, frame)
        if cutoff is None or cutoff <= 0:
            return Stepped(state=state)
        new = harness.slid(history, cutoff, preserve_first_user=p.preserve_first_user_message)
        env.recorder.event(EventKind.DROPPED)
        before = estimate_tokens(history, frame.system_prompt or "")
        after = estimate_tokens(new, frame.system_prompt or "")
        state = with_context(state, kept_context(state.context, new), env.counter)
        done = Compaction(before=before, after=after, floor=after, trigger=limit or before)
        return Stepped(state=self.remember(state, new), compaction=done)


@dataclass(frozen=True, slots=True)
class SummarizeStep(HarnessStep):
    """`SummarizingCompaction`: summarize all but the kept tail once the trigger holds."""

    params: SummarizingParams
    key: ClassVar[str] = "summarizing_compaction"

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Summarize the span before the kept tail when over the trigger."""
        state, history = self.history(state)
        p = self.params
        limit, cutoff = triggered_cutoff(p, history, env, frame)
        if cutoff is None:
            return Stepped(state=state)
        plan = harness.summary_plan(
            history,
            cutoff,
            preserve_first_user=p.preserve_first_user_message,
            keep_tokens=p.keep_tokens,
            incremental=p.incremental,
        )
        if plan is None:
            return Stepped(state=state)
        state, summary = self._summary(state, env, plan)
        minted = issue_id(state, "msg")
        message = text_message("user", self.frame.wrap(summary), id=minted.id)
        kept = (*((plan.first,) if plan.first is not None else ()), *plan.preserved)
        context = _with_summary(kept_context(minted.state.context, kept), message, plan.first, state.context)
        new = pa_view(context, self.frame, joined_of(kept))
        before = estimate_tokens(history, frame.system_prompt or "")
        after = estimate_tokens(new, frame.system_prompt or "")
        env.recorder.event(EventKind.COMPRESSED)
        record_compaction(
            env,
            before=before,
            after=after,
            threshold=limit or before,
            compressed=len(plan.span),
            kept=len(plan.preserved),
            summary_ok=True,
            summary=summary,
        )
        state = with_context(minted.state, context, env.counter)
        done = Compaction(before=before, after=after, floor=0, trigger=limit or before)
        return Stepped(state=self.remember(state, new), compaction=done)

    def _summary(self, state: EpisodeState, env: Env, plan: harness.SummaryPlan) -> tuple[EpisodeState, str]:
        """The summary, and the state counting its requests in the run's (`limits`)."""
        prompt = harness.summary_prompt(
            plan,
            prompt=self.texts.summary_prompt,
            incremental_text=self.texts.incremental,
            tool_return_max_chars=self.params.tool_return_max_chars,
        )
        request = (text_message("system", self.texts.instructions), text_message("user", prompt))
        limits.summary_request(state, self.params.request_limit)
        outcome = env.summarize_text(state, request)
        if outcome.refused is not None:
            state = limits.summary_answered(state)
            # A blank answer is asked again once, after the answer itself, with the feedback for
            # its kind: whitespace fails the summary agent's output validator, no text at all
            # fails pydantic-ai's own check; a second blank answer ends the run.
            feedback = self.texts.blank_retry if outcome.refused else self.texts.no_text_retry
            retry = (*request, text_message("assistant", outcome.refused), text_message("user", feedback))
            limits.summary_request(state, self.params.request_limit)
            outcome = env.summarize_text(state, retry, retry=True)
        if outcome.text is None:
            raise outcome.error if outcome.error is not None else ModelError("the summarizer was not called")
        return limits.summary_answered(state), outcome.text.strip()


def _with_summary(
    kept: tuple[Message, ...], summary: Message, first: PAMessage | None, old: tuple[Message, ...]
) -> tuple[Message, ...]:
    """`kept` with the summary after the first user request (at the start when none is kept)."""
    if first is None:
        return (summary, *kept)
    units = view_units(old)
    last_id = old[units[first.parts[-1].unit].message].id
    at = next(i for i, m in enumerate(kept) if m.id == last_id) + 1
    return (*kept[:at], summary, *kept[at:])
