"""How strands stores a model's answer, and so what every later request carries of it.

strands-agents 1.62.0 parses a tool use's streamed arguments into `toolUse.input`
(`event_loop/streaming.py::handle_content_block_stop`): blank arguments become `{}`, arguments
that are not JSON become `{}` (with a warning), anything else is the parsed value, an object or
not. Its OpenAI provider writes the input back with `json.dumps(input, ensure_ascii=False)`
(`models/openai.py::format_request_message_tool_call`) in every request that carries the call:
non-ASCII as written, `", "` and `": "` as separators, numbers as Python writes them back.

An answer with no content (no text, no call) is kept as an assistant message with an empty
content list, which strands sends as `[blank text]` (`event_loop/streaming.py::_normalize_messages`,
on a copy of every reasoning request) and its sliding window counts: the lab stores that text,
so every reasoning request carries and counts it as strands sends it. A summary request goes to
the model directly (`compression/context_compression.py`), without that normalization, and the
OpenAI provider leaves a message with no content out of it (`_format_regular_messages`, then
`format_request_messages`): `summary_messages` leaves the stored text out.

A model's thinking, streamed by the OpenAI provider as a `reasoning_content`, is kept as a
`reasoningContent` block of the assistant message, and the provider leaves every such block out of
every request (`_format_regular_messages`, with a warning), a message holding nothing else
included; no counter of strands' reads it. The lab keeps no thinking: an answer of thinking
alone is stored as one empty thinking block, which no request shows and no counter counts (and
which, unlike strands' message of reasoning alone, the sliding window does not count as a
message: a declared deviation).

Invariants: a pure function of the blocks; a block that strands would send unchanged is returned
as the same object, so the stored context keeps its identities.
"""

from __future__ import annotations

import json

from ctxlab.core.messages.blocks import Block, TextBlock, ThinkingBlock, with_arguments
from ctxlab.core.messages.message import Message

BLANK_TEXT = "[blank text]"
"""What strands sends for an assistant message with no content (a literal in
`event_loop/streaming.py`)."""


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


REASONING_ALONE = ThinkingBlock(thinking="")
"""What the lab keeps of an answer of thinking alone: a block no request shows or counts."""


def strands_answer(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """The answer's blocks as strands keeps them: each call's arguments re-serialized; an empty
    answer a message sent as `[blank text]`; thinking left out (never sent), an answer of
    thinking alone `REASONING_ALONE`."""
    if not blocks:
        return (TextBlock(text=BLANK_TEXT),)
    if any(isinstance(b, ThinkingBlock) for b in blocks):
        blocks = tuple(b for b in blocks if not isinstance(b, ThinkingBlock))
        if not blocks:
            return (REASONING_ALONE,)
    return with_arguments(blocks, strands_arguments)


def summary_messages(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """`messages` as a summary request sends them: without the empty answers kept as
    `[blank text]` (a message with nothing left is left out)."""
    out: list[Message] = []
    for message in messages:
        kept = message.blocks
        if message.role == "assistant":
            kept = tuple(b for b in kept if not (isinstance(b, TextBlock) and b.text == BLANK_TEXT))
        if kept is message.blocks or len(kept) == len(message.blocks):
            out.append(message)
        elif kept:
            out.append(message.with_blocks(kept))
    return tuple(out)
