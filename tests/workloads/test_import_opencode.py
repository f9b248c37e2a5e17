"""OpenCode exports: read as OpenCode sends a session's history (steps split, parallel calls, an
error result, an interrupted call, failed messages left out, a completed compaction cutting the
history, a tool's picture after its message), odd shapes refused at their line, and the CLI's
import and replay end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import SessionError, import_file, import_lines
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, assert_paired, imported, replayed_requests

STEPS = DATA / "opencode/session-export.json"
COMPACTED = DATA / "opencode/compacted-export.json"


def _export(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _refusal(value: Any) -> str:
    with pytest.raises(TraceError) as caught:
        list(import_lines(json.dumps(value, indent=2).splitlines(), "export.json", "opencode").messages)
    return str(caught.value)


def test_the_steps_sample_is_read_as_opencode_sends_it() -> None:
    got = import_file(STEPS)
    messages = list(got.messages)
    assert got.format == "opencode"
    assert [m["role"] for m in messages] == [
        *("user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "tool", "assistant"),
        *("user", "assistant", "tool", "assistant", "tool", "user"),
    ]
    first = messages[0]["content"]
    assert [p["type"] for p in first] == [
        "text",
        "image_url",
        "text",
        "text",
    ]  # the text file's part left out
    step = messages[1]
    assert (
        step["reasoning_content"] == "The screenshot is tiny; run the test and read the test file together."
    )
    assert step["content"] == "I'll run the test and read it at the same time."
    assert [c["id"] for c in step["tool_calls"]] == ["call_run1", "call_read1"]
    assert (
        json.loads(step["tool_calls"][0]["function"]["arguments"])["command"]
        == "pytest tests/test_cart.py -q"
    )
    assert messages[5]["is_error"] is True and messages[5]["content"].startswith("Error: You must read")
    assert messages[13] == {
        "role": "tool",
        "tool_call_id": "call_watch1",
        "content": "[Tool execution was interrupted]",
        "is_error": True,
    }
    picture = messages[14]["content"]
    assert picture[0] == {"type": "text", "text": "Attached image(s) from tool result:"}
    assert picture[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "skipped 1 × assistant message that ended in an error (not replayed)" in got.warnings
    assert "skipped 1 × text/plain file part in a user message (not replayed)" in got.warnings
    assert any("interrupted error result" in w for w in got.warnings)
    assert_paired(messages)


def test_a_completed_compaction_cuts_the_history_at_its_question() -> None:
    got = import_file(COMPACTED)
    messages = list(got.messages)
    assert messages[:3] == [
        {"role": "user", "content": "What did we do so far?"},
        {
            "role": "assistant",
            "content": "We renamed load_cfg to load_config in config.py, app.py and cli.py "
            "(found with grep). Next: run the tests.",
        },
        {"role": "user", "content": "Continue if you have next steps"},
    ]
    assert messages[4] == {
        "role": "tool",
        "tool_call_id": "call_test1",
        "content": "[Old tool result content cleared]",
    }
    assert "skipped 2 × message before a completed compaction (not replayed)" in got.warnings


def test_a_compaction_whose_summary_failed_cuts_nothing() -> None:
    export = _export(COMPACTED)
    export["messages"][3]["info"]["error"] = {"name": "UnknownError", "data": {"message": "boom"}}
    got = import_lines(json.dumps(export).splitlines(), "export.json")
    messages = list(got.messages)
    assert messages[0] == {"role": "user", "content": "Rename load_cfg to load_config everywhere."}
    assert messages[6] == {"role": "user", "content": "What did we do so far?"}  # no summary after it


def test_a_tail_start_id_keeps_the_messages_from_it_after_the_summary() -> None:
    export = _export(COMPACTED)
    export["messages"][2]["parts"][0]["tail_start_id"] = "msg_c1000000002aBcDeFgHiJkLm"
    messages = list(import_lines(json.dumps(export).splitlines(), "export.json").messages)
    whole = list(import_file(COMPACTED).messages)
    assert messages[:2] == whole[:2]  # the compaction's question and its summary first
    assert messages[2]["role"] == "assistant" and messages[2]["tool_calls"][0]["id"] == "call_grep1"
    assert messages[-len(whole) + 2 :] == whole[2:]  # then the tail, then what followed the summary
    assert_paired(messages)


def test_a_tail_start_id_naming_no_earlier_message_keeps_every_message() -> None:
    export = _export(COMPACTED)
    export["messages"][2]["parts"][0]["tail_start_id"] = "msg_c9999999999aBcDeFgHiJkLm"
    got = import_lines(json.dumps(export).splitlines(), "export.json")
    assert got.messages[0] == {"role": "user", "content": "Rename load_cfg to load_config everywhere."}
    assert not any("before a completed compaction" in w for w in got.warnings)


def test_an_interrupted_call_with_its_output_keeps_the_output() -> None:
    export = _export(STEPS)
    state = export["messages"][3]["parts"][4]["state"]
    export["messages"][3]["parts"][4]["state"] = {
        **state,
        "status": "error",
        "error": "Tool execution aborted",
        "metadata": {"interrupted": True, "output": "2 passed so far"},
        "time": {"start": 1, "end": 2},
    }
    messages = list(import_lines(json.dumps(export).splitlines(), "export.json").messages)
    assert messages[13] == {"role": "tool", "tool_call_id": "call_watch1", "content": "2 passed so far"}


def test_a_call_s_input_is_sent_as_javascript_writes_it() -> None:
    export = _export(STEPS)
    state = export["messages"][1]["parts"][3]["state"]
    state["input"] = {"timeout": 1.0, "seed": 12345678901234567890, "tolerance": 1e-7, "2": "-x"}
    messages = list(import_lines(json.dumps(export).splitlines(), "export.json").messages)
    sent = messages[1]["tool_calls"][0]["function"]  # as Node 20's JSON.stringify writes it
    assert sent == {
        "name": "bash",
        "arguments": '{"2":"-x","timeout":1,"seed":12345678901234567000,"tolerance":1e-7}',
    }


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda e: e["messages"][1]["parts"][3].update(type="tool-call"), "no OpenCode part"),
        (lambda e: e["messages"][1]["parts"][3]["state"].update(status="done"), "state.status is 'done'"),
        (lambda e: e["messages"][1]["parts"][3].pop("callID"), "has no 'toolCallId'"),
        (lambda e: e["messages"][1]["parts"][3]["state"].update(output=3), "state.output is not text"),
        (lambda e: e["messages"][1]["info"].update(role="system"), "no OpenCode message"),
    ],
)
def test_odd_shapes_are_refused_at_their_message_s_line(edit: Any, said: str) -> None:
    export = _export(STEPS)
    edit(export)
    refused = _refusal(export)
    text = json.dumps(export, indent=2)
    line = text[: text.index('"msg_a1000000002aBcDeFgHiJkLm"')].count("\n")  # the message's opening brace
    assert said in refused
    assert refused.startswith(f"export.json:{line - 1}:") or refused.startswith(f"export.json:{line}:")


def test_an_export_holds_one_session() -> None:
    with pytest.raises(SessionError):
        list(import_file(STEPS, session=1).messages)


def test_cli_import_and_replay_send_the_export(tmp_path: Path) -> None:
    said, err, written = imported(STEPS, tmp_path / "session.jsonl")
    assert "(opencode)" in said and "no system prompt" in err
    assert written == list(import_file(STEPS).messages)
    requests = replayed_requests(COMPACTED, tmp_path / "results")
    last = requests[-1]["messages"]
    assert last[0] == {"role": "user", "content": "What did we do so far?"}
    assert any(m.get("content") == "[Old tool result content cleared]" for m in last)
