"""Which request of a request log holds the conversation to replay.

A log of an agent's API traffic holds the main agent's requests and side requests: a small
model asked for a title or a topic, a quota check, a sub-agent's own conversation. Each request
repeats its conversation so far, so the rule is:

- A request *continues* an earlier one when its messages begin with all of that one's messages
  and it has more (messages compared as JSON, without their `cache_control` marks, which a client
  moves from request to request). It continues the one with the most messages among those; of
  requests with the same messages, the latest.
- A *chain* is a request and the requests it continues, back to one that continues none.
- The conversation is the last request of the chain that ends latest among the chains of two
  requests or more (a side request is a chain of one: a title, a topic, a quota check asked once);
  when every chain is one request, the last request. Every other request is skipped: the chain's
  earlier requests, and the requests of every other chain. A request whose call failed is not
  one of them: its reader counts it and leaves it out (`request_log`).

So a log whose requests do not continue one another gives its last request, and a log whose
last request continues all the others gives that one, as the last-request rule did. A client
that rewrites earlier messages (clearing old tool results, compacting) starts a new chain there,
which ends later than the one before it and so is taken, as the client's conversation from then
on (the same request the last-request rule took).

Invariants: memory holds one digest a message of the request being read, one small link a
request, and the payload of each request no later request continues (a chain's last), never
the earlier requests of a chain.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ctxlab.workloads.importers.base import Report

Payload = TypeVar("Payload")

MARKS = frozenset({"cache_control"})
"""Keys a client moves between requests without changing the conversation."""


@dataclass(frozen=True, slots=True)
class Link:
    """A request read: its line, the request it continues (by order) and its chain's length."""

    line: int
    parent: int | None
    depth: int


@dataclass(frozen=True, slots=True)
class Choice(Generic[Payload]):
    """The request taken as the conversation, and what was skipped: `earlier` requests of its
    chain, `others` requests in `chains` other chains."""

    line: int
    payload: Payload
    depth: int
    earlier: int
    others: int
    chains: int


def _unmarked(pairs: list[tuple[str, object]]) -> dict[str, object]:
    return {key: value for key, value in pairs if key not in MARKS}


def _canonical(message: object) -> str:
    """`message` as sorted, compact JSON without the `MARKS` keys, at any depth. The keys are
    dropped by the JSON reader's hook, which works level by level in C: a message may nest as
    deep as a transcript may (`ctxlab.workloads.files.JSON_DEPTH`), past what a walk in Python
    frames would reach. Only a message whose JSON names a mark is read back."""
    data = json.dumps(message, sort_keys=True, separators=(",", ":"))
    if not any(f'"{mark}"' in data for mark in MARKS):
        return data
    return json.dumps(json.loads(data, object_pairs_hook=_unmarked), sort_keys=True, separators=(",", ":"))


def prefix_digests(messages: list[object]) -> list[bytes]:
    """One digest per leading run of `messages`: element k identifies `messages[: k + 1]`."""
    running = hashlib.sha256()
    digests: list[bytes] = []
    for message in messages:
        data = _canonical(message).encode()
        running.update(len(data).to_bytes(8, "big"))  # a length prefix: no two runs read alike
        running.update(data)
        digests.append(running.copy().digest())
    return digests


@dataclass(slots=True)
class Chains(Generic[Payload]):
    """The requests of a log as they are read, linked into chains (see the module docstring)."""

    links: list[Link] = field(default_factory=list)
    ends: dict[bytes, int] = field(default_factory=dict)
    """A request's whole-messages digest → the latest request with those messages."""
    tips: dict[int, Payload] = field(default_factory=dict)
    """The payload of each request no later request continues, by order."""

    def add(self, line: int, messages: list[object], payload: Payload, *, after: int | None = None) -> None:
        """Read the next request of the log; `after`, the order of a request it continues by a
        link the log names (a Responses request's `previous_response_id`), replaces the
        comparison of messages for it."""
        digests = prefix_digests(messages)
        parent = after
        if parent is None:
            parent = next((self.ends[d] for d in reversed(digests[:-1]) if d in self.ends), None)
        depth = 1 if parent is None else self.links[parent].depth + 1
        order = len(self.links)
        self.links.append(Link(line, parent, depth))
        if parent is not None:
            self.tips.pop(parent, None)
        self.tips[order] = payload
        if digests:
            self.ends[digests[-1]] = order

    def choice(self) -> Choice[Payload] | None:
        """The conversation's request; None when no request was read."""
        if not self.tips:
            return None
        chained = [order for order in self.tips if self.links[order].depth > 1]
        order = max(chained or self.tips)
        link = self.links[order]
        return Choice(
            line=link.line,
            payload=self.tips[order],
            depth=link.depth,
            earlier=link.depth - 1,
            others=len(self.links) - link.depth,
            chains=len(self.tips) - 1,
        )


def tell(choice: Choice[Payload], report: Report, *, replayed: int = 0) -> None:
    """Count the requests not taken (the `replayed` earlier ones of the chain taken are replayed
    too), and say which one was, when there was a choice."""
    if choice.earlier > replayed:
        report.skipped["earlier request"] += choice.earlier - replayed
    if choice.others:
        report.skipped["request outside the conversation (a side request or sub-agent)"] += choice.others
        report.notes.append(
            f"the conversation is the request at line {choice.line}: the last of the chain ending latest "
            f"({choice.depth} requests, each continuing the one before); {choice.others} requests in "
            f"{choice.chains} other chains (side requests, sub-agents) are skipped"
        )
