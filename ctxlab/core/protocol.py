"""Protocol checks: would a provider reject this request's tool calls and results?

`violations(openai_messages, rules)` checks the OpenAI view of one request under each rule:

- `openai`: a `tool` message answers a call of the nearest preceding assistant batch, with only
  `tool` messages between; every call of a batch is answered before the next non-tool message and
  before the request ends.
- `anthropic`: on the Anthropic view (consecutive same-role turns merged, tool results in user
  turns), each `tool_use` is answered by a `tool_result` in the very next user turn, and no
  result appears without its use in the turn before.
- `bedrock`: on the same view, the results of a user turn never outnumber the uses of the turn
  before.

Under every rule a call id used twice in one request is a violation, and so is a second result
for one call. Each violation names the 0-based index into the OpenAI messages where the rule
broke: the message that arrived while a call was unanswered (or the call's own message when the
request ended first), the orphan result itself, or the message repeating an id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Rule = Literal["openai", "anthropic", "bedrock"]
RULES: tuple[Rule, ...] = ("openai", "anthropic", "bedrock")
Kind = Literal["orphan_result", "dangling_call", "duplicate_id", "duplicate_result", "excess_results"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One broken rule: where (`index` into the OpenAI messages), which call, which rule, why."""

    index: int
    call_id: str
    rule: Rule
    kind: Kind
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}:{self.index}:{self.call_id}"


def violations(openai_messages: Sequence[Mapping[str, Any]], rules: Iterable[Rule]) -> list[Violation]:
    """All violations of `rules` in one request, rule by rule, in message order."""
    found: list[Violation] = []
    for rule in rules:
        match rule:
            case "openai":
                found.extend(_check_openai(openai_messages))
            case "anthropic" | "bedrock":
                found.extend(_check_turns(openai_messages, rule))
    return found


def _calls(wire: Mapping[str, Any]) -> list[str]:
    return [str(c.get("id")) for c in wire.get("tool_calls") or ()]


def _duplicate_ids(messages: Sequence[Mapping[str, Any]], rule: Rule) -> list[Violation]:
    seen: set[str] = set()
    found = []
    for index, wire in enumerate(messages):
        for call_id in _calls(wire):
            if call_id in seen:
                detail = f"call id {call_id!r} is used by more than one call in this request"
                found.append(
                    Violation(index=index, call_id=call_id, rule=rule, kind="duplicate_id", detail=detail)
                )
            seen.add(call_id)
    return found


def _check_openai(messages: Sequence[Mapping[str, Any]]) -> list[Violation]:
    found = _duplicate_ids(messages, "openai")
    open_calls: dict[str, int] = {}  # unanswered call id -> index of its assistant message
    answered: set[str] = set()
    seen: set[str] = set()
    for index, wire in enumerate(messages):
        if wire.get("role") == "tool":
            call_id = str(wire.get("tool_call_id"))
            found.extend(_openai_result(index, call_id, open_calls, answered, seen))
            continue
        found.extend(_dangling(open_calls, index, "openai", "before the next non-tool message"))
        open_calls, answered = {c: index for c in _calls(wire)}, set()
        seen.update(open_calls)
    for call_id, at in open_calls.items():
        found.append(_dangling_one(call_id, at, "openai", "before the request ends"))
    return found


def _openai_result(
    index: int, call_id: str, open_calls: dict[str, int], answered: set[str], seen: set[str]
) -> list[Violation]:
    if call_id in open_calls:
        del open_calls[call_id]
        answered.add(call_id)
        return []
    if call_id in answered:
        detail = f"a second result for call {call_id!r}"
        return [
            Violation(index=index, call_id=call_id, rule="openai", kind="duplicate_result", detail=detail)
        ]
    if call_id in seen:
        detail = f"result for {call_id!r} arrives after an intervening non-tool message"
    else:
        detail = f"result for {call_id!r} has no call in this request"
    return [Violation(index=index, call_id=call_id, rule="openai", kind="orphan_result", detail=detail)]


def _dangling(open_calls: Mapping[str, int], index: int, rule: Rule, when: str) -> list[Violation]:
    return [_dangling_one(call_id, index, rule, when) for call_id in open_calls]


def _dangling_one(call_id: str, index: int, rule: Rule, when: str) -> Violation:
    detail = f"call {call_id!r} is not answered {when}"
    return Violation(index=index, call_id=call_id, rule=rule, kind="dangling_call", detail=detail)


@dataclass(frozen=True, slots=True)
class _Turn:
    role: str
    first: int  # OpenAI index of the turn's first message
    uses: tuple[tuple[int, str], ...]  # (OpenAI index, id)
    results: tuple[tuple[int, str], ...]


def _turns(messages: Sequence[Mapping[str, Any]]) -> list[_Turn]:
    """Anthropic turns: system dropped, tool and user messages in user turns, same roles merged."""
    turns: list[_Turn] = []
    for index, wire in enumerate(messages):
        role = wire.get("role")
        if role == "system":
            continue
        role = "assistant" if role == "assistant" else "user"
        uses = tuple((index, c) for c in _calls(wire))
        results = ((index, str(wire.get("tool_call_id"))),) if wire.get("role") == "tool" else ()
        if turns and turns[-1].role == role:
            last = turns[-1]
            turns[-1] = _Turn(role, last.first, last.uses + uses, last.results + results)
        else:
            turns.append(_Turn(role, index, uses, results))
    return turns


def _check_turns(messages: Sequence[Mapping[str, Any]], rule: Rule) -> list[Violation]:
    found = _duplicate_ids(messages, rule)
    turns = _turns(messages)
    for k, turn in enumerate(turns):
        previous = turns[k - 1] if k > 0 and turns[k - 1].role == "assistant" else None
        following = turns[k + 1] if k + 1 < len(turns) else None
        if turn.role == "assistant" and rule == "anthropic":
            found.extend(_unanswered_uses(turn, following))
        if turn.role == "user":
            found.extend(_turn_results(turn, previous, rule))
    return sorted(found, key=lambda v: v.index)


def _unanswered_uses(turn: _Turn, following: _Turn | None) -> list[Violation]:
    answered = {call_id for _, call_id in following.results} if following else set()
    at = following.first if following else None
    when = "in the next user turn" if following else "before the request ends"
    return [
        _dangling_one(call_id, at if at is not None else index, "anthropic", when)
        for index, call_id in turn.uses
        if call_id not in answered
    ]


def _turn_results(turn: _Turn, previous: _Turn | None, rule: Rule) -> list[Violation]:
    uses = {call_id for _, call_id in previous.uses} if previous else set()
    found: list[Violation] = []
    if rule == "bedrock":
        if len(turn.results) > len(uses):
            index, call_id = turn.results[len(uses)]
            detail = f"{len(turn.results)} tool results answer {len(uses)} tool uses of the previous turn"
            found.append(
                Violation(index=index, call_id=call_id, rule=rule, kind="excess_results", detail=detail)
            )
        return found
    seen: set[str] = set()
    for index, call_id in turn.results:
        if call_id in seen:
            detail = f"a second result for call {call_id!r}"
            found.append(
                Violation(index=index, call_id=call_id, rule=rule, kind="duplicate_result", detail=detail)
            )
        elif call_id not in uses:
            detail = f"result for {call_id!r} has no tool_use in the previous assistant turn"
            found.append(
                Violation(index=index, call_id=call_id, rule=rule, kind="orphan_result", detail=detail)
            )
        seen.add(call_id)
    return found
