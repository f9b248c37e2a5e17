"""The lab side of a deepagents parity run: ctxlab's engine with the `deepagents` preset and
deepagents' own texts, recording every request in the same view as the driver."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.scripted import ScriptModel
from ctxlab.presets.deepagents.preset import (
    LANGGRAPH_LOOP_LIMIT,
    DeepAgentsParams,
    FilesystemSettings,
    SummarizationSettings,
    TruncateArgsSettings,
    build,
)
from ctxlab.presets.lc_messages import lc_view
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import CTXLAB_TEXTS, load_texts
from tests.parity.da_driver import DAConfig
from tests.parity.lc_driver import LCCallRecord, LCTrace
from tests.parity.lc_lab import TextSummarizer, _trigger, wire_reasoning


@dataclass
class Recording:
    """A model that records each request in the LangChain view, with deepagents' count."""

    inner: object
    calls: list[LCCallRecord]
    kind: str
    strategy: StepStrategy

    def respond(self, request: ModelRequest) -> ModelResponse:
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
        counter = self.strategy.request_counter
        counted = 0 if self.kind == "summary" or counter is None else counter(request.messages, request.tools)
        self.calls.append(
            LCCallRecord(
                kind=self.kind,
                messages=lc_view(request.messages),
                tools=tools,
                counted=counted,
                reasoning=wire_reasoning(request.messages),
            )
        )
        return self.inner.respond(request)  # type: ignore[attr-defined, no-any-return]


def _size(form: object) -> ContextSize | None:
    return None if form is None else ContextSize(*form)  # type: ignore[misc]


def params_of(config: DAConfig) -> DeepAgentsParams:
    """The preset's parameters for a parity configuration."""
    filesystem = FilesystemSettings(
        tool_token_limit_before_evict=config.tool_token_limit_before_evict,
        human_message_token_limit_before_evict=config.human_message_token_limit_before_evict,
    )
    if config.defaults:
        return DeepAgentsParams(filesystem=filesystem)
    given = config.truncate_args_settings
    truncate = (
        TruncateArgsSettings(trigger=None)
        if given is None
        else TruncateArgsSettings(
            trigger=_size(given.get("trigger")),
            keep=_size(given.get("keep", ("messages", 20))) or ContextSize("messages", 20),
            max_length=given.get("max_length", 2000),
            truncation_text=given.get("truncation_text"),
        )
    )
    summarization = SummarizationSettings(
        trigger=_trigger(config.trigger),  # type: ignore[arg-type]
        keep=ContextSize(*config.keep),  # type: ignore[arg-type]
        trim_tokens_to_summarize=config.trim_tokens_to_summarize,
        truncate_args_settings=truncate,
    )
    return DeepAgentsParams(filesystem=filesystem, summarization=summarization)


def run_lab(script: Script, config: DAConfig) -> LCTrace:
    """Run ctxlab's engine on the configuration; an error ends the run as in the driver."""
    calls: list[LCCallRecord] = []
    strategy = build(params_of(config), load_texts("deepagents"))
    env = Env(
        counter=AgentScopeEstimator(),
        model=Recording(ScriptModel(script), calls, "reasoning", strategy),  # type: ignore[arg-type]
        summarizer=Recording(TextSummarizer(config.summary_text, config.fail_on), calls, "summary", strategy),  # type: ignore[arg-type]
        texts=CTXLAB_TEXTS,
        context_size=config.window,
        workspace=InMemoryWorkspace(),
    )
    loop = Loop(
        script=script, strategy=strategy, env=env, settings=RunSettings(max_iters=LANGGRAPH_LOOP_LIMIT)
    )
    error = None
    try:
        loop.run()
    except Exception as failure:  # the driver records the agent's error the same way
        error = type(failure).__name__
    return LCTrace(calls=tuple(calls), final=(), error=error)
