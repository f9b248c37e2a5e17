"""The strands presets: `strands-sliding-window` (`SlidingWindowConversationManager`, the manager
every strands agent gets by default) and `strands-summarizing` (`SummarizingConversationManager`),
exact to strands-agents 1.62.0 and checked call for call against the installed package.

Both work on the strands message list (`ctxlab.presets.strands.window`) and count messages, not
tokens. The provider decides overflow: a request over the model's window (the lab's count of it)
is refused, as a provider raises a context-window error; the agent then reduces the context and
sends it again. A refused request is not a call (nothing is processed); the event
`context_overflow` is recorded on the call that follows it. strands sets no bound on those
retries, but each one nests a call, so the real agent stops at Python's recursion limit: the run
fails once `REFUSALS` refusals of one turn have been reduced, where strands raises its
`RecursionError` (a summary that no longer shrinks the request, an empty window).

Sliding window, before each call and after each turn:
- after every invocation (here: before the first call of the next turn, on the messages before
  its prompt) and, with `per_turn`, before every call (or every N-th, refused calls counted):
  when the list is over `window_size` messages, the oldest are trimmed (`dropped`);
- on overflow, the oldest message holding tool results has their long texts cut to their first
  and last 200 characters and their images replaced (`truncated`), unless nothing there changes
  (already cut): then the oldest messages are trimmed; with no possible trim, the run fails;
- the window starts at a user prompt; failing one, at an assistant tool use followed by its
  results, so a request may start with an assistant message: the lab's protocol check reports
  it, the preset does not repair it.

Summarizing, only on overflow: `max(1, int(n × summary_ratio))` of the oldest messages (the
ratio clamped to [0.1, 0.8]), at most `n - preserve_recent_messages`, moved forward past
results, are summarized by one call (the summarization system prompt, those messages and a
closing user request, no tools) and replaced by the summary as a user message (`compressed`);
too few messages, or a failed summary, fails the run. A summary request over the window is
refused like any other.

Images go as strands' OpenAI provider sends them (`ctxlab.presets.strands.images`, request-only):
a result's images in a user message after its tool message, which carries the provider's notice
in their place, and a cut result's texts joined; a request of a context holding no image is sent
as stored at no cost.

A call's arguments are stored as strands parses them and its OpenAI provider writes them back
(`ctxlab.presets.strands.answers`): every request sends and counts them so. An empty answer (no
text, no call) is kept as a message sent as `[blank text]` and counted by the window, and left
out of a summary request, as strands does.

Not reproduced (declared in `NOTES` and in the checklist): `pin_first`, `proactive_compression`
(it estimates from the provider's reported usage and tiktoken), a `summarization_agent`; a WebP
image and an image given by URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.message import Message, fixed_messages, text_message
from ctxlab.core.messages.model import ModelError
from ctxlab.core.messages.tokens import measure_all
from ctxlab.core.messages.units import split_at_unit, view_units
from ctxlab.core.settings import SettingError
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, issue_id, memo, with_context, with_memo
from ctxlab.presets.preset import NO_SYSTEM_MESSAGE, Preset
from ctxlab.presets.steps import Compaction, Step, Stepped, StepStrategy, record_compaction
from ctxlab.presets.strands.answers import strands_answer, summary_messages
from ctxlab.presets.strands.images import IMAGES_CUT, SentImages, sent_request
from ctxlab.presets.strands.window import (
    TrimError,
    cut_results,
    oldest_with_results,
    strands_view,
    summary_split,
    trim_index,
)
from ctxlab.texts import Texts
from ctxlab.texts.strands import CTXLAB_STRANDS_TEXTS, StrandsTexts

VERSION = "strands-agents 1.62.0"
WINDOW_SOURCE = (
    f"{VERSION} agent/conversation_manager/sliding_window_conversation_manager.py "
    "(SlidingWindowConversationManager)"
)
SUMMARY_SOURCE = (
    f"{VERSION} agent/conversation_manager/summarizing_conversation_manager.py "
    "(SummarizingConversationManager)"
)
NO_LOOP_LIMIT = 9_999
"""A strands agent has no round limit by default; as a round cap this is never reached. (Its tool
rounds nest too: with no refusal, a turn ends with an EventLoopException at its 318th model call at
Python's default recursion limit; not reproduced, see `NOTES`.)"""
REFUSALS = 950
"""Refusals of one turn after whose reduction a run fails. strands retries a refused request with
no bound of its own, but each retry nests one more call (`Agent._execute_event_loop_cycle` calls
itself), so at CPython's default recursion limit (1,000) the real agent raises a RecursionError
after about 950 refusals in one invocation: 944 to 958 measured on Python 3.11 and 3.13, by how
deeply its messages nest. Python 3.12 bounds the C part of that nesting at a depth of its own,
which no recursion limit moves: there the agent stops after 727 (3.12.1). The lab keeps 950 on
every Python, so a run's results do not depend on the interpreter."""
REFUSED_KEY = "strands.refused"
GAVE_UP = (
    f"{VERSION} retries with no bound of its own, but each retry nests a call: the real agent stops "
    f"with a RecursionError at Python's default recursion limit, after about {REFUSALS} refusals in "
    "one invocation"
)
NOTES = (
    "pin_first and proactive_compression (off by default) are not reproduced",
    "a refused over-window request is an event (context_overflow) on the next call, not a call",
    f"a turn fails once {REFUSALS} refusals in it have been reduced: strands sets no bound, but each "
    "retry nests a call and the real agent stops with a RecursionError at Python's default recursion "
    "limit, after 944 to 958 refusals (by how deeply its messages nest) on Python 3.11 and 3.13, and "
    "after 727 on 3.12.1 (its own bound on C recursion); the lab keeps 950 on every Python",
    "strands' tool rounds nest too: with no refusal, its 318th model call of one invocation stops "
    "strands at the same limit (EventLoopException); the lab does not stop there",
    "a model's thinking is neither sent nor counted (the OpenAI provider leaves reasoningContent out); "
    "an answer of thinking alone is not a message the window or the summary split counts "
    "(strands keeps one)",
    "images are sent as strands' OpenAI provider sends them (a result's after its tool message, behind "
    "the provider's notice); a WebP image (application/octet-stream from strands on Python 3.11) and "
    "an image given by URL (no source strands' image block takes) are sent as stored",
)


class ContextOverflowError(ModelError):
    """The context cannot be reduced below the window (the package's overflow error)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StrandsSlidingWindowParams:
    """`SlidingWindowConversationManager` settings, with strands' defaults.

    Attributes:
        window_size: the most messages kept after each turn (40); 0 clears every message.
        should_truncate_results: on overflow, cut the oldest tool results before trimming.
        per_turn: also manage the window before every model call (true) or every N-th (N), not
            only after each turn (false).
    """

    window_size: int = 40
    should_truncate_results: bool = True
    per_turn: bool | int = False

    def __post_init__(self) -> None:
        if self.window_size < 0:
            raise SettingError(
                ("window_size",), f"window_size must be a non-negative integer, got {self.window_size}"
            )
        if not isinstance(self.per_turn, bool) and self.per_turn <= 0:
            raise SettingError(
                ("per_turn",), f"per_turn must be a positive integer, True, or False, got {self.per_turn}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class StrandsSummarizingParams:
    """`SummarizingConversationManager` settings, with strands' defaults.

    Attributes:
        summary_ratio: the share of the oldest messages summarized on overflow (0.3; clamped to
            [0.1, 0.8]).
        preserve_recent_messages: the newest messages never summarized (10).
        summarization_system_prompt: the summary request's system prompt (none: the text set's,
            strands' own under `texts: strands`).
    """

    summary_ratio: float = 0.3
    preserve_recent_messages: int = 10
    summarization_system_prompt: str | None = None


def request_tokens(
    context: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame, notice: str
) -> int:
    """The lab's count of the request `context` makes, as the provider is sent it (`sent_request`,
    with `notice`): what it weighs against its window."""
    fixed = fixed_messages(frame.system_prompt, state.summary)
    sent = sent_request(context, state, notice)
    return env.counter.total(measure_all(env.counter, fixed) + measure_all(env.counter, sent), frame.tools)


def overflowing(state: EpisodeState, env: Env, frame: Frame, notice: str) -> bool:
    """Whether the provider refuses the request the state makes."""
    return request_tokens(state.context, state, env, frame, notice) > env.context_size


def refused_in_turn(state: EpisodeState) -> int:
    """The refusals reduced so far in the state's turn (strands' nesting depth of retries)."""
    turn, count = memo(state, REFUSED_KEY, (state.turn, 0))
    return count if turn == state.turn else 0


def refuse(state: EpisodeState, env: Env) -> EpisodeState:
    """Record one refused request and count it in its turn."""
    env.recorder.event(EventKind.CONTEXT_OVERFLOW)
    return with_memo(state, REFUSED_KEY, (state.turn, refused_in_turn(state) + 1))


def gave_up(stuck: str) -> ContextOverflowError:
    """The error ending a turn at `REFUSALS` refusals: why the reductions did not help (`stuck`)
    and what strands does there."""
    return ContextOverflowError(
        f"the provider refused the request {REFUSALS} times in this turn: {stuck}. {GAVE_UP}"
    )


def _compaction(before: int, after: int, env: Env) -> Compaction:
    return Compaction(before=before, after=after, floor=0, trigger=env.context_size)


@dataclass(frozen=True, slots=True)
class SlidingWindow(Step):
    """`SlidingWindowConversationManager` (see the module docstring)."""

    params: StrandsSlidingWindowParams
    texts: StrandsTexts = CTXLAB_STRANDS_TEXTS
    key: ClassVar[str] = "strands_window"

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """The end-of-turn window, the per-call window, then reductions while the provider refuses."""
        before = request_tokens(state.context, state, env, frame, self.texts.image_notice)
        state = self._after_turn(state, env, frame)
        state = self._before_call(state, env, frame)
        while overflowing(state, env, frame, self.texts.image_notice):
            state = self._before_call(self.reduce(refuse(state, env), env, frame, overflow=True), env, frame)
            if refused_in_turn(state) >= REFUSALS:  # strands' next retry passes the recursion limit
                raise gave_up(
                    "the trims leave the request over the window"
                    if view_units(state.context)
                    else "no message is left: the system prompt and tools alone are over the window"
                )
        after = request_tokens(state.context, state, env, frame, self.texts.image_notice)
        return Stepped(state=state, compaction=_compaction(before, after, env) if after != before else None)

    def _after_turn(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """The window applied when the previous invocation ended, to the messages before this
        turn's prompt (once per turn, from the second)."""
        if state.turn == 0 or memo(state, f"{self.key}.turn", 0) == state.turn:
            return state
        state = with_memo(state, f"{self.key}.turn", state.turn)
        prompt = state.context[-1:]
        managed = self.manage(with_context(state, state.context[:-1], env.counter), env, frame)
        return with_context(managed, managed.context + prompt, env.counter)

    def _before_call(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """`per_turn`: the window before every call, or every N-th (refused calls counted)."""
        per_turn = self.params.per_turn
        if per_turn is False:
            return state
        calls = memo(state, f"{self.key}.calls", 0) + 1
        state = with_memo(state, f"{self.key}.calls", calls)
        return self.manage(state, env, frame) if per_turn is True or calls % per_turn == 0 else state

    def manage(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """`apply_management`: reduce when the list is over the window."""
        view = strands_view(view_units(state.context))
        if len(view) <= self.params.window_size:
            return state
        return self.reduce(state, env, frame, overflow=False)

    def reduce(self, state: EpisodeState, env: Env, frame: Frame, *, overflow: bool) -> EpisodeState:
        """`reduce_context`: cut the oldest results (on overflow only), else trim the oldest messages.

        Raises:
            ContextOverflowError: on overflow, when nothing can be trimmed.
        """
        units = view_units(state.context)
        view = strands_view(units)
        if overflow and self.params.window_size > 0 and self.params.should_truncate_results:
            oldest = oldest_with_results(view)
            cut = None if oldest is None else cut_results(state.context, units, view[oldest])
            if cut is not None:
                env.recorder.event(EventKind.TRUNCATED)
                after = with_context(state, cut, env.counter)
                if after.context_tally.ndata < state.context_tally.ndata:  # an image became a text
                    after = with_memo(after, IMAGES_CUT, True)
                return after
        try:
            index = trim_index(view, self.params.window_size, overflow=overflow)
        except TrimError as failure:
            raise ContextOverflowError(str(failure)) from None
        if index is None:
            return state
        start = view[index].first if index < len(view) else len(units)
        kept = split_at_unit(state.context, units, start).tail
        env.recorder.event(EventKind.DROPPED)
        record_compaction(
            env,
            before=request_tokens(state.context, state, env, frame, self.texts.image_notice),
            after=request_tokens(kept, state, env, frame, self.texts.image_notice),
            threshold=env.context_size,
            compressed=index,
            kept=len(view) - index,
            summary_ok=True,
            summary="",
        )
        return with_context(state, kept, env.counter)


@dataclass(frozen=True, slots=True)
class Summarizing(Step):
    """`SummarizingConversationManager` (see the module docstring)."""

    params: StrandsSummarizingParams
    texts: StrandsTexts = CTXLAB_STRANDS_TEXTS
    key: ClassVar[str] = "strands_summary"

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Summarize the oldest messages while the provider refuses the request."""
        before = request_tokens(state.context, state, env, frame, self.texts.image_notice)
        while overflowing(state, env, frame, self.texts.image_notice):
            state = self.summarize_oldest(refuse(state, env), env, frame)
            if refused_in_turn(state) >= REFUSALS:  # strands' next retry passes the recursion limit
                raise gave_up(self.stuck(state))
        after = request_tokens(state.context, state, env, frame, self.texts.image_notice)
        return Stepped(state=state, compaction=_compaction(before, after, env) if after != before else None)

    def stuck(self, state: EpisodeState) -> str:
        """Why the summaries leave the request over the window."""
        preserve = self.params.preserve_recent_messages
        if len(strands_view(view_units(state.context))) == preserve + 1:
            return (
                f"preserve_recent_messages keeps the newest {preserve} messages, so each summary "
                "replaces only the previous one"
            )
        return "the summaries leave the request over the window"

    def summarize_oldest(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """Replace the oldest messages by a summary of them.

        Raises:
            ContextOverflowError: too few messages to summarize.
            ModelError: the summary call failed (a refused summary request included).
        """
        p = self.params
        units = view_units(state.context)
        view = strands_view(units)
        ratio = max(0.1, min(0.8, p.summary_ratio))
        try:
            count = summary_split(view, ratio, p.preserve_recent_messages)
        except TrimError as failure:
            raise ContextOverflowError(str(failure)) from None
        start = view[count].first if count < len(view) else len(units)
        head, tail = split_at_unit(state.context, units, start)
        text = self.summary(state, head, env)
        minted = issue_id(state, "msg")
        summary = text_message("user", text, id=minted.id)
        env.recorder.event(EventKind.COMPRESSED)
        record_compaction(
            env,
            before=request_tokens(state.context, state, env, frame, self.texts.image_notice),
            after=request_tokens((summary, *tail), state, env, frame, self.texts.image_notice),
            threshold=env.context_size,
            compressed=count,
            kept=len(view) - count,
            summary_ok=True,
            summary=text,
        )
        return with_context(minted.state, (summary, *tail), env.counter)

    def summary(self, state: EpisodeState, head: tuple[Message, ...], env: Env) -> str:
        """One summary call: the system prompt, the messages, the closing request; no tools.

        Raises:
            ModelError: the call failed, was refused (over the window), or answered no text (the
                OpenAI provider streams no text block for empty content, and strands' summary
                needs one); a whitespace text is a summary.
        """
        prompt = self.params.summarization_system_prompt
        system = text_message("system", self.texts.summary_system_prompt if prompt is None else prompt)
        sent = sent_request(summary_messages(head), state, self.texts.image_notice)
        request = (system, *sent, text_message("user", self.texts.summary_request))
        if env.counter.count(request, ()) > env.context_size:
            env.summarize_text(state, request)  # the refused call is still made
            raise ContextOverflowError("the summary request is over the window")
        outcome = env.summarize_text(state, request, failure="empty")
        if outcome.text is None:
            raise outcome.error if outcome.error is not None else ModelError("no summary")
        return outcome.text


def _strands_texts(texts: Texts) -> StrandsTexts:
    """strands' own strings under `texts: strands`, the lab's otherwise."""
    if texts.name == "strands":
        from ctxlab.texts.strands import strands_texts

        return strands_texts()
    return CTXLAB_STRANDS_TEXTS


def build_window(params: StrandsSlidingWindowParams, texts: Texts) -> StepStrategy:
    """The `strands-sliding-window` strategy."""
    return StepStrategy(
        name="strands-sliding-window",
        steps=(
            SlidingWindow(params, texts=_strands_texts(texts)),
            SentImages(_strands_texts(texts).image_notice),
        ),
        config=params,
        source=WINDOW_SOURCE,
        futile_limit=0,
        kept_answer=strands_answer,
    )


def build_summarizing(params: StrandsSummarizingParams, texts: Texts) -> StepStrategy:
    """The `strands-summarizing` strategy."""
    return StepStrategy(
        name="strands-summarizing",
        steps=(
            Summarizing(params, texts=_strands_texts(texts)),
            SentImages(_strands_texts(texts).image_notice),
        ),
        config=params,
        source=SUMMARY_SOURCE,
        futile_limit=0,
        kept_answer=strands_answer,
    )


WINDOW_PRESET = Preset(
    name="strands-sliding-window",
    summary="strands SlidingWindowConversationManager (every strands agent's default): 40 messages kept "
    "after each turn; on overflow the oldest tool results cut to 200+200 characters, then the "
    "oldest messages trimmed",
    source=WINDOW_SOURCE,
    params=StrandsSlidingWindowParams,
    build=build_window,
    loop_limit=NO_LOOP_LIMIT,
    peers=("strands-agents",),
    no_system=f'{NO_SYSTEM_MESSAGE} (an Agent with system_prompt=None; "" would send an empty one)',
    notes=NOTES,
    assistant_first="its tool-pair trim point starts the window at an assistant tool use",
)

SUMMARY_PRESET = Preset(
    name="strands-summarizing",
    summary="strands SummarizingConversationManager: on overflow the oldest 30% of messages (the newest "
    "10 kept) summarized into a user message",
    source=SUMMARY_SOURCE,
    params=StrandsSummarizingParams,
    build=build_summarizing,
    loop_limit=NO_LOOP_LIMIT,
    peers=("strands-agents",),
    no_system=f'{NO_SYSTEM_MESSAGE} (an Agent with system_prompt=None; "" would send an empty one)',
    notes=NOTES,
    undeclared_tools="its summary request sends the span it summarizes, tool calls and results as they "
    "are, with no tools (`generate_summary`: `tool_specs=None`; strands' BedrockModel adds a placeholder "
    "`noop` tool to such a request, its AnthropicModel sends `tools: []`)",
)
