"""Odd but real shapes of the OpenAI chat, OpenAI Responses, SWE-agent, mini-swe-agent and
LangGraph transcripts: each is replayed as its agent sent it, or refused at its file and line,
never replayed with part of what the model was sent left out unsaid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.workloads.importers import import_lines
from tests.workloads.importing import lines, replayed_requests, run_cli

SYSTEM = {"role": "system", "content": "You list files."}
USER = {"role": "user", "content": "List the files."}


def requests_of(tmp_path: Path, name: str, text: str) -> list[dict[str, Any]]:
    """The requests `ctxlab replay --preset none --record-requests` sends for a transcript."""
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    return replayed_requests(source, tmp_path / "results")


def last_messages(tmp_path: Path, name: str, text: str) -> list[dict[str, Any]]:
    """The messages of the last request the replay sends."""
    return list(requests_of(tmp_path, name, text)[-1]["messages"])


# ---------------------------------------------------------------------------------------------
# OpenAI chat


def test_chat_an_assistant_refusal_is_the_text_the_replay_sends_back(tmp_path: Path) -> None:
    refusal = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    text = "\n".join(lines(SYSTEM, USER, refusal, {"role": "user", "content": "Why not?"}))
    sent = last_messages(tmp_path, "chat.jsonl", text)
    assert {"role": "assistant", "content": "I can't help with that."} in sent


def test_chat_a_custom_tools_call_is_replayed_with_its_input(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch"
    custom = {"id": "call_1", "type": "custom", "custom": {"name": "apply_patch", "input": patch}}
    called = {"role": "assistant", "content": None, "tool_calls": [custom]}
    answered = {"role": "tool", "tool_call_id": "call_1", "content": "Done."}
    text = "\n".join(lines(SYSTEM, USER, called, answered, {"role": "assistant", "content": "Added."}))
    sent = last_messages(tmp_path, "chat.jsonl", text)
    (function,) = [c["function"] for m in sent for c in m.get("tool_calls") or []]
    assert function["name"] == "apply_patch" and json.loads(function["arguments"]) == {"input": patch}
    assert answered in sent


# ---------------------------------------------------------------------------------------------
# SWE-agent and mini-swe-agent


def test_swe_agent_a_string_part_is_text_and_an_audio_part_is_counted() -> None:
    audio = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    asked = {"role": "user", "content": ["Fix the bug in ", {"type": "text", "text": "calc.py"}, audio]}
    acted = {
        "role": "assistant",
        "content": "Look first.",
        "thought": "Look first.",
        "action": "ls",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
    }
    observed = {"role": "tool", "content": "calc.py", "tool_call_ids": ["call_1"]}
    trajectory = {"history": [SYSTEM, asked, acted, observed], "info": {}}
    imported = import_lines([json.dumps(trajectory)], "run.traj")
    assert imported.format == "swe-agent"
    assert imported.messages[1]["content"] == [
        {"type": "text", "text": "Fix the bug in "},
        {"type": "text", "text": "calc.py"},
    ]
    assert "skipped 1 × content part 'input_audio' (not replayed)" in imported.warnings


# ---------------------------------------------------------------------------------------------
# OpenAI Responses request logs


def _call(call_id: str = "call_1", name: str = "ls", arguments: str = '{"path": "."}') -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def _output(call_id: str = "call_1", output: Any = "notes.txt") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _said(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def _logged(items: list[Any], output: list[Any], response: str, **request: Any) -> dict[str, Any]:
    body = {"model": "gpt-5", "instructions": "You list files.", "input": items, **request}
    return {"request": body, "response": {"id": response, "output": output}}


ASKED = {"role": "user", "content": "List the files."}
TITLE = _logged([{"role": "user", "content": "A title for: List the files."}], [_said("Files")], "resp_t")


def test_responses_a_side_request_after_the_agents_last_is_not_the_conversation() -> None:
    chained = [
        _logged([ASKED], [_call()], "resp_1"),
        _logged([_output()], [_said("One file: notes.txt.")], "resp_2", previous_response_id="resp_1"),
    ]
    resent = [
        _logged([ASKED], [_call()], "resp_1"),
        _logged([ASKED, _call(), _output()], [_said("One file: notes.txt.")], "resp_2"),
    ]
    for log in (chained, resent):
        imported = import_lines(lines(*log, TITLE), "requests.jsonl")
        assert [m["role"] for m in imported.messages] == ["system", "user", "assistant", "tool", "assistant"]
        assert imported.messages[-1]["content"] == "One file: notes.txt."
        assert any("request outside the conversation" in w for w in imported.warnings)


def test_responses_the_shell_and_apply_patch_tools_calls_are_replayed_with_their_results() -> None:
    shell = {"type": "shell_call", "call_id": "call_sh", "action": {"commands": ["ls"], "timeout_ms": 1000}}
    ran = {
        "type": "shell_call_output",
        "call_id": "call_sh",
        "output": [{"stdout": "notes.txt\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}],
    }
    patch = {
        "type": "apply_patch_call",
        "call_id": "call_ap",
        "operation": {"type": "update_file", "path": "notes.txt", "diff": "@@\n-old\n+new\n"},
    }
    applied = {"type": "apply_patch_call_output", "call_id": "call_ap", "status": "failed"}
    applied["output"] = "no match"
    items = [ASKED, shell, ran, patch, applied, _said("Done.")]
    imported = import_lines(lines(_logged(items, [], "resp_1")), "requests.jsonl")
    calls = [m["tool_calls"][0]["function"] for m in imported.messages if m.get("tool_calls")]
    assert [c["name"] for c in calls] == ["shell", "apply_patch"]
    assert json.loads(calls[1]["arguments"])["path"] == "notes.txt"
    results = [m for m in imported.messages if m["role"] == "tool"]
    assert [r["content"] for r in results] == ["notes.txt\n", "no match"]
    assert results[1].get("is_error") is True
    assert not imported.warnings


def test_responses_a_response_logged_as_the_entry_after_its_request_answers_it(tmp_path: Path) -> None:
    first, second = (
        _logged([ASKED], [_call()], "resp_1"),
        _logged([_output()], [_said("notes.txt")], "resp_2"),
    )
    second["request"]["previous_response_id"] = "resp_1"
    log = [first["request"], {"object": "response", **first["response"]}]
    log += [second["request"], {"object": "response", **second["response"]}]
    sent = last_messages(tmp_path, "requests.jsonl", "\n".join(lines(*log)))
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["function"]["name"] == "ls"
    orphan = {"object": "response", **second["response"]}
    imported = tmp_path / "orphan.jsonl"
    imported.write_text("\n".join(lines(first, orphan)), encoding="utf-8")
    code, _, err = run_cli("import", str(imported), "--out", str(tmp_path / "out.jsonl"))
    assert code == 2 and "orphan.jsonl:2: a Responses response that follows no request awaiting one" in err


# ---------------------------------------------------------------------------------------------
# What replay refuses, import refuses


def test_import_refuses_with_replays_words_a_transcript_with_nothing_to_replay(tmp_path: Path) -> None:
    answered = {"role": "tool", "tool_call_id": "call_1", "content": "notes.txt"}
    nothing = {
        "system.jsonl": lines(SYSTEM),
        "developer.json": [json.dumps([{"role": "developer", "content": "You list files."}])],
        "results.jsonl": lines(SYSTEM, answered),
        "empty-input.jsonl": lines({"model": "gpt-5", "instructions": "You list files.", "input": []}),
        "null-input.jsonl": lines({"model": "gpt-5", "instructions": "You list files.", "input": None}),
    }
    for name, text in nothing.items():
        source, out = tmp_path / name, tmp_path / f"{name}.out.jsonl"
        source.write_text("\n".join(text) + "\n", encoding="utf-8")
        code, _, err = run_cli("import", str(source), "--out", str(out))
        replayed, _, refused = run_cli("replay", str(source), "--out", str(tmp_path / "runs"), "--quiet")
        assert (code, replayed) == (2, 2) and not out.exists(), (name, err)
        assert f"{name}:1: the transcript has only" in err and err.strip() in refused, (err, refused)


def test_a_tool_result_naming_no_call_id_is_refused_as_such_at_its_line(tmp_path: Path) -> None:
    called = {
        "role": "assistant",
        "content": "Look first.",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
    }
    unnamed = {
        "run.traj": (
            {"history": [SYSTEM, USER, called, {"role": "tool", "content": "a.py", "tool_call_ids": None}]},
            "'history[3].tool_call_ids' is missing or null",
        ),
        "mini.traj.json": (
            {
                "trajectory_format": "mini-swe-agent-1.1",
                "info": {},
                "messages": [SYSTEM, USER, called, {"role": "tool", "content": "a.py"}],
            },
            "'messages[3].tool_call_id' is missing or null",
        ),
    }
    for name, (trajectory, field) in unnamed.items():
        source, out = tmp_path / name, tmp_path / f"{name}.out.jsonl"
        source.write_text("\n" + json.dumps(trajectory) + "\n", encoding="utf-8")
        code, _, err = run_cli("import", str(source), "--out", str(out))
        assert code == 2 and not out.exists(), err
        assert f"{name}:2: a tool result names no call id ({field}); set it to the id of the call" in err, err
        assert "has no call before it" not in err
