"""One stored message read once for both meters: its OpenAI view, the size of each view message
under a token counter, and the protocol facts of each, made in one pass over its blocks.

The cache meter (`ctxlab.engine.cache`) needs a new message's view and sizes, the protocol meter
(`ctxlab.core.wire.meter`) its facts; each read apart is a walk over the blocks with its own
carry and its own kept reads. `piece_of` walks them once, and both meters ask it.

Invariants:
- `piece_of(message, counter)` equals the three reads apart: `wire == openai_one(message)`,
  `(sizes, unseen) == sent_view_sizes(message, counter)` (sized as the provider receives it) and
  `facts == facts_of_message(message)` (a property test holds them together). `views` holds
  one `(wire, size, fact)` triple per view message, and `wire`, `sizes` and `facts` are its
  columns, the very objects.
- A view message is the one `views.wire_step` makes (built by the same `flushed`, `tool_wire`
  and `wire_content`); its fact is what `protocol.fact_of` reads off it, worked out from the
  blocks that made it; its size is `sent_view_sizes`': a view message owns its blocks and the hidden
  ones before it (the last one also those after it), and images a batch of results returned
  count in the batch's media message.
- A new message is read once for both meters: `piece_of` keeps the pieces it read last (a few,
  holding at most `RECENT_VIEWS` view messages between them); the cache meter of a run asks it
  for a new message's piece with the run's counter, and the protocol meter takes that piece in
  the same call (`recent_piece`), or reads the facts alone of a message the cache meter did not
  read (each meter then keeps what it read of the messages it holds). `resumable.forget()`
  drops them.
- A message of `RESUMED_BLOCKS` blocks or more resumes the read of an earlier message whose
  blocks it begins with (or inside one: a window that cut a reply's front; the step does not
  read its position), and its `views` is noted (`GROWN`) as sharing leading triples with the
  `views` of the read it resumed: a meter that kept that piece finds what the two share without
  comparing, and shared triples hold the very same view messages and facts. Its columns extend
  those of the last long read as far as the two share (`_columns`): a reply that grows by a
  round at every call costs its new views and copies at C speed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple, cast

from ctxlab.core.messages.blocks import (
    ZERO,
    Block,
    DataBlock,
    HintBlock,
    Part,
    Tally,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.memo import RESUMED_BLOCKS, Closing, LeadingScan
from ctxlab.core.messages.message import GROWN, Message
from ctxlab.core.messages.resumable import register
from ctxlab.core.messages.sizes import sent_message_size, sent_size
from ctxlab.core.messages.tokens import TokenCounter
from ctxlab.core.wire.protocol import Fact
from ctxlab.core.wire.views import Wire, blank, flushed, tool_wire, wire_content

View = tuple[Wire, Tally, Fact]
"""One view message of a stored message, its size and its facts."""


class Piece(NamedTuple):
    """One stored message as both meters see it (a named tuple: one is made for every new message):
    its view messages, their sizes and facts, side by side (`views`) and as columns, and its size
    when it has no view message at all (`unseen`; `ZERO` when it has one)."""

    message: Message
    views: tuple[View, ...]
    wire: tuple[Wire, ...]
    sizes: tuple[Tally, ...]
    unseen: Tally
    facts: tuple[Fact, ...]


def _piece(message: Message, counter: TokenCounter) -> Piece:
    views = _scan.finished(message.blocks, _START, partial(_closed, message.role), message.role, counter)
    if not views:  # nothing shows, so nothing of it is sent (thinking in no field, empty hints)
        return _made((message, (), (), (), sent_message_size(counter, message), ()))
    wire, sizes, facts = _columns(views)
    return _made((message, views, wire, sizes, ZERO, facts))


_Columns = tuple[tuple[Wire, ...], tuple[Tally, ...], tuple[Fact, ...]]


def _columns(views: tuple[View, ...]) -> _Columns:
    """The view messages, sizes and facts of `views`, each a column. A long read (a reply that
    grows by a round at every call) noted (`GROWN`) as sharing leading views with the last long
    read takes that one's columns up to there, at C speed, and reads only the views after."""
    last = _RECENT.long
    shared = GROWN.shared(views, last[0]) if last is not None and len(views) >= RESUMED_BLOCKS else None
    if not shared or last is None:
        columns = cast(_Columns, tuple(zip(*views, strict=True)))
    else:
        tail = views[shared:]
        wire, sizes, facts = last[1]
        columns = (
            wire[:shared] + tuple([view[0] for view in tail]),
            sizes[:shared] + tuple([view[1] for view in tail]),
            facts[:shared] + tuple([view[2] for view in tail]),
        )
        GROWN.note(columns[2], facts, shared)  # the protocol meter finds a grown reply's facts so
    if len(views) >= RESUMED_BLOCKS:
        _RECENT.long = (views, columns)
    return columns


_made = cast(Callable[[tuple[object, ...]], Piece], partial(tuple.__new__, Piece))
"""`Piece(*fields)`, made without the Python frame of the named tuple's constructor."""


def piece_of(message: Message, counter: TokenCounter) -> Piece:
    """One stored message read under a counter (`_piece`); a message read lately with the same
    counter (`recent_piece`) is not read again: the cache meter reads a call's new messages, and
    the protocol meter finds them."""
    piece = recent_piece(message, counter)
    if piece is None:
        piece = _piece(message, counter)
        _RECENT.keep(piece, counter)
    return piece


def recent_piece(message: Message, counter: TokenCounter) -> Piece | None:
    """The piece of `message` under `counter` when `piece_of` read it lately, else None."""
    kept = _RECENT.pieces.get(id(message))
    return kept[1] if kept is not None and kept[1].message is message and kept[0] is counter else None


RECENT = 256
"""How many pieces `piece_of` keeps: the new messages of a call, which each meter of the run reads
in the same call (a meter keeps the pieces of the messages it holds itself)."""
RECENT_VIEWS = 8192
"""How many view messages the kept pieces may hold between them: a reply that grows by a round
at every call is a new long piece each time, and only the call's own are read again."""


class _Recent:
    """What reads of pieces keep between them: the pieces read last, by message id (at most
    `RECENT`, holding at most `RECENT_VIEWS` view messages), and the last long read with its
    columns (`_columns`). `resumable.forget()` clears it."""

    __slots__ = ("__weakref__", "long", "pieces", "views")

    def __init__(self) -> None:
        self.pieces: dict[int, tuple[TokenCounter, Piece]] = {}
        self.views = 0
        self.long: tuple[tuple[View, ...], _Columns] | None = None
        register(self)

    def keep(self, piece: Piece, counter: TokenCounter) -> None:
        """Keep a piece just read, after the others when they leave room, else alone."""
        if len(self.pieces) >= RECENT or self.views + len(piece.views) > RECENT_VIEWS:
            self.pieces.clear()
            self.views = 0
        self.pieces[id(piece.message)] = (counter, piece)
        self.views += len(piece.views)

    def clear(self) -> None:
        """Drop every piece and the last long read."""
        self.pieces.clear()
        self.views = 0
        self.long = None


_RECENT = _Recent()


_Carry = tuple[tuple[Part | ThinkingBlock, ...], tuple[ToolCallBlock, ...], tuple[Part, ...], Tally, Tally]
"""What the read carries from block to block (a plain tuple: made at every block): the parts (and
thinking sent in a field) and calls of the view message being built and the size of the blocks
it owns so far, the images of the batch of results not yet sent and their size."""

_START: _Carry = ((), (), (), ZERO, ZERO)


def _step(
    carry: _Carry, block: Block, before: int, role: str, counter: TokenCounter
) -> tuple[list[View], _Carry]:
    """The view messages `block` of a message of `role` completes, each with its size and facts,
    and the carry after it (`before`, what a `LeadingScan` step is given, is not read)."""
    parts, calls, media, pending, media_size = carry
    out: list[View] = []
    if media and not isinstance(block, ToolResultBlock):
        out.append(_media(media, media_size))
        media, media_size = (), ZERO
    size = sent_size(counter, block)
    if isinstance(block, TextBlock | DataBlock) or (isinstance(block, ThinkingBlock) and block.wire_field):
        parts = (*parts, block)
    elif isinstance(block, ToolCallBlock):
        calls = (*calls, block)
    elif isinstance(block, HintBlock | ToolResultBlock):
        built = _built(role, parts, calls, pending)  # a hint or a result ends the message being built
        if built is not None:
            out.append(built)
            pending = ZERO
        return out, _ended(out, block, ((), (), media, pending + size, media_size), counter)
    return out, (parts, calls, media, pending + size, media_size)


def _ended(
    out: list[View], block: HintBlock | ToolResultBlock, carry: _Carry, counter: TokenCounter
) -> _Carry:
    """Add the view message of a hint or a result to `out` (what `carry` holds pending is its
    size, with the hidden blocks before it), and give the carry after it."""
    _, _, media, pending, media_size = carry
    if isinstance(block, ToolResultBlock):
        images = tuple([p for p in block.output if isinstance(p, DataBlock)])
        data = sum([counter.measure(p) for p in images], ZERO)
        out.append((tool_wire(block), pending - data, _fact(("tool", (), block.id, True))))
        return (), (), (*media, *images), ZERO, media_size + data
    if isinstance(block.hint, str):
        hint: tuple[Part, ...] = (TextBlock(text=block.hint),)
    elif block.hint:
        hint = block.hint
    else:
        return carry
    shown = any([_visible(part) for part in hint])
    out.append(({"role": "user", "content": wire_content(hint)}, pending, _fact(("user", (), None, shown))))
    return (), (), media, ZERO, media_size


def _closed(role: str, carry: _Carry, done: Sequence[View]) -> Closing[View]:
    """The view messages after the last block: those still open (the batch's images, then the
    message being built, which owns what is pending), or, when none is, the hidden blocks the
    last view message takes in (none: the message has no view message)."""
    parts, calls, media, pending, media_size = carry
    built = _built(role, parts, calls, pending)
    if built is not None:
        return len(done), [_media(media, media_size), built] if media else [built]
    if media:
        return len(done), [_media(media, media_size + pending)]
    if done and pending != ZERO:
        wire, size, fact = done[-1]
        return len(done) - 1, [(wire, size + pending, fact)]
    return len(done), []


def _built(
    role: str, parts: tuple[Part | ThinkingBlock, ...], calls: tuple[ToolCallBlock, ...], size: Tally
) -> View | None:
    """The view message the parts and calls being built make, of size `size` (None: they make
    none, `views.flushed`)."""
    made = flushed(role, parts, calls)
    if not made:
        return None
    shown = bool(calls) or any([_visible(part) for part in parts])
    return made[0], size, _fact((role, tuple([call.id for call in calls]), None, shown))


def _media(media: tuple[Part, ...], size: Tally) -> View:
    """The user message of the images a batch of results returned."""
    return {"role": "user", "content": wire_content(media)}, size, _fact(("user", (), None, True))


def _visible(part: Part | ThinkingBlock) -> bool:
    """Whether a part shows in the Anthropic view (thinking sent in a field does not)."""
    return isinstance(part, DataBlock) or (isinstance(part, TextBlock) and not blank(part.text))


_fact = cast(Callable[[tuple[object, ...]], Fact], partial(tuple.__new__, Fact))
"""`Fact(*fields)`, made without the Python frame of the named tuple's constructor."""

_scan = LeadingScan[Block, _Carry, View](_step, anywhere=True)
