"""The lab side of a pydantic-ai parity run: ctxlab's engine with the pydantic-ai presets and the
packages' own texts, recording every request in the same canonical view as the driver."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.model import ModelError, ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.models.scripted import ScriptModel
from ctxlab.presets.pydantic_ai import preset as pydantic_ai
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import CTXLAB_TEXTS, load_texts
from ctxlab.texts.pydantic_ai import pydantic_ai_texts
from tests.parity.pa_driver import PACall, PAConfig, PATrace, canonical_message, canonical_tool

LOOP_LIMIT = 9_999
"""No round cap reached by a parity workload: pydantic-ai forces no final answer."""

BUILDS: dict[str, tuple[Any, Any]] = {
    "clear": (pydantic_ai.ClearToolResultsParams, pydantic_ai.build_clear),
    "window": (pydantic_ai.SlidingWindowParams, pydantic_ai.build_window),
    "summary": (pydantic_ai.SummarizingParams, pydantic_ai.build_summary),
}


@dataclass
class Recording:
    """A model that records each request in the canonical view before answering."""

    inner: Any
    calls: list[PACall]
    kind: str

    def respond(self, request: ModelRequest) -> ModelResponse:
        tools = tuple(canonical_tool(t.name, t.description, json.loads(t.parameters)) for t in request.tools)
        counted = pydantic_ai.counted_request(request.messages, request.tools, pydantic_ai_texts())
        messages = tuple(canonical_message(m) for m in to_openai(request.messages))
        self.calls.append(PACall(kind=self.kind, messages=messages, tools=tools, counted=counted))
        return self.inner.respond(request)  # type: ignore[no-any-return]


@dataclass
class TextSummarizer:
    """Answers each summary call as the configuration says; an invocation in `fail_on` raises."""

    config: PAConfig
    requests: list[ModelRequest] = field(default_factory=list)

    def respond(self, request: ModelRequest) -> ModelResponse:
        if request.invocation in self.config.fail_on:
            raise ModelError(f"summarizer unavailable (invocation {request.invocation})")
        self.requests.append(request)
        return ModelResponse(blocks=(TextBlock(text=self.config.answer(len(self.requests) - 1)),))


def strategy_of(config: PAConfig) -> StepStrategy:
    """The preset for a parity configuration, with the packages' texts."""
    params, build = BUILDS[config.capability]
    settings = {
        k: tuple(v) if isinstance(v, (list, set, frozenset)) else v for k, v in config.settings.items()
    }
    params_of = params(**settings, request_limit=config.request_limit)
    return build(params_of, load_texts("pydantic-ai"))  # type: ignore[no-any-return]


def run_lab(script: Script, config: PAConfig) -> PATrace:
    """Run ctxlab's engine on the configuration; an error ends the run as in the driver."""
    calls: list[PACall] = []
    env = Env(
        counter=AgentScopeEstimator(),
        model=Recording(ScriptModel(script), calls, "reasoning"),
        summarizer=Recording(TextSummarizer(config), calls, "summary"),
        texts=CTXLAB_TEXTS,
        context_size=config.window,
    )
    loop = Loop(
        script=script, strategy=strategy_of(config), env=env, settings=RunSettings(max_iters=LOOP_LIMIT)
    )
    error = None
    try:
        loop.run()
    except Exception as failure:  # the driver records the agent's error the same way
        error = type(failure).__name__
    return PATrace(calls=tuple(calls), error=error)
