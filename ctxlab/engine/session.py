"""A session: one run assembled from typed values, the one way every caller builds a run.

`assemble` wires the environment, the loop and, when probes are planted, the retention tracker
(the outermost middleware, started with the system prompt as sent, finished through the
strategy's request-only view). `Session.run` runs it; `run_script` does both. The executors,
the tests, the benchmarks and `ctxlab.replay` all go through here.

Invariant: the same inputs give the same `RunOutcome`, call for call (nothing reads the wall
clock, a global random generator, or the environment).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import ChatModel
from ctxlab.core.messages.resumable import forget as forget_memos
from ctxlab.core.messages.tokens import AgentScopeEstimator, TokenCounter
from ctxlab.core.wire.protocol import RULES, Rule
from ctxlab.core.world.retention import Probe
from ctxlab.core.world.script import Script
from ctxlab.engine.env import CacheMeter, Env
from ctxlab.engine.hooks import BuiltinTool, RunSettings, Strategy
from ctxlab.engine.loop import Loop, RunOutcome
from ctxlab.engine.middleware import Middleware
from ctxlab.engine.retention import RetentionTracker, ledger_of
from ctxlab.engine.state import EpisodeState
from ctxlab.engine.workspace import Workspace
from ctxlab.texts import Texts


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentSetup:
    """How sub-agents run where they differ from their parent: their strategy, window, fake
    summarizer (one made per sub-agent, for its script), texts, loop settings and summary breaker.
    A field left None is the parent's; nested sub-agents run with the same setup."""

    strategy: Strategy | None = None
    context_size: int | None = None
    summarizer: Callable[[Script], ChatModel] | None = None
    texts: Texts | None = None
    settings: RunSettings | None = None
    breaker_limit: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Session:
    """One assembled run: its environment (and so its records), its loop, and its retention
    tracker when probes are planted."""

    env: Env
    loop: Loop
    tracker: RetentionTracker | None = None

    def view(self, state: EpisodeState) -> tuple[Message, ...]:
        """The strategy's request-only view of `state`'s context."""
        return self.loop.strategy.view(state, self.env, self.loop.frame)

    def run(self) -> RunOutcome:
        """Run every turn; with probes, the outcome carries every retention snapshot."""
        outcome = self.loop.run()
        if self.tracker is None:
            return outcome
        return replace(outcome, retention=self.tracker.finish(outcome.state, self.view))

    def release(self) -> None:
        """Free the run's objects as soon as the session is dropped (`Loop.release`, and the
        memos' entries, `core.messages.resumable.forget`); call it once the records have been read."""
        self.loop.release()
        forget_memos()


def assemble(
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
    rules: tuple[Rule, ...] = RULES,
    record_requests: bool = False,
    breaker_limit: int = 0,
    cache: CacheMeter | None = None,
    probes: Sequence[Probe] = (),
    subagent_model: Callable[[Script], ChatModel] | None = None,
    subagent: SubagentSetup | None = None,
) -> Session:
    """The session of `script` (call ids assigned) under `strategy`, with fake models.

    `subagent_model` gives the model of a sub-agent for its script; a sub-agent is a nested
    session with its own records and prompt-cache meter and no probes, sharing the parent's
    counter and workspace, with the strategy, window, summarizer, texts, settings and breaker of
    `subagent` where it sets them and the parent's otherwise.
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

    def spawn(sub: Script) -> Loop:
        assert subagent_model is not None
        own = subagent or SubagentSetup()
        child = assemble(
            sub,
            own.strategy or strategy,
            model=subagent_model(sub),
            summarizer=summarizer if own.summarizer is None else own.summarizer(sub),
            texts=own.texts or texts,
            context_size=own.context_size or context_size,
            counter=env.counter,
            workspace=workspace,
            settings=own.settings or settings,
            builtins=builtins,
            rules=rules,
            record_requests=record_requests,
            breaker_limit=breaker_limit if own.breaker_limit is None else own.breaker_limit,
            subagent_model=subagent_model,
            subagent=subagent,
        )
        return child.loop

    loop = Loop(
        script=script,
        strategy=strategy,
        env=env,
        settings=settings
        or RunSettings(max_iters_hint=texts.max_iters_hint, max_iters_source=texts.max_iters_source),
        builtins=dict(builtins or {}),
        middlewares=tuple(middlewares),
        spawn=spawn if subagent_model is not None else None,
    )
    if tracker is not None:
        tracker.start(loop.frame.system_prompt)
    return Session(env=env, loop=loop, tracker=tracker)


def run_script(script: Script, strategy: Strategy, **options: Any) -> RunOutcome:
    """Assemble and run: every call, compression and the final state (`assemble`'s options)."""
    return assemble(script, strategy, **options).run()
