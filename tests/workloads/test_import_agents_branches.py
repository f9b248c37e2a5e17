"""An OpenAI Agents SDK `AdvancedSQLiteSession` database replays one branch of a session at a
time, each read as the SDK reads it (`importers.agents_branches`)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxlab.scenarios.sources import source_text
from ctxlab.workloads.importers import SessionError, import_file, import_lines, read_any, replay_text
from ctxlab.workloads.importers.base import Report
from ctxlab.workloads.importers.stores import SQLITE, chosen, records
from tests.workloads.importing import DATA

DB = DATA / "openai-agents" / "branches.sqlite"
CONVERSATIONS = [("trip-3", "main"), ("trip-3", "ferry"), ("visitor-9", None)]
"""The sample's conversations in replay order (a plain `SQLiteSession`'s session has no branch)."""


def items(db: Path, session: int) -> list[Any]:
    """The items ctxlab hands the `openai-agents` reader for conversation `session`."""
    report = Report(source=str(db), session=session)
    return [entry.value for entry in chosen(records(db, SQLITE), report, {})]


def user_texts(db: Path, session: int) -> list[str]:
    return [m["content"] for m in import_file(db, session=session).messages if m["role"] == "user"]


def copy(tmp_path: Path) -> Path:
    db = tmp_path / "b.sqlite"
    shutil.copy2(DB, db)
    return db


def test_each_session_and_branch_is_one_conversation_main_first() -> None:
    assert user_texts(DB, 0) == [
        "Weather in Oslo?",
        "And in Bergen?",
        "Book a train to Bergen.",
        "Thanks, that is all.",
    ]
    assert user_texts(DB, 1) == ["Weather in Oslo?", "Is there a ferry to Bergen?"]
    assert user_texts(DB, 2) == ["Weather in Paris?"]
    ferry = import_file(DB, session=1)
    assert ferry.messages[-1]["content"] == "Ferries to Bergen leave at 08:00 and 14:30."
    assert [m["tool_calls"][0]["function"]["name"] for m in ferry.messages if m.get("tool_calls")] == [
        "get_weather",
        "ferry_times",
    ]


def test_the_note_names_the_session_the_branch_and_how_many_there_are() -> None:
    notes = [import_file(DB, session=n).warnings[-1] for n in range(3)]
    assert notes == [
        "session 'trip-3' on branch 'main' (one of its 2 branches) is replayed: conversation 0 of the "
        "store's 3 (counted from 0)",
        "session 'trip-3' on branch 'ferry' (one of its 2 branches) is replayed: conversation 1 of the "
        "store's 3 (counted from 0)",
        "session 'visitor-9' is replayed: conversation 2 of the store's 3 (counted from 0)",
    ]


def test_a_branch_made_without_items_is_no_conversation_and_a_session_past_them_is_refused() -> None:
    with sqlite3.connect(f"{DB.as_uri()}?mode=ro&immutable=1", uri=True) as connection:
        reserved = connection.execute("SELECT branch_id FROM branch_reservations ORDER BY 1").fetchall()
    connection.close()
    assert reserved == [("empty",), ("ferry",), ("main",)]
    with pytest.raises(SessionError, match="beyond the file's 3 conversations"):
        import_file(DB, session=3)


def test_a_deleted_branch_is_no_conversation(tmp_path: Path) -> None:
    db = copy(tmp_path)
    with sqlite3.connect(db) as connection:  # as the SDK's delete_branch leaves it
        connection.execute("DELETE FROM message_structure WHERE branch_id = 'ferry'")
        connection.execute(
            "DELETE FROM agent_messages WHERE session_id = 'trip-3' "
            "AND id NOT IN (SELECT message_id FROM message_structure)"
        )
    connection.close()
    assert import_file(db).warnings[-1] == (
        "session 'trip-3' on branch 'main' (its only branch) is replayed: conversation 0 of the "
        "store's 2 (counted from 0)"
    )
    assert user_texts(db, 1) == ["Weather in Paris?"]


def test_an_empty_message_structure_reads_as_a_sqlite_session_database(tmp_path: Path) -> None:
    db = copy(tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM message_structure")
        rows = connection.execute(
            "SELECT message_data FROM agent_messages WHERE session_id = 'trip-3' ORDER BY id"
        )
        every = [json.loads(data) for (data,) in rows]
    connection.close()
    assert items(db, 0) == every
    assert (
        import_file(db).warnings[-1]
        == "session 'trip-3' is replayed: conversation 0 of the store's 2 (counted from 0)"
    )
    with pytest.raises(SessionError, match="beyond the file's 2 conversations"):
        import_file(db, session=2)


def test_a_row_on_no_branch_is_left_out_and_counted(tmp_path: Path) -> None:
    db = copy(tmp_path)
    stray = {"role": "user", "content": "written without structure"}
    with sqlite3.connect(db) as connection:
        connection.execute(
            "INSERT INTO agent_messages (session_id, message_data) VALUES ('trip-3', ?)", (json.dumps(stray),)
        )
    connection.close()
    assert items(db, 0) == items(DB, 0) and items(db, 1) == items(DB, 1)
    assert (
        "(one of its 2 branches; 1 of its rows on no branch left out) is replayed"
        in import_file(db).warnings[-1]
    )


def test_a_table_the_structure_does_not_name_reads_as_before(tmp_path: Path) -> None:
    db = copy(tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute(
            "CREATE TABLE other_items (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT)"
        )
        connection.execute(
            "INSERT INTO other_items SELECT id, session_id, message_data FROM agent_messages "
            "WHERE session_id = 'trip-3'"
        )
    connection.close()
    assert [m["content"] for m in import_file(db, session=3).messages if m["role"] == "user"] == [
        "Weather in Oslo?",
        "And in Bergen?",
        "Book a train to Bergen.",
        "Is there a ferry to Bergen?",
        "Thanks, that is all.",
    ]
    assert "session 'trip-3' of table 'other_items' is replayed" in import_file(db, session=3).warnings[-1]


def test_the_snapshot_replays_each_branch_as_the_database() -> None:
    text = source_text(DB)
    for session in range(3):
        replayed = replay_text(text, str(DB), name="b", session=session)
        assert replayed.script == read_any(DB, name="b", session=session).script


# ---------------------------------------------------------------------------------------------
# Against the SDK itself, when it is installed


def sdk_items(db: Path, session_id: str, branch: str | None) -> tuple[list[Any], list[str]]:
    """The SDK's own `get_items()` of a session on `branch` (a fresh session's default when None)
    and its `list_branches()`, read from a copy (the SDK writes to the file it opens)."""
    memory = pytest.importorskip("agents.extensions.memory.advanced_sqlite_session")

    async def read() -> tuple[list[Any], list[str]]:
        session = memory.AdvancedSQLiteSession(session_id=session_id, db_path=db)
        try:
            if branch is not None:
                await session.switch_to_branch(branch)
            listed = [b["branch_id"] for b in await session.list_branches()]
            return list(await session.get_items()), listed
        finally:
            session.close()

    return asyncio.run(read())


def test_each_branch_replays_the_items_the_sdks_get_items_gives(tmp_path: Path) -> None:
    db = copy(tmp_path)
    for number, (session_id, branch) in enumerate(CONVERSATIONS):
        if branch is None:
            continue
        got, listed = sdk_items(db, session_id, branch)
        assert items(DB, number) == got
        assert sorted(listed) == ["ferry", "main"]
        ours = import_file(DB, session=number).messages
        assert ours == import_lines([json.dumps(item) for item in got], "items.jsonl").messages
    assert items(DB, 0) == sdk_items(db, "trip-3", None)[0]


def test_a_plain_sessions_items_are_those_sqlite_session_gives(tmp_path: Path) -> None:
    agents = pytest.importorskip("agents")
    db = copy(tmp_path)

    async def read() -> list[Any]:
        session = agents.SQLiteSession(session_id="visitor-9", db_path=db)
        try:
            return list(await session.get_items())
        finally:
            session.close()

    assert items(DB, 2) == asyncio.run(read())


def test_a_row_on_no_branch_is_not_read_by_the_sdk_either(tmp_path: Path) -> None:
    db = copy(tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute(
            "INSERT INTO agent_messages (session_id, message_data) VALUES ('trip-3', ?)",
            (json.dumps({"role": "user", "content": "written without structure"}),),
        )
    connection.close()
    ours = items(db, 0)
    assert ours == sdk_items(tmp_path / "b.sqlite", "trip-3", None)[0]
