"""Odd shapes of LangGraph threads and Codex rollouts that real writers produce: each read as its
writer meant it, or refused at its line saying how to fix it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.workloads.importers import import_lines, read_any
from tests.workloads.importing import lines, run_cli

# ---------------------------------------------------------------------------------------------
# Codex: one call id given to two calls of one response


def _rollout(*items: dict[str, Any]) -> list[str]:
    meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": "r1", "cli_version": "0.50.0"}}
    return lines(meta, *({"timestamp": "t", "type": "response_item", "payload": item} for item in items))


def _said(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _shell(call_id: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": [command]})
    return {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id}


def _output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _results(path: Path) -> list[tuple[str, str]]:
    """Each replayed call's input and result text, in order."""
    return [
        (c.input, "".join(getattr(p, "text", "") for p in c.result or ()))
        for turn in read_any(path).script.turns
        for r in turn.rounds
        for c in r.calls
    ]


def test_codex_two_calls_of_one_id_in_one_response_each_keep_their_own_output(tmp_path: Path) -> None:
    """A model server that numbers calls per response can give two parallel calls one id: the
    second output was counted as a further output of the first call and dropped, and the second
    call (renamed by the replay) replayed with an empty result."""
    items = [_said("user", "go"), _shell("call_0", "ls"), _shell("call_0", "pwd")]
    items += [_output("call_0", "ran ls"), _output("call_0", "ran pwd"), _said("assistant", "done")]
    text = _rollout(*items)
    for imported in (import_lines(text, "r.jsonl"), import_lines(iter(text), "r.jsonl")):
        assert [m.get("content") for m in imported.messages if m["role"] == "tool"] == ["ran ls", "ran pwd"]
        assert not any("further output" in w for w in imported.warnings)
        assert any("'call_0' names 2 calls of one response" in w for w in imported.warnings)
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(text) + "\n")
    assert _results(path) == [('{"command": ["ls"]}', "ran ls"), ('{"command": ["pwd"]}', "ran pwd")]
    assert not any("no result" in n for n in read_any(path).notes)


def test_codex_two_calls_of_one_id_answered_after_a_later_message_keep_their_order(tmp_path: Path) -> None:
    """Outputs recorded after a message the model gave in the same response are each moved up to
    their own call, first output to first call."""
    items = [_said("user", "go"), _shell("call_0", "ls"), _shell("call_0", "pwd"), _said("assistant", "ok")]
    items += [_output("call_0", "ran ls"), _output("call_0", "ran pwd"), _said("assistant", "done")]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(_rollout(*items)) + "\n")
    assert _results(path) == [('{"command": ["ls"]}', "ran ls"), ('{"command": ["pwd"]}', "ran pwd")]


def test_codex_the_second_call_of_an_id_without_output_gets_aborted_after_the_first_ones(
    tmp_path: Path,
) -> None:
    """One output for two calls of one id: it answers the first; the second gets Codex's
    `aborted`, after it, so the replay gives each its own."""
    items = [_said("user", "go"), _shell("call_0", "ls"), _shell("call_0", "pwd"), _said("assistant", "hm")]
    items += [_output("call_0", "ran ls"), _said("user", "next")]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(_rollout(*items)) + "\n")
    assert _results(path) == [('{"command": ["ls"]}', "ran ls"), ('{"command": ["pwd"]}', "aborted")]
    code, _, err = run_cli("import", str(path), "--out", str(tmp_path / "out.jsonl"))
    assert code == 0, err


# ---------------------------------------------------------------------------------------------
# LangGraph: messages as langchain-core serialises them (`dumpd`: the `lc` constructor form;
# `messages_to_dict`: `{"type", "data"}`)


def _lc(kind: str, **fields: Any) -> dict[str, Any]:
    """A message as `langchain_core.load.dumpd` writes it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": fields}


def _thread(*messages: dict[str, Any]) -> list[str]:
    """A checkpoint holding the messages, as one JSON document."""
    return [json.dumps({"checkpoint": {"channel_values": {"messages": list(messages)}}}, ensure_ascii=False)]


HUMAN = _lc("HumanMessage", content="Weather in Paris?", type="human")
CALLING = _lc(
    "AIMessage",
    content="",
    type="ai",
    tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}],
    invalid_tool_calls=[],
)
ANSWER = _lc("AIMessage", content="Sunny, 21°C.", type="ai", tool_calls=[], invalid_tool_calls=[])


def _tool(content: object) -> dict[str, Any]:
    return _lc("ToolMessage", content=content, type="tool", tool_call_id="call_1", status="success")


def test_langgraph_a_tool_result_that_is_a_dict_is_its_json_text() -> None:
    """A tool message whose content is an object (LangGraph JS, a message built without
    validation) lost its content: LangChain sends such a tool output as its JSON text."""
    result = {"temperature": 21, "sky": "sunny", "城市": "Paris"}
    imported = import_lines(_thread(HUMAN, CALLING, _tool(result), ANSWER), "checkpoint.json")
    assert imported.messages[2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '{"temperature": 21, "sky": "sunny", "城市": "Paris"}',
    }


def test_langgraph_a_tool_results_parts_without_a_type_are_their_text_or_json() -> None:
    """A tool message's parts without a `type` were each counted as `content part None` and
    lost: a part with a `text` is that text, another its JSON text."""
    parts = [{"text": "Forecast:"}, {"temperature": 21}, "done", {"type": "json", "json": {"wind": 3}}]
    imported = import_lines(_thread(HUMAN, CALLING, _tool(parts), ANSWER), "checkpoint.json")
    assert imported.messages[2]["content"] == [
        {"type": "text", "text": "Forecast:"},
        {"type": "text", "text": '{"temperature": 21}'},
        {"type": "text", "text": "done"},
        {"type": "text", "text": '{"wind": 3}'},
    ]
    assert not any("content part" in w for w in imported.warnings)


def test_langgraph_messages_as_messages_to_dict_writes_them_keep_their_content() -> None:
    """`messages_to_dict` wraps each message's fields in `data`: their content was read as
    empty, the tool result refused for want of its call id."""
    data = [
        {"type": "human", "data": {"content": "Weather in Paris?", "type": "human", "id": None}},
        {"type": "ai", "data": {"content": "", "type": "ai", "tool_calls": CALLING["kwargs"]["tool_calls"]}},
        {"type": "tool", "data": {"content": "sunny", "type": "tool", "tool_call_id": "call_1"}},
        {"type": "ai", "data": {"content": "Sunny.", "type": "ai", "tool_calls": []}},
    ]
    imported = import_lines(lines({"values": {"messages": data}}), "thread.json")
    assert [m["content"] for m in imported.messages] == ["Weather in Paris?", "", "sunny", "Sunny."]
    assert imported.messages[1]["tool_calls"][0]["id"] == "call_1"


LEGACY_CALL = _lc(
    "AIMessage",
    content="",
    type="ai",
    additional_kwargs={"function_call": {"name": "weather", "arguments": '{"city": "Paris"}'}},
    tool_calls=[],
    invalid_tool_calls=[],
)
FUNCTION_RESULT = _lc("FunctionMessage", content="sunny", type="function", name="weather")


def test_langgraph_a_function_message_answers_the_legacy_function_call_before_it() -> None:
    """A legacy function call (`additional_kwargs.function_call`) and its `FunctionMessage`
    made the file "not recognised"; they are a call, with an id made from its place, and its
    result."""
    thread = _thread(HUMAN, LEGACY_CALL, FUNCTION_RESULT, ANSWER)
    imported = import_lines(thread, "checkpoint.json")
    assert imported.messages[1:3] == (
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "function_call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "function_call_1", "content": "sunny"},
    )
    assert import_lines(thread, "checkpoint.json").messages == imported.messages


def test_langgraph_a_function_message_with_no_function_call_before_it_is_refused_at_its_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "checkpoint.json"
    path.write_text("\n".join(_thread(HUMAN, CALLING, FUNCTION_RESULT)) + "\n")
    out = tmp_path / "out.jsonl"
    code, _, err = run_cli("import", str(path), "--out", str(out))
    assert code == 2, err
    assert f"{path}:1: message 2: a FunctionMessage (the result of function 'weather')" in err
    assert "Traceback" not in err and not out.exists()


def test_langgraph_a_chat_message_takes_its_role_and_another_role_is_refused_at_its_line(
    tmp_path: Path,
) -> None:
    """`ChatMessage`s with a custom role made the whole file "not recognised"."""
    said = _lc("ChatMessage", content="Be brief.", type="chat", role="system")
    asked = _lc("ChatMessage", content="Weather?", type="chat", role="user")
    answered = _lc("ChatMessage", content="Sunny.", type="chat", role="assistant")
    imported = import_lines(_thread(said, asked, answered), "checkpoint.json")
    assert [m["role"] for m in imported.messages] == ["system", "user", "assistant"]
    critic = _lc("ChatMessage", content="Too vague.", type="chat", role="critic")
    path = tmp_path / "checkpoint.json"
    path.write_text("\n".join(_thread(asked, answered, critic)) + "\n")
    out = tmp_path / "out.jsonl"
    code, _, err = run_cli("import", str(path), "--out", str(out))
    assert code == 2, err
    assert f"{path}:1: message 2: a ChatMessage with role 'critic'" in err
    assert "Traceback" not in err and not out.exists()


def test_a_list_of_tool_schemas_is_still_no_thread(tmp_path: Path) -> None:
    """`type: function` names a FunctionMessage only with the function's `name` beside it."""
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "weather", "parameters": {}}}]))
    code, _, err = run_cli("import", str(path), "--out", str(tmp_path / "out.jsonl"))
    assert code == 2 and "the format is not recognised" in err


def test_codex_a_reused_ids_output_before_a_late_output_waits_for_its_call(tmp_path: Path) -> None:
    """A call reusing an earlier call's id, in a message held back until a late output comes,
    and its output recorded before that late output: it was counted as a further output of the
    earlier call and dropped, leaving the later call with an empty result."""
    items = [_said("user", "go"), _shell("call_a", "ls"), _output("call_a", "ran ls"), _said("user", "more")]
    items += [_shell("call_b", "pwd"), _said("assistant", "and"), _shell("call_a", "id")]
    items += [_output("call_a", "ran id"), _output("call_b", "ran pwd"), _said("assistant", "done")]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(_rollout(*items)) + "\n")
    assert [result for _, result in _results(path)] == ["ran ls", "ran pwd", "ran id"]
    assert not any("further output" in w for w in import_lines(_rollout(*items), "r.jsonl").warnings)
