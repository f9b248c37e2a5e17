"""The byte estimator equals agentscope 2.0.11's `count_tokens`, and counting is additive."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import (
    DataBlock,
    HintBlock,
    Tally,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    sum_tallies,
)
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tokens import AgentScopeEstimator, bytes_to_tokens
from ctxlab.core.messages.tools import ToolSchema, tools_bytes, tools_json
from tests.parity.bridge import as_msg, as_tools
from tests.strategies import messages, tool_lists

ESTIMATOR = AgentScopeEstimator()


def agentscope_count(msgs: list[Message], tools: tuple[ToolSchema, ...]) -> int:
    from agentscope.model import ChatModelBase

    as_tools_list = as_tools(tools) or None
    coro = ChatModelBase.count_tokens(None, [as_msg(m) for m in msgs], as_tools_list)  # type: ignore[arg-type]
    return asyncio.run(coro)


@given(st.lists(messages, max_size=6), tool_lists)
def test_estimator_equals_agentscope(msgs: list[Message], tools: tuple[ToolSchema, ...]) -> None:
    assert ESTIMATOR.count(msgs, tools) == agentscope_count(msgs, tools)


@given(st.lists(messages, max_size=6), tool_lists)
def test_count_is_total_of_measured_blocks(msgs: list[Message], tools: tuple[ToolSchema, ...]) -> None:
    blocks = [b for m in msgs for b in m.blocks]
    assert ESTIMATOR.count(msgs, tools) == ESTIMATOR.total(sum_tallies(blocks), tools)


@given(st.lists(messages, max_size=6))
def test_running_total_after_append_matches_recount(msgs: list[Message]) -> None:
    running = sum_tallies([])
    for i, message in enumerate(msgs):
        running = running + message.tally
        assert ESTIMATOR.total(running, ()) == ESTIMATOR.count(msgs[: i + 1], ())


@given(st.integers(0, 10**6), st.integers(0, 50), st.integers(0, 4), st.integers(0, 3), tool_lists)
def test_the_estimator_never_counts_more_for_a_smaller_tally(
    nbytes: int, ndata: int, fewer_bytes: int, fewer_data: int, tools: tuple[ToolSchema, ...]
) -> None:
    counter = AgentScopeEstimator()
    smaller = Tally(max(nbytes - fewer_bytes, 0), max(ndata - fewer_data, 0))
    assert counter.total(smaller, tools) <= counter.total(Tally(nbytes, ndata), tools)


def test_rounding_is_once_on_the_concatenation() -> None:
    # 2 + 2 bytes: each alone rounds to 1 token (sum 2); together 4 bytes = 1 token.
    a, b = text_message("user", "ab"), text_message("user", "cd")
    assert ESTIMATOR.count([a], ()) + ESTIMATOR.count([b], ()) == 2
    assert ESTIMATOR.count([a, b], ()) == 1


def test_cjk_costs_three_bytes_per_character() -> None:
    assert ESTIMATOR.count([text_message("user", "中文字")], ()) == bytes_to_tokens(9) == 2


def test_data_blocks_cost_2000_anywhere() -> None:
    image = DataBlock(media_type="image/png", source="https://x/a.png")
    audio = DataBlock(media_type="audio/mpeg", source="aGk=", kind="base64")
    message = Message(
        role="assistant",
        blocks=(
            image,
            HintBlock(hint=(audio,)),
            ToolResultBlock(id="c", name="t", output=(TextBlock(text="abcd"), image)),
        ),
    )
    assert ESTIMATOR.count([message], ()) == 3 * 2000 + 1


def test_names_and_ids_are_not_counted() -> None:
    call = ToolCallBlock(id="a-very-long-call-id", name="a_long_tool_name", input="{}")
    assert ESTIMATOR.count([Message(role="assistant", blocks=(call,), name="agent")], ()) == 1


def test_tool_list_is_one_json_piece() -> None:
    tools = (ToolSchema.of("retrieve", "Retrieve documents.", {"type": "object"}),)
    expected = (
        '[{"type": "function", "function": {"name": "retrieve", "description": '
        '"Retrieve documents.", "parameters": {"type": "object"}}}]'
    )
    assert tools_json(tools) == expected
    assert tools_bytes(tools) == len(expected)
    assert tools_bytes(()) == 0
