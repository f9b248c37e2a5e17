"""The byte estimator equals agentscope 2.0.11's `count_tokens`, and counting is additive."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

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
from ctxlab.core.messages.resumable import forget
from ctxlab.core.messages.tokens import AgentScopeEstimator, bytes_to_tokens, measure_edit, measure_since
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


def _plain_size(msgs: Sequence[Message]) -> Tally:
    """The summed size of `msgs`, message by message, with nothing kept."""
    total = Tally(0, 0)
    for message in msgs:
        total = total + ESTIMATOR.measure_message(message)
    return total


EDITS = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 80), st.integers(0, 2), st.booleans()), max_size=12
)
"""Steps of a history that grows (`0`), is cut short (`1`), or is sent as a window that cut its
front at `k` (`2`: messages before the window replaced by `heads` new ones, a kept system
message in front or not) or as a copy edited at `k` (`3`)."""


@given(st.lists(messages, min_size=1, max_size=6), EDITS)
def test_an_edit_of_a_long_history_is_summed_as_a_plain_walk_whatever_was_summed_before(
    pool: list[Message], plan: list[tuple[int, int, int, bool]]
) -> None:
    """`measure_since` and `measure_edit` over histories longer than what is summed directly,
    along a history that grows and is cut, its windows and edited copies."""
    history = tuple(Message(role=m.role, blocks=m.blocks) for m in pool * (40 // len(pool) + 1))
    system = text_message("system", "rules")
    for kind, k, heads, keep_system in plan:
        if kind == 0:
            history = (*history, Message(role="user", blocks=pool[k % len(pool)].blocks))
        elif kind == 1:
            history = history[: max(len(history) - k % 8, 1)]
        at = k % (len(history) + 1)
        assert measure_since(ESTIMATOR, history, at) == _plain_size(history[at:])
        if kind == 2:
            fresh = tuple(Message(role="user", blocks=pool[(k + i) % len(pool)].blocks) for i in range(heads))
            edited = (*((system,) if keep_system else ()), *fresh, *history[at:])
        else:
            edited = (*history[:at], text_message("user", "edited"), *history[at + 1 :])
        assert measure_edit(ESTIMATOR, edited, history) == _plain_size(edited)
    forget()
