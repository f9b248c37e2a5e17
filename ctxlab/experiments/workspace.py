"""A workspace in a directory: offloads written as files under one root.

Invariants:
- Every path goes through `ctxlab.engine.workspace.safe_path` and is then resolved and checked to
  lie inside the root (symlinks included), so no path from data can write or read outside it.
- Paths and contents are the same as the in-memory workspace's (`OffloadNames` and the same
  payloads), so the two are interchangeable and what is offloaded reads back byte for byte.
- A file is written under a temporary name and renamed, so a crash never leaves a half file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ctxlab.core.blocks import DataBlock, ToolResultBlock
from ctxlab.core.messages import Message
from ctxlab.engine.workspace import (
    DATA_URL_PREFIX,
    OffloadNames,
    UnsafePathError,
    context_payload,
    safe_path,
    tool_result_payload,
)


@dataclass(slots=True)
class DirectoryWorkspace:
    """Offloads files under `root`."""

    root: Path
    names: OffloadNames = field(default_factory=OffloadNames)
    written: int = 0

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root = self.root.resolve()

    def _inside(self, path: str) -> Path:
        target = (self.root / safe_path(path)).resolve()
        if not target.is_relative_to(self.root):
            raise UnsafePathError(f"workspace path {path[:80]!r} resolves outside the workspace")
        return target

    def _store(self, path: str, payload: bytes) -> str:
        target = self._inside(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(target.name + ".part")
        temporary.write_bytes(payload)
        os.replace(temporary, target)
        self.written += len(payload)
        return path

    def offload_context(self, messages: tuple[Message, ...]) -> str:
        """Store a compressed span; returns its path."""
        return self._store(self.names.context(), context_payload(messages))

    def offload_tool_result(self, result: ToolResultBlock) -> str:
        """Store a tool-result remainder; returns its path."""
        return self._store(self.names.tool_result(result), tool_result_payload(result))

    def offload_data(self, block: DataBlock) -> str:
        """Store a data block; returns its `workspace://` URL."""
        return DATA_URL_PREFIX + self._store(self.names.data(block.media_type), block.source.encode("utf-8"))

    def read(self, path: str) -> bytes:
        """The bytes stored at `path`.

        Raises:
            UnsafePathError: the path could escape the workspace.
            FileNotFoundError: nothing is stored there.
        """
        return self._inside(path).read_bytes()
