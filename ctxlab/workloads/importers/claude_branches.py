"""The branches a Claude Code session left: found by a first read of its log, so that the
import replays the conversation the session went on with.

Each line of a session log names the line it continues (`parentUuid`). A prompt edited or
rewound is written as a second prompt continuing the same line as the first; a rewind to the
first prompt, as a prompt that continues no line (`parentUuid: null`). Claude Code also appends
`last-prompt` lines naming the line the session stands at (`leafUuid`): as it goes, and, from a
rewind, an `explicit` one (naming no line, `leafUuid: null`, where the session was rewound to
before its first prompt). It resumes a session from the line the last of them names, or from
the last line where that one continues the named line and the name is not explicit; a
main-conversation line written after an explicit name takes its explicitness away, and a
compaction boundary takes the name away. So:

- The *leaf* is the line the last `last-prompt` names, if it is a line of the main conversation
  read, unless the name is not explicit and the last conversation line continues it (or a line
  it hangs off through lines that are no prompts, such as the result of one of parallel calls);
  else the last conversation line (of the side the file is read for: the main conversation, or
  a sub-agent's own file, which no `last-prompt` names).
- The *route* is the leaf and the lines it continues, back to the first; a compaction boundary,
  which continues nothing, is followed to the line it logically continues (`logicalParentUuid`).
- A branch is *left* where a prompt on the route shares the line it continues with other
  prompts: each of those prompts and every line continuing it, at any depth, is left. Where the
  route starts at a prompt that continues no line (`parentUuid: null`, the key present), every
  other such prompt is left with the lines continuing it. Where a `last-prompt` named the leaf,
  each conversation line continuing it (directly, or through bookkeeping lines, which stay) is
  left with the lines continuing that one. Nothing else is: lines that continue a line of the
  route without being a prompt (tool results of parallel calls, streamed blocks of one answer)
  stay, as do lines no prompt's branch holds.
- A session rewound to before its first prompt and not continued has no conversation: every
  line is left, and the reader says so at that `last-prompt`'s line.
- A line Claude Code wrote again (its id and all it holds of the conversation alike, `Copies`:
  a session reopened re-appends its lines) is the same line, read once, as Claude Code reads
  lines by id; every read skips it.
- A log whose links cannot be a single history (a line's id used twice for different lines, a
  loop of links) gives no answer (None): it is replayed as written, with a note where it
  branches, as a log read once is.

A prompt is a user line that is neither a tool result, nor a meta line (`isMeta`), nor the
summary written after a compaction (`isCompactSummary`).

Invariants: the first read holds each line's id, links and line number, and the last
`last-prompt`'s name, never content; the lines left are a union of whole subtrees, each rooted
at a prompt off the route or at a conversation line continuing the leaf.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.workloads.importers.base import Entry

CONVERSATION_KINDS = frozenset({"user", "assistant"})
"""The kinds of line the route ends at; lines of every kind with an id are links of it."""
MOVING_KINDS = CONVERSATION_KINDS | {"attachment", "system"}
"""The kinds of line that take an earlier `last-prompt`'s explicitness away, as Claude Code reads
a log."""


HELD = (
    *("type", "parentUuid", "logicalParentUuid", "isSidechain", "isMeta", "isCompactSummary"),
    *("message", "subtype", "content", "attachment", "rendered"),
)
"""The fields of a line that hold conversation or its links; the others (`cwd`, `timestamp`,
`slug`, ...) may differ between two copies of one line."""
COPY = "line Claude Code wrote again (its uuid and content repeat an earlier line's)"


@dataclass(slots=True)
class Copies:
    """The lines read so far, as a digest of what each holds (`HELD`) by its uuid, to find a line
    Claude Code wrote again (a session reopened in an editor, or fed as a stream, re-appends its
    lines; Claude Code reads a log's lines by uuid, so it reads such a line once).

    Invariant: holds one 16-byte digest a line id, never content."""

    seen: dict[str, bytes] = field(default_factory=dict)

    def again(self, value: Mapping[str, Any]) -> bool:
        """Whether `value` repeats an earlier line: the same uuid, the same `HELD` fields. A line
        that does not is recorded, the first of its uuid."""
        uuid = value.get("uuid")
        if not isinstance(uuid, str):
            return False
        held = json.dumps({key: value[key] for key in HELD if key in value}, sort_keys=True)
        digest = hashlib.blake2b(held.encode(), digest_size=16).digest()
        if self.seen.get(uuid) == digest:
            return True
        self.seen.setdefault(uuid, digest)
        return False


@dataclass(frozen=True, slots=True)
class Fork:
    """A branch left: the prompt the session went on with (its line), the line both continue
    (0: a line not in the file), and the first line and number of lines of the branch left;
    `anew` where both prompts continue no line (the session started over)."""

    line: int
    continued: int
    left_from: int
    left_lines: int
    anew: bool = False


@dataclass(frozen=True, slots=True)
class Pin:
    """Lines past the leaf a `last-prompt` named: that line's number, the leaf's, and the first
    line and number of lines continuing the leaf."""

    marker: int
    leaf: int
    left_from: int
    left_lines: int


@dataclass(frozen=True, slots=True)
class Branches:
    """What the first read found: the ids of the lines left, each fork, the lines past a named
    leaf, and the line of a `last-prompt` that left the session with no conversation (0: none)."""

    left: frozenset[str] = frozenset()
    forks: tuple[Fork, ...] = ()
    pin: Pin | None = None
    cleared: int = 0
    copies: frozenset[int] = frozenset()  # the lines Claude Code wrote again (`Copies`), by number


@dataclass(frozen=True, slots=True)
class _Node:
    line: int
    parent: str | None
    logical: str | None
    prompt: bool
    root: bool
    conversation: bool


@dataclass(slots=True)
class _Mark:
    """Where the last `last-prompt` says the session stands, as Claude Code reads it: the line
    named and that marker's line, whether it is explicit with no line written since, and the
    line of an explicit one naming no line, with no line written since (0: none)."""

    leaf: str | None = None
    line: int = 0
    explicit: bool = False
    cleared: int = 0

    def see(self, value: Mapping[str, Any], number: int) -> None:
        named, explicit = value.get("leafUuid"), value.get("explicit") is True
        if isinstance(named, str):
            self.explicit = explicit or (self.explicit and named == self.leaf)
            self.leaf, self.line, self.cleared = named, number, 0
        elif "leafUuid" in value and named is None and explicit:
            self.leaf, self.explicit, self.cleared = None, False, number

    def moved(self, boundary: bool) -> None:
        self.explicit, self.cleared = False, 0
        if boundary:
            self.leaf = None


@dataclass(slots=True)
class _Graph:
    nodes: dict[str, _Node] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)
    last: str | None = None
    side: bool | None = None
    mark: _Mark = field(default_factory=_Mark)
    doubled: bool = False
    copies: set[int] = field(default_factory=set)

    def add(self, uuid: str, node: _Node, conversation: bool) -> None:
        if uuid in self.nodes:
            self.doubled = True
        self.nodes[uuid] = node
        if node.parent is not None:
            self.children.setdefault(node.parent, []).append(uuid)
        if node.root:
            self.roots.append(uuid)
        if conversation:
            self.last = uuid


def branches_left(entries: Iterator[Entry]) -> Branches | None:
    """The branches a session log's conversation left (see the module docstring); None when its
    links are not one history."""
    graph = _read(entries)
    if graph.doubled:
        return None
    if graph.mark.cleared and graph.side is not True:
        return Branches(frozenset(graph.nodes), cleared=graph.mark.cleared, copies=frozenset(graph.copies))
    leaf = _leaf(graph)
    route = _route(graph, leaf) if leaf is not None else []
    if route is None:
        return None
    left, forks = _siblings(graph, set(route))
    if route:
        _anew(graph, route[-1], left, forks)
    pin = _pin(graph, leaf, left) if leaf is not None and leaf == graph.mark.leaf else None
    forks_in_order = tuple(sorted(forks, key=lambda f: f.left_from))
    return Branches(frozenset(left), forks_in_order, pin, copies=frozenset(graph.copies))


def _read(entries: Iterator[Entry]) -> _Graph:
    """Each line's id and links (every line with an id: bookkeeping lines are links of the
    history too), on the side the file is read for: its first conversation line's (the main
    conversation, or a sub-agent's); lines before that one are taken whatever their side. The
    `last-prompt` lines, and the main-conversation lines written after them, move the mark."""
    graph, copies = _Graph(), Copies()
    for number, value in entries:
        if not isinstance(value, Mapping):
            continue
        if value.get("type") == "last-prompt":
            graph.mark.see(value, number)
            continue
        if copies.again(value):
            graph.copies.add(number)
            continue
        if value.get("isSidechain") is not True and value.get("type") in MOVING_KINDS:
            graph.mark.moved(value.get("subtype") == "compact_boundary")
        uuid = value.get("uuid")
        if isinstance(uuid, str):
            _add(graph, uuid, value, number)
    return graph


def _add(graph: _Graph, uuid: str, value: Mapping[str, Any], number: int) -> None:
    sidechain, conversation = value.get("isSidechain") is True, value.get("type") in CONVERSATION_KINDS
    if graph.side is None and conversation:
        graph.side = sidechain
    if graph.side is not None and sidechain != graph.side:
        return
    parent, logical = _text(value.get("parentUuid")), _text(value.get("logicalParentUuid"))
    root = "parentUuid" in value and value["parentUuid"] is None and logical is None
    graph.add(uuid, _Node(number, parent, logical, is_prompt(value), root, conversation), conversation)


def _leaf(graph: _Graph) -> str | None:
    """The line the session stands at: the named one, unless the last conversation line
    continues it and the name is not explicit; the last conversation line where none is named."""
    named, last = graph.mark.leaf, graph.last
    if graph.side is True or named is None or named not in graph.nodes:
        return last
    if graph.mark.explicit or last is None or last == named:
        return named
    route = _route(graph, last)
    return last if route is not None and _behind(graph, named, set(route)) else named


def _behind(graph: _Graph, named: str, route: set[str]) -> bool:
    """Whether `named` is on the route or hangs off it through lines that are no prompts (the
    result of one of parallel calls, a bookkeeping line): the route then continues it."""
    at: str | None = named
    seen: set[str] = set()
    while at is not None and at in graph.nodes and at not in seen:
        if at in route:
            return True
        if graph.nodes[at].prompt:
            return False
        seen.add(at)
        at = graph.nodes[at].parent
    return False


def _route(graph: _Graph, leaf: str) -> list[str] | None:
    """The leaf and every line it continues, from the leaf back; None for a loop of links."""
    route: list[str] = []
    seen: set[str] = set()
    at: str | None = leaf
    while at is not None and at in graph.nodes:
        if at in seen:
            return None
        seen.add(at)
        route.append(at)
        node = graph.nodes[at]
        at = node.parent if node.parent is not None else node.logical
    return route


def _siblings(graph: _Graph, route: set[str]) -> tuple[set[str], list[Fork]]:
    """The branches of the prompts that share the line a prompt on the route continues."""
    left: set[str] = set()
    forks: list[Fork] = []
    for uuid in route:
        node = graph.nodes.get(uuid)
        if node is None or not node.prompt or node.parent is None:
            continue
        for sibling in graph.children.get(node.parent, ()):
            if sibling == uuid or sibling in route or not graph.nodes[sibling].prompt:
                continue
            subtree = _subtree(graph, sibling)
            left |= subtree
            continued = graph.nodes[node.parent].line if node.parent in graph.nodes else 0
            forks.append(Fork(node.line, continued, graph.nodes[sibling].line, len(subtree)))
    return left, forks


def _anew(graph: _Graph, first: str, left: set[str], forks: list[Fork]) -> None:
    """Where the route starts at a prompt continuing no line, the other such prompts' trees."""
    start = graph.nodes.get(first)
    if start is None or not (start.root and start.prompt):
        return
    for other in graph.roots:
        if other != first and graph.nodes[other].prompt:
            subtree = _subtree(graph, other)
            left |= subtree
            forks.append(Fork(start.line, 0, graph.nodes[other].line, len(subtree), anew=True))


def _pin(graph: _Graph, leaf: str, left: set[str]) -> Pin | None:
    """The conversation lines continuing a leaf a `last-prompt` named (through bookkeeping lines,
    which stay, as Claude Code keeps them) and the lines continuing those, added to `left`."""
    past: set[str] = set()
    stack = list(graph.children.get(leaf, ()))
    while stack:
        at = stack.pop()
        if graph.nodes[at].conversation:
            past |= _subtree(graph, at)
        else:
            stack.extend(graph.children.get(at, ()))
    if not past:
        return None
    left |= past
    first = min(graph.nodes[uuid].line for uuid in past)
    return Pin(graph.mark.line, graph.nodes[leaf].line, first, len(past))


def _subtree(graph: _Graph, root: str) -> set[str]:
    """`root` and every line continuing it, at any depth."""
    found, stack = {root}, [root]
    while stack:
        for child in graph.children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def is_prompt(value: Mapping[str, Any]) -> bool:
    """A user line that is neither a tool result, nor a meta line, nor a compaction's summary."""
    if value.get("type") != "user" or value.get("isMeta") is True or value.get("isCompactSummary") is True:
        return False
    message = value.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return True
    return isinstance(content, list) and not any(
        isinstance(block, Mapping) and block.get("type") == "tool_result" for block in content
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
