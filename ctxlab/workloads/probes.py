"""Retention probes: facts, rules and artifacts planted into a script at named places.

A probe (`ctxlab.core.world.retention.Probe`) is a `key` and a `value` the lab later looks for after
every compression (the visible context, the summary, the ledger, offloaded files). This module
parses where probes go and plants them.

`where` names a place in the script (indexes are 0-based; negative ones count from the end):
`system`, `turn T` or `turn T user`, `turn T final`, `turn T round R` (the result of the
round's first call, or its text when it has no calls), `turn T round R text`, and
`turn T round R call C` (that call's result).

Invariants:
- A probe is planted as one line, `probe.text`, inserted at a line boundary near the middle of
  the target text (the needle sits inside the haystack, not at an edge), so planting adds
  exactly `len(probe.text.encode()) + 1` bytes, or the line alone where the target was empty.
- Rules are user constraints: they go only into a user turn or the system prompt.
- Planting never changes anything but the targeted texts; probes are planted in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ctxlab.core.messages.blocks import Part, TextBlock
from ctxlab.core.world.retention import Probe as Probe  # noqa: PLC0414 (the value lives in core)
from ctxlab.core.world.retention import ProbeKind as ProbeKind  # noqa: PLC0414
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.problems import Problem, WorkloadError

Target = Literal["system", "user", "final", "round", "text", "result"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Place:
    """A parsed `where`: what is targeted, and the turn, round and call indexes it needs."""

    target: Target
    turn: int = 0
    round: int = 0
    call: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Planted:
    """A script with its probes planted, and the probes."""

    script: Script
    probes: tuple[Probe, ...]


_GRAMMAR = (
    "use 'system', 'turn T', 'turn T user', 'turn T final', 'turn T round R', "
    "'turn T round R text' or 'turn T round R call C'"
)


def parse_where(where: str) -> Place:
    """The place a `where` string names.

    >>> parse_where("turn 2 round 0 call 1")
    Place(target='result', turn=2, round=0, call=1)
    >>> parse_where("turn -1").target
    'user'
    """
    words = where.lower().split()
    try:
        return _parse_words(words)
    except (ValueError, IndexError):
        raise ValueError(f"cannot read where {where!r}; {_GRAMMAR}") from None


def _parse_words(words: list[str]) -> Place:
    if words == ["system"]:
        return Place(target="system")
    if len(words) < 2 or words[0] != "turn":
        raise ValueError(words)
    turn, rest = int(words[1]), words[2:]
    match rest:
        case [] | ["user"]:
            return Place(target="user", turn=turn)
        case ["final"]:
            return Place(target="final", turn=turn)
        case ["round", r]:
            return Place(target="round", turn=turn, round=int(r))
        case ["round", r, "text"]:
            return Place(target="text", turn=turn, round=int(r))
        case ["round", r, "call", c]:
            return Place(target="result", turn=turn, round=int(r), call=int(c))
        case _:
            raise ValueError(rest)


def insert_line(text: str, line: str) -> str:
    """`text` with `line` inserted at the line boundary nearest before its middle.

    >>> insert_line("a\\nb\\nc\\nd", "X")
    'a\\nX\\nb\\nc\\nd'
    >>> insert_line("", "X"), insert_line("abc", "X")
    ('X', 'abc\\nX')
    """
    if not text:
        return line
    cut = text.rfind("\n", 0, len(text) // 2)
    if cut == -1:
        cut = text.find("\n", len(text) // 2)
    if cut == -1:
        return f"{text}\n{line}"
    return f"{text[: cut + 1]}{line}\n{text[cut + 1 :]}"


def _plant_parts(parts: tuple[Part, ...], line: str) -> tuple[Part, ...]:
    for i, part in enumerate(parts):
        if isinstance(part, TextBlock):
            return (*parts[:i], TextBlock(text=insert_line(part.text, line)), *parts[i + 1 :])
    return (TextBlock(text=line), *parts)


def _index(items: Sequence[object], index: int, what: str) -> int:
    """`index` into `items`; a LookupError naming the indices there are when it is past them."""
    if not -len(items) <= index < len(items):
        there = f"use {what} 0" if len(items) == 1 else f"use {what} 0 to {len(items) - 1}"
        fix = there if items else f"there is no {what} here to plant in"
        raise LookupError(f"{what} {index} does not exist (there are {len(items)}); {fix}")
    return index % len(items)


def _plant_round(round_: ScriptedRound, place: Place, line: str) -> ScriptedRound:
    target = place.target
    if target == "round":
        target = "result" if round_.calls else "text"
    if target == "text":
        return replace(round_, text=insert_line(round_.text or "", line))
    c = _index(round_.calls, place.call, "call")
    call = round_.calls[c]
    if call.result is None:
        raise LookupError(
            f"call {c} ({call.tool}) runs a built-in tool, so its result cannot hold a probe; plant it in "
            "another call's result or in the round's text ('turn T round R text')"
        )
    planted: ScriptedCall = replace(call, result=_plant_parts(call.result, line))
    return replace(round_, calls=(*round_.calls[:c], planted, *round_.calls[c + 1 :]))


def _plant_turn(turn: ScriptedTurn, place: Place, line: str) -> ScriptedTurn:
    if place.target == "user":
        return replace(turn, user=_plant_parts(turn.user, line))
    if place.target == "final":
        return replace(turn, final=insert_line(turn.final, line))
    r = _index(turn.rounds, place.round, "round")
    rounds = (*turn.rounds[:r], _plant_round(turn.rounds[r], place, line), *turn.rounds[r + 1 :])
    return replace(turn, rounds=rounds)


def plant_one(script: Script, probe: Probe) -> Script:
    """`script` with one probe planted.

    Raises:
        ValueError: `where` cannot be read, names a place the script lacks, or puts a rule
            outside a user turn or the system prompt.
    """
    place = parse_where(probe.where)
    if probe.kind == "rule" and place.target not in ("user", "system"):
        raise ValueError(f"rule {probe.key!r} is a user constraint; put it in 'turn T user' or 'system'")
    if place.target == "system":
        return replace(script, system_prompt=insert_line(script.system_prompt, probe.text))
    try:
        t = _index(script.turns, place.turn, "turn")
        turn = _plant_turn(script.turns[t], place, probe.text)
    except LookupError as error:
        raise ValueError(f"cannot plant at {probe.where!r}: {error}") from None
    return replace(script, turns=(*script.turns[:t], turn, *script.turns[t + 1 :]))


def plant(script: Script, probes: Sequence[Probe], planted: Sequence[Probe] = ()) -> Planted:
    """`script` with every probe planted in order, and the probes; `planted` are those the
    script holds already (a generator's), whose keys the new ones may not repeat.

    Raises:
        WorkloadError: one problem per probe that cannot be planted, at `probes[i].where`, or
            whose key a probe before it has, at `probes[i].key` (retention is told by key, so
            a repeated key would count one probe's finding for both).
    """
    problems = []
    keys = {probe.key: "the generator's probes" for probe in planted}
    for i, probe in enumerate(probes):
        if probe.key in keys:
            message = (
                f"repeats the key {probe.key!r} of {keys[probe.key]}; give each probe a key of its "
                "own (retention is measured by key)"
            )
            problems.append(Problem(loc=("probes", i, "key"), message=message))
        keys.setdefault(probe.key, f"probes[{i}]")
        try:
            script = plant_one(script, probe)
        except ValueError as error:
            problems.append(Problem(loc=("probes", i, "where"), message=str(error)))
    if problems:
        raise WorkloadError(problems)
    return Planted(script=script, probes=tuple(probes))
