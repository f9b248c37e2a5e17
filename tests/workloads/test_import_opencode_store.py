"""OpenCode's session database read as a store of conversations (`importers.stores`,
`importers.opencode_store`): each session one conversation, read as its export is; the other
stores still told apart; a bad row refused at its row when its session is read; nothing written."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ctxlab.workloads.importers import SessionError, import_file
from ctxlab.workloads.importers.stores import ADK, LANGGRAPH, OPENCODE, SQLITE, kind_of, records
from ctxlab.workloads.trace import TraceError
from tests.data.importers.opencode.make_db import SCHEMA, SECOND_SESSION, main
from tests.workloads.importing import DATA

DB = DATA / "opencode" / "opencode.db"
EXPORTS = (DATA / "opencode" / "session-export.json", DATA / "opencode" / "compacted-export.json")


def _copy(tmp_path: Path) -> Path:
    db = tmp_path / "o.db"
    shutil.copy2(DB, db)
    return db


def _change(db: Path, statement: str, *values: object) -> None:
    """`statement` run on `db`, its tables' NOT NULL constraints lifted first (OpenCode's schema
    keeps NULLs out; a database written otherwise may hold them)."""
    connection = sqlite3.connect(db)
    with connection:
        connection.execute("PRAGMA writable_schema = ON")
        connection.execute("UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE type = 'table'")
    connection.close()
    connection = sqlite3.connect(db)
    with connection:
        connection.execute(statement, values)
    connection.close()


def reads_as_exports(store: Path) -> None:
    """Each session of an OpenCode store imports as the export it was made from, but for the note
    naming the session."""
    for session, export in enumerate(EXPORTS):
        stored, exported = import_file(store, session=session), import_file(export)
        assert stored.format == "opencode"
        assert list(stored.messages) == list(exported.messages)
        told = [w for w in stored.warnings if "is replayed: conversation" not in w]
        assert told == list(exported.warnings)


def test_each_session_reads_as_the_export_it_was_made_from() -> None:
    assert kind_of(DB) == OPENCODE
    reads_as_exports(DB)


def test_each_entry_is_the_export_s_message_with_its_ids_put_back() -> None:
    texts = [s.text for s in records(DB, OPENCODE)]
    messages = []
    for session, export in enumerate(EXPORTS):
        for message in json.loads(export.read_text(encoding="utf-8"))["messages"]:
            if session:  # the compacted export's session has its own id in the database
                message["info"]["sessionID"] = SECOND_SESSION
                for part in message["parts"]:
                    part["sessionID"] = SECOND_SESSION
            messages.append(message)
    assert [json.loads(t or "") for t in texts] == messages


def test_sessions_are_counted_by_time_created_then_id_not_by_row(tmp_path: Path) -> None:
    first, second = import_file(DB, session=0), import_file(DB, session=1)
    assert any(
        "'Fix the failing cart total test') is replayed: conversation 0 of the store's 2" in w
        for w in first.warnings
    )
    assert any(f"session '{SECOND_SESSION}'" in w for w in second.warnings)
    with pytest.raises(SessionError, match="the file's 2 conversations"):
        import_file(DB, session=2)
    db = _copy(tmp_path)
    _change(db, "UPDATE session SET time_created = 1 WHERE id = ?", SECOND_SESSION)
    assert any(f"session '{SECOND_SESSION}'" in w for w in import_file(db).warnings)


def test_a_session_without_messages_is_no_conversation(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    _change(
        db,
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
        "VALUES ('ses_0', 'p', 's', '/', 'empty', '1', 0, 0)",
    )
    assert "Fix the failing" in " ".join(import_file(db).warnings)


def test_the_other_stores_are_still_told_apart(tmp_path: Path) -> None:
    assert kind_of(DATA / "google-adk" / "sessions.db") == ADK
    assert kind_of(DATA / "openai-agents" / "sessions.sqlite") == SQLITE
    assert kind_of(DATA / "langgraph" / "checkpoints.sqlite") == LANGGRAPH
    db = tmp_path / "short.db"
    script = SCHEMA.replace(
        "id text PRIMARY KEY, message_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE,",
        "id text PRIMARY KEY,",
    )
    connection = sqlite3.connect(db)
    connection.executescript(
        script.replace("CREATE INDEX part_message_id_id_idx ON part (message_id, id);", "")
    )
    connection.close()  # OpenCode's tables, the part table without its message_id
    assert kind_of(db) == SQLITE
    with pytest.raises(TraceError, match="the format is not recognised"):
        import_file(db)


@pytest.mark.parametrize(
    ("statement", "place", "told"),
    [
        (
            "UPDATE message SET data = '{\"role\": ' WHERE id = 'msg_c1000000003aBcDeFgHiJkLm'",
            "message row 3",
            "its data is not JSON",
        ),
        (
            "UPDATE message SET data = NULL WHERE id = 'msg_c1000000003aBcDeFgHiJkLm'",
            "message row 3",
            "its data is NULL",
        ),
        (
            "UPDATE part SET data = '[1]' WHERE id = 'prt_b0d30042a1c2QxR7'",
            "part row 12",
            "its data is no JSON object but list",
        ),
        (
            "UPDATE part SET session_id = 'ses_4b2f9c1e7ffeq0Rk2mTzv1Yb8d' WHERE id = 'prt_b0d30042a1c2QxR7'",
            "part row 12",
            "it is a part of a message of session 'ses_4b2f9c1e7ffeq0Rk2mTzv1Yb9e' but names session",
        ),
    ],
)
def test_a_bad_row_is_refused_at_its_row_when_its_session_is_read(
    tmp_path: Path, statement: str, place: str, told: str
) -> None:
    db = _copy(tmp_path)
    _change(db, statement)
    import_file(db, session=0)  # only the session read is refused
    with pytest.raises(TraceError, match=rf"o\.db: {place}: {told}"):
        import_file(db, session=1)


def test_a_message_the_reader_refuses_is_told_at_its_row(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    _change(db, "UPDATE part SET data = '{\"type\": \"odd\"}' WHERE id = 'prt_b0d30042a1c2QxR7'")
    with pytest.raises(
        TraceError, match=r"o\.db: message row 3: messages\[2\]\.parts\[0\] is no OpenCode part"
    ):
        import_file(db, session=1)


def test_the_generator_writes_the_same_sessions(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    main(str(fresh))
    assert list(records(fresh, OPENCODE)) == list(records(DB, OPENCODE))
