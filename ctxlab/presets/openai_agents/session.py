"""The session `limit` of openai-agents 0.24.0: how a run on a session with a limit feeds the
stored history to the model (`run_internal/session_persistence.py::prepare_input_with_session`,
`memory/sqlite_session.py::SQLiteSession.get_items`, `run_internal/items.py`).

At the start of each run (one user turn) the SDK reads the last `limit` stored items, drops the
ones that lost their partner, and puts the new user input after them; the items the run
generates are appended to that for every later model call of the turn. The session itself keeps
everything. Seen on ctxlab's messages, each user message is one item, and every assistant text,
call and result is one item of its own, and so is a round's thinking: the chat-completions model
stores a model's `reasoning_content` as a reasoning item before the round's message and calls
(`models/chatcmpl_converter.py::Converter.message_to_output_items`), which counts for the limit
and is not sent back to a model whose name does not say DeepSeek.

Invariants:
- The history is everything stored before the current turn's user message (the last user
  message); the turn's own messages are never dropped.
- `limit` None keeps the whole history; a positive limit keeps its last `limit` items; 0 keeps
  none; a negative limit keeps all (SQLite's `LIMIT` with a negative value).
- Of the kept history, a call with no result in it is dropped (every limit), and with a limit
  set a result whose call is not kept is dropped too: the SDK repairs the cut between a call and
  its output; thinking whose next item (thinking aside) is a dropped call goes with it. A history
  may still start with an assistant message or call: the SDK sends it so.
- Untouched messages stay the same objects; a message left with no block is dropped; a message
  the window cuts is the same copy for the same cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import ThinkingBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.latest import Leading
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat, LeadingFold
from ctxlab.core.messages.message import Message, call_ids, result_ids, unfinished_calls


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
    """The items the SDK stores for `messages`, in order (a round's thinking is a reasoning item)."""
    items: list[Item] = []
    for m, message in enumerate(messages):
        if message.role != "assistant":
            items.append((m, None))
            continue
        items.extend((m, b) for b in range(len(message.blocks)))
    return items


def _partnered(messages: Sequence[Message], kept: list[Item], *, prune_outputs: bool) -> list[Item]:
    """`kept` without calls that have no result in it, the thinking whose next item (thinking
    aside) is such a call, and (with `prune_outputs`) without results whose call is not in it any
    more."""

    def block(item: Item) -> object:
        m, b = item
        return None if b is None else messages[m].blocks[b]

    results = {x.id for i in kept if isinstance(x := block(i), ToolResultBlock)}
    lone = {i for i in kept if isinstance(x := block(i), ToolCallBlock) and x.id not in results}
    if lone:
        lone |= _thinking_before(kept, lone, block)
    out = [i for i in kept if i not in lone]
    if not prune_outputs:
        return out
    calls = {x.id for i in out if isinstance(x := block(i), ToolCallBlock)}
    return [i for i in out if not (isinstance(x := block(i), ToolResultBlock) and x.id not in calls)]


def _thinking_before(kept: list[Item], dropped: set[Item], block: Callable[[Item], object]) -> set[Item]:
    """The thinking items of `kept` whose next item that is not thinking is in `dropped`."""
    tied: set[Item] = set()
    following: Item | None = None
    for item in reversed(kept):
        if not isinstance(block(item), ThinkingBlock):
            following = item
        elif following is not None and following in dropped:
            tied.add(item)
    return tied


def limit_history(messages: tuple[Message, ...], settings: SessionSettings) -> Limited:
    """The request a session with `settings` gives for the stored `messages` (see the invariants).

    The history is fixed during a turn and grows between turns, so what a request reads is what
    the history gained and the window, never the whole history: with every item in the window,
    a history whose replies each hold their calls' results (as every reply the engine stores)
    has nothing to drop, which `_unpartnered` keeps per history (`LeadingConcat`); with a
    limit, the window is found from the end, and the items before it are named from what
    `_item_keys` kept.
    """
    current = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
    if current is None:
        return Limited(messages=messages)
    history = _before_turn(messages, current)
    first, skipped = _window(history, settings.limit)
    prune = settings.limit is not None
    if first == skipped == 0 and not _unpartnered(history, prune):
        return Limited(messages=messages)
    limited = _limit_from(history, first, skipped, prune_outputs=prune)
    if limited is None:
        return Limited(messages=messages)
    return Limited(messages=(*limited.messages, *messages[current:]), dropped=limited.dropped)


_before_turn = Leading()
"""The history before the current turn (the very tuple during a turn)."""


def _window(history: Sequence[Message], limit: int | None) -> tuple[int, int]:
    """Where the last `limit` items start: the message holding the first of them, and how many
    of its items come before it; (0, 0) when every item is in the window."""
    if limit is None or limit < 0 or _items_in(history, 0) <= limit:
        return 0, 0
    wanted = limit
    for m in range(len(history) - 1, -1, -1):
        count = _item_count(history[m])
        if count >= wanted:
            return m, count - wanted
        wanted -= count
    return 0, 0


def _item_count(message: Message) -> int:
    return 1 if message.role != "assistant" else len(message.blocks)


_items_in = LeadingFold[Message, int](lambda total, message: total + _item_count(message))
"""The number of items of a history, resumed from the history counted last."""


def _limit_from(
    history: tuple[Message, ...], first: int, skipped: int, *, prune_outputs: bool
) -> Limited | None:
    """The history the SDK sends when its window starts at the `skipped`-th item of message
    `first`, or None when every item is kept: every item of an earlier message is left out,
    and of the earlier messages only those with no block at all are sent."""
    items = [(first + m, b) for m, b in history_items(history[first:])]
    kept = _partnered(history, items[skipped:], prune_outputs=prune_outputs)
    before = _item_keys(history[:first])
    if not before and len(kept) == len(items):
        return None
    keep = set(kept)
    out = list(_empty_replies(history[:first]))
    for m in range(first, len(history)):
        message = history[m]
        if message.role != "assistant":
            if (m, None) in keep:
                out.append(message)
            continue
        sent = tuple(b for b in range(len(message.blocks)) if (m, b) in keep)
        if len(sent) == len(message.blocks):
            out.append(message)
        elif sent:
            out.append(_with_blocks_at(message, sent))
    dropped = frozenset((*before, *(_item_key(history[m], m, b) for m, b in items if (m, b) not in keep)))
    return Limited(messages=tuple(out), dropped=dropped)


def _unpartnered_ids(message: Message, prune_outputs: bool) -> tuple[str, ...]:
    """Ids of the reply's calls with no result in it, and (with `prune_outputs`) of its results
    with no call in it: () when the reply alone leaves the SDK nothing to drop."""
    if message.role != "assistant":
        return ()
    lone_calls = tuple(call.id for call in unfinished_calls(message))
    if not prune_outputs:
        return lone_calls
    calls = set(call_ids(message))
    return lone_calls + tuple(i for i in result_ids(message) if i not in calls)


_unpartnered = LeadingConcat[Message, str](
    lambda message, _at, _before, prune_outputs: _unpartnered_ids(message, prune_outputs)
)
"""`_unpartnered_ids` of every message of a history; empty, the whole history is sent as is."""


_empty_replies = LeadingConcat[Message, Message](
    lambda message, _at, _before: (message,) if message.role == "assistant" and not message.blocks else ()
)
"""The assistant messages of a history that hold no block: they hold no item either, so no
window leaves them out."""


def _message_keys(message: Message, position: int) -> tuple[str, ...]:
    return tuple(_item_key(message, position, b) for _, b in history_items((message,)))


_item_keys = LeadingConcat[Message, str](lambda message, at, _before: _message_keys(message, at))
"""The key of every item of a history, in order."""


def _blocks_at(message: Message, blocks: tuple[int, ...]) -> Message:
    return message.with_blocks(tuple(message.blocks[b] for b in blocks))


_with_blocks_at = IdentityMemo[Message, Message](_blocks_at)
"""A stored message cut to some of its blocks, the same copy for the same blocks (the window's
first reply is cut alike at every call of a turn)."""


def _item_key(message: Message, position: int, block: int | None) -> str:
    """The key of an item of the message stored at `position`."""
    return f"{message.id or position}:{'' if block is None else block}"
