"""The OpenHands presets count a request as the SDK does, also where LiteLLM's renderer of tool
schemas raises (an array without `items`): the SDK counts such a request as 0 tokens, and the
replay goes on, where it used to fail the run with `KeyError: 'items'`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.presets.openhands.tokens import sdk_token_count
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


def test_an_image_part_counts_0_in_the_sdk_count_declared_as_24() -> None:
    """The lab sends the image (as to a vision model) but gives it no tokens in the SDK's count
    (CHECKLIST OpenHands 24): the request counts as its text alone."""
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    with_image = [{"role": "user", "content": [{"type": "text", "text": "Plan the page."}, image]}]
    text_only = [{"role": "user", "content": [{"type": "text", "text": "Plan the page."}]}]
    assert sdk_token_count(with_image, ()) == sdk_token_count(text_only, ()) > 0
