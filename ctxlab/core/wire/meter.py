"""`ProtocolMeter`: the protocol rules (`ctxlab.core.wire.protocol`) checked request after request,
each request in what changed since the last.

Invariants:
- `check(messages, declares_tools=d)` equals `violations(to_openai(messages), rules,
  declares_tools=d)`, whatever came before it
  (Hypothesis properties hold them together for requests that grow, are edited, lose their
  front, or keep their first message while a window moves and cuts its oldest kept message).
- A request that grew at the end, or a window that dropped messages at its front (or cut the
  front of a long message: a reply's oldest rounds), costs the facts it gained and those fed
  again until the rules agree, plus C-speed scans of the stored messages and facts (none over
  what lineage vouches for, `GROWN`: the messages a request grown from the last one shares with
  it, the facts of a reply known to have grown); a request that changed early costs the facts
  after the change. A request that declares no tools (a summary request, as a rule) is also
  scanned for its first tool call or result.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import (
    GROWN,
    Message,
    equal_leading,
    resumed_at,
    same_leading,
    same_leading_known,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator, TokenCounter
from ctxlab.core.wire.piece import recent_piece
from ctxlab.core.wire.protocol import (
    CallIds,
    Checker,
    Fact,
    Rule,
    Violation,
    facts_of_message,
    is_tool_block,
    orphan,
    report,
    start,
)

_TRIES = 4
"""How many places of a long message's first fact are tried as the start of the stretch a
window kept (facts repeat by value: a call's id makes most of them unique)."""


@dataclass(slots=True)
class ProtocolMeter:
    """Checks request after request, reusing the work on what they share.

    Kept from the previous request: its stored messages, the facts of its OpenAI view, a stamp
    per fact, each checker's state after every fact and the violations each fact settled. States
    and violations name facts by stamp, not position: a stamp stays with its fact while the
    request around it changes, and stamps rise with positions, so a position is found by
    bisection when a violation is reported.

    A request keeps the kept lists up to the first stored message that is not the same object (a
    stored message is immutable, so the same object has the same facts). When that object is a
    later message of the previous request (a window that moved), the messages between are
    dropped (the ends of the messages after them stay as they are, counted from a base the drop
    moves), and the facts after them are fed again only until the checkers' states equal the
    kept ones (equal states judge the rest alike; what a rule reads off the request's calls is
    read again when reported). A long message that begins with a later stretch of the facts of
    the kept message it replaces (a window that cut a reply's front) drops the kept facts
    before that stretch the same way. Then the kept facts go up to the first that differs (a
    message that grew by appended blocks keeps the facts it had), and only the rest are fed.

    A stored message's facts are those of the piece the run's cache meter read in the same call
    under `counter` (`ctxlab.core.wire.piece`: its OpenAI view, sizes and facts in one read), so
    a new message is read once for both meters; a message the cache meter did not read (a
    request it resumed past) has its facts alone read (`protocol.facts_of_message`).
    """

    rules: tuple[Rule, ...]
    counter: TokenCounter = field(default_factory=AgentScopeEstimator)
    _messages: list[Message] = field(default_factory=list)
    _ends: list[int] = field(default_factory=list)  # less `_base`: facts of the first i + 1 messages
    _base: int = 0  # what `_ends` count from: a window that moved on shifts what is before its run
    _facts: list[Fact] = field(default_factory=list)
    _stamps: list[int] = field(default_factory=list)  # rising, one per fact
    _states: list[tuple[Checker, ...]] = field(default_factory=list)  # after each fact; [0]: none yet
    _found: dict[int, tuple[tuple[Violation, ...], ...]] = field(default_factory=dict)  # by stamp, per rule
    _ids: CallIds = field(default_factory=CallIds)
    _views: dict[int, tuple[Message, tuple[Fact, ...]]] = field(default_factory=dict)
    _request: object = None  # the last request, whose messages `_messages` holds
    _sharing: tuple[object, int, int] = (None, 0, -1)  # a request asked of, its leading and run (-1: unread)

    def reusable(self, messages: Sequence[Message]) -> int:
        """How many stored messages of the request checked last the check of `messages` keeps:
        the leading ones they share, else the run `messages` goes on with after a new head (a
        window that moved; a summary request of the span a reasoning request held)."""
        same = self._leading(messages)
        if same or not self._messages or self._sharing[2] >= 0:
            return max(same, self._sharing[2])
        found = resumed_at(self._messages, messages, 0)
        run = 0 if found is None else same_leading(self._messages[found[1] :], messages[found[0] :])
        self._sharing = (messages, same, run)
        return run

    def _leading(self, messages: Sequence[Message]) -> int:
        """How many leading stored messages `messages` shares with the request checked last
        (kept for `check` of the same request)."""
        if self._sharing[0] is not messages:
            self._sharing = (messages, same_leading_known(self._messages, messages, self._request), -1)
        return self._sharing[1]

    def check(self, messages: Sequence[Message], *, declares_tools: bool = True) -> tuple[Violation, ...]:
        """The violations of the request made of `messages` (stored messages, in order) that
        declares tools or, `declares_tools` false, none."""
        if not self.rules:
            return ()
        if not self._states:
            self._states.append(tuple(start(rule) for rule in self.rules))
        same = self._leading(messages)
        self._request, self._sharing = messages, (None, 0, -1)
        if same < len(self._messages) and same < len(messages):
            if self._drop_before(same, messages):  # the kept messages before `same` stay
                same += same_leading(self._messages[same:], messages[same:])
            else:
                self._drop_inside(same, messages)
        at = self._ends[same - 1] - self._base if same else 0
        known = self._known_facts(same, messages)
        del self._messages[same:], self._ends[same:]
        tracked = [self._track(message) for message in messages[same:]]
        # The facts read afresh: the first new message's past the `known` ones (equal to the
        # kept facts there, which stay), then every later message's. A reply that grew costs
        # what it gained, not its length.
        fresh = list(itertools.chain(tracked[0][known:], *tracked[1:])) if tracked else []
        fresh_at = at + known
        kept = fresh_at + equal_leading(self._facts[fresh_at:], fresh)
        # Hold the equal facts just read: a long message's are the objects its next, grown
        # version reads again, so the next request finds them the same at C speed.
        self._facts[fresh_at:kept] = fresh[: kept - fresh_at]
        while len(self._facts) > kept:
            self._pop()
        for fact in fresh[kept - fresh_at :]:
            self._push(fact)
        if len(self._views) > 2 * len(messages) + 16:  # forget facts of messages long gone
            present = {id(m) for m in messages}
            self._views = {key: value for key, value in self._views.items() if key in present}
        return self._report(declares_tools)

    def _known_facts(self, same: int, messages: Sequence[Message]) -> int:
        """How many leading facts of `messages[same]` are known to be those of the kept message
        it replaces (`GROWN`: a reply that grew, or an edited copy of one), without comparing."""
        if same >= min(len(messages), len(self._messages)) or len(messages[same].blocks) < RESUMED_BLOCKS:
            return 0  # only a long message's facts are noted
        return GROWN.shared(self.facts(messages[same]), self.facts(self._messages[same])) or 0

    def _drop_before(self, same: int, messages: Sequence[Message]) -> bool:
        """When the request goes on, after its first `same` kept messages, with a later kept
        message (a window that moved), drop the kept facts in between and settle the ones after
        them; False when it does not. Messages before that later one may be new objects (the
        oldest one cut short) as long as their facts end the dropped stretch."""
        kept = self._messages
        found = resumed_at(kept, messages, same)
        if found is None:
            return False
        m, j = found
        head = [fact for message in messages[same:m] for fact in self.facts(message)]
        start, end = self._end(same), self._end(j)
        cut = end - len(head)
        if cut < start or self._facts[cut:end] != head:
            return False
        self._forget_facts(start, cut)
        ends = list(
            itertools.accumulate((len(self.facts(message)) for message in messages[same:m]), initial=start)
        )
        # the run from `j` keeps its ends, counted from a base moved by what was dropped; the
        # few ends before it are counted from there too (a copy in place of an equal-length
        # message, a clearing's, drops nothing: the ends before it stay as they are)
        if cut != start:
            self._ends[:same] = map((cut - start).__add__, self._ends[:same])
            self._base += cut - start
        self._ends[same:j] = map(self._base.__add__, ends[1:])
        kept[same:j] = messages[same:m]
        self._settle(start)
        return True

    def _drop_inside(self, same: int, messages: Sequence[Message]) -> None:
        """When `messages[same]`, a long message, begins with a later stretch of the facts of the
        kept message it replaces, up to that one's end (a window that cut the front of a reply),
        drop the kept facts before the stretch, settle the ones after it, and keep only the
        messages before `same` (the rest are read again, their facts found equal)."""
        if len(messages[same].blocks) < RESUMED_BLOCKS:
            return
        facts = self.facts(messages[same])
        start, end = self._end(same), self._end(same + 1)
        if not facts or (start < end and self._facts[start] is facts[0]):
            return  # the very first fact the kept read made: a reply that grew, not one cut
        cut = self._stretch(facts, start + 1, end)
        if cut is None:
            return
        self._forget_facts(start, cut)
        del self._messages[same:], self._ends[same:]
        self._settle(start)

    def _end(self, kept: int) -> int:
        """How many facts the first `kept` kept messages have."""
        return self._ends[kept - 1] - self._base if kept else 0

    def _stretch(self, facts: tuple[Fact, ...], low: int, end: int) -> int | None:
        """Where, from `low` on, the kept facts up to `end` are the leading ones of `facts` (not
        empty; the first few places their first fact is found are tried); None when nowhere."""
        held, at = self._facts, low - 1
        for _ in range(_TRIES):
            try:
                at = held.index(facts[0], at + 1, end)
            except ValueError:
                return None
            if equal_leading(held[at:end], facts) == min(end - at, len(facts)):
                return at
        return None

    def _forget_facts(self, start: int, cut: int) -> None:
        """Drop the kept facts from `start` up to `cut`, with their calls, states and findings."""
        for stamp, fact in zip(self._stamps[start:cut], self._facts[start:cut], strict=True):
            self._ids.discard(stamp, fact.calls)
            self._found.pop(stamp, None)
        del self._facts[start:cut], self._stamps[start:cut], self._states[start + 1 : cut + 1]

    def _settle(self, start: int) -> None:
        """Feed the facts from `start` on again until a state equals the one kept after it."""
        for at in range(start, len(self._facts)):
            state = self._advance(self._states[at], self._facts[at], self._stamps[at])
            if state == self._states[at + 1]:
                return
            self._states[at + 1] = state

    def _track(self, message: Message) -> tuple[Fact, ...]:
        """The message's facts, the message now kept after the ones before it."""
        facts = self.facts(message)
        self._ends.append((self._ends[-1] if self._ends else self._base) + len(facts))
        self._messages.append(message)
        return facts

    def _push(self, fact: Fact) -> None:
        stamp = self._stamps[-1] + 1 if self._stamps else 0
        self._states.append(self._advance(self._states[-1], fact, stamp))
        self._ids.add(stamp, fact.calls)
        self._facts.append(fact)
        self._stamps.append(stamp)

    def _pop(self) -> None:
        stamp = self._stamps.pop()
        self._ids.remove(self._facts.pop().calls)
        self._states.pop()
        self._found.pop(stamp, None)

    def _advance(self, before: tuple[Checker, ...], fact: Fact, stamp: int) -> tuple[Checker, ...]:
        """The states after `fact`; what it settles is kept under its stamp."""
        after: list[Checker] = []
        found: list[tuple[Violation, ...]] = []
        settles = False
        for checker in before:
            state, settled = checker.feed(stamp, fact, self._ids)
            after.append(state)
            found.append(settled)
            settles = settles or bool(settled)
        if settles:
            self._found[stamp] = tuple(found)
        elif stamp in self._found:
            del self._found[stamp]
        return tuple(after)

    def _report(self, declares_tools: bool) -> tuple[Violation, ...]:
        found: list[list[Violation]] = [[] for _ in self.rules]
        for stamp in sorted(self._found):
            for settled, per_rule in zip(found, self._found[stamp], strict=True):
                settled.extend(per_rule)
        undeclared = None if declares_tools else self._first_tool_block()
        reported = report(self._states[-1], found, self._ids, undeclared)
        return tuple([self._placed(v) for v in reported]) if reported else ()

    def _first_tool_block(self) -> tuple[int, Fact] | None:
        """The stamp and fact of the request's first tool call or result, if any."""
        index = next((i for i, fact in enumerate(self._facts) if is_tool_block(fact)), None)
        return None if index is None else (self._stamps[index], self._facts[index])

    def _placed(self, violation: Violation) -> Violation:
        """`violation` at its fact's position (and an orphan's detail read off today's calls)."""
        stamp = violation.index
        if violation.rule == "openai" and violation.kind == "orphan_result":
            violation = orphan(stamp, violation.call_id, self._ids)
        index = bisect.bisect_left(self._stamps, stamp)
        return replace(violation, index=index) if index != stamp else violation

    def facts(self, message: Message) -> tuple[Fact, ...]:
        """The facts of one stored message's OpenAI view (memoised by identity): the piece's the
        cache meter read in this call, else read alone (`protocol.facts_of_message`)."""
        cached = self._views.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        piece = recent_piece(message, self.counter)
        facts = piece.facts if piece is not None else facts_of_message(message)
        self._views[id(message)] = (message, facts)
        return facts
