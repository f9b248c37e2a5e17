"""A user's images through the pydantic-ai presets against a real pydantic-ai `Agent`
(pydantic-ai-slim 2.62.0, pydantic-ai-harness 0.62.0): a prompt's images as the OpenAI chat model
maps an `ImageUrl` or a `BinaryContent` of it, and a prompt of several items as the harness counts
and summarizes it (CHECKLIST PA28)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import pytest

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.world.script import Script
from ctxlab.presets.pydantic_ai.files import sent_files
from ctxlab.presets.pydantic_ai.returns import FileTexts
from tests.parity.pa_driver import PAConfig
from tests.parity.test_pydantic_ai_parity import LINKED, PIXEL, _looking, compare

WRAPPED = DataBlock(media_type="image/png", source="iVBO\nRw0KGgo=", kind="base64")
JPEG = DataBlock(media_type="image/jpeg", source=base64.b64encode(b"x" * 50).decode("ascii"), kind="base64")
PROMPTS: dict[str, tuple[Part, ...]] = {
    "text and image": (TextBlock(text="What is it?"), PIXEL),
    "texts around an image": (TextBlock(text="One."), PIXEL, TextBlock(text="Two.")),
    "by URL": (LINKED, TextBlock(text="See.")),
    "image alone": (JPEG,),
    "base64 with a line break": (TextBlock(text="This."), WRAPPED),
}
CONFIGS = (
    PAConfig(capability="window", settings={"max_messages": 4, "keep_messages": 2}),
    PAConfig(capability="clear", settings={"max_messages": 3, "keep_pairs": 1}),
    PAConfig(capability="summary", settings={"max_messages": 3, "keep_messages": 2}),
    PAConfig(capability="summary", settings={"max_tokens": 60, "keep_tokens": 20}),
)


def prompted(user: tuple[Part, ...]) -> Script:
    script = _looking()
    return replace(script, turns=tuple(replace(t, user=user) for t in script.turns))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.capability}-{sorted(c.settings)[0]}")
@pytest.mark.parametrize("name", list(PROMPTS))
def test_a_user_s_images_are_sent_counted_and_summarized_as_pydantic_ai_does(
    name: str, config: PAConfig
) -> None:
    """The prompt's images in its user message (a URL as given, base64 as its bytes encoded anew),
    left out of every count and summary transcript; the same requests call for call."""
    _, theirs = compare(prompted(PROMPTS[name]), config)
    first = json.loads(theirs.calls[0].messages[1])
    assert first["role"] == "user" and any(p["type"] == "image_url" for p in first["content"])


def test_a_summary_shows_a_prompt_of_several_items_with_a_space_between_its_texts() -> None:
    """The harness counts a prompt's texts joined with nothing and its summarizer reads them
    joined with a space; the lab's summary request shows them so."""
    ours, _ = compare(prompted(PROMPTS["texts around an image"]), CONFIGS[2])
    summaries = [c for c in ours.calls if c.kind == "summary"]
    assert summaries and any("One. Two." in m for m in summaries[0].messages)


def test_a_user_s_image_is_encoded_anew_and_a_message_without_data_is_sent_as_stored() -> None:
    texts = FileTexts("See file {id}.", "<f {file_id}>", "</f>")
    stored = (text_message("user", "Hi."), Message(role="user", blocks=(TextBlock(text="This."), WRAPPED)))
    sent = sent_files(stored, texts)
    assert sent[0] is stored[0]
    assert sent[1].blocks[1] == DataBlock(media_type="image/png", source=PIXEL.source, kind="base64")
    plain = (text_message("user", "Hi."),)
    assert sent_files(plain, texts) is plain
