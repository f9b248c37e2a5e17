"""The OpenHands presets: `openhands` (observation masking + the LLM-summarizing condenser) and
`openhands-hybrid` (SWE-agent-style masking of all but the last 10 observations + the same
condenser: the Complexity Trap's masking-and-summary hybrid).

Sources: All-Hands-AI/OpenHands @ 156d068, `openhands/memory/condenser/impl/
observation_masking_condenser.py` and `llm_summarizing_condenser.py`,
`openhands/core/config/condenser_config.py` (`attention_window=100`, `max_event_length=10,000`);
the SDK's `llm_summarizing_condenser.py` (`max_size=120`, `keep_first=4`, optional `max_tokens`);
Lindenbauer et al., "The Complexity Trap" (arXiv:2508.21433): masking with a 10-turn window,
and the hybrid of masking during accumulation with an LLM summary.

Steps, OpenHands counting events as view messages:
- condenser (stored): when the view holds more than `max_size` events (the summary counts as
  one), or the request is over `max_tokens`, or over the model's window (OpenHands' condensation
  request after a context-window error, which halves the view), the events between the first
  `keep_first` and a tail are summarized in one free-text call with the previous summary, each
  event cut to `max_event_length` characters, and forgotten (event `compressed`). A failed
  summary forgets nothing (event `summary_failed`).
- masking (request-only): tool results older than the last `attention_window` events are
  replaced by a placeholder (event `cleared`).

Deviation: the summary travels beside the context (ctxlab's invariant) and is sent right after
the system prompt; OpenHands places its summary event after the first `keep_first` events.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from ctxlab.core.agentscope.summary import summary_text
from ctxlab.core.compaction.cutoff import CondenserParams, openhands_cut
from ctxlab.core.compaction.freetext import summary_request
from ctxlab.core.compaction.observations import (
    LastNObservationsParams,
    ObservationMaskingParams,
    mask_observations,
)
from ctxlab.core.events import EventKind
from ctxlab.core.messages.message import Message
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, with_context
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
from ctxlab.presets.swe_agent.preset import LastNObservations
from ctxlab.texts import Texts

SOURCE = "OpenHands 156d068, memory/condenser/impl (ObservationMasking, LLMSummarizing); SDK defaults"
HYBRID_SOURCE = "The Complexity Trap (arXiv:2508.21433) hybrid, on OpenHands' LLMSummarizingCondenser"

CONDENSER_PROMPT = (
    "You keep the running notes of a software agent whose oldest events are about to be "
    "forgotten. Merge the previous notes and the events below into new notes with these "
    "sections: USER GOAL (the request and every constraint, word for word), TASKS (done, in "
    "progress, pending), FILES AND CODE (paths, functions, what changed), TESTS (commands and "
    "their latest results), FACTS (identifiers, numbers, error messages, exactly), NEXT STEP.\n\n"
    "<previous_notes>\n{previous_summary}\n</previous_notes>\n\n"
    "<events>\n{conversation}\n</events>"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CondenserSettings:
    """The LLM-summarizing condenser's settings (the prompt is ctxlab's own).

    Attributes:
        max_size: condense when the view holds more events than this (SDK: 120).
        keep_first: events always kept at the start (SDK: 4).
        max_tokens: also condense when the request is above this many tokens (SDK: off).
        max_event_length: each forgotten event is cut to this many characters in the prompt.
        prompt: the summary request; `{previous_summary}` and `{conversation}`.
    """

    max_size: int = 120
    keep_first: int = 4
    max_tokens: int | None = None
    max_event_length: int = 10_000
    prompt: str = CONDENSER_PROMPT

    def __post_init__(self) -> None:
        self.cut()  # OpenHands' own check: keep_first must leave room for a tail

    def cut(self) -> CondenserParams:
        """The cutoff's settings."""
        return CondenserParams(max_size=self.max_size, keep_first=self.keep_first, max_tokens=self.max_tokens)


@dataclass(frozen=True, slots=True)
class CondenseEvents(Step):
    """OpenHands' LLM-summarizing condenser over view messages (see the module docstring)."""

    settings: CondenserSettings
    key: ClassVar[str] = "condenser"
    stoppable: ClassVar[bool] = True

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Summarize and forget the middle events when the view is too long."""
        sizer = request_sizer(state, env, frame)
        before = sizer.tokens(state.context_tally)
        cut = openhands_cut(
            state.context,
            sizer=sizer,
            params=self.settings.cut(),
            summary_present=bool(state.summary),
            requested=before > env.context_size,
        )
        if cut is None:
            return Stepped(state=state)
        request = summary_request(
            self.settings.prompt,
            cut.summarize,
            previous_summary=summary_text(state.summary),
            max_event_chars=self.settings.max_event_length,
        )
        outcome = env.summarize_text(state, request)
        trigger = self.settings.max_tokens or env.context_size
        if outcome.text is None:
            env.recorder.event(EventKind.SUMMARY_FAILED)
            return Stepped(
                state=state, compaction=Compaction(before=before, after=before, floor=0, trigger=trigger)
            )
        new = replace(with_context(state, (*cut.head, *cut.keep), env.counter), summary=outcome.text)
        after = request_sizer(new, env, frame).tokens(new.context_tally)
        env.recorder.event(EventKind.COMPRESSED)
        record_compaction(
            env,
            before=before,
            after=after,
            threshold=trigger,
            compressed=len(cut.summarize),
            kept=len(cut.head) + len(cut.keep),
            summary_ok=True,
            summary=outcome.text,
            floor=after,
        )
        return Stepped(
            state=new, compaction=Compaction(before=before, after=after, floor=after, trigger=trigger)
        )


@dataclass(frozen=True, slots=True)
class MaskObservations(Step):
    """OpenHands' observation masking: request-only, results outside the attention window."""

    params: ObservationMaskingParams
    key: ClassVar[str] = "observation_masking"
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request with old observations masked."""
        masked = mask_observations(messages, self.params)
        return Edit(messages=masked.messages, cleared=frozenset(masked.cleared))


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenHandsParams:
    """OpenHands' condenser pipeline: masking (None: off) and the summarizing condenser."""

    masking: ObservationMaskingParams | None = field(default_factory=ObservationMaskingParams)
    condenser: CondenserSettings = field(default_factory=CondenserSettings)


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridParams:
    """The Complexity Trap's hybrid: all but the last `n` observations elided (the paper's
    M = 10 turns, one observation each), and the summarizing condenser."""

    masking: LastNObservationsParams = field(default_factory=lambda: LastNObservationsParams(n=10))
    condenser: CondenserSettings = field(default_factory=CondenserSettings)


def build(params: OpenHandsParams, texts: Texts) -> StepStrategy:
    """The `openhands` strategy: the condenser, then masking of the request."""
    steps: tuple[Step, ...] = (CondenseEvents(params.condenser),)
    if params.masking is not None:
        steps += (MaskObservations(params.masking),)
    return StepStrategy(name="openhands", steps=steps, config=params, source=SOURCE)


def build_hybrid(params: HybridParams, texts: Texts) -> StepStrategy:
    """The `openhands-hybrid` strategy: the condenser, then SWE-agent-style masking."""
    steps = (CondenseEvents(params.condenser), LastNObservations(params.masking))
    return StepStrategy(name="openhands-hybrid", steps=steps, config=params, source=HYBRID_SOURCE)


PRESET = Preset(
    name="openhands",
    summary="OpenHands: observations outside the last 100 events masked; over 120 events, the middle "
    "summarized by an LLM, keeping the first 4",
    source=SOURCE,
    params=OpenHandsParams,
    build=build,
)

HYBRID_PRESET = Preset(
    name="openhands-hybrid",
    summary="masking + summary hybrid (the Complexity Trap): all but the last 10 observations elided, "
    "OpenHands' condenser summarizes over 120 events",
    source=HYBRID_SOURCE,
    params=HybridParams,
    build=build_hybrid,
)
