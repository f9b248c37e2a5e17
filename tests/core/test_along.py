"""A value per view message of a stored message, kept along a long message that grows: each read
equals the values made afresh, and a reply that grew costs the views it gained."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages import message as message_module
from ctxlab.core.messages.blocks import TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.edits import with_output
from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.resumable import forget
from ctxlab.core.messages.units import ViewUnit, placed_units
from ctxlab.core.wire import along
from ctxlab.core.wire.along import ViewParts
from ctxlab.core.wire.views import Wire, to_openai_one

Part = tuple[str, str, tuple[int, ...], str | None]


def part(message: Message, wire: Wire, unit: ViewUnit) -> Part:
    """A value of everything a part may read: the view message, the unit, its first block's name."""
    shown = message.blocks[unit.blocks[0]] if unit.blocks else None
    return json.dumps(wire, sort_keys=True), unit.kind, unit.blocks, getattr(shown, "name", None)


def afresh(message: Message) -> tuple[Part, ...]:
    return tuple(
        map(
            part, [message] * len(to_openai_one(message)), to_openai_one(message), placed_units(message, 0, 0)
        )
    )


block = st.one_of(
    st.builds(lambda k: ToolCallBlock(id=f"c{k}", name=f"t{k % 3}", input="{}"), st.integers(0, 30)),
    st.builds(
        lambda k: ToolResultBlock(id=f"c{k}", name=f"t{k % 3}", output=(TextBlock(text="r" * k),)),
        st.integers(0, 30),
    ),
    st.builds(TextBlock, text=st.sampled_from(["step", ""])),
    st.just(ThinkingBlock(thinking="hm")),
)


@given(
    st.lists(st.tuples(st.sampled_from(["grow", "grow", "grow", "cut", "clear", "back"]), block), max_size=60)
)
def test_each_read_is_the_values_made_afresh_whatever_was_read_before(
    plan: list[tuple[str, object]],
) -> None:
    """A reply grown a block at a time, cut short, copied with a result cleared, or an older
    version read again: each read equals the values made afresh."""
    parts = ViewParts(part)
    message, versions = Message(role="assistant", blocks=(), id="r"), []
    for action, new in plan:
        if action == "grow":
            message = message.appended(new)  # type: ignore[arg-type]
        elif action == "cut" and message.blocks:
            message = message.with_blocks(message.blocks[: len(message.blocks) * 2 // 3])
        elif action == "clear":
            blocks = tuple(
                with_output(b, "[cleared]") if isinstance(b, ToolResultBlock) else b for b in message.blocks
            )
            message = message.with_blocks(blocks)
        elif action == "back" and versions:
            message = versions[len(message.blocks) % len(versions)]
        versions.append(message)
        assert parts(message) == afresh(message)
    forget()


def test_a_reply_that_grew_costs_the_views_it_gained_even_read_in_turn_with_its_copies() -> None:
    """A reply read at every call with a cleared copy of it read in between: each read makes the
    values of its new views alone (the last view of each too: it may have grown)."""
    made: list[int] = []

    def counted(message: Message, wire: Wire, unit: ViewUnit) -> Part:
        made.append(unit.index)
        return part(message, wire, unit)

    parts = ViewParts(counted)
    reply = Message(role="assistant", blocks=(), id="r")
    for k in range(RESUMED_BLOCKS):
        reply = reply.appended(ToolCallBlock(id=f"c{k}", name="t", input="{}"))
        reply = reply.appended(ToolResultBlock(id=f"c{k}", name="t", output=(TextBlock(text="r" * 50),)))
    for k in range(RESUMED_BLOCKS, RESUMED_BLOCKS + 5):
        reply = reply.appended(ToolCallBlock(id=f"c{k}", name="t", input="{}"))
        reply = reply.appended(ToolResultBlock(id=f"c{k}", name="t", output=(TextBlock(text="r" * 50),)))
        cleared = reply.with_blocks(
            tuple(with_output(b, "[x]") if isinstance(b, ToolResultBlock) else b for b in reply.blocks)
        )
        for message in (reply, cleared):
            made.clear()
            assert parts(message) == afresh(message)
            if k > RESUMED_BLOCKS:
                assert len(made) <= 3, made  # the call, its result, and the view before them
    forget()


def test_a_reply_that_grew_is_found_along_its_lineage_without_comparing_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The view tuples of a grown reply are noted as sharing their leading views, so its kept
    read is found by the lineage: no view tuple is compared from its start."""
    compared: list[int] = []

    def same_leading(a: Sequence[object], b: Sequence[object]) -> int:
        compared.append(min(len(a), len(b)))
        return message_module.same_leading(a, b)

    monkeypatch.setattr(along, "same_leading", same_leading)
    parts = ViewParts(part)
    reply = Message(role="assistant", blocks=(), id="r")
    for k in range(RESUMED_BLOCKS + 5):
        reply = reply.appended(ToolCallBlock(id=f"c{k}", name="t", input="{}"))
        reply = reply.appended(ToolResultBlock(id=f"c{k}", name="t", output=(TextBlock(text="r"),)))
        compared.clear()
        assert parts(reply) == afresh(reply)
        if 2 * k > RESUMED_BLOCKS + 2:  # the read before was long too, and kept
            assert compared == []
    forget()
