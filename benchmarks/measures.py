"""The measurements behind `make bench` (each returns numbers; `run.py` judges them)."""

from __future__ import annotations

import itertools
import statistics
import time
from dataclasses import dataclass

from benchmarks.workload import WINDOW, replies
from ctxlab.core.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages import Message, text_message
from ctxlab.core.model import ModelRequest, ModelResponse
from ctxlab.core.script import Script
from ctxlab.core.tokens import AgentScopeEstimator
from ctxlab.engine.env import Env
from ctxlab.engine.loop import RunOutcome
from ctxlab.engine.middleware import Middleware, ModelNext
from ctxlab.engine.run import run_script
from ctxlab.engine.state import EpisodeState, with_context
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.scripted import ScriptedModel, ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.strategies.agentscope import AgentScopeStrategy
from ctxlab.texts import load_texts

FIELDS = {
    "task_overview": "Answer each question from the retrieved passages.",
    "current_state": "Earlier questions answered.",
    "important_discoveries": "Passages repeat; answers are short.",
    "next_steps": "Answer the next question.",
    "context_to_preserve": "Keep answers to one line.",
}


def lab_run(n: int, middlewares: tuple[Middleware, ...] = (), script: Script | None = None) -> RunOutcome:
    """The `n`-reply workload (or `script`, built already) through the `agentscope` preset
    (AgentScope's texts and defaults)."""
    script, texts = script or replies(n), load_texts("agentscope")
    return run_script(
        script,
        AgentScopeStrategy(texts=texts),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=texts,
        context_size=WINDOW,
        workspace=InMemoryWorkspace(),
        middlewares=middlewares,
    )


def lab_per_call(n: int) -> float:
    """CPU seconds per model call of the lab on `n` replies (the script, the input of both sides,
    is built before the clock starts)."""
    script = replies(n)
    start = time.process_time()
    outcome = lab_run(n, script=script)
    return (time.process_time() - start) / len(outcome.calls)


def real_run(n: int, script: Script | None = None) -> int:
    """The `n`-reply workload (or `script`) through the real agent; returns its number of model calls.

    AgentScope's own logger is quieted to warnings: its two INFO lines per compression would
    only interleave with the table.
    """
    import logging

    from tests.parity.driver import run_agentscope
    from tests.parity.spec import ParityConfig

    logging.getLogger("as").setLevel(logging.WARNING)
    config = ParityConfig(context_size=WINDOW, summary_fields=FIELDS, workspace="memory")
    return len(run_agentscope(script or replies(n), config).calls)


def real_per_call(n: int) -> float:
    """CPU seconds per model call of the real agent on `n` replies (the script built beforehand)."""
    script = replies(n)
    start = time.process_time()
    calls = real_run(n, script)
    return (time.process_time() - start) / calls


@dataclass
class _Stopwatch(Middleware):
    """Notes the CPU time of every reasoning call."""

    times: list[float]

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        self.times.append(time.process_time())
        return next(request)


@dataclass(frozen=True)
class Profile:
    """Median CPU seconds between consecutive calls, early and late in a long run."""

    early: float
    late: float


def per_call_profile(n: int) -> Profile:
    """Median time per call over calls 100-200 and over the last hundred (9,900-10,000)."""
    times: list[float] = []
    lab_run(n, middlewares=(_Stopwatch(times),))
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return Profile(early=statistics.median(gaps[100:200]), late=statistics.median(gaps[-100:]))


def context_of(blocks: int) -> tuple[Message, ...]:
    """A context of about `blocks` blocks: user turns and replies of one call and result each."""
    messages: list[Message] = []
    for i in range(blocks // 4):
        messages.append(text_message("user", f"question {i}", id=f"u{i}"))
        call = ToolCallBlock(id=f"c{i}", name="retrieve", input='{"query": "q"}')
        result = ToolResultBlock(id=f"c{i}", name="retrieve", output=(TextBlock(text="passage " * 50),))
        messages.append(Message(role="assistant", id=f"r{i}", blocks=(call, result, TextBlock(text="ok"))))
    return tuple(messages)


def compression_seconds(blocks: int, repeats: int = 5) -> float:
    """CPU time of one compression of a context of `blocks` blocks (best of `repeats`)."""
    from ctxlab.core.script import DEFAULT_START
    from ctxlab.engine.clock import VirtualClock
    from ctxlab.engine.compression import CompressionSettings, compress_if_triggered

    texts = load_texts("agentscope")
    counter = AgentScopeEstimator()
    env = Env(
        counter=counter,
        model=ScriptedModel([]),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=texts,
        context_size=blocks * 10,
        workspace=InMemoryWorkspace(),
    )
    state = with_context(EpisodeState(clock=VirtualClock(instant=DEFAULT_START)), context_of(blocks), counter)
    settings = CompressionSettings(
        compression_prompt=texts.compression_prompt,
        summary_template=texts.summary_template,
        summary_schema=texts.summary_schema,
    )
    timings = []
    for _ in range(repeats):
        start = time.process_time()
        compress_if_triggered(state, env, settings, system_prompt="s", tools=())
        timings.append(time.process_time() - start)
    return min(timings)


def compression_scaling(sizes: tuple[int, ...]) -> list[float]:
    """Cost ratio of one compression at each doubling of the context's blocks."""
    seconds = [compression_seconds(n) for n in sizes]
    return [b / a for a, b in itertools.pairwise(seconds)]


def sweep_speedup(runs: int) -> float:
    """Speed-up of a `runs`-run sweep on 2 worker processes over 1."""
    from benchmarks.sweep import sweep_seconds

    return sweep_seconds(runs, workers=1) / sweep_seconds(runs, workers=2)
