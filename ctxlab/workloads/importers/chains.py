"""Which request of a request log holds the conversation to replay.

A log of an agent's API traffic holds the main agent's requests and side requests: a small
model asked for a title or a topic, a quota check, a sub-agent's own conversation. Each request
repeats its conversation so far, so the rule is:

- A request *continues* an earlier one when its messages begin with all of that one's messages
  and it has more (messages compared as JSON, without their `cache_control` marks, which a client
  moves from request to request). It continues the one with the most messages among those; of
  requests with the same messages, the latest.
- A request that continues none that way *carries* the answer of an earlier one when its
  messages hold a passage of that answer's text: a passage being a run of the text between
  markup tags (`<summary>`), whitespace collapsed, of `CARRIED` characters or more, so a short
  common answer ("ok", "Done.") never links. Only the last request of a chain of two requests
  or more is looked at, the latest first. Such a request continues the one whose answer it
  carries: it is how a conversation goes on after a compaction, the client's next request
  starting over from the summary the model wrote (a chain of one, otherwise, and so taken for a
  side request when no request follows it). A title, a topic or a quota check holds no such
  passage, and stays a side request; one that quotes the last answer of a chain whole (a title
  asked of the conversation with its answers) is read as that chain's continuation.
- A *chain* is a request and the requests it continues, back to one that continues none.
- The conversation is the last request of the chain that ends latest among the chains of two
  requests or more (a side request is a chain of one: a title, a topic, a quota check asked once);
  when every chain is one request, the last request. Every other request is skipped: the chain's
  earlier requests (before a compaction too: the model saw their summary, which the request
  taken holds), and the requests of every other chain. A request whose call failed is not one
  of them: its reader counts it and leaves it out (`request_log`).

So a log whose requests do not continue one another gives its last request, and a log whose
last request continues all the others gives that one, as the last-request rule did. A client
that compacts goes on from the summary, which its next request carries, so that request
continues the conversation however many follow it. A client that rewrites earlier messages
(clearing old tool results) sends the last answer again, so its request carries it too where
that answer has a passage; one whose rewritten request holds none starts a new chain there, taken when it ends
latest among chains of two requests or more. An answer is known only where the log holds the
response: a request whose response was not logged links by its messages alone.

Invariants: memory holds one digest a message of the request being read, one small link a
request, and, for each request no later request continues (a chain's last), its payload and at
most `PASSAGES` passages of its answer of at most `KEPT` characters each, never the earlier
requests of a chain. A request's strings are gathered (without recursion, at any depth) only
when it continues none by its messages and some chain of two requests or more has an answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ctxlab.workloads.importers.base import Report

Payload = TypeVar("Payload")

MARKS = frozenset({"cache_control"})
"""Keys a client moves between requests without changing the conversation."""

CARRIED = 64
"""The fewest characters of a passage of an answer that links a request carrying it: about a
sentence with content. A compaction's summary is paragraphs; a shorter passage ("ok", "Done.",
"Let me check that file.") is too common to say that a request goes on from that answer."""
KEPT = 256
"""The characters kept of a passage (its start): a request that carries the passage holds them."""
PASSAGES = 4
"""The passages kept of an answer, its longest (a summary besides the analysis a client drops)."""
TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>")
"""A markup tag: a client that shows a summary may drop the tags around it, or a part between."""


@dataclass(frozen=True, slots=True)
class Link:
    """A request read: its line, the request it continues (by order) and its chain's length."""

    line: int
    parent: int | None
    depth: int
    carried: bool = False
    """The request continues its parent by carrying its answer, not by its messages."""


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
    resumed: tuple[int, int, int] | None = None
    """After a compaction, the last in the chain: the line of the request that carries an
    answer, the line of the request answered, and how many requests of the chain go up to it."""


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


def passages(texts: Iterable[str]) -> tuple[str, ...]:
    """The passages of an answer's `texts` a request must hold to carry it (see the module
    docstring): the `PASSAGES` longest of `CARRIED` characters or more, each cut to `KEPT`."""
    found = {" ".join(part.split()) for text in texts for part in TAG.split(text)}
    long = sorted((p for p in found if len(p) >= CARRIED), key=lambda p: (-len(p), p))
    return tuple(p[:KEPT].rstrip() for p in long[:PASSAGES])


def _strings(messages: list[object]) -> str:
    """Every string `messages` hold as values, at any depth, whitespace collapsed, joined by NUL
    so that no passage is found across two of them. A walk with a stack of its own: a message
    may nest deeper than Python frames reach (see `_canonical`)."""
    found: list[str] = []
    stack: list[object] = list(messages)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(" ".join(item.split()))
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return "\0".join(found)


@dataclass(slots=True)
class Chains(Generic[Payload]):
    """The requests of a log as they are read, linked into chains (see the module docstring)."""

    links: list[Link] = field(default_factory=list)
    ends: dict[bytes, int] = field(default_factory=dict)
    """A request's whole-messages digest → the latest request with those messages."""
    tips: dict[int, Payload] = field(default_factory=dict)
    """The payload of each request no later request continues, by order."""
    said: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """The `passages` of the answer of each request no later request continues, by order."""

    def add(
        self,
        line: int,
        messages: list[object],
        payload: Payload,
        *,
        after: int | None = None,
        answer: Iterable[str] = (),
    ) -> None:
        """Read the next request of the log, with the texts of its logged `answer` (none when
        its response was not logged); `after`, the order of a request it continues by a link the
        log names (a Responses request's `previous_response_id`), replaces the comparison of
        messages for it."""
        digests = prefix_digests(messages)
        parent = after
        if parent is None:
            parent = next((self.ends[d] for d in reversed(digests[:-1]) if d in self.ends), None)
        carried = False
        if parent is None:
            parent = self._carrier(messages)
            carried = parent is not None
        depth = 1 if parent is None else self.links[parent].depth + 1
        order = len(self.links)
        self.links.append(Link(line, parent, depth, carried))
        if parent is not None:
            self.tips.pop(parent, None)
            self.said.pop(parent, None)
        self.tips[order] = payload
        if found := passages(answer):
            self.said[order] = found
        if digests:
            self.ends[digests[-1]] = order

    def _carrier(self, messages: list[object]) -> int | None:
        """The latest request, the last of a chain of two or more, whose answer `messages` carry
        (see the module docstring); None when there is none."""
        candidates = [order for order in reversed(self.said) if self.links[order].depth > 1]
        if not candidates:
            return None
        held = _strings(messages)
        return next((o for o in candidates if any(p in held for p in self.said[o])), None)

    def _resumed(self, order: int) -> tuple[int, int, int] | None:
        """The last compaction of the chain ending at `order` (see `Choice.resumed`)."""
        at: int | None = order
        while at is not None:
            link = self.links[at]
            if link.carried and link.parent is not None:
                answered = self.links[link.parent]
                return link.line, answered.line, answered.depth
            at = link.parent
        return None

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
            resumed=self._resumed(order),
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
    if choice.resumed is not None:
        line, answered, before = choice.resumed
        report.notes.append(
            f"the conversation goes on after a compaction (or a rewrite of its history): the request at "
            f"line {line} holds the answer to the request at line {answered}, the summary it asked for, "
            f"so it continues that chain and is no side request; the conversation taken is the request "
            f"at line {choice.line}, and the {before} requests up to line {answered} are replayed only as "
            "far as it holds them (the summary)"
        )
