"""Gemini CLI sessions (JSONL logs and the older single JSON), `/chat save` checkpoints and Gemini
API requests: read as the CLI rebuilds the history it sends (shown records and commands left out,
a rewind's records dropped, results recorded twice read once), calls without ids paired by name in
order, and refused at the line of a record the CLI never writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import SessionError, import_file, import_lines
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, assert_paired, lines, run_cli

SESSION = DATA / "gemini-cli/session-2026-08-20T09-14-3f2a9c1e.jsonl"
LEGACY = DATA / "gemini-cli/session-2025-09-30T11-20-5b7e1d42.json"
CHECKPOINT = DATA / "gemini-cli/checkpoint-logos.json"
REQUEST = DATA / "gemini-cli/generate-content-request.json"
PNG = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
IMAGE = {"type": "image_url", "image_url": {"url": PNG}}
HEAD = {"sessionId": "s-1", "projectHash": "p", "startTime": "t", "lastUpdated": "t"}


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _user(rid: str, text: str) -> dict[str, Any]:
    return {"id": rid, "timestamp": "t", "type": "user", "content": [{"text": text}]}


def _gemini(rid: str, content: Any, **more: Any) -> dict[str, Any]:
    return {"id": rid, "timestamp": "t", "type": "gemini", "content": content, **more}


def _imported(*entries: Any) -> list[dict[str, Any]]:
    return list(import_lines(lines(*entries), "s.jsonl").messages)


def test_a_session_log_is_what_the_cli_sends_on_resume() -> None:
    done = import_file(SESSION)
    assert done.format == "gemini-cli"
    read = "/home/dev/calc/src/parser.py"
    assert list(done.messages) == [
        {"role": "user", "content": "Why does `make test` fail on the parser module?"},
        {
            "role": "assistant",
            "content": "I'll read the parser and run the tests.",
            "tool_calls": [
                _call("read_file-1755681250000-a1b2c3", "read_file", {"absolute_path": read}),
                _call(
                    "run_shell_command-1755681250001-d4e5f6",
                    "run_shell_command",
                    {"command": "make test", "description": "Run the test suite"},
                ),
            ],
            "reasoning_content": (
                "**Planning the investigation** I'll read the parser and run the failing test."
            ),
        },
        {
            "role": "tool",
            "tool_call_id": "read_file-1755681250000-a1b2c3",
            "content": "def parse(tokens):\n    return tokens[0].value\n",
        },
        {
            "role": "tool",
            "tool_call_id": "run_shell_command-1755681250001-d4e5f6",
            "content": "Command exited with code 2: FAILED tests/test_parser.py::test_empty - "
            "IndexError: list index out of range",
            "is_error": True,
        },
        {
            "role": "assistant",
            "content": "The test fails because `parse` indexes an empty token list. I'll guard it.",
            "tool_calls": [
                _call(
                    "replace-1755681300000-0a1b2c",
                    "replace",
                    {
                        "file_path": read,
                        "old_string": "return tokens[0].value",
                        "new_string": "return tokens[0].value if tokens else None",
                    },
                )
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "replace-1755681300000-0a1b2c",
            "content": "[Operation Cancelled] Reason: User cancelled the operation.",
            "is_error": True,
        },
        {
            "role": "user",
            "content": [{"type": "text", "text": "Here is the failure, what is wrong?"}, IMAGE],
        },
        {
            "role": "assistant",
            "content": "The screenshot shows the same IndexError. Let me find the parser tests.",
            "tool_calls": [
                _call("glob-1755681400000-3d4e5f", "glob", {"pattern": "tests/**/test_parser*.py"})
            ],
            "reasoning_content": "**Reading the screenshot** The traceback points at the empty-input test.",
        },
        {"role": "tool", "tool_call_id": "glob-1755681400000-3d4e5f", "content": "tests/test_parser.py"},
        {
            "role": "assistant",
            "content": "Found it: `tests/test_parser.py::test_empty` calls `parse([])`; the guard fixes it.",
        },
        {"role": "user", "content": "Thanks, that's all."},
        {"role": "assistant", "content": "You're welcome."},
    ]
    assert set(done.warnings) >= {
        "skipped 1 × info record (shown, never sent) (not replayed)",
        "skipped 1 × error record (shown, never sent) (not replayed)",
        "skipped 1 × warning record (shown, never sent) (not replayed)",
        "skipped 2 × message record dropped by a rewind (not replayed)",
        "skipped 2 × function response to a call answered already (recorded twice) (not replayed)",
        "skipped 1 × user record the CLI does not resend (a command or context added anew) (not replayed)",
    }


def test_an_older_session_file_rebuilds_thoughts_and_calls_from_its_records() -> None:
    messages = list(import_file(LEGACY).messages)
    assert messages[1]["content"] == ""
    assert messages[1]["reasoning_content"] == (
        "**Finding the parser** I need to see where the arguments are declared.Two lookups, at once."
    )
    assert [c["function"]["name"] for c in messages[1]["tool_calls"]] == ["search_file_content", "read_file"]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    # the interrupted call has no result: sent unanswered, as the CLI sends it
    assert messages[4]["tool_calls"][0]["id"] == "run_shell_command-1759231400000-1a2b3c"
    assert messages[5] == {"role": "user", "content": "Stop, don't run the tests yet."}


def test_a_checkpoint_pairs_calls_without_ids_by_name_in_order_and_keeps_media_with_the_results() -> None:
    messages = list(import_file(CHECKPOINT).messages)
    assert messages[0]["content"].startswith("This is the Gemini CLI.")  # the context the CLI sent first
    calls = messages[3]["tool_calls"]
    assert [c["id"] for c in calls] == ["content3-1", "content3-2"]
    assert messages[3]["reasoning_content"] == "**Comparing logos** I'll read both files."
    said = {"type": "text", "text": "Binary content provided (1 item(s))."}
    assert messages[4] == {"role": "tool", "tool_call_id": "content3-1", "content": [said, IMAGE]}
    assert messages[5] == {"role": "tool", "tool_call_id": "content3-2", "content": [said, IMAGE]}
    assert messages[6] == {
        "role": "assistant",
        "content": "Both logos are 1×1 placeholders; they are identical.",
    }


def test_a_bare_list_of_contents_is_a_checkpoint_too(tmp_path: Path) -> None:
    history = json.loads(CHECKPOINT.read_text(encoding="utf-8"))["history"]
    path = tmp_path / "checkpoint-old.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    assert import_file(path).messages == import_file(CHECKPOINT).messages


def test_a_request_gives_its_system_instruction_and_tool_declarations() -> None:
    done = import_file(REQUEST)
    assert done.messages[0] == {"role": "system", "content": "You are a weather assistant. Answer briefly."}
    assert [t.name for t in done.tools] == ["get_weather"]
    assert json.loads(done.tools[0].parameters) == {  # the API's Schema, as JSON Schema
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    assert done.messages[3] == {
        "role": "tool",
        "tool_call_id": "content1-0",
        "content": '{"temperature_c": 21, "sky": "clear"}',
    }
    assert done.messages[4]["is_error"] is True


def test_records_written_again_keep_their_place_and_a_set_of_messages_replaces_them() -> None:
    first = _gemini("g1", "draft")
    assert _imported(HEAD, _user("u1", "hi"), first, _user("u2", "more"), {**first, "content": "final"}) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "final"},
        {"role": "user", "content": "more"},
    ]
    replaced = {"$set": {"messages": [_user("u9", "again"), _gemini("g9", "fresh")]}}
    assert _imported(HEAD, _user("u1", "hi"), _gemini("g1", "old"), replaced) == [
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "fresh"},
    ]


def test_a_rewind_to_an_unknown_record_drops_every_record() -> None:
    done = import_lines(
        lines(HEAD, _user("u1", "one"), _gemini("g1", "a"), {"$rewindTo": "gone"}, _user("u2", "two")),
        "s.jsonl",
    )
    assert list(done.messages) == [{"role": "user", "content": "two"}]


def test_a_result_no_call_answers_is_an_error_at_its_record() -> None:
    orphan = {"functionResponse": {"id": "x", "name": "ls", "response": {"output": "a"}}}
    entries = (
        HEAD,
        _user("u1", "hi"),
        _gemini("g1", "ok"),
        {"id": "u2", "type": "user", "content": [orphan]},
    )
    with pytest.raises(TraceError) as raised:
        _imported(*entries)
    assert raised.value.line == 4 and "answers no call" in str(raised.value)


def test_a_response_without_id_answers_the_call_before_it_not_an_interrupted_one_of_its_name(
    tmp_path: Path,
) -> None:
    ls = {"functionCall": {"name": "ls", "args": {}}}
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [ls]},  # interrupted: no response
        {"role": "user", "parts": [{"text": "again"}]},
        {"role": "model", "parts": [ls]},
        {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "r"}}}]},
    ]
    path = tmp_path / "checkpoint-retry.json"
    path.write_text(json.dumps(contents), encoding="utf-8")
    messages = import_file(path).messages
    assert messages[3]["tool_calls"][0]["id"] == "content3-0"
    assert messages[4] == {"role": "tool", "tool_call_id": "content3-0", "content": "r"}


def test_a_response_to_a_call_of_an_earlier_model_content_is_an_error_at_its_record() -> None:
    call = {"functionCall": {"id": "c1", "name": "ls", "args": {}}}
    late = {"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a"}}}
    entries = (
        HEAD,
        _user("u1", "hi"),
        _gemini("g1", [call]),
        _gemini("g2", "then"),
        {"id": "u2", "type": "user", "content": [late]},
    )
    with pytest.raises(TraceError) as raised:
        _imported(*entries)
    assert raised.value.line == 5 and "a call of an earlier model content" in str(raised.value)


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"foo": 1}, "not a Gemini CLI session line"),
        ([1, 2], "not a Gemini CLI session line"),
        ({"id": "m", "type": "system", "content": "x"}, "of type 'system'"),
        ({"id": "m", "type": "user", "content": [3]}, "int"),
        (_gemini("m", [{"functionCall": {"name": 3}}]), "string `name`"),
        (_user("m", "x") | {"content": [{"inlineData": {"data": 3}}]}, "inline data"),
    ],
)
def test_a_line_the_cli_never_writes_is_an_error_at_that_line(entry: Any, said: str) -> None:
    with pytest.raises(TraceError) as raised:
        _imported(HEAD, _user("u1", "hi"), entry)
    assert raised.value.line == 3 and said in str(raised.value)


def test_an_older_session_files_bad_record_is_told_at_its_own_line(tmp_path: Path) -> None:
    doc = {**HEAD, "messages": [_user("u1", "hi"), {"id": "m", "type": "note", "content": "x"}]}
    path = tmp_path / "session.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    with pytest.raises(TraceError) as raised:
        import_file(path)
    assert raised.value.line is not None and raised.value.line > 10


def test_a_second_document_after_a_checkpoint_is_an_error() -> None:
    contents = [{"role": "user", "parts": [{"text": "hi"}]}]
    with pytest.raises(TraceError) as raised:
        import_lines(lines(contents, contents), "c.jsonl")
    assert raised.value.line == 2


def test_other_formats_lists_are_not_taken() -> None:
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert import_lines(lines(*chat), "c.jsonl").format == "openai-chat"
    events = [{"role": "user", "parts": [{"text": "hi"}], "author": "user"}]  # more than a content
    assert import_lines(lines(events), "c.json").format == "openai-chat"


def test_a_session_past_0_is_refused() -> None:
    with pytest.raises(SessionError):
        import_file(SESSION, session=1)


def test_every_sample_pairs_each_result_with_its_call() -> None:
    for path in (SESSION, CHECKPOINT, REQUEST):
        assert_paired(import_file(path).messages)


def test_import_and_replay_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "session.jsonl"
    code, said, err = run_cli("import", str(SESSION), "--out", str(out))
    assert code == 0 and "(gemini-cli)" in said, err
    assert len(out.read_text(encoding="utf-8").splitlines()) == 12
    code, _, err = run_cli(
        "replay",
        str(LEGACY),
        "--preset",
        "none",
        "--context-size",
        "32000",
        "--out",
        str(tmp_path / "runs"),
        "--quiet",
    )
    assert code == 0, err
    manifest = json.loads(next((tmp_path / "runs").glob("*/manifest.json")).read_text(encoding="utf-8"))
    warnings = manifest["warnings"]
    assert any("holds no system prompt" in w for w in warnings), warnings
    assert any("run_shell_command-1759231400000-1a2b3c" in w and "empty" in w for w in warnings), warnings


def test_import_writes_nothing_for_a_bad_session(tmp_path: Path) -> None:
    path, out = tmp_path / "session.jsonl", tmp_path / "out.jsonl"
    path.write_text("\n".join(lines(HEAD, {"nope": True})), encoding="utf-8")
    code, _, err = run_cli("import", str(path), "--out", str(out))
    assert code == 2 and ":2" in err and not out.exists()


def test_a_declared_schema_is_read_as_the_json_schema_it_stands_for(tmp_path: Path) -> None:
    declared = {
        "type": "OBJECT",
        "propertyOrdering": ["tags", "note"],
        "properties": {
            "tags": {"type": "ARRAY", "items": {"type": "STRING", "enum": ["a", "b"]}, "minItems": "1"},
            "note": {"type": "STRING", "nullable": True, "description": "optional"},
            "any": {"anyOf": [{"type": "INTEGER"}, {"type": "TYPE_UNSPECIFIED"}]},
        },
    }
    body = json.loads(REQUEST.read_text(encoding="utf-8"))
    body["tools"] = [
        {"functionDeclarations": [{"name": "tag", "description": "Tag.", "parameters": declared}]}
    ]
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    assert json.loads(import_file(path).tools[0].parameters) == {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1},
            "note": {"type": ["string", "null"], "description": "optional"},
            "any": {"anyOf": [{"type": "integer"}, {}]},
        },
    }
