"""The OpenHands presets count a request as the SDK does, also where LiteLLM's renderer of tool
schemas raises (an array without `items`): the SDK counts such a request as 0 tokens, and the
replay goes on, where it used to fail the run with `KeyError: 'items'`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.views import to_openai
from ctxlab.presets.openhands.tokens import sdk_token_count
from ctxlab.presets.openhands.view import sdk_request
from tests.workloads.importing import lines, run_cli

REQUEST = [{"role": "user", "content": "Plan the page."}]


def _todos(items: object) -> ToolSchema:
    array = {"type": "array"} if items is None else {"type": "array", "items": items}
    return ToolSchema.of("write_todos", "", {"type": "object", "properties": {"todos": array}})


@pytest.mark.parametrize("items", [None, [{"type": "string"}]])
def test_a_schema_litellm_cannot_render_counts_the_request_as_0(items: object) -> None:
    assert sdk_token_count(REQUEST, (_todos(items),)) == 0


def test_a_schema_litellm_renders_is_counted() -> None:
    assert sdk_token_count(REQUEST, (_todos({"type": "string"}),)) > sdk_token_count(REQUEST, ()) > 0


@pytest.mark.parametrize("preset", ["openhands", "openhands-hybrid"])
def test_a_tools_file_with_an_array_without_items_replays(tmp_path: Path, preset: str) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "write_todos", "arguments": '{"todos": []}'}}
    messages = [
        *REQUEST,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "OK"},
        {"role": "assistant", "content": "Done."},
    ]
    source, tools = tmp_path / "session.jsonl", tmp_path / "tools.json"
    source.write_text("\n".join(lines(*messages)), encoding="utf-8")
    tools.write_text(json.dumps([_todos(None).as_openai()]), encoding="utf-8")
    code, _, err = run_cli(
        "replay", str(source), "--tools", str(tools), "--preset", preset, "--out", str(tmp_path / "out"),
        "--quiet", "--no-plots",
    )  # fmt: skip
    assert code == 0, err
    assert ",ok," in next((tmp_path / "out").glob("*/runs.csv")).read_text(encoding="utf-8")


def test_images_are_neither_sent_nor_counted_as_the_sdk_does_for_a_model_without_vision() -> None:
    """The request the presets send and count (CHECKLIST OpenHands 24) holds no image: a user
    message of an image alone is sent empty, a result of images alone keeps its tool message
    with no content, and the count is the one of the same request without the images. Parity:
    `tests/parity/test_openhands_images.py`."""
    shot = DataBlock(media_type="image/png", source="data:image/png;base64,iVBORw0KGgo=")
    call = ToolCallBlock(id="c1", name="screenshot", input="{}")

    def context(*image: DataBlock) -> tuple[Message, ...]:
        return (
            Message(role="user", blocks=(TextBlock(text="Plan the page."), *image), id="u1"),
            Message(
                role="assistant", blocks=(call, ToolResultBlock(id="c1", name="screenshot", output=image))
            ),
            Message(role="user", blocks=image or (TextBlock(text=""),), id="u2"),
        )

    sent = to_openai(sdk_request(context(shot)))
    assert not any("image_url" in str(m.get("content")) for m in sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": ""}
    assert sdk_token_count(sent, ()) == sdk_token_count(to_openai(sdk_request(context())), ()) > 0
