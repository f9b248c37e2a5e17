"""The measurements behind `make bench` (each returns numbers; `run.py` judges them)."""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from benchmarks.workload import WINDOW, long_reply, many_turns, replies
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.codec import encode_messages
from ctxlab.core.messages.message import Message, fixed_messages, text_message
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.protocol import RULES
from ctxlab.core.world.script import Script
from ctxlab.engine.cache import CacheUse
from ctxlab.engine.env import Env
from ctxlab.engine.loop import RunOutcome
from ctxlab.engine.middleware import Middleware, ModelNext
from ctxlab.engine.session import run_script
from ctxlab.engine.state import EpisodeState, with_context
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.experiments.collector import collecting_less
from ctxlab.models.scripted import ScriptedModel, ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeStrategy
from ctxlab.texts import load_texts

FIELDS = {
    "task_overview": "Answer each question from the retrieved passages.",
    "current_state": "Earlier questions answered.",
    "important_discoveries": "Passages repeat; answers are short.",
    "next_steps": "Answer the next question.",
    "context_to_preserve": "Keep answers to one line.",
}


Meters = Literal["both", "protocol", "cache", "none"]
"""Which of a run's two meters the lab side runs with: protocol checks, cache accounting."""


class _Unmetered:
    """A cache meter that prices nothing: for the lab's time with its accounting off."""

    def observe(self, *args: object, **kwargs: object) -> CacheUse:
        return CacheUse(0, 0)


def lab_run(
    n: int,
    middlewares: tuple[Middleware, ...] = (),
    script: Script | None = None,
    *,
    meters: Meters = "both",
    collect_less: bool = True,
) -> RunOutcome:
    """The `n`-reply workload (or `script`, built already) through the `agentscope` preset
    (AgentScope's texts and defaults), with the `meters` asked for (a run has both: protocol
    checks and cache accounting), and with the garbage collector as the `ctxlab` command and its
    workers set it (`ctxlab.experiments.collector`) unless not `collect_less`."""
    script, texts = script or replies(n), load_texts("agentscope")
    with collecting_less() if collect_less else contextlib.nullcontext():
        return run_script(
            script,
            AgentScopeStrategy(texts=texts),
            model=ScriptModel(script, requests=None),  # as a run builds it
            summarizer=FixedSummarizer(fields=FIELDS),
            texts=texts,
            context_size=WINDOW,
            workspace=InMemoryWorkspace(),
            middlewares=middlewares,
            rules=RULES if meters in ("both", "protocol") else (),
            cache=None if meters in ("both", "cache") else _Unmetered(),
        )


def lab_per_call(n: int, *, meters: Meters = "both", collect_less: bool = True) -> float:
    """CPU seconds per model call of the lab on `n` replies (the script, the input of both sides,
    is built before the clock starts)."""
    script = replies(n)
    start = time.process_time()
    outcome = lab_run(n, script=script, meters=meters, collect_less=collect_less)
    return (time.process_time() - start) / len(outcome.calls)


def real_run(n: int, script: Script | None = None) -> int:
    """The `n`-reply workload (or `script`) through the real agent; returns its number of model calls.

    The scripted model is unrecorded (`ParityConfig.record` off): it formats each request, as a
    provider's client does, and answers it, and does none of the parity harness's recording
    (which converts every message of every request and counts it twice, and so took two thirds
    of a recorded call). AgentScope's own logger is quieted to warnings: its two INFO lines per
    compression would only interleave with the table.
    """
    import logging

    from tests.parity.driver import run_agentscope
    from tests.parity.spec import ParityConfig

    logging.getLogger("as").setLevel(logging.WARNING)
    config = ParityConfig(context_size=WINDOW, summary_fields=FIELDS, workspace="memory", record=False)
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


def per_call_profile(n: int, runs: int = 5) -> Profile:
    """Median time per call over calls 100-200 and over the last hundred (9,900-10,000 for
    5,000 replies), each the smallest over `runs` runs, so that a slow spell of the machine
    during one phase of one run is not read as the run slowing down."""
    early, late = float("inf"), float("inf")
    for _ in range(runs):
        times: list[float] = []
        lab_run(n, middlewares=(_Stopwatch(times),))
        gaps = [b - a for a, b in itertools.pairwise(times)]
        early = min(early, statistics.median(gaps[100:200]))
        late = min(late, statistics.median(gaps[-100:]))
    return Profile(early=early, late=late)


def context_of(blocks: int) -> tuple[Message, ...]:
    """A context of about `blocks` blocks: user turns and replies of one call and result each."""
    messages: list[Message] = []
    for i in range(blocks // 4):
        messages.append(text_message("user", f"question {i}", id=f"u{i}"))
        call = ToolCallBlock(id=f"c{i}", name="retrieve", input='{"query": "q"}')
        result = ToolResultBlock(id=f"c{i}", name="retrieve", output=(TextBlock(text="passage " * 50),))
        messages.append(Message(role="assistant", id=f"r{i}", blocks=(call, result, TextBlock(text="ok"))))
    return tuple(messages)


def paused_seconds(work: Callable[[], object]) -> float:
    """CPU seconds of `work`, the cyclic garbage collector paused while the clock runs, as
    `timeit` does: its full collections walk every live object of the process, so they would
    charge the work for the size of the heap the benchmark itself built."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        work()
        return time.process_time() - start
    finally:
        gc.enable()


def compression_timer(blocks: int) -> Callable[[], float]:
    """A function timing one compression of a context of `blocks` blocks, in CPU seconds.

    Every call compresses the same state in a fresh `Env` whose meters have seen the context as
    the last reasoning request, as they have in a run, so the work measured is the same each
    time and is what a run pays: the split, the summary call (metered from the span the
    reasoning request held), the offload and the new state (timed by `paused_seconds`).
    """
    from ctxlab.core.world.script import DEFAULT_START
    from ctxlab.engine.clock import VirtualClock
    from ctxlab.presets.agentscope.compression import CompressionSettings, compress_if_triggered

    texts = load_texts("agentscope")
    counter = AgentScopeEstimator()
    state = with_context(EpisodeState(clock=VirtualClock(instant=DEFAULT_START)), context_of(blocks), counter)
    request = (*fixed_messages("s", state.summary), *state.context)
    settings = CompressionSettings(
        compression_prompt=texts.compression_prompt,
        summary_template=texts.summary_template,
        summary_schema=texts.summary_schema,
    )

    def once() -> float:
        env = Env(
            counter=counter,
            model=ScriptedModel([ModelResponse()]),
            summarizer=FixedSummarizer(fields=FIELDS),
            texts=texts,
            context_size=blocks * 10,
            workspace=InMemoryWorkspace(),
        )
        env.reasoning(state, ModelRequest(kind="reasoning", messages=request, tools=()), 0)
        compressed: list[EpisodeState] = []
        seconds = paused_seconds(
            lambda: compressed.append(
                compress_if_triggered(state, env, settings, system_prompt="s", tools=())
            )
        )
        assert compressed[0] is not state, "the context must be over the trigger"
        return seconds

    return once


def plain_pass_timer(blocks: int) -> Callable[[], float]:
    """A function timing `json.dumps` of the same context as plain data, in CPU seconds: the
    machine's own cost of one pass over that much data, for reading the compression's ratios."""
    data = encode_messages(context_of(blocks))

    return lambda: paused_seconds(lambda: json.dumps(data))


def best_in_turn(rounds: int, *measures: Callable[[], float]) -> list[float]:
    """Each measure's smallest value over `rounds` rounds, the measures taken in turn in every
    round, so that a slow spell of a shared machine (a neighbour on the host) falls on all alike."""
    best = [float("inf")] * len(measures)
    for _ in range(rounds):
        best = [min(b, measure()) for b, measure in zip(best, measures, strict=True)]
    return best


def doublings(seconds: list[float]) -> list[float]:
    """The ratio of each time to the one before."""
    return [b / a for a, b in itertools.pairwise(seconds)]


def compression_scaling(sizes: tuple[int, ...]) -> tuple[list[float], list[float]]:
    """Cost ratios at each doubling of the context's blocks: of one compression, and of a plain
    `json.dumps` of the same contexts (the machine's own, timed in the same rounds)."""
    timers = [compression_timer(n) for n in sizes] + [plain_pass_timer(n) for n in sizes]
    best = best_in_turn(10, *timers)
    return doublings(best[: len(sizes)]), doublings(best[len(sizes) :])


def sweep_speedup(runs: int, rounds: int = 3) -> float:
    """Speed-up of a `runs`-run sweep on 2 worker processes over 1 (each side its best of
    `rounds`, timed in turn: on a two-core machine, anything else running takes a core from the
    two-worker sweep, so one quiet moment each is the fair comparison)."""
    from benchmarks.sweep import sweep_seconds

    one, two = best_in_turn(
        rounds, lambda: sweep_seconds(runs, workers=1), lambda: sweep_seconds(runs, workers=2)
    )
    return one / two


LONG_REPLY_ROUNDS = (500, 2000)
LONG_REPLY_WINDOW = 8_000


MANY_TURNS = (500, 2000)
SHAPES = {"reply": long_reply, "turns": many_turns}
"""The transcripts a replay's growth is measured on: one reply of many tool rounds, or many
user turns of one round each (`benchmarks.workload`)."""


NEVER_COMPRESSED = (2500, 10_000)
NEVER_COMPRESSED_WINDOW = 100_000_000
"""A history that is never compressed: `none` at a window no transcript fills, so every request
is the whole history (the yardstick every replay compares against, on a long transcript)."""


def long_reply_seconds(
    preset: str,
    rounds: tuple[int, int] = LONG_REPLY_ROUNDS,
    repeats: int = 2,
    shape: str = "reply",
    window: int = LONG_REPLY_WINDOW,
) -> tuple[float, float]:
    """CPU seconds of replaying one long reply of each of `rounds` (or, for `shape` "turns", a
    transcript of that many user turns) through `preset` (at a window of `window` tokens, the
    collector as the `ctxlab` command sets it), each the best of `repeats` taken in turn
    (`best_in_turn`).
    The longer over the shorter is how the replay grows with the transcript: a cost per call that
    stays flat gives at most the ratio of the lengths (less by what a replay costs whatever its
    length); one that reads the whole history at every call gives up to its square."""
    from ctxlab.replay import replay_transcript
    from ctxlab.scenarios.workload import forget_kept

    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as folder, collecting_less():
        paths = [Path(folder) / f"reply{n}.jsonl" for n in rounds]
        for path, n in zip(paths, rounds, strict=True):
            path.write_text(SHAPES[shape](n), encoding="utf-8")

        def replay(path: Path) -> Callable[[], float]:
            def seconds() -> float:
                out = Path(folder) / "out"
                forget_kept()  # each repeat replays as `ctxlab replay` does, in a fresh process
                start = time.process_time()
                replay_transcript(path, out, context_size=window, presets=[preset])
                spent = time.process_time() - start
                shutil.rmtree(out)
                return spent

            return seconds

        short, long = best_in_turn(repeats, *(replay(path) for path in paths))
    return short, long
