"""Stores of conversations as the frameworks leave them: an OpenAI Agents SDK `SQLiteSession`
database, a Google ADK `DatabaseSessionService` SQLite database, a strands `FileSessionManager`
session directory. Each is read as a store of conversations yielding located entries (`Stored`),
the chosen one handed to its format's reader (`openai-agents`, `google-adk`, `bedrock-converse`)
as a file's entries are.

- A SQLite database (its first bytes `SQLite format 3\\0`): each table holding the columns
  `id`, `session_id` and `message_data` (the SDK's `agent_messages`, or the name given to the
  session) holds sessions; a session is one conversation, its rows read in `id` order.
  Sessions are counted from 0 by table name, then by their first row's `id`. An
  `AdvancedSQLiteSession`'s table holds one conversation per session and branch, `main` first,
  each read as the SDK reads that branch (`agents_branches`). A place is
  `FILE: row N` (`FILE: TABLE row N` when several tables hold sessions). The database is opened
  read-only, and, without a `-wal` file beside it, as immutable, so no journal, `-wal` or `-shm`
  file is made (with one, the SDK's pending writes are read through it).
- A SQLite database with ADK's `events` table (columns `id`, `app_name`, `user_id`, `session_id`,
  `invocation_id`, `timestamp`, `event_data`: ADK's schema version 1, its events as JSON) is an
  ADK database instead: a session (its app, user and id) is one conversation; sessions are counted
  from 0 in the order of their first event's `timestamp`, ties by app, user and id; a session's
  events in ADK's order (`timestamp`, then `id`). An entry is the row's `event_data` with the
  row's `id` and `invocation_id` (and its `timestamp`, when `event_data` has none), as ADK
  rebuilds the event. A place is `FILE: events row N` (the row's rowid). The version 0 schema
  (event actions pickled) is refused, never unpickled; so is another version ADK's
  `adk_internal_metadata` names. Opened as the SDK's database is.
- A directory (one without OpenCode's `session` folder, below): a `session_<id>` directory (its
  `agents/agent_<id>/` directories) or one agent's directory; each agent is one conversation,
  counted from 0 in the order of the directories' names, its `messages/message_<n>.json` files
  read in the numeric order of `<n>` (other files are not messages). No path is made from the
  data: only the directories are listed, and a symbolic link inside them is refused, not
  followed, so nothing outside the directory is read; so is a message file's name on what is no
  regular file (a folder, a pipe: never waited on).
- A SQLite database with LangGraph's `checkpoints` table (a `SqliteSaver`'s) is a LangGraph
  store (`langgraph_store`): each thread one conversation, its latest checkpoint's messages one
  entry, at `FILE: checkpoints row N`; opened as the SDK's database is.
- A SQLite database with OpenCode's `session`, `message` and `part` tables (its `opencode.db`)
  is an OpenCode store (`opencode_store`): each session one conversation, each of its messages
  with its parts one entry, at `FILE: message row N` (a bad part at `FILE: part row N`).
- A directory holding a `session` folder (or `storage/session`) is OpenCode's storage from before
  its database (`opencode_files`): each session one conversation, read as the database's are,
  each message one entry, at its file (`FOLDER/message/S/M.json`; a bad part at its own file).

Invariants:
- The I/O is `records` (the store's entries, lazily, in the order above, each with its place
  and its raw text); choosing a conversation and locating its problems is pure (`chosen`).
- A store's snapshot (`snapshot`) is a text: a header line, then one JSON line per entry
  (its conversation, its place, its raw text). A scenario reads a store as that text: its
  digest is the snapshot's sha256, the same wherever the store lies, and the snapshot reads
  back (`parsed`) into the same entries.
- A problem is a `TraceError` at the entry's place: a database row (`FILE: row N`), a message
  file (`FILE` or `FILE:LINE`); an entry that is not JSON only when its conversation is read.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ctxlab.workloads.files import is_folder, json_value, not_json
from ctxlab.workloads.importers import agents_branches, langgraph_store, opencode_files, opencode_store
from ctxlab.workloads.importers.base import Entry, Reader, Report, SessionError, Wire, beyond, cell_text
from ctxlab.workloads.importers.guard import Reading, guarded
from ctxlab.workloads.importers.unfollowed import Unread, read_unfollowed
from ctxlab.workloads.trace import TraceError

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER = '{"ctxlab-store": '
"""How a store's snapshot begins."""
COLUMNS = frozenset({"id", "session_id", "message_data"})
ADK_COLUMNS = frozenset(
    {"id", "app_name", "user_id", "session_id", "invocation_id", "timestamp", "event_data"}
)
MESSAGE_FILE = re.compile(r"message_([0-9]+)\.json")
SQLITE, ADK, STRANDS = "sqlite-session", "adk-database", "strands-session"
LANGGRAPH, OPENCODE, OPENCODE_FILES = "langgraph-checkpoints", "opencode-database", "opencode-storage"
FORMAT_OF = {
    SQLITE: "openai-agents",
    ADK: "google-adk",
    STRANDS: "bedrock-converse",
    LANGGRAPH: "langgraph",
    OPENCODE: "opencode",
    OPENCODE_FILES: "opencode",
}
WHAT = {
    SQLITE: "an OpenAI Agents SDK SQLiteSession database",
    ADK: "a Google ADK DatabaseSessionService database",
    LANGGRAPH: "a LangGraph SqliteSaver checkpoint database",
    OPENCODE: "an OpenCode session database",
    OPENCODE_FILES: "an OpenCode storage folder",
    STRANDS: "a strands session directory",
}


@dataclass(frozen=True, slots=True)
class Stored:
    """One entry of a store: its conversation, its place (appended to the store's path to name
    it: `": row 7"`, `"/agents/agent_a/messages/message_3.json"`), its raw JSON text, or, when
    it has none, why."""

    conversation: str
    at: str
    text: str | None
    problem: str = ""


def kind_of(path: Path | str) -> str | None:
    """The store `path` is (`OPENCODE_FILES` for a directory holding OpenCode's `session` folder,
    `STRANDS` for another; `ADK` for a SQLite database with ADK's
    `events` table, else `LANGGRAPH` for one with LangGraph's `checkpoints` table, else `OPENCODE`
    for one with OpenCode's tables, `SQLITE` for another), or None for another file."""
    where = Path(path)
    if is_folder(where):
        return STRANDS if opencode_files.root(where) is None else OPENCODE_FILES
    try:
        with where.open("rb") as handle:
            if handle.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                return None
    except OSError:
        return None
    try:
        connection = _connect(where)
        try:
            if "session_id" in _columns(connection, "events"):
                return ADK
            if _columns(connection, "checkpoints") >= langgraph_store.COLUMNS:
                return LANGGRAPH
            tables = {t: _columns(connection, t) for t in opencode_store.COLUMNS}
            return OPENCODE if opencode_store.is_opencode(tables) else SQLITE
        finally:
            connection.close()
    except (TraceError, sqlite3.Error):
        return SQLITE  # reading it tells why it cannot be read


def records(path: Path | str, kind: str) -> Iterator[Stored]:
    """The entries of the store at `path`, lazily, in its order (module docstring).

    Raises:
        TraceError: the store is not one the frameworks write, a link inside a directory.
    """
    if kind == SQLITE:
        return _rows(Path(path))
    if kind == OPENCODE_FILES:
        return (Stored(*row) for row in opencode_files.sessions(Path(path)))
    if kind in (LANGGRAPH, OPENCODE):
        return _tabled(Path(path), langgraph_store.threads if kind == LANGGRAPH else opencode_store.sessions)
    return _events(Path(path)) if kind == ADK else _messages(Path(path))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _connect(path: Path) -> sqlite3.Connection:
    """`path` opened read-only; immutable (no lock, no `-shm` made) unless a `-wal` is beside it."""
    wal = path.with_name(path.name + "-wal").exists()
    uri = path.absolute().as_uri() + ("?mode=ro" if wal else "?mode=ro&immutable=1")
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as error:
        raise TraceError(str(path), None, f"cannot open the database read-only: {error}") from None
    connection.text_factory = bytes
    return connection


def _rows(path: Path) -> Iterator[Stored]:
    source = str(path)
    connection = _connect(path)
    try:
        tables = [cell_text(row[0]) for row in connection.execute(_TABLES)]
        held = [t for t in tables if {cell_text(c[1]) for c in connection.execute(_info(t))} >= COLUMNS]
        if not held:
            raise TraceError(
                source,
                None,
                "the format is not recognised: a SQLite database with no table of session items as "
                "the OpenAI Agents SDK writes them (columns id, session_id, message_data)",
            )
        for table in held:
            named = f"{table} " if len(held) > 1 else ""
            for row_id, session, branch, data in agents_branches.ordered(connection, table):
                label = f"session {cell_text(session)!r}" + (f" of table {table!r}" if named else "") + branch
                yield _row(label, f": {named}row {row_id}", data)
    except sqlite3.Error as error:
        raise TraceError(source, None, f"cannot read the database: {error}") from None
    finally:
        connection.close()


_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"


def _info(table: str) -> str:
    return f"PRAGMA table_info({_quoted(table)})"


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {cell_text(c[1]) for c in connection.execute(_info(table))}


def _row(label: str, at: str, data: object) -> Stored:
    if not isinstance(data, bytes):
        return Stored(label, at, None, f"message_data is {type(data).__name__}, not JSON text")
    try:
        return Stored(label, at, data.decode("utf-8"))
    except UnicodeDecodeError:
        return Stored(label, at, None, "message_data is not UTF-8 text")


def _events(path: Path) -> Iterator[Stored]:
    source = str(path)
    connection = _connect(path)
    try:
        _adk_schema(connection, source)
        for row_id, app, user, session, *event in connection.execute(_ADK_ORDER):
            label = f"session {cell_text(session)!r} of user {cell_text(user)!r} in app {cell_text(app)!r}"
            yield _event(label, f": events row {row_id}", event)
    except sqlite3.Error as error:
        raise TraceError(source, None, f"cannot read the database: {error}") from None
    finally:
        connection.close()


def _tabled(
    path: Path, rows: Callable[[sqlite3.Connection], Iterator[langgraph_store.Row]]
) -> Iterator[Stored]:
    """The entries `rows` reads from the database at `path` (a LangGraph or an OpenCode store)."""
    connection = _connect(path)
    try:
        for fields in rows(connection):
            yield Stored(*fields)
    except sqlite3.Error as error:
        raise TraceError(str(path), None, f"cannot read the database: {error}") from None
    finally:
        connection.close()


def _adk_schema(connection: sqlite3.Connection, source: str) -> None:
    """Refuses a database whose events are not stored as ADK's schema version 1 stores them."""
    columns = _columns(connection, "events")
    if "actions" in columns and "event_data" not in columns:
        raise TraceError(source, None, _PICKLED)
    if not columns >= ADK_COLUMNS:
        missing = ", ".join(sorted(ADK_COLUMNS - columns))
        raise TraceError(source, None, f"the format is not recognised: ADK's events table lacks {missing}")
    if "adk_internal_metadata" in {cell_text(row[0]) for row in connection.execute(_TABLES)}:
        found = connection.execute(_VERSION).fetchone()
        version = cell_text(found[0]) if found else None
        if version != "1":
            raise TraceError(source, None, f"ADK schema version {version!r} is not read (version '1' is)")


_PICKLED = (
    "a Google ADK database of schema version 0, whose event actions are pickled: pickled data is "
    "never unpickled; migrate it to version 1 (`adk migrate session`) and import that"
)
_VERSION = "SELECT value FROM adk_internal_metadata WHERE \"key\" = 'schema_version'"
_ADK_ORDER = (
    "SELECT e.rowid, e.app_name, e.user_id, e.session_id, e.id, e.invocation_id, e.timestamp, "
    "e.event_data FROM events AS e JOIN (SELECT app_name, user_id, session_id, MIN(timestamp) AS "
    "first FROM events GROUP BY app_name, user_id, session_id) AS f ON e.app_name IS f.app_name "
    "AND e.user_id IS f.user_id AND e.session_id IS f.session_id "
    "ORDER BY f.first, e.app_name, e.user_id, e.session_id, e.timestamp, e.id"
)


def _event(label: str, at: str, row: list[object]) -> Stored:
    """The event ADK rebuilds from a row: its `event_data`, with the row's id and invocation, and
    the row's `timestamp` when `event_data` has none; text that is no JSON object is kept as it is
    (told when its conversation is read)."""
    event_id, invocation, stamp, data = row
    found = _row(label, at, b"{}" if data is None else data)
    if found.text is None:
        return Stored(label, at, None, found.problem.replace("message_data", "event_data"))
    try:
        value = json.loads(found.text)
    except ValueError:
        return found
    if not isinstance(value, dict):
        return found
    value |= {"id": cell_text(event_id), "invocation_id": cell_text(invocation)}
    if value.get("timestamp") is None:
        seconds = _seconds(stamp)
        if seconds is None:
            return Stored(label, at, None, "its event_data has no timestamp and its timestamp column none")
        value["timestamp"] = seconds
    return Stored(label, at, json.dumps(value, ensure_ascii=False))


def _seconds(stamp: object) -> float | None:
    """A `timestamp` column's value (a naive UTC date and time, or seconds) as POSIX seconds."""
    if isinstance(stamp, int | float):
        return float(stamp)
    try:
        moment = datetime.fromisoformat(cell_text(stamp))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _messages(path: Path) -> Iterator[Stored]:
    if _is_dir(path / "agents", path, "/agents"):
        agents = _listed(path / "agents", path, "/agents")
        for name in sorted(n for n in agents if n.startswith("agent_")):
            if _is_dir(path / "agents" / name, path, f"/agents/{name}"):
                yield from _agent(path, f"/agents/{name}")
    elif _is_dir(path / "messages", path, "/messages"):
        yield from _agent(path, "")
    else:
        raise TraceError(
            str(path),
            None,
            "the format is not recognised: a folder that is no strands session directory (give "
            "session_<id>, holding agents/agent_<id>/messages/message_<n>.json, or an agent's folder), "
            "nor OpenCode's storage folder (holding session/, message/ and part/)",
        )


def _is_dir(where: Path, root: Path, at: str) -> bool:
    """Whether `where` is a directory, refusing a symbolic link (it is never followed)."""
    if where.is_symlink():
        raise TraceError(f"{root}{at}", None, _LINK)
    return where.is_dir()


_LINK = (
    "is a symbolic link; links inside a session directory are not followed, so nothing outside it is "
    "read: copy what it points to into the directory"
)


def _listed(where: Path, root: Path, at: str) -> list[str]:
    try:
        return os.listdir(where)
    except OSError as error:
        raise TraceError(f"{root}{at}", None, f"cannot list the folder: {error.strerror}") from None


def _agent(root: Path, at: str) -> Iterator[Stored]:
    label = f"agent {at.rsplit('/', 1)[-1]!r}" if at else f"agent {root.name!r}"
    folder = f"{at}/messages"
    found = [(MESSAGE_FILE.fullmatch(n), n) for n in _listed(root / folder.lstrip("/"), root, folder)]
    for _, name in sorted((int(m.group(1)), n) for m, n in found if m is not None):
        place = f"{folder}/{name}"
        yield _file(label, place, root / place.lstrip("/"), root)


def _file(label: str, at: str, path: Path, root: Path) -> Stored:
    """A message file's text, opened without following a link, nor waiting on a pipe: a name of
    a message file that is no regular file (a folder, a pipe, a device) is refused."""
    try:
        raw = read_unfollowed(path)
    except Unread as unread:
        raise TraceError(f"{root}{at}", None, unread.told(_LINK, _NOT_A_FILE)) from None
    try:
        return Stored(label, at, raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return Stored(label, at, None, "it is not UTF-8 text; save it as UTF-8")


_NOT_A_FILE = (
    "is named as a message file but is no regular file (a folder, a pipe or a device); strands "
    "writes each message as a file: move it out of the messages folder, or rename it"
)


# ---------------------------------------------------------------------------------------------
# The functional core: a snapshot's text, and the chosen conversation's located entries


def snapshot(kind: str, stored: Iterable[Stored]) -> str:
    """The store's text (module docstring): what a scenario holds, digests and reads again."""
    head = HEADER + json.dumps(kind) + ', "format": ' + json.dumps(FORMAT_OF[kind]) + "}"
    lines = (json.dumps([s.conversation, s.at, s.text, s.problem], ensure_ascii=False) for s in stored)
    return "\n".join([head, *lines]) + "\n"


def is_snapshot(text: str) -> bool:
    return text.startswith(HEADER)


def parsed(lines: Iterator[str], source: str) -> tuple[str, Iterator[Stored]]:
    """The kind of a snapshot's store and its entries (`snapshot` read back).

    Raises:
        TraceError: a snapshot `snapshot` did not write.
    """
    try:
        kind = json.loads(next(lines))["ctxlab-store"]
        FORMAT_OF[kind]
    except (StopIteration, ValueError, KeyError, TypeError):
        raise TraceError(source, 1, "not a store's snapshot") from None
    return kind, (Stored(*json.loads(line)) for line in lines if line)


def chosen(stored: Iterable[Stored], report: Report, places: dict[int, str]) -> Iterator[Entry]:
    """The entries of the store's conversation `report.session` (counted from 0 in the store's
    order), numbered from 1, each number's place kept in `places`; a note names the
    conversation read.

    Raises:
        TraceError: an entry that is not JSON, at its place.
        SessionError: the store holds no such conversation.
    """
    seen: list[str] = []
    for entry in stored:
        if not seen or seen[-1] != entry.conversation:
            seen.append(entry.conversation)
        if len(seen) - 1 != report.session:
            continue
        number = len(places) + 1
        places[number] = entry.at
        where = report.source + entry.at
        if entry.text is None:
            raise TraceError(where, None, entry.problem)
        try:
            yield Entry(number, json_value(entry.text, where, None, report.mended))
        except json.JSONDecodeError as error:
            line = error.lineno if "\n" in entry.text.strip() else None
            raise TraceError(where, line, not_json(error)) from None
    if report.session >= len(seen):
        raise beyond(report, len(seen), "conversations")
    report.notes.append(
        f"{seen[report.session]} is replayed: conversation {report.session} of the store's "
        f"{len(seen)} (counted from 0)"
    )


def conversation(
    stored: Iterable[Stored], kind: str, source: str, session: int, read: Reader
) -> tuple[Iterator[Wire], Report]:
    """The messages (lazily) of the store's conversation `session`, read by its format's `read`
    as a file's entries are (`guard.guarded`), every problem at its entry's place; the report
    they fill. A LangGraph thread is read by `langgraph_store.read_thread`: the format's reader
    would choose among a file's threads again, and the store has chosen; an OpenCode session by
    `opencode_store.read_session` (its entries are its messages, not one export each), and so is a
    session of OpenCode's storage folder."""
    report, places = Report(source=source, session=session), dict[int, str]()
    read = {
        LANGGRAPH: langgraph_store.read_thread,
        OPENCODE: opencode_store.read_session,
        OPENCODE_FILES: opencode_store.read_session,
    }.get(kind, read)
    reading = Reading(chosen(stored, report, places))
    return _relocated(
        guarded(read(reading, report), reading, report, FORMAT_OF[kind]), source, places
    ), report


def _relocated(messages: Iterator[Wire], source: str, places: dict[int, str]) -> Iterator[Wire]:
    """`messages`; a `TraceError` at an entry's number is told at the entry's place."""
    try:
        yield from messages
    except SessionError:
        raise
    except TraceError as error:
        if error.source != source or error.line not in places:
            raise
        raise TraceError(source + places[error.line], None, error.message) from None


__all__ = ["Stored", "chosen", "conversation", "is_snapshot", "kind_of", "parsed", "records", "snapshot"]
