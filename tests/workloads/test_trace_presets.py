"""Every vendored real transcript replays under every preset (but the protocol-blind baseline) at 8k,
32k and 128k windows without a single strategy-caused violation of the OpenAI or Anthropic rules,
while the one transcript that breaks the protocol itself keeps reporting that as its source's own.
Bedrock's stricter rule (a user message first) is broken only where a preset's source does so by
design (`Preset.assistant_first`), and the lab reports it there instead of repairing it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ctxlab.core.wire.protocol import Violation
from ctxlab.core.wire.views import anthropic_id
from ctxlab.core.world.script import Script, assign_call_ids
from ctxlab.engine.hooks import Strategy
from ctxlab.engine.session import assemble
from ctxlab.engine.trace import CallRecord
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.deepagents.summary import ContextOverflowError as DeepAgentsOverflow
from ctxlab.presets.registry import PRESETS
from ctxlab.presets.strands.preset import ContextOverflowError as StrandsOverflow
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.trace import TraceWorkload, read_trace
from tests.oracles import recorded_anthropic
from tests.workloads.test_trace import KIMI, TRACES
from tests.zoo.runs import strategy_caused
from tests.zoo.test_presets import REQUIRED

FIELDS = dict.fromkeys(
    ("task_overview", "current_state", "important_discoveries", "next_steps", "context_to_preserve"),
    "Carry on from the transcript.",
)
WINDOWS = (8_000, 32_000, 128_000)
PRESET_NAMES = tuple(name for name in PRESETS if name != "sliding-window")


@cache
def workload(traces: Path, name: str) -> TraceWorkload:
    return read_trace(traces / name)


def strategy(name: str):  # type: ignore[no-untyped-def]
    info = PRESETS[name]
    return info.strategy(info.params(**REQUIRED.get(name, {})))


ENDED_BY_THE_FRAMEWORK = (DeepAgentsOverflow, StrandsOverflow)
"""Errors a family raises by its source's design when a transcript cannot be fitted into the
window (deepagents over its input budget; strands with nothing left to reduce, or at its
recursion limit): the run ends there, and the requests sent before it are still checked."""


def replayed_calls(script: Script, strategy: Strategy, **options: Any) -> tuple[CallRecord, ...]:
    """The calls of a replay, up to the end a family's own error puts to it (which may come
    before the first call, when no request of the transcript fits)."""
    session = assemble(script, strategy, **options)
    try:
        calls = session.run().calls
    except ENDED_BY_THE_FRAMEWORK:
        return tuple(session.env.recorder.calls)
    assert calls
    return calls


def replay(script: Script, preset: str, window: int) -> list[Violation]:
    script = assign_call_ids(script)
    calls = replayed_calls(
        script,
        strategy(preset),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=window,
        workspace=InMemoryWorkspace(),
        record_requests=True,
    )
    for call, (shape, broken) in zip(calls, recorded_anthropic(calls), strict=True):
        assert shape == [], (preset, window, call.call_index)  # each request as the Messages API receives it
        # the view sends each id as the API takes it (`anthropic_id`: `write_todos:14` changed)
        rule = {
            anthropic_id(v.call_id) if v.call_id else "" for v in call.violations if v.rule == "anthropic"
        }
        assert {p.split(":", 1)[1] for p in broken} == rule, (preset, window, call.call_index)
    return [v for c in calls for v in c.violations]


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_transcript_replays_without_a_strategy_caused_violation(
    traces_dir: Path, preset: str, window: int
) -> None:
    for name in TRACES:
        found = replay(workload(traces_dir, name).script, preset, window)
        assert strategy_caused(found, preset) == [], (name, preset, window)


def test_the_adk_summary_as_a_model_turn_breaks_bedrocks_rule_and_is_reported(traces_dir: Path) -> None:
    found = replay(
        workload(traces_dir, "tau-bench_gpt-4o_airline_task02_trial1.jsonl").script,
        "google-adk-window",
        128_000,
    )
    assert found and {(v.rule, v.index, v.kind) for v in found} == {("bedrock", 1, "assistant_first")}


def test_the_source_anomaly_is_reported_as_the_sources_own(traces_dir: Path) -> None:
    kimi = workload(traces_dir, KIMI)
    assert [str(v) for v in kimi.source_violations] == [
        "openai:21:write_todos:14",
        "openai:22:write_todos:14",
    ]
    assert replay(kimi.script, "agentscope", 8_000) == []  # the lab's own requests are clean


@pytest.mark.parametrize("window", [8_000])
def test_the_baseline_does_break_the_protocol_on_a_real_transcript(traces_dir: Path, window: int) -> None:
    found = [
        v for name in TRACES for v in replay(workload(traces_dir, name).script, "sliding-window", window)
    ]
    assert found  # the lab catches what the protocol-blind window does
