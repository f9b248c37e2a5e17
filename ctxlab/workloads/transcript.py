"""The OpenAI transcript of a script replayed with no context management, and back.

Invariants:
- `script_transcript(script)` is what a provider would receive at the end of the script if
  nothing were compressed, cleared or injected: the system prompt, each turn's user message,
  and each reply split the way `ctxlab.core.wire.views.to_openai` splits it.
- Mapping that transcript back (`ctxlab.workloads.trace.map_wire`) gives the same script up to
  what a transcript cannot carry (`transcript_form`): thinking, error flags, clock moves, names
  of data blocks, empty texts, built-in tools' results (unknown until they run, so empty here),
  and images in tool results (the view sends them after the batch as a user message); a script
  with no tool schemas gets those its calls imply (`ctxlab.workloads.inferred_tools`).
"""

from __future__ import annotations

from dataclasses import replace

from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    Part,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.message import Message
from ctxlab.core.wire.views import Wire, to_openai
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.workloads.inferred_tools import inferred_schemas


def script_messages(script: Script) -> list[Message]:
    """The stored messages of `script` replayed with no context management.

    Built-in tools' results are unknown until they run and appear empty; every reply ends with
    its final answer, even an empty one.
    """
    script = assign_call_ids(script)
    out = (
        [Message(role="system", blocks=(TextBlock(text=script.system_prompt),))]
        if script.system_prompt
        else []
    )
    for turn in script.turns:
        out.append(Message(role="user", blocks=turn.user or (TextBlock(text=""),)))
        blocks: list[Block] = []
        for round_ in turn.rounds:
            blocks.extend(_round_blocks(round_))
        blocks.append(TextBlock(text=turn.final))
        out.append(Message(role="assistant", blocks=tuple(blocks)))
    return out


def _round_blocks(round_: ScriptedRound) -> list[Block]:
    blocks: list[Block] = [ThinkingBlock(thinking=round_.thinking)] if round_.thinking else []
    if round_.text:
        blocks.append(TextBlock(text=round_.text))
    blocks.extend(ToolCallBlock(id=c.id or "", name=c.tool, input=c.input) for c in round_.calls)
    blocks.extend(
        ToolResultBlock(
            id=c.id or "", name=c.tool, output=c.result or (), state="error" if c.error else "success"
        )
        for c in round_.calls
    )
    return blocks


def script_transcript(script: Script) -> list[Wire]:
    """The OpenAI chat messages of `script` replayed with no context management."""
    return to_openai(script_messages(script))


def transcript_form(script: Script) -> Script:
    """`script` reduced to what an OpenAI transcript carries (see the module docstring)."""

    def parts(items: tuple[Part, ...] | None) -> tuple[Part, ...]:
        kept = (p for p in items or () if not (isinstance(p, TextBlock) and not p.text))
        return tuple(replace(p, name=None) if isinstance(p, DataBlock) else p for p in kept)

    def call(c: ScriptedCall) -> ScriptedCall:
        return replace(c, result=parts(c.result), error=False)

    def round_(r: ScriptedRound) -> ScriptedRound:
        return ScriptedRound(text=r.text or None, calls=tuple(call(c) for c in r.calls))

    turns = tuple(
        ScriptedTurn(user=parts(t.user), rounds=tuple(round_(r) for r in t.rounds), final=t.final)
        for t in script.turns
    )
    tools = script.tools or inferred_schemas((c.tool, c.input) for c in script.calls())
    return replace(script, tools=tools, turns=turns)
