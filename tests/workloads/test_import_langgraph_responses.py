"""OpenAI Responses output items in LangGraph threads, as `langchain-openai`'s `ChatOpenAI` with
`use_responses_api=True` keeps them: in an AI message's `content` (`output_version=
"responses/v1"`) or in its `additional_kwargs` (`tool_outputs`, `reasoning`: `"v0"`). Each is
replayed as the Responses reader replays the same item in a Responses log, and the replay stays
protocol-safe: every call answered, every result after its call. Item shapes follow the `openai`
package's `ResponseOutputItem` types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxlab.workloads.importers import import_lines, read_any
from ctxlab.workloads.trace import read_trace
from tests.workloads.importing import assert_paired, lines, run_cli

Wire = dict[str, Any]


def _lc(kind: str, **fields: Any) -> dict[str, Any]:
    """A message as `langchain_core.load.dumpd` writes it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": fields}


def _ai(content: object, **fields: Any) -> dict[str, Any]:
    fields.setdefault("tool_calls", [])
    return _lc("AIMessage", content=content, type="ai", invalid_tool_calls=[], **fields)


def _thread(*messages: dict[str, Any]) -> list[str]:
    return lines({"values": {"messages": [ASK, *messages]}})


ASK = _lc("HumanMessage", content="What format do exports use?", type="human")
THINK = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Search the docs."}]}
SEARCH = {
    "type": "file_search_call",
    "id": "fs_1",
    "queries": ["export format"],
    "status": "completed",
    "results": [{"file_id": "file-1", "filename": "exports.md", "score": 0.9, "text": "JSON lines."}],
}
MCP = {
    "type": "mcp_call",
    "id": "mcp_1",
    "name": "lookup",
    "arguments": '{"topic": "exports"}',
    "server_label": "docs",
    "output": "streams JSON lines",
    "status": "completed",
}
WEB = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "export format"},
}
CODE = {
    "type": "code_interpreter_call",
    "id": "ci_1",
    "code": "print(2 + 2)",
    "container_id": "cntr_1",
    "outputs": [{"type": "logs", "logs": "4"}, {"type": "image", "url": "https://example.org/plot.png"}],
    "status": "completed",
}
OUTPUT = [THINK, SEARCH, MCP, WEB, CODE]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "annotations": []}


def _log(output: list[dict[str, Any]]) -> list[str]:
    """The same turn as a Responses request log: one request and its response."""
    message = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "JSON lines."}],
    }
    request = {"model": "gpt-5", "input": [{"role": "user", "content": "What format do exports use?"}]}
    return lines({"request": request, "response": {"id": "resp_1", "output": [*output, message]}})


def test_responses_items_in_ai_content_replay_as_in_a_responses_log() -> None:
    """A file search with its results, an MCP call and a code interpreter run were each counted
    as an unknown content part and dropped: the model's reads were lost. They are now the
    Responses reader's call and result, the AI message split after each result; a web search,
    whose results the API does not return, is counted as that reader counts it."""
    thread = import_lines(_thread(_ai([*OUTPUT, _text("JSON lines.")])), "thread.json")
    log = import_lines(_log(OUTPUT), "log.jsonl")
    assert_paired(list(thread.messages))
    assert list(thread.messages) == list(log.messages)
    assert [(m["role"], m.get("tool_call_id")) for m in thread.messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "fs_1"),
        ("assistant", None),
        ("tool", "mcp_1"),
        ("assistant", None),
        ("tool", "ci_1"),
        ("assistant", None),
    ]
    assert thread.messages[1]["reasoning_content"] == "Search the docs."
    assert thread.messages[2]["content"] == "exports.md\n\nJSON lines."
    assert thread.messages[3]["tool_calls"][0]["function"] == {
        "name": "lookup",
        "arguments": '{"topic": "exports"}',
    }
    assert thread.messages[6]["content"] == [
        {"type": "text", "text": "4"},
        {"type": "image_url", "image_url": {"url": "https://example.org/plot.png"}},
    ]
    assert thread.messages[-1] == {"role": "assistant", "content": "JSON lines."}
    assert "skipped 1 × item 'web_search_call' (not replayed)" in thread.warnings
    assert not any("content part" in w for w in thread.warnings)


def test_v0_tool_outputs_and_reasoning_are_read_before_the_text() -> None:
    """`output_version="v0"` keeps the items in `additional_kwargs`: they are read before the
    content (the response's order is lost; the server ran its tools before the model wrote), an
    MCP error is an error result, and a file search without its results is counted as such."""
    down = {"type": "http_error", "code": 503, "message": "server down"}  # openai's McpToolCallError
    failed = {**MCP, "output": None, "error": down, "status": "failed"}
    unsearched = {**SEARCH, "results": None}
    kept = {
        "reasoning": {k: v for k, v in THINK.items() if k != "type"},
        "tool_outputs": [failed, unsearched],
    }
    thread = import_lines(_thread(_ai([_text("It is down.")], additional_kwargs=kept)), "thread.json")
    assert_paired(list(thread.messages))
    assert [(m["role"], m["content"]) for m in thread.messages[1:]] == [
        ("assistant", ""),
        ("tool", '{"type": "http_error", "code": 503, "message": "server down"}'),
        ("assistant", "It is down."),
    ]
    assert thread.messages[1]["reasoning_content"] == "Search the docs."
    assert thread.messages[2]["is_error"] is True
    assert any("item 'file_search_call' without its results" in w for w in thread.warnings)


def test_a_computer_call_is_the_message_last_call_answered_by_its_screenshot() -> None:
    """A computer call (the client runs it) is a call of the message after its own calls, on
    its last assistant message; the ToolMessage langchain-openai sends back for it
    (`additional_kwargs.type` `computer_call_output`) is the screenshot's image."""
    click = {
        "type": "computer_call",
        "id": "cu_1",
        "call_id": "call_click",
        "action": {"type": "click", "button": "left", "x": 5, "y": 9},
        "pending_safety_checks": [],
        "status": "completed",
    }
    own = {"name": "note", "args": {"text": "clicking"}, "id": "call_note", "type": "tool_call"}
    ai = _ai([click, MCP, _text("Clicking.")], tool_calls=[own])
    shot = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    kwargs = {"additional_kwargs": {"type": "computer_call_output"}, "type": "tool"}
    answered = [
        _lc("ToolMessage", content="noted", tool_call_id="call_note", type="tool"),
        _lc("ToolMessage", content=[shot], tool_call_id="call_click", **kwargs),
    ]
    thread = import_lines(_thread(ai, *answered), "thread.json")
    assert_paired(list(thread.messages))
    last = thread.messages[3]
    assert [c["id"] for c in thread.messages[1]["tool_calls"]] == ["mcp_1"]
    assert [c["id"] for c in last["tool_calls"]] == ["call_note", "call_click"]
    assert last["tool_calls"][1]["function"]["name"] == "computer"
    assert thread.messages[-1]["content"] == [{"type": "image_url", "image_url": {"url": shot["image_url"]}}]
    by_url = _lc("ToolMessage", content=shot["image_url"], tool_call_id="call_click", **kwargs)
    again = import_lines(_thread(_ai([click]), by_url), "thread.json")
    assert again.messages[-1]["content"] == thread.messages[-1]["content"]


def test_function_call_items_stay_the_tool_calls_and_items_outside_ai_messages_are_counted() -> None:
    """`responses/v1` content repeats each function call as a `function_call` item next to
    `tool_calls`: the call is made once. A Responses item in a human message is counted."""
    own = {"name": "save", "args": {}, "id": "call_1", "type": "tool_call"}
    item = {"type": "function_call", "name": "save", "arguments": "{}", "call_id": "call_1", "id": "fc_1"}
    done = _lc("ToolMessage", content="ok", tool_call_id="call_1", type="tool")
    odd = _lc("HumanMessage", content=[{"type": "text", "text": "and?"}, MCP], type="human")
    thread = import_lines(_thread(_ai([item], tool_calls=[own]), done, odd), "thread.json")
    assert_paired(list(thread.messages))
    assert [c["id"] for c in thread.messages[1]["tool_calls"]] == ["call_1"]
    assert thread.messages[-1] == {"role": "user", "content": "and?"}
    assert "skipped 1 × content part 'mcp_call' (not replayed)" in thread.warnings


def test_responses_items_replay_as_the_thread_itself(tmp_path: Path) -> None:
    """The JSONL `ctxlab import` writes reads back into the workload the thread gives, and the
    replay finds no call without its result in it."""
    source = tmp_path / "thread.json"
    source.write_text(_thread(_ai([*OUTPUT, _text("JSON lines.")]))[0], encoding="utf-8")
    out = tmp_path / "session.jsonl"
    assert run_cli("import", str(source), "--out", str(out), "--quiet")[0] == 0
    direct = read_any(source)
    again = read_trace(out, tools=direct.script.tools)
    assert again.script == direct.script
    assert again.source_violations == direct.source_violations == ()
