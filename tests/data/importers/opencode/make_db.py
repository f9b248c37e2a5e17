"""Writes `opencode.db`: an OpenCode session database holding the two export samples beside it
as two sessions, laid out as OpenCode's `session`, `message` and `part` tables are
(anomalyco/opencode `packages/opencode/src/session/session.sql.ts` at
063e8306d9895af9bdd175306cfa4fa3291fd83a; written for the lab with Python's sqlite3).

Each message row holds its info without `id` and `sessionID`, each part row its part without
`id`, `sessionID` and `messageID`, as OpenCode stores them. The compacted export is given its
own session id (both exports name the same one) and is written first, so that the sessions'
order (by `time_created`, then `id`) is not the rows' order. Run `python make_db.py [PATH]`.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SECOND_SESSION = "ses_4b2f9c1e7ffeq0Rk2mTzv1Yb9e"
"""The compacted export's session id in the database (after the steps export's, by id)."""

SCHEMA = """
CREATE TABLE session (
  id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text,
  slug text NOT NULL, directory text NOT NULL, path text, title text NOT NULL, version text NOT NULL,
  share_url text, summary_additions integer, summary_deletions integer, summary_files integer,
  summary_diffs text, cost real NOT NULL DEFAULT 0, tokens_input integer NOT NULL DEFAULT 0,
  tokens_output integer NOT NULL DEFAULT 0, tokens_reasoning integer NOT NULL DEFAULT 0,
  tokens_cache_read integer NOT NULL DEFAULT 0, tokens_cache_write integer NOT NULL DEFAULT 0,
  revert text, permission text, goal text, agent text, model text,
  time_created integer NOT NULL, time_updated integer NOT NULL, time_compacting integer,
  time_archived integer
);
CREATE INDEX session_project_idx ON session (project_id);
CREATE INDEX session_workspace_idx ON session (workspace_id);
CREATE INDEX session_parent_idx ON session (parent_id);
CREATE TABLE message (
  id text PRIMARY KEY, session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL
);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE TABLE part (
  id text PRIMARY KEY, message_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL,
  data text NOT NULL
);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
"""


def _export(name: str, session: str | None = None) -> dict[str, Any]:
    """An export sample, its session id replaced by `session` when one is given."""
    export: dict[str, Any] = json.loads((HERE / name).read_text(encoding="utf-8"))
    if session is not None:
        export["info"]["id"] = session
        for message in export["messages"]:
            message["info"]["sessionID"] = session
            for part in message["parts"]:
                part["sessionID"] = session
    return export


def _without(value: dict[str, Any], *keys: str) -> str:
    return json.dumps({k: v for k, v in value.items() if k not in keys}, ensure_ascii=False)


def _write(connection: sqlite3.Connection, export: dict[str, Any]) -> None:
    info = export["info"]
    created, updated = info["time"]["created"], info["time"]["updated"]
    connection.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (info["id"], info["projectID"], info["slug"], info["directory"], info["title"], info["version"])
        + (created, updated),
    )
    for message in export["messages"]:
        m = message["info"]
        stamp = m["time"]["created"]
        done = m["time"].get("completed", stamp)
        connection.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
            (m["id"], info["id"], stamp, done, _without(m, "id", "sessionID")),
        )
        for part in message["parts"]:
            connection.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (
                    part["id"],
                    m["id"],
                    info["id"],
                    stamp,
                    done,
                    _without(part, "id", "sessionID", "messageID"),
                ),
            )


def main(path: str) -> None:
    """Writes the database at `path` (replacing a file there)."""
    Path(path).unlink(missing_ok=True)
    connection = sqlite3.connect(path)
    with connection:
        connection.executescript(SCHEMA)
        _write(connection, _export("compacted-export.json", SECOND_SESSION))
        _write(connection, _export("session-export.json"))
    connection.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(HERE / "opencode.db"))
