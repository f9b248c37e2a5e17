"""Copies of stored messages with some blocks replaced, the same copy for the same edits.

A request-only edit (clearing, masking) is worked out from the whole history at every step.
Giving back the copy made before for the same message and equal replacements keeps each request
made of the objects the last one held, so whatever is kept by identity (the meters' work, a
family's view) is reused, not redone.

Invariants:
- `replace_blocks` keeps every untouched message as the same object, and gives an edited one
  back as the very copy an earlier call with equal replacements made (`core.messages.memo`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ctxlab.core.messages.blocks import Block
from ctxlab.core.messages.memo import IdentityMemo
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.units import BlockRef


def replace_blocks(
    messages: Sequence[Message], replacements: Mapping[BlockRef, Block]
) -> tuple[Message, ...]:
    """`messages` with the referenced blocks replaced; untouched messages stay the same objects,
    and a message given the same replacements as before is the copy made then."""
    by_message: dict[int, dict[int, Block]] = {}
    for ref, block in replacements.items():
        by_message.setdefault(ref.message, {})[ref.block] = block
    out = list(messages)
    for m, edits in by_message.items():
        out[m] = _edited(messages[m], tuple(sorted(edits.items())))
    return tuple(out)


def edited(message: Message, edits: tuple[tuple[int, Block], ...]) -> Message:
    """`message` with the block at each index replaced by the one paired with it."""
    changed = dict(edits)
    return message.with_blocks(tuple(changed.get(i, b) for i, b in enumerate(message.blocks)))


_edited = IdentityMemo[Message, Message](edited)
