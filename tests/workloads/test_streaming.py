"""Replay reads a transcript in one pass (issue 19): whatever the format, memory holds the
workload being built and the entry being read, never the file, its lines or its messages; and
streaming maps exactly what importing whole maps."""

from __future__ import annotations

import gc
import hashlib
import json
import random
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.scenarios.sources import text_sha256
from ctxlab.workloads.importers import import_file, read_any, replay_text, workload_of
from ctxlab.workloads.trace import TraceWorkload, text_lines
from tests.workloads.importing import DATA
from tests.workloads.test_importers import FIXTURES

ROUNDS = 200
RESULT_CHARS = 16_000
TRANSIENT_SHARE = 0.25
"""Memory a read may hold beyond the workload it returns, as a share of the file's size: room
for the per-message bookkeeping of the mapping (a few hundred bytes a message), none for a
second copy of the content (reading the lines or the messages into a list would take more than
the file's size)."""
ENTRY_COPIES = 4
"""Copies of the entry being read a read may hold (its line, its JSON value, its messages)."""


def _bound(text: str) -> float:
    longest = max(len(line) for line in text.split("\n"))
    return TRANSIENT_SHARE * len(text) + ENTRY_COPIES * longest


def _result(rng: random.Random) -> str:
    return rng.randbytes(RESULT_CHARS // 2).hex()


def _openai_chat(rng: random.Random) -> Iterator[dict[str, Any]]:
    yield {"role": "system", "content": "You are an agent."}
    yield {"role": "user", "content": "Fix the bug."}
    for i in range(ROUNDS):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}}
        yield {"role": "assistant", "content": f"step {i}", "tool_calls": [call]}
        yield {"role": "tool", "tool_call_id": f"c{i}", "content": _result(rng)}
    yield {"role": "assistant", "content": "done"}


def _codex(rng: random.Random) -> Iterator[dict[str, Any]]:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2025-09-02T09:00:00.000Z", "type": "response_item", "payload": payload}

    yield {
        "timestamp": "2025-09-02T09:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": "s", "cwd": "/w"},
    }
    yield item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it."}]})
    for i in range(ROUNDS):
        yield item(
            {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}', "call_id": f"c{i}"}
        )
        yield item({"type": "function_call_output", "call_id": f"c{i}", "output": _result(rng)})
    yield item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]})


def _anthropic_log(rng: random.Random) -> Iterator[dict[str, Any]]:
    """A request log: every request repeats the conversation so far, so the file grows with the
    square of the conversation while the replay needs only the last request."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix it."}]
    tools = [{"name": "read", "description": "Read.", "input_schema": {"type": "object", "properties": {}}}]
    for i in range(ROUNDS // 8):
        yield {
            "model": "m",
            "max_tokens": 1024,
            "system": "Agent.",
            "tools": tools,
            "messages": list(messages),
        }
        use = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {}}
        messages.append({"role": "assistant", "content": [use]})
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": _result(rng)}
        messages.append({"role": "user", "content": [result]})


SOURCES: dict[str, Callable[[random.Random], Iterator[dict[str, Any]]]] = {
    "openai-chat": _openai_chat,
    "codex": _codex,
    "anthropic-messages": _anthropic_log,
}


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.jsonl"
    with path.open("w", encoding="utf-8") as sink:
        for entry in SOURCES[name](random.Random(7)):
            sink.write(json.dumps(entry) + "\n")
    return path


def _transient(read: Callable[[], TraceWorkload]) -> tuple[TraceWorkload, int]:
    """What `read` returns, and the most memory it held beyond what it returned."""
    gc.collect()
    tracemalloc.start()
    try:
        workload = read()
        gc.collect()
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return workload, peak - retained


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_file_replays_holding_one_entry_beyond_the_workload(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name)
    workload, transient = _transient(lambda: read_any(path))
    assert len(list(workload.script.calls())) >= ROUNDS // 8 - 1
    assert transient < _bound(path.read_text(encoding="utf-8")), (transient, path.stat().st_size)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_scenario_s_text_replays_holding_one_entry_beyond_the_workload(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name)
    text = path.read_text(encoding="utf-8")
    workload, transient = _transient(lambda: replay_text(text, path.name, name=name))
    assert workload.script == read_any(path).script
    assert transient < _bound(text), (transient, len(text))


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_streaming_maps_what_importing_whole_maps(fixture: str) -> None:
    path = DATA / fixture
    streamed, whole = read_any(path), workload_of(import_file(path), name=path.stem, source=str(path))
    assert streamed == whole


@given(st.text(alphabet="ab\n\r\u2028 ", max_size=40))
def test_text_lines_split_at_newlines_only(text: str) -> None:
    expected = text.split("\n")
    if expected[-1] == "":
        expected.pop()
    assert list(text_lines(text)) == expected


@given(st.text(max_size=50).filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t)))
def test_a_text_digest_read_in_chunks_is_the_digest_of_its_bytes(text: str) -> None:
    assert text_sha256(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
