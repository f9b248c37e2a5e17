"""What a request log's server-side context edits become: an Anthropic compaction block's
summary is the assistant's text, with a note; a request asking the API to edit the context is
noted (the model saw less than the requests hold); an OpenAI screenshot given by `file_id`,
whose image the log lacks, is counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.workloads.importers import import_file

READ = {"name": "Read", "description": "read", "input_schema": {"type": "object", "properties": {"p": {}}}}


def _anthropic_log(tmp_path: Path, messages: list[dict[str, Any]], edits: list[dict[str, Any]]) -> Path:
    request = {"model": "m", "max_tokens": 100, "tools": [READ], "messages": messages}
    if edits:
        request["context_management"] = {"edits": edits}
    answer = {"role": "assistant", "type": "message", "content": [{"type": "text", "text": "ok"}]}
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"request": request, "response": answer}), encoding="utf-8")
    return path


def test_a_compaction_blocks_summary_is_replayed_and_noted(tmp_path: Path) -> None:
    summary = "SUMMARY: a was read."
    messages = [
        {"role": "user", "content": "read a"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": "a"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]},
        {"role": "assistant", "content": [{"type": "compaction", "content": summary}]},
        {"role": "user", "content": "continue"},
    ]
    imported = import_file(_anthropic_log(tmp_path, messages, [{"type": "compact_20260112"}]))
    assert {"role": "assistant", "content": summary} in imported.messages
    assert imported.messages[-2:] == (
        {"role": "user", "content": "continue"},
        {"role": "assistant", "content": "ok"},
    )
    assert any(
        w.startswith("a server-side compaction block: its summary is replayed") for w in imported.warnings
    )
    assert any("edit the context (compact_20260112)" in w for w in imported.warnings)


def test_a_request_asking_the_api_to_clear_tool_uses_is_noted(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "hi"}]
    imported = import_file(_anthropic_log(tmp_path, messages, [{"type": "clear_tool_uses_20250919"}]))
    (noted,) = [w for w in imported.warnings if "edit the context" in w]
    assert "(clear_tool_uses_20250919)" in noted and "anthropic-clear" in noted


def test_a_screenshot_given_by_file_id_is_counted(tmp_path: Path) -> None:
    items = [
        {"type": "message", "role": "user", "content": "screenshot"},
        {"type": "computer_call", "call_id": "c1", "action": {"type": "screenshot"}, "status": "completed"},
        {
            "type": "computer_call_output",
            "call_id": "c1",
            "output": {"type": "computer_screenshot", "file_id": "f1"},
        },
    ]
    answer = {
        "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
        ]
    }
    path = tmp_path / "log.jsonl"
    path.write_text(
        json.dumps({"request": {"model": "m", "input": items}, "response": answer}) + "\n", encoding="utf-8"
    )
    imported = import_file(path)
    assert any("screenshot given by file_id" in w for w in imported.warnings)
