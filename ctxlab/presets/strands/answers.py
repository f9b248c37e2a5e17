"""How strands stores a model's answer, and so what every later request carries of it.

strands-agents 1.62.0 parses a tool use's streamed arguments into `toolUse.input`
(`event_loop/streaming.py::handle_content_block_stop`): blank arguments become `{}`, arguments
that are not JSON become `{}` (with a warning), anything else is the parsed value, an object or
not. Its OpenAI provider writes the input back with `json.dumps(input, ensure_ascii=False)`
(`models/openai.py::format_request_message_tool_call`) in every request that carries the call:
non-ASCII as written, `", "` and `": "` as separators, numbers as Python writes them back.

Invariants: a pure function of the blocks; a block that strands would send unchanged is returned
as the same object, so the stored context keeps its identities.
"""

from __future__ import annotations

import json

from ctxlab.core.messages.blocks import Block, ToolCallBlock


def strands_arguments(raw: str) -> str:
    """A call's arguments as strands sends them after parsing `raw`.

    >>> strands_arguments('{"q":"北京","k":[1,2.50]}')
    '{"q": "北京", "k": [1, 2.5]}'
    >>> strands_arguments("not json"), strands_arguments("  "), strands_arguments("[1,2]")
    ('{}', '{}', '[1, 2]')
    """
    if not raw.strip():
        return "{}"
    try:
        return json.dumps(json.loads(raw), ensure_ascii=False)
    except ValueError:
        return "{}"


def strands_answer(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """The answer's blocks as strands keeps them: each call's arguments re-serialized."""
    return tuple(_kept(block) for block in blocks)


def _kept(block: Block) -> Block:
    if not isinstance(block, ToolCallBlock):
        return block
    arguments = strands_arguments(block.input)
    return block if arguments == block.input else ToolCallBlock(id=block.id, name=block.name, input=arguments)
