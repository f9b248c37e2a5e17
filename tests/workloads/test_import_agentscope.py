"""AgentScope 2.0 agent states and messages: detected from their content (never taken for an
Anthropic log, whose blocks look alike), each reply split where AgentScope's OpenAI chat
formatter splits it, the compressed summary a user message first, media and empty messages
counted, and shapes AgentScope never writes refused at their line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, lines, run_cli

STATE = DATA / "agentscope/state.json"
COMPRESSED = DATA / "agentscope/compressed_state.json"


def _msg(role: str, *blocks: dict[str, Any], name: str = "agent") -> dict[str, Any]:
    return {"name": name, "role": role, "content": list(blocks), "id": f"m-{role}", "created_at": "t"}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "id": "b"}


def _call(call_id: str, arguments: str = '{"q": 1}') -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": "look", "input": arguments, "state": "finished"}


def _result(call_id: str, output: Any, state: str = "success") -> dict[str, Any]:
    return {"type": "tool_result", "id": call_id, "name": "look", "output": output, "state": state}


def _state(*context: dict[str, Any], summary: Any = "") -> dict[str, Any]:
    return {"session_id": "s", "summary": summary, "context": list(context), "reply_context": {}}


ASK = _msg("user", _text("Look."), name="user")


def _imported(*entries: Any) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(lines(*entries), "state.json")
    return got.format, list(got.messages), got.warnings


def _refusal(value: Any) -> str:
    with pytest.raises(TraceError) as caught:
        import_lines(json.dumps(value, indent=2).splitlines(), "state.json")
    return str(caught.value)


def test_the_samples_are_detected_and_the_summary_is_the_first_user_message() -> None:
    plain, compressed = import_file(STATE), import_file(COMPRESSED)
    assert plain.format == compressed.format == "agentscope"
    assert plain.warnings == ()
    summary = json.loads(COMPRESSED.read_text(encoding="utf-8"))["summary"]
    assert compressed.messages[0] == {"role": "user", "content": summary}
    assert any("compressed summary is replayed as the user message" in w for w in compressed.warnings)


def test_a_reply_is_split_at_its_results_and_keeps_thinking_apart() -> None:
    messages = list(import_file(STATE).messages)
    first = messages[1]
    assert first["content"] == "Checking both cities."
    assert first["reasoning_content"] == "Two cities: ask for both at once."
    assert [c["id"] for c in first["tool_calls"]] == ["call-0001", "call-0002"]
    assert [m["role"] for m in messages[2:5]] == ["tool", "tool", "assistant"]
    failed = next(m for m in messages if m.get("tool_call_id") == "call-0003")
    assert failed["is_error"] is True
    shot = next(m for m in messages if m.get("tool_call_id") == "call-0005")
    assert shot["content"][1] == {"type": "image_url", "image_url": {"url": "https://example.com/shot.png"}}
    assert messages[5]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_hint_is_a_user_message_at_its_place() -> None:
    hint = {"type": "hint", "hint": "It is noon.", "id": "h"}
    reply = _msg("assistant", _text("Let me see."), hint, _call("c1"), _result("c1", "seen"), _text("Done."))
    fmt, messages, _ = _imported(_state(ASK, reply))
    assert fmt == "agentscope"
    assert messages[1:] == [
        {"role": "assistant", "content": "Let me see."},
        {"role": "user", "content": "It is noon."},
        {"role": "assistant", "content": "", "tool_calls": [messages[3]["tool_calls"][0]]},
        {"role": "tool", "tool_call_id": "c1", "content": "seen"},
        {"role": "assistant", "content": "Done."},
    ]


def test_messages_one_a_line_and_a_stored_session_are_read() -> None:
    reply = _msg("assistant", _call("c1"), _result("c1", "seen", state="denied"))
    fmt, messages, _ = _imported(ASK, reply)
    assert fmt == "agentscope" and messages[-1]["is_error"] is True
    fmt, listed, _ = _imported([ASK, reply])
    assert listed == messages
    fmt, stored, _ = _imported({"id": "sess", "state": _state(ASK, reply)})
    assert fmt == "agentscope" and stored == messages


def test_media_empty_messages_and_tasks_are_counted() -> None:
    audio = {
        "type": "data",
        "id": "d",
        "source": {"type": "base64", "data": "AA==", "media_type": "audio/wav"},
    }
    state = _state(
        _msg("user", _text("Hear this."), audio, name="user"),
        _msg("assistant", _text("Heard."), audio),
        _msg("assistant"),
        summary=[_text("Before: a talk.")],
    )
    state["tasks_context"] = {"tasks": [{"id": "1"}, {"id": "2"}]}
    _, messages, warnings = _imported(state)
    assert messages[0] == {"role": "user", "content": "Before: a talk."}
    assert messages[1] == {"role": "user", "content": "Hear this."}
    assert "skipped 2 × audio data block (audio/wav, not replayed as an image) (not replayed)" in warnings
    assert "skipped 1 × empty assistant message (a usage record) (not replayed)" in warnings
    assert "skipped 2 × task of the state's task list (not a message) (not replayed)" in warnings


def test_an_anthropic_messages_log_is_not_taken_for_agentscope() -> None:
    request = {
        "model": "claude",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi."}]}],
    }
    got = import_lines(lines({"request": request, "response": None}), "log.jsonl")
    assert got.format != "agentscope"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (_state(ASK, _msg("assistant", _result("nope", "x"))), "has no call before it"),
        (_state(ASK, _msg("assistant", _call("c1", arguments={"q": 1}))), "'input' is not text"),  # type: ignore[arg-type]
        (_state(_msg("user", _call("c1"), name="user")), "holds only text and data blocks"),
        (_state(ASK, _msg("assistant", _call("c1"), _result("c1", 3))), "'output' is not text"),
        (
            _state(_msg("user", {"type": "data", "id": "d", "source": {"type": "file"}}, name="user")),
            "not a URL or base64 source",
        ),
        (_state(ASK, {**ASK, "content": 5}), "message 1 is not an AgentScope message: its content is int"),
        (_state(ASK, {**ASK, "content": ["Look."]}), "message 1 is not an AgentScope message: content[0]"),
        (_state(ASK, {**ASK, "role": 5}), "message 1 is not an AgentScope message: its role is 5"),
        (_state(ASK, {**ASK, "name": None}), "message 1 is not an AgentScope message: it lacks 'name'"),
        (_state(ASK, "Look."), "message 1 is not an AgentScope message: is str, not an object"),
        (_state(ASK, summary=5), "'summary' is int"),
    ],
)
def test_shapes_agentscope_never_writes_are_refused_at_their_line(value: Any, said: str) -> None:
    refusal = _refusal(value)
    assert said in refusal and "state.json:" in refusal


def test_a_second_state_after_the_first_is_refused() -> None:
    with pytest.raises(TraceError, match="holds one agent state"):
        import_lines(lines(_state(ASK), _state(ASK)), "state.jsonl")


def test_ctxlab_import_writes_the_compressed_state(tmp_path: Any) -> None:
    out = tmp_path / "session.jsonl"
    code, said, err = run_cli("import", str(COMPRESSED), "--out", str(out))
    assert code == 0, err
    assert "(agentscope)" in said
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["role"] == "user"
