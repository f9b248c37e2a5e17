"""Copies of stored messages with some blocks replaced, the same copy for the same edits; and
the replacement a clearing family puts in place of a result, the same block for the same text.

A request-only edit (clearing, masking) is worked out from the whole history at every step.
Giving back the copy made before for the same message and equal replacements keeps each request
made of the objects the last one held, so whatever is kept by identity (the meters' work, a
family's view) is reused, not redone.

Invariants:
- `replace_blocks` keeps every untouched message as the same object, and gives an edited one
  back as the very copy an earlier call with equal replacements made (`core.messages.memo`);
  `with_output` gives back the very block it made before for the same result and text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ctxlab.core.messages.blocks import Block, TextBlock, ToolResultBlock
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


def holds_only(result: ToolResultBlock, text: str) -> bool:
    """Whether `result`'s whole output is `text`: `result.output == (TextBlock(text=text),)`,
    without building a block (a clearing family asks it of every old result at every call)."""
    output = result.output
    return len(output) == 1 and type(output[0]) is TextBlock and output[0].text == text


def with_output(result: ToolResultBlock, text: str) -> ToolResultBlock:
    """`result` whose whole output is `text` (id, name and state kept): the very block made the
    last time for this result and text, so a result cleared at every step is one object."""
    return _with_output(result, text)


def _result_with_output(result: ToolResultBlock, text: str) -> ToolResultBlock:
    return ToolResultBlock(id=result.id, name=result.name, output=(TextBlock(text=text),), state=result.state)


_with_output = IdentityMemo[ToolResultBlock, ToolResultBlock](_result_with_output)
