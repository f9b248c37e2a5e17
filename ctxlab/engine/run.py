"""The engine's entry point: run one script through one strategy with fake models.

Invariant: the same inputs give the same `RunOutcome`, call for call (nothing reads the wall
clock, a global random generator, or the environment).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ctxlab.core.model import ChatModel
from ctxlab.core.protocol import Rule
from ctxlab.core.retention import Probe
from ctxlab.core.script import Script
from ctxlab.core.tokens import AgentScopeEstimator, TokenCounter
from ctxlab.engine.env import CacheMeter, Env
from ctxlab.engine.hooks import BuiltinTool, RunSettings, Strategy
from ctxlab.engine.loop import Loop, RunOutcome
from ctxlab.engine.middleware import Middleware
from ctxlab.engine.retention import RetentionTracker, ledger_of
from ctxlab.engine.workspace import Workspace
from ctxlab.texts import Texts


def run_script(
    script: Script,
    strategy: Strategy,
    *,
    model: ChatModel,
    summarizer: ChatModel,
    texts: Texts,
    context_size: int,
    counter: TokenCounter | None = None,
    workspace: Workspace | None = None,
    settings: RunSettings | None = None,
    middlewares: Sequence[Middleware] = (),
    builtins: Mapping[str, BuiltinTool] | None = None,
    rules: tuple[Rule, ...] = ("openai", "anthropic"),
    record_requests: bool = False,
    breaker_limit: int = 0,
    cache: CacheMeter | None = None,
    probes: Sequence[Probe] = (),
) -> RunOutcome:
    """Run `script` (call ids assigned) and return every call, compression and the final state.

    With `probes`, a `RetentionTracker` (the outermost middleware) records where each probe is
    after every compression and at the end, into `RunOutcome.retention`.
    """
    env = Env(
        counter=counter or AgentScopeEstimator(),
        model=model,
        summarizer=summarizer,
        texts=texts,
        context_size=context_size,
        workspace=workspace,
        rules=rules,
        record_requests=record_requests,
        breaker_limit=breaker_limit,
        cache=cache,
    )
    loop_settings = settings or RunSettings(
        max_iters_hint=texts.max_iters_hint, max_iters_source=texts.max_iters_source
    )
    tracker = None
    if probes:
        tracker = RetentionTracker(
            probes=tuple(probes),
            counter=env.counter,
            recorder=env.recorder,
            workspace=workspace,
            ledger=ledger_of(strategy),
        )
        middlewares = (tracker, *middlewares)
    loop = Loop(
        script=script,
        strategy=strategy,
        env=env,
        settings=loop_settings,
        builtins=dict(builtins or {}),
        middlewares=tuple(middlewares),
    )
    if tracker is None:
        return loop.run()
    tracker.start(loop.frame.system_prompt)
    tracker.view = lambda state: strategy.view(state, env, loop.frame)
    outcome = loop.run()
    return replace(outcome, retention=tracker.finish(outcome.state))
