"""One compression's pure steps: trigger, plan, overflow retry, apply and the usage carrier."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.compress import (
    CompressionInput,
    EmptyContextError,
    ReplyMark,
    apply_compression,
    check_trigger,
    new_summary,
    overflow_retry_request,
    plan_compression,
    reserved_read_paths,
    unfinished_call_ids,
)
from ctxlab.core.agentscope.summary import (
    StructuredOutputError,
    read_summary_fields,
    summary_tool,
    with_instruction,
    with_offload_reminder,
)
from ctxlab.core.messages.blocks import Block, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tokens import AgentScopeEstimator

EST = AgentScopeEstimator()
SCHEMA = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
TOOL = summary_tool(json.dumps(SCHEMA), "Summarise.")
USER = text_message("user", "u" * 400, id="u1")


def reply(*sizes: int, rid: str = "r1") -> Message:
    blocks = []
    for n, size in enumerate(sizes):
        blocks += [
            ToolCallBlock(id=f"{rid}c{n}", name="t", input="{}"),
            ToolResultBlock(id=f"{rid}c{n}", name="t", output=(TextBlock(text="r" * size),)),
        ]
    return Message(role="assistant", id=rid, name="agent", blocks=tuple(blocks))


def inp(context: tuple[Message, ...], size: int = 1000, summary: str = "") -> CompressionInput:
    return CompressionInput(
        system_prompt="s" * 40,
        summary=summary,
        context=context,
        tools=(),
        context_size=size,
        trigger_ratio=0.8,
        reserve_ratio=0.1,
    )


def test_trigger_is_at_or_above_the_threshold() -> None:
    below = inp((text_message("user", "u" * (4 * 789)),))  # 10 + 789 = 799 < 800
    at = inp((text_message("user", "u" * (4 * 790)),))
    assert not check_trigger(below, EST).triggered
    assert check_trigger(at, EST).triggered
    assert check_trigger(at, EST).threshold == 800.0


def test_empty_context_over_the_trigger_is_an_error_naming_the_float_threshold() -> None:
    with pytest.raises(
        EmptyContextError,
        match=r"The system prompt and the compression summary exceed\(s\) the "
        r"compression threshold \(800.0 tokens\)",
    ):
        plan_compression(inp((), summary="s"), EST, prompt="P", schema_tool=TOOL)


def test_plan_orders_the_summary_request_and_flags_overflow() -> None:
    plan = plan_compression(inp((USER, reply(2000)), summary="old"), EST, prompt="PROMPT", schema_tool=TOOL)
    roles = [m.role for m in plan.request.messages]
    assert roles == ["system", "user", "user", "assistant", "user"]  # system, summary, compressed..., prompt
    assert plan.request.messages[-1].blocks == (TextBlock(text="PROMPT"),)
    assert plan.preflight_tokens == EST.count(plan.request.messages, (TOOL,))
    assert not plan.overflow
    big = plan_compression(inp((USER, reply(4000))), EST, prompt="P", schema_tool=TOOL)
    assert big.overflow and big.preflight_tokens > 1000


def test_zero_reserve_retry_when_nothing_would_be_compressed() -> None:
    # Exact tie: the whole request equals the reserve budget (40 tokens), so the message-level scan
    # stops at the first message (>=) and the block-level scan keeps all of it (>): nothing would
    # be compressed, and the split is redone with a budget of 0.
    context = (text_message("user", "u" * 120),)
    tie = CompressionInput(
        system_prompt="s" * 40,
        summary="",
        context=context,
        tools=(),
        context_size=100,
        trigger_ratio=0.5,
        reserve_ratio=0.4,
    )
    plan = plan_compression(tie, EST, prompt="P", schema_tool=TOOL)
    assert plan.zero_reserve_retry
    assert plan.split.compress == context and plan.split.reserve == ()


def test_overflow_retry_drops_the_oldest_compressed_messages_until_below_the_trigger() -> None:
    context = (USER, reply(400, rid="r1"), reply(400, rid="r2"), reply(4000, rid="r3"))
    plan = plan_compression(inp(context, size=2000), EST, prompt="P", schema_tool=TOOL)
    retry = overflow_retry_request(plan, inp(context, size=2000), EST)
    assert EST.count(retry.messages, (TOOL,)) < 2000 * 0.8
    dropped = len(plan.request.messages) - len(retry.messages)
    assert dropped >= 1
    assert retry.messages[0] == plan.request.messages[0]  # the system prompt stays
    assert retry.messages[-1] == plan.request.messages[-1]  # and the prompt


def test_apply_adds_the_usage_carrier_when_the_reply_was_compressed_away() -> None:
    context = (USER, reply(4000))
    plan = plan_compression(inp(context), EST, prompt="P", schema_tool=TOOL)
    assert plan.split.reserve == ()
    mark = ReplyMark(reply_id="r1", has_usage=True, name="agent")
    applied = apply_compression(plan, "S", mark, summary_succeeded=True)
    assert applied.context == (Message(role="assistant", blocks=(), id="r1", name="agent"),)
    # A failed summary still replaces the context, and the reply's usage still needs its carrier.
    failed = apply_compression(plan, "S", mark, summary_succeeded=False)
    assert len(failed.context) == 1
    # At a reply's first iteration (no usage yet) only a successful summary adds the carrier.
    fresh = ReplyMark(reply_id="r2", has_usage=False, name="agent")
    assert apply_compression(plan, "S", fresh, summary_succeeded=False).context == ()
    assert apply_compression(plan, "S", fresh, summary_succeeded=True).context[0].id == "r2"


def test_new_summary_falls_back_to_the_previous_then_the_truncation_text() -> None:
    assert new_summary("new", "old", "T") == "new"
    assert new_summary(None, "old", "T") == "old"
    assert new_summary(None, "", "T") == "T"


def test_offload_reminder_is_added_once() -> None:
    once = with_offload_reminder("S", "R")
    assert with_offload_reminder(once, "R") == "S\nR"
    parts = with_offload_reminder((TextBlock(text="S"),), "R")
    assert with_offload_reminder(parts, "R") == parts


def test_structured_output_is_read_and_checked() -> None:
    good = ToolCallBlock(id="x", name="generate_structured_output", input='{"a": "ok", "b": "extra"}')
    assert read_summary_fields([good], SCHEMA) == {"a": "ok", "b": "extra"}
    for bad, why in [
        ([], "no"),
        ([ToolCallBlock(id="x", name="generate_structured_output", input="{")], "not JSON"),
        ([ToolCallBlock(id="x", name="generate_structured_output", input="[]")], "not a JSON object"),
        ([ToolCallBlock(id="x", name="generate_structured_output", input="{}")], "required"),
        ([ToolCallBlock(id="x", name="generate_structured_output", input='{"a": 1}')], "not a string"),
    ]:
        with pytest.raises(StructuredOutputError, match=why):
            read_summary_fields(bad, SCHEMA)


def test_instruction_joins_the_last_user_message() -> None:
    msgs = (text_message("system", "s"), text_message("user", "p"))
    sent = with_instruction(msgs, "I")
    assert len(sent) == 2 and sent[-1].blocks[-1] == TextBlock(text="I")
    assert with_instruction((text_message("system", "s"),), "I")[-1].role == "user"


def test_read_cache_keeps_only_reserved_read_paths() -> None:
    reserve = (
        Message(
            role="assistant",
            blocks=(
                ToolCallBlock(id="1", name="Read", input='{"file_path": "a.py"}'),
                ToolCallBlock(id="2", name="read", input='{"file_path": "b.py"}'),
                ToolCallBlock(id="3", name="Read", input="{not json"),
            ),
        ),
    )
    assert reserved_read_paths(reserve) == frozenset({"a.py"})


def test_unfinished_calls_are_the_reply_messages_unanswered_calls() -> None:
    running = Message(role="assistant", id="r1", blocks=(ToolCallBlock(id="z", name="t", input="{}"),))
    assert unfinished_call_ids((USER, running), "r1") == frozenset({"z"})
    assert unfinished_call_ids((USER, running), "other") == frozenset()


@given(
    st.lists(st.sampled_from(["call a", "call b", "result a", "result b", "text"]), min_size=20, max_size=60)
)
def test_the_unfinished_calls_of_a_reply_growing_a_block_at_a_time_are_those_without_a_result(
    steps: list[str],
) -> None:
    """A long reply is read where it grew; a call is finished by a result of its id anywhere in
    the reply (one before it too), as when read whole."""
    reply = Message(role="assistant", blocks=(), id="r1")
    for step in steps:
        kind, _, call_id = step.partition(" ")
        block: Block = TextBlock(text="t")
        if kind == "call":
            block = ToolCallBlock(id=call_id, name="t", input="{}")
        elif kind == "result":
            block = ToolResultBlock(id=call_id, name="t", output=())
        reply = reply.appended(block)
        calls = {b.id for b in reply.blocks if isinstance(b, ToolCallBlock)}
        answered = {b.id for b in reply.blocks if isinstance(b, ToolResultBlock)}
        assert unfinished_call_ids((USER, reply), "r1") == frozenset(calls - answered)
