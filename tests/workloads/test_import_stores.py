"""Stores of conversations read as the frameworks leave them: an OpenAI Agents SDK SQLiteSession
database and a strands FileSessionManager session directory (`importers.stores`)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxlab.scenarios.sources import source_text, text_sha256
from ctxlab.workloads.importers import SessionError, import_file, read_any, replay_text, write_jsonl
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"
DB = DATA / "openai-agents" / "sessions.sqlite"
SESSION = DATA / "bedrock-converse" / "session_leaf-walk"
ADK_DB = DATA / "google-adk" / "sessions.db"
LANGGRAPH_DB = DATA / "langgraph" / "checkpoints.sqlite"
OPENCODE_DB = DATA / "opencode" / "opencode.db"
OPENCODE_STORAGE = DATA / "opencode" / "storage"


def test_a_sqlite_session_database_holds_one_conversation_a_session_in_order_of_its_first_row() -> None:
    first, second = import_file(DB), import_file(DB, session=1)
    assert first.format == second.format == "openai-agents"
    assert first.messages[0]["content"] == "What about my invoices A-17 and A-18?"
    assert first.messages[-1]["content"] == "A refund of 40 EUR for A-17 was requested."  # row 14
    assert second.messages[0]["content"] == "Weather in Paris?"
    assert any("'visitor-7'" in w for w in second.warnings)


def test_a_strands_session_directory_holds_one_conversation_an_agent_read_in_numeric_order() -> None:
    botanist = import_file(SESSION)
    records = sorted(
        (json.loads(p.read_text()) for p in (SESSION / "agents" / "agent_botanist" / "messages").iterdir()),
        key=lambda r: r["message_id"],
    )
    listed = import_file_of_records(records)
    assert botanist.messages == listed
    librarian = import_file(SESSION, session=1)
    assert librarian.messages == import_file(SESSION / "agents" / "agent_librarian").messages


def import_file_of_records(records: list[object]) -> tuple[object, ...]:
    from ctxlab.workloads.importers import import_lines

    return import_lines([json.dumps(records)], "records.json").messages


@pytest.mark.parametrize("store", [DB, ADK_DB, SESSION])
def test_a_session_past_the_stores_conversations_is_refused(store: Path) -> None:
    with pytest.raises(SessionError, match="beyond the file's 2 conversations"):
        import_file(store, session=2)


BRANCHES_DB = DATA / "openai-agents" / "branches.sqlite"
DATABASES = [DB, BRANCHES_DB, ADK_DB, LANGGRAPH_DB, OPENCODE_DB]
"""Every store sample that is a SQLite database."""


@pytest.mark.parametrize("store", DATABASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_database_is_read_only_nothing_written_no_journal_left(tmp_path: Path, store: Path) -> None:
    db = tmp_path / store.name
    shutil.copy2(store, db)
    before, stat = db.read_bytes(), db.stat()
    write_jsonl(db, tmp_path / "out.jsonl", session=1)
    read_any(db)
    assert db.read_bytes() == before and db.stat().st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.jsonl", store.name])


def _changed(tmp_path: Path, sql: str) -> Path:
    """A copy of the SQLiteSession sample (`s.sqlite`) changed by `sql`."""
    db = tmp_path / "s.sqlite"
    shutil.copy2(DB, db)
    with sqlite3.connect(db) as connection:
        connection.execute(sql)
    connection.close()
    return db


def test_a_row_that_is_not_json_is_told_at_its_row(tmp_path: Path) -> None:
    db = _changed(tmp_path, "UPDATE agent_messages SET message_data = '{\"role\": ' WHERE id = 10")
    import_file(db)  # session 0 does not hold row 10
    with pytest.raises(TraceError, match=r"s\.sqlite: row 10: not JSON"):
        import_file(db, session=1)


def test_a_row_of_a_shape_the_sdk_never_writes_is_told_at_its_row(tmp_path: Path) -> None:
    db = _changed(tmp_path, "UPDATE agent_messages SET message_data = '[1]' WHERE id = 11")
    with pytest.raises(TraceError, match=r"s\.sqlite: row 11: "):
        import_file(db, session=1)


def test_a_custom_table_name_is_read_and_a_database_without_one_is_not_recognised(tmp_path: Path) -> None:
    db = _changed(tmp_path, "ALTER TABLE agent_messages RENAME TO my_items")
    assert import_file(db).messages == import_file(DB).messages
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE t (x)")
    connection.close()
    with pytest.raises(TraceError, match="not recognised"):
        import_file(other)


def test_a_message_file_that_is_not_valid_is_told_at_that_file(tmp_path: Path) -> None:
    session = tmp_path / "session_x"
    shutil.copytree(SESSION, session)
    bad = session / "agents" / "agent_librarian" / "messages" / "message_2.json"
    bad.write_text('{\n  "message": \n')
    import_file(session)
    with pytest.raises(TraceError, match=r"message_2\.json:3: .*not JSON"):
        import_file(session, session=1)
    bad.write_text(json.dumps({"message": {"role": "robot", "content": []}, "message_id": 2}))
    with pytest.raises(TraceError, match=r"agent_librarian/messages/message_2\.json: "):
        import_file(session, session=1)


def test_a_symbolic_link_inside_a_session_directory_is_not_followed(tmp_path: Path) -> None:
    session = tmp_path / "session_x"
    shutil.copytree(SESSION, session)
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    link = session / "agents" / "agent_librarian" / "messages" / "message_9.json"
    link.symlink_to(outside)
    with pytest.raises(TraceError, match="symbolic link"):
        import_file(session, session=1)
    link.unlink()
    (session / "agents" / "agent_zz").symlink_to(session / "agents" / "agent_librarian")
    with pytest.raises(TraceError, match="symbolic link"):
        import_file(session)


@pytest.mark.parametrize("make", [Path.mkdir, os.mkfifo], ids=["a folder", "a pipe"])
def test_a_message_name_that_is_no_regular_file_is_refused_at_it_never_waited_on(
    tmp_path: Path, make: Callable[[Path], None]
) -> None:
    session = tmp_path / "session_x"
    shutil.copytree(SESSION, session)
    odd = session / "agents" / "agent_librarian" / "messages" / "message_9.json"
    make(odd)
    for command in ("import", "replay"):
        code, _, err = run_cli(command, str(session), "--session", "1", "--out", str(tmp_path / "out"))
        assert code == 2 and "message_9.json: is named as a message file but is no regular file" in err
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_no_session_is_not_recognised(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="not recognised"):
        import_file(tmp_path)


@pytest.mark.parametrize("store", [DB, ADK_DB, SESSION, LANGGRAPH_DB, OPENCODE_DB, OPENCODE_STORAGE])
def test_a_stores_snapshot_replays_as_the_store_and_its_digest_is_the_same_wherever_it_lies(
    store: Path, tmp_path: Path
) -> None:
    text = source_text(store)
    moved = tmp_path / store.name
    (shutil.copytree if store.is_dir() else shutil.copy2)(store, moved)
    assert text_sha256(source_text(moved)) == text_sha256(text)
    for session in (0, 1):
        replayed = replay_text(text, str(store), name="s", session=session)
        assert replayed.script == read_any(store, name="s", session=session).script


@pytest.mark.parametrize("command", ["import", "replay"])
def test_a_name_too_long_to_look_up_is_no_store_and_exits_2_saying_why(tmp_path: Path, command: str) -> None:
    too_long = tmp_path / ("t" * 300 + ".json")
    code, _, err = run_cli(command, str(too_long), "--out", str(tmp_path / "out.jsonl"))
    assert code == 2
    assert "cannot be looked up: File name too long" in err
    assert not (tmp_path / "out.jsonl").exists()
