"""Hypothesis strategies for the core types: blocks, messages, tool lists, paired histories."""

from __future__ import annotations

import json

from hypothesis import strategies as st

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
from ctxlab.core.messages.tools import ToolSchema

# Mixed scripts: ASCII, Latin accents, CJK, emoji (4-byte UTF-8), and newlines.
ALPHABET = st.sampled_from([*'abc xyz{}"\\\n\t', "é", "ß", "中", "文", "字", "😀", "🚀", "한", "ア"])
texts = st.text(alphabet=ALPHABET, max_size=60)
names = st.sampled_from(["Read", "grep", "bash", "retrieve", "TaskList", "工具"])
ids = st.from_regex(r"call_[a-z0-9]{1,6}", fullmatch=True)

data_blocks = st.builds(
    DataBlock,
    media_type=st.sampled_from(["image/png", "image/jpeg", "audio/mpeg", "application/pdf"]),
    source=st.sampled_from(["https://example.com/a.png", "aGVsbG8=", "workspace://x/y.png"]),
    kind=st.sampled_from(["url", "base64"]),
)
text_blocks = st.builds(TextBlock, text=texts)
parts: st.SearchStrategy[Part] = st.one_of(text_blocks, data_blocks)


@st.composite
def tool_inputs(draw: st.DrawFn) -> str:
    """A JSON argument string, as a model would produce it."""
    args = draw(st.dictionaries(st.sampled_from(["path", "query", "n", "路径"]), texts, max_size=3))
    return json.dumps(args, ensure_ascii=draw(st.booleans()))


blocks: st.SearchStrategy[Block] = st.one_of(
    text_blocks,
    st.builds(ThinkingBlock, thinking=texts),
    st.builds(HintBlock, hint=st.one_of(texts, st.tuples(parts) | st.lists(parts, max_size=3).map(tuple))),
    st.builds(ToolCallBlock, id=ids, name=names, input=tool_inputs()),
    st.builds(
        ToolResultBlock,
        id=ids,
        name=names,
        output=st.lists(parts, max_size=3).map(tuple),
        state=st.sampled_from(["success", "error", "running"]),
    ),
    data_blocks,
)

messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant"]),
    blocks=st.lists(blocks, max_size=5).map(tuple),
)

schemas = st.builds(
    ToolSchema.of,
    name=names,
    description=texts,
    parameters=st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(st.sampled_from(["a", "é", "中"]), st.just({"type": "string"}))
        },
    ),
)
tool_lists = st.lists(schemas, max_size=3, unique_by=lambda tool: tool.name).map(tuple)
"""Tools a request offers: each name once, as providers and every workload source require."""


@st.composite
def paired_histories(draw: st.DrawFn) -> list[Message]:
    """A well-formed stored history: user turns, then replies whose rounds store calls first and
    their results after, every call answered, hints and text around them."""
    history: list[Message] = []
    counter = 0
    for turn in range(draw(st.integers(1, 4))):
        history.append(Message(role="user", blocks=(draw(text_blocks),), id=f"u{turn}"))
        reply: list[Block] = []
        if draw(st.booleans()):
            reply.append(HintBlock(hint=draw(texts), source="runtime"))
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                reply.append(draw(text_blocks))
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(ToolCallBlock(id=f"c{counter}", name=draw(names), input=draw(tool_inputs())))
            reply.extend(calls)
            reply.extend(
                ToolResultBlock(id=c.id, name=c.name, output=draw(st.lists(parts, max_size=2).map(tuple)))
                for c in calls
            )
        reply.append(draw(text_blocks))
        history.append(Message(role="assistant", blocks=tuple(reply), id=f"r{turn}"))
    return history
