"""The lab side of an OpenAI Agents parity run: ctxlab's engine with the family's steps and the
SDK's own texts (`texts: openai-agents`), recording every request in the driver's view."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.models.scripted import ScriptModel
from ctxlab.presets.openai_agents.preset import (
    SessionParams,
    TrimmerParams,
    build_session,
    build_trimmer,
)
from ctxlab.presets.openai_agents.session import SessionSettings
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import CTXLAB_TEXTS, load_texts
from tests.parity.oa_driver import MAX_TURNS, OACall, OAConfig, OATrace, canonical, tool_json


@dataclass
class Recording:
    """A model that records each request in the driver's view before answering."""

    inner: ScriptModel
    calls: list[OACall]

    def respond(self, request: ModelRequest) -> ModelResponse:
        messages = tuple(canonical(m) for m in to_openai(request.messages))
        tools = tuple(tool_json(t.name, t.description, json.loads(t.parameters)) for t in request.tools)
        self.calls.append(OACall(messages=messages, tools=tools))
        return self.inner.respond(request)


def strategy_of(config: OAConfig) -> StepStrategy:
    """The family's preset for a parity configuration, with the SDK's texts."""
    session = SessionSettings(limit=config.limit)
    texts = load_texts("openai-agents")
    if config.trimmer is None:
        return build_session(SessionParams(session_settings=session), texts)
    trimmer = dict(config.trimmer)
    if isinstance(trimmer.get("trimmable_tools"), (set, frozenset, list)):
        trimmer["trimmable_tools"] = tuple(sorted(trimmer["trimmable_tools"]))
    return build_trimmer(TrimmerParams(**trimmer, session_settings=session), texts)


def run_lab(script: Script, config: OAConfig) -> OATrace:
    """Run ctxlab's engine on the configuration."""
    calls: list[OACall] = []
    env = Env(
        counter=AgentScopeEstimator(),
        model=Recording(ScriptModel(script), calls),
        summarizer=Recording(ScriptModel(script), []),
        texts=CTXLAB_TEXTS,
        context_size=1_000_000,
    )
    loop = Loop(
        script=script, strategy=strategy_of(config), env=env, settings=RunSettings(max_iters=MAX_TURNS)
    )
    error = None
    try:
        loop.run()
    except Exception as failure:
        error = type(failure).__name__
    return OATrace(calls=tuple(calls), error=error)
