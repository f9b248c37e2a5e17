"""Free-text summary requests: the span as text from its OpenAI view, in one user message."""

from __future__ import annotations

from ctxlab.core.compaction.freetext import clip, summary_request, transcript
from ctxlab.core.messages.blocks import (
    DataBlock,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.message import Message, text_message


def test_the_transcript_follows_the_openai_view() -> None:
    reply = Message(
        role="assistant",
        blocks=(
            ThinkingBlock(thinking="hidden"),
            TextBlock(text="Looking."),
            ToolCallBlock(id="a", name="grep", input='{"pattern": "x"}'),
            ToolCallBlock(id="b", name="Read", input='{"file_path": "f"}'),
            ToolResultBlock(id="a", name="grep", output=(TextBlock(text="f:1:x"),)),
            ToolResultBlock(
                id="b",
                name="Read",
                output=(TextBlock(text="body"), DataBlock(media_type="image/png", source="u")),
            ),
            HintBlock(hint="<reminder>"),
        ),
    )
    text = transcript([text_message("user", "Find x"), reply])
    assert text.split("\n\n") == [
        "user: Find x",
        'assistant: Looking.\ncall grep a: {"pattern": "x"}\ncall Read b: {"file_path": "f"}',
        "tool result a: f:1:x",
        "tool result b: body",
        "user: [image]",
        "user: <reminder>",
    ]
    assert "hidden" not in text


def test_each_event_is_cut_to_the_limit() -> None:
    long = text_message("user", "x" * 50)
    assert transcript([long], max_event_chars=10) == "user: xxxx [... 46 characters left out]"
    assert clip("abc", 3) == "abc"


def test_the_request_is_one_user_message_filled_in_one_pass() -> None:
    (message,) = summary_request(
        "A {previous_summary} B {conversation}",
        [text_message("user", "{previous_summary}")],
        previous_summary="S",
    )
    assert message.role == "user"
    assert message.blocks == (TextBlock(text="A S B user: {previous_summary}"),)
