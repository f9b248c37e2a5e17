"""The Google ADK presets: `google-adk-window` and `google-adk-tokens`, ADK 2.13.0's events
compaction (`App(events_compaction_config=EventsCompactionConfig(...))`), call for call.

Source: `google-adk==2.13.0`, `google/adk/apps/_configs.py` (`EventsCompactionConfig`),
`apps/compaction.py` (`_run_compaction_for_sliding_window`, `_run_compaction_for_token_threshold_config`),
`apps/llm_event_summarizer.py` (`LlmEventSummarizer`), `flows/llm_flows/context/_compaction.py`
(the request processor and `_process_compaction_events`), `runners.py` (compaction after each
invocation), `flows/llm_flows/prompt/_identity.py` (the identity instruction).

Behaviour (see `ctxlab.presets.google_adk.session` for the event model):
- After each invocation (a user turn), and here before the next turn's first call, which is the
  first moment it shows: the token trigger (below) with any author's count; if it did not
  summarise, the sliding window: once `compaction_interval` invocations ended after the last
  compaction, summarise from `overlap_size` invocations before the first of them to the last.
- Before every model call: the token trigger with the agent's own count. The count is the
  provider's `prompt_token_count` of the latest model response after the latest compaction (the
  lab's measure of that request), else ADK's estimate (characters of the request's contents // 4,
  system instruction and tools left out; `google-adk-tokens` records it as `strategy_tokens`).
  At or over `token_threshold`, the raw events after the latest compaction but the last
  `event_retention_size` (moved earlier so no retained response loses its call) are summarised,
  the latest summary first, so the new one replaces it.
- A range is summarised only if an empty summary of it would remove more characters (the
  contents' JSON) than the latest summary holds. The summary request is one user message: the
  prompt template around one line per text, call and response (arguments and responses as Python
  reprs cut to 2,000 characters). The summary is a model message where its range ended; any
  answer with content is one, a blank text too, and a failed summary (an answer with no text,
  which ADK reads as no content, or a model error, which ADK logs) leaves the history as it was.
- Every request's system instruction ends with the agent's identity instruction.
- Requests go out as ADK's LiteLLM adapter writes them for an OpenAI chat endpoint (`wire`)
  (`models/lite_llm.py`): each tool result as its function response's JSON, `{"result": ...}`
  (`json.dumps` with non-ASCII as written), a model turn's texts joined with a newline, and a
  user message asking to go on after contents that end with a model turn (a summary); the lab's
  counter sizes that, and ADK's estimate reads the contents as ADK does.

Texts: `texts: google-adk` takes the package's strings from its installed package
(`ctxlab.texts.google_adk`); otherwise the summary request is worded by ctxlab.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.latest import Leading
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat, LeadingScan
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, memo, with_memo
from ctxlab.engine.trace import CallRecord
from ctxlab.presets.google_adk import estimate
from ctxlab.presets.google_adk import session as s
from ctxlab.presets.google_adk.layout import latest
from ctxlab.presets.google_adk.params import AdkParams, AdkTokenParams, EventsCompactionConfig
from ctxlab.presets.google_adk.wire import adk_answer, continuation, sent_request
from ctxlab.presets.preset import Preset
from ctxlab.presets.steps import (
    Compaction,
    Edit,
    Step,
    Stepped,
    StepStrategy,
    record_compaction,
    request_sizer,
)
from ctxlab.texts import Texts
from ctxlab.texts.google_adk import AdkTexts, adk_texts

SOURCE = "google-adk 2.13.0, apps/compaction.py and apps/llm_event_summarizer.py (events compaction)"

CTXLAB_ADK_TEXTS = AdkTexts(
    prompt_template=(
        "Below is the start of a conversation between a user and an agent; it may begin with notes "
        "written earlier. Write new notes that replace it: what the user asked and every constraint, "
        "the tools the agent used by name, what was found and decided, and what is still open.\n\n"
        "{conversation_history}"
    ),
    tool_content_chars=2000,
    text_line="{author}: {text}",
    thought_line="{author} (thinking): {text}",
    call_line="{author} -> {name}({args})",
    response_line="{name} returned: {response}",
    truncated_notice=" [... {dropped} more characters]",
    identity='Your name is "{name}".',
    continuation="Go on with the requests above as instructed; stop, or sum up, if nothing more is needed.",
)
"""ctxlab's own wording (`texts: ctxlab`); the mechanics are ADK's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Memo:
    """The compactions appended so far, and the last turn whose end was handled."""

    compactions: tuple[s.Compacted, ...] = ()
    handled_turn: int = 0


@dataclass(frozen=True, slots=True)
class CompactEvents(Step):
    """ADK's events compaction over the session's events (see the module docstring)."""

    config: EventsCompactionConfig
    texts: AdkTexts
    agent_name: str
    key: ClassVar[str] = "google-adk"
    edits: ClassVar[bool] = True

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """The compaction after the last invocation (at a new turn's first call), then before the call."""
        stored = memo(state, self.key, Memo())
        raw = context_events(state.context)
        done = stored
        if state.turn > stored.handled_turn:
            ended = _ended(raw, bisect.bisect_left(raw, state.turn, key=_invocation))  # in turn order
            done = self.after_invocation(ended, done, state, env, frame)
            done = replace(done, handled_turn=state.turn)
        if self.config.token_threshold is not None:
            done = self.token_compaction(raw, done, state, env, frame, author=self.agent_name) or done
        if done == stored:
            return Stepped(state=state)
        new = with_memo(state, self.key, done)
        if len(done.compactions) == len(stored.compactions):
            return Stepped(state=new)
        before, after = (
            self.shown_tokens(state, stored, env, frame),
            self.shown_tokens(state, done, env, frame),
        )
        # ADK has no floor or trigger in tokens to judge by: a compaction is flagged when it
        # reclaims too little of the request, or none (a summary longer than what it replaced)
        done_once = Compaction(before=before, after=after, floor=after, trigger=before)
        return Stepped(state=new, compaction=done_once)

    def shown_tokens(self, state: EpisodeState, done: Memo, env: Env, frame: Frame) -> int:
        """The lab's count of the request the session would send with `done`'s compactions."""
        shown = self.edit(state.context, with_memo(state, self.key, done), env, frame).messages
        return request_sizer(state, env, frame).count(shown)

    def after_invocation(
        self, raw: Sequence[s.RawEvent], done: Memo, state: EpisodeState, env: Env, frame: Frame
    ) -> Memo:
        """`_run_compaction_for_sliding_window`: the token trigger first, then the window."""
        if self.config.token_threshold is not None:
            compacted = self.token_compaction(raw, done, state, env, frame, author="")
            if compacted is not None:
                return compacted
        interval, overlap = self.config.compaction_interval, self.config.overlap_size
        if interval is None or overlap is None:
            return done
        chosen = s.window_candidates(raw, done.compactions, interval, overlap)
        if not chosen or not s.worth_compacting(raw, done.compactions, chosen, chosen[0].ts):
            return done
        return self.summarize(raw, done, state, env, frame, chosen=chosen, seed=None) or done

    def token_compaction(
        self,
        raw: Sequence[s.RawEvent],
        done: Memo,
        state: EpisodeState,
        env: Env,
        frame: Frame,
        *,
        author: str,
    ) -> Memo | None:
        """`_run_compaction_for_token_threshold_config`; None when it does not summarise."""
        threshold, retention = self.config.token_threshold, self.config.event_retention_size
        assert threshold is not None and retention is not None
        count = self.prompt_tokens(raw, done.compactions, env, author)
        if count is None or count < threshold:
            return None
        chosen = s.token_candidates(raw, done.compactions, retention)
        if not chosen:
            return None
        seed = latest(done.compactions)
        if not s.worth_compacting(raw, done.compactions, chosen, seed.start if seed else chosen[0].ts):
            return None
        return self.summarize(raw, done, state, env, frame, chosen=chosen, seed=seed)

    def prompt_tokens(
        self, raw: Sequence[s.RawEvent], compactions: tuple[s.Compacted, ...], env: Env, author: str
    ) -> int | None:
        """`_latest_prompt_token_count`: the latest model response's count after the latest
        compaction (every model event here is the agent's, the k-th the k-th reasoning call's
        answer), else the estimate. Both counts resume after what they counted at the last call."""
        calls, answered = env.recorder.calls, env.recorder.reasoning_calls
        response = s.counted_response(raw, compactions, answered)
        if response is None:
            return estimate.estimate_tokens(s.effective(raw, compactions))
        return reasoning_call(calls, response, answered).tokens["as_sent"]

    def summarize(
        self,
        raw: Sequence[s.RawEvent],
        done: Memo,
        state: EpisodeState,
        env: Env,
        frame: Frame,
        *,
        chosen: Sequence[s.RawEvent],
        seed: s.Compacted | None,
    ) -> Memo | None:
        """`LlmEventSummarizer.maybe_summarize_events`; None when the summary fails."""
        lines = [self.texts.text_line.format(author="model", text=seed.text)] if seed and seed.text else []
        for event in chosen:
            lines.extend(self.lines(event))
        prompt = self.texts.prompt_template.format(conversation_history="\n".join(lines))
        # ADK keeps any answer with content, a blank text too; no content (or an error) fails.
        outcome = env.summarize_text(state, (text_message("user", prompt),), failure="no_text")
        if outcome.text is None:
            env.recorder.event(EventKind.SUMMARY_FAILED)
            return None
        start = seed.start if seed is not None else chosen[0].ts
        compacted = s.Compacted(start=start, end=chosen[-1].ts, text=outcome.text, after=len(raw))
        new = replace(done, compactions=(*done.compactions, compacted))
        env.recorder.event(EventKind.COMPRESSED)
        record_compaction(
            env,
            before=self.shown_tokens(state, done, env, frame),
            after=self.shown_tokens(state, new, env, frame),
            threshold=self.config.token_threshold or 0,
            compressed=len(chosen),
            kept=len(raw) - len(chosen),
            summary_ok=True,
            summary=outcome.text,
        )
        return new

    def lines(self, event: s.RawEvent) -> list[str]:
        """`_format_events_for_prompt` of one event."""
        t = self.texts
        author = "user" if event.role == "user" else self.agent_name
        out = []
        for block in event.blocks:
            if isinstance(block, ThinkingBlock) and block.thinking:
                out.append(t.thought_line.format(author=author, text=block.thinking))
            elif isinstance(block, TextBlock) and block.text:
                out.append(t.text_line.format(author=author, text=block.text))
            elif isinstance(block, ToolCallBlock):
                args = self.cap(str(s.arguments(block)))
                out.append(t.call_line.format(author=author, name=block.name, args=args))
            elif isinstance(block, ToolResultBlock):
                response = self.cap(str({"result": block.text}))
                out.append(t.response_line.format(name=block.name, response=response))
        return out

    def cap(self, text: str) -> str:
        """`LlmEventSummarizer._truncate`."""
        limit = self.texts.tool_content_chars
        if len(text) <= limit:
            return text
        return text[:limit] + self.texts.truncated_notice.format(dropped=len(text) - limit)

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request: `_process_compaction_events` of the session."""
        compactions = memo(state, self.key, Memo()).compactions
        shown = (
            request_messages(s.effective(context_events(messages), compactions)) if compactions else messages
        )
        return Edit(messages=sent_request(shown, continuation(self.texts.continuation)))


def reasoning_call(calls: Sequence[CallRecord], ordinal: int, total: int) -> CallRecord:
    """The reasoning call of `ordinal` (from 0) among the `total` of `calls`, found from the end
    (the one sought is mostly the last).

    Raises:
        IndexError: `calls` has no reasoning call of that ordinal.
    """
    for call in reversed(calls):
        if call.kind == "reasoning":
            total -= 1
            if total == ordinal:
                return call
    raise IndexError(f"no reasoning call {ordinal}")


_invocation = operator.attrgetter("invocation")

_ended = Leading(beside_history=True)
"""The events of the invocations before the current one: a long session's part is noted as the
beginning of the session, so the model-event count, given the part and the session in turn,
resumes from either."""


def context_events(context: tuple[Message, ...]) -> tuple[s.RawEvent, ...]:
    """The raw events of a stored context, `s.events_of(context, invocations(context))`, read
    from the messages a context gained since one read before (`LeadingScan`)."""
    return _scanned_events(context, -1)


def _message_events(turn: int, message: Message, before: int) -> tuple[tuple[s.RawEvent, ...], int]:
    turn += message.role == "user"
    return s.message_events(message, max(turn, 0), before + 1), turn


_scanned_events = LeadingScan[Message, int, s.RawEvent](_message_events)


def invocations(context: Sequence[Message]) -> list[int]:
    """The invocation (user turn) of each stored message: one starts at each user message."""
    out, turn = [], -1
    for message in context:
        turn += message.role == "user"
        out.append(max(turn, 0))
    return out


def request_messages(items: Sequence[s.Item]) -> tuple[Message, ...]:
    """`tuple(as_message(item, k) for k, item in enumerate(items))`, the messages of the requests
    last made kept (`LeadingConcat`): a request that grew costs what it gained."""
    return _request_messages(items)


_request_messages = LeadingConcat[s.Item, Message](lambda item, at, _before: (as_message(item, at),))


def as_message(item: s.Item, index: int) -> Message:
    """An item of the request as a message: a summary is the model's text. The same item at the
    same place is the same message at every call (kept by identity), so the meters reuse it."""
    if isinstance(item, s.Compacted):
        return _summary_message(item, index)
    if item.user is not None:
        return item.user
    return _event_message(item)


def _summary_of(item: s.Compacted, index: int) -> Message:
    return Message(role="assistant", blocks=(TextBlock(text=item.text),), id=f"adk-summary-{index}")


def _message_of(item: s.RawEvent) -> Message:
    return Message(role="assistant", blocks=item.blocks, id=f"{item.message_id}-{item.ts}")


_summary_message = IdentityMemo[s.Compacted, Message](_summary_of)
_event_message = IdentityMemo[s.RawEvent, Message](_message_of)


@dataclass(frozen=True, slots=True)
class AdkStrategy(StepStrategy):
    """The steps, with the agent's identity instruction after the system prompt."""

    identity: str = ""

    def system_prompt(self, base: str) -> str:
        """`instruction` then the identity, joined as ADK's `append_instructions` joins them."""
        return f"{base}\n\n{self.identity}" if base else self.identity


NOTES = (
    "ADK compacts after an invocation; ctxlab does it before the next turn's first call, which is "
    "where it first shows, so the compaction after the last turn (a summary call no request sees) "
    "is not made",
    "ADK's usage is the provider's prompt_token_count: here the lab's count of the request "
    "(model.tokenizer); its estimate (characters // 4) is ADK's own",
    "never reached by the lab's workloads: rewinds, sub-agents and isolation scopes, long-running "
    "or pending calls (so no recovered or dropped orphan), failed tool results",
    "max_llm_calls counts compactions as steps here (ADK counts model calls only)",
    "the system prompt is sent as written, as ADK sends an instruction provider's text; ADK fills "
    "a string instruction's {name} placeholders from session state and raises on a missing one "
    "(declared as GA20)",
    "a reply's reasoning is sent back as its assistant message's reasoning_content and counted, as "
    "ADK's LiteLLM adapter sends the thought parts the session keeps (GA24)",
    'requests are in the OpenAI form ADK\'s LiteLLM adapter writes (results as {"result": ...} '
    "JSON); the adapter's null tool_calls and reasoning_content are left out, an empty summary "
    'text is sent as "" where the adapter writes [], and its handling of empty user texts is '
    "not reproduced (declared as GA22)",
    "a call's arguments are read as ADK's adapter reads them (JSON, else a Python literal, "
    "unquoted keys or a code fence) and sent re-serialized; a transcript's call whose arguments "
    "are no object even so, which ADK discards, fails the run naming the call (GA19)",
    "a result's media are sent after the tool messages as the adapter sends them: inline text "
    "decoded, an image as a data: URL, a medium given by URL not at all; a video, audio or "
    "document goes as a file part (the adapter: video_url, input_audio, an uploaded file's id), "
    "and a type the adapter refuses fails the run (GA21)",
)


def build(params: AdkParams, texts: Texts, name: str = "google-adk-window") -> AdkStrategy:
    """The strategy of either preset."""
    words = adk_texts() if texts.name == "google-adk" else CTXLAB_ADK_TEXTS
    step = CompactEvents(params.events_compaction_config, words, params.agent_name)
    return AdkStrategy(
        name=name,
        steps=(step,),
        config=params,
        source=SOURCE,
        futile_limit=0,
        iteration_limit=params.call_limit,
        identity=words.identity.format(name=params.agent_name),
        kept_answer=adk_answer,
    )


def build_tokens(params: AdkTokenParams, texts: Texts) -> AdkStrategy:
    """The `google-adk-tokens` strategy, whose estimate of each request is recorded."""
    return replace(build(params, texts, "google-adk-tokens"), request_counter=adk_estimate)


def adk_estimate(messages: tuple[Message, ...], tools: tuple[ToolSchema, ...]) -> int:
    """ADK's own estimate of a request (`_estimate_prompt_token_count`: its contents' characters
    // 4; the system instruction and the tools left out), 0 for a request of no contents."""
    return estimate.estimated_request_tokens(messages)


WINDOW_PRESET = Preset(
    name="google-adk-window",
    summary="Google ADK events compaction by invocations: after every 3 user turns, an LLM summary of "
    "them and 1 turn before (ADK has no defaults: compaction_interval 3, overlap_size 1 are ctxlab's)",
    source=SOURCE,
    params=AdkParams,
    build=build,
    notes=NOTES,
    assistant_first="ADK sends its compaction summary as a model turn, which may come first",
    no_system="a system message of the agent's identity instruction alone",
)

TOKENS_PRESET = Preset(
    name="google-adk-tokens",
    summary="Google ADK events compaction by tokens: at 100,000 prompt tokens, an LLM summary of all "
    "but the last 10 events, before any call and after each turn",
    source=SOURCE,
    params=AdkTokenParams,
    build=build_tokens,
    notes=NOTES,
    assistant_first="ADK sends its compaction summary as a model turn, which may come first",
    no_system="a system message of the agent's identity instruction alone",
)
