"""Real OpenAI chat shapes beyond one message a line: fine-tuning files (a conversation a line),
Chat Completions request logs, legacy function calling, and audio and file content parts; each
read as its writer meant it, or refused at its line with what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.workloads.importers import import_lines, read_any
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import lines, run_cli

SYSTEM = {"role": "system", "content": "You check the weather."}
ASK = {"role": "user", "content": "Weather in Paris?"}
CALLED = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
        }
    ],
}
ANSWERED = {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"}
SAID = {"role": "assistant", "content": "It is sunny."}
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}}
WEATHER = {
    "type": "function",
    "function": {"name": "weather", "description": "Weather", "parameters": PARAMETERS},
}


def roles(messages: tuple[dict[str, Any], ...]) -> list[str]:
    return [m["role"] for m in messages]


# ---------------------------------------------------------------------------------------------
# Fine-tuning files


def test_a_fine_tuning_files_first_conversation_is_read_with_its_tools() -> None:
    first = {
        "messages": [SYSTEM, ASK, CALLED, ANSWERED, SAID],
        "tools": [WEATHER],
        "parallel_tool_calls": False,
    }
    other = {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}
    imported = import_lines(lines(first, other, other), "train.jsonl")
    assert imported.format == "openai-chat"
    assert list(imported.messages) == [SYSTEM, ASK, CALLED, ANSWERED, SAID]
    assert [t.name for t in imported.tools] == ["weather"]
    assert "skipped 2 × further conversation (a line of its own) (not replayed)" in imported.warnings


def test_a_fine_tuning_files_legacy_functions_are_its_tools() -> None:
    example = {"messages": [ASK, SAID], "functions": [WEATHER["function"]]}
    imported = import_lines(lines(example), "train.jsonl")
    assert [t.name for t in imported.tools] == ["weather"]


def test_a_fine_tuning_file_replays_from_the_command_line(tmp_path: Path) -> None:
    source = tmp_path / "train.jsonl"
    source.write_text("\n".join(lines({"messages": [SYSTEM, ASK, CALLED, ANSWERED, SAID]})), encoding="utf-8")
    workload = read_any(source)
    (turn,) = workload.script.turns
    assert turn.rounds[0].calls[0].tool == "weather" and turn.final == "It is sunny."


def test_a_preference_lines_conversation_is_its_input_then_its_preferred_output() -> None:
    first = {
        "input": {"messages": [SYSTEM, ASK], "tools": [WEATHER], "parallel_tool_calls": True},
        "preferred_output": [CALLED, ANSWERED, SAID],
        "non_preferred_output": [{"role": "assistant", "content": "No idea."}],
    }
    other = {
        "input": {"messages": [{"role": "user", "content": "Hi"}]},
        "preferred_output": [{"role": "assistant", "content": "Hello"}],
        "non_preferred_output": [{"role": "assistant", "content": "Go away"}],
    }
    imported = import_lines(lines(first, other), "dpo.jsonl")
    assert imported.format == "openai-chat"
    assert list(imported.messages) == [SYSTEM, ASK, CALLED, ANSWERED, SAID]
    assert [t.name for t in imported.tools] == ["weather"]
    assert "skipped 1 × further conversation (a line of its own) (not replayed)" in imported.warnings
    rejected = "skipped 1 × non-preferred output message (a preference line's rejected answer) (not replayed)"
    assert rejected in imported.warnings
    second = import_lines(lines(first, other), "dpo.jsonl", session=1)
    assert list(second.messages) == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ]


def test_a_preference_lines_bad_output_message_names_it() -> None:
    example = {"input": {"messages": [ASK]}, "preferred_output": [{"role": "assistant", "content": 5}]}
    with pytest.raises(TraceError, match=r"dpo.jsonl:1: preferred_output\[0\]: 'content' must be"):
        import_lines(lines(example), "dpo.jsonl")


def test_a_conversation_line_whose_message_is_bad_names_it() -> None:
    example = {"messages": [ASK, {"role": "user", "content": 5}]}
    with pytest.raises(TraceError, match=r"train.jsonl:1: messages\[1\]: 'content' must be"):
        import_lines(lines(example), "train.jsonl")


# ---------------------------------------------------------------------------------------------
# Chat Completions request logs


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": message}]}


def test_a_request_logs_last_request_and_its_response_are_the_conversation() -> None:
    first = {"model": "gpt-4o", "messages": [SYSTEM, ASK], "tools": [WEATHER]}
    second = {**first, "messages": [SYSTEM, ASK, CALLED, ANSWERED]}
    imported = import_lines(lines(first, completion(CALLED), second, completion(SAID)), "log.jsonl")
    assert imported.format == "openai-chat"
    assert list(imported.messages) == [SYSTEM, ASK, CALLED, ANSWERED, SAID]
    assert [t.name for t in imported.tools] == ["weather"]
    assert "skipped 1 × earlier request (not replayed)" in imported.warnings


def test_a_side_request_after_the_agents_last_is_not_the_conversation() -> None:
    first = {"model": "gpt-4o", "messages": [SYSTEM, ASK]}
    second = {**first, "messages": [SYSTEM, ASK, CALLED, ANSWERED]}
    title = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "A title for: weather"}]}
    imported = import_lines(lines(first, second, title), "log.jsonl")
    assert list(imported.messages) == [SYSTEM, ASK, CALLED, ANSWERED]
    assert any("the conversation is the request at line 2" in w for w in imported.warnings)


def test_a_request_with_max_tokens_and_an_openai_model_is_not_an_anthropic_one() -> None:
    asked = {"model": "gpt-4o", "max_tokens": 100, "messages": [ASK], "tools": [WEATHER]}
    imported = import_lines(lines(asked), "log.jsonl")
    assert imported.format == "openai-chat"
    assert [t.name for t in imported.tools] == ["weather"]


def test_a_request_followed_by_a_chat_completion_is_openais_whatever_its_model() -> None:
    asked = {"model": "my-model", "max_tokens": 100, "messages": [ASK]}
    imported = import_lines(lines(asked, completion(SAID)), "log.jsonl")
    assert imported.format == "openai-chat"
    assert list(imported.messages) == [ASK, SAID]


def test_an_anthropic_request_with_max_tokens_stays_anthropic() -> None:
    asked = {"model": "claude-sonnet-4", "max_tokens": 100, "messages": [ASK]}
    assert import_lines(lines(asked), "log.jsonl").format == "anthropic-messages"


def test_a_response_with_no_request_before_it_is_refused_at_its_line() -> None:
    asked = {"model": "gpt-4o", "messages": [ASK]}
    with pytest.raises(TraceError, match=r"log.jsonl:3: a Chat Completions response that follows no request"):
        import_lines(lines(asked, completion(SAID), completion(SAID)), "log.jsonl")


def test_a_streamed_chunk_is_refused_at_its_line_saying_what_to_log() -> None:
    asked = {"model": "gpt-4o", "messages": [ASK]}
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"delta": {"content": "x"}}]}
    with pytest.raises(
        TraceError, match=r"log.jsonl:2: not an OpenAI Chat Completions request.*whole response"
    ):
        import_lines(lines(asked, chunk), "log.jsonl")


def test_import_writes_a_request_logs_conversation(tmp_path: Path) -> None:
    source, out = tmp_path / "log.jsonl", tmp_path / "out.jsonl"
    asked = {"model": "gpt-4o", "messages": [SYSTEM, ASK, CALLED, ANSWERED]}
    source.write_text("\n".join(lines(asked, completion(SAID))), encoding="utf-8")
    code, _, err = run_cli("import", str(source), "--out", str(out))
    assert code == 0, err
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert written == [SYSTEM, ASK, CALLED, ANSWERED, SAID]


# ---------------------------------------------------------------------------------------------
# Legacy function calling

LEGACY_CALL = {"role": "assistant", "content": None, "function_call": {"name": "weather", "arguments": "{}"}}
LEGACY_RESULT = {"role": "function", "name": "weather", "content": "Sunny"}


def test_a_legacy_function_call_is_a_tool_call_answered_by_the_next_function_message(tmp_path: Path) -> None:
    source = tmp_path / "chat.jsonl"
    source.write_text(
        "\n".join(lines(ASK, LEGACY_CALL, LEGACY_RESULT, SAID, ASK, LEGACY_CALL, LEGACY_RESULT))
    )
    first, second = read_any(source).script.turns
    (call,) = first.rounds[0].calls
    assert (call.id, call.tool, call.input, call.result[0]) == (
        "function_call_1",
        "weather",
        "{}",
        _text("Sunny"),
    )
    assert second.rounds[0].calls[0].id == "function_call_2"


def test_import_writes_legacy_calls_in_the_current_form() -> None:
    imported = import_lines([json.dumps([ASK, LEGACY_CALL, LEGACY_RESULT, SAID])], "chat.json")
    called, answered = imported.messages[1], imported.messages[2]
    assert called["tool_calls"][0]["id"] == "function_call_1" and "function_call" not in called
    assert answered == {"role": "tool", "tool_call_id": "function_call_1", "content": "Sunny"}


def test_a_function_message_with_no_call_before_it_is_refused_at_its_line(tmp_path: Path) -> None:
    source = tmp_path / "chat.jsonl"
    source.write_text("\n".join(lines(ASK, LEGACY_RESULT)))
    with pytest.raises(TraceError, match=r"chat.jsonl:2: a 'function' message answers no 'function_call'"):
        read_any(source)


def test_a_message_with_both_call_forms_is_refused() -> None:
    both = {**CALLED, "function_call": {"name": "weather", "arguments": "{}"}}
    with pytest.raises(TraceError, match="both 'function_call' and 'tool_calls'"):
        import_lines([json.dumps([ASK, both])], "chat.json")


# ---------------------------------------------------------------------------------------------
# Audio and file parts

AUDIO = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
FILE = {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0="}}


def _text(text: str) -> TextBlock:
    return TextBlock(text=text)


def test_audio_and_file_parts_are_counted_and_the_rest_of_the_message_replayed(tmp_path: Path) -> None:
    asked = {"role": "user", "content": [{"type": "text", "text": "Transcribe this."}, AUDIO, FILE]}
    source = tmp_path / "chat.jsonl"
    source.write_text("\n".join(lines(asked, SAID)))
    workload = read_any(source)
    assert workload.script.turns[0].user == (_text("Transcribe this."),)
    assert "skipped 1 × content part 'input_audio' (not replayed)" in workload.notes
    assert "skipped 1 × content part 'file' (not replayed)" in workload.notes


def test_import_leaves_audio_parts_out_and_counts_them() -> None:
    asked = {"role": "user", "content": [{"type": "text", "text": "Transcribe this."}, AUDIO]}
    imported = import_lines([json.dumps([asked, SAID])], "chat.json")
    assert imported.messages[0]["content"] == [{"type": "text", "text": "Transcribe this."}]
    assert imported.warnings == ("skipped 1 × content part 'input_audio' (not replayed)",)


def test_an_unknown_part_type_is_still_refused_naming_the_ones_read() -> None:
    asked = {"role": "user", "content": [{"type": "video_url", "video_url": {"url": "v.mp4"}}]}
    with pytest.raises(TraceError, match="expected text, image_url, input_audio or file parts"):
        import_lines([json.dumps([asked, SAID])], "chat.json")
