"""The session `limit` of openai-agents 0.24.0: how a run on a session with a limit feeds the
stored history to the model (`run_internal/session_persistence.py::prepare_input_with_session`,
`memory/sqlite_session.py::SQLiteSession.get_items`, `run_internal/items.py`).

At the start of each run (one user turn) the SDK reads the last `limit` stored items, drops the
ones that lost their partner, and puts the new user input after them; the items the run
generates are appended to that for every later model call of the turn. The session itself keeps
everything. Seen on ctxlab's messages, each user message is one item, and every assistant text,
call and result is one item of its own.

Invariants:
- The history is everything stored before the current turn's user message (the last user
  message); the turn's own messages are never dropped.
- `limit` None keeps the whole history; a positive limit keeps its last `limit` items; 0 keeps
  none; a negative limit keeps all (SQLite's `LIMIT` with a negative value).
- Of the kept history, a call with no result in it is dropped (every limit), and with a limit
  set a result whose call is not kept is dropped too: the SDK repairs the cut between a call and
  its output. A history may still start with an assistant message or call: the SDK sends it so.
- Untouched messages stay the same objects; a message left with no block is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import ThinkingBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSettings:
    """`SessionSettings`, named and defaulted as the SDK's.

    Attributes:
        limit: the most stored items a run reads back as history (None: all of them).
    """

    limit: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Limited:
    """The request's messages after the limit, and keys of the items it left out."""

    messages: tuple[Message, ...]
    dropped: frozenset[str] = frozenset()


Item = tuple[int, int | None]
"""An item: (stored message, block), or (user message, None) for a whole user message."""


def history_items(messages: Sequence[Message]) -> list[Item]:
    """The items the SDK stores for `messages`, in order (thinking is not an item)."""
    items: list[Item] = []
    for m, message in enumerate(messages):
        if message.role != "assistant":
            items.append((m, None))
            continue
        items.extend((m, b) for b, block in enumerate(message.blocks) if not isinstance(block, ThinkingBlock))
    return items


def _kept_count(total: int, limit: int | None) -> int:
    if limit is None or limit < 0:
        return total
    return min(total, limit)


def _partnered(messages: Sequence[Message], kept: list[Item], *, prune_outputs: bool) -> list[Item]:
    """`kept` without calls that have no result in it, and (with `prune_outputs`) without results
    whose call is not in it any more."""

    def block(item: Item) -> object:
        m, b = item
        return None if b is None else messages[m].blocks[b]

    results = {x.id for i in kept if isinstance(x := block(i), ToolResultBlock)}
    out = [i for i in kept if not (isinstance(x := block(i), ToolCallBlock) and x.id not in results)]
    if not prune_outputs:
        return out
    calls = {x.id for i in out if isinstance(x := block(i), ToolCallBlock)}
    return [i for i in out if not (isinstance(x := block(i), ToolResultBlock) and x.id not in calls)]


def limit_history(messages: tuple[Message, ...], settings: SessionSettings) -> Limited:
    """The request a session with `settings` gives for the stored `messages` (see the invariants)."""
    current = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
    if current is None:
        return Limited(messages=messages)
    history = messages[:current]
    items = history_items(history)
    start = len(items) - _kept_count(len(items), settings.limit)
    kept = _partnered(history, items[start:], prune_outputs=settings.limit is not None)
    if len(kept) == len(items):
        return Limited(messages=messages)
    keep = set(kept)
    out: list[Message] = []
    for m, message in enumerate(history):
        if message.role != "assistant":
            if (m, None) in keep:
                out.append(message)
            continue
        blocks = tuple(
            block
            for b, block in enumerate(message.blocks)
            if (m, b) in keep or (isinstance(block, ThinkingBlock) and _after(items, start, m, b))
        )
        if len(blocks) == len(message.blocks):
            out.append(message)
        elif blocks:
            out.append(message.with_blocks(blocks))
    dropped = frozenset(_key(history, i) for i in items if i not in keep)
    return Limited(messages=(*out, *messages[current:]), dropped=dropped)


def _after(items: list[Item], start: int, m: int, b: int) -> bool:
    """Whether a block that is not an item comes after the first kept item."""
    return start < len(items) and (m, b) > (items[start][0], items[start][1] or 0)


def _key(messages: Sequence[Message], item: Item) -> str:
    m, b = item
    return f"{messages[m].id or m}:{'' if b is None else b}"
