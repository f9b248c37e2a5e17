"""Workspaces: paths never escape the root, and offloads read back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolResultBlock
from ctxlab.core.messages.codec import decode_messages, encode_messages
from ctxlab.core.messages.message import Message
from ctxlab.engine.workspace import (
    PAYLOAD_SLICE,
    InMemoryWorkspace,
    UnsafePathError,
    context_payload,
    safe_path,
)
from ctxlab.experiments.workspace import DirectoryWorkspace
from tests.strategies import messages, parts, texts

UNSAFE = [
    "../x",
    "/etc/passwd",
    "a/../../b",
    "a\x00b",
    "a\\b",
    "C:/x",
    "c:x",
    "x" * 300,
    "",
    "./a",
    "a//b",
    "workspace://../../etc",
    "offload/..",
    ".",
]


@pytest.mark.parametrize("path", UNSAFE)
def test_unsafe_paths_are_refused(path: str) -> None:
    with pytest.raises(UnsafePathError):
        safe_path(path)


def test_in_memory_read_refuses_escapes_and_unknown_paths() -> None:
    ws = InMemoryWorkspace()
    with pytest.raises(UnsafePathError):
        ws.read("../secret")
    with pytest.raises(FileNotFoundError):
        ws.read("offload/context-0009.json")


def test_directory_workspace_refuses_symlink_escapes(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    ws = DirectoryWorkspace(tmp_path / "ws")
    (ws.root / "offload").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="outside"):
        ws.read("offload/secret.txt")
    with pytest.raises(UnsafePathError, match="outside"):
        ws.offload_tool_result(ToolResultBlock(id="x", name="t", output=(TextBlock(text="a"),)))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@given(st.lists(messages, max_size=4), st.lists(parts, min_size=1, max_size=3), texts)
def test_both_workspaces_store_the_same_bytes_at_the_same_paths(
    msgs: list[Message], output: list[TextBlock | DataBlock], text: str
) -> None:
    memory = InMemoryWorkspace()
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        disk = DirectoryWorkspace(Path(root))
        result = ToolResultBlock(id="../../etc/passwd", name="../x", output=tuple(output))
        plain = ToolResultBlock(id="c", name="t", output=(TextBlock(text=text),))
        image = DataBlock(media_type="image/png", source="aGk=", kind="base64", name="../../evil.png")
        for ws in (memory, disk):
            paths = [
                ws.offload_context(tuple(msgs)),
                ws.offload_tool_result(result),
                ws.offload_tool_result(plain),
                ws.offload_data(image),
            ]
            assert all(".." not in p for p in paths)
            assert decode_messages(json.loads(ws.read(paths[0]))) == msgs
            assert ws.read(paths[2]) == text.encode("utf-8")
            assert ws.read(paths[3]) == b"aGk="
        assert {p: memory.read(p) for p in memory.files} == {p: disk.read(p) for p in memory.files}


@given(st.lists(messages, max_size=5))
def test_codec_round_trips(msgs: list[Message]) -> None:
    assert decode_messages(json.loads(json.dumps(encode_messages(msgs)))) == msgs


@given(st.lists(messages, max_size=6), st.integers(1, 4))
def test_a_stored_span_is_its_messages_json_whatever_its_length(msgs: list[Message], copies: int) -> None:
    """Spans shorter and longer than a slice of `context_payload`, and as long as several."""
    span = tuple(msgs) * (copies * PAYLOAD_SLICE // max(len(msgs), 1) // 2 + 1)
    for length in {0, 1, len(span) // 2, len(span)}:
        encoded = json.dumps(encode_messages(span[:length]), ensure_ascii=False).encode("utf-8")
        assert context_payload(span[:length]) == encoded
