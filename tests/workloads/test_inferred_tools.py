"""A transcript that declares no tools (the lab's JSONL carries calls, not schemas) is replayed
with a schema for every tool it calls, so no request holds a tool call or result naming a tool
it does not declare: the Anthropic Messages API refuses that ("Requests which include tool_use or
tool_result blocks must define tools"), and so does Bedrock's Converse API without `toolConfig`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.workloads.importers import read_any
from ctxlab.workloads.trace import map_wire
from tests.workloads.importing import DATA, lines, replayed_requests

USER = {"role": "user", "content": "Plan the page."}


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _turn(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "OK"} for c in calls]
    return [{"role": "assistant", "content": "", "tool_calls": list(calls)}, *results]


MESSAGES = [
    USER,
    *_turn(
        _call("a:0", "write_todos", '{"todos": [{"content": "hero", "status": "pending"}]}'),
        _call("a:1", "bash", '{"command": "ls", "timeout": 5}'),
    ),
    *_turn(_call("a:2", "bash", '{"command": "pwd", "timeout": "5s"}')),
    *_turn(_call("a:3", "shell", "ls -la")),
    {"role": "assistant", "content": "Done."},
]


def test_the_schemas_are_read_off_the_calls_in_the_order_of_the_first_call_to_each() -> None:
    tools = {t.name: json.loads(t.parameters) for t in map_wire(MESSAGES).script.tools}
    assert list(tools) == ["write_todos", "bash", "shell"]
    assert tools["write_todos"] == {"type": "object", "properties": {"todos": {"type": "array", "items": {}}}}
    # `timeout` is a number once and a string once: no type the calls agree on
    assert tools["bash"] == {"type": "object", "properties": {"command": {"type": "string"}, "timeout": {}}}
    assert tools["shell"] == {"type": "object", "properties": {}}  # raw text: no key to read


def test_tools_given_or_declared_are_kept_as_they_are() -> None:
    given = (ToolSchema.of("bash", "Run a command.", {"type": "object"}),)
    assert map_wire(MESSAGES, tools=given).script.tools == given


def test_a_tool_declared_twice_is_offered_once_and_a_name_openai_refuses_is_noted(tmp_path: Path) -> None:
    bash = {"type": "function", "function": {"name": "bash", "description": "d", "parameters": {}}}
    other = {"type": "function", "function": {"name": "bash", "description": "e", "parameters": {}}}
    odd = {"type": "function", "function": {"name": "run shell/cmd", "description": "d", "parameters": {}}}
    line = {"messages": MESSAGES, "tools": [bash, bash, odd, other]}  # a fine-tuning file's line
    path = tmp_path / "tuning.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    workload = read_any(path)
    assert [t.name for t in workload.script.tools] == ["bash", "run shell/cmd"]
    assert workload.script.tools[0].description == "d"
    notes = [n for n in workload.notes if n.startswith("tool ")]
    assert notes == [
        "tool 'bash' is declared twice; the first declaration is offered",
        "tool 'bash' is declared twice with another schema; the first declaration is offered",
        "tool 'run shell/cmd': OpenAI takes a tool name of letters, digits, _ and - only, at most 64, so "
        "every request offering it would be refused there (the violations columns count tool calls and "
        "results only)",
    ]
    given = (ToolSchema.of("bash", "Run.", {}), ToolSchema.of("bash", "Run.", {}))
    replayed = map_wire(MESSAGES, tools=given)
    assert replayed.script.tools == given[:1] and "tool 'bash' is declared twice" in replayed.notes[-1]


def test_a_transcript_without_calls_offers_no_tool() -> None:
    assert map_wire([USER, {"role": "assistant", "content": "Hello."}]).script.tools == ()


def test_a_native_format_with_no_declared_tools_gets_them_from_its_calls() -> None:
    """A deer-flow thread (LangGraph) stores the calls, not the agent's tools."""
    workload = read_any(DATA / "langgraph" / "deerflow-b83fbb2a-thread.json")
    called = list(dict.fromkeys(c.tool for c in workload.script.calls()))
    assert called and [t.name for t in workload.script.tools] == called


def _recorded(tmp_path: Path, wire: str) -> list[dict[str, Any]]:
    source = tmp_path / "session.jsonl"
    source.write_text("\n".join(lines(*MESSAGES)), encoding="utf-8")
    return replayed_requests(source, tmp_path / "results", "--wire", wire)


def test_every_anthropic_request_declares_each_tool_its_blocks_name(tmp_path: Path) -> None:
    requests = _recorded(tmp_path, "anthropic")
    for request in requests:
        declared = {tool["name"] for tool in request["tools"]}
        blocks = [b for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]]
        assert {b["name"] for b in blocks if b["type"] == "tool_use"} <= declared
        assert declared or not any(b["type"] == "tool_result" for b in blocks)
    assert {tool["name"] for tool in requests[-1]["tools"]} == {"write_todos", "bash", "shell"}


def test_every_openai_request_declares_each_tool_it_calls(tmp_path: Path) -> None:
    for request in _recorded(tmp_path, "openai"):
        declared = {tool["function"]["name"] for tool in request["tools"]}
        called = {c["function"]["name"] for m in request["messages"] for c in m.get("tool_calls") or ()}
        assert called <= declared


def test_a_name_openai_refuses_is_noted_when_the_tools_are_read_off_the_calls(tmp_path: Path) -> None:
    """Without declared tools, the replay offers the tools its calls name: a name OpenAI refuses
    is noted as for a declared one (it was not), in OpenAI chat files and in the importers' alike."""
    said = "tool 'run shell/cmd': OpenAI takes a tool name of letters, digits, _ and - only"
    call = {"id": "c1", "type": "function", "function": {"name": "run shell/cmd", "arguments": "{}"}}
    chat = [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "assistant", "content": "One file."},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in chat), encoding="utf-8")
    assert [n for n in read_any(path).notes if n.startswith("tool ")] == [said + NOTE_END]
    use = {"type": "tool_use", "id": "c1", "name": "run shell/cmd", "input": {}}
    history = [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "a.txt"}]},
        {"role": "assistant", "content": "One file."},
    ]
    path = tmp_path / "history.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    assert [n for n in read_any(path).notes if n.startswith("tool ")] == [said + NOTE_END]


NOTE_END = (
    ", at most 64, so every request offering it would be refused there (the violations columns count "
    "tool calls and results only)"
)
