"""Conversions between ctxlab's core types and agentscope 2.0.11 objects, both ways (test code only)."""

from __future__ import annotations

import json
from typing import Any, cast

from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    HintBlock,
    Part,
    ResultState,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema


def as_data(block: DataBlock, block_id: str | None = None) -> Any:
    """An agentscope DataBlock; its id `block_id`, else one agentscope makes."""
    from agentscope.message import Base64Source, URLSource
    from agentscope.message import DataBlock as AsData
    from pydantic import AnyUrl

    if block.kind == "url" and "://" in block.source:
        source: Any = URLSource(url=AnyUrl(block.source), media_type=block.media_type)
    else:
        source = Base64Source(data=block.source, media_type=block.media_type)
    if block_id is None:
        return AsData(source=source, name=block.name)
    return AsData(source=source, name=block.name, id=block_id)


def as_part(part: Part) -> Any:
    from agentscope.message import TextBlock as AsText

    return AsText(text=part.text) if isinstance(part, TextBlock) else as_data(part)


def as_block(block: Block) -> Any:
    from agentscope import message as m

    match block:
        case TextBlock() | DataBlock():
            return as_part(block)
        case ThinkingBlock():
            return m.ThinkingBlock(thinking=block.thinking)
        case HintBlock():
            hint = block.hint if isinstance(block.hint, str) else [as_part(p) for p in block.hint]
            return m.HintBlock(hint=hint, source=block.source)
        case ToolCallBlock():
            return m.ToolCallBlock(id=block.id, name=block.name, input=block.input)
        case ToolResultBlock():
            output = [as_part(p) for p in block.output]
            state = m.ToolResultState(block.state)
            return m.ToolResultBlock(id=block.id, name=block.name, output=output, state=state)


def as_msg(message: Message) -> Any:
    """An agentscope Msg with the same blocks (built unvalidated: counting needs no role rules)."""
    from agentscope.message import Msg

    return Msg.model_construct(
        name=message.name or message.role,
        role=message.role,
        content=[as_block(b) for b in message.blocks],
        id=message.id or "m",
        metadata={},
    )


def as_tools(tools: tuple[ToolSchema, ...]) -> list[dict[str, Any]]:
    """The tool list as agentscope's toolkit hands it to the model."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": json.loads(t.parameters),
            },
        }
        for t in tools
    ]


def from_part(block: Any) -> Part:
    """A ctxlab text or data part from an agentscope TextBlock or DataBlock."""
    from agentscope.message import DataBlock as AsData
    from agentscope.message import URLSource

    if not isinstance(block, AsData):
        return TextBlock(text=block.text)
    source = block.source
    if isinstance(source, URLSource):
        return DataBlock(media_type=source.media_type, source=str(source.url), kind="url", name=block.name)
    return DataBlock(media_type=source.media_type, source=source.data, kind="base64", name=block.name)


def _from_output(output: Any) -> tuple[Part, ...]:
    if isinstance(output, str):
        return (TextBlock(text=output),)
    return tuple(from_part(p) for p in output)


def _from_state(state: str) -> ResultState:
    if state in ("success", "error", "running"):
        return cast(ResultState, state)
    raise ValueError(f"tool result state {state!r} has no ctxlab equivalent (success, error, running)")


def from_block(block: Any) -> Block:
    """The ctxlab block equal to an agentscope content block (ids and timestamps dropped)."""
    from agentscope import message as m

    match block:
        case m.TextBlock() | m.DataBlock():
            return from_part(block)
        case m.ThinkingBlock():
            return ThinkingBlock(thinking=block.thinking)
        case m.HintBlock():
            hint = block.hint if isinstance(block.hint, str) else _from_output(block.hint)
            return HintBlock(hint=hint, source=block.source)
        case m.ToolCallBlock():
            return ToolCallBlock(id=block.id, name=block.name, input=block.input)
        case m.ToolResultBlock():
            output, state = _from_output(block.output), _from_state(block.state)
            return ToolResultBlock(id=block.id, name=block.name, output=output, state=state)
    raise TypeError(f"agentscope block {type(block).__name__} has no ctxlab equivalent")


def from_msg(msg: Any) -> Message:
    """The ctxlab message equal to an agentscope Msg: role, id, name and every block in order."""
    blocks = tuple(from_block(b) for b in msg.get_content_blocks())
    return Message(role=msg.role, blocks=blocks, id=msg.id, name=msg.name)
