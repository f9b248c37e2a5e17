"""Hypothesis strategies and builders for the context-management families.

`agent_histories` draws well-formed stored histories in AgentScope's shape, with what the
families key on: read/grep/bash calls over small pools of paths, patterns and commands (so that
duplicates occur), multi-line results of varied sizes, images in some results, hints and thinking
between rounds, parallel batches, several user turns.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

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
from ctxlab.core.messages.message import Message, text_message

PATHS = ("src/app.py", "README.md", "config.yaml")
PATTERNS = ("TODO", "def main")
COMMANDS = ("pytest -q", "ls", "git status")
IMAGE = DataBlock(media_type="image/png", source="https://example.com/plot.png")


def call(call_id: str, tool: str, **arguments: object) -> ToolCallBlock:
    """A call whose input is the JSON of `arguments`."""
    return ToolCallBlock.of(call_id, tool, arguments)


def result(
    call_id: str, text: str, tool: str = "Read", *parts: Part, state: ResultState = "success"
) -> ToolResultBlock:
    """A result holding `text` (then any further parts)."""
    return ToolResultBlock(id=call_id, name=tool, output=(TextBlock(text=text), *parts), state=state)


def reply(*blocks: Block, id: str = "") -> Message:
    """An assistant message holding `blocks`."""
    return Message(role="assistant", blocks=blocks, id=id)


def user(text: str, id: str = "") -> Message:
    """A user message of one text."""
    return text_message("user", text, id=id)


def lines(count: int, width: int = 40, tag: str = "x") -> str:
    """`count` lines of `width` ASCII characters (plus the newline between lines)."""
    return "\n".join(f"{tag}{k:05d}".ljust(width, ".") for k in range(count))


@st.composite
def tool_call(draw: st.DrawFn, call_id: str) -> ToolCallBlock:
    """A read, grep, bash or other call over the small pools."""
    kind = draw(st.sampled_from(["Read", "read_file", "grep", "Bash", "retrieve"]))
    if kind in ("Read", "read_file"):
        key = draw(st.sampled_from(["file_path", "path"]))
        return call(call_id, kind, **{key: draw(st.sampled_from(PATHS))})
    if kind == "grep":
        return call(call_id, kind, pattern=draw(st.sampled_from(PATTERNS)), path=draw(st.sampled_from(PATHS)))
    if kind == "Bash":
        return call(call_id, kind, command=draw(st.sampled_from(COMMANDS)))
    return ToolCallBlock(id=call_id, name=kind, input=json.dumps({"query": draw(st.sampled_from(PATTERNS))}))


@st.composite
def tool_result(draw: st.DrawFn, called: ToolCallBlock) -> ToolResultBlock:
    """A result for `called`: a few to many lines, sometimes an image, sometimes an error."""
    text = lines(draw(st.integers(0, 30)), tag=called.id)
    parts: tuple[Part, ...] = (IMAGE,) if draw(st.integers(0, 5)) == 0 else ()
    state: ResultState = "error" if draw(st.integers(0, 6)) == 0 else "success"
    return result(called.id, text, called.name, *parts, state=state)


@st.composite
def agent_histories(draw: st.DrawFn, max_turns: int = 4, max_rounds: int = 4) -> list[Message]:
    """A well-formed stored history: every call answered in its own reply, calls stored first."""
    history: list[Message] = []
    counter = 0
    for turn in range(draw(st.integers(1, max_turns))):
        history.append(user(f"task {turn}: " + lines(draw(st.integers(1, 3)), tag="u"), id=f"u{turn}"))
        blocks: list[Block] = []
        for round_ in range(draw(st.integers(0, max_rounds))):
            if round_ and draw(st.booleans()):
                blocks.append(HintBlock(hint=f"<reminder {turn}.{round_}>", source="runtime"))
            if draw(st.booleans()):
                blocks.append(ThinkingBlock(thinking="plan " * draw(st.integers(1, 5))))
            if draw(st.booleans()):
                blocks.append(TextBlock(text=f"step {turn}.{round_}"))
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(draw(tool_call(f"c{counter}")))
            blocks.extend(calls)
            blocks.extend(draw(tool_result(c)) for c in calls)
        blocks.append(TextBlock(text=f"answer {turn}"))
        history.append(Message(role="assistant", blocks=tuple(blocks), id=f"r{turn}"))
    return history
