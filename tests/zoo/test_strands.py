"""The strands presets' pieces: the strands message list, the window's trim points and result cuts,
the summary split, the parameters as scenarios write them, and `texts: strands`."""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

import pytest

from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.units import view_units
from ctxlab.presets.entries import entry_params
from ctxlab.presets.registry import ENTRIES, PRESETS
from ctxlab.presets.strands.preset import StrandsSlidingWindowParams, StrandsSummarizingParams
from ctxlab.presets.strands.window import (
    StrandsMessage,
    TrimError,
    cut_result,
    cut_text,
    image_placeholder,
    strands_view,
    summary_split,
    trim_index,
    valid_trim_point,
)
from ctxlab.texts.strands import CTXLAB_STRANDS_TEXTS, strands_texts


def result(call_id: str, text: str = "r") -> ToolResultBlock:
    return ToolResultBlock(id=call_id, name="retrieve", output=(TextBlock(text=text),))


def call(call_id: str) -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name="retrieve", input="{}")


def user(text: str = "u") -> StrandsMessage:
    return StrandsMessage(role="user", tool_use=False, tool_result=False, first=0, end=1)


def use() -> StrandsMessage:
    return StrandsMessage(role="assistant", tool_use=True, tool_result=False, first=0, end=1)


def results() -> StrandsMessage:
    return StrandsMessage(role="user", tool_use=False, tool_result=True, first=0, end=1)


def answer() -> StrandsMessage:
    return StrandsMessage(role="assistant", tool_use=False, tool_result=False, first=0, end=1)


def test_a_batch_of_results_is_one_strands_message() -> None:
    reply = Message(
        role="assistant", blocks=(call("a"), call("b"), result("a"), result("b"), TextBlock(text="done"))
    )
    view = strands_view(view_units((text_message("user", "go"), reply)))
    assert [(m.role, m.tool_use, m.tool_result, m.end - m.first) for m in view] == [
        ("user", False, False, 1),
        ("assistant", True, False, 1),
        ("user", False, True, 2),
        ("assistant", False, False, 1),
    ]


def test_a_long_text_keeps_200_characters_at_each_end_once() -> None:
    text = "a" * 200 + "b" * 50 + "c" * 200
    cut = cut_text(text)
    assert cut == "a" * 200 + "...\n\n... [truncated: 50 chars removed] ...\n\n..." + "c" * 200
    assert cut_text(cut) is None  # already cut
    assert cut_text("x" * 400) is None  # not over 2 x 200


def test_characters_not_bytes_are_counted() -> None:
    cut = cut_text("上" * 401)
    assert cut is not None and "[truncated: 1 chars removed]" in cut


def test_an_image_in_a_result_becomes_its_format_and_size() -> None:
    image = DataBlock(media_type="image/png", source=base64.b64encode(b"12345").decode(), kind="base64")
    assert image_placeholder(image) == "[image: png, 5 bytes]"
    cut = cut_result(ToolResultBlock(id="a", name="shot", output=(image,), state="error"))
    assert (
        cut is not None and cut.output == (TextBlock(text="[image: png, 5 bytes]"),) and cut.state == "error"
    )
    assert cut_result(result("a", "short")) is None


def test_a_window_starts_at_a_prompt_else_at_a_tool_use_with_its_results() -> None:
    conversation = [user(), use(), results(), use(), results(), answer(), user(), answer()]
    assert valid_trim_point(conversation, 2) == 6
    assert trim_index(conversation, 3, overflow=False) == 6
    loop = [user(), use(), results(), use(), results(), use(), results()]
    assert trim_index(loop, 3, overflow=False) == 5  # the fallback: an assistant message first


def test_no_trim_point_is_a_warning_after_a_turn_and_an_error_on_overflow() -> None:
    stuck = [user(), answer(), answer()]
    assert trim_index(stuck, 1, overflow=False) is None
    with pytest.raises(TrimError, match="Unable to trim"):
        trim_index(stuck, 1, overflow=True)


def test_under_the_window_the_trim_starts_at_the_third_message() -> None:
    assert trim_index([user(), answer(), user(), answer()], 40, overflow=True) == 2


def test_window_size_zero_removes_every_message() -> None:
    assert trim_index([user(), answer()], 0, overflow=False) == 2


def test_the_summary_split_moves_past_results_and_keeps_the_recent() -> None:
    conversation = [user(), use(), results(), use(), results(), answer(), user(), answer(), user(), answer()]
    assert summary_split(conversation, 0.3, 2) == 3  # 3 is a tool use followed by its results
    assert summary_split(conversation, 0.2, 2) == 3  # 2 holds results: moved forward
    with pytest.raises(TrimError, match="insufficient"):
        summary_split(conversation, 0.3, 10)


def entry(name: str, **fields: Any) -> Any:
    return ENTRIES[name].model_validate({"preset": name, **fields})


def test_the_defaults_are_strands_own() -> None:
    assert PRESETS["strands-sliding-window"].params() == StrandsSlidingWindowParams(
        window_size=40, should_truncate_results=True, per_turn=False
    )
    assert dataclasses.asdict(PRESETS["strands-summarizing"].params()) == {
        "summary_ratio": 0.3,
        "preserve_recent_messages": 10,
        "summarization_system_prompt": None,
    }


def test_per_turn_is_a_flag_or_a_count_as_strands_takes_it() -> None:
    assert entry_params(entry("strands-sliding-window", per_turn=True)).per_turn is True
    assert entry_params(entry("strands-sliding-window", per_turn=3)).per_turn == 3
    with pytest.raises(ValueError, match="per_turn"):
        StrandsSlidingWindowParams(per_turn=0)
    with pytest.raises(ValueError, match="window_size"):
        StrandsSlidingWindowParams(window_size=-1)
    assert entry_params(entry("strands-summarizing", summary_ratio=0.5)) == StrandsSummarizingParams(
        summary_ratio=0.5
    )


def test_strands_texts_are_read_from_the_installed_package() -> None:
    from strands.agent.conversation_manager.compression.context_compression import (
        DEFAULT_SUMMARIZATION_PROMPT,
    )

    texts = strands_texts()
    assert texts.summary_system_prompt == DEFAULT_SUMMARIZATION_PROMPT
    assert texts.summary_request.startswith("Please summarize")
    assert texts.image_notice.startswith("Tool successfully returned an image.")
    assert texts != CTXLAB_STRANDS_TEXTS


def test_the_notes_declare_the_images_strands_does_not_take() -> None:
    from ctxlab.presets.strands.preset import NOTES

    assert any("WebP" in note and "URL" in note for note in NOTES)
