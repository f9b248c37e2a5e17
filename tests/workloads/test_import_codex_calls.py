"""Codex rollouts' tool calls: a call into a namespace (current Codex's MCP tools), and which one
result each call gets (openai/codex, codex-rs: `ResponseItem::FunctionCall { name, namespace }`;
`ToolName::canonical_flat_name`; the context manager's `ensure_call_outputs_present`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxlab.workloads.importers import import_lines
from tests.workloads.importing import lines, run_cli


def rollout(*payloads: dict[str, Any]) -> list[str]:
    """Response items as a rollout's lines."""
    return lines(
        *({"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": p} for p in payloads)
    )


def say(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def call(call_id: str, name: str, **fields: str) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": "{}", "call_id": call_id, **fields}


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def names(lines_: list[str]) -> list[str]:
    return [
        c["function"]["name"]
        for m in import_lines(lines_, "rollout.jsonl").messages
        for c in m.get("tool_calls", [])
    ]


# ---------------------------------------------------------------------------------------------
# MCP tools: a function call into a namespace


def test_a_call_into_a_namespace_keeps_its_namespace_in_its_name() -> None:
    """Current Codex offers each MCP server's tools as a namespace and records the call's
    `name` and `namespace` apart; the name alone lost the server (two servers' `search` were
    one tool)."""
    items = [
        say("user", "weather?"),
        call("c1", "get_forecast", namespace="mcp__weather__"),
        output("c1", "sunny"),
        call("c2", "exec_command", namespace="mcp__ccnm"),
        output("c2", "ok"),
    ]
    assert names(rollout(*items)) == ["mcp__weather__get_forecast", "mcp__ccnm__exec_command"]


def test_a_flat_mcp_name_of_older_codex_and_a_plain_call_are_kept() -> None:
    items = [say("user", "go"), call("c1", "mcp__weather__get_forecast"), output("c1", "x")]
    items += [call("c2", "shell"), output("c2", "y")]
    assert names(rollout(*items)) == ["mcp__weather__get_forecast", "shell"]


def test_a_custom_tool_call_into_a_namespace_is_named_alike() -> None:
    custom = {
        "type": "custom_tool_call",
        "name": "apply",
        "namespace": "mcp__git__",
        "input": "x",
        "call_id": "c1",
    }
    items = [
        say("user", "go"),
        custom,
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "done"},
    ]
    assert names(rollout(*items)) == ["mcp__git__apply"]


def test_a_request_logs_namespace_tools_are_schemas_of_the_calls_names() -> None:
    """A Responses request offering a namespace of functions: each is a schema named as its
    calls are; before, the namespace was counted as a tool of another type."""
    forecast = {"type": "function", "name": "get_forecast", "description": "Forecast.", "parameters": {}}
    tools = [{"type": "namespace", "name": "mcp__weather__", "description": "Weather.", "tools": [forecast]}]
    request = {"model": "m", "tools": tools, "input": [say("user", "weather?")]}
    response = {"output": [call("c1", "get_forecast", namespace="mcp__weather__")]}
    imported = import_lines(lines({"request": request, "response": response}), "log.jsonl")
    assert [t.name for t in imported.tools] == ["mcp__weather__get_forecast"]
    assert imported.messages[-1]["tool_calls"][0]["function"]["name"] == "mcp__weather__get_forecast"
    assert not any("namespace" in w for w in imported.warnings)


# ---------------------------------------------------------------------------------------------
# One result for each call: a late output, `aborted` only for a call Codex has no output of


def shape(messages: tuple[dict[str, Any], ...]) -> list[str]:
    """Each message as its role, a call batch as its ids, a result as `=id:content`."""
    return [
        f"={m['tool_call_id']}:{m['content']}"
        if m["role"] == "tool"
        else "+".join(c["id"] for c in m.get("tool_calls", [])) or m["role"]
        for m in messages
    ]


def test_an_output_after_a_later_message_is_the_calls_one_result_after_it() -> None:
    """Codex records a call when the model gives it and its output when the tool returns, so a
    message the model gave after the call in the same response comes before the output. The
    call was given `aborted` before that message and then had the real output too."""
    items = [say("user", "go"), call("c1", "shell"), say("assistant", "running it"), output("c1", "ok")]
    imported = import_lines(rollout(*items, say("assistant", "done")), "rollout.jsonl")
    assert shape(imported.messages) == ["user", "c1", "=c1:ok", "assistant", "assistant"]
    assert "call 'c1''s output comes after a later message: replayed after the call" in imported.warnings


def test_the_messages_held_back_keep_their_own_calls_and_results() -> None:
    """An interruption's marker and a further batch between a call and its late output."""
    marker = say("user", "<turn_aborted>The user interrupted the previous turn.</turn_aborted>")
    items = [say("user", "go"), call("c1", "shell"), say("assistant", "and"), call("c2", "ls"), marker]
    items += [output("c1", "aborted by user after 1.0s"), output("c2", "a b")]
    imported = import_lines(rollout(*items), "rollout.jsonl")
    assert shape(imported.messages) == [
        "user",
        "c1",
        "=c1:aborted by user after 1.0s",
        "c2",
        "=c2:a b",
        "user",
    ]


def test_a_call_with_no_output_anywhere_still_gets_aborted() -> None:
    items = [say("user", "go"), call("c1", "shell"), say("user", "stop"), call("c2", "ls")]
    imported = import_lines(rollout(*items, output("c2", "x")), "rollout.jsonl")
    assert shape(imported.messages) == ["user", "c1", "=c1:aborted", "user", "c2", "=c2:x"]


def test_a_rollout_read_once_keeps_aborted_and_counts_the_late_output() -> None:
    """A stream cannot be read twice to find the late output: the call keeps one result."""
    items = [say("user", "go"), call("c1", "shell"), say("assistant", "running it"), output("c1", "ok")]
    imported = import_lines(iter(rollout(*items)), "rollout.jsonl")
    assert shape(imported.messages) == ["user", "c1", "=c1:aborted", "assistant"]
    assert "skipped 1 × further output of a call that has its result (not replayed)" in imported.warnings
    assert any("read once (a stream), so the call keeps 'aborted'" in w for w in imported.warnings)


def test_a_second_output_of_a_call_is_counted() -> None:
    items = [say("user", "go"), call("c1", "shell"), output("c1", "ok"), output("c1", "again")]
    imported = import_lines(rollout(*items), "rollout.jsonl")
    assert shape(imported.messages) == ["user", "c1", "=c1:ok"]
    assert "skipped 1 × further output of a call that has its result (not replayed)" in imported.warnings


def test_an_item_of_an_odd_shape_is_a_located_error_on_the_first_read_too(tmp_path: Path) -> None:
    """The first read, which finds the late outputs, met an item whose `type` is an object with
    a TypeError traceback from `ctxlab import` and `ctxlab replay`; it is the located error the
    reading itself gives such an item."""
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(rollout(say("user", "go"), {"type": {"a": 1}}, say("assistant", "ok"))) + "\n")
    for command in (["import", "--out", str(tmp_path / "s.jsonl")], ["replay", "--out", str(tmp_path / "r")]):
        code, _, err = run_cli(command[0], str(path), *command[1:], "--quiet")
        assert code == 2, command
        expected = "an entry is not shaped as codex writes it: a value is an object where codex writes text"
        assert f"{path}:2: {expected}" in err, command
    assert not (tmp_path / "s.jsonl").exists() and not (tmp_path / "r").exists()
