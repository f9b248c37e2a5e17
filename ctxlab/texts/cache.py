"""An on-disk cache of text sets read from an installed package (AgentScope's texts).

Reading AgentScope's texts needs `agentscope` imported, which takes seconds (it pulls in its
model and tool SDKs), so a set read once is kept in the user's cache folder and read back by
later processes: a run, a sweep worker or a test session pays the import once per installed
package, not once per process.

Invariants:
- The cache never changes what a run sees. An entry's key is a fingerprint of everything the
  texts are read from (the relative path, size and modification time of every Python file of the
  package) and of the code that reads them (given by the caller); a changed package or reader
  gives another key, and the texts are read afresh.
- Entries are written atomically (a temporary file renamed into place). A missing, unreadable
  or corrupt entry, or a folder that cannot be written, is the same as no cache.
- Nothing is stored in the project: the folder is `$CTXLAB_CACHE_DIR`, else
  `$XDG_CACHE_HOME/ctxlab`, else `~/.cache/ctxlab`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def cache_folder() -> Path:
    """Where entries live (see the module docstring)."""
    explicit = os.environ.get("CTXLAB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxlab"


def fingerprint(package: Path, readers: Sequence[Path]) -> str:
    """A key that changes when a Python file of `package` or the content of a reader changes.

    The files are those `package.rglob("*.py")` finds (symbolic links to folders not followed),
    in the order of their paths' parts, walked with `os.walk`: half the time, the same key."""
    digest = hashlib.sha256()
    for relative in sorted(_python_files(package), key=lambda path: path.split(os.sep)):
        stat = os.stat(os.path.join(package, relative))
        digest.update(f"{relative}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    for reader in readers:
        digest.update(reader.read_bytes())
    return digest.hexdigest()[:32]


def _python_files(package: Path) -> list[str]:
    """The `.py` files under `package`, as paths relative to it."""
    found = []
    for folder, _, names in os.walk(package):
        inside = os.path.relpath(folder, package)
        found += [
            name if inside == "." else os.path.join(inside, name) for name in names if name.endswith(".py")
        ]
    return found


def _entry(name: str, key: str) -> Path:
    return cache_folder() / f"{name}-{key}.json"


def load(name: str, key: str) -> dict[str, Any] | None:
    """The entry stored under `name` and `key`, or None when there is none that reads back."""
    try:
        value = json.loads(_entry(name, key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def store(name: str, key: str, value: dict[str, Any]) -> None:
    """Keep `value` under `name` and `key` (silently nothing when the folder cannot be written)."""
    path = _entry(name, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(value, out, ensure_ascii=False, sort_keys=True)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
