"""Brute-force oracles of each provider's rules, each on the provider's own view of a request.

Written apart from `ctxlab.core.wire.protocol` (no streaming state, no shared code): each reads
the whole request and checks every rule by index, the way the provider's documentation states it.

- Every API: a request with nothing to send (no message; for Anthropic and Bedrock no turn) is
  refused.
- OpenAI (chat messages): the calls of an assistant message are each answered by exactly one
  `tool` message in the run of `tool` messages right after it; a `tool` message answers a call of
  the nearest non-tool message before it, which is an assistant message; no call id is used twice.
- Anthropic (Messages API turns): `anthropic_shape` holds what every request must look like
  (roles alternate, no empty turn, no text that is empty or all whitespace, `tool_result` blocks
  first in their user turn, `tool_use` only in assistant turns with an object input, ids of
  `[a-zA-Z0-9_-]+`);
  `anthropic_problems` holds the tool
  rules: every `tool_use` is answered in the very next turn, every `tool_result` answers a
  `tool_use` of the turn before, at most once, and no id is used twice.
- Bedrock (the same turns): the first turn is a user turn, the results of a user turn never
  outnumber the uses of the turn before, and no id is used twice.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.core.wire.protocol import Rule, Violation, violations
from ctxlab.engine.trace import CallRecord
from ctxlab.experiments.execute import request_file

Wire = Mapping[str, Any]
_ID = re.compile(r"[a-zA-Z0-9_-]+")  # the Messages API's pattern for tool_use ids


def broken_pairs(wires: Sequence[Wire], rules: Sequence[Rule] = ("openai", "anthropic")) -> list[Violation]:
    """`violations` of every kind but `empty_request`: how calls and results pair, for a piece of
    a request, or a history that may hold nothing to send (blank texts only, or trimmed to none)."""
    return [v for v in violations(wires, rules) if v.kind != "empty_request"]


def _call_ids(wire: Wire) -> list[str]:
    return [str(call["id"]) for call in wire.get("tool_calls") or ()]


def openai_problems(wires: Sequence[Wire]) -> list[str]:
    """Every broken OpenAI rule, as `kind:id` strings."""
    problems: list[str] = [] if wires else ["empty_request:"]
    all_ids = [i for wire in wires for i in _call_ids(wire)]
    problems += _duplicates(all_ids)
    for index, wire in enumerate(wires):
        if wire["role"] == "tool":
            before = index - 1
            while before >= 0 and wires[before]["role"] == "tool":
                before -= 1
            call_id = str(wire["tool_call_id"])
            owner = wires[before] if before >= 0 else None
            if owner is None or owner["role"] != "assistant" or call_id not in _call_ids(owner):
                problems.append(f"orphan_result:{call_id}")
            elif [str(w["tool_call_id"]) for w in wires[before + 1 : index]].count(call_id):
                problems.append(f"duplicate_result:{call_id}")
        elif _call_ids(wire):
            after = index + 1
            while after < len(wires) and wires[after]["role"] == "tool":
                after += 1
            answered = {str(w["tool_call_id"]) for w in wires[index + 1 : after]}
            problems += [f"dangling_call:{i}" for i in _call_ids(wire) if i not in answered]
    return problems


def _duplicates(ids: list[str]) -> list[str]:
    return [f"duplicate_id:{i}" for i, n in Counter(ids).items() if n > 1]


def _blocks(turn: Wire, kind: str) -> list[Wire]:
    return [block for block in turn["content"] if block["type"] == kind]


def anthropic_shape(system: object, turns: Sequence[Wire]) -> list[str]:
    """Every way the request breaks the Messages API's form (not its tool rules)."""
    problems = [] if isinstance(system, str) else ["system is not a string"]
    for index, turn in enumerate(turns):
        role, content = turn["role"], turn["content"]
        if role not in ("user", "assistant"):
            problems.append(f"{index}: role {role!r}")
        if index and turns[index - 1]["role"] == role:
            problems.append(f"{index}: two {role} turns in a row")
        if not content:
            problems.append(f"{index}: empty turn")
        kinds = [block["type"] for block in content]
        if any(block["type"] == "text" and not block["text"].strip() for block in content):
            problems.append(f"{index}: blank text")
        if "tool_result" in kinds and kinds != sorted(kinds, key=lambda k: k != "tool_result"):
            problems.append(f"{index}: a tool_result after another block")
        if role == "user" and "tool_use" in kinds:
            problems.append(f"{index}: tool_use in a user turn")
        if role == "assistant" and "tool_result" in kinds:
            problems.append(f"{index}: tool_result in an assistant turn")
        if any(not isinstance(block["input"], dict) for block in _blocks(turn, "tool_use")):
            problems.append(f"{index}: a tool_use input is not an object")
        ids = [b["id"] for b in _blocks(turn, "tool_use")] + [
            b["tool_use_id"] for b in _blocks(turn, "tool_result")
        ]
        problems += [f"{index}: id {i!r} is not [a-zA-Z0-9_-]+" for i in ids if not _ID.fullmatch(i)]
    return problems


def undeclared(turns: Sequence[Wire]) -> list[str]:
    """A request that offers no tools: `undeclared_tools:` its first tool block's id, if any."""
    for turn in turns:
        for block in turn["content"] if isinstance(turn["content"], list) else ():
            if block.get("type") in ("tool_use", "tool_result"):
                return [f"undeclared_tools:{block.get('id', block.get('tool_use_id'))}"]
    return []


def anthropic_problems(turns: Sequence[Wire], *, offers_tools: bool = True) -> list[str]:
    """Every broken tool rule of the Messages API, as `kind:id` strings."""
    uses = [[str(b["id"]) for b in _blocks(turn, "tool_use")] for turn in turns]
    results = [[str(b["tool_use_id"]) for b in _blocks(turn, "tool_result")] for turn in turns]
    problems = _duplicates([i for turn_uses in uses for i in turn_uses]) if turns else ["empty_request:"]
    problems += [] if offers_tools else undeclared(turns)
    for index in range(len(turns)):
        answers = results[index + 1] if index + 1 < len(turns) else []
        problems += [f"dangling_call:{i}" for i in uses[index] if i not in answers]
        offered = uses[index - 1] if index else []
        for position, call_id in enumerate(results[index]):
            if call_id not in offered:
                problems.append(f"orphan_result:{call_id}")
            elif call_id in results[index][:position]:
                problems.append(f"duplicate_result:{call_id}")
    return problems


def bedrock_problems(turns: Sequence[Wire], *, offers_tools: bool = True) -> list[str]:
    """Every broken Bedrock rule, as `kind:id` strings."""
    uses = [[str(b["id"]) for b in _blocks(turn, "tool_use")] for turn in turns]
    problems = _duplicates([i for turn_uses in uses for i in turn_uses]) if turns else ["empty_request:"]
    problems += [] if offers_tools else undeclared(turns)
    if turns and turns[0]["role"] == "assistant":
        problems.append("assistant_first:")
    for index, turn in enumerate(turns):
        offered = set(uses[index - 1]) if index else set()
        results = _blocks(turn, "tool_result")
        if len(results) > len(offered):
            problems.append(f"excess_results:{results[len(offered)]['tool_use_id']}")
    return problems


def recorded_anthropic(calls: Sequence[CallRecord]) -> list[tuple[list[str], list[str]]]:
    """Each call's request as recorded in the Anthropic view (`requests/<run_id>.anthropic.jsonl.gz`):
    its form problems (tools included) and its broken tool rules."""
    lines = gzip.decompress(request_file(tuple(calls), "anthropic")).decode("utf-8").split("\n")[:-1]
    found: list[tuple[list[str], list[str]]] = []
    for line in lines:
        request = json.loads(line)
        assert set(request) == {"call_index", "kind", "system", "messages", "tools"}
        shape = anthropic_shape(request["system"], request["messages"])
        shape += [f"tool {t.get('name')!r}" for t in request["tools"] if not _tool_ok(t)]
        found.append((shape, anthropic_problems(request["messages"], offers_tools=bool(request["tools"]))))
    return found


def _tool_ok(tool: Mapping[str, Any]) -> bool:
    schema = tool.get("input_schema")
    return set(tool) == {"name", "description", "input_schema"} and isinstance(schema, dict)
