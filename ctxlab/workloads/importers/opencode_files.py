"""OpenCode's session storage from before its database (`~/.local/share/opencode/storage/`, the
JSON files OpenCode 1.1 and earlier wrote) read as a store of conversations (`stores`): each
session rebuilt as OpenCode's own migration into `opencode.db` rebuilds it, so read as that
database's session is (`opencode_store`). Sources, anomalyco/opencode (formerly sst/opencode): at
062aa8c024a00b7348dd3160c0b4fbbfce074ee2 `packages/opencode/src/storage/json-migration.ts` (the
layout, ids taken from the file paths, a part's session its message's, `time_created` from
`time.created`); at 00d1fee82d432a8d2ad4344e22461857b03be1eb `packages/opencode/src/storage/storage.ts`
(a key's file is `storage/<key...>.json`); at 0002b1fa7df4460349692a647b6fa61d3cc58f12
`packages/opencode/src/session/index.ts` (a session kept at `["session", projectID, id]`).

- Told by a `session` folder: the folder given is the storage folder, or holds it as `storage/`
  (OpenCode's data folder). It holds `session/<projectID>/<sessionID>.json`,
  `message/<sessionID>/<messageID>.json` and `part/<messageID>/<partID>.json`; other files are
  not read. An id is a file's name without `.json`, never the JSON's own `id`.
- A session with a message is one conversation; sessions are counted from 0 by their
  `time.created`, then their id, as the database reader counts them. A session of a project
  with no `project/<projectID>.json` is read too, as OpenCode before the database listed a
  project's sessions by their folder; the migration leaves it out of the database (an orphan),
  so there the sessions after it count one fewer. Its messages are ordered by
  `time.created`, then id (OpenCode's own export of this storage sorted them by id, which
  OpenCode makes ascending in time); a message's parts by id. An entry is one message as an export
  holds it (`opencode_store.exported`), at its file (`FOLDER/message/S/M.json`).
- Refused: a folder or file that is a symbolic link (never followed, so nothing outside the
  folder is read); a name that is no id (`ID`: an id names folders here, so `..` and the like never
  lead out); two session files of one id; a session file that is no JSON object with a numeric
  `time.created` (sessions cannot be counted without it). A message's problems are its entry's,
  told when its session is read: a file that is no JSON object, a `time.created` that is no
  number, an `id`, `sessionID` or `messageID` other than its place gives, and a part of another
  session's message (at the part's file).

Invariants: nothing is written; the order never depends on how the system lists a folder; a
place is relative to the folder given, so the store's snapshot is the same wherever it lies.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ctxlab.workloads.importers.opencode_store import Row, exported, json_object
from ctxlab.workloads.importers.unfollowed import Unread, read_unfollowed
from ctxlab.workloads.trace import TraceError

ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
"""An OpenCode id (`ses_…`, `msg_…`, `prt_…`, a project's commit hash or `global`): no separator,
no leading dot."""
FOLDERS = ("session", "message", "part")

Json = dict[str, object]


@dataclass(frozen=True, slots=True)
class Session:
    """A session file: its id (its name), its title, its `time.created`, its place."""

    id: str
    title: str
    created: float
    at: str


@dataclass(frozen=True, slots=True)
class Tree:
    """The folder given (`given`, which places are relative to) and its storage folder's place
    under it (`""` or `"/storage"`)."""

    given: Path
    storage: str

    def path(self, at: str) -> Path:
        return self.given / at.lstrip("/")

    def error(self, at: str, why: str) -> TraceError:
        return TraceError(f"{self.given}{at}", None, why)


def root(path: Path) -> str | None:
    """The storage folder's place under `path` (`""`, or `"/storage"` for OpenCode's data folder),
    or None when `path` holds no `session` folder."""
    for place in ("", "/storage"):
        try:
            if (path / place.lstrip("/") / "session").is_dir():
                return place
        except OSError:
            return None
    return None


def sessions(path: Path) -> Iterator[Row]:
    """Each message's entry, session after session, in the order of the module docstring.

    Raises:
        TraceError: a folder missing or unreadable, a link, a name that is no id, a bad session
            file, two sessions of one id.
    """
    place = root(path)
    tree = Tree(path, "" if place is None else place)
    for folder in FOLDERS:
        _folder(tree, f"{tree.storage}/{folder}", needed=True)
    for session in _sessions(tree):
        entries = _messages(tree, session)
        label = f"session {session.id!r} ({session.title!r})"
        yield from ((label, *entry) for entry in entries)


def _sessions(tree: Tree) -> list[Session]:
    """Every session file, by `time.created`, then id."""
    found: dict[str, Session] = {}
    top = f"{tree.storage}/session"
    for project in _listed(tree, top, folders=True):
        for name in _listed(tree, f"{top}/{project}", folders=False):
            session = _session(tree, f"{top}/{project}/{name}", name[: -len(".json")])
            if session.id in found:
                other = found[session.id].at.lstrip("/")
                raise tree.error(session.at, f"holds session {session.id!r}, as {other} does: {_TWICE}")
            found[session.id] = session
    return sorted(found.values(), key=lambda s: (s.created, s.id))


_TWICE = "OpenCode keeps one file a session; remove the one that is not the session's"


def _session(tree: Tree, at: str, session: str) -> Session:
    value = _object(_read(tree, at))
    if isinstance(value, str):
        raise tree.error(at, f"{value}; sessions are counted by their files: fix it or move it out")
    if value.get("id", session) != session:
        raise tree.error(at, f"{_named('id', value['id'])} but the file is named {session!r}")
    created, title = _created(value), value.get("title", "")
    if created is None:
        raise tree.error(at, f"{_NO_TIME}; sessions are counted by it")
    return Session(session, title if isinstance(title, str) else json.dumps(title), created, at)


_NO_TIME = "its time.created is missing or no number (OpenCode writes the milliseconds it was made)"


def _messages(tree: Tree, session: Session) -> list[tuple[str, str | None, str]]:
    """A session's entries (its place, its export form's text or, when it has none, why), by
    `time.created`, then id; none when it has no message folder."""
    folder = f"{tree.storage}/message/{session.id}"
    if not _folder(tree, folder, needed=False):
        return []
    read = []
    for name in _listed(tree, folder, folders=False):
        message, at = name[: -len(".json")], f"{folder}/{name}"
        value = _object(_read(tree, at))
        if isinstance(value, dict):
            value = _owned(value, {"id": message, "sessionID": session.id})
        created = None if isinstance(value, str) else _created(value)
        read.append(((created is not None, created or 0.0, message), at, value))
    read.sort(key=lambda item: item[0])
    return [_entry(tree, session.id, key[2], at, value) for key, at, value in read]


def _entry(tree: Tree, session: str, message: str, at: str, info: Json | str) -> tuple[str, str | None, str]:
    if isinstance(info, str):
        return at, None, info
    if _created(info) is None:
        return at, None, _NO_TIME
    parts: list[tuple[str, Json]] = []
    folder = f"{tree.storage}/part/{message}"
    names = _listed(tree, folder, folders=False) if _folder(tree, folder, needed=False) else []
    for name in names:
        part, place = name[: -len(".json")], f"{folder}/{name}"
        value = _object(_read(tree, place))
        if isinstance(value, dict):
            value = _owned(value, {"id": part, "messageID": message, "sessionID": session})
        if isinstance(value, str):
            return place, None, value
        parts.append((part, value))
    return at, exported(session, message, info, parts), ""


def _owned(value: Json, ids: dict[str, str]) -> Json | str:
    """`value`, or why an id it names is not the one its place gives it."""
    for field, expected in ids.items():
        if field in value and value[field] != expected:
            if field == "sessionID" and "messageID" in ids:
                return (
                    f"it is a part of a message of session {expected!r} but names session "
                    f"{value[field]!r}: a part of another session's message"
                )
            return f"{_named(field, value[field])} but its place names {expected!r}"
    return value


def _named(field: str, value: object) -> str:
    return f"its {field} is {value!r}"


def _created(value: Json) -> float | None:
    time = value.get("time")
    created = time.get("created") if isinstance(time, dict) else None
    return float(created) if isinstance(created, int | float) and not isinstance(created, bool) else None


def _object(raw: bytes) -> Json | str:
    """A file's JSON object, or why it holds none."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "it is not UTF-8 text (OpenCode writes UTF-8)"
    return json_object(text, "it")


# ---------------------------------------------------------------------------------------------
# The I/O: folders listed and files read without following a link


def _folder(tree: Tree, at: str, *, needed: bool) -> bool:
    """Whether the folder at `at` is there (a link, or no folder, refused).

    Raises:
        TraceError: a link, a file where a folder belongs, or a `needed` folder missing.
    """
    try:
        mode = os.lstat(tree.path(at)).st_mode
    except FileNotFoundError:
        if needed:
            raise tree.error(at, _MISSING) from None
        return False
    except OSError as error:
        raise tree.error(at, f"cannot be looked up: {error.strerror}") from None
    if stat.S_ISLNK(mode):
        raise tree.error(at, _LINK)
    if not stat.S_ISDIR(mode):
        raise tree.error(at, "is no folder; OpenCode's storage keeps a folder here: move the file out")
    return True


_MISSING = (
    "is missing: OpenCode's storage folder holds session/, message/ and part/ folders; give the "
    "whole folder (~/.local/share/opencode/storage)"
)
_LINK = (
    "is a symbolic link; links inside OpenCode's storage folder are not followed, so nothing outside "
    "it is read: copy what it points to into the folder"
)


def _listed(tree: Tree, at: str, *, folders: bool) -> list[str]:
    """The names of the folders (`folders`) or of the `.json` files in the folder at `at`, sorted.

    Raises:
        TraceError: the folder cannot be listed; a link in it; a `.json` name that is no id.
    """
    try:
        with os.scandir(tree.path(at)) as listing:
            entries = sorted((e.name, e.is_symlink(), e.is_dir(follow_symlinks=False)) for e in listing)
    except OSError as error:
        raise tree.error(at, f"cannot list the folder: {error.strerror}") from None
    names = []
    for name, link, is_dir in entries:
        if link:
            raise tree.error(f"{at}/{name}", _LINK)
        if folders and is_dir:
            names.append(name)
        elif not folders and name.endswith(".json"):
            if not ID.fullmatch(name[: -len(".json")]):
                raise tree.error(f"{at}/{name}", _NO_ID)
            names.append(name)
    return names


_NO_ID = (
    "is named by no OpenCode id (letters, digits, `_`, `-` and `.`, not first): ids name folders "
    "here, so a name that could lead out of the storage folder is refused; rename or remove it"
)


def _read(tree: Tree, at: str) -> bytes:
    """A file's bytes, opened without following a link, nor waiting on a pipe.

    Raises:
        TraceError: a link, no regular file, or the file cannot be read.
    """
    try:
        return read_unfollowed(tree.path(at))
    except Unread as unread:
        raise tree.error(at, unread.told(_LINK, _IRREGULAR)) from None


_IRREGULAR = "is no regular file (a folder, a pipe or a device): move it out"


__all__ = ["ID", "root", "sessions"]
