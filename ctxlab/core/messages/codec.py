"""Blocks and messages as JSON-ready data, and back, exactly.

Invariant: `decode_messages(encode_messages(ms)) == ms` for every message list (tested by
property), so offloaded context and recorded traces read back to the very same values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    HintBlock,
    Part,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.message import Message

Data = dict[str, Any]


def encode_part(part: Part) -> Data:
    """A text or data part as data."""
    if isinstance(part, TextBlock):
        return {"type": "text", "text": part.text}
    return _encode_data(part)


def _encode_data(block: DataBlock) -> Data:
    data: Data = {"type": "data", "media_type": block.media_type, "source": block.source, "kind": block.kind}
    if block.name is not None:
        data["name"] = block.name
    return data


def encode_block(block: Block) -> Data:
    """Any block as data."""
    match block:
        case TextBlock() | DataBlock():
            return encode_part(block)
        case ThinkingBlock():
            field = {"wire_field": block.wire_field} if block.wire_field else {}
            return {"type": "thinking", "thinking": block.thinking, **field}
        case HintBlock():
            hint: Any = block.hint if isinstance(block.hint, str) else [encode_part(p) for p in block.hint]
            return {"type": "hint", "hint": hint, "source": block.source}
        case ToolCallBlock():
            return {"type": "tool_call", "id": block.id, "name": block.name, "input": block.input}
        case ToolResultBlock():
            output = [encode_part(p) for p in block.output]
            return {
                "type": "tool_result",
                "id": block.id,
                "name": block.name,
                "output": output,
                "state": block.state,
                **({"listed": True} if block.listed else {}),
            }
        case _:
            assert_never(block)


def encode_message(message: Message) -> Data:
    """A message as data."""
    data: Data = {"role": message.role, "id": message.id, "blocks": [encode_block(b) for b in message.blocks]}
    if message.name is not None:
        data["name"] = message.name
    return data


def encode_messages(messages: Sequence[Message]) -> list[Data]:
    """Messages as data."""
    return [encode_message(m) for m in messages]


def decode_part(data: Mapping[str, Any]) -> Part:
    """A part from data."""
    if data["type"] == "text":
        return TextBlock(text=data["text"])
    return DataBlock(
        media_type=data["media_type"], source=data["source"], kind=data["kind"], name=data.get("name")
    )


def decode_block(data: Mapping[str, Any]) -> Block:
    """A block from data.

    Raises:
        ValueError: unknown block type.
    """
    kind = data["type"]
    if kind in ("text", "data"):
        return decode_part(data)
    if kind == "thinking":
        return ThinkingBlock(thinking=data["thinking"], wire_field=data.get("wire_field"))
    if kind == "hint":
        hint = data["hint"]
        parts = hint if isinstance(hint, str) else tuple(decode_part(p) for p in hint)
        return HintBlock(hint=parts, source=data.get("source"))
    if kind == "tool_call":
        return ToolCallBlock(id=data["id"], name=data["name"], input=data["input"])
    if kind == "tool_result":
        output = tuple(decode_part(p) for p in data["output"])
        return ToolResultBlock(
            id=data["id"],
            name=data["name"],
            output=output,
            state=data["state"],
            listed=data.get("listed", False),
        )
    raise ValueError(f"unknown block type {kind!r}")


def decode_message(data: Mapping[str, Any]) -> Message:
    """A message from data."""
    blocks = tuple(decode_block(b) for b in data["blocks"])
    return Message(role=data["role"], blocks=blocks, id=data.get("id", ""), name=data.get("name"))


def decode_messages(data: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Messages from data."""
    return [decode_message(d) for d in data]
