"""The run environment: models, counter, workspace, texts, and the journal of calls.

The one imperative object of a run. It sends requests to the models and records each call
(tokens under every counting convention, output tokens, protocol violations of the request,
context size and events), runs the summarizer's structured-output attempt ladder, and keeps the
summary circuit breaker.

Invariants:
- Every request is recorded before the next one is sent, with the lab's own token counts.
- A summary invocation makes at most `len(ATTEMPT_CHOICES)` calls; only structured-output
  errors move to the next attempt; a model error ends the invocation at once. A free-text
  invocation (`summarize_text`) is one call; a model error is a failure, and so is the answer
  its caller's `failure` rule refuses (by default a blank one): the families differ on what a
  blank answer, or one with no text at all, leads to.
- Every call is metered by `cache` (a `PromptCacheMeter` unless another meter is given), so
  each record carries its cached and cache-write tokens.
- With a breaker of N, after N consecutive failed invocations no summarizer is called again in
  the run (the caller's fallback is used); a success resets the count. N = 0 means no breaker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ctxlab.core.agentscope.inject import HintScan, HintScanner, InjectionParams
from ctxlab.core.agentscope.summary import (
    ATTEMPT_CHOICES,
    StructuredOutputError,
    SummaryRequest,
    read_summary_fields,
    summary_text,
)
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import CallKind, ChatModel, ModelError, ModelRequest, ModelResponse
from ctxlab.core.messages.sizes import sent_tokens
from ctxlab.core.messages.tokens import TokenCounter
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.meter import ProtocolMeter
from ctxlab.core.wire.protocol import RULES, Rule
from ctxlab.core.wire.views import to_openai
from ctxlab.engine.cache import CacheUse as CacheUse  # noqa: PLC0414 (an explicit re-export)
from ctxlab.engine.cache import PromptCacheMeter
from ctxlab.engine.middleware import CompressNext, CompressRequest
from ctxlab.engine.state import EpisodeState
from ctxlab.engine.trace import CallRecord, Convention, Recorder
from ctxlab.engine.workspace import Workspace
from ctxlab.texts import Texts

ModelCall = Callable[[ModelRequest], ModelResponse]
RequestCounter = Callable[[tuple[Message, ...], tuple[ToolSchema, ...]], int]
"""A strategy's own count of a request (messages as sent, tools), recorded beside the lab's."""
TextFailure = Literal["blank", "empty", "no_text", "error"]
"""Which answers of a free-text summary call fail besides a model error: `blank` (an answer whose
text is empty or whitespace), `empty` (an answer whose text is empty, as an OpenAI-compatible
provider's stream gives no text for it; whitespace is a summary), `no_text` (an answer with no
text block at all; any text, an empty one too, is a summary), `error` (none: every answer is a
summary, its text empty when it held none)."""


def _no_compression(state: EpisodeState, request: CompressRequest) -> EpisodeState:
    """Until a loop installs the strategy's compression chain, compressing changes nothing."""
    return state


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryOutcome:
    """The fields of a successful summary invocation, or why it failed."""

    fields: dict[str, str] | None
    error: Exception | None = None
    skipped: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TextSummary:
    """The text of a free-text summary call, or why there is none."""

    text: str | None
    error: Exception | None = None
    skipped: bool = False
    held_text: bool = False
    """The answer held a text block (blank or not); False for no answer or an answer without
    text, which a provider sends as empty content."""
    refused: str | None = None
    """The text of an answer the `failure` rule refused (empty when it held none), for a caller
    that asks again after it; None otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Sent:
    """A request as recorded: its messages, tools, and token counts by convention."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...]
    tokens: dict[Convention, int]


class CacheMeter(Protocol):
    """Prompt-cache accounting over the recorded requests (`PromptCacheMeter` by default)."""

    def observe(
        self,
        kind: CallKind,
        messages: tuple[Message, ...],
        tools: tuple[ToolSchema, ...],
        output_tokens: int = 0,
    ) -> CacheUse:
        """Cached and cache-write tokens of one request whose answer has `output_tokens`."""
        ...


@dataclass(slots=True)
class Env:
    """Everything a strategy step may use besides the state."""

    counter: TokenCounter
    model: ChatModel
    summarizer: ChatModel
    texts: Texts
    context_size: int
    workspace: Workspace | None = None
    rules: tuple[Rule, ...] = RULES
    record_requests: bool = False
    breaker_limit: int = 0
    recorder: Recorder = field(default_factory=Recorder)
    model_call: ModelCall | None = None
    compress: CompressNext = field(default=_no_compression)
    cache: CacheMeter | None = None
    strategy_counter: RequestCounter | None = None
    summary_invocations: int = 0
    consecutive_failures: int = 0
    _protocol: dict[CallKind, ProtocolMeter] = field(default_factory=dict)
    _hint_scanners: dict[tuple[str, tuple[str, ...]], HintScanner] = field(default_factory=dict)
    _view: tuple[object, object, tuple[Message, ...]] | None = None

    def __post_init__(self) -> None:
        if self.cache is None:  # every run is metered; pass a meter to change prices or caching
            self.cache = PromptCacheMeter(self.counter)

    def unwire(self) -> None:
        """Drop the loop's steps wired in (`model_call`, `compress`) and the kept view."""
        self.model_call = None
        self.compress = _no_compression
        self._view = None

    def keep_view(self, owner: object, state: object, messages: tuple[Message, ...]) -> None:
        """Keep the request `owner` (a strategy) worked out for `state`, for `kept_view`."""
        self._view = (owner, state, messages)

    def kept_view(self, owner: object, state: object) -> tuple[Message, ...] | None:
        """The request kept by `keep_view` for this very owner and state object, else None.

        A state is immutable and a strategy's view a function of it (and of this env and the
        run's frame, fixed for the run), so the same objects give the same view: a strategy
        whose compression step works its request out already need not work it out twice.
        """
        kept = self._view
        return kept[2] if kept is not None and kept[0] is owner and kept[1] is state else None

    def scan_hints(self, messages: Sequence[Message], params: InjectionParams) -> HintScan:
        """`core.inject.scan_hints(messages, params)`, kept incrementally over the run."""
        key = (params.injection_source, params.task_tool_names)
        scanner = self._hint_scanners.get(key)
        if scanner is None:
            scanner = self._hint_scanners[key] = HintScanner(params)
        return scanner.scan(messages)

    def reasoning(self, state: EpisodeState, request: ModelRequest, tokens: int) -> ModelResponse:
        """Send a reasoning request (through `model_call` when middlewares wrap it) and record it."""
        call = self.model_call or self.model.respond
        response = call(request)
        sent = Sent(
            messages=request.messages, tools=request.tools, tokens=dict.fromkeys(CONVENTIONS_ALL, tokens)
        )
        self._record(state, "reasoning", sent, response)
        return response

    def summarize(
        self, state: EpisodeState, request: SummaryRequest, schema: Mapping[str, Any]
    ) -> SummaryOutcome:
        """One summarizer invocation: the structured-output attempt ladder."""
        if self.breaker_limit and self.consecutive_failures >= self.breaker_limit:
            return SummaryOutcome(fields=None, error=None, skipped=True)
        self.summary_invocations += 1
        outcome = self._attempts(state, request, schema)
        self.consecutive_failures = 0 if outcome.fields is not None else self.consecutive_failures + 1
        return outcome

    def summarize_text(
        self,
        state: EpisodeState,
        messages: tuple[Message, ...],
        *,
        retry: bool = False,
        failure: TextFailure = "blank",
    ) -> TextSummary:
        """One free-text summarizer invocation: a single call with `messages` and no tools.

        A model error is a failed summary, and so is an answer `failure` refuses (by default a
        blank one); the breaker counts both. Any other answer is the summary: its text as the
        model wrote it (the caller strips it where its family does), with `held_text` saying
        whether it held a text block. With `retry` the call is another attempt of the last
        invocation (its number is not advanced).
        """
        if self.breaker_limit and self.consecutive_failures >= self.breaker_limit:
            return TextSummary(text=None, skipped=True)
        if not retry or not self.summary_invocations:
            self.summary_invocations += 1
        counted = self.counter.count(messages, ())
        tokens = {
            **dict.fromkeys(CONVENTIONS_ALL, counted),
            "as_sent": sent_tokens(self.counter, messages, ()),
        }
        sent = Sent(messages=messages, tools=(), tokens=tokens)
        request = ModelRequest(
            kind="summary",
            messages=messages,
            tools=(),
            tool_choice="none",
            call_index=self.recorder.next_call_index,
            context_size=self.context_size,
            input_tokens=tokens["as_sent"],
            turn=state.turn,
            iteration=state.cur_iter,
            invocation=self.summary_invocations,
        )
        try:
            response = self.summarizer.respond(request)
        except ModelError as error:
            self._record(state, "summary", sent, ModelResponse())
            self.consecutive_failures += 1
            return TextSummary(text=None, error=error)
        self._record(state, "summary", sent, response)
        text = response.text
        held_text = any(isinstance(b, TextBlock) for b in response.blocks)
        refused = {
            "blank": not text.strip(),
            "empty": not text,
            "no_text": not held_text,
            "error": False,
        }[failure]
        if refused:
            self.consecutive_failures += 1
            what = "blank text" if failure == "blank" else "no text"
            return TextSummary(
                text=None,
                error=ValueError(f"the summarizer answered {what}"),
                refused=text,
            )
        self.consecutive_failures = 0
        return TextSummary(text=text, held_text=held_text)

    def _attempts(
        self, state: EpisodeState, request: SummaryRequest, schema: Mapping[str, Any]
    ) -> SummaryOutcome:
        sent = self._summary_sent(request)
        error: Exception | None = None
        for attempt, choice in enumerate(ATTEMPT_CHOICES):
            model_request = self._summary_request(state, sent, choice, attempt)
            try:
                response = self.summarizer.respond(model_request)
            except ModelError as failure:
                self._record(state, "summary", sent, ModelResponse())
                return SummaryOutcome(fields=None, error=failure)
            self._record(state, "summary", sent, response)
            try:
                return SummaryOutcome(fields=read_summary_fields(response.blocks, schema))
            except StructuredOutputError as bad:
                error = bad
        return SummaryOutcome(fields=None, error=error)

    def _summary_sent(self, request: SummaryRequest) -> Sent:
        tools = (request.schema_tool,)
        as_sent = request.as_sent(self.texts.structured_output_instruction)
        tokens: dict[Convention, int] = {
            "messages": self.counter.count(request.messages, ()),
            "preflight": self.counter.count(request.messages, tools),
            "as_sent": sent_tokens(self.counter, as_sent, tools),
        }
        return Sent(messages=as_sent, tools=tools, tokens=tokens)

    def _summary_request(self, state: EpisodeState, sent: Sent, choice: str, attempt: int) -> ModelRequest:
        return ModelRequest(
            kind="summary",
            messages=sent.messages,
            tools=sent.tools,
            tool_choice=choice,
            call_index=self.recorder.next_call_index,
            context_size=self.context_size,
            input_tokens=sent.tokens["as_sent"],
            turn=state.turn,
            iteration=state.cur_iter,
            invocation=self.summary_invocations,
            attempt=attempt,
        )

    def _protocol_meter(self, kind: CallKind, messages: tuple[Message, ...]) -> ProtocolMeter:
        """The protocol meter to check a request of `kind` in what changed since the request it
        checked last: its own kind's meter when it keeps any of that one's messages for it
        (`ProtocolMeter.reusable`), else the meter that keeps the most, else its own kind's, made
        for it. A summary request of the span the last reasoning request held is checked from
        where that one left off (so a run whose summaries do so keeps one meter); one that shares
        nothing with it (a session's events written as text) leaves it as it was, for the next
        reasoning request."""
        own = self._protocol.get(kind)
        if own is not None and (len(self._protocol) == 1 or own.reusable(messages)):
            return own
        best = max(self._protocol.values(), key=lambda meter: meter.reusable(messages), default=None)
        if best is not None and best.reusable(messages):
            return best
        if own is None:
            own = self._protocol[kind] = ProtocolMeter(self.rules, self.counter)
        return own

    def _record(self, state: EpisodeState, kind: CallKind, sent: Sent, response: ModelResponse) -> None:
        output_tokens = self.counter.count([Message(role="assistant", blocks=response.blocks)], ())
        use = (
            self.cache.observe(kind, sent.messages, sent.tools, output_tokens)
            if self.cache
            else CacheUse(0, 0)
        )
        # what the provider receives, as the cache meter counts it along the run (the engine's own
        # count of a reasoning request is the strategy's, with the thinking no request carries)
        tokens = sent.tokens if use.input is None else {**sent.tokens, "as_sent": use.input}
        record = CallRecord(
            call_index=self.recorder.next_call_index,
            kind=kind,
            turn=state.turn,
            iteration=state.cur_iter,
            tokens=tokens,
            output_tokens=output_tokens,
            context_messages=len(state.context),
            summary_chars=len(summary_text(state.summary)),
            events=self.recorder.take_events(),
            violations=self._protocol_meter(kind, sent.messages).check(
                sent.messages, declares_tools=bool(sent.tools)
            ),
            cached_tokens=use.cached,
            cache_write_tokens=use.written,
            request=_request_dump(to_openai(sent.messages), sent.tools) if self.record_requests else None,
            strategy_tokens=(
                self.strategy_counter(sent.messages, sent.tools)
                if self.strategy_counter is not None and kind == "reasoning"
                else None
            ),
        )
        self.recorder.record(record)


CONVENTIONS_ALL: tuple[Convention, ...] = ("as_sent", "preflight", "messages")


def _request_dump(wire: list[dict[str, Any]], tools: tuple[ToolSchema, ...]) -> dict[str, Any]:
    return {"messages": wire, "tools": [t.as_openai() for t in tools]}
