"""The branches a Claude Code session left: found by a first read of its log, so that the
import replays the conversation the session went on with.

Each line of a session log names the line it continues (`parentUuid`). A prompt edited or
rewound is written as a second prompt continuing the same line as the first, and Claude Code
goes on from the last line's branch. So:

- The *route* is the last conversation line (of the side the file is read for: the main
  conversation, or a sub-agent's own file) and the lines it continues, back to the first; a
  compaction boundary, which continues nothing, is followed to the line it logically continues
  (`logicalParentUuid`).
- A branch is *left* where a prompt on the route shares the line it continues with other
  prompts: each of those prompts and every line continuing it, at any depth, is left. Nothing
  else is: lines that continue a line of the route without being a prompt (tool results of
  parallel calls, streamed blocks of one answer) stay, as do lines no prompt's branch holds.
- A log whose links cannot be a single history (a line's id used twice, a loop of links) gives
  no answer (None): it is replayed as written, with a note where it branches, as a log read once
  is.

A prompt is a user line that is neither a tool result, nor a meta line (`isMeta`), nor the
summary written after a compaction (`isCompactSummary`).

Invariants: the first read holds each line's id, links and line number, never content; the
lines left are a union of whole subtrees, each rooted at a prompt off the route.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.workloads.importers.base import Entry

CONVERSATION_KINDS = frozenset({"user", "assistant"})
"""The kinds of line the route ends at; lines of every kind with an id are links of it."""


@dataclass(frozen=True, slots=True)
class Fork:
    """A branch left: the prompt the session went on with (its line), the line both continue,
    and the first line and number of lines of the branch left."""

    line: int
    continued: int
    left_from: int
    left_lines: int


@dataclass(frozen=True, slots=True)
class Branches:
    """What the first read found: the ids of the lines left, and each fork."""

    left: frozenset[str] = frozenset()
    forks: tuple[Fork, ...] = ()


@dataclass(frozen=True, slots=True)
class _Node:
    line: int
    parent: str | None
    logical: str | None
    prompt: bool


@dataclass(slots=True)
class _Graph:
    nodes: dict[str, _Node] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    leaf: str | None = None
    doubled: bool = False

    def add(self, uuid: str, node: _Node, conversation: bool) -> None:
        if uuid in self.nodes:
            self.doubled = True
        self.nodes[uuid] = node
        if node.parent is not None:
            self.children.setdefault(node.parent, []).append(uuid)
        if conversation:
            self.leaf = uuid


def branches_left(entries: Iterator[Entry]) -> Branches | None:
    """The branches a session log's conversation left (see the module docstring); None when its
    links are not one history."""
    graph = _read(entries)
    if graph.doubled:
        return None
    route = _route(graph, graph.leaf) if graph.leaf is not None else set()
    if route is None:
        return None
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
    return Branches(frozenset(left), tuple(sorted(forks, key=lambda f: f.left_from)))


def _read(entries: Iterator[Entry]) -> _Graph:
    """Each line's id and links (every line with an id: bookkeeping lines are links of the
    history too), on the side the file is read for: its first conversation line's (the main
    conversation, or a sub-agent's); lines before that one are taken whatever their side."""
    graph = _Graph()
    side: bool | None = None
    for number, value in entries:
        uuid = value.get("uuid") if isinstance(value, Mapping) else None
        if not isinstance(uuid, str):
            continue
        sidechain, conversation = value.get("isSidechain") is True, value.get("type") in CONVERSATION_KINDS
        if side is None and conversation:
            side = sidechain
        if side is not None and sidechain != side:
            continue
        parent, logical = _text(value.get("parentUuid")), _text(value.get("logicalParentUuid"))
        graph.add(uuid, _Node(number, parent, logical, _prompt(value)), conversation)
    return graph


def _route(graph: _Graph, leaf: str) -> set[str] | None:
    """The leaf and every line it continues; None for a loop of links."""
    route: set[str] = set()
    at: str | None = leaf
    while at is not None and at in graph.nodes:
        if at in route:
            return None
        route.add(at)
        node = graph.nodes[at]
        at = node.parent if node.parent is not None else node.logical
    return route


def _subtree(graph: _Graph, root: str) -> set[str]:
    """`root` and every line continuing it, at any depth."""
    found, stack = {root}, [root]
    while stack:
        for child in graph.children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _prompt(value: Mapping[str, Any]) -> bool:
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
