"""Conversions from ctxlab's core types to agentscope 2.0.11 objects (test code only)."""

from __future__ import annotations

import json
from typing import Any

from ctxlab.core.blocks import (
    Block,
    DataBlock,
    HintBlock,
    Part,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages import Message
from ctxlab.core.tools import ToolSchema


def as_data(block: DataBlock) -> Any:
    from agentscope.message import Base64Source, URLSource
    from agentscope.message import DataBlock as AsData

    if block.kind == "url" and "://" in block.source:
        source: Any = URLSource(url=block.source, media_type=block.media_type)
    else:
        source = Base64Source(data=block.source, media_type=block.media_type)
    return AsData(source=source, name=block.name)


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
            return m.ToolResultBlock(
                id=block.id, name=block.name, output=[as_part(p) for p in block.output], state=block.state
            )


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
