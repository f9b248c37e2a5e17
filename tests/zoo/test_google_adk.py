"""The Google ADK presets without ADK: their config checks, the session's ranges, what a run records.

Call-for-call parity with the installed package is `tests/parity/test_adk_parity.py`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import Block, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.engine.session import run_script
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.google_adk import session
from ctxlab.presets.google_adk.preset import (
    AdkParams,
    AdkTokenParams,
    EventsCompactionConfig,
    as_message,
    build,
    build_tokens,
    invocations,
)
from ctxlab.texts import CTXLAB_TEXTS
from tests.parity.openhands_workloads import TOOLS
from tests.zoo_strategies import agent_histories


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({}, "at least one compaction trigger"),
        ({"compaction_interval": 2}, "compaction_interval and overlap_size"),
        ({"token_threshold": 10}, "token_threshold and event_retention_size"),
        ({"compaction_interval": 0, "overlap_size": 0}, "compaction_interval must be at least 1"),
        ({"token_threshold": 5, "event_retention_size": -1}, "event_retention_size must be at least 0"),
    ],
)
def test_the_config_is_checked_as_adk_checks_it(given: dict[str, int], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        EventsCompactionConfig(**given)


def raw(count: int) -> tuple[session.RawEvent, ...]:
    return session.events_of(tuple(text_message("user", f"m{k}") for k in range(count)), list(range(count)))


def plain_events(context: list[Message]) -> list[tuple[int, int, str, tuple[Block, ...]]]:
    """The events read block by block over the whole context: (ordinal, invocation, role, blocks)."""
    out: list[tuple[int, int, str, tuple[Block, ...]]] = []
    for message, turn in zip(context, invocations(context), strict=True):
        if message.role == "user":
            out.append((len(out) + 1, turn, "user", message.blocks))
            continue
        for results, run in itertools.groupby(message.blocks, key=lambda b: isinstance(b, ToolResultBlock)):
            out.append((len(out) + 1, turn, "response" if results else "model", tuple(run)))
    return out


@given(agent_histories(), st.integers(0, 3))
def test_events_are_read_once_and_stay_as_the_context_grows(history: list[Message], cut: int) -> None:
    before = history[: max(1, len(history) - cut)]
    read = session.events_of(before, invocations(before))
    assert [(e.ts, e.invocation, e.role, e.blocks) for e in read] == plain_events(before)
    grown = session.events_of(history, invocations(history))
    assert [(e.ts, e.invocation, e.role, e.blocks) for e in grown] == plain_events(history)
    assert all(a is b for a, b in zip(read, grown, strict=False))  # the old events, unchanged
    assert [as_message(e, k) for k, e in enumerate(read)] == [as_message(e, k) for k, e in enumerate(grown)][
        : len(read)
    ]
    assert all(as_message(e, 0) is as_message(e, 0) for e in grown)
    fresh = [dataclasses.replace(e) for e in grown]  # equal events, counted afresh
    assert session.estimate_tokens(grown) == session.estimate_tokens(fresh)


def test_a_containing_range_supersedes_the_ranges_it_contains() -> None:
    events = raw(6)
    inner = session.Compacted(start=1, end=2, text="A", after=2)
    outer = session.Compacted(start=1, end=4, text="B", after=4)
    partial = session.Compacted(start=3, end=5, text="C", after=5)
    assert session.surviving((inner, outer, partial)) == [1, 2]
    shown = session.effective(events, (inner, outer, partial))
    assert [getattr(x, "text", None) or x.ts for x in shown] == ["B", "C", 6]  # type: ignore[union-attr]


def script(turns: int) -> Script:
    return Script(
        system_prompt="You are a test.",
        tools=TOOLS[:1],
        turns=tuple(
            ScriptedTurn(
                user=(TextBlock(text=f"Task {t}"),),
                rounds=(
                    ScriptedRound(
                        text=None,
                        calls=(
                            ScriptedCall(
                                tool="run",
                                input=json.dumps({"command": f"ls {t}"}),
                                result=(TextBlock(text=f"out {t} " * 200),),
                                id=f"c{t}",
                            ),
                        ),
                    ),
                ),
                final=f"done {t}",
            )
            for t in range(turns)
        ),
    )


def test_a_window_compaction_is_recorded_with_the_requests_it_shrank() -> None:
    params = AdkParams(events_compaction_config=EventsCompactionConfig(compaction_interval=2, overlap_size=0))
    outcome = run_script(
        script(5),
        build(params, CTXLAB_TEXTS),
        model=ScriptModel(script(5)),
        summarizer=FixedSummarizer(fields={}, text="notes"),
        texts=CTXLAB_TEXTS,
        context_size=100_000,
    )
    kinds = "".join("S" if c.kind == "summary" else "r" for c in outcome.calls)
    assert kinds == "rrrrSrrrrSrr"  # after turns 2 and 4, shown before the next turn's first call
    assert [c.before_call for c in outcome.compressions] == [5, 10]  # the reasoning call after each summary
    assert all(c.tokens_after < c.tokens_before for c in outcome.compressions)
    # No call loses its result; a request opened by the summary (a model turn) is Bedrock's refusal.
    found = {(c.call_index, v.rule, v.index, v.kind) for c in outcome.calls for v in c.violations}
    after = [c.call_index for c in outcome.calls if c.kind == "reasoning" and c.call_index >= 5]
    assert found == {(i, "bedrock", 1, "assistant_first") for i in after}


def adk_chars(request: dict[str, Any]) -> int:
    """ADK's estimate of a recorded OpenAI request, read off the request itself: the characters of
    texts, call names and JSON arguments, and each response as `{"result": ...}`, // 4."""
    names: dict[str, str] = {}
    total = 0
    for message in request["messages"]:
        if message["role"] == "system":
            continue
        for call in message.get("tool_calls") or ():
            names[call["id"]] = call["function"]["name"]
            args = json.loads(call["function"]["arguments"])
            total += len(call["function"]["name"]) + (len(json.dumps(args)) if args else 0)
        if message["role"] == "tool":
            name = names[message["tool_call_id"]]
            total += len(name) + len(json.dumps({"result": message["content"]}))
        elif isinstance(message.get("content"), str):
            total += len(message["content"])
    return total // 4


def test_the_token_preset_records_adks_estimate_of_each_request_and_the_window_preset_none() -> None:
    config = EventsCompactionConfig(token_threshold=600, event_retention_size=2)
    runs = {}
    for name, strategy in (
        ("tokens", build_tokens(AdkTokenParams(events_compaction_config=config), CTXLAB_TEXTS)),
        ("window", build(AdkParams(), CTXLAB_TEXTS)),
    ):
        runs[name] = run_script(
            script(5),
            strategy,
            model=ScriptModel(script(5)),
            summarizer=FixedSummarizer(fields={}, text="notes"),
            texts=CTXLAB_TEXTS,
            context_size=100_000,
            record_requests=True,
        ).calls
    reasoning = [c for c in runs["tokens"] if c.kind == "reasoning"]
    assert any(c.kind == "summary" for c in runs["tokens"])  # estimates before and after compactions
    assert [c.strategy_tokens for c in reasoning] == [adk_chars(c.request) for c in reasoning]
    assert all(c.strategy_tokens is None for c in runs["window"])
