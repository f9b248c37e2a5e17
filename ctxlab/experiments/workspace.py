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

from ctxlab.engine.workspace import NamedWorkspace, OffloadNames, UnsafePathError, safe_path


@dataclass(slots=True)
class DirectoryWorkspace(NamedWorkspace):
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

    def _load(self, path: str) -> bytes:
        return self._inside(path).read_bytes()

    def paths(self) -> tuple[str, ...]:
        """Every file stored under the root so far, as sorted relative POSIX paths."""
        found = []
        for folder, _dirs, names in os.walk(self.root):  # symlinked folders are not entered
            for name in names:
                path = Path(folder, name)
                if not name.endswith(".part") and path.resolve().is_relative_to(self.root):
                    found.append(path.relative_to(self.root).as_posix())
        return tuple(sorted(found))
