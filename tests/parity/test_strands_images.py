"""Images through the strands presets against a real strands `Agent` (strands-agents 1.62.0): a
user's image and a tool's images as the OpenAI provider sends them, cut on overflow, and in a
summary request (ST29); the images strands does not take as the lab sends them (ST30)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

from strands.models.openai import OpenAIModel

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script
from ctxlab.presets.strands.images import sent_images
from ctxlab.texts.strands import strands_texts
from tests.parity.strands_driver import StrandsConfig, StrandsTrace, takes
from tests.parity.test_strands_parity import compare, kinds
from tests.parity.workloads import retrieval_loop as loop

PNG = base64.b64encode(bytes(range(40))).decode("ascii")
NOTICE = strands_texts().image_notice


def png(source: str = PNG) -> DataBlock:
    return DataBlock(media_type="image/png", source=source, kind="base64")


def with_results(script: Script, *results: tuple[Part, ...]) -> Script:
    """`script` with its first calls' results replaced by `results`, in order."""
    rounds = list(script.turns[0].rounds)
    for index, result in enumerate(results):
        (call,) = rounds[index].calls
        rounds[index] = replace(rounds[index], calls=(replace(call, result=result),))
    return replace(script, turns=(replace(script.turns[0], rounds=tuple(rounds)), *script.turns[1:]))


def requests(trace: StrandsTrace, kind: str = "reasoning") -> list[list[dict[str, object]]]:
    return [json.loads(c.messages)["messages"] for c in trace.calls if c.kind == kind]


def test_a_result_s_images_follow_its_tool_message_behind_the_provider_s_notice() -> None:
    text = TextBlock(text="A figure of the passages.")
    script = with_results(loop([100] * 3), (text, png(), text, png()), (png(),))
    ours, _ = compare(script, StrandsConfig(window=64_000))
    last = requests(ours)[-1]
    tools = [m for m in last if m["role"] == "tool"]
    assert tools[0]["content"] == [
        {"type": "text", "text": t}
        for t in ("A figure of the passages.", "A figure of the passages.", NOTICE)
    ]
    assert tools[1]["content"] == [{"type": "text", "text": NOTICE}]
    images = [m for m in last if m["role"] == "user" and isinstance(m["content"], list)]
    assert [len(m["content"]) for m in images] == [2, 1]  # type: ignore[arg-type]


def test_a_user_s_image_is_sent_in_its_prompt_encoded_anew() -> None:
    script = loop([100] * 2)
    prompt = (TextBlock(text="What does this show?"), png(f"{PNG[:8]}\n{PNG[8:]}"))
    script = replace(script, turns=(replace(script.turns[0], user=prompt),))
    ours, _ = compare(script, StrandsConfig(window=64_000))
    first = requests(ours)[0][1]
    assert first["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PNG}"  # type: ignore[index]


def test_on_overflow_a_result_s_image_becomes_its_size_and_its_texts_are_joined() -> None:
    text = TextBlock(text="A figure.")
    script = with_results(loop([100] * 6), (text, png(), text))
    ours, _ = compare(script, StrandsConfig(window=2_200))
    assert "f" in kinds(ours)
    cut = f"A figure.\n[image: png, {len(base64.b64decode(PNG))} bytes]\nA figure."
    assert any(m.get("content") == cut for r in requests(ours) for m in r)


def test_a_summary_request_sends_a_result_s_images_as_the_provider_does() -> None:
    script = with_results(loop([1000] * 8), (png(),))
    ours, _ = compare(script, StrandsConfig(manager="summary", window=3_000, preserve_recent_messages=2))
    summaries = requests(ours, "summary")
    assert summaries and any(m.get("content") == [{"type": "text", "text": NOTICE}] for m in summaries[0])


def test_a_context_without_images_is_sent_as_stored() -> None:
    stored = (
        Message(role="user", blocks=(ToolResultBlock(id="c", name="t", output=(TextBlock(text="a"),)),)),
    )
    assert sent_images(stored, NOTICE) is stored


def test_deviation_images_strands_does_not_take() -> None:
    """ST30: a WebP image is sent by strands' provider as `application/octet-stream` on Python 3.11
    (its `mimetypes` has no `.webp`), an image given by URL is no source strands' image block
    takes; the lab sends both as the stored image. The driver gives strands neither."""
    block = {"image": {"format": "webp", "source": {"bytes": b"RIFF"}}}
    sent = OpenAIModel.format_request_message_content(block)  # type: ignore[arg-type]
    webp = DataBlock(media_type="image/webp", source="UklGRg==", kind="base64")
    lab = to_openai([Message(role="user", blocks=(webp,))])[0]["content"][0]
    assert (
        sent["image_url"]["url"].startswith("data:application/octet-stream;")
        or sent["image_url"]["url"] == (lab["image_url"]["url"])
    )
    assert not takes(webp)
    assert not takes(DataBlock(media_type="image/png", source="https://example.com/a.png"))
    assert takes(png())
