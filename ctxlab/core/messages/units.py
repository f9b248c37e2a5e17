"""View units and protocol units: the stored context seen as the messages a provider receives.

Stored context keeps one assistant message per reply, its hints, texts, calls and results in time
order (`[A, B, resA, resB, text, C, resC]`). Families that think in messages count on the OpenAI
view (`wire.to_openai`): an assistant message for texts and calls, one `tool` message per result,
a user message per hint, and a user message for the images a batch of results returned. This
module maps each view message back to the blocks it comes from, so that every family edits the
stored context and never a throwaway view.

Invariants:
- `view_units(messages)` has exactly one unit per message of `to_openai(messages)`, in order, with
  the same role; `unit.index` is its position in that view.
- Within a stored message that yields any unit, the units' owned ranges `[start, end)` partition
  the message's blocks in order. Blocks no provider sees (thinking, hints without parts) belong to
  the next unit of their message, or to the last one when none follows. A media unit owns no
  block: its images live in the results it lists in `blocks`.
- A protocol unit is a call batch with every result answering it (and the media of those
  results); every other view unit is a protocol unit of its own. Protocol units partition the
  view and are ordered by their first unit.
- Edits keep every untouched message as the same object, so the engine's running tallies and the
  cache's prefix comparison stay cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Literal, NamedTuple, assert_never

from ctxlab.core.messages import latest, memo
from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat, LeadingScan
from ctxlab.core.messages.message import Message

UnitKind = Literal["system", "user", "text", "calls", "result", "hint", "media"]
WireRole = Literal["system", "user", "assistant", "tool"]


class BlockRef(NamedTuple):
    """Where a block lives: stored message index, block index within it."""

    message: int
    block: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewUnit:
    """One OpenAI-view message and the stored blocks it comes from.

    Attributes:
        index: position in `to_openai(messages)`.
        message: index of the stored message it comes from.
        start: first block the unit owns (what dropping it removes).
        end: one past the last block it owns.
        kind: system / user / text (assistant text) / calls (assistant call batch, maybe with
            text) / result / hint / media (images returned by a batch of results).
        role: the view message's role.
        blocks: indices of the blocks it shows; for media, the results holding its images.
        call_ids: ids of the calls a `calls` unit declares, or the call a `result` answers.
    """

    index: int
    message: int
    start: int
    end: int
    kind: UnitKind
    role: WireRole
    blocks: tuple[int, ...]
    call_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolUnit:
    """View units that must stay or go together: a call batch with its results, or one unit."""

    units: tuple[int, ...]
    call_ids: tuple[str, ...] = ()
    complete: bool = True

    @property
    def first(self) -> int:
        """The earliest view index of the unit."""
        return self.units[0]

    @property
    def last(self) -> int:
        """The latest view index of the unit."""
        return self.units[-1]


@dataclass(slots=True)
class _Segmenter:
    """Walks one stored message the way `to_openai` does, recording units (mutable, local)."""

    message: int
    role: WireRole
    next_index: int
    units: list[ViewUnit] = field(default_factory=list)
    pending: int = 0
    shown: list[int] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    media: list[int] = field(default_factory=list)

    def emit(
        self, kind: UnitKind, role: WireRole, end: int, shown: tuple[int, ...], ids: tuple[str, ...]
    ) -> None:
        here = {"index": self.next_index, "message": self.message, "start": self.pending}
        self.units.append(ViewUnit(**here, end=end, kind=kind, role=role, blocks=shown, call_ids=ids))
        self.next_index, self.pending = self.next_index + 1, end

    def flush(self, at: int) -> None:
        if self.shown:
            kind = "calls" if self.calls else _plain_kind(self.role)
            self.emit(kind, self.role, at, tuple(self.shown), tuple(self.calls))
        self.shown, self.calls = [], []

    def flush_media(self) -> None:
        if self.media:
            self.emit("media", "user", self.pending, tuple(self.media), ())
            self.media = []

    def add(self, i: int, block: Block) -> None:
        if not isinstance(block, ToolResultBlock):
            self.flush_media()
        match block:
            case TextBlock() | DataBlock():
                self.shown.append(i)
            case ThinkingBlock():
                pass
            case ToolCallBlock(id=call_id):
                self.shown.append(i)
                self.calls.append(call_id)
            case HintBlock():
                self.flush(i)
                if isinstance(block.hint, str) or block.hint:
                    self.emit("hint", "user", i + 1, (i,), ())
            case ToolResultBlock(id=call_id):
                self.flush(i)
                self.emit("result", "tool", i + 1, (i,), (call_id,))
                if any(isinstance(p, DataBlock) for p in block.output):
                    self.media.append(i)
            case _:
                assert_never(block)

    def finish(self, size: int) -> None:
        self.flush_media()
        self.flush(size)
        if self.units and self.pending < size:
            self.units[-1] = replace(self.units[-1], end=size)


def _plain_kind(role: WireRole) -> UnitKind:
    return "system" if role == "system" else "user" if role == "user" else "text"


def view_units(messages: Sequence[Message]) -> tuple[ViewUnit, ...]:
    """One unit per message of `to_openai(messages)`, in order.

    >>> from ctxlab.core.messages.message import text_message
    >>> from ctxlab.core.messages.blocks import ToolCallBlock as C, ToolResultBlock as R
    >>> reply = Message(role="assistant", blocks=(C(id="a", name="t", input="{}"),
    ...     R(id="a", name="t", output=()), TextBlock(text="done")))
    >>> [(u.kind, u.start, u.end) for u in view_units([text_message("user", "go"), reply])]
    [('user', 0, 1), ('calls', 0, 1), ('result', 1, 2), ('text', 2, 3)]

    A stored message's units depend only on it and where it stands, and a history mostly grows
    at its end, so each message's placed units are kept (`placed_units`), and so are the units
    of the histories last viewed (`LeadingConcat`): a step that views the whole history works
    out the units of what changed since. A message of `RESUMED_BLOCKS` blocks or more (a reply
    that grows by a round at every call) resumes the walk over one it begins with that stood
    at the same place (`LeadingScan`).
    """
    return _view_units(messages)


def _place_units(message: Message, position: int, first: int) -> tuple[ViewUnit, ...]:
    blocks = message.blocks
    if len(blocks) >= memo.RESUMED_BLOCKS:
        close = partial(_closed_units, message.role, (position, first), len(blocks))
        return _segments.finished(blocks, _NOTHING_READ, close, message.role, (position, first))
    segmenter = _Segmenter(message=position, role=message.role, next_index=first)
    for i, block in enumerate(blocks):
        segmenter.add(i, block)
    segmenter.finish(len(blocks))
    return tuple(segmenter.units)


def _closed_units(
    role: WireRole, place: tuple[int, int], size: int, carry: _Segment, done: Sequence[ViewUnit]
) -> memo.Closing[ViewUnit]:
    """The units the walk over a long message of `size` blocks stored at `place` (its position,
    its first unit's view index) closes at its end (`done` so far, `carry` after its last
    block): those still open, and its last unit again when the end extends it."""
    position, first = place
    segmenter = _resumed(carry, role, position, first + len(done))
    keep = max(len(done) - 1, 0)
    segmenter.units = list(done[keep:])
    segmenter.finish(size)
    return keep, segmenter.units


class _Segment(NamedTuple):
    """Where a walk over a message's blocks stands: blocks read, the first block no unit owns
    yet, and the blocks shown, calls declared and results with images since the last unit."""

    read: int
    pending: int
    shown: tuple[int, ...]
    calls: tuple[str, ...]
    media: tuple[int, ...]


_NOTHING_READ = _Segment(0, 0, (), (), ())


def _segment_step(
    carry: _Segment, block: Block, before: int, role: WireRole, place: tuple[int, int]
) -> tuple[list[ViewUnit], _Segment]:
    """The units reading one more block closes (`before` came earlier) in a message stored at
    `place` (its position, its first unit's view index), and where the walk stands after it."""
    position, first = place
    segmenter = _resumed(carry, role, position, first + before)
    segmenter.add(carry.read, block)
    after = _Segment(
        carry.read + 1,
        segmenter.pending,
        tuple(segmenter.shown),
        tuple(segmenter.calls),
        tuple(segmenter.media),
    )
    return segmenter.units, after


def _resumed(carry: _Segment, role: WireRole, position: int, next_index: int) -> _Segmenter:
    return _Segmenter(
        message=position,
        role=role,
        next_index=next_index,
        pending=carry.pending,
        shown=list(carry.shown),
        calls=list(carry.calls),
        media=list(carry.media),
    )


_segments = LeadingScan[Block, _Segment, ViewUnit](_segment_step)
"""A long message's units, read where it grew (a reply grows by a round at every call)."""


def own_units(message: Message) -> tuple[ViewUnit, ...]:
    """The units of `message` standing alone (at position 0, its first unit at view index 0)."""
    return _place_units(message, 0, 0)


def own_units_read(message: Message) -> Sequence[ViewUnit]:
    """`own_units(message)`, read in place: a long message's (`RESUMED_BLOCKS`) are the scan's
    own, with no copy of them made, to be read before the next read of a message's units."""
    blocks = message.blocks
    if len(blocks) < memo.RESUMED_BLOCKS:
        return _place_units(message, 0, 0)
    close = partial(_closed_units, message.role, (0, 0), len(blocks))
    return _segments.closed(blocks, _NOTHING_READ, close, message.role, (0, 0))


placed_units = IdentityMemo[Message, tuple[ViewUnit, ...]](_place_units)
"""The units of a message stored at a position, the first at a view index:
`placed_units(message, position, first)`, worked out once for each (kept by identity)."""

_view_units = LeadingConcat[Message, ViewUnit](placed_units)


def protocol_units(units: Sequence[ViewUnit]) -> tuple[ProtocolUnit, ...]:
    """Group view units into protocol units, ordered by their first view index.

    A result joins the latest earlier call batch that declared its id; a media unit joins the
    group of its last result; a result with no call, and every other unit, stands alone.
    """
    groups: list[list[int]] = []
    declared: dict[str, int] = {}  # call id -> group
    result_group: dict[tuple[int, int], int] = {}  # (message, block) -> group
    for unit in units:
        match unit.kind:
            case "calls":
                group = _new_group(groups, unit.index)
                declared.update((call_id, group) for call_id in unit.call_ids)
            case "result":
                group = _join(groups, declared.get(unit.call_ids[0], -1), unit.index)
                result_group[(unit.message, unit.blocks[0])] = group
            case "media":
                _join(groups, result_group.get((unit.message, unit.blocks[-1]), -1), unit.index)
            case "system" | "user" | "text" | "hint":
                _new_group(groups, unit.index)
            case _:
                assert_never(unit.kind)
    return tuple(_protocol_unit(members, units) for members in groups)


def answers_own_calls(units: Sequence[ViewUnit]) -> bool:
    """Whether every result among `units` answers a call declared before it among them.

    When each stored message's units answer their own calls, `protocol_units` of a history is
    every message's own protocol units in turn: a result joins the latest earlier batch that
    declared its id, and that one stands in the result's own message.
    """
    declared: set[str] = set()
    for unit in units:
        if unit.kind == "calls":
            declared.update(unit.call_ids)
        elif unit.kind == "result" and unit.call_ids[0] not in declared:
            return False
    return True


def _new_group(groups: list[list[int]], index: int) -> int:
    groups.append([index])
    return len(groups) - 1


def _join(groups: list[list[int]], group: int, index: int) -> int:
    if group < 0:
        return _new_group(groups, index)
    groups[group].append(index)
    return group


def _protocol_unit(members: list[int], units: Sequence[ViewUnit]) -> ProtocolUnit:
    head = units[members[0]]
    if head.kind != "calls":
        return ProtocolUnit(units=tuple(members))
    answered = {units[i].call_ids[0] for i in members if units[i].kind == "result"}
    return ProtocolUnit(
        units=tuple(members),
        call_ids=head.call_ids,
        complete=all(call_id in answered for call_id in head.call_ids),
    )


def safe_cut(groups: Sequence[ProtocolUnit], at: int) -> int:
    """The largest cut at or before `at` that no protocol unit straddles.

    A cut at `k` keeps view units `[0, k)` on one side and `[k, n)` on the other. A unit that
    starts before the cut and reaches past it moves the cut back to its first unit, repeatedly.

    Terminates: every move sets the cut to a unit's `first`, a view index below the cut, so the
    cut strictly falls and stays ≥ 0: at most `at` moves, `at + 1` passes over the groups.

    >>> safe_cut([ProtocolUnit(units=(0,)), ProtocolUnit(units=(1, 2, 3))], 2)
    1
    """
    cut = at
    moved = True
    while moved:
        moved = False
        for group in groups:
            if group.first < cut <= group.last:
                cut, moved = group.first, True
    return cut


class ContextSplit(NamedTuple):
    """A stored context cut at a view unit: `head` holds units before the cut, `tail` the rest."""

    head: tuple[Message, ...]
    tail: tuple[Message, ...]


def split_at_unit(messages: Sequence[Message], units: Sequence[ViewUnit], at: int) -> ContextSplit:
    """Cut `messages` before view unit `at` (0 ≤ at ≤ len(units)), splitting a stored message.

    Stored messages that yield no unit go to the side of their position. The views of the two
    sides add up to the whole view unless the cut falls inside a run of results whose images form
    one media message: the images stay with their results.
    """
    if at >= len(units):
        return ContextSplit(tuple(messages), ())
    unit = units[at]
    m, start = unit.message, unit.start
    head = list(messages[:m])
    tail = list(messages[m + 1 :])
    message = messages[m]
    if start == 0:
        tail.insert(0, message)
    elif start >= len(message.blocks):
        head.append(message)
    else:
        head.append(message.with_blocks(message.blocks[:start]))
        tail.insert(0, message.with_blocks(message.blocks[start:]))
    return ContextSplit(tuple(head), tuple(tail))


def call_blocks(messages: Sequence[Message]) -> dict[str, tuple[BlockRef, ToolCallBlock]]:
    """Every call by id (a later declaration of the same id wins), with where it lives.

    The calls of the histories last read are kept (`LeadingConcat`): a step that reads the
    whole history reads the messages that changed.
    """
    return dict(_declared_calls(messages))


def call_declarations(messages: Sequence[Message]) -> tuple[tuple[str, tuple[BlockRef, ToolCallBlock]], ...]:
    """Every call declaration in order, as `(id, (where, call))` (kept like `call_blocks`'s)."""
    return _declared_calls(messages)


def calls_by_id(declared: tuple[_Declared, ...]) -> Mapping[str, tuple[BlockRef, ToolCallBlock]]:
    """`call_declarations`' result by id (a later declaration of the same id wins), read-only
    and valid until the next call: the index of a history that grew is extended, not rebuilt
    (`latest.Indexed`)."""
    return _calls_by_id(declared)


def _message_calls(message: Message, position: int, _before: int) -> list[_Declared] | tuple[_Declared, ...]:
    blocks = message.blocks
    if len(blocks) >= memo.RESUMED_BLOCKS:  # a reply grows by a round at every call
        return _calls_scan.with_carry(blocks, 0, position)[0]
    return [
        (block.id, (BlockRef(position, i), block))
        for i, block in enumerate(blocks)
        if isinstance(block, ToolCallBlock)
    ]


def _call_step(at: int, block: Block, _before: int, position: int) -> tuple[tuple[_Declared, ...], int]:
    """The declaration `block` makes, if a call, at block `at` of a message stored at `position`."""
    declared = ((block.id, (BlockRef(position, at), block)),) if isinstance(block, ToolCallBlock) else ()
    return declared, at + 1


_Declared = tuple[str, tuple[BlockRef, ToolCallBlock]]
_declared_calls = LeadingConcat[Message, _Declared](_message_calls)
_calls_scan = LeadingScan[Block, int, _Declared](_call_step)
_calls_by_id = latest.Indexed[str, tuple[BlockRef, ToolCallBlock]]()


def result_block(messages: Sequence[Message], unit: ViewUnit) -> ToolResultBlock:
    """The result block a `result` unit shows."""
    block = messages[unit.message].blocks[unit.blocks[0]]
    assert isinstance(block, ToolResultBlock), f"view unit {unit.index} is a {unit.kind}, not a result"
    return block


def result_ref(unit: ViewUnit) -> BlockRef:
    """Where the result block of a `result` unit lives."""
    return BlockRef(unit.message, unit.blocks[0])
