"""OpenAI Agents SDK histories (`to_input_list()` as a JSON list, a session's items one a line):
detected from their content without taking an OpenAI chat list or a Responses log, mapped item
for item as a Responses log's input, the missing instructions noted, what is not replayed
counted, and shapes the SDK never writes refused at their line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import FORMATS, import_file, import_lines
from ctxlab.workloads.importers.openai_agents import MUTE_REASONING, NO_INSTRUCTIONS
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, assert_paired, lines

TO_INPUT_LIST = DATA / "openai-agents/to_input_list.json"
SESSION = DATA / "openai-agents/session-items.jsonl"


def _said(text: str) -> dict[str, Any]:
    parts = [{"annotations": [], "text": text, "type": "output_text", "logprobs": []}]
    return {"id": "msg_1", "content": parts, "role": "assistant", "status": "completed", "type": "message"}


def _call(call_id: str, city: str = "Oslo") -> dict[str, Any]:
    arguments = json.dumps({"city": city})
    return {
        "arguments": arguments,
        "call_id": call_id,
        "name": "weather",
        "type": "function_call",
        "id": call_id,
    }


def _output(call_id: str, output: Any = "cold") -> dict[str, Any]:
    return {"call_id": call_id, "output": output, "type": "function_call_output"}


ITEMS: list[dict[str, Any]] = [
    {"content": "Weather in Oslo?", "role": "user"},
    {"id": "rs_1", "summary": [{"text": "Ask the tool.", "type": "summary_text"}], "type": "reasoning"},
    _call("c1"),
    _output("c1"),
    _said("Cold."),
]


def _imported(value: Any, fmt: str | None = None) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(lines(value), "history.json", fmt)
    return got.format, list(got.messages), got.warnings


def _refusal(text: list[str]) -> str:
    with pytest.raises(TraceError) as caught:
        import_lines(text, "history.json")
    return str(caught.value)


@pytest.mark.parametrize("path", [TO_INPUT_LIST, SESSION])
def test_the_samples_are_paired_and_say_the_replay_has_no_system_prompt(path: Path) -> None:
    imported = import_file(path)
    assert imported.format == "openai-agents"
    assert imported.messages[0]["role"] == "user"
    assert NO_INSTRUCTIONS in imported.warnings
    assert_paired(imported.messages)


def test_a_failed_tool_is_the_text_the_sdk_sent_and_images_stay() -> None:
    messages = import_file(TO_INPUT_LIST).messages
    failed = next(m for m in messages if m.get("tool_call_id") == "call_station_1")
    assert failed["content"].startswith("An error occurred while running the tool")
    assert "is_error" not in failed  # the items carry no error mark: the model read only the text
    radar = next(m for m in messages if m.get("tool_call_id") == "call_radar")
    assert [p["type"] for p in radar["content"]] == ["text", "image_url"]
    user = [m for m in messages if m["role"] == "user"][1]
    assert [p["type"] for p in user["content"]] == ["text", "image_url"]


def test_a_json_list_and_one_item_a_line_read_alike() -> None:
    fmt, listed, _ = _imported(ITEMS)
    got = import_lines(lines(*ITEMS), "history.jsonl")
    assert fmt == got.format == "openai-agents"
    assert listed == list(got.messages)
    assert listed[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}
        ],
        "reasoning_content": "Ask the tool.",
    }


def test_the_items_map_as_a_responses_requests_input() -> None:
    request = {"model": "gpt-5", "instructions": "Be brief.", "input": ITEMS}
    logged = import_lines(lines(request), "requests.jsonl")
    assert logged.format == "openai-responses"
    assert list(logged.messages)[1:] == _imported(ITEMS)[1]


@pytest.mark.parametrize(
    "value",
    [
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function"}]},
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            _said("done"),
        ],
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    ],
)
def test_an_openai_chat_list_is_not_taken(value: list[Any]) -> None:
    for read in ([value], value):  # a JSON list, and JSONL of one message a line
        assert not FORMATS["openai-agents"].detect(read)
        assert FORMATS["openai-chat"].detect(read)


def test_a_list_of_messages_only_is_taken_by_its_responses_parts() -> None:
    value = [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}, _said("hello")]
    fmt, messages, _ = _imported(value)
    assert fmt == "openai-agents"
    assert messages == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_a_developer_message_opening_the_list_is_the_system_prompt_and_no_note() -> None:
    value = [{"role": "developer", "content": "Be brief."}, *ITEMS]
    _, messages, warnings = _imported(value)
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert NO_INSTRUCTIONS not in warnings


def test_what_is_not_replayed_is_counted() -> None:
    web = {
        "id": "ws_1",
        "action": {"type": "search", "query": "q"},
        "status": "completed",
        "type": "web_search_call",
    }
    sealed = {"id": "rs_2", "summary": [], "encrypted_content": "gAAA", "type": "reasoning"}
    compaction = {"id": "cmp_1", "type": "compaction", "encrypted_content": "gAAA"}
    _, messages, warnings = _imported([compaction, *ITEMS, web, sealed, _said("Still cold.")])
    assert "skipped 1 × item 'web_search_call' (not replayed)" in warnings
    assert f"skipped 1 × {MUTE_REASONING} (not replayed)" in warnings
    assert "skipped 1 × item 'compaction' (not replayed)" in warnings
    # as in a Responses log, assistant messages with no user or result between are one reply
    assert messages[-1] == {"role": "assistant", "content": "Cold.\n\nStill cold."}


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ("text", "an item must be an object, got str"),
        ({"type": 3, "role": "user"}, "an item's 'type' must be text"),
        ({**_call("c2"), "call_id": None}, "a function_call item needs a string 'call_id'"),
        ({**_call("c2"), "name": ["weather"]}, "a function_call item needs a string 'name'"),
        (_output("nope"), "a tool result for 'nope' has no call before it"),
        ({"role": "tool", "content": "x", "type": "message"}, "unknown message role 'tool'"),
        ({"role": "user", "content": {"text": "x"}}, "a message's content is dict, not text or a list"),
        ({"role": "user", "content": 5}, "a message's content is int, not text or a list of parts"),
    ],
)
def test_a_shape_the_sdk_never_writes_is_refused_at_its_line(item: Any, said: str) -> None:
    text = json.dumps([*ITEMS, item], indent=2).splitlines()
    line = len(json.dumps(ITEMS, indent=2).splitlines())  # the item opens after the last one's "}"
    message = _refusal(text)
    assert message.startswith(f"history.json:{line}: ") and said in message, message
    jsonl = _refusal(lines(*ITEMS, item))
    assert jsonl.startswith(f"history.json:{len(ITEMS) + 1}: ") and said in jsonl, jsonl


def test_a_second_list_in_a_jsonl_file_is_refused_at_its_line() -> None:
    message = _refusal(lines(ITEMS, ITEMS))
    assert message.startswith("history.json:2: ") and "one JSON list of items" in message


def test_a_forced_format_of_another_file_is_a_located_error() -> None:
    with pytest.raises(TraceError) as caught:
        import_lines(lines({"model": "gpt-5", "input": "hi"}), "requests.jsonl", "openai-agents")
    assert str(caught.value).startswith("requests.jsonl:1: ")
