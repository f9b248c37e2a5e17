"""The lab's engine against the real agentscope 2.0.11 on generated workloads: identical call
kinds, per-call input tokens under every counting convention, contexts after every compression,
and summaries."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.world.script import Script
from ctxlab.presets.agentscope.config import InjectionConfig
from tests.parity.ch08 import ch08_workload
from tests.parity.lab import run_lab, without_ids
from tests.parity.spec import ParityConfig
from tests.parity.trace import ParityTrace
from tests.parity.workloads import parity_cases


def compare(script: Script, config: ParityConfig) -> tuple[ParityTrace, ParityTrace]:
    from tests.parity.driver import run_agentscope

    theirs, ours = run_agentscope(script, config), run_lab(script, config)
    assert (ours.error is None) == (theirs.error is None), (ours.error, theirs.error)
    assert [c.kind for c in ours.calls] == [c.kind for c in theirs.calls]
    assert not any("reasoning_content" in m for c in theirs.calls for m in c.sent)  # never sent
    for convention in ("messages", "preflight", "as_sent"):
        assert ours.input_tokens(convention) == theirs.input_tokens(convention), convention  # type: ignore[arg-type]
    assert len(ours.compressions) == len(theirs.compressions)
    for mine, real in zip(ours.compressions, theirs.compressions, strict=True):
        assert mine.before_call == real.before_call
        assert without_ids(mine.context) == without_ids(real.context)
        assert mine.summary == real.summary
    if theirs.error is None:
        assert without_ids(ours.final_context) == without_ids(theirs.final_context)
        assert ours.final_summary == theirs.final_summary
    return ours, theirs


@given(parity_cases(injection=False))
def test_engine_matches_agentscope_without_injection(case: tuple[Script, ParityConfig]) -> None:
    compare(*case)


@given(parity_cases(agent=True))
def test_engine_matches_agentscope_with_injection_task_tools_and_the_compression_tool(
    case: tuple[Script, ParityConfig],
) -> None:
    compare(*case)


@pytest.mark.parametrize("window", [1_000_000, 4000])
def test_the_book_experiment_on_both_sides(window: int) -> None:
    ours, theirs = compare(*ch08_workload(window))
    assert ours.input_tokens("messages") == theirs.input_tokens("messages")


def test_an_empty_system_prompt_is_sent_as_an_empty_system_message() -> None:
    """AgentScope always writes its system message, an empty one too (its OpenAI formatter keeps
    the empty text block); the lab sends it in reasoning and summary requests alike, and every
    count and compression stays AgentScope's."""
    import dataclasses

    from agentscope.formatter import OpenAIChatFormatter
    from agentscope.message import SystemMsg

    script, config = ch08_workload(4000)
    ours, theirs = compare(dataclasses.replace(script, system_prompt=""), config)
    assert ours.compressions
    for call in theirs.calls:
        assert call.request[0].role == "system" and call.request[0].blocks == (TextBlock(text=""),)
    sent = asyncio.run(OpenAIChatFormatter().format([SystemMsg(name="system", content="")]))
    assert sent == [{"role": "system", "name": "system", "content": [{"type": "text", "text": ""}]}]


def _plain(wire: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[tuple[object, ...]]:
    """Each sent message as role, text, calls and result id: the OpenAI formatter's list of parts
    and `name` aside, what the lab's view and AgentScope's formatter both carry."""
    out: list[tuple[object, ...]] = []
    for w in wire:
        content = w.get("content")
        text = (
            content
            if content is None or isinstance(content, str)
            else "".join(p["text"] if p.get("type") == "text" else f"<{p.get('type')}>" for p in content)
        )
        calls = tuple(
            (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in w.get("tool_calls") or ()
        )
        others = sorted(set(w) - {"role", "content", "tool_calls", "tool_call_id", "name"})
        out.append((w["role"], text or "", calls, w.get("tool_call_id"), others))
    return out


def test_thinking_is_counted_by_the_estimator_and_left_out_of_every_request() -> None:
    """AgentScope's OpenAI chat model keeps `reasoning_content` as a thinking block first in the
    answer; its estimator counts it (reasoning, pre-flight and summary counts alike, so it moves
    the trigger), its OpenAI formatter sends none of it. The lab counts and sends the same."""
    import dataclasses

    from ctxlab.core.wire.views import to_openai
    from tests.parity.workloads import retrieval_loop

    script = retrieval_loop([3000, 3000, 2000, 500], turns=2)
    turns = tuple(
        dataclasses.replace(
            t,
            rounds=tuple(
                dataclasses.replace(
                    r, thinking=f"Plan {k}: " + "why " * 200, text="Looking." * (k % 2) or None
                )
                for k, r in enumerate(t.rounds)
            ),
        )
        for t in script.turns
    )
    thinking, config = dataclasses.replace(script, turns=turns), ParityConfig(context_size=6000)
    ours, theirs = compare(thinking, config)
    assert ours.compressions  # the thinking's tokens bring the trigger
    bare, _ = compare(script, config)
    added = ours.calls[1].tokens.messages - bare.calls[1].tokens.messages
    assert added == len("Plan 0: " + "why " * 200) // 4  # the first round's thinking, counted
    for mine, real in zip(ours.calls, theirs.calls, strict=True):
        assert "why why" not in json.dumps(real.sent)
        if mine.kind == "reasoning":
            assert _plain(to_openai(mine.request)) == _plain(real.sent)


def test_tool_schema_titles_are_dropped_as_the_toolkit_drops_them() -> None:
    """AgentScope's toolkit drops every `title` of a tool's parameters (the top, properties,
    items, additionalProperties, $defs, nested), never a property named `title`, before it sends
    and counts the schema (tau2's tools are titled so); the lab counts and sends the same."""
    import dataclasses

    from ctxlab.core.messages.tools import ToolSchema
    from ctxlab.presets.agentscope.strategy import AgentScopeStrategy
    from ctxlab.texts import agentscope_texts
    from tests.parity.workloads import retrieval_loop

    titled = {
        "title": "parameters",
        "type": "object",
        "properties": {
            "query": {"title": "Query", "type": "string"},
            "title": {"title": "Title", "type": "array", "items": {"title": "Item", "type": "string"}},
            "extra": {"type": "object", "additionalProperties": {"title": "Value", "type": "integer"}},
        },
        "$defs": {"Page": {"title": "Page", "type": "object", "properties": {"n": {"title": "N"}}}},
    }
    bare = {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "title": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "$defs": {"Page": {"type": "object", "properties": {"n": {}}}},
    }
    script = retrieval_loop([3000, 3000, 2000, 500], turns=2)
    tool = ToolSchema.of("retrieve", "Retrieve passages.", titled)
    ours, theirs = compare(dataclasses.replace(script, tools=(tool,)), ParityConfig(context_size=4000))
    assert ours.compressions
    (sent,) = AgentScopeStrategy(texts=agentscope_texts()).tools((tool,))
    assert json.loads(sent.parameters) == bare
    untitled, _ = compare(dataclasses.replace(script, tools=(sent,)), ParityConfig(context_size=4000))
    assert untitled.input_tokens() == theirs.input_tokens()


def test_an_empty_answer_leaves_an_empty_message_that_is_never_sent() -> None:
    """An answer of no text and no call (most imported transcripts end a turn so): the OpenAI
    chat model makes no block of it, and the agent saves the response, which carries usage, as
    the reply's message with no blocks, where the reply has none yet; its formatter sends none of
    it. The lab keeps the same empty message (seen in the contexts compared), so it is split and
    compressed as AgentScope's."""
    import dataclasses

    from tests.parity.workloads import retrieval_loop

    base = retrieval_loop([300, 400], turns=2)
    silent = dataclasses.replace(base.turns[0], rounds=(), final="")
    script = dataclasses.replace(base, turns=(silent, base.turns[1], silent))
    quiet = ParityConfig(context_size=100_000, injection=InjectionConfig(inject_runtime_state=False))
    ours, theirs = compare(script, quiet)
    assert [m.role for m in theirs.final_messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert theirs.final_messages[1].blocks == () and theirs.final_messages[-1].blocks == ()
    assert [w["role"] for w in theirs.calls[1].sent] == ["system", "user", "user"]
    assert _plain(ours.calls[1].sent) == _plain(theirs.calls[1].sent)
    ours, _ = compare(script, dataclasses.replace(quiet, context_size=300))
    assert ours.compressions
