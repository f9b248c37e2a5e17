"""The bridge converts both ways without loss: ctxlab -> agentscope -> ctxlab is the identity."""

from __future__ import annotations

import pytest
from hypothesis import assume, given

from ctxlab.core.messages.blocks import Block, data_parts
from ctxlab.core.messages.message import Message
from tests.parity.bridge import as_block, as_msg, from_block, from_msg
from tests.strategies import blocks, messages


def faithful(block: Block) -> bool:
    """A data block given as a URL must look like one: agentscope keeps anything else as base64."""
    return all(d.kind == "base64" or "://" in d.source for d in data_parts(block))


@given(blocks)
def test_block_round_trip(block: Block) -> None:
    assume(faithful(block))
    assert from_block(as_block(block)) == block


@given(messages)
def test_message_round_trip_keeps_role_blocks_id_and_name(message: Message) -> None:
    assume(all(faithful(b) for b in message.blocks))
    named = Message(role=message.role, blocks=message.blocks, id="m1", name="agent")
    assert from_msg(as_msg(named)) == named


def test_unknown_result_state_is_refused() -> None:
    from agentscope.message import ToolResultBlock as AsResult
    from agentscope.message import ToolResultState

    with pytest.raises(ValueError, match="'denied' has no ctxlab equivalent"):
        from_block(AsResult(id="c", name="t", output="no", state=ToolResultState.DENIED))
