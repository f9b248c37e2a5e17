"""The OpenHands agent SDK's events as the SDK sends them (`events_to_messages` and each event's
`to_llm_message`, openhands-sdk 1.58.2): an observation's `extended_content` after its result,
a rejection in the SDK's words, adjacent user messages as one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.workloads.importers import import_file


def _action(call_id: str, response: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": command})
    return {
        "kind": "ActionEvent",
        "source": "agent",
        "thought": [],
        "tool_name": "terminal",
        "tool_call_id": call_id,
        "tool_call": {"id": call_id, "name": "terminal", "arguments": arguments, "origin": "completion"},
        "llm_response_id": response,
    }


def _user(text: str) -> dict[str, Any]:
    return {
        "kind": "MessageEvent",
        "source": "user",
        "llm_message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }


EVENTS: list[dict[str, Any]] = [
    {
        "kind": "SystemPromptEvent",
        "source": "agent",
        "system_prompt": {"type": "text", "text": "You act."},
        "tools": [],
    },
    _user("First part"),
    _user("Second part 😀"),
    _action("c1", "r1", "rm -rf /"),
    _action("c2", "r1", "ls"),
    _action("c3", "r1", "cat a.txt"),
    {
        "kind": "UserRejectObservation",
        "source": "user",
        "tool_name": "terminal",
        "tool_call_id": "c1",
        "rejection_reason": "Too dangerous",
    },
    {"kind": "UserRejectObservation", "source": "user", "tool_name": "terminal", "tool_call_id": "c2"},
    {
        "kind": "ObservationEvent",
        "source": "environment",
        "tool_name": "terminal",
        "tool_call_id": "c3",
        "observation": {
            "kind": "TerminalObservation",
            "content": [{"type": "text", "text": "hello"}],
            "is_error": False,
        },
        "extended_content": [{"type": "text", "text": "<RULE>a.txt is read-only</RULE>"}],
    },
    {
        "kind": "MessageEvent",
        "source": "agent",
        "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    },
]


def test_the_sdk_events_import_as_the_sdk_sends_them(tmp_path: Path) -> None:
    source = tmp_path / "events.json"
    source.write_text(json.dumps(EVENTS), encoding="utf-8")
    messages = import_file(source).messages
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]
    assert messages[1]["content"] == [
        {"type": "text", "text": "First part"},
        {"type": "text", "text": "Second part 😀"},
    ]  # adjacent plain user turns are one, their parts in order
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert results["c1"] == "Action rejected: Too dangerous"
    assert results["c2"] == "Action rejected: User rejected the action"  # the SDK's default reason
    assert results["c3"] == [
        {"type": "text", "text": "hello"},
        {"type": "text", "text": "<RULE>a.txt is read-only</RULE>"},
    ]
