"""The lab side of a strands parity run: ctxlab's engine with the strands steps and strands' own
texts, recording every request in the same view as the driver (a refused request as its kind
only: the lab records it as an event, not a call)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.model import ModelError, ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.engine.trace import Recorder
from ctxlab.models.scripted import ScriptModel
from ctxlab.presets.steps import StepStrategy
from ctxlab.presets.strands.preset import (
    NO_LOOP_LIMIT,
    StrandsSlidingWindowParams,
    StrandsSummarizingParams,
    build_summarizing,
    build_window,
)
from ctxlab.texts import CTXLAB_TEXTS
from tests.parity.strands_driver import (
    StrandsCall,
    StrandsConfig,
    StrandsTrace,
    openai_view,
    reasoning_fields,
)

COUNTER = AgentScopeEstimator()


def refusals(recorder: Recorder) -> int:
    """The refused requests noted since the last recorded call."""
    return sum(1 for e in recorder.pending_events if e.kind == EventKind.CONTEXT_OVERFLOW)


@dataclass
class Recording:
    """A model that records each request (after the refusals before it) before answering."""

    inner: object
    calls: list[StrandsCall]
    kind: str
    recorder: Recorder

    def respond(self, request: ModelRequest) -> ModelResponse:
        self.calls.extend(refused() for _ in range(refusals(self.recorder)))
        self.calls.append(
            StrandsCall(
                kind=self.kind,
                messages=openai_view(list(request.messages)),
                tools=tuple(t.name for t in request.tools),
                tokens=COUNTER.count(request.messages, request.tools),
                reasoning=reasoning_fields(to_openai(request.messages)),
            )
        )
        return self.inner.respond(request)  # type: ignore[attr-defined, no-any-return]


def refused() -> StrandsCall:
    """A refused request, as the lab knows it: its kind."""
    return StrandsCall(kind="refused", messages="", tools=(), tokens=0)


@dataclass
class TextSummarizer:
    """Answers every summary call with `text`; the invocations in `fail_on` raise."""

    text: str
    fail_on: frozenset[int] = frozenset()
    requests: list[ModelRequest] = field(default_factory=list)

    def respond(self, request: ModelRequest) -> ModelResponse:
        if request.invocation in self.fail_on:
            raise ModelError(f"summarizer unavailable (invocation {request.invocation})")
        return ModelResponse(blocks=(TextBlock(text=self.text),))


def strategy_of(config: StrandsConfig) -> StepStrategy:
    """The strands strategy of a parity configuration, with strands' own texts."""
    strands = replace(CTXLAB_TEXTS, name="strands")
    if config.manager == "summary":
        params = StrandsSummarizingParams(
            summary_ratio=config.summary_ratio, preserve_recent_messages=config.preserve_recent_messages
        )
        return build_summarizing(params, strands)
    window = StrandsSlidingWindowParams(
        window_size=config.window_size,
        should_truncate_results=config.should_truncate_results,
        per_turn=config.per_turn,
    )
    return build_window(window, strands)


def run_lab(script: Script, config: StrandsConfig) -> StrandsTrace:
    """Run ctxlab's engine on the configuration; an error ends the run as in the driver."""
    calls: list[StrandsCall] = []
    recorder = Recorder()
    summarizer = TextSummarizer(config.summary_text, config.fail_on)
    env = Env(
        counter=COUNTER,
        model=Recording(ScriptModel(script), calls, "reasoning", recorder),
        summarizer=Recording(summarizer, calls, "summary", recorder),
        texts=CTXLAB_TEXTS,
        context_size=config.window,
        recorder=recorder,
    )
    loop = Loop(
        script=script, strategy=strategy_of(config), env=env, settings=RunSettings(max_iters=NO_LOOP_LIMIT)
    )
    error = None
    try:
        loop.run()
    except Exception as failure:  # the driver records the agent's error the same way
        error = type(failure).__name__
    calls.extend(refused() for _ in range(refusals(env.recorder)))
    return StrandsTrace(calls=tuple(calls), error=error)
