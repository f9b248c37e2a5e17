"""Writes `storage/`: OpenCode's session storage from before its database, holding the two export
samples beside it as two sessions, laid out as OpenCode 1.1 wrote it (anomalyco/opencode
`packages/opencode/src/storage/json-migration.ts` at 062aa8c024a00b7348dd3160c0b4fbbfce074ee2
reads it; written for the lab with Python's json).

`session/<projectID>/<sessionID>.json` holds a session's info, `message/<sessionID>/<messageID>.json`
a message's info and `part/<messageID>/<partID>.json` a part, each whole, its ids included, as
OpenCode's `Storage.write` writes them (two-space indented), with `project/<projectID>.json` beside
them. The compacted export is given its own session id (both exports name the same one), as in
`opencode.db`. Run `python make_storage.py [FOLDER]`.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

try:
    from tests.data.importers.opencode.make_db import HERE, SECOND_SESSION, _export
except ModuleNotFoundError:  # run as a script, from its folder
    from make_db import HERE, SECOND_SESSION, _export  # type: ignore[no-redef]


def _put(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")


def write(folder: Path, export: dict[str, Any]) -> None:
    """One export's session written into the storage `folder`."""
    info = export["info"]
    project = {"id": info["projectID"], "worktree": info["directory"], "vcs": "git", "time": info["time"]}
    _put(folder / "project" / f"{info['projectID']}.json", project)
    _put(folder / "session" / info["projectID"] / f"{info['id']}.json", info)
    for message in export["messages"]:
        _put(folder / "message" / info["id"] / f"{message['info']['id']}.json", message["info"])
        for part in message["parts"]:
            _put(folder / "part" / message["info"]["id"] / f"{part['id']}.json", part)


def main(path: str) -> None:
    """Writes the storage folder at `path` (replacing one there)."""
    folder = Path(path)
    shutil.rmtree(folder, ignore_errors=True)
    write(folder, _export("compacted-export.json", SECOND_SESSION))
    write(folder, _export("session-export.json"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(HERE / "storage"))
