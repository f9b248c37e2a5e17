"""A scripted workload as plain values: turns, the rounds of each reply, and tool results.

Invariants:
- A turn is one user message and one reply: the reply's rounds in order (each round is one model
  response: optional thinking and text, then zero or more tool calls run as one batch), then a
  final answer.
- A call whose `result` is None runs the lab's built-in tool of that name (the task tools,
  `CompressContext`); any other call returns its scripted result, as an error when `error`.
- A call with a `delegate` script is a sub-agent's task: the sub-agent plays that script in a
  context of its own, and only its final answer comes back as the call's result.
- After `assign_call_ids`, every call has an id, unique in the script, taken from the script
  when given and `call-0001`, `call-0002`, ... otherwise; both the lab and the AgentScope parity
  driver use these ids, so their requests match.
- The clock starts at `start` (timezone-aware); `advance_seconds` moves it before a turn or round.
- `documents` and `artifacts` are the world's library and artifact store, served by the built-in
  `read_document` and `fetch_artifact` tools (the built-in library when `documents` is empty).
- `tools` are the basic tools, always offered; `tool_groups` hold the tools offered only while
  their group is active, and `skills` the instructions read through the skill viewer
  (`ctxlab.core.world.toolkit`).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ctxlab.core.messages.blocks import Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.artifacts import Artifact
from ctxlab.core.world.documents import Document
from ctxlab.core.world.toolkit import Skill, ToolGroup

DEFAULT_START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedCall:
    """One tool call of a round and what the tool returns; with `delegate`, a sub-agent plays that
    script in its own context and its final answer is the result."""

    tool: str
    input: str = "{}"
    result: tuple[Part, ...] | None = None
    error: bool = False
    id: str | None = None
    delegate: Script | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedRound:
    """One model response: optional thinking and text, then the tool calls of one batch."""

    text: str | None = None
    thinking: str | None = None
    calls: tuple[ScriptedCall, ...] = ()
    advance_seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedTurn:
    """A user message, the rounds of the reply, and its final answer."""

    user: tuple[Part, ...]
    rounds: tuple[ScriptedRound, ...] = ()
    final: str = ""
    advance_seconds: float = 0.0
    timezone: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Script:
    """A whole workload: system prompt, tool schemas, turns, when the clock starts, the world's
    documents and artifacts, and the tool groups and skills of its toolkit."""

    system_prompt: str
    tools: tuple[ToolSchema, ...] = ()
    turns: tuple[ScriptedTurn, ...] = ()
    start: dt.datetime = DEFAULT_START
    timezone: str = "UTC"
    documents: tuple[Document, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    tool_groups: tuple[ToolGroup, ...] = ()
    skills: tuple[Skill, ...] = ()

    def calls(self) -> Iterator[ScriptedCall]:
        """Every call of the script, in order."""
        for turn in self.turns:
            for round_ in turn.rounds:
                yield from round_.calls


def assign_call_ids(script: Script) -> Script:
    """The script with an id on every call: the given one, else the next free `call-NNNN`.

    >>> s = Script(system_prompt="", turns=(ScriptedTurn(user=(), rounds=(
    ...     ScriptedRound(calls=(ScriptedCall(tool="a"), ScriptedCall(tool="b", id="x"))),)),))
    >>> [c.id for c in assign_call_ids(s).calls()]
    ['call-0001', 'x']
    """
    taken = {call.id for call in script.calls() if call.id is not None}
    fresh = (f"call-{n:04d}" for n in itertools.count(1) if f"call-{n:04d}" not in taken)

    def with_id(call: ScriptedCall) -> ScriptedCall:
        if call.delegate is not None:  # a sub-agent's script numbers its own calls
            call = replace(call, delegate=assign_call_ids(call.delegate))
        return call if call.id is not None else replace(call, id=next(fresh))

    turns = tuple(
        replace(
            turn,
            rounds=tuple(replace(r, calls=tuple(with_id(c) for c in r.calls)) for r in turn.rounds),
        )
        for turn in script.turns
    )
    return replace(script, turns=turns)


def held_chars(script: Script) -> int:
    """About how much text the script holds, in characters: its system prompt, every user part,
    round text and thinking, call input and result (a data part by its source), through delegated
    scripts, and its documents and artifacts. A measure of the memory it keeps, not of tokens.

    >>> held_chars(Script(system_prompt="ab", turns=(ScriptedTurn(user=(), final="xyz"),)))
    5
    """
    return (
        len(script.system_prompt)
        + sum(_turn_chars(turn) for turn in script.turns)
        + sum(len(d.text) for d in script.documents)
        + sum(len(a.payload) for a in script.artifacts)
    )


def _turn_chars(turn: ScriptedTurn) -> int:
    chars = _parts_chars(turn.user) + len(turn.final)
    for round_ in turn.rounds:
        chars += len(round_.text or "") + len(round_.thinking or "")
        for call in round_.calls:
            chars += len(call.input) + _parts_chars(call.result or ())
            if call.delegate is not None:
                chars += held_chars(call.delegate)
    return chars


def _parts_chars(parts: tuple[Part, ...]) -> int:
    return sum(len(part.text) if isinstance(part, TextBlock) else len(part.source) for part in parts)
