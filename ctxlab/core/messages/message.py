"""Messages and the pairing facts between tool calls and their results.

Invariants:
- A message is immutable; `tally` is the sum of its blocks' tallies, computed once.
- Everything one reply produces lives in one assistant message in time order (hints, text,
  thinking, calls, results). A round of parallel calls is stored calls-first:
  `[A, B, C, resA, resB, resC]`, so a call and its result never span two messages.
- The summary is not a context message: it travels beside the context and is sent as a user
  message right after the system prompt (first, when the request has no system message).
- A system prompt of None sends no system message; an empty one sends an empty system message
  (what a framework that always writes one does). Which one a run has is its strategy's choice
  (`Strategy.system_prompt`).
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ctxlab.core.messages.blocks import (
    Block,
    Part,
    Tally,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    sum_tallies,
)

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message: a role, its blocks in order, an id, and an optional sender name."""

    role: Role
    blocks: tuple[Block, ...]
    id: str = ""
    name: str | None = None
    tally: Tally = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tally", sum_tallies(self.blocks))

    def appended(self, *blocks: Block) -> Message:
        """A copy with `blocks` added at the end; its tally adds theirs to this one's (a reply
        that grows a round at a time is not summed whole at every round)."""
        grown = object.__new__(Message)
        more = self.blocks + blocks
        GROWN.note(more, self.blocks)
        fields = (self.role, more, self.id, self.name, self.tally + sum_tallies(blocks))
        for name, value in zip(_FIELDS, fields, strict=True):
            object.__setattr__(grown, name, value)
        return grown

    def with_blocks(self, blocks: tuple[Block, ...], tally: Tally | None = None) -> Message:
        """A copy holding `blocks` instead; `tally`, when given, is their summed tally (kept
        running by a caller that rebuilds a long message at every call)."""
        if tally is None:
            return Message(role=self.role, blocks=blocks, id=self.id, name=self.name)
        made = object.__new__(Message)
        for name, value in zip(_FIELDS, (self.role, blocks, self.id, self.name, tally), strict=True):
            object.__setattr__(made, name, value)
        return made


_FIELDS = ("role", "blocks", "id", "name", "tally")


class Lineage:
    """Tuples known to begin with the very objects of another, each noted with that parent and
    how many leading objects they share: every block tuple `Message.appended` made (sharing all
    its parent's), and the tuples a resumed read or an edit made from one it kept (`memo`). Two
    tuples with a noted common ancestor share at least the fewest objects any link on the way
    shares, so a reader that kept its work on one resumes the other without comparing them
    (`resumable.closest`, `begins_with`, the meters). Only speed depends on it.
    """

    __slots__ = ("__weakref__", "_held", "_parents")

    LIMIT = 256
    HELD = 1 << 20
    """The most objects the noted tuples may hold between them: a long history is a tuple as long
    as it, noted at every step, and only the last few steps' notes are read."""
    STEPS = 4
    """How many links back a tuple is followed (a reply gains a model turn and then its results
    between two requests)."""

    def __init__(self) -> None:
        self._parents: OrderedDict[int, tuple[tuple[object, ...], tuple[object, ...], int]] = OrderedDict()
        self._held = 0  # the length of every noted tuple, summed

    def note(self, grown: tuple[object, ...], parent: tuple[object, ...], shared: int | None = None) -> None:
        """The first `shared` objects of `grown` are those of `parent` (all of `parent`'s when not
        given); the oldest notes go past `LIMIT` notes, or past `HELD` objects held."""
        if grown is parent:
            return
        parents = self._parents
        while parents and (len(parents) >= self.LIMIT or self._held + len(grown) > self.HELD):
            self._held -= len(parents.popitem(last=False)[1][0])
        old = parents.pop(id(grown), None)  # a tuple noted again: its latest note stands
        if old is not None:
            self._held -= len(old[0])
        # holding `grown` keeps its id its own
        parents[id(grown)] = (grown, parent, len(parent) if shared is None else shared)
        self._held += len(grown)

    def parent(self, items: object) -> tuple[object, ...] | None:
        """The tuple `items` was noted with, if any."""
        noted = self._parents.get(id(items))
        return noted[1] if noted is not None and noted[0] is items else None

    def head(self, items: object) -> tuple[object, ...] | None:
        """The tuple `items` was noted with when `items` begins with all of its objects, if any."""
        noted = self._parents.get(id(items))
        return noted[1] if noted is not None and noted[0] is items and noted[2] == len(noted[1]) else None

    def shared(self, items: object, origin: tuple[object, ...]) -> int | None:
        """How many leading objects `items` and `origin` are known to share, by way of their
        nearest noted common ancestor (up to `STEPS` links back from each); None when none is
        known (which says nothing)."""
        if type(items) is not tuple:
            return None
        if items is origin:
            return len(origin)
        parents = self._parents
        # origin's ancestors, each with how many leading objects origin shares with it
        theirs = {id(origin): (origin, len(origin))}
        ancestor, known = origin, len(origin)
        for _ in range(self.STEPS):
            noted = parents.get(id(ancestor))
            if noted is None or noted[0] is not ancestor:
                break
            ancestor, known = noted[1], min(known, noted[2])
            # the nearest place: notes can cycle (`()` and whole slices are the tuples they slice)
            theirs.setdefault(id(ancestor), (ancestor, known))
        # then items' own, nearest first, until one is among them (read at every call of a reply)
        mine, shared = items, len(items)
        for _ in range(self.STEPS + 1):
            found = theirs.get(id(mine))
            if found is not None and found[0] is mine:
                return min(shared, found[1])
            noted = parents.get(id(mine))
            if noted is None or noted[0] is not mine:
                return None
            mine, shared = noted[1], min(shared, noted[2])
        return None

    def extends(self, items: object, origin: tuple[object, ...]) -> bool:
        """Whether `items` is known to begin with every object of `origin`."""
        return self.shared(items, origin) == len(origin)

    def clear(self) -> None:
        """Forget every note."""
        self._parents.clear()
        self._held = 0


GROWN = Lineage()
LINEAGE_WORTH = 256
"""A history this long is noted as grown from the last and found along its lineage; a shorter one
is compared at C speed, which costs less than walking notes."""


def extended(head: tuple[Message, ...], tail: Sequence[Message]) -> tuple[Message, ...]:
    """`(*head, *tail)`, noted (`GROWN`) as beginning with `head` when long enough to be found
    along its lineage: a request made of an edited part kept from the last request (the very
    tuple while unchanged) and the rest of the history is then known to share that part.

    >>> x = text_message("user", "x")
    >>> extended((x,), (x,)) == (x, x)
    True
    """
    # concatenated, a long history is copied once (unpacking copies it twice, via a list)
    made = head + tail if type(tail) is tuple else (*head, *tail)
    if len(made) >= LINEAGE_WORTH:
        GROWN.note(made, head)
    return made


def same_leading_known(held: Sequence[object], items: Sequence[object], source: object) -> int:
    """`same_leading(held, items)`, where `held` holds the very objects of the tuple `source`
    (None: no tuple is known): the leading objects `items` is known to share with `source`
    (`GROWN`: a history that grew from it) are not compared, so a request that grew from the
    last one costs what it gained, not its length.

    >>> x, y = text_message("user", "x"), text_message("user", "y")
    >>> first = (x,)
    >>> grown = (*first, y)
    >>> GROWN.note(grown, first)
    >>> same_leading_known([x], grown, first), same_leading_known([x, x], grown, None)
    (1, 1)
    """
    known = GROWN.shared(items, source) if len(items) >= LINEAGE_WORTH and type(source) is tuple else None
    if not known:
        return same_leading(held, items)
    known = min(known, len(held), len(items))
    return known + same_leading(held[known:], items[known:])


def begins_with(items: Sequence[object], prefix: tuple[object, ...]) -> bool:
    """Whether `items` begins with the very objects of `prefix`: known at once when noted
    (`GROWN`), else compared at C speed."""
    return GROWN.extends(items, prefix) or same_leading(prefix, items) == len(prefix)


def text_message(role: Role, text: str, *, id: str = "", name: str | None = None) -> Message:
    """A message of one text block.

    >>> text_message("user", "hi").blocks
    (TextBlock(text='hi'),)
    """
    return Message(role=role, blocks=(TextBlock(text=text),), id=id, name=name)


def summary_message(summary: str | tuple[Part, ...]) -> Message | None:
    """The user message that carries the summary, or None when there is no summary."""
    if not summary:
        return None
    if isinstance(summary, str):
        return text_message("user", summary)
    return Message(role="user", blocks=summary)


@functools.lru_cache(maxsize=64)
def fixed_messages(system_prompt: str | None, summary: str | tuple[Part, ...]) -> tuple[Message, ...]:
    """The system message (unless `system_prompt` is None) and the summary message (when there is
    a summary).

    >>> [m.role for m in fixed_messages(None, "S")], [m.role for m in fixed_messages("", "S")]
    (['user'], ['system', 'user'])

    Memoised: a run asks for the same pair before every call, and returning the same objects lets
    per-message caches (protocol checks, cache accounting) recognise the shared request prefix,
    the summary request's included.
    """
    carried = summary_message(summary)
    system = () if system_prompt is None else (text_message("system", system_prompt),)
    return system if carried is None else (*system, carried)


def call_ids(message: Message) -> tuple[str, ...]:
    """Ids of the tool calls in `message`, in order."""
    return tuple(b.id for b in message.blocks if isinstance(b, ToolCallBlock))


def result_ids(message: Message) -> tuple[str, ...]:
    """Ids of the tool results in `message`, in order."""
    return tuple(b.id for b in message.blocks if isinstance(b, ToolResultBlock))


def unfinished_calls(message: Message) -> tuple[ToolCallBlock, ...]:
    """Calls in `message` that have no result in it (yet).

    >>> from ctxlab.core.messages.blocks import ToolCallBlock as C, ToolResultBlock as R
    >>> m = Message(role="assistant", blocks=(C(id="a", name="t", input="{}"),
    ...     C(id="b", name="t", input="{}"), R(id="a", name="t", output=())))
    >>> [c.id for c in unfinished_calls(m)]
    ['b']
    """
    answered = set(result_ids(message))
    return tuple(b for b in message.blocks if isinstance(b, ToolCallBlock) and b.id not in answered)


def same_leading(a: Sequence[object], b: Sequence[object]) -> int:
    """How many leading items of `a` and `b` are the very same objects.

    Stored messages are immutable, so a meter that remembers the previous request resumes after
    the messages it shares by identity; the scan runs at C speed.

    >>> x, y = text_message("user", "x"), text_message("user", "y")
    >>> same_leading([x, y, x], [x, y, y]), same_leading([x], [x, y]), same_leading([], [x])
    (2, 1, 0)
    """
    differ = itertools.compress(itertools.count(), map(operator.is_not, a, b))
    return next(differ, min(len(a), len(b)))


def same_run(a: Sequence[object], i: int, b: Sequence[object], j: int, most: int) -> int:
    """How many of the `most` items of `a` from `i` on are the very objects of `b` from `j` on
    (`same_leading` of the two slices, without copying them).

    >>> x, y = text_message("user", "x"), text_message("user", "y")
    >>> same_run([y, x, y], 1, [x, y, x], 0, 2), same_run([x], 0, [y, x], 1, 1)
    (2, 1)
    """
    # Compared a slice at a time, each four times the last: a run far into a long reply (a
    # clearing's copy) is mostly short, and skipping to it by iterating would cost its place.
    done, size = 0, _RUN_SLICE
    while done < most:
        size = min(size, most - done)
        ours, theirs = a[i + done : i + done + size], b[j + done : j + done + size]
        same = next(itertools.compress(itertools.count(), map(operator.is_not, ours, theirs)), size)
        done += same
        if same < size:
            break
        size *= 4
    return done


_RUN_SLICE = 16
"""How many items `same_run` compares first."""


def same_trailing(a: Sequence[object], b: Sequence[object]) -> int:
    """How many trailing items of `a` and `b` are the very same objects (`same_leading` from the
    end: a window cut from a history's front ends as the history does).

    >>> x, y = text_message("user", "x"), text_message("user", "y")
    >>> same_trailing([y, x, y], [x, y]), same_trailing([x], [y, x]), same_trailing([], [x])
    (2, 1, 0)
    """
    differ = itertools.compress(itertools.count(), map(operator.is_not, reversed(a), reversed(b)))
    return next(differ, min(len(a), len(b)))


def resumed_at(held: Sequence[object], items: Sequence[object], same: int) -> tuple[int, int] | None:
    """Where `items`, past the first `same` they share with `held`, goes on with a later item of
    `held` (a window that dropped its front): `(i, j)` with `items[i] is held[j]` and `j > same`;
    None when no later item of `held` comes back. The pair is the first of the next `_PROBES`
    items found among the next `_NEAR` held ones at its first place there, else `i` the first
    such and `j` its first place in `held`.

    >>> a, b, c, d = (text_message("user", t) for t in "abcd")
    >>> resumed_at([a, b, c, d], [a, c, d], 1), resumed_at([a, b], [a, c], 1)
    ((1, 2), None)
    """
    if same + 1 >= len(held):
        return None
    # A window's first item after `same` is mostly a later held one, or the one it cut short
    # (held nowhere) followed by one, a few places on: the first few are looked for there, then
    # further, by scans at C speed, which cost less than indexing every held item.
    probed = min(len(items), same + _PROBES)
    for stop in (same + 1 + _NEAR, None):
        for i in range(same, probed):
            later = map(operator.is_, itertools.islice(held, same + 1, stop), itertools.repeat(items[i]))
            place = next(itertools.compress(itertools.count(same + 1), later), None)
            if place is not None:
                return (i, place)
    # Backwards, so an item held twice maps to its first place. Both sides hold their objects
    # alive, so an id found on both is the same object.
    where = {id(held[j]): j for j in range(len(held) - 1, same, -1)}
    at = next((i for i in range(probed, len(items)) if id(items[i]) in where), None)
    return None if at is None else (at, where[id(items[at])])


_PROBES = 2
"""Items `resumed_at` looks for by scanning before it indexes the held ones."""
_NEAR = 64
"""Held items `resumed_at` scans for them first (a window drops a few messages a call)."""


def equal_leading(a: Sequence[object], b: Sequence[object]) -> int:
    """How many leading items of `a` and `b` are equal; an item is equal to itself (as in the
    comparison of tuples), so the leading run of the very same objects is found at C speed first.

    >>> equal_leading([1, 2, 3], [1, 2, 4]), equal_leading([1], [1, 2])
    (2, 1)
    """
    most = min(len(a), len(b))
    if most <= _SHORT:
        return next(itertools.compress(itertools.count(), map(operator.ne, a, b)), most)
    same = same_leading(a, b)
    rest = map(operator.ne, itertools.islice(a, same, None), itertools.islice(b, same, None))
    return next(itertools.compress(itertools.count(same), rest), most)


_SHORT = 8
"""Sequences this short are compared item by item (cheaper than looking for identical ones)."""
