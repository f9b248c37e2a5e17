"""Real BPE counters follow the same additive protocol as the estimator."""

from __future__ import annotations

import pytest

from ctxlab.core.messages.blocks import Block, DataBlock, Tally, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.tokenizers import BpeCounter


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_counts_text_tools_and_data(encoding: str) -> None:
    counter = BpeCounter(encoding)  # type: ignore[arg-type]
    msgs = [
        text_message("user", "hello world"),
        Message(
            role="assistant",
            blocks=(
                ToolResultBlock(
                    id="a",
                    name="t",
                    output=(TextBlock(text="hello world"), DataBlock(media_type="image/png", source="u")),
                ),
            ),
        ),
    ]
    tools = (ToolSchema.of("f", "d", {"type": "object"}),)
    hello = counter.text_tokens("hello world")
    assert hello == 2
    assert counter.count(msgs, ()) == 2 * hello + 2000
    assert counter.count(msgs, tools) > counter.count(msgs, ())
    blocks = [b for m in msgs for b in m.blocks]
    assert counter.total(sum_tallies_of(counter, blocks), ()) == counter.count(msgs, ())


def sum_tallies_of(counter: BpeCounter, blocks: list[Block]) -> Tally:
    total = Tally(0, 0)
    for block in blocks:
        total = total + counter.measure(block)
    return total


def test_encodings_differ_on_chinese() -> None:
    # Measured: 180 CJK characters (540 bytes; the byte estimate says 135) are 140 o200k tokens
    # and 200 cl100k tokens, so the byte estimate undercounts Chinese for both encodings.
    text = "上下文工程让智能体在长任务中不迷路。" * 10
    assert BpeCounter("o200k_base").text_tokens(text) == 140
    assert BpeCounter("cl100k_base").text_tokens(text) == 200
