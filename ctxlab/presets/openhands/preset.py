"""The OpenHands presets: `openhands` (the SDK 1.58.2 `LLMSummarizingCondenser`, call for call)
and `openhands-hybrid` (the Complexity Trap's masking, SWE-agent's `LastNObservations`, in front
of the same condenser).

Source: `openhands-sdk==1.58.2`, `openhands/sdk/context/condenser/llm_summarizing_condenser.py`
(`LLMSummarizingCondenser`, `default_condenser`), `condenser/base.py` (`RollingCondenser.condense`:
soft and hard requirements), `context/view/` (manipulation indices), `agent/agent.py` (a
condensation is a step of its own, before the next model call) and `conversation/impl/
local_conversation.py` (`max_iteration_per_run=500`). The SDK has no observation masking.

Behaviour, before every model call (the view is the system prompt, then one event per user
message, tool call, tool result, final text and summary; see `ctxlab.presets.openhands.view`):
- Condense when the view holds more than `max_size` events (soft) or the request is over
  `min(max_tokens, the window)` tokens by the SDK's counter (hard). The tail kept is
  `max_size // 2 - keep_first - 1` events, or for tokens the longest suffix that brings the
  request under half the limit; both cut edges move forward to manipulation indices, so a batch
  straddling an edge is forgotten. The system prompt counts in the view and in `keep_first`.
- The summary request is a system message (the SDK's summarizing prompt) and a user message of
  every forgotten event's preview (`str(event)`, at most 500 characters of content; actions
  without their arguments; an earlier summary is an event like the others). The summary is
  inserted where the forgotten range began, as a user message inside the context. Any answer
  is a summary: a blank text is kept as it is, and an answer with no text (a provider's empty
  content) forgets the range with no summary put in its place.
- Nothing is condensed when the range is empty or under `minimum_progress` of the view, or when
  the summary call fails (a model error): a soft condensation then sends the view uncondensed
  (and tries again before the next call); a hard one resets: every event after the system
  prompt is summarized, retried up to `hard_reset_retries` times with each event cut to 0.8 of
  the longest, then the run fails.
- Each condensation is an iteration of the conversation; a reply stops (without a forced answer)
  after `max_iterations` iterations.
- Images, for the model the presets stand for (the SDK's `test-model`, without vision: `LLM.
  vision_is_active()` is false): every message is sent and counted without its images (a result
  of images alone keeps its tool message, with no content), previews show each as `[Image: 1
  URLs]`, and when the request's last user message holds an image the agent answers in the
  model's place (`Agent.step`: the SDK's notice that the model does not take images) and the
  reply ends, no call made.

Texts: `texts: openhands` takes the SDK's strings from the installed package
(`ctxlab.texts.openhands`); otherwise the summary request is worded by ctxlab.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import Block, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, fixed_messages, text_message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.views import to_openai
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, memo, with_context, with_memo
from ctxlab.presets.observations import LastNObservations
from ctxlab.presets.openhands import view
from ctxlab.presets.openhands.params import MAX_ITERATIONS, CondenserSettings, HybridParams, OpenHandsParams
from ctxlab.presets.openhands.tokens import sdk_token_count
from ctxlab.presets.preset import EMPTY_SYSTEM_MESSAGE, Preset
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
from ctxlab.texts.openhands import OpenHandsTexts, openhands_texts

SOURCE = "openhands-sdk 1.58.2, context/condenser/llm_summarizing_condenser.py (LLMSummarizingCondenser)"
HYBRID_SOURCE = (
    "The Complexity Trap (arXiv:2508.21433) hybrid: SWE-agent's LastNObservations masking, then "
    "openhands-sdk 1.58.2's LLMSummarizingCondenser"
)

CTXLAB_CONDENSER_TEXTS = OpenHandsTexts(
    summarizing_system=(
        "You keep the running notes of a software agent whose oldest events are about to be "
        "forgotten. The events below may include earlier notes. Write new notes with these sections: "
        "USER GOAL (the request and every constraint, word for word), TASKS (done, in progress, "
        "pending), FILES AND CODE (paths, functions, what changed), TESTS (commands and their latest "
        "results), FACTS (identifiers, numbers, error messages, exactly), NEXT STEP."
    ),
    event_open="<event>\n",
    event_close="\n</event>\n\n",
    events_end="\nWrite the notes now.",
    preview_chars=500,
    error_header="",
    truncate_notice=view.CLIP_NOTICE,
    added_properties="{}",
    image_refusal="The image was not read: the model has no vision. Send it to a model that takes images.",
)
"""ctxlab's own wording of the summary request (`texts: ctxlab`); the mechanics are the SDK's."""

MAX_STEPS = 500
"""The conversation's default iteration limit (`max_iteration_per_run`)."""

STEPS_KEY = "condenser-steps"
"""Memo: (the reply's id, condensations made in it), for the iteration limit."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """What one condensation check did: the new state, whether the step may go on checking, and
    the SDK's token count of the request it checked."""

    state: EpisodeState
    condensed: bool
    tokens: int


@dataclass(frozen=True, slots=True)
class CondenseEvents(Step):
    """The SDK's condenser over the event view (see the module docstring)."""

    settings: CondenserSettings
    texts: OpenHandsTexts
    max_iterations: int = MAX_STEPS
    key: ClassVar[str] = "condenser"
    edits: ClassVar[bool] = True

    def compress_each(self, state: EpisodeState, env: Env, frame: Frame) -> Iterator[Stepped]:
        """Condense, step after step, while the SDK would (each a conversation iteration): at most
        until the reply's steps (its reasoning calls and condensations) reach `max_iterations`,
        where the conversation stops the reply. Each condensation is yielded as it is made, then
        the state the check ends with."""
        reply, used = memo(state, STEPS_KEY, ("", 0))
        used = used if reply == state.reply.reply_id else 0
        while state.cur_iter + used < self.max_iterations:
            attempt = self.attempt(state, env, frame)
            state = attempt.state
            if not attempt.condensed:
                break
            used += 1
            after = self.count(state, frame)  # judged in the SDK's tokens, its trigger's (`limit`)
            state = with_memo(state, STEPS_KEY, (state.reply.reply_id, used))
            yield Stepped(
                state=state,
                compaction=Compaction(
                    before=attempt.tokens, after=after, floor=after, trigger=self.limit(env) or 0
                ),
            )
        yield Stepped(state=state)

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Every condensation of the check (`compress_each`), the last one reported."""
        last = Stepped(state=state)
        for stepped in self.compress_each(state, env, frame):
            last = stepped if stepped.compaction is not None else replace(last, state=stepped.state)
        return last

    def limit(self, env: Env) -> int | None:
        """The token trigger: `min(max_tokens, the window)`."""
        limits = [x for x in (self.settings.max_tokens, env.context_size) if x is not None]
        return min(limits) if limits else None

    def count(self, state: EpisodeState, frame: Frame, context: tuple[Message, ...] | None = None) -> int:
        """The SDK's token count of the request the view would send."""
        shown = view.sdk_request(state.context if context is None else context, self.texts.truncate_notice)
        return sdk_token_count(to_openai((*fixed_messages(frame.system_prompt, ""), *shown)), frame.tools)

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request as the SDK sends it (`view.sdk_request`)."""
        return Edit(messages=view.sdk_request(messages, self.texts.truncate_notice))

    def attempt(self, state: EpisodeState, env: Env, frame: Frame) -> Attempt:
        """One step's `condense`: None, a condensation, or a hard reset."""
        events = view.events_of(state.context)
        size = 1 + len(events)
        limit = self.limit(env)
        total = self.count(state, frame)
        over_tokens = limit is not None and total > limit
        if size <= self.settings.size and not over_tokens:
            return Attempt(state=state, condensed=False, tokens=total)
        tails = [self.settings.size // 2 - self.settings.first - 1] if size > self.settings.size else []
        if over_tokens and limit is not None:
            tails.append(self.token_tail(state, frame, events, total - limit // 2))
        cut = view.forgotten_range(events, keep_first=self.settings.first, events_from_tail=min(tails))
        forgotten = () if cut is None else events[cut.start - 1 : cut.end - 1]
        if cut is not None and forgotten and len(forgotten) >= size * self.settings.minimum_progress:
            done = self.condense(state, env, frame, events, cut=cut, forgotten=forgotten, max_chars=None)
            if done is not None:
                return Attempt(state=done, condensed=True, tokens=total)
        if not over_tokens:
            return Attempt(state=state, condensed=False, tokens=total)  # soft: the view goes uncondensed
        return Attempt(state=self.hard_reset(state, env, frame, events), condensed=True, tokens=total)

    def token_tail(
        self, state: EpisodeState, frame: Frame, events: tuple[view.Event, ...], reduction: int
    ) -> int:
        """How many view events after `keep_first` may stay while the count drops by `reduction`
        (the SDK's `get_suffix_length_for_token_reduction`, a binary search over prefixes)."""
        first = self.settings.first
        rest = 1 + len(events) - first
        if rest <= 0:
            return 0
        if reduction <= 0:
            return rest

        def tokens(n: int) -> int:  # the system prompt and the first n - 1 context events
            return self.count(state, frame, view.rebuild(state.context, events[: max(n - 1, 0)], None, 0))

        base = tokens(first) if first else 0

        def prefix(n: int) -> int:
            return tokens(first + n) - base

        if prefix(rest) <= reduction:
            return 0
        low, high = 1, rest
        while low < high:
            middle = (low + high) // 2
            if prefix(middle) > reduction:
                high = middle
            else:
                low = middle + 1
        return rest - low

    def condense(
        self,
        state: EpisodeState,
        env: Env,
        frame: Frame,
        events: tuple[view.Event, ...],
        *,
        cut: view.Cut,
        forgotten: tuple[view.Event, ...],
        max_chars: int | None,
    ) -> EpisodeState | None:
        """Summarize `forgotten` and put the summary at the cut's start; None when the call fails.

        Any answer condenses (`_generate_condensation`): a blank text is the summary, and an
        answer with no text forgets the events with no summary put in their place.
        """
        request = self.summary_request(forgotten, max_chars)
        outcome = env.summarize_text(state, request, failure="error")
        if outcome.text is None:
            env.recorder.event(EventKind.SUMMARY_FAILED)
            return None
        number = memo(state, self.key, 0) + 1
        kept = events[: cut.start - 1] + events[cut.end - 1 :]
        summary = view.summary_message(outcome.text, number) if outcome.held_text else None
        context = view.rebuild(state.context, kept, summary, cut.start - 1)
        new = with_memo(with_context(state, context, env.counter), self.key, number)
        env.recorder.event(EventKind.COMPRESSED)
        record_compaction(
            env,
            before=request_sizer(state, env, frame).tokens(state.context_tally),
            after=request_sizer(new, env, frame).tokens(new.context_tally),
            threshold=self.settings.size,
            compressed=len(forgotten),
            kept=len(kept),
            summary_ok=True,
            summary=outcome.text,
        )
        return new

    def summary_request(
        self, forgotten: tuple[view.Event, ...], max_chars: int | None
    ) -> tuple[Message, ...]:
        """The SDK's two messages: its summarizing prompt, and every forgotten event's preview."""
        t = self.texts
        shown = (
            view.truncate_middle(self.render(event), max_chars, t.truncate_notice) for event in forgotten
        )
        body = ("".join(t.event_open + s + t.event_close for s in shown) + t.events_end).strip()
        return (text_message("system", t.summarizing_system), text_message("user", body))

    def render(self, event: view.Event) -> str:
        """`str(event)`."""
        call = event.blocks[-1] if event.blocks else None  # a user message may hold no block
        action = f"{camel(call.name)}Action" if isinstance(call, ToolCallBlock) else ""
        return view.render(event, limit=self.texts.preview_chars, action_class=action)

    def hard_reset(
        self, state: EpisodeState, env: Env, frame: Frame, events: tuple[view.Event, ...]
    ) -> EpisodeState:
        """Summarize every event after the system prompt, cutting events shorter on each retry.

        Raises:
            RuntimeError: every attempt failed (the SDK's NoCondensationAvailableException).
        """
        cut = view.Cut(start=1, end=1 + len(events))
        max_chars: int | None = None
        for _ in range(self.settings.hard_reset_retries):
            done = self.condense(state, env, frame, events, cut=cut, forgotten=events, max_chars=max_chars)
            if done is not None:
                return done
            if max_chars is None:
                prompt = view.preview(frame.system_prompt or "", self.texts.preview_chars, dots_inside=False)
                system = (
                    f"SystemPromptEvent (agent)\n  System: {prompt}\n  Tools: {len(frame.tools)} available"
                )
                max_chars = max([len(system), *(len(self.render(e)) for e in events)])
            max_chars = int(max_chars * self.settings.hard_reset_scaling)
        raise RuntimeError("the hard context reset failed: no summary after every attempt")

    def stand_in(self, state: EpisodeState) -> tuple[Block, ...]:
        """The agent's answer in the model's place (`Agent.step`, the model having no vision)
        when the request's last user message holds an image; none otherwise, at no cost for a
        context without data."""
        if not state.context_tally.ndata or not view.latest_user_has_image(state.context):
            return ()
        return (TextBlock(text=self.texts.image_refusal),)

    def tools(self, tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """Every tool with the SDK's added properties in front of its own."""
        added = json.loads(self.texts.added_properties)
        if not added:
            return tools
        return tuple(_with_properties(tool, added) for tool in tools)

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """A failed tool's result starts with the SDK's error header."""
        if result.state != "error" or not self.texts.error_header:
            return result
        return replace(result, output=(TextBlock(text=self.texts.error_header), *result.output))


def _with_properties(tool: ToolSchema, added: dict[str, object]) -> ToolSchema:
    """The tool as the SDK sends it: its schema is written from an action model, so the added
    properties come first, and `required` is left out when no field is required (pydantic writes
    it only then)."""
    parameters = json.loads(tool.parameters)
    own = parameters.get("properties", {})
    parameters["properties"] = {**added, **{k: v for k, v in own.items() if k not in added}}
    if parameters.get("required") == []:
        del parameters["required"]
    return ToolSchema.of(tool.name, tool.description, parameters)


def camel(name: str) -> str:
    """`read_file` -> `ReadFile`: how the SDK's tools name their action classes.

    >>> camel("read_file")
    'ReadFile'
    """
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def condenser_texts(texts: Texts) -> OpenHandsTexts:
    """The SDK's texts under `texts: openhands`, else ctxlab's wording."""
    return openhands_texts() if texts.name == "openhands" else CTXLAB_CONDENSER_TEXTS


FINISH_TOOL = "finish"
"""The name of the SDK's `FinishTool`: a call of any tool so named ends the reply (the SDK
compares names only, whoever defines the tool)."""


def build(params: OpenHandsParams, texts: Texts) -> StepStrategy:
    """The `openhands` strategy."""
    step = CondenseEvents(params.condenser, condenser_texts(texts), params.max_iterations)
    return StepStrategy(
        name="openhands",
        steps=(step,),
        config=params,
        source=SOURCE,
        futile_limit=0,
        iteration_limit=params.max_iterations,
        finish_tool=FINISH_TOOL,
        empty_system=True,  # the SDK's system prompt event is sent even when it is empty
        stand_in=step.stand_in,
    )


def build_hybrid(params: HybridParams, texts: Texts) -> StepStrategy:
    """The `openhands-hybrid` strategy: the condenser, then SWE-agent-style masking."""
    condense = CondenseEvents(params.condenser, condenser_texts(texts), params.max_iterations)
    steps = (condense, LastNObservations(params.masking))
    return StepStrategy(
        name="openhands-hybrid",
        steps=steps,
        config=params,
        source=HYBRID_SOURCE,
        futile_limit=0,
        iteration_limit=params.max_iterations,
        finish_tool=FINISH_TOOL,
        empty_system=True,  # the SDK's system prompt event is sent even when it is empty
        stand_in=condense.stand_in,
    )


PRESET = Preset(
    name="openhands",
    summary="OpenHands SDK condenser: over 80 events (or max_tokens), the middle summarized by an LLM "
    "after the first 4 events; no observation masking (the SDK has none)",
    source=SOURCE,
    params=OpenHandsParams,
    build=build,
    no_system=f'{EMPTY_SYSTEM_MESSAGE} (the SDK\'s system prompt event, with system_prompt="")',
    notes=(
        "a model's reasoning is neither sent back nor counted in input_tokens, as the SDK does for a "
        "model outside its list of models that take reasoning_content back (Kimi K2 thinking, "
        "DeepSeek reasoner: those get it sent and counted, declared as 22)",
        "an empty final answer ends the reply: the SDK keeps the empty message, adds its corrective "
        "nudge and asks the model again (declared as 17)",
        "a call of a tool named `finish` ends the reply as in the SDK; calls after it in the same "
        "answer are run here, where the SDK drops them (declared as 18)",
        "a summary answered with no text forgets the range with nothing in its place, as the SDK does: "
        "a request may then start with an assistant turn, or hold no turn after a hard reset, which "
        "providers refuse (reproduced, not repaired; 10)",
        f"max_iterations above {MAX_ITERATIONS:,} is refused when the scenario loads; the SDK sets no "
        "upper bound (declared as 2)",
        "a window under 16,384 tokens runs, as in the SDK with ALLOW_SHORT_CONTEXT_WINDOWS set; without "
        "it the SDK refuses such a window (declared as 23)",
        "images are handled as the SDK handles them for the model the preset stands for (test-model, "
        "without vision): neither sent nor counted (a result of images alone keeps its tool message, "
        "empty), and a turn whose last user message holds an image is answered with the SDK's notice "
        "in the model's place, no call made (24)",
    ),
)

HYBRID_PRESET = Preset(
    name="openhands-hybrid",
    summary="the Complexity Trap's masking + summary hybrid: SWE-agent's masking of all but the last 10 "
    "observations (not OpenHands masking), then the OpenHands SDK condenser over 80 events",
    source=HYBRID_SOURCE,
    params=HybridParams,
    build=build_hybrid,
    notes=PRESET.notes,
    no_system=PRESET.no_system,
)
