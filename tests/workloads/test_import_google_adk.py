"""Google ADK sessions: detected in both of the forms ADK writes (field names, camelCase aliases)
and as a bare list of events, read as ADK builds its requests (compaction, rewinds, other agents'
events quoted, unpaired calls and responses left out, each counted), refused at the event where a
session is not of the shape ADK writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.importers.google_adk import BEGIN, END, PREAMBLE
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, lines, run_cli

API = DATA / "google-adk/api-session.json"
COMPACTED = DATA / "google-adk/compacted-session.json"


def _event(
    author: str, role: str, *parts: dict[str, Any], at: float, invocation: str = "i1", **more: Any
) -> dict[str, Any]:
    return {
        "author": author,
        "invocationId": invocation,
        "content": {"role": role, "parts": list(parts)},
        "actions": {"stateDelta": {}},
        "id": f"e{at}",
        "timestamp": at,
        **more,
    }


def _session(*events: dict[str, Any]) -> dict[str, Any]:
    return {"id": "s", "appName": "app", "userId": "u", "state": {}, "events": list(events)}


def _call(call_id: str, name: str = "lookup", **args: Any) -> dict[str, Any]:
    return {"functionCall": {"id": call_id, "name": name, "args": args}}


def _response(call_id: str, response: Any, name: str = "lookup") -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": name, "response": response}}


def _imported(value: Any) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    done = import_lines(lines(value), "s.json", "google-adk")
    return list(done.messages), done.warnings


def test_both_forms_and_a_bare_list_of_events_are_detected_and_read_alike(tmp_path: Path) -> None:
    camel = json.loads(API.read_text(encoding="utf-8"))
    assert import_file(API).format == "google-adk"
    assert import_file(COMPACTED).format == "google-adk"
    bare = tmp_path / "events.json"
    bare.write_text(json.dumps(camel["events"]), encoding="utf-8")
    listed = import_file(bare)
    assert listed.format == "google-adk"
    assert listed.messages == import_file(API).messages


def test_the_api_sessions_calls_results_errors_thoughts_and_images() -> None:
    done = import_file(API)
    first, answer = done.messages[0], done.messages[1]
    assert first["role"] == "user" and first["content"][1]["type"] == "image_url"
    assert [c["id"] for c in answer["tool_calls"]] == ["call_1", "call_2"]  # parallel calls
    assert answer["reasoning_content"].startswith("The user wants both cities")
    assert done.messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21°C"}
    failed = done.messages[7]
    assert failed["is_error"] is True and json.loads(failed["content"])["error"] == "Unknown city: Atlantis"
    assert not any(m["role"] == "system" for m in done.messages)
    assert any("no system prompt is replayed" in w for w in done.warnings)
    assert any("JSON text" in w for w in done.warnings)


def test_a_compaction_replaces_the_events_it_spans_with_its_summary() -> None:
    done = import_file(COMPACTED)
    assert done.messages[0] == {
        "role": "assistant",
        "content": "The user asked for the weather in Paris: sunny, 21°C.",
    }
    assert "skipped 6 × event compacted into a summary (not replayed)" in done.warnings
    image = done.messages[3]["content"][1]
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/png;base64,")


def test_another_agents_event_is_quoted_as_adk_quotes_it() -> None:
    session = _session(
        _event("user", "user", {"text": "Plan a trip"}, at=1),
        _event("planner", "model", {"text": "hmm", "thought": True}, {"text": "Go to Rome."}, at=2),
        _event("planner", "model", _call("c1", city="Rome", a=1), at=3),
        _event("planner", "user", _response("c1", {"result": "ok"}), at=4),
        _event("writer", "model", {"text": "Rome it is."}, at=5),
    )
    messages, warnings = _imported(session)
    quoted = messages[1]["content"]
    assert messages[1]["role"] == "user" and quoted[0]["text"] == PREAMBLE
    assert quoted[1]["text"] == f"[planner] said:\n{BEGIN}\nGo to Rome.\n{END}"
    call = messages[2]["content"][1]["text"]
    assert (
        call == f"[planner] called tool `lookup` with parameters:\n{BEGIN}\n{{'a': 1, 'city': 'Rome'}}\n{END}"
    )
    result = messages[3]["content"][1]["text"]
    assert result == f"[planner] `lookup` tool returned result:\n{BEGIN}\n{{'result': 'ok'}}\n{END}"
    assert messages[4] == {"role": "assistant", "content": "Rome it is."}
    assert "skipped 1 × another agent's thought (not replayed)" in warnings
    assert any("agent 'writer'" in w for w in warnings)


def test_what_adk_leaves_out_is_counted() -> None:
    session = _session(
        _event("user", "user", {"text": "hi"}, at=1),
        _event("bot", "model", {"text": "thinking", "thought": True}, at=2),
        _event("bot", "model", {"text": "par"}, at=3, partial=True),
        _event("bot", "model", _call("lost"), at=4),
        _event("bot", "user", _response("nobody", {"result": "x"}), at=5),
        {"author": "bot", "invocationId": "i1", "actions": {"stateDelta": {"k": 1}}, "timestamp": 6},
        _event("bot", "model", {"text": "Hello."}, at=7),
    )
    messages, warnings = _imported(session)
    assert messages == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}]
    for kind in (
        "event of thoughts or empty parts only",
        "partial (streamed) event",
        "function call no response answers (ADK leaves it out)",
        "function response to no call (ADK leaves it out)",
        "event with nothing to send (no content)",
    ):
        assert f"skipped 1 × {kind} (not replayed)" in warnings


def test_a_rewind_annuls_the_invocations_it_goes_back_over() -> None:
    session = _session(
        _event("user", "user", {"text": "first"}, at=1, invocation="a"),
        _event("bot", "model", {"text": "one"}, at=2, invocation="a"),
        _event("user", "user", {"text": "second"}, at=3, invocation="b"),
        _event("bot", "model", {"text": "two"}, at=4, invocation="b"),
        {"author": "user", "invocationId": "c", "actions": {"rewindBeforeInvocationId": "b"}, "timestamp": 5},
        _event("user", "user", {"text": "again"}, at=6, invocation="d"),
        _event("bot", "model", {"text": "three"}, at=7, invocation="d"),
    )
    messages, warnings = _imported(session)
    assert [m["content"] for m in messages] == ["first", "one", "again", "three"]
    assert "skipped 2 × event annulled by a rewind (not replayed)" in warnings


def test_a_message_list_of_another_format_is_not_taken() -> None:
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert import_lines(lines(*chat), "c.jsonl").format == "openai-chat"


def _compaction(start: Any, end: Any) -> dict[str, Any]:
    summary = {"role": "model", "parts": [{"text": "Summary."}]}
    squeezed = {"startTimestamp": start, "endTimestamp": end, "compactedContent": summary}
    return {"author": "user", "invocationId": "k", "actions": {"compaction": squeezed}, "timestamp": 3}


@pytest.mark.parametrize(
    ("event", "said"),
    [
        ("not an event", "is not an ADK event"),
        ({"author": "user", "invocationId": "i", "timestamp": "soon"}, "no `timestamp` in seconds"),
        ({"author": "user", "invocationId": "i", "timestamp": 10**400}, "no `timestamp` in seconds"),
        (_compaction("1", "2"), "a compaction without a `start_timestamp` and an `end_timestamp`"),
        (_compaction(1, None), "a compaction without a `start_timestamp` and an `end_timestamp`"),
        (_compaction(10**400, 2), "a compaction without a `start_timestamp` and an `end_timestamp`"),
        (_event("bot", "model", {"functionCall": {"name": "f", "args": {}}}, at=2), "string `id` and `name`"),
        (_event("bot", "user", {"functionResponse": {"name": "f", "response": {}}}, at=2), "string `id`"),
        (_event("user", "user", {"inlineData": {"data": 3}}, at=2), "inline data"),
        (_event("user", "user", "a part", at=2), "not shaped as google-adk writes it"),
    ],
)
def test_a_shape_adk_never_writes_is_an_error_at_its_event(tmp_path: Path, event: Any, said: str) -> None:
    path = tmp_path / "s.json"
    text = json.dumps(_session(_event("user", "user", {"text": "hi"}, at=1), event), indent=1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TraceError) as raised:
        import_file(path)
    assert said in str(raised.value)
    assert raised.value.line is not None and raised.value.line > 10  # the second event's, not the file's


def test_import_writes_nothing_for_a_bad_session(tmp_path: Path) -> None:
    path, out = tmp_path / "s.json", tmp_path / "out.jsonl"
    path.write_text(json.dumps(_session({"author": "user", "invocationId": "i"})), encoding="utf-8")
    code, _, err = run_cli("import", str(path), "--out", str(out))
    assert code == 2 and "timestamp" in err and not out.exists()


def test_a_call_compacted_away_comes_back_before_its_surviving_response() -> None:
    summary = {"role": "model", "parts": [{"text": "Summary."}]}
    compaction = {"startTimestamp": 1, "endTimestamp": 2, "compactedContent": summary}
    session = _session(
        _event("user", "user", {"text": "go"}, at=1),
        _event("bot", "model", _call("c1", x=1), at=2),
        {"author": "user", "invocationId": "k", "actions": {"compaction": compaction}, "timestamp": 3},
        _event("bot", "user", _response("c1", {"result": "done"}), at=4),
        _event("bot", "model", {"text": "Finished."}, at=5),
    )
    messages, warnings = _imported(session)
    assert [m["role"] for m in messages] == ["assistant", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["id"] == "c1" and messages[2]["content"] == "done"
    assert any("compacted away" in w for w in warnings)


def test_a_session_without_a_model_turn_says_no_agent_is_known_not_agent_empty() -> None:
    session = _session(
        _event("user", "user", {"text": "hi"}, at=1),
        _event("bot", "user", _response("c9", {"result": "late"}), at=2),
        _event("helper", "user", {"text": "a note"}, at=3),
    )
    messages, warnings = _imported(session)
    assert [m["role"] for m in messages] == ["user", "user"]
    assert any(w.startswith("no model turn tells which agent is replayed") for w in warnings)
    assert not any("agent ''" in w for w in warnings)
