"""Prompt-cache accounting for every run: the engine's `CacheMeter` over `core.cache.account`.

The figures are exactly `ctxlab.core.cache.account`'s (DESIGN.md §8): a request's cached tokens
are those of the longest run of leading OpenAI-view messages (and identical tools) it shares
with the previous reasoning request (for a summary request, the larger of that and the previous
summary request); its other input tokens are written to the cache; cost uses `Prices`.

Invariants:
- Each stored message object is converted to its view messages and sized once: pieces are kept
  by identity while a remembered request holds the message, and dropped after. Observing a
  request converts only the messages it did not share with the remembered ones, so a run that
  appends pays O(new messages) conversions per call (plus pointer work over the request).
- Every observed call is kept as a `CallUsage`, in call order; `totals` sums them.
- A meter belongs to one run: `observe` must see the run's calls in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ctxlab.core.blocks import ZERO, Tally
from ctxlab.core.cache import (
    CacheState,
    CacheTotals,
    CallKind,
    CallUsage,
    Prices,
    RequestView,
    account,
)
from ctxlab.core.messages import Message
from ctxlab.core.tokens import TokenCounter
from ctxlab.core.tools import ToolSchema
from ctxlab.core.units import unit_tallies, view_units
from ctxlab.core.wire import to_openai_one


class CacheUse(NamedTuple):
    """Prompt-cache figures of one request."""

    cached: int
    written: int


@dataclass(frozen=True, slots=True)
class _Piece:
    """One stored message as the cache sees it: its view messages, their sizes, and its size
    when it yields no view message at all."""

    message: Message
    wire: tuple[dict[str, Any], ...]
    sizes: tuple[Tally, ...]
    unseen: Tally


@dataclass(slots=True)
class PromptCacheMeter:
    """Prompt-cache accounting of one run (the engine's default `Env.cache`).

    Attributes:
        counter: the run's token counter.
        prices: prices per million tokens for the cost.
        caching: False meters a provider without prompt caching (nothing cached or written).
        state: the accounting state after the last observed call.
        usages: every observed call's usage, in call order.
    """

    counter: TokenCounter
    prices: Prices = field(default_factory=Prices)
    caching: bool = True
    state: CacheState = field(default_factory=CacheState)
    usages: list[CallUsage] = field(default_factory=list)
    _pieces: dict[int, _Piece] = field(default_factory=dict)
    _live: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def observe(
        self,
        kind: CallKind,
        messages: tuple[Message, ...],
        tools: tuple[ToolSchema, ...],
        output_tokens: int = 0,
    ) -> CacheUse:
        """Account one call: its cached and written tokens (its usage is kept in `usages`)."""
        pieces = [self._piece(m) for m in messages]
        view = RequestView(
            wire=tuple(w for p in pieces for w in p.wire),
            sizes=tuple(s for p in pieces for s in p.sizes),
            unseen=sum((p.unseen for p in pieces), ZERO),
            tools=tools,
        )
        step = account(
            self.state,
            view,
            kind=kind,
            output_tokens=output_tokens,
            counter=self.counter,
            prices=self.prices,
            caching=self.caching,
        )
        self.state = step.state
        self.usages.append(step.usage)
        self._forget(kind, messages)
        return CacheUse(step.usage.cached_tokens, step.usage.written_tokens)

    @property
    def totals(self) -> CacheTotals:
        """Sums over the observed calls (hit rate, cost, ...)."""
        return self.state.totals

    def _piece(self, message: Message) -> _Piece:
        piece = self._pieces.get(id(message))
        if piece is not None and piece.message is message:
            return piece
        units = view_units((message,))
        piece = _Piece(
            message=message,
            wire=tuple(to_openai_one(message)),
            sizes=unit_tallies((message,), units, self.counter),
            unseen=ZERO if units else self.counter.measure_message(message),
        )
        self._pieces[id(message)] = piece
        return piece

    def _forget(self, kind: str, messages: Sequence[Message]) -> None:
        """Keep pieces only for messages of the last request of each kind."""
        self._live[kind] = tuple(id(m) for m in messages)
        live = {i for ids in self._live.values() for i in ids}
        for key in [k for k in self._pieces if k not in live]:
            del self._pieces[key]
