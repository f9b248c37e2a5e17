"""The lab side of a parity run: ctxlab's own engine on the same script and configuration.

`run_lab(script, config)` returns a `ParityTrace` like the driver's, so the two compare field by
field (message ids aside: each side issues its own).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxlab.core.agentscope.summary import summary_text
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.engine.middleware import CompressNext, CompressRequest, Middleware, ModelNext
from ctxlab.engine.state import EpisodeState
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.config import effective_buffer_ratio, injection_params
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import agentscope_texts
from tests.parity.spec import ParityConfig
from tests.parity.trace import Compression, MessageShape, ModelCall, ParityTrace, Tokens, shapes


@dataclass
class _Compressions(Middleware):
    """Records the context right after each compression."""

    env: Env
    seen: list[tuple[int, tuple[Message, ...], str]] = field(default_factory=list)

    def on_compress_context(
        self, state: EpisodeState, request: CompressRequest, next: CompressNext
    ) -> EpisodeState:
        before = len(self.env.recorder.compressions)
        out = next(state, request)
        if len(self.env.recorder.compressions) > before:
            self.seen.append((self.env.recorder.next_call_index, out.context, summary_text(out.summary)))
        return out


@dataclass
class _Requests(Middleware):
    """Records the tools and messages of every reasoning request."""

    seen: list[tuple[tuple[str, ...], tuple[Message, ...]]] = field(default_factory=list)

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        self.seen.append((tuple(t.name for t in request.tools), request.messages))
        return next(request)


def params_of(config: ParityConfig) -> AgentScopeParams:
    """The strategy parameters a parity configuration stands for."""
    c, i = config.context, config.injection
    return AgentScopeParams(
        trigger_ratio=c.trigger_ratio,
        reserve_ratio=c.reserve_ratio,
        context_buffer_ratio=effective_buffer_ratio(c, i),
        tool_result_limit=c.tool_result_limit,
        max_image_num=c.max_image_num,
        compression_fallback_to_truncation=c.compression_fallback_to_truncation,
        compression_tool_enabled=c.compression_tool_enabled,
        injection=injection_params(i),
        task_tools=config.task_tools,
    )


def run_lab(script: Script, config: ParityConfig) -> ParityTrace:
    """Run ctxlab's engine on a parity configuration; errors end the run as in the driver."""
    texts = agentscope_texts()
    summarizer = FixedSummarizer(
        fields=dict(config.summary_fields), fail_on=config.fail_on, fail_mode=config.fail_mode
    )
    env = Env(
        counter=AgentScopeEstimator(),
        model=ScriptModel(script),
        summarizer=summarizer,
        texts=texts,
        context_size=config.context_size,
        workspace=InMemoryWorkspace() if config.workspace == "memory" else None,
        record_requests=True,  # each call's request as sent, summary requests among them
    )
    recorder = _Compressions(env=env)
    requests = _Requests()
    settings = RunSettings(
        max_iters=config.max_iters,
        max_iters_hint=texts.max_iters_hint,
        max_iters_source=texts.max_iters_source,
    )
    loop = Loop(
        script=script,
        strategy=AgentScopeStrategy(texts=texts, params=params_of(config)),
        env=env,
        settings=settings,
        middlewares=(recorder, requests),
    )
    error = None
    try:
        outcome = loop.run()
        final = outcome.state
    except Exception as failure:  # the driver records the agent's error the same way
        error, final = f"{type(failure).__name__}", None
    reasoning = iter(requests.seen)
    calls = []
    for c in env.recorder.calls:
        tools, request = next(reasoning) if c.kind == "reasoning" else ((), ())
        calls.append(
            ModelCall(
                kind=c.kind,
                tokens=Tokens(c.tokens["messages"], c.tokens["preflight"], c.tokens["as_sent"]),
                tools=tools,
                request=request,
                sent=tuple(c.request["messages"]) if c.request is not None else (),
                turn=c.turn,
                iteration=c.iteration,
            )
        )
    compressions = tuple(
        Compression(
            before_call=at, trigger="auto", context=shapes(context), messages=context, summary=summary
        )
        for at, context, summary in recorder.seen
    )
    return ParityTrace(
        calls=tuple(calls),
        compressions=compressions,
        final_context=shapes(final.context) if final else (),
        final_messages=final.context if final else (),
        final_summary=summary_text(final.summary) if final else "",
        offloads=(),
        tasks=(),
        replies=(),
        error=error,
    )


def without_ids(context: tuple[MessageShape, ...]) -> list[tuple[str, tuple[object, ...]]]:
    """Context shapes with message ids dropped (each side issues its own)."""
    return [(m.role, m.blocks) for m in context]
