"""Tool-result truncation equals agentscope 2.0.11: `_split_tool_result_for_compression` on its
own, and the whole acting path (accumulation, split, offload, reminder) through a real reply."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.toolresult import (
    attach_reminder,
    merge_text_parts,
    parts_tokens,
    split_tool_result,
    truncation_reminder,
)
from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.texts import agentscope_texts
from tests.parity.agent import (
    RecordingOffloader,
    minimal_agent,
    normalized,
    normalized_parts,
    replying_agent,
    run,
    scripted_tool,
)
from tests.parity.bridge import as_block, as_part
from tests.strategies import ALPHABET

ESTIMATOR = AgentScopeEstimator()

long_texts = st.one_of(
    st.text(alphabet=ALPHABET, max_size=40),
    st.builds(lambda s, n: s * n, st.text(alphabet=ALPHABET, min_size=1, max_size=8), st.integers(1, 120)),
)
output_parts: st.SearchStrategy[Part] = st.one_of(
    st.builds(TextBlock, text=long_texts),
    st.builds(
        DataBlock,
        media_type=st.sampled_from(["image/png", "audio/mpeg"]),
        source=st.sampled_from(["https://example.com/a.png", "aGVsbG8="]),
        kind=st.just("url"),
    ),
)


@st.composite
def outputs_and_limits(draw: st.DrawFn, merged: bool = False) -> tuple[tuple[Part, ...], int]:
    """An output and a limit near something that matters: a prefix's count, the total, zero."""
    parts = tuple(draw(st.lists(output_parts, min_size=1, max_size=5)))
    if merged:
        parts = merge_text_parts(parts)
    counts = [parts_tokens(parts[:i], ESTIMATOR) for i in range(len(parts) + 1)]
    near = st.sampled_from(counts).flatmap(lambda c: st.integers(c - 2, c + 2))
    limit = draw(st.one_of(near, st.integers(-3, counts[-1] + 3)))
    return parts, limit


@functools.cache
def split_agent() -> Any:
    return minimal_agent()


def agentscope_split(parts: tuple[Part, ...], limit: int) -> tuple[list[Any], list[Any] | None]:
    agent = split_agent()
    agent.context_config.tool_result_limit = limit
    block = as_block(ToolResultBlock(id="c1", name="read", output=parts))
    kept, offloaded = run(agent._split_tool_result_for_compression(block))
    return normalized(kept.output), None if offloaded is None else normalized(offloaded.output)


def ours(parts: tuple[Part, ...], limit: int) -> tuple[list[Any], list[Any] | None]:
    split = split_tool_result(ToolResultBlock(id="c1", name="read", output=parts), limit, ESTIMATOR)
    if split is None:
        return normalized_parts(parts), None
    return normalized_parts(split.kept.output), normalized_parts(split.offloaded.output)


@given(outputs_and_limits())
def test_split_equals_agentscope(case: tuple[tuple[Part, ...], int]) -> None:
    parts, limit = case
    assert ours(parts, limit) == agentscope_split(parts, limit)


@given(outputs_and_limits(merged=True))
def test_split_of_accumulated_outputs_equals_agentscope(case: tuple[tuple[Part, ...], int]) -> None:
    parts, limit = case
    assert ours(parts, limit) == agentscope_split(parts, limit)


def test_quirk_a_prefix_tied_with_the_limit_does_not_fit_so_an_image_goes() -> None:
    image, text = (
        DataBlock(media_type="image/png", source="aGVsbG8=", kind="base64"),
        TextBlock(text="x" * 40),
    )
    assert (
        ours((image, text), 2000)
        == agentscope_split((image, text), 2000)
        == ([], normalized_parts((image, text)))
    )


def test_quirk_index_0_is_never_tested_so_a_negative_limit_still_cuts_the_first_block() -> None:
    parts = (TextBlock(text="a" * 40), DataBlock(media_type="image/png", source="https://example.com/a.png"))
    assert ours(parts, -4) == agentscope_split(parts, -4) == ([], normalized_parts(parts))


def test_quirk_characters_not_bytes() -> None:
    parts = (TextBlock(text="中" * 100 + "a" * 100),)
    kept, _ = agentscope_split(parts, 50)
    assert kept == [{"type": "text", "text": "中" * 100}]  # 300 bytes: 75 tokens for a limit of 50
    assert ours(parts, 50) == agentscope_split(parts, 50)


def test_deviation_empty_output_over_a_negative_limit_is_kept_whole() -> None:
    with pytest.raises(IndexError):
        agentscope_split((), -1)
    assert split_tool_result(ToolResultBlock(id="c", name="t", output=()), -1, ESTIMATOR) is None


# ---- the whole acting path through a real reply ---------------------------------------------------


def run_tool_reply(content: list[Any], state: str, limit: int, offloader: Any) -> Any:
    from agentscope.message import TextBlock as AsText
    from agentscope.message import ToolCallBlock, UserMsg

    steps = [[ToolCallBlock(id="c1", name="read", input="{}")], [AsText(text="done")]]
    tools = [scripted_tool("read", content, state)]
    agent = replying_agent(steps, tools, offloader, tool_result_limit=limit, max_image_num=100)
    run(agent.reply(UserMsg(name="user", content="go")))
    return next(b for m in agent.state.context for b in m.content if b.type == "tool_result")


def expected_saved(parts: tuple[Part, ...], limit: int, state: str, path: str | None) -> tuple[Any, Any]:
    result = ToolResultBlock(id="c1", name="read", output=merge_text_parts(parts), state=state)  # type: ignore[arg-type]
    split = split_tool_result(result, limit, ESTIMATOR)
    if split is None:
        return normalized_parts(result.output), None
    kept = attach_reminder(split.kept, truncation_reminder(agentscope_texts(), path))
    return normalized_parts(kept.output), normalized_parts(split.offloaded.output)


reply_parts = st.lists(
    st.one_of(
        st.builds(TextBlock, text=long_texts),
        st.builds(
            DataBlock, media_type=st.just("image/png"), source=st.just("aGVsbG8="), kind=st.just("base64")
        ),
    ),
    min_size=1,
    max_size=4,
).map(tuple)


@given(reply_parts, st.integers(-2, 2100), st.sampled_from(["success", "error"]), st.booleans())
def test_acting_path_equals_agentscope(
    parts: tuple[Part, ...], limit: int, state: str, with_offloader: bool
) -> None:
    offloader = RecordingOffloader() if with_offloader else None
    saved = run_tool_reply([as_part(p) for p in parts], state, limit, offloader)
    path = "offload/tool-1.json" if offloader is not None else None
    kept, offloaded = expected_saved(parts, limit, state, path)
    assert normalized(saved.output) == kept
    assert saved.state == state
    if offloader is not None:
        assert [normalized(r.output) for r in offloader.tool_results] == (
            [] if offloaded is None else [offloaded]
        )


def test_quirk_reminder_exceeds_the_limit() -> None:
    from agentscope.message import TextBlock as AsText

    saved = run_tool_reply([AsText(text="x" * 12000)], "success", 1000, None)
    text = saved.output[-1].text
    assert text.startswith("x" * 4000 + "\n<<<TRUNCATED>>>") and "x" * 4001 not in text
    assert ESTIMATOR.text_tokens(text) > 1000


def test_quirk_a_failed_local_tool_is_truncated_too() -> None:
    from agentscope.message import TextBlock as AsText

    saved = run_tool_reply([AsText(text="E" * 400)], "error", 20, None)
    assert saved.state == "error"
    assert saved.output[0].text.startswith("E" * 80 + "\n<<<TRUNCATED>>>")


def test_quirk_only_the_cut_off_part_is_offloaded() -> None:
    from agentscope.message import TextBlock as AsText

    offloader = RecordingOffloader()
    saved = run_tool_reply([AsText(text="a" * 200), AsText(text="b" * 200)], "success", 20, offloader)
    assert [normalized(r.output) for r in offloader.tool_results] == [
        [{"type": "text", "text": "a" * 120 + "b" * 200}]
    ]
    assert saved.output[0].text.startswith("a" * 80 + "\n<<<TRUNCATED>>>")
    assert "You can refer to the file in 'offload/" in saved.output[0].text


def test_quirk_the_float_share_can_keep_one_character_less() -> None:
    parts = (TextBlock(text="x" * 88),)  # 22 tokens; 15/22*88 is 60 exactly, 59.99... as a float
    assert (
        ours(parts, 15)
        == agentscope_split(parts, 15)
        == ([{"type": "text", "text": "x" * 59}], [{"type": "text", "text": "x" * 29}])
    )
