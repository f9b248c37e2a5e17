"""The lab side of a LangChain parity run: ctxlab's engine with the exact LangChain steps and
LangChain's own texts, recording every request in the same view as the driver."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import ModelError, ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.models.scripted import ScriptModel
from ctxlab.presets.langchain.exact import (
    ClearExact,
    LangChainClearParams,
    LangChainSummaryParams,
    SummarizeExact,
)
from ctxlab.presets.langchain.preset import LANGGRAPH_LOOP_LIMIT
from ctxlab.presets.lc_count import count_tokens
from ctxlab.presets.lc_messages import LCMessage, lc_answer, lc_view
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.texts.langchain import langchain_texts
from tests.parity.lc_driver import LCCallRecord, LCConfig, LCTrace
from tests.parity.reasoning import reasoning_fields


@dataclass
class Recording:
    """A model that records each request in the LangChain view before answering."""

    inner: object
    calls: list[LCCallRecord]
    kind: str

    def respond(self, request: ModelRequest) -> ModelResponse:
        view = lc_view(request.messages)
        tools = tuple(
            json.dumps(
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": json.loads(t.parameters),
                    },
                },
                sort_keys=True,
            )
            for t in request.tools
        )
        counted = count_tokens([m for m in view if m.kind != "system"])
        self.calls.append(
            LCCallRecord(
                kind=self.kind,
                messages=view,
                tools=tools,
                counted=counted,
                reasoning=wire_reasoning(request.messages),
            )
        )
        return self.inner.respond(request)  # type: ignore[attr-defined, no-any-return]


def wire_reasoning(messages: Sequence[Message]) -> tuple[str, ...]:
    """The reasoning the lab's OpenAI request for `messages` carries."""
    return reasoning_fields(to_openai(messages))


@dataclass
class TextSummarizer:
    """Answers every summary call with `text`; every call of an invocation in `fail_on` raises."""

    text: str
    fail_on: frozenset[int] = frozenset()
    requests: list[ModelRequest] = field(default_factory=list)

    def respond(self, request: ModelRequest) -> ModelResponse:
        if request.invocation in self.fail_on:
            raise ModelError(f"summarizer unavailable (invocation {request.invocation})")
        return ModelResponse(blocks=(TextBlock(text=self.text),))


def _trigger(form: object) -> object:
    if isinstance(form, tuple) and form and isinstance(form[0], str):
        return ContextSize(form[0], form[1])  # type: ignore[arg-type]
    if isinstance(form, list):
        return tuple(_trigger(f) for f in form)
    return form


def strategy_of(config: LCConfig) -> StepStrategy:
    """The exact LangChain step for a parity configuration, with LangChain's texts."""
    texts = langchain_texts()
    if config.middleware == "clear":
        step: object = ClearExact(LangChainClearParams(**config.clear), texts=texts)
    else:
        params = LangChainSummaryParams(
            trigger=_trigger(config.trigger),  # type: ignore[arg-type]
            keep=ContextSize(*config.keep),  # type: ignore[arg-type]
            trim_tokens_to_summarize=config.trim_tokens_to_summarize,
            anthropic=config.anthropic,
        )
        step = SummarizeExact(params, texts=texts)
    return StepStrategy(  # the presets' strategy fields (`build_clear`, `build_summary`)
        name=f"langchain-{config.middleware}",
        steps=(step,),  # type: ignore[arg-type]
        futile_limit=0,
        kept_answer=lc_answer,
    )


def run_lab(script: Script, config: LCConfig) -> LCTrace:
    """Run ctxlab's engine on the configuration; an error ends the run as in the driver."""
    calls: list[LCCallRecord] = []
    env = Env(
        counter=AgentScopeEstimator(),
        model=Recording(ScriptModel(script), calls, "reasoning"),  # type: ignore[arg-type]
        summarizer=Recording(TextSummarizer(config.summary_text, config.fail_on), calls, "summary"),  # type: ignore[arg-type]
        texts=CTXLAB_TEXTS,
        context_size=config.window,
    )
    loop = Loop(
        script=script,
        strategy=strategy_of(config),
        env=env,
        settings=RunSettings(max_iters=LANGGRAPH_LOOP_LIMIT),
    )
    error = None
    final: tuple[LCMessage, ...] = ()
    try:
        final = lc_view(loop.run().state.context)
    except Exception as failure:  # the driver records the agent's error the same way
        error = type(failure).__name__
    return LCTrace(calls=tuple(calls), final=final, error=error)
