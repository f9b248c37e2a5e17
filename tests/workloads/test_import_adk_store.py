"""A Google ADK `DatabaseSessionService` SQLite database read as a store of conversations
(`importers.stores`): each session one conversation, its events in ADK's order, each row
located."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.importers.stores import ADK, kind_of
from ctxlab.workloads.trace import TraceError

DB = Path(__file__).resolve().parents[1] / "data" / "importers" / "google-adk" / "sessions.db"


def _copy(tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    shutil.copy2(DB, db)
    return db


def _change(db: Path, *statements: str) -> None:
    connection = sqlite3.connect(db)
    with connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()


def test_an_adk_database_is_told_by_its_events_table_and_holds_one_conversation_a_session() -> None:
    assert kind_of(DB) == ADK
    first, second = import_file(DB), import_file(DB, session=1)
    assert first.format == second.format == "google-adk"
    assert [m["role"] for m in first.messages] == ["user", "assistant", "tool", "assistant"]
    assert first.messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21°C"}
    assert any("session 'one-call' of user 'user-1' in app 'weather_app'" in w for w in first.warnings)
    assert [c["id"] for c in second.messages[1]["tool_calls"]] == ["call_2", "call_3"]
    assert [m.get("tool_call_id") for m in second.messages[2:4]] == ["call_2", "call_3"]


def test_a_sessions_events_read_as_the_same_events_listed_in_a_file() -> None:
    connection = sqlite3.connect(f"{DB.as_uri()}?mode=ro&immutable=1", uri=True)
    rows = connection.execute("SELECT event_data FROM events WHERE session_id = 'parallel'").fetchall()
    connection.close()
    listed = import_lines([json.dumps([json.loads(r[0]) for r in rows])], "events.json")
    assert import_file(DB, session=1).messages == listed.messages


def test_events_are_read_in_adks_order_and_sessions_in_the_order_of_their_first_event(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    _change(  # rows written backwards: the timestamps, not the rowids, order them
        db,
        "CREATE TABLE copy AS SELECT * FROM events ORDER BY rowid DESC",
        "DELETE FROM events",
        "INSERT INTO events SELECT * FROM copy",
        "DROP TABLE copy",
    )
    assert import_file(db).messages == import_file(DB).messages
    _change(db, "UPDATE events SET timestamp = '1969-12-31 00:00:00.000000' WHERE id = 'id-10'")
    assert import_file(db).messages[0]["content"] == "Weather in Paris and Tokyo?"


def test_a_missing_event_data_timestamp_is_the_rows_and_the_rows_id_and_invocation_win(
    tmp_path: Path,
) -> None:
    db = _copy(tmp_path)
    _change(
        db,
        "UPDATE events SET event_data = json_remove(event_data, '$.timestamp', '$.invocation_id')",
        "UPDATE events SET timestamp = '1970-01-01 00:00:16.500000' WHERE id = 'id-17'",
    )
    assert import_file(db, session=1).messages == import_file(DB, session=1).messages


@pytest.mark.parametrize(
    ("data", "told"),
    [("'{\"author\": '", "not JSON"), ("'{\"content\": {}}'", "ADK events"), ("x'ff'", "not UTF-8")],
)
def test_a_bad_row_is_told_at_its_row(tmp_path: Path, data: str, told: str) -> None:
    db = _copy(tmp_path)
    _change(db, f"UPDATE events SET event_data = {data} WHERE rowid = 6")
    import_file(db)  # session 0 does not hold row 6
    with pytest.raises(TraceError, match=rf"s\.db: events row 6: .*{told}"):
        import_file(db, session=1)


def test_the_pickled_version_0_and_an_unknown_version_are_refused_never_unpickled(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    _change(db, "UPDATE adk_internal_metadata SET value = '2'")
    with pytest.raises(TraceError, match="schema version '2' is not read"):
        import_file(db)
    old = tmp_path / "v0.db"
    _change(
        old,
        "CREATE TABLE events (id, app_name, user_id, session_id, invocation_id, author, actions BLOB, "
        "timestamp, content)",
        "INSERT INTO events VALUES ('e', 'a', 'u', 's', 'i', 'user', x'80049500', '2026-01-01', '{}')",
    )
    assert kind_of(old) == ADK
    with pytest.raises(TraceError, match="pickled data is never unpickled"):
        import_file(old)
