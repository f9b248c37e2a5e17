"""Prompt-cache accounting for every run: the engine's `CacheMeter`, `core.cache.account` kept
incrementally.

The figures are exactly `ctxlab.core.wire.cache.account`'s (docs/architecture.md, Results; a
property test replays every call of a run through it): a request's cached tokens are those of its
tools and the longest run of leading OpenAI-view messages it shares with the previous reasoning
request (for a summary request, the larger of that and the previous summary request), read only
from a request that offered identical tools; its other input tokens are written to the cache;
cost uses `Prices`.

Invariants:
- The last request of each kind is kept as running lists (its stored messages, the view messages
  each one yields, the cumulative size of every view prefix). The next request keeps the lists up
  to the first stored message that is not the same object and rebuilds only the rest; the shared
  view prefix is found from there on. A run that appends pays O(new messages) Python work per
  call: how many leading messages the request shares with the kept one is known from their
  lineage (`message.same_leading_known`: a long history grown from the last, or a request
  joined from it), and found by a C-speed identity scan only when no lineage vouches for it. A
  request that goes on with a later run of the kept messages (a window that dropped its front)
  keeps that run's lists where they are, counted from a base, and makes again only the messages
  before it (or copies the run after them, at C speed, when it is the shorter part), rather than
  rebuilding them message by message.
- Each stored message object is converted to its view messages and sized once while a kept
  request holds it (pieces are looked up by identity and holding them keeps the object alive),
  in the one read of its blocks the protocol meter shares (`ctxlab.core.wire.piece`).
- Every observed call is kept as a `CallUsage`, in call order; `totals` sums them.
- A meter belongs to one run: `observe` must see the run's calls in order.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ctxlab.core.messages.blocks import Tally, tally_of
from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import GROWN, Message, resumed_at, same_leading, same_leading_known
from ctxlab.core.messages.sizes import sent_tokens
from ctxlab.core.messages.tokens import TokenCounter
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.cache import CacheTotals, CallKind, CallUsage, Prices, add_usage, prefix_tokens, settle
from ctxlab.core.wire.piece import Piece, piece_of


class CacheUse(NamedTuple):
    """Prompt-cache figures of one request: its cached and written tokens, and its input tokens,
    what the provider receives (None from a meter that counts nothing)."""

    cached: int
    written: int
    input: int | None = None


@dataclass(slots=True)
class _Kept:
    """The last request of one kind, as lists the next request of that kind truncates and extends.

    `ends[i] - base` is the number of view messages of `messages[: i + 1]`; the size of the
    first `k` view messages is `Tally(nbytes[k] - nbytes[0], ndata[k] - ndata[0])`; the size of
    the messages among the first `i` that yield no view message is `Tally(hidden_nbytes[i] -
    hidden_nbytes[0], hidden_ndata[i] - hidden_ndata[0])`. Ends and sums are counted from a base
    rather than from zero so that a request going on with a run of the kept one (a window that
    moved on) keeps the run's lists as they are and makes only what comes before it again
    (`move`). The sums are plain integers, so a run of them moves (`extend_by`) at C speed.
    """

    messages: list[Message] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)  # of `messages`
    ends: list[int] = field(default_factory=list)
    wire: list[Mapping[str, Any]] = field(default_factory=list)
    nbytes: list[int] = field(default_factory=lambda: [0])
    ndata: list[int] = field(default_factory=lambda: [0])
    hidden_nbytes: list[int] = field(default_factory=lambda: [0])
    hidden_ndata: list[int] = field(default_factory=lambda: [0])
    tools: tuple[ToolSchema, ...] = ()
    source: object = None  # the request whose messages `messages` holds, when known
    base: int = 0  # what `ends` count from

    def prefix(self, views: int) -> Tally:
        """The size of the first `views` view messages."""
        return tally_of((self.nbytes[views] - self.nbytes[0], self.ndata[views] - self.ndata[0]))

    def total(self) -> Tally:
        """The size of the whole request, view messages and hidden ones."""
        nbytes = self.nbytes[-1] - self.nbytes[0] + self.hidden_nbytes[-1] - self.hidden_nbytes[0]
        return tally_of(
            (nbytes, self.ndata[-1] - self.ndata[0] + self.hidden_ndata[-1] - self.hidden_ndata[0])
        )

    def end(self, kept: int) -> int:
        """How many view messages the first `kept` stored messages yield."""
        return self.ends[kept - 1] - self.base if kept else 0

    def truncate(self, kept: int, views: int = 0) -> None:
        """Keep the first `kept` stored messages, and the first `views` view messages of the next
        one (for `extend(piece, views)` to end with a message that grew from it)."""
        wire = self.end(kept) + views
        del self.messages[kept:], self.pieces[kept:], self.ends[kept:], self.wire[wire:]
        del self.nbytes[wire + 1 :], self.ndata[wire + 1 :]
        del self.hidden_nbytes[kept + 1 :], self.hidden_ndata[kept + 1 :]

    def grown_views(self, at: int, piece: Piece) -> int:
        """How many leading view messages of stored message `at` the message of `piece` keeps,
        the very same objects of the same sizes (a reply that grew; 0 when it did not).

        A view's leading messages are shared objects only when read from the same leading blocks
        (`views.to_openai_one`), so their sizes are equal too, except the last one's: a message's
        last size takes in the hidden blocks after it, which the grown message may show later.
        """
        if at >= len(self.messages):
            return 0
        start = self.end(at)
        known = self.known_views(at, piece)
        views = known + same_leading(self.wire[start + known : self.end(at + 1)], piece.wire[known:])
        if views:
            last = piece.sizes[views - 1]
            k = start + views
            if (self.nbytes[k] - self.nbytes[k - 1], self.ndata[k] - self.ndata[k - 1]) != last:
                views -= 1
        return views

    def known_views(self, at: int, piece: Piece) -> int:
        """How many leading view messages of `piece` are known to be the very ones of stored
        message `at` (`GROWN`: a reply that grew, or an edited copy of one), without comparing."""
        if len(piece.message.blocks) < RESUMED_BLOCKS:  # only a long message's view is noted
            return 0
        return GROWN.shared(piece.views, self.pieces[at].views) or 0

    def part(self, start: int, stop: int) -> _Kept:
        """A copy of stored messages `start:stop`, as a request made of them alone would be kept
        (its sums from zero): the head another kind's request begins with (`start` 0), or the
        run a request that moved on to them takes, at their cost."""
        first, last = self.end(start), self.end(stop)
        nbytes, ndata = self.nbytes[first : last + 1], self.ndata[first : last + 1]
        hidden_nbytes = self.hidden_nbytes[start : stop + 1]
        hidden_ndata = self.hidden_ndata[start : stop + 1]
        return _Kept(
            messages=self.messages[start:stop],
            pieces=self.pieces[start:stop],
            ends=_less(self.ends[start:stop], first + self.base),
            wire=self.wire[first:last],
            nbytes=_less(nbytes, nbytes[0]),
            ndata=_less(ndata, ndata[0]),
            hidden_nbytes=_less(hidden_nbytes, hidden_nbytes[0]),
            hidden_ndata=_less(hidden_ndata, hidden_ndata[0]),
            tools=self.tools,
        )

    def extend_by(self, source: _Kept, start: int, stop: int) -> None:
        """Add stored messages `start:stop` of another kept request at the end (a stored
        message's view and sizes are its own, so they carry over; only the running sums move)."""
        first, last = source.end(start), source.end(stop)
        self.messages.extend(source.messages[start:stop])
        self.pieces.extend(source.pieces[start:stop])
        shift = len(self.wire) + self.base - first - source.base
        self.ends.extend(map(shift.__add__, source.ends[start:stop]))
        self.wire.extend(source.wire[first:last])
        for mine, theirs, a, b in (
            (self.nbytes, source.nbytes, first, last),
            (self.ndata, source.ndata, first, last),
            (self.hidden_nbytes, source.hidden_nbytes, start, stop),
            (self.hidden_ndata, source.hidden_ndata, start, stop),
        ):
            shift = mine[-1] - theirs[a]
            mine.extend(map(shift.__add__, theirs[a + 1 : b + 1]))

    def extend(self, piece: Piece, views: int = 0) -> None:
        """Add one stored message at the end (its first `views` view messages already are)."""
        self.messages.append(piece.message)
        self.pieces.append(piece)
        self.wire.extend(piece.wire[views:])
        nbytes, ndata = self.nbytes[-1], self.ndata[-1]
        for size in piece.sizes[views:]:
            nbytes += size.nbytes
            ndata += size.ndata
            self.nbytes.append(nbytes)
            self.ndata.append(ndata)
        self.ends.append(len(self.wire) + self.base)
        self.hidden_nbytes.append(self.hidden_nbytes[-1] + piece.unseen.nbytes)
        self.hidden_ndata.append(self.hidden_ndata[-1] + piece.unseen.ndata)

    def move(self, same: int, start: int, stop: int, head: list[Piece]) -> None:
        """Keep the first `same` stored messages, then the messages of `head`, then the kept run
        `start:stop` (`same <= start`: a request that goes on with a later run of this one, a
        window that moved on). The run's lists stay where they are, counted from where they
        were: only what comes before the run is made again, counted so that it ends where the
        run begins. A run shorter than what is kept before it is copied after that instead."""
        if stop - start < same:
            run = self.part(start, stop)
            self.truncate(same)
            for piece in head:
                self.extend(piece)
            self.extend_by(run, 0, len(run.messages))
            return
        self.truncate(stop)
        front = self.part(0, same)
        for piece in head:
            front.extend(piece)
        first = self.end(start)
        self.messages[:start], self.pieces[:start], self.wire[:first] = (
            front.messages,
            front.pieces,
            front.wire,
        )
        self.base += first - len(front.wire)
        self.ends[:start] = map(self.base.__add__, front.ends)
        for mine, theirs, at in (
            (self.nbytes, front.nbytes, first),
            (self.ndata, front.ndata, first),
            (self.hidden_nbytes, front.hidden_nbytes, start),
            (self.hidden_ndata, front.hidden_ndata, start),
        ):
            mine[: at + 1] = map((mine[at] - theirs[-1]).__add__, theirs)


def _less(values: list[int], base: int) -> list[int]:
    """`values` each less `base` (the list itself when `base` is 0), at C speed."""
    return list(map((-base).__add__, values)) if base else values


class _Read(NamedTuple):
    """A request's input tokens and how many of them it can read from the cache."""

    input_tokens: int
    cached: int


class _Shared(NamedTuple):
    """What a request shares with an earlier one: leading view messages, and whether the tools."""

    views: int
    same_tools: bool


_SPARE = 4
"""Pieces held beyond twice the kept requests' messages before dead ones are dropped. A reply
that grows at every call is a new message with a new piece at every call, each holding columns
as long as the reply: 64 spare, the first choice, let dozens of them pile up and be freed
together, a tenth of a 10,000-round replay that is never compressed; a few cost a look every
few calls at what a short context holds."""


@dataclass(slots=True)
class PromptCacheMeter:
    """Prompt-cache accounting of one run (the engine's default `Env.cache`).

    Attributes:
        counter: the run's token counter.
        prices: prices per million tokens for the cost.
        caching: False meters a provider without prompt caching (nothing cached or written).
        totals: sums over the observed calls (hit rate, cost, ...).
        usages: every observed call's usage, in call order.
    """

    counter: TokenCounter
    prices: Prices = field(default_factory=Prices)
    caching: bool = True
    totals: CacheTotals = field(default_factory=CacheTotals)
    usages: list[CallUsage] = field(default_factory=list)
    _kept: dict[str, _Kept] = field(default_factory=dict)
    _pieces: dict[int, Piece] = field(default_factory=dict)
    _limit: int = _SPARE  # pieces held before the next look for dead ones

    def observe(
        self,
        kind: CallKind,
        messages: tuple[Message, ...],
        tools: tuple[ToolSchema, ...],
        output_tokens: int = 0,
    ) -> CacheUse:
        """Account one call: its cached and written tokens (its usage is kept in `usages`)."""
        if self.caching:
            input_tokens, cached = self._compare(kind, messages, tools)
        else:
            input_tokens, cached = sent_tokens(self.counter, messages, tools), 0
        usage = settle(
            kind=kind,
            input_tokens=input_tokens,
            cached_tokens=cached,
            output_tokens=output_tokens,
            prices=self.prices,
            caching=self.caching,
        )
        self.totals = add_usage(self.totals, usage, self.prices)
        self.usages.append(usage)
        return CacheUse(usage.cached_tokens, usage.written_tokens, usage.input_tokens)

    def _compare(self, kind: CallKind, messages: tuple[Message, ...], tools: tuple[ToolSchema, ...]) -> _Read:
        """Input and cached tokens of a request, which becomes the kept request of its kind."""
        same = {name: same_leading_known(k.messages, messages, k.source) for name, k in self._kept.items()}
        names = ("reasoning",) if kind == "reasoning" else ("reasoning", "summary")
        earlier = [
            _Shared(self._shared(self._kept[name], messages, same[name]), self._kept[name].tools == tools)
            for name in names
            if name in self._kept
        ]
        own = self._kept.get(kind) if self._rebases_own(kind, same) else None
        moved = _moved(own, messages, same[kind]) if own is not None else None
        if own is not None and moved is not None:  # a new head, then the run the window moved to
            kept = own
            head = [self._piece(message) for message in messages[same[kind] : moved.resumed]]
            kept.move(same[kind], moved.start, moved.stop, head)
            rest = messages[moved.resumed + moved.stop - moved.start :]
        else:
            kept, views = self._rebase(kind, same, messages)
            rest = messages[len(kept.messages) :]
            if views:  # the next message grew from the kept one
                kept.extend(self._piece(rest[0]), views)
                rest = rest[1:]
        for message in rest:
            kept.extend(self._piece(message))
        kept.tools, kept.source = tools, messages
        self._forget()
        input_tokens = self.counter.total(kept.total(), tools)
        cached = max(
            (
                prefix_tokens(
                    self.counter,
                    shared=e.views,
                    size=kept.prefix(e.views),
                    tools=tools,
                    same_tools=e.same_tools,
                )
                for e in earlier
            ),
            default=0,
        )
        return _Read(input_tokens, cached)

    def _rebase(
        self, kind: CallKind, same: dict[str, int], messages: tuple[Message, ...]
    ) -> tuple[_Kept, int]:
        """The kept request of `kind`, cut to the longest run of leading messages a kept request
        shares with the new one (copied from the other kind's when that one shares more: a summary
        request starts with the span the last reasoning request held); and how many view messages
        of the next kept message it keeps too, when the request's next message grew from it."""
        if self._rebases_own(kind, same):
            own, at = self._kept[kind], same[kind]
            views = own.grown_views(at, self._piece(messages[at])) if at < len(messages) else 0
            own.truncate(at, views)
            return own, views
        source = max(same, key=lambda name: same[name], default=None)
        own = self._kept[source].part(0, same[source]) if source is not None else _Kept()
        self._kept[kind] = own
        return own, 0

    def _rebases_own(self, kind: CallKind, same: dict[str, int]) -> bool:
        """Whether the kept request of `kind` itself shares the most with the new one."""
        return kind in self._kept and all(same[kind] >= shared for shared in same.values())

    def _shared(self, earlier: _Kept, messages: tuple[Message, ...], same: int) -> int:
        """How many leading view messages the request of `messages` shares with `earlier`, whose
        first `same` stored messages are the request's."""
        at = earlier.end(same)
        # the first differing message may be a reply that grew from the kept one (or an edited
        # copy of one): its view's leading messages known to be the very same are not compared;
        # the rest is, the very same objects first, at C speed
        paired = same < min(len(messages), len(earlier.messages))  # a kept message at its place
        known = earlier.known_views(same, self._piece(messages[same])) if paired else 0
        k = same
        while k < len(messages):
            wires = self._piece(messages[k]).wire
            shared = known + same_leading(earlier.wire[at + known : at + len(wires)], wires[known:])
            known = 0
            at += shared
            for wire in wires[shared:]:
                if at == len(earlier.wire):
                    return at
                old = earlier.wire[at]
                if wire is not old and wire != old:
                    return at
                at += 1
            k, at = _past_same(earlier, messages, k + 1, at)
        return at

    def _piece(self, message: Message) -> Piece:
        piece = self._pieces.get(id(message))
        if piece is not None and piece.message is message:
            return piece
        piece = self._pieces[id(message)] = piece_of(message, self.counter)
        return piece

    def _forget(self) -> None:
        """Drop pieces of messages no kept request holds, once they outnumber the kept ones
        (by `_SPARE` beyond twice as many: a look costs what the kept requests hold)."""
        if len(self._pieces) <= self._limit:
            return
        live = sum(len(kept.messages) for kept in self._kept.values())
        if len(self._pieces) > 2 * live + _SPARE:
            ids = {id(m) for kept in self._kept.values() for m in kept.messages}
            self._pieces = {key: piece for key, piece in self._pieces.items() if key in ids}
        self._limit = 2 * max(live, len(self._pieces)) + _SPARE


def _past_same(earlier: _Kept, messages: tuple[Message, ...], k: int, at: int) -> tuple[int, int]:
    """Past the run of `messages` from `k` that are the very kept messages starting at view
    message `at` (a request whose first new message is an equal copy, as a window cutting inside
    a message makes at every call, goes on with the kept messages themselves): the next message
    to compare and its view message. A message is its piece, so the same message's views are
    the same; the run is found at C speed instead of a message at a time."""
    m = bisect.bisect_right(earlier.ends, at + earlier.base)  # the kept message holding view message `at`
    if m == len(earlier.messages) or k == len(messages) or messages[k] is not earlier.messages[m]:
        return k, at
    if earlier.end(m) != at:  # `at` is inside it, not where it starts
        return k, at
    run = same_leading(earlier.messages[m:], messages[k:])
    return k + run, earlier.end(m + run)


class _Moved(NamedTuple):
    """A request that goes on, at `resumed`, with the kept messages `start:stop`."""

    resumed: int
    start: int
    stop: int


def _moved(kept: _Kept, messages: tuple[Message, ...], same: int) -> _Moved | None:
    """Where the request, past its first `same` kept messages, goes on with a later run of the
    kept ones (a window that moved); None when it does not."""
    held = kept.messages
    if same + 1 >= len(held) or same >= len(messages):
        return None  # no kept message after the first that differs
    found = resumed_at(held, messages, same)
    if found is None:
        return None
    resumed, start = found
    return _Moved(resumed, start, start + same_leading(held[start:], messages[resumed:]))
