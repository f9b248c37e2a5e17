"""OpenCode's own session database (`~/.local/share/opencode/opencode.db`) read as a store of
conversations (`stores`), as OpenCode reads a session back from it (anomalyco/opencode at
063e8306d9895af9bdd175306cfa4fa3291fd83a: the `session`, `message` and `part` tables of
`packages/opencode/src/session/session.sql.ts`; at 007a9409bafea06d6b9084ff1f6d1fe9f5e3a803:
`page`, `hydrate` and `parts` in `packages/opencode/src/session/message-v2.ts`).

- Told by its tables: `session` (columns `id`, `title`, `time_created`), `message` (`id`,
  `session_id`, `time_created`, `data`) and `part` (`id`, `message_id`, `session_id`, `data`):
  `COLUMNS`. A session with a message is one conversation (a sub-agent's session too, on its
  own); sessions are counted from 0 in the order of their `time_created`, then their `id`.
- A session's messages are its `message` rows in OpenCode's order (`time_created`, then `id`),
  each message's parts its `part` rows naming it, in `id` order. An entry is one message as an
  export holds it, `{info: {...data, id, sessionID}, parts: [{...data, id, sessionID,
  messageID}]}` (`exported`, shared with `opencode_files`), at `: message row N` (the row's
  rowid); the session's entries are read by the OpenCode reader's mapping
  (`opencode.session_wires`), as an export's messages are.
- A bad row is its message's problem, told at its own place when its session is the one read:
  a `data` that is NULL, no UTF-8 text, no JSON or no JSON object, a NULL id, and a part whose
  `session_id` is not its message's (a part of another session's message) at `: part row N`.

Invariants: the database is read as the other stores' are (read-only, immutable without a
`-wal` beside it); a row's data never raises here: what cannot be read is the entry's problem.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence

from ctxlab.workloads.importers.base import Entry, Report, Wire, cell_text
from ctxlab.workloads.importers.opencode import session_wires

COLUMNS = {
    "session": frozenset({"id", "title", "time_created"}),
    "message": frozenset({"id", "session_id", "time_created", "data"}),
    "part": frozenset({"id", "message_id", "session_id", "data"}),
}
"""The columns each table holds, by which the database is told (module docstring)."""

Row = tuple[str, str, str | None, str]
"""A message's entry: its conversation, its place, its JSON text or, when it has none, why."""

_SESSIONS = (
    "SELECT s.rowid, s.id, s.title FROM session AS s WHERE EXISTS (SELECT 1 FROM message AS m "
    "WHERE m.session_id IS s.id) ORDER BY s.time_created, s.id"
)
_MESSAGES = (
    "SELECT rowid, id, data FROM message WHERE session_id IS (SELECT id FROM session WHERE rowid = ?) "
    "ORDER BY time_created, id"
)
_PARTS = (
    "SELECT rowid, id, session_id, data FROM part WHERE message_id IS (SELECT id FROM message "
    "WHERE rowid = ?) ORDER BY id"
)
"""A session's messages and a message's parts, each found by its owner's rowid (an id is
compared as it is stored, never bound back as a value)."""


def is_opencode(columns: Mapping[str, set[str]]) -> bool:
    """Whether tables of these columns are OpenCode's (each holds `COLUMNS`' of its name)."""
    return all(columns.get(table, set()) >= wanted for table, wanted in COLUMNS.items())


def sessions(connection: sqlite3.Connection) -> Iterator[Row]:
    """Each message's entry, session after session, in the order of the module docstring.

    Raises:
        sqlite3.Error: the database cannot be read.
    """
    for owner, session, title in connection.execute(_SESSIONS).fetchall():
        label = f"session {cell_text(session)!r} ({cell_text(title)!r})"
        for row_id, message, data in connection.execute(_MESSAGES, (owner,)).fetchall():
            parts = connection.execute(_PARTS, (row_id,)).fetchall()
            yield (label, *_message(session, (row_id, message, data), parts))


def _message(
    session: object, row: tuple[object, ...], parts: list[tuple[object, ...]]
) -> tuple[str, str | None, str]:
    """A message's place and its export form's text, or the place of its first bad row and why."""
    row_id, message, data = row
    info = _object(data)
    if isinstance(info, str) or message is None:
        return f": message row {row_id}", None, info if isinstance(info, str) else "its id is NULL"
    made: list[tuple[str, Mapping[str, object]]] = []
    for part_row, part, owner, part_data in parts:
        value = _object(part_data)
        if owner != session:
            value = (
                f"it is a part of a message of session {cell_text(session)!r} "
                f"but names session {cell_text(owner)!r}"
            )
        elif part is None and not isinstance(value, str):
            value = "its id is NULL"
        if isinstance(value, str):
            return f": part row {part_row}", None, value
        made.append((cell_text(part), value))
    return f": message row {row_id}", exported(cell_text(session), cell_text(message), info, made), ""


def exported(
    session: str, message: str, info: Mapping[str, object], parts: Sequence[tuple[str, Mapping[str, object]]]
) -> str:
    """A message's text as an export holds it: `{info, parts}`, its info and each of its parts (by
    id, in the order given) with the ids its place gives them put back (`id` and `sessionID`; a
    part's `id`, `sessionID` and `messageID`), as OpenCode rebuilds them from its rows."""
    made = [{**value, "id": part, "sessionID": session, "messageID": message} for part, value in parts]
    whole = {"info": {**info, "id": message, "sessionID": session}, "parts": made}
    return json.dumps(whole, ensure_ascii=False)


def _object(data: object) -> dict[str, object] | str:
    """A `data` column's JSON object, or why it holds none."""
    if data is None:
        return "its data is NULL"
    if not isinstance(data, bytes | str):
        return f"its data is {type(data).__name__}, not JSON text"
    return json_object(data, "its data")


def json_object(text: str | bytes, subject: str) -> dict[str, object] | str:
    """The JSON object `text` holds, or why it holds none, said of `subject` ("its data")."""
    try:
        value = json.loads(text)
    except UnicodeDecodeError:
        return f"{subject} is not UTF-8 text"
    except ValueError as error:
        return f"{subject} is not JSON: {error}"
    except RecursionError:
        return f"{subject} is JSON nested too deep to read"
    return value if isinstance(value, dict) else f"{subject} is no JSON object but {type(value).__name__}"


def read_session(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages OpenCode sends for the store's chosen session (its entries, one a message),
    by the OpenCode reader's mapping (`opencode.session_wires`)."""
    numbers: list[int] = []
    messages: list[object] = []
    for number, value in entries:
        numbers.append(number)
        messages.append(value)
    yield from session_wires(messages, numbers, report)


__all__ = ["COLUMNS", "exported", "is_opencode", "read_session", "sessions"]
