"""Protocol checks: would a provider reject this request's tool calls and results?

`violations(openai_messages, rules)` checks the OpenAI view of one request under each rule:

- `openai`: a `tool` message answers a call of the nearest preceding assistant batch, with only
  `tool` messages between; every call of a batch is answered before the next non-tool message and
  before the request ends.
- `anthropic`: on the Anthropic view (`views.anthropic_of_openai`: messages of blank texts left
  out, consecutive same-role turns merged, tool results in user turns), each `tool_use` is
  answered by a `tool_result` in the very next user turn, and no result appears without its use
  in the turn before (`anthropic_violations` reads the same rule off that view itself).
- `bedrock`: on the same view, the results of a user turn never outnumber the uses of the turn
  before, and the first turn is a user turn: Bedrock's Converse API refuses a conversation that
  starts with an assistant message ("A conversation must start with a user message", seen with
  Amazon Nova models; the Anthropic and OpenAI APIs accept it).

A request holding a tool call or result but declaring no tools (a summary request sending the
conversation as it is) breaks the `anthropic` and `bedrock` rules (`undeclared_tools`, at its
first such message): "Requests which include `tool_use` or `tool_result` blocks must define
tools", and Converse's "The toolConfig field must be defined ..."; the OpenAI API accepts it.

Under every rule a call id used twice in one request is a violation, and so is a second result
for one call, and so is a request with nothing to send (`empty_request`, at index 0): no message
at all for `openai` ("[] is too short - 'messages'"), no user or assistant turn for `anthropic`
and `bedrock` (a request of only a system prompt, or only blank texts besides it: "at least one
message is required"). Each violation names the 0-based index into the OpenAI messages where the
rule broke: the message that arrived while a call was unanswered (or the call's own message when
the request ended first), the orphan result itself, or the message repeating an id; an assistant
first turn names its first message and no call (`call_id` is empty).

Cost: each rule is a small immutable checker fed one OpenAI message at a time, which returns
the violations that message settles; the call ids seen so far live in one `CallIds` register
shared by the rules, updated in place and rolled back message by message. One request costs
O(its size); `ctxlab.core.wire.meter.ProtocolMeter` checks request after request in what changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, NamedTuple, Protocol

from ctxlab.core.messages.blocks import Block, DataBlock, HintBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.memo import Closing, LeadingScan
from ctxlab.core.messages.message import Message
from ctxlab.core.wire.views import blank

Rule = Literal["openai", "anthropic", "bedrock"]
RULES: tuple[Rule, ...] = ("openai", "anthropic", "bedrock")
Kind = Literal[
    "orphan_result",
    "dangling_call",
    "duplicate_id",
    "duplicate_result",
    "excess_results",
    "assistant_first",
    "empty_request",
    "undeclared_tools",
]


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


def _violation(index: int, call_id: str, rule: Rule, kind: Kind, detail: str) -> Violation:
    return Violation(index=index, call_id=call_id, rule=rule, kind=kind, detail=detail)


@dataclass(slots=True)
class CallIds:
    """Where each call id is used in the request so far: id -> the stamps of the messages using
    it, in order (a stamp orders messages as their OpenAI indexes do: `violations` uses the
    indexes themselves, `ProtocolMeter` stamps that survive messages dropped before them)."""

    places: dict[str, list[int]] = field(default_factory=dict)
    repeated: int = 0  # uses beyond the first, over all ids

    def add(self, index: int, calls: Sequence[str]) -> None:
        """Record the calls of the message at `index`."""
        for call_id in calls:
            places = self.places.setdefault(call_id, [])
            self.repeated += bool(places)
            places.append(index)

    def remove(self, calls: Sequence[str]) -> None:
        """Forget the latest use of each of `calls` (undoing `add`)."""
        for call_id in calls:
            places = self.places[call_id]
            places.pop()
            self._forgot(call_id, places)

    def discard(self, index: int, calls: Sequence[str]) -> None:
        """Forget the uses of `calls` by the message at `index`, wherever it stands."""
        for call_id in calls:
            places = self.places[call_id]
            places.remove(index)
            self._forgot(call_id, places)

    def _forgot(self, call_id: str, places: list[int]) -> None:
        if places:
            self.repeated -= 1
        else:
            del self.places[call_id]

    def called_before(self, call_id: str, index: int) -> bool:
        """Whether `call_id` was called by a message before `index`."""
        places = self.places.get(call_id)
        return places is not None and places[0] < index

    def duplicates(self, rule: Rule) -> list[Violation]:
        """A violation at every use of an id after its first."""
        if self.repeated == 0:
            return []
        return [
            _violation(
                index, call_id, rule, "duplicate_id", f"call id {call_id!r} is used by more than one call"
            )
            for call_id, places in self.places.items()
            for index in places[1:]
        ]


class Checker(Protocol):
    """A rule's streaming state: feed messages in order, then finish.

    A state holds no violations and no position but the stamps of the messages it still waits
    on, so two states that compare equal judge every later message alike.
    """

    @property
    def rule(self) -> Rule:
        """The rule it checks."""
        ...

    def feed(self, index: int, fact: Fact, ids: CallIds) -> tuple[Checker, tuple[Violation, ...]]:
        """The state after one more OpenAI message, stamped `index`, and the violations that
        message settles (`ids` holds at least the calls before it)."""
        ...

    def finish(self, found: Sequence[Violation]) -> tuple[Violation, ...]:
        """The rule's violations other than repeated ids: `found`, those the messages settled
        in order, and those the end of the request settles."""
        ...


def start(rule: Rule) -> Checker:
    """The empty state of a rule's checker."""
    return _OpenAIChecker(fed=False) if rule == "openai" else _TurnChecker(rule=rule)


def violations(
    openai_messages: Iterable[Mapping[str, Any]], rules: Iterable[Rule], *, declares_tools: bool = True
) -> list[Violation]:
    """All violations of `rules` in one request, rule by rule, in message order. The messages
    are read once, in order, and not kept (a transcript can be checked as it streams).
    `declares_tools`: whether the request offers any tool."""
    ids = CallIds()
    checkers = [start(rule) for rule in rules]
    found: list[list[Violation]] = [[] for _ in checkers]
    first: Fact | None = None
    first_at = 0
    for index, wire in enumerate(openai_messages):
        fact = fact_of(wire)
        for rule, checker in enumerate(checkers):
            checkers[rule], settled = checker.feed(index, fact, ids)
            found[rule].extend(settled)
        ids.add(index, fact.calls)
        if first is None and not declares_tools and is_tool_block(fact):
            first, first_at = fact, index
    return report(checkers, found, ids, None if first is None else (first_at, first))


def is_tool_block(fact: Fact) -> bool:
    """Whether the message holds a tool call or result (which needs declared tools: `undeclared_tools`)."""
    return bool(fact.calls) or fact.answers is not None


def report(
    checkers: Sequence[Checker],
    found: Sequence[Sequence[Violation]],
    ids: CallIds,
    undeclared: tuple[int, Fact] | None = None,
) -> list[Violation]:
    """Each rule's violations after the last message, rule by rule in message order, with the ids
    used twice and `undeclared` (where the first tool block of a request offering no tools is)."""
    out: list[Violation] = []
    for checker, settled in zip(checkers, found, strict=True):
        own, repeated = checker.finish(settled), ids.duplicates(checker.rule)
        if undeclared is not None and checker.rule != "openai":
            own = _with_undeclared(own, checker.rule, *undeclared)
        if repeated:
            out.extend(sorted([*repeated, *own], key=lambda v: (v.index, v.kind != "duplicate_id")))
        else:
            out.extend(own)
    return out


def _with_undeclared(own: Sequence[Violation], rule: Rule, index: int, fact: Fact) -> tuple[Violation, ...]:
    """`own` with the rule's `undeclared_tools` violation at `index`, before the others found
    there (`report` then puts a `duplicate_id` at that index first, as it does everywhere)."""
    call_id = fact.calls[0] if fact.calls else str(fact.answers)
    what = "a tool call" if fact.calls else "a tool result"
    detail = f"the request holds {what} ({call_id!r}) but declares no tools"
    placed = _violation(index, call_id, rule, "undeclared_tools", detail)
    at = next((i for i, v in enumerate(own) if v.index >= index), len(own))
    return (*own[:at], placed, *own[at:])


class Fact(NamedTuple):
    """What the rules read from one OpenAI message: its role, its call ids, the call it answers,
    and whether the Anthropic view shows it (a message of empty texts has no Anthropic turn).

    Facts, and the checkers' states below, are named tuples rather than frozen dataclasses: the
    meter makes and compares several a model call, and a named tuple is made in half the time
    and compared at C speed (a tuple of fields, as a frozen dataclass compares its fields)."""

    role: str
    calls: tuple[str, ...] = ()
    answers: str | None = None
    shown: bool = True


def facts_of_message(message: Message) -> tuple[Fact, ...]:
    """The facts of a stored message's OpenAI view, read straight from its blocks.

    Equals `tuple(fact_of(w) for w in to_openai_one(message))` (a property test holds them
    together) without building the provider messages: the meter's hot path. A long message
    resumes an earlier read of the blocks it begins with (`memo.RESUMED_BLOCKS`), and its facts
    are noted as sharing that read's (`LeadingScan.finished`).
    """
    role = message.role
    return _facts_scan.finished(message.blocks, _NO_FACTS, partial(_open_facts, role), role)


def _open_facts(role: str, carry: _FactCarry, done: Sequence[Fact]) -> Closing[Fact]:
    """Every fact of `done`, then those of the view messages a message's blocks leave open
    (`carry`, after its last)."""
    parts, shown, calls, media = carry
    out = [Fact("user")] if media else []
    if parts or calls:
        out.append(Fact(role, calls, shown=shown or bool(calls)))
    return len(done), out


_FactCarry = tuple[bool, bool, tuple[str, ...], bool]
"""What `facts_of_message` carries from block to block (a plain tuple: made at every block):
whether the view message being built has parts and whether they show, its calls, and whether a
media message is due."""

_NO_FACTS: _FactCarry = (False, False, (), False)


def _fact_step(carry: _FactCarry, block: Block, before: int, role: str) -> tuple[list[Fact], _FactCarry]:
    """The facts of the view messages `block` completes, and the carry after it."""
    parts, shown, calls, media = carry
    out: list[Fact] = []
    if media and not isinstance(block, ToolResultBlock):
        out.append(Fact("user"))
        media = False
    if isinstance(block, TextBlock | DataBlock):
        parts, shown = True, shown or _visible(block)
    elif isinstance(block, ToolCallBlock):
        calls = (*calls, block.id)
    elif isinstance(block, HintBlock | ToolResultBlock):
        if parts or calls:
            out.append(Fact(role, calls, shown=shown or bool(calls)))
        parts, shown, calls = False, False, ()
        if isinstance(block, ToolResultBlock):
            out.append(Fact("tool", (), block.id))
            media = media or any(isinstance(p, DataBlock) for p in block.output)
        elif isinstance(block.hint, str):
            out.append(Fact("user", shown=not blank(block.hint)))
        elif block.hint:
            out.append(Fact("user", shown=any(_visible(p) for p in block.hint)))
    return out, (parts, shown, calls, media)


_facts_scan = LeadingScan[Block, _FactCarry, Fact](_fact_step, anywhere=True)


def _visible(part: TextBlock | DataBlock) -> bool:
    return isinstance(part, DataBlock) or not blank(part.text)


def fact_of(wire: Mapping[str, Any]) -> Fact:
    """The facts of one OpenAI message."""
    calls = wire.get("tool_calls")
    ids = tuple(str(c.get("id")) for c in calls) if calls else ()
    role = str(wire.get("role"))
    answers = str(wire.get("tool_call_id")) if role == "tool" else None
    return Fact(role, ids, answers, shown=bool(ids) or role == "tool" or _shows(wire.get("content")))


def _shows(content: object) -> bool:
    """Whether an OpenAI content field holds anything but blank texts."""
    if isinstance(content, str):
        return not blank(content)
    parts = content if isinstance(content, list) else ()
    return any(part.get("type") != "text" or not blank(part.get("text") or "") for part in parts)


_NO_TURN = "the request has no user or assistant turn; the API needs at least one message"


def _empty(rule: Rule, detail: str) -> Violation:
    """A request the rule's API refuses for having nothing to answer (named at index 0)."""
    return _violation(0, "", rule, "empty_request", detail)


def _dangling(call_id: str, index: int, rule: Rule, when: str) -> Violation:
    return _violation(index, call_id, rule, "dangling_call", f"call {call_id!r} is not answered {when}")


_Fed = tuple["Checker", tuple[Violation, ...]]


class _OpenAIChecker(NamedTuple):
    open_calls: tuple[tuple[str, int], ...] = ()  # unanswered calls of the batch, with their index
    answered: frozenset[str] = frozenset()
    rule: Rule = "openai"
    fed: bool = True  # False only before the first message (`start`)

    def feed(self, index: int, fact: Fact, ids: CallIds) -> _Fed:
        if not self.fed:
            return _OpenAIChecker().feed(index, fact, ids)
        if fact.answers is not None:
            return self._result(index, fact.answers, ids)
        if not self.open_calls and not fact.calls and not self.answered:
            return self, ()  # nothing open, nothing opened: the common text message
        before = "before the next non-tool message"
        found = tuple(_dangling(c, index, "openai", before) for c, _ in self.open_calls)
        opened = tuple((c, index) for c in dict.fromkeys(fact.calls))
        return _OpenAIChecker(opened, frozenset()), found

    def _result(self, index: int, call_id: str, ids: CallIds) -> _Fed:
        remaining = tuple(pair for pair in self.open_calls if pair[0] != call_id)
        if len(remaining) < len(self.open_calls):
            return _OpenAIChecker(remaining, self.answered | {call_id}), ()
        if call_id in self.answered:
            detail = f"a second result for call {call_id!r}"
            return self, (_violation(index, call_id, "openai", "duplicate_result", detail),)
        return self, (orphan(index, call_id, ids),)

    def finish(self, found: Sequence[Violation]) -> tuple[Violation, ...]:
        if not self.fed:
            return (_empty("openai", "the request has no message; the API needs at least one"),)
        if not self.open_calls:
            return tuple(found)
        ends = tuple(_dangling(c, at, "openai", "before the request ends") for c, at in self.open_calls)
        return (*found, *ends)


def orphan(index: int, call_id: str, ids: CallIds) -> Violation:
    """The `openai` rule's orphan result, its detail read off the calls of the request."""
    if ids.called_before(call_id, index):
        detail = f"result for {call_id!r} arrives after an intervening non-tool message"
    else:
        detail = f"result for {call_id!r} has no call in this request"
    return _violation(index, call_id, "openai", "orphan_result", detail)


class _Turn(NamedTuple):
    role: str
    first: int  # OpenAI index of the turn's first message
    uses: tuple[tuple[int, str], ...] = ()  # (OpenAI index, id)
    results: tuple[tuple[int, str], ...] = ()


class _TurnChecker(NamedTuple):
    """Anthropic and Bedrock: turns merge consecutive same-role messages; a user turn is judged
    against the assistant turn before it when it closes."""

    rule: Rule
    previous: _Turn | None = None
    current: _Turn | None = None

    def feed(self, index: int, fact: Fact, ids: CallIds) -> _Fed:
        if fact.role == "system" or not fact.shown:
            return self, ()  # no Anthropic turn: the system text, or a message of empty texts
        role = "assistant" if fact.role == "assistant" else "user"
        uses = tuple([(index, c) for c in fact.calls]) if fact.calls else ()
        results = ((index, fact.answers),) if fact.answers is not None else ()
        current = self.current
        if current is not None and current.role == role:
            if not uses and not results:
                return self, ()  # one more message of the same turn that neither calls nor answers
            merged = _Turn(role, current.first, current.uses + uses, current.results + results)
            return _TurnChecker(self.rule, self.previous, merged), ()
        found = self._close()
        if current is None and role == "assistant" and self.rule == "bedrock":
            detail = "the conversation starts with an assistant turn, not a user message"
            found += (_violation(index, "", "bedrock", "assistant_first", detail),)
        return _TurnChecker(self.rule, current, _Turn(role, index, uses, results)), found

    def _close(self) -> tuple[Violation, ...]:
        """Violations settled when the current turn ends (a user turn is judged then)."""
        turn = self.current
        if turn is None or turn.role != "user":
            return ()
        before = self.previous if self.previous is not None and self.previous.role == "assistant" else None
        if not turn.results and (before is None or not before.uses):
            return ()  # nothing answered and nothing to answer: the plain user turn
        judged = _judge_results(turn, before, self.rule)
        if self.rule == "anthropic" and before is not None:
            answered = {call_id for _, call_id in turn.results}
            when = "in the next user turn"
            judged += tuple(
                _dangling(c, turn.first, "anthropic", when) for _, c in before.uses if c not in answered
            )
        return judged

    def finish(self, found: Sequence[Violation]) -> tuple[Violation, ...]:
        turn = self.current
        if turn is None:
            return (_empty(self.rule, _NO_TURN),)
        ends = self._close()
        if self.rule == "anthropic" and turn.role == "assistant":
            ends += tuple(_dangling(c, at, "anthropic", "before the request ends") for at, c in turn.uses)
        if not ends and not found:
            return ()
        return tuple(sorted([*found, *ends], key=lambda v: v.index))


def _judge_results(turn: _Turn, before: _Turn | None, rule: Rule) -> tuple[Violation, ...]:
    uses = {call_id for _, call_id in before.uses} if before else set()
    if rule == "bedrock":
        if len(turn.results) <= len(uses):
            return ()
        index, call_id = turn.results[len(uses)]
        detail = f"{len(turn.results)} tool results answer {len(uses)} tool uses of the previous turn"
        return (_violation(index, call_id, rule, "excess_results", detail),)
    found: list[Violation] = []
    seen: set[str] = set()
    for index, call_id in turn.results:
        if call_id in seen:
            found.append(
                _violation(index, call_id, rule, "duplicate_result", f"a second result for call {call_id!r}")
            )
        elif call_id not in uses:
            detail = f"result for {call_id!r} has no tool_use in the previous assistant turn"
            found.append(_violation(index, call_id, rule, "orphan_result", detail))
        seen.add(call_id)
    return tuple(found)


def anthropic_violations(turns: Sequence[Mapping[str, Any]]) -> list[Violation]:
    """The `anthropic` rule read off the Anthropic view itself (`views.anthropic_of_openai`).

    `index` is the turn's position. A `tool_use` not answered in the next turn dangles there (at
    its own turn when the request ends first); a `tool_result` whose use is not in the turn
    before is an orphan, a second one for a use a duplicate; an id used twice is a duplicate id.
    The same violations, kind and call for kind and call, as `violations(wires, ["anthropic"])`
    finds on the OpenAI messages the turns come from (a property test holds them together).
    No turn at all is an empty request.
    """
    if not turns:
        return [_empty("anthropic", _NO_TURN)]
    found: list[Violation] = []
    seen: set[str] = set()
    previous: list[str] = []
    for index, turn in enumerate(turns):
        blocks = [b for b in turn.get("content", ()) if isinstance(b, Mapping)]
        uses = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
        results = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
        found += _turn_results(index, results, previous)
        when = "in the next user turn"
        found += [_dangling(c, index, "anthropic", when) for c in previous if c not in results]
        for call_id in uses:
            if call_id in seen:
                detail = f"call id {call_id!r} is used by more than one call"
                found.append(_violation(index, call_id, "anthropic", "duplicate_id", detail))
            seen.add(call_id)
        previous = uses if turn.get("role") == "assistant" else []
    last = len(turns) - 1
    found += [_dangling(c, last, "anthropic", "before the request ends") for c in previous]
    return found


def _turn_results(index: int, results: Sequence[str], uses: Sequence[str]) -> list[Violation]:
    found: list[Violation] = []
    for position, call_id in enumerate(results):
        if call_id in results[:position]:
            detail = f"a second result for call {call_id!r}"
            found.append(_violation(index, call_id, "anthropic", "duplicate_result", detail))
        elif call_id not in uses:
            detail = f"result for {call_id!r} has no tool_use in the previous assistant turn"
            found.append(_violation(index, call_id, "anthropic", "orphan_result", detail))
    return found
