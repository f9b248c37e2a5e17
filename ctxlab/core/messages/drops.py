"""Dropping view units from a stored context: what a window or an eviction keeps.

Invariants:
- `drop_units(m, u, d)` returns a context whose view is the view of `m` without the units `d`:
  a stored message is split in two where removing units between two assistant parts would
  otherwise merge them. Images travel with their results: dropping a result drops its images from
  the media message, and dropping a media unit strips the images from its results. Nothing here
  keeps calls and results together: a protocol-blind drop can orphan a result, on purpose.
- `drop_front(m, u, stop, keep_system=...)` is `drop_units` of every unit before `stop` (system
  units spared with `keep_system`), reading only what stays.
- Untouched messages stay the same objects.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Collection, Sequence

from ctxlab.core.messages.blocks import Block, DataBlock, ToolResultBlock
from ctxlab.core.messages.memo import LeadingConcat
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import tally_between
from ctxlab.core.messages.units import UnitKind, ViewUnit, own_units

_ACCUMULATING: frozenset[UnitKind] = frozenset({"system", "user", "text", "calls"})  # gather texts and calls


def without_data(result: ToolResultBlock) -> ToolResultBlock:
    """`result` with its images and other data parts removed."""
    output = tuple(p for p in result.output if not isinstance(p, DataBlock))
    return ToolResultBlock(id=result.id, name=result.name, output=output, state=result.state)


def drop_units(
    messages: Sequence[Message], units: Sequence[ViewUnit], drop: Collection[int]
) -> tuple[Message, ...]:
    """`messages` without the view units `drop` (view indices), edited in the stored context.

    The view of the result is the view of `messages` without those units, except that images
    follow their results (see the module invariants). Nothing here keeps calls and results
    together: a protocol-blind drop can orphan a result, on purpose.
    """
    dropped = set(drop)
    if not dropped:
        return tuple(messages)
    dropped.update(_orphaned_media(units, dropped))
    stripped = {
        (unit.message, i)
        for unit in units
        if unit.kind == "media" and unit.index in dropped
        for i in unit.blocks
    }
    touched = {u.message for u in units if u.index in dropped} | {m for m, _ in stripped}
    pieces = {
        m: _rebuild(messages[m], m, tuple(group), dropped, stripped) if m in touched else [messages[m]]
        for m, group in itertools.groupby(units, key=lambda u: u.message)
    }
    out: list[Message] = []
    for m, message in enumerate(messages):
        out.extend(pieces.get(m, [message]))
    return tuple(out)


def drop_front(
    messages: Sequence[Message], units: Sequence[ViewUnit], stop: int, *, keep_system: bool
) -> tuple[Message, ...]:
    """`drop_units(messages, units, dropped)` for `dropped` every unit before `stop` (but the
    system units with `keep_system`), reading only what stands before the cut (messages without
    units, and those holding a system unit) and the message the cut falls in: a window over a
    long history costs what it keeps.
    """
    end = units[stop].message if stop < len(units) else len(messages)
    standing = _standing(messages)
    out: list[Message] = []
    for m, holds_system in standing[: bisect.bisect_left(standing, (end,))]:
        if not holds_system:
            out.append(messages[m])  # no unit: drop_units keeps it
        elif keep_system:
            out.extend(_cut_front(messages[m], _units_of(units, m), len(units), keep_system))
    if end < len(messages):
        out.extend(_cut_front(messages[end], _units_of(units, end), stop, keep_system))
        out.extend(messages[end + 1 :])
    return tuple(out)


def system_units_before(messages: Sequence[Message], units: Sequence[ViewUnit], stop: int) -> list[int]:
    """The view indices of the system units before `stop`, read like `drop_front` reads."""
    end = units[stop].message if stop < len(units) else len(messages)
    standing = _standing(messages)
    held = [m for m, holds_system in standing[: bisect.bisect_left(standing, (end,))] if holds_system]
    if end < len(messages) and messages[end].role == "system":  # only a system message has system units
        held.append(end)
    return [u.index for m in held for u in _units_of(units, m) if u.kind == "system" and u.index < stop]


def _units_of(units: Sequence[ViewUnit], m: int) -> Sequence[ViewUnit]:
    """The units of stored message `m` (units are ordered by message)."""
    first = bisect.bisect_left(units, m, key=lambda u: u.message)
    return units[first : bisect.bisect_right(units, m, lo=first, key=lambda u: u.message)]


def _cut_front(message: Message, group: Sequence[ViewUnit], stop: int, keep_system: bool) -> list[Message]:
    """What message `group[0].message` becomes when the units before `stop` go (system units
    stay with `keep_system`), with the media whose results all went.

    When no unit before the cut stays, what is left is one run of blocks, from the first kept
    unit on: units own their blocks in order, and no two kept units are parted by a dropped one
    that could let them merge. Only a media unit can go after the cut (its results all went),
    and it owns no block unless it is the last unit, which owns the hidden blocks that end the
    message."""
    if keep_system and message.role == "system":
        return _cut_front_sparing(message, group, stop)
    k = bisect.bisect_left(group, stop, key=_index)
    if k == 0:
        return [message]
    head = group[k].start if k < len(group) else len(message.blocks)
    last = group[-1]
    gone = last.kind == "media" and last.blocks[-1] < head
    end = last.start if gone else len(message.blocks)
    if head >= end:
        return []
    return [message.with_blocks(message.blocks[head:end], tally_between(message.blocks, head, end))]


def _index(unit: ViewUnit) -> int:
    return unit.index


def _cut_front_sparing(message: Message, group: Sequence[ViewUnit], stop: int) -> list[Message]:
    """`_cut_front` of a system message whose system units stay."""
    dropped = {u.index for u in group if u.index < stop and u.kind != "system"}
    results = {u.blocks[0]: u.index for u in group if u.kind == "result"}
    dropped.update(
        u.index for u in group if u.kind == "media" and all(results[i] in dropped for i in u.blocks)
    )
    return _rebuild(message, group[0].message, tuple(group), dropped, set()) if dropped else [message]


def _standing_parts(message: Message, position: int, _before: int) -> tuple[tuple[int, bool], ...]:
    units = own_units(message)
    if not units:
        return ((position, False),)
    holds_system = message.role == "system" and any(u.kind == "system" for u in units)
    return ((position, True),) if holds_system else ()


_standing = LeadingConcat[Message, tuple[int, bool]](_standing_parts)
"""Messages a front drop may leave standing: `(position, holds a system unit)` for each message
with no unit or with a system unit, in order."""


def _orphaned_media(units: Sequence[ViewUnit], dropped: set[int]) -> list[int]:
    """Media units all of whose results are dropped: they vanish from the view with them."""
    results = {(u.message, u.blocks[0]): u.index for u in units if u.kind == "result"}
    return [
        u.index
        for u in units
        if u.kind == "media" and all(results[(u.message, i)] in dropped for i in u.blocks)
    ]


def _rebuild(
    message: Message,
    m: int,
    group: tuple[ViewUnit, ...],
    dropped: set[int],
    stripped: set[tuple[int, int]],
) -> list[Message]:
    """The stored pieces message `m` becomes once `dropped` units are gone."""
    pieces: list[list[Block]] = [[]]
    previous: ViewUnit | None = None
    gap = False
    for unit in group:
        if unit.index in dropped:
            gap = True
            continue
        if previous is not None and gap and _would_merge(previous, unit):
            pieces.append([])
        pieces[-1].extend(_owned(message, unit, m, stripped))
        previous, gap = unit, False
    return [message.with_blocks(tuple(blocks)) for blocks in pieces if blocks]


def _owned(message: Message, unit: ViewUnit, m: int, stripped: set[tuple[int, int]]) -> list[Block]:
    blocks: list[Block] = []
    for i in range(unit.start, unit.end):
        block = message.blocks[i]
        if (m, i) in stripped and isinstance(block, ToolResultBlock):
            block = without_data(block)
        blocks.append(block)
    return blocks


def _would_merge(previous: ViewUnit, unit: ViewUnit) -> bool:
    """Would `unit` fold into the view message of `previous` were they adjacent in one message?"""
    if previous.kind in _ACCUMULATING and unit.kind in _ACCUMULATING:
        return True
    return previous.kind == "media" and unit.kind == "result"
