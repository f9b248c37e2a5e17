"""A call's message held until its results have come, as OpenHands builds its requests.

OpenHands records a tool call when the model makes it and its observation when the tool returns,
so another event (a message the user sent meanwhile, an agent's note) can come between them.
Its classic agent (`ConversationMemory.process_events`) holds the assistant message of a model
response until every call of it has its observation, adding the messages that came meanwhile
first, then the held message and its results in the order of its calls. The agent SDK sends
the events in their order (a result after the user's message), which breaks the tool-call
protocol; the replay puts them as the classic agent does, which makes no request the session
did not make (a user message after the results would end the reply on its calls).

Invariants: every message given out of its place is noted; an assistant message of calls is
followed at once by the results of its calls, in the order of its calls; a call with no result
later on is not waited for (a message whose calls have none is given at its place).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ctxlab.workloads.importers.base import Report, Wire


@dataclass(slots=True)
class _Batch:
    """An assistant message of calls and the results of those that have one somewhere."""

    message: Wire
    waiting: frozenset[str]
    results: dict[str, Wire] = field(default_factory=dict)

    def complete(self) -> bool:
        return self.waiting <= self.results.keys()

    def wires(self) -> Iterator[Wire]:
        """The message, then each result once, in the order of the calls."""
        yield self.message
        for call_id in dict.fromkeys(item["id"] for item in self.message["tool_calls"]):
            if call_id in self.results:
                yield self.results[call_id]


def held_until_answered(messages: list[Wire], report: Report) -> Iterator[Wire]:
    """The messages with each assistant message of calls held until each of its calls that has
    a result later on has it; messages that come meanwhile go before it (see the module
    docstring). A result answers the latest call of its id before it."""
    answered = _answered(messages)
    pending: list[_Batch] = []
    for index, message in enumerate(messages):
        owner = _owner(pending, message)
        if owner is not None:
            owner.results[message["tool_call_id"]] = message
        elif message.get("tool_calls"):
            calls = {c["id"] for c in message["tool_calls"]}
            pending.append(_Batch(message, frozenset(c for c in calls if (index, c) in answered)))
        else:
            if pending and message["role"] != "tool":
                report.notes.append(_moved(message, pending))
            yield message
        done = [batch for batch in pending if batch.complete()]
        pending = [batch for batch in pending if not batch.complete()]
        for batch in done:
            yield from batch.wires()
    for batch in pending:  # a result the first pass saw never came (not reached): none is lost
        yield from batch.wires()


def _answered(messages: list[Wire]) -> set[tuple[int, str]]:
    """The calls that have a result later on, each as its message's index and its id."""
    latest: dict[str, int] = {}
    found: set[tuple[int, str]] = set()
    for index, message in enumerate(messages):
        for item in message.get("tool_calls") or ():
            latest[item["id"]] = index
        if message["role"] == "tool" and message["tool_call_id"] in latest:
            found.add((latest[message["tool_call_id"]], message["tool_call_id"]))
    return found


def _owner(pending: list[_Batch], message: Wire) -> _Batch | None:
    """The held batch a tool result answers: the latest awaiting a result of its call."""
    if message["role"] != "tool":
        return None
    call_id = message["tool_call_id"]
    return next((b for b in reversed(pending) if call_id in b.waiting and call_id not in b.results), None)


def _moved(message: Wire, pending: list[_Batch]) -> str:
    awaiting = sorted(c for b in pending for c in b.waiting - b.results.keys())
    return (
        f"a {message['role']} message came while call(s) {', '.join(map(repr, awaiting))} awaited "
        "their results: replayed before the calls' message, so that the results follow their calls "
        "(the classic OpenHands agent's order)"
    )
