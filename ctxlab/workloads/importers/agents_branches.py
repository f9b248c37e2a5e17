"""The rows of a table of OpenAI Agents SDK session items in replay order, each session's branches
apart when the table is an `AdvancedSQLiteSession`'s.

`AdvancedSQLiteSession` keeps a session's items in `agent_messages` as `SQLiteSession` does, and
each item's place in a branch in `message_structure` (`message_id`, `branch_id`,
`sequence_number`, written in the same transaction as the item). `create_branch_from_turn`
makes a branch whose structure rows point at the earlier turns' items (rows shared, not
copied); `get_items()` reads the current branch: the items its structure rows point at, in
`sequence_number` order. The current branch is not stored in the database: a session opened on
it reads `main` until `switch_to_branch`. So:

- A table is branched when `message_structure` (with those columns) names it by the foreign key
  of its `message_id` (the SDK's `agent_messages`, or the messages table given to the session).
- In a branched table, a session with structure rows is one conversation per branch: `main`
  first (what the SDK reads by default), then the others in the order of their first structure
  row (its `id`: the order they were made in), each read as `get_items(branch_id=...)` reads it.
  A branch with no structure row (made from turn 1 and never added to, or deleted) holds
  nothing and is not counted, as the SDK's `list_branches` does not list it. A row of the
  session with no structure row is on no branch: the SDK never reads it (its cleanup deletes
  such rows), so it is left out, and the conversation's label says how many were.
- A session with no structure row at all (written by a plain `SQLiteSession` on the same file,
  or before the structure tables were made) is one conversation, its rows in `id` order, as
  `SQLiteSession` reads it: a table `message_structure` does not name, or names with no rows,
  reads exactly as a `SQLiteSession` database.
- Sessions are in the order of their first row's `id`.

Invariants: each (session, branch) conversation's rows are consecutive in `ordered`; a row is
yielded once per branch holding it; nothing is written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ctxlab.workloads.importers.base import cell_text

STRUCTURE = "message_structure"
STRUCTURE_COLUMNS = frozenset({"id", "message_id", "branch_id", "sequence_number"})
DEFAULT_BRANCH = "main"
"""The branch an `AdvancedSQLiteSession` reads until told another."""

Row = tuple[object, object, str, object]
"""A row in replay order: its `id`, its `session_id`, what its conversation's label adds to the
session's (its branch, or nothing), its `message_data`."""


def ordered(connection: sqlite3.Connection, table: str) -> Iterator[Row]:
    """Every row of `table` to replay, its conversations in the order of the module docstring."""
    if not _branched(connection, table):
        for row_id, session, data in connection.execute(_plain(_quoted(table))):
            yield row_id, session, "", data
        return
    quoted = _quoted(table)
    branches = dict(connection.execute((_WITH_PLACED + _BRANCH_COUNTS).format(t=quoted)).fetchall())
    unplaced = dict(connection.execute(_UNPLACED.format(t=quoted)).fetchall())
    for row_id, session, branch, data in connection.execute((_WITH_PLACED + _ORDER).format(t=quoted)):
        held = branches.get(session)
        yield row_id, session, "" if held is None else _branch(branch, held, unplaced.get(session, 0)), data


def _branched(connection: sqlite3.Connection, table: str) -> bool:
    """Whether `message_structure` places the items of `table` (its `message_id` key names it)."""
    found = connection.execute(f"PRAGMA table_info({STRUCTURE})").fetchall()
    if not {cell_text(c[1]) for c in found} >= STRUCTURE_COLUMNS:
        return False
    keys = connection.execute(f"PRAGMA foreign_key_list({STRUCTURE})").fetchall()
    named = {cell_text(k[2]).lower() for k in keys if cell_text(k[3]).lower() == "message_id"}
    return named == {table.lower()}


def _branch(branch: object, branches: int, unplaced: int) -> str:
    held = "its only branch" if branches == 1 else f"one of its {branches} branches"
    left = f"; {unplaced} of its rows on no branch left out" if unplaced else ""
    return f" on branch {cell_text(branch)!r} ({held}{left})"


def _plain(quoted: str) -> str:
    """Every row, its sessions in the order of their first row, each in `id` order."""
    return (
        f"SELECT m.id, m.session_id, m.message_data FROM {quoted} AS m JOIN "
        f"(SELECT session_id, MIN(id) AS first FROM {quoted} GROUP BY session_id) AS f "
        "ON m.session_id IS f.session_id ORDER BY f.first, m.id"
    )


_WITH_PLACED = (
    "WITH placed AS (SELECT m.id AS row, m.session_id AS session, s.branch_id AS branch, "
    "s.sequence_number AS seq, s.id AS sid FROM {t} AS m JOIN message_structure AS s "
    "ON s.message_id = m.id) "
)
# A session's rows go with the branches holding them; a session no branch holds, whole.
_ORDER = (
    ", alone AS (SELECT m.id AS row, m.session_id AS session, NULL AS branch, m.id AS seq, 0 AS sid "
    "FROM {t} AS m WHERE NOT EXISTS (SELECT 1 FROM placed AS p WHERE p.session IS m.session_id)), "
    "born AS (SELECT session, branch, MIN(sid) AS sid FROM placed GROUP BY session, branch), "
    "first AS (SELECT session_id AS session, MIN(id) AS row FROM {t} GROUP BY session_id) "
    "SELECT e.row, e.session, e.branch, m.message_data "
    "FROM (SELECT * FROM placed UNION ALL SELECT * FROM alone) AS e JOIN {t} AS m ON m.id = e.row "
    "JOIN first AS f ON f.session IS e.session "
    "LEFT JOIN born AS b ON b.session IS e.session AND b.branch IS e.branch "
    f"ORDER BY f.row, e.branch IS NOT '{DEFAULT_BRANCH}', b.sid, e.seq, e.sid"
)
_BRANCH_COUNTS = "SELECT session, COUNT(DISTINCT branch) FROM placed GROUP BY session"
# `NOT IN` over the structure's ids, read once: `message_id` has no index of its own to look up.
_UNPLACED = (
    "SELECT session_id, COUNT(*) FROM {t} WHERE id NOT IN "
    "(SELECT message_id FROM message_structure WHERE message_id IS NOT NULL) GROUP BY session_id"
)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


__all__ = ["DEFAULT_BRANCH", "Row", "ordered"]
