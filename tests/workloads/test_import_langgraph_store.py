"""A LangGraph `SqliteSaver` database read as a store of conversations (`importers.stores`,
`importers.langgraph_store`): each root thread one conversation, its latest checkpoint's messages
read as a LangGraph thread's, every checkpoint decoded without LangGraph; pickled and encrypted
checkpoints refused."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.importers.stores import ADK, LANGGRAPH, SQLITE, kind_of, records
from ctxlab.workloads.trace import TraceError

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"
DB = DATA / "langgraph" / "checkpoints.sqlite"
msgpack = pytest.importorskip("msgpack")


def _copy(tmp_path: Path) -> Path:
    db = tmp_path / "c.sqlite"
    shutil.copy2(DB, db)
    return db


def _change(db: Path, statement: str, *values: object) -> None:
    connection = sqlite3.connect(db)
    with connection:
        connection.execute(statement, values)
    connection.close()


def _latest(db: Path, thread: str, kind: str, blob: bytes) -> None:
    """The thread's latest checkpoint replaced by `blob` of type `kind`."""
    _change(
        db,
        "UPDATE checkpoints SET type = ?, checkpoint = ? WHERE thread_id = ? AND checkpoint_id = "
        "(SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '')",
        kind,
        blob,
        thread,
        thread,
    )


def _message(module: str, name: str, fields: dict[str, object]) -> object:
    """A message as LangGraph's serializer writes a pydantic model."""
    return msgpack.ExtType(5, msgpack.packb([module, name, fields, "model_validate_json"]))


def test_each_thread_is_a_conversation_in_the_order_it_was_first_written() -> None:
    assert kind_of(DB) == LANGGRAPH
    weather, trimmed, nested = (import_file(DB, session=n) for n in range(3))
    assert weather.format == "langgraph"
    assert [m["role"] for m in weather.messages] == [
        *("system", "user", "assistant", "tool", "tool", "assistant", "user", "assistant")
    ]
    assert [c["id"] for c in weather.messages[2]["tool_calls"]] == ["call_1", "call_2"]
    assert weather.messages[4] == {
        "role": "tool",
        "tool_call_id": "call_2",
        "content": "unknown city",
        "is_error": True,
    }
    image = weather.messages[6]["content"][1]
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/png;base64,")
    assert (
        "thread 'weather' is replayed: conversation 0 of the store's 3 (counted from 0)" in weather.warnings
    )
    assert "skipped 7 × earlier checkpoint (not replayed)" in weather.warnings
    assert [m["content"] for m in trimmed.messages] == ["What is this?", "That is a red pixel."]
    assert "skipped 3 × subgraph checkpoint (not replayed)" in nested.warnings
    assert [m["content"] for m in nested.messages] == ["Echo me", "echo: Echo me"]


def test_the_latest_checkpoint_is_the_greatest_id_as_get_tuple_reads_it_not_the_last_row(
    tmp_path: Path,
) -> None:
    db = _copy(tmp_path)
    copied = "INSERT INTO checkpoints SELECT thread_id, checkpoint_ns, ?, NULL, type, checkpoint, metadata "
    _change(db, copied + "FROM checkpoints WHERE rowid = 1", "0")  # a newer row of an older id
    assert import_file(db).messages == import_file(DB).messages
    _change(db, copied + "FROM checkpoints WHERE rowid = 2", "z")
    assert [m["role"] for m in import_file(db).messages] == ["system", "user"]


def test_a_thread_with_only_subgraph_checkpoints_is_no_conversation(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    _change(db, "UPDATE checkpoints SET checkpoint_ns = 'sub:1' WHERE thread_id = 'trimmed'")
    assert import_file(db, session=1).messages == import_file(DB, session=2).messages
    with pytest.raises(TraceError, match="the file's 2 conversations"):
        import_file(db, session=2)


def test_the_other_stores_are_still_told_apart() -> None:
    assert kind_of(DATA / "google-adk" / "sessions.db") == ADK
    assert kind_of(DATA / "openai-agents" / "sessions.sqlite") == SQLITE


def test_a_database_without_the_checkpoints_columns_is_not_this_store(tmp_path: Path) -> None:
    db = tmp_path / "other.sqlite"
    _change(db, "CREATE TABLE checkpoints (thread_id, checkpoint_id, checkpoint)")
    assert kind_of(db) == SQLITE
    with pytest.raises(TraceError, match="the format is not recognised"):
        import_file(db)


@pytest.mark.parametrize(
    ("kind", "told"),
    [
        ("pickle", "is pickled .* pickled data is never unpickled"),
        ("msgpack+aes", r"is encrypted \(aes, EncryptedSerializer\) and is not decrypted"),
        ("null", r"is of type 'null', which holds none to read \(msgpack and json do\)"),
        ("bytes", "is of type 'bytes'"),
    ],
)
def test_pickled_encrypted_and_empty_checkpoints_are_refused_at_their_row(
    tmp_path: Path, kind: str, told: str
) -> None:
    db = _copy(tmp_path)
    _latest(db, "trimmed", kind, b"\x80\x04\x95")
    import_file(db)  # only the thread read is refused
    with pytest.raises(TraceError, match=rf"c\.sqlite: checkpoints row 9: its latest checkpoint {told}"):
        import_file(db, session=1)


def test_a_json_checkpoint_is_read_as_its_lc_constructor_messages(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    messages = [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": fields}
        for kind, fields in [("HumanMessage", {"content": "Hi"}), ("AIMessage", {"content": "Hello"})]
    ]
    _latest(db, "nested", "json", json.dumps({"v": 1, "channel_values": {"messages": messages}}).encode())
    assert import_file(db, session=2).messages == (
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    )


@pytest.mark.parametrize("depth", [101, 600, 100_000])
def test_a_json_checkpoint_nested_deeper_than_msgpack_is_read_is_refused_at_its_row(
    tmp_path: Path, depth: int
) -> None:
    db = _copy(tmp_path)
    nested = "[" * depth + "]" * depth
    text = '{"channel_values": {"messages": [{"type": "human", "content": ' + nested + "}]}}"
    _latest(db, "nested", "json", text.encode())
    with pytest.raises(TraceError, match=r"checkpoints row 15: .*JSON nested deeper than 100 levels"):
        import_file(db, session=2)


@pytest.mark.parametrize(
    ("messages", "told"),
    [
        (
            [_message("my.notes", "Note", {"content": "x"})],
            "message 0 is a my.notes.Note, not a LangChain message",
        ),
        ([msgpack.ExtType(6, msgpack.packb(["<f8", [1], "C", b"\0" * 8]))], "message 0 is a numpy array"),
        ([{"type": "human", "content": b"raw"}], "message 0 holds raw bytes"),
        (
            [{"type": "human", "content": msgpack.ExtType(42, b"")}],
            "message 0 holds a MessagePack ext of type 42",
        ),
        ("text", "messages channel holds a str, not a list"),
        ([], "holds no messages"),
    ],
)
def test_messages_the_reader_cannot_read_are_refused_naming_what_they_are(
    tmp_path: Path, messages: object, told: str
) -> None:
    db = _copy(tmp_path)
    _latest(db, "nested", "msgpack", msgpack.packb({"channel_values": {"messages": messages}}))
    with pytest.raises(TraceError, match=rf"checkpoints row 15: .*{told}"):
        import_file(db, session=2)


def test_what_no_message_holds_is_ignored_and_objects_elsewhere_are_their_data(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    uuid = msgpack.ExtType(0, msgpack.packb(["uuid", "UUID", "12345678123456781234567812345678"]))
    when = msgpack.ExtType(3, msgpack.packb(["datetime", "datetime", "2026-01-02T03:04:05", "fromisoformat"]))
    human = _message("langchain_core.messages.human", "HumanMessage", {"content": "Hi", "type": "human"})
    snapshot = msgpack.ExtType(7, msgpack.packb([human]))  # a delta channel's snapshot
    channels = {"messages": snapshot, "array": msgpack.ExtType(6, b"\xc0"), "raw": b"\x00"}
    meta = {"uuid": uuid, "at": when}
    ai = _message("langchain_core.messages.ai", "AIMessage", {"content": "Hello", "response_metadata": meta})
    channels["messages"] = msgpack.ExtType(7, msgpack.packb([human, ai]))
    _latest(db, "nested", "msgpack", msgpack.packb({"channel_values": channels}))
    assert [m["content"] for m in import_file(db, session=2).messages] == ["Hi", "Hello"]
    text = next(s.text for s in records(db, LANGGRAPH) if s.conversation == "thread 'nested'")
    kwargs = json.loads(text or "")["channel_values"]["messages"][1]["kwargs"]
    assert kwargs["response_metadata"] == {
        "uuid": "12345678-1234-5678-1234-567812345678",
        "at": "2026-01-02T03:04:05",
    }


def test_a_cut_checkpoint_is_told_at_its_row_with_the_offset(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    _change(db, "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 40) WHERE rowid = 18")
    with pytest.raises(
        TraceError, match=r"checkpoints row 18: .*not MessagePack .*truncated: .* at byte \d+"
    ):
        import_file(db)


def test_a_latest_checkpoint_on_two_rows_is_refused_at_its_row_not_read_twice(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    connection = sqlite3.connect(db)
    with connection:  # a table without SqliteSaver's primary key, the latest checkpoint copied
        connection.executescript(
            "CREATE TABLE saved AS SELECT * FROM checkpoints; DROP TABLE checkpoints; "
            "CREATE TABLE checkpoints AS SELECT * FROM saved ORDER BY rowid; DROP TABLE saved; "
            "INSERT INTO checkpoints SELECT * FROM checkpoints WHERE rowid = 9"
        )
    connection.close()
    assert len(import_file(db, session=0).messages) == len(import_file(DB, session=0).messages)
    with pytest.raises(TraceError, match=r"checkpoints row 19: its latest checkpoint .* is on 2 rows"):
        import_file(db, session=1)


@pytest.mark.skipif(importlib.util.find_spec("langgraph.checkpoint.sqlite") is None, reason="needs LangGraph")
def test_the_messages_are_those_langgraph_reads_back(tmp_path: Path) -> None:
    from langchain_core.messages import messages_to_dict
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.data.importers.langgraph.make_checkpoints import main

    fresh = tmp_path / "fresh.sqlite"
    main(str(fresh))  # the package as installed now, as well as the committed file
    for db in (DB, fresh):
        texts = [s.text for s in records(db, LANGGRAPH)]
        connection = sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        saver = SqliteSaver(connection)
        for session, thread in enumerate(("weather", "trimmed", "nested")):
            found = saver.get_tuple({"configurable": {"thread_id": thread}})
            assert found is not None
            theirs = messages_to_dict(found.checkpoint["channel_values"]["messages"])
            ours = json.loads(texts[session] or "")["channel_values"]["messages"]
            assert [m["kwargs"] for m in ours] == [m["data"] for m in theirs]
            listed = import_lines([json.dumps({"values": {"messages": theirs}})], "thread.json")
            assert import_file(db, session=session).messages == listed.messages
        connection.close()
