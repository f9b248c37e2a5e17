"""A LangGraph SQLite checkpointer's database (`SqliteSaver` or `AsyncSqliteSaver` of
langgraph-checkpoint-sqlite) read as a store of conversations (`stores`), without LangGraph.

- Told by its `checkpoints` table (columns `thread_id`, `checkpoint_ns`, `checkpoint_id`,
  `type`, `checkpoint`: `COLUMNS`). A thread with a checkpoint in the root namespace
  (`checkpoint_ns` '') is one conversation; threads are counted from 0 in the order their first
  root checkpoint was written (its rowid). Checkpoints of a subgraph (another namespace) are no
  conversation of their own: they are counted, and a thread that has only those is none.
- A thread's conversation is its latest root checkpoint, the one LangGraph's `get_tuple` gives
  when no checkpoint is named (the greatest `checkpoint_id`): its `channel_values["messages"]`,
  read by the LangGraph reader's mapping (`langgraph.thread_wires`). A thread whose latest id is
  on several rows (which SqliteSaver's primary key forbids) is refused at the last of them, as
  which one LangGraph reads is not defined. The thread's earlier
  checkpoints are counted; the `writes` table (writes of a step that has not finished) is not
  read. An entry is that list as JSON, `{"checkpoint_id", "earlier_checkpoints",
  "subgraph_checkpoints", "channel_values": {"messages": [...]}}`, at `: checkpoints row N`.
- The `type` column names the serialisation (langgraph-checkpoint's `JsonPlusSerializer`):
  `msgpack` is read by `msgpack.unpacked`, its extension types as below, `json` as JSON (its
  messages in `dumpd`'s constructor form) nested no deeper than MessagePack is read. A `pickle`
  checkpoint is refused, never unpickled; an encrypted one (`msgpack+aes`: `EncryptedSerializer`)
  is refused, never decrypted; `null`, `bytes` and any other type hold no checkpoint to read.
- LangGraph's extension types: an object written as its module, class and data (a
  constructor's argument or arguments, a method's argument, a pydantic model's fields: codes
  0 to 5) is, as an item of the messages list, a LangChain message in `dumpd`'s constructor
  form (its class names its kind; a class the reader does not know is refused, named), and
  anywhere else its data (a UUID its dashed text, a datetime its ISO text); a delta channel's
  snapshot (code 7) is its value. A numpy array (code 6), an ext of another type and raw bytes
  are refused where the messages hold them (they hold no JSON), and ignored elsewhere.

Invariants: nothing here imports LangGraph, LangChain or a MessagePack library; decoding an
entry never raises for its data: a checkpoint that cannot be read is the entry's problem, told
when its thread is the one read (as a bad row of the other stores).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ctxlab.workloads.files import json_depth
from ctxlab.workloads.importers.base import Entry, Report, Wire, cell_text, field_of
from ctxlab.workloads.importers.langgraph import KINDS, thread_messages, thread_wires
from ctxlab.workloads.importers.msgpack import DEPTH, Inner, MsgpackError, unpacked

COLUMNS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "type", "checkpoint"})
OBJECTS = frozenset(range(6))
"""LangGraph's ext codes of an object written as `[module, class, data]` (a fourth item, a
method's name, for codes 3 and 5)."""
NUMPY, DELTA = 6, 7

Row = tuple[str, str, str | None, str]
"""A thread's entry: its conversation, its place, its JSON text or, when it has none, why."""


@dataclass(frozen=True, slots=True)
class Instance:
    """An object the serializer wrote as its module, its class and its data."""

    module: str
    name: str
    data: object


@dataclass(frozen=True, slots=True)
class Unread:
    """A value no JSON holds (a numpy array, an unknown ext), refused only where it is read."""

    what: str


class _Refused(Exception):
    """Why a thread's latest checkpoint cannot be read."""


def threads(connection: sqlite3.Connection) -> Iterator[Row]:
    """Each thread's entry, in the order of the module docstring.

    Raises:
        sqlite3.Error: the database cannot be read.
    """
    for row_id, thread, checkpoint_id, kind, blob, earlier, nested, copies in connection.execute(_LATEST):
        head = {
            "checkpoint_id": cell_text(checkpoint_id),
            "earlier_checkpoints": earlier,
            "subgraph_checkpoints": nested,
        }
        text, problem = (
            entry("null" if kind is None else cell_text(kind), blob, head)
            if copies == 1
            else (None, _COPIES.format(checkpoint=cell_text(checkpoint_id), copies=copies))
        )
        yield f"thread {cell_text(thread)!r}", f": checkpoints row {row_id}", text, problem


_SAME = (
    "FROM checkpoints AS d WHERE d.thread_id IS f.thread_id AND d.checkpoint_ns = '' "
    "AND d.checkpoint_id IS f.latest"
)
"""The rows of a thread's latest root checkpoint: one, by SqliteSaver's primary key."""
_LATEST = (
    "SELECT c.rowid, c.thread_id, c.checkpoint_id, c.type, c.checkpoint, f.root - 1, f.nested, "
    f"(SELECT COUNT(*) {_SAME}) "
    "FROM checkpoints AS c JOIN (SELECT thread_id, MIN(CASE WHEN checkpoint_ns = '' THEN rowid END) "
    "AS first, MAX(CASE WHEN checkpoint_ns = '' THEN checkpoint_id END) AS latest, "
    "SUM(checkpoint_ns = '') AS root, SUM(checkpoint_ns <> '') AS nested FROM checkpoints "
    "GROUP BY thread_id HAVING root > 0) AS f ON c.thread_id IS f.thread_id "
    f"AND c.checkpoint_ns = '' AND c.checkpoint_id IS f.latest WHERE c.rowid = (SELECT MAX(d.rowid) {_SAME}) "
    "ORDER BY f.first"
)
_COPIES = (
    "its latest checkpoint ({checkpoint!r}) is on {copies} rows, where SqliteSaver keeps each checkpoint "
    "once (the table's primary key), so which one LangGraph reads is not defined: keep one of them"
)


def entry(kind: str, blob: object, head: Mapping[str, object]) -> tuple[str | None, str]:
    """The JSON text of a checkpoint's messages, after `head`, or None and why it has none."""
    try:
        messages = _messages(_checkpoint(kind, blob))
    except _Refused as why:
        return None, str(why)
    return json.dumps({**head, "channel_values": {"messages": messages}}, ensure_ascii=False), ""


def _checkpoint(kind: str, blob: object) -> object:
    """The checkpoint a row holds, as `kind` serialised it (module docstring)."""
    if kind == "pickle":
        raise _Refused(_PICKLED)
    if "+" in kind:
        raise _Refused(_ENCRYPTED.format(cipher=kind.split("+", 1)[1]))
    if kind not in {"msgpack", "json"}:
        raise _Refused(
            f"its latest checkpoint is of type {kind!r}, which holds none to read (msgpack and json do)"
        )
    if not isinstance(blob, bytes):
        raise _Refused(f"its latest checkpoint is {type(blob).__name__}, not {kind} data")
    try:
        return unpacked(blob, _hook) if kind == "msgpack" else _json(blob)
    except MsgpackError as error:
        raise _Refused(f"its latest checkpoint is not MessagePack as LangGraph writes it: {error}") from None
    except ValueError as error:
        raise _Refused(f"its latest checkpoint is not JSON: {error}") from None


def _json(blob: bytes) -> object:
    """A `json` checkpoint's value, nested no deeper than a MessagePack one may (`DEPTH`), so that
    reading its messages cannot exhaust the interpreter's stack."""
    try:
        value = json.loads(blob)
    except RecursionError:
        raise _Refused(_TOO_DEEP) from None
    if json_depth(value) > DEPTH:
        raise _Refused(_TOO_DEEP)
    return value


_TOO_DEEP = f"its latest checkpoint is JSON nested deeper than {DEPTH} levels, as LangGraph nests none"


_PICKLED = (
    "its latest checkpoint is pickled (a serializer with pickle_fallback): pickled data is never "
    "unpickled; save the thread's state with LangGraph's default serializer, or export it as JSON "
    "(`graph.get_state(config)`'s messages, `messages_to_dict`) and import that"
)
_ENCRYPTED = (
    "its latest checkpoint is encrypted ({cipher}, EncryptedSerializer) and is not decrypted: export "
    "the thread's messages as JSON with the key (`graph.get_state(config)`, `messages_to_dict`) and "
    "import that"
)


def _hook(code: int, data: bytes, inner: Inner) -> object:
    """What LangGraph's ext `code` holds (module docstring); an object's shape is checked."""
    if code == DELTA:
        return inner(data)
    if code not in OBJECTS:
        return Unread("a numpy array" if code == NUMPY else f"a MessagePack ext of type {code}")
    fields = inner(data)
    if not (
        isinstance(fields, list) and len(fields) in {3, 4} and all(isinstance(f, str) for f in fields[:2])
    ):
        raise MsgpackError(f"an ext of type {code} is not [module, class, data] as LangGraph writes it")
    module, name, value = fields[:3]
    if (module, name) == ("uuid", "UUID") and isinstance(value, str) and len(value) == 32:
        value = "-".join((value[:8], value[8:12], value[12:16], value[16:20], value[20:]))
    return Instance(module, name, value)


def _messages(checkpoint: object) -> list[object]:
    """The checkpoint's messages, each a LangChain message's JSON form."""
    messages = field_of(checkpoint, "channel_values", "messages")
    if messages is None:
        raise _Refused(_NO_MESSAGES)
    if not isinstance(messages, list):
        raise _Refused(f"its latest checkpoint's messages channel holds {_named(messages)}, not a list")
    return [_message(item, f"message {index}") for index, item in enumerate(messages)]


_NO_MESSAGES = (
    "its latest checkpoint has no messages channel: the graph's state keeps no `messages` key (as "
    "MessagesState does), or a DeltaChannel keeps them in earlier writes, which are not read"
)


def _message(item: object, where: str) -> object:
    """A message as the LangGraph reader reads it: an object of a LangChain message class in
    `dumpd`'s constructor form, a mapping as it is."""
    if isinstance(item, Instance):
        if item.name not in KINDS:
            raise _Refused(
                f"{where} is a {item.module}.{item.name}, not a LangChain message class (HumanMessage, "
                "AIMessage, ToolMessage, SystemMessage, ChatMessage, FunctionMessage): the reader "
                "does not know how a model is sent it"
            )
        kwargs = _plain(item.data, where)
        return {"lc": 1, "type": "constructor", "id": [*item.module.split("."), item.name], "kwargs": kwargs}
    if isinstance(item, Mapping):
        return _plain(item, where)
    raise _Refused(f"{where} is {_named(item)}, not a LangChain message")


def _plain(value: object, where: str) -> object:
    """`value` as JSON holds it: an object its data, keys as `json` writes them."""
    if isinstance(value, Instance):
        return _plain(value.data, where)
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str | int | float | bool | None):
                raise _Refused(f"{where} has a key that is {_named(key)}, which JSON cannot hold")
        return {key: _plain(item, where) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item, where) for item in value]
    if isinstance(value, str | int | float | bool | None):
        return value
    raise _Refused(f"{where} holds {_named(value)}, which the message reader cannot read (no JSON holds it)")


def _named(value: object) -> str:
    if isinstance(value, Unread):
        return value.what
    if isinstance(value, Instance):
        return f"a {value.module}.{value.name}"
    return "raw bytes" if isinstance(value, bytes) else f"a {type(value).__name__}"


_EMPTY = "its latest checkpoint holds no messages: the thread has nothing to replay"
_NOT_MESSAGES = "its latest checkpoint's messages are not LangChain messages (type human, ai, tool, ...)"


def read_thread(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of the store's chosen thread (its one entry), by the LangGraph reader's
    mapping; its earlier and its subgraphs' checkpoints counted."""
    for number, value in entries:
        messages = thread_messages(value)
        if messages is None:
            empty = field_of(value, "channel_values", "messages") == []
            raise report.error(number, _EMPTY if empty else _NOT_MESSAGES)
        for kind in ("earlier checkpoint", "subgraph checkpoint"):
            count = field_of(value, kind.replace(" ", "_") + "s")
            if isinstance(count, int) and count > 0:
                report.skipped[kind] += count
        yield from thread_wires(messages, number, report)


__all__ = ["COLUMNS", "Instance", "Unread", "entry", "read_thread", "threads"]
