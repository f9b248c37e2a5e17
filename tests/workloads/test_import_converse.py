"""Bedrock Converse messages (strands' history, its session records, Converse request logs):
detected from their content and never taken for an Anthropic or OpenAI file, mapped by the
module's rules (results before the user's text, `status: "error"`, JSON results as text,
images from base64 text or strands' bytes marker, reasoning apart), what is not replayed
counted, and a shape strands never writes refused at its line."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, lines, run_cli

SESSION = DATA / "bedrock-converse/strands_session.json"
REQUEST = DATA / "bedrock-converse/converse_request.jsonl"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _use(call_id: str, name: str = "ls", **arguments: Any) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call_id, "name": name, "input": arguments}}


def _result(call_id: str, *content: dict[str, Any], status: str | None = "success") -> dict[str, Any]:
    result: dict[str, Any] = {"toolUseId": call_id, "content": list(content)}
    if status is not None:
        result["status"] = status
    return {"toolResult": result}


def _imported(value: Any, fmt: str | None = None) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(json.dumps(value, indent=2).splitlines(), "history.json", fmt)
    return got.format, list(got.messages), got.warnings


def _refusal(value: Any) -> str:
    """The refusal of a file read as Converse messages (forced: a role or block strands never
    writes is not detected as Converse to begin with)."""
    with pytest.raises(TraceError) as caught:
        import_lines(json.dumps(value, indent=2).splitlines(), "history.json", "bedrock-converse")
    return str(caught.value)


HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": [{"text": "List it."}]},
    {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "two calls", "signature": "c2ln"}}},
            {"text": "Listing."},
            _use("t1", path="a"),
            _use("t2", path="b"),
        ],
    },
    {
        "role": "user",
        "content": [
            _result("t1", {"json": {"files": ["é.txt"]}}),
            _result("t2", {"text": "no such dir"}, status="error"),
            {"cachePoint": {"type": "default"}},
        ],
    },
    {"role": "assistant", "content": [{"text": "One listed, one failed."}]},
]


def test_agent_messages_dumped_as_json_are_one_conversation() -> None:
    fmt, messages, warnings = _imported(HISTORY)
    assert fmt == "bedrock-converse"
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert messages[1]["reasoning_content"] == "two calls" and messages[1]["content"] == "Listing."
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["t1", "t2"]
    assert messages[2]["content"] == '{"files": ["é.txt"]}' and "is_error" not in messages[2]
    assert messages[3] == {"role": "tool", "tool_call_id": "t2", "content": "no such dir", "is_error": True}
    assert "skipped 1 × user message block 'cachePoint' (not replayed)" in warnings
    assert any("system prompt" in w for w in warnings)


def test_a_jsonl_of_messages_reads_the_same() -> None:
    got = import_lines(lines(*HISTORY), "history.jsonl")
    assert got.format == "bedrock-converse"
    assert list(got.messages) == _imported(HISTORY)[1]


def test_the_session_sample_keeps_images_reasoning_and_the_error_result() -> None:
    got = import_file(SESSION)
    user, results = got.messages[0], [m for m in got.messages if m["role"] == "tool"]
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert [m.get("is_error", False) for m in results] == [False, False, True, False, False]
    assert results[3]["content"] == "Quercus robur: leaves with 4-5 rounded lobes.\nStalk under 1 cm."
    assert [p["type"] for p in results[4]["content"]] == ["text", "image_url"]
    assert got.messages[1]["reasoning_content"].startswith("The photo shows")
    assert not got.tools


def test_the_request_log_gives_system_prompt_tools_and_the_response() -> None:
    got = import_file(REQUEST)
    assert got.messages[0]["role"] == "system" and got.messages[0]["content"].startswith("You are a field")
    assert [t.name for t in got.tools] == ["search_flora", "fetch_page", "leaf_outline"]
    assert got.messages[-1] == {
        "role": "assistant",
        "content": "Acorns ripen in autumn, September to October.",
    }
    assert got.messages[1:] == import_file(SESSION).messages
    assert not got.warnings


def test_earlier_requests_are_counted_and_a_wrapped_response_is_read() -> None:
    request, response = (json.loads(line) for line in REQUEST.read_text(encoding="utf-8").splitlines())
    earlier = {**request, "messages": request["messages"][:1]}
    got = import_lines(lines(earlier, {"request": request, "response": response}), "log.jsonl")
    assert got.format == "bedrock-converse"
    assert list(got.messages) == list(import_file(REQUEST).messages)
    assert (
        "skipped 1 × earlier Converse request (the last request repeats its conversation) (not replayed)"
        in (got.warnings)
    )


def _record(n: int, message: dict[str, Any], redacted: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "message": message,
        "message_id": n,
        "redact_message": redacted,
        "created_at": "",
        "updated_at": "",
    }


def test_session_records_replay_a_redacted_message_as_strands_restores_it() -> None:
    hidden = {"role": "user", "content": [{"text": "[redacted]"}]}
    records = [_record(0, HISTORY[0], hidden), _record(1, HISTORY[3])]
    fmt, messages, warnings = _imported(records)
    assert fmt == "bedrock-converse" and messages[0]["content"] == "[redacted]"
    assert any(w.startswith("skipped 1 × redacted message") for w in warnings)
    assert _refusal([records[1], records[0]]).startswith("history.json:")
    assert "order of their message_id" in _refusal([records[1], records[0]])


def test_parts_that_are_not_replayed_are_counted() -> None:
    doc = base64.b64encode(b"Leaf key").decode()
    history = [
        {
            "role": "user",
            "content": [
                {"document": {"format": "md", "name": "key", "source": {"bytes": doc}}},
                {"document": {"format": "pdf", "name": "atlas", "source": {"bytes": doc}}},
                {"document": {"format": "txt", "name": "odd", "source": {"bytes": "ü=="}}},
                {"image": {"format": "png", "source": {"s3Location": {"uri": "s3://b/k.png"}}}},
                {"guardContent": {"text": {"text": "guarded"}}},
            ],
        },
        {
            "role": "assistant",
            "content": [{"reasoningContent": {"redactedContent": "b3BhcXVl"}}, {"text": "ok"}],
        },
    ]
    _, messages, warnings = _imported(history)
    assert messages[0]["content"] == [
        {"type": "text", "text": "key\n\nLeaf key"},
        {"type": "text", "text": "guarded"},
    ]
    assert "skipped 1 × user message document (pdf) (not replayed)" in warnings
    assert "skipped 1 × user message document (txt) (not replayed)" in warnings  # not base64
    assert "skipped 1 × user message image (s3Location source) (not replayed)" in warnings
    assert "skipped 1 × redacted reasoning (opaque) (not replayed)" in warnings


def test_a_result_without_status_is_a_success_as_a_request_may_omit_it() -> None:
    history = [
        HISTORY[0],
        {"role": "assistant", "content": [_use("t1")]},
        {"role": "user", "content": [_result("t1", status=None)]},
    ]
    _, messages, _ = _imported(history)
    assert messages[-1] == {"role": "tool", "tool_call_id": "t1", "content": ""}


@pytest.mark.parametrize(
    "path",
    ["anthropic-messages/requests.jsonl", "openai-responses/requests.jsonl", "tau-bench/results.json"],
)
def test_other_formats_are_not_taken(path: str) -> None:
    assert import_file(DATA / path).format != "bedrock-converse"


def test_anthropic_blocks_with_a_type_are_not_converse() -> None:
    anthropic = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert import_lines(lines(anthropic), "x.json").format != "bedrock-converse"
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert import_lines(lines(chat), "x.json").format == "openai-chat"


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([{"role": "system", "content": [{"text": "x"}]}], "role is 'system'"),
        ([{"role": "user", "content": [{"text": "x"}, {"sound": {}}]}], "no Converse kind ('sound')"),
        ([{"role": "user", "content": [_use("t1")]}], "a user message holds a 'toolUse' block"),
        ([HISTORY[0], {"role": "assistant", "content": [_result("t1")]}], "an assistant message holds"),
        ([{"role": "user", "content": [_result("t9")]}], "a tool result for 't9' has no call before it"),
        ([{"role": "user", "content": [{"image": {"format": "bmp", "source": {"bytes": PNG}}}]}], "'bmp'"),
        (
            [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": [1, 2]}}}]}],
            "not base64",
        ),
        (
            [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": "ü=="}}}]}],
            "not base64",
        ),
        (
            [HISTORY[0], {"role": "assistant", "content": [{"toolUse": {"name": "ls", "input": {}}}]}],
            "toolUseId",
        ),
        (
            [
                HISTORY[0],
                {"role": "assistant", "content": [_use("t1")]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [5]}}]},
            ],
            "a value is a number where bedrock-converse writes an object or a list",
        ),
    ],
)
def test_a_shape_strands_never_writes_is_refused_at_its_line(history: list[Any], expected: str) -> None:
    refusal = _refusal(history)
    assert refusal.startswith("history.json:") and expected in refusal, refusal


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (5, "not a Converse message"),
        ("List it.", "not a Converse message"),
        ({"text": "List it."}, "not a Converse message"),
        (None, "not a Converse message"),
        (["List it."], "no Converse kind ('str')"),
    ],
    ids=["a number", "text", "an object", "null", "a list of text"],
)
def test_a_message_of_odd_content_among_converse_ones_is_refused_not_read_as_another_format(
    content: Any, expected: str
) -> None:
    """Detected by the messages around it, not read as Anthropic's with every block dropped."""
    request = json.loads(REQUEST.read_text(encoding="utf-8").splitlines()[0])
    request["messages"][0]["content"] = content
    with pytest.raises(TraceError) as caught:
        import_lines([json.dumps(request)], "request.jsonl")
    assert str(caught.value).startswith("request.jsonl:1: ") and expected in str(caught.value)
    history = [{**HISTORY[0], "content": content}, *HISTORY[1:]]
    assert _imported_or_refused(history).startswith("history.json:2: ")


def _imported_or_refused(value: Any) -> str:
    try:
        return _imported(value)[0]
    except TraceError as error:
        return str(error)


def test_a_response_without_its_request_and_mixed_kinds_are_refused(tmp_path: Path) -> None:
    request, response = REQUEST.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f"{request}\n{response}\n{response}\n", encoding="utf-8")
    code, _, err = run_cli("import", str(bad), "--out", str(tmp_path / "out.jsonl"))
    assert code == 2 and err.startswith(f"{bad}:3: a Converse response that follows no request"), err
    assert not (tmp_path / "out.jsonl").exists()
    bad.write_text(f"{request}\n{json.dumps(HISTORY[0])}\n", encoding="utf-8")
    assert run_cli("import", str(bad), "--out", str(tmp_path / "out.jsonl"))[2].startswith(
        f"{bad}:2: a Converse"
    )


def test_records_one_a_line_and_a_list_of_requests_read_as_their_json_lists() -> None:
    records = json.loads(SESSION.read_text(encoding="utf-8"))
    assert import_lines(lines(*records), "records.jsonl").messages == import_file(SESSION).messages
    request, response = (json.loads(line) for line in REQUEST.read_text(encoding="utf-8").splitlines())
    got = import_lines(json.dumps([request, response], indent=1).splitlines(), "log.json")
    assert got.format == "bedrock-converse" and got.messages == import_file(REQUEST).messages
