"""Prompt-cache accounting (docs/architecture.md, Results): cached, written and output tokens, and their cost.

A request's cached tokens are its tools' and those of the longest run of leading OpenAI-view
messages it shares with an earlier request of the run whose tools are identical: the previous
reasoning request, or, for a summary request, the larger of that and the previous summary
request. An earlier request with other tools gives nothing: a provider's cached prefix starts
with the tools (Anthropic caches tools, then system, then messages, and a change to the tool
definitions invalidates the whole cache; OpenAI caches only exact prefixes, tools included), so
a summary request offering only its schema tool reads nothing of the conversation's requests.
Its uncached input tokens are written to the cache and become readable by the next request of
its kind. Sources for the model and the default prices: Anthropic prompt caching (reads 0.1×,
5-minute writes 1.25× the input price), Manus' "KV-cache hit rate is the single most important
metric".

Invariants:
- `cached_tokens <= input_tokens` for every call: the cached prefix is part of the request and
  counters are monotone in the content they count.
- A request identical to the previous one of its kind is cached whole; a request that only
  appends to it has the previous request's messages cached.
- The state is a value: `account` returns a new one. It keeps, for the last request of each kind,
  its view messages and the cumulative size of each prefix, so finding the shared prefix compares
  messages (strings shared with the stored blocks compare by identity) and re-counts nothing.
- Input tokens are the counter's count of what the request sends: its OpenAI view (a reply's
  thinking only where the view carries it in a field) and its tools.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple

from ctxlab.core.messages.blocks import ZERO, Tally
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import sent_view_sizes
from ctxlab.core.messages.tokens import TokenCounter
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.views import to_openai

CallKind = Literal["reasoning", "summary"]
PER = 1_000_000
"""Prices are per million tokens."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Prices:
    """Prices per million tokens (relative units by default: input 1)."""

    input: float = 1.0
    cached_read: float = 0.1
    cache_write: float = 1.25
    output: float = 4.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestView:
    """One request as the cache sees it: its OpenAI-view messages, each one's size, the size of
    stored messages no provider sees, and its tools."""

    wire: tuple[Mapping[str, Any], ...]
    sizes: tuple[Tally, ...]
    unseen: Tally = ZERO
    tools: tuple[ToolSchema, ...] = ()


def request_view(
    messages: Sequence[Message], counter: TokenCounter, tools: tuple[ToolSchema, ...] = ()
) -> RequestView:
    """The cache's view of a request whose messages are `messages` (system prompt and summary
    included, in order): what the provider receives, each view message sized as sent
    (`sizes.sent_view_sizes`: thinking no field carries counts nothing)."""
    read = [sent_view_sizes(message, counter) for message in messages]
    return RequestView(
        wire=tuple(to_openai(messages)),
        sizes=tuple(size for one in read for size in one.sizes),
        unseen=sum([one.unseen for one in read], ZERO),
        tools=tools,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CachedRequest:
    """What the cache remembers of a request: its messages, sizes and cumulative prefix sizes
    (`prefix[k]` is the size of the first `k` messages), and its tools."""

    wire: tuple[Mapping[str, Any], ...]
    sizes: tuple[Tally, ...]
    prefix: tuple[Tally, ...]
    tools: tuple[ToolSchema, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallUsage:
    """Token usage and cost of one model call."""

    kind: CallKind
    input_tokens: int
    cached_tokens: int
    written_tokens: int
    output_tokens: int
    cost: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheTotals:
    """Sums over the calls of a run."""

    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    written_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    cost_without_cache: float = 0.0

    @property
    def hit_rate(self) -> float:
        """Cached input tokens over all input tokens (0 before any input)."""
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheState:
    """The last request of each kind, and the run's totals."""

    reasoning: CachedRequest | None = None
    summary: CachedRequest | None = None
    totals: CacheTotals = CacheTotals()


class CacheStep(NamedTuple):
    """The state after one call, and that call's usage."""

    state: CacheState
    usage: CallUsage


def shared_prefix(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> int:
    """How many leading messages `a` and `b` have in common.

    >>> shared_prefix([{"role": "user", "content": "a"}], [{"role": "user", "content": "a"}, {}])
    1
    """
    k = 0
    for x, y in zip(a, b, strict=False):
        if x is not y and x != y:
            break
        k += 1
    return k


def _prefix(request: RequestView, previous: CachedRequest | None, shared: int) -> tuple[Tally, ...]:
    """Cumulative sizes of `request`, reusing the previous request's for the shared messages
    when their sizes agree."""
    if previous is not None and shared and previous.sizes[:shared] == request.sizes[:shared]:
        head = previous.prefix[: shared + 1]
        return head + tuple(itertools.accumulate(request.sizes[shared:], initial=head[-1]))[1:]
    return tuple(itertools.accumulate(request.sizes, initial=ZERO))


def _cached(
    counter: TokenCounter, request: RequestView, prefix: tuple[Tally, ...], earlier: CachedRequest
) -> int:
    shared = shared_prefix(earlier.wire, request.wire)
    same_tools = earlier.tools == request.tools
    return prefix_tokens(
        counter, shared=shared, size=prefix[shared], tools=request.tools, same_tools=same_tools
    )


def prefix_tokens(
    counter: TokenCounter, *, shared: int, size: Tally, tools: tuple[ToolSchema, ...], same_tools: bool
) -> int:
    """Tokens a request can read from an earlier one with the same tools: its tools and its
    first `shared` messages (of size `size`); nothing from one with other tools, or when neither
    tools nor a message is shared."""
    if not same_tools or (not shared and not tools):
        return 0
    return counter.total(size, tools)


def account(
    state: CacheState,
    request: RequestView,
    *,
    kind: CallKind,
    output_tokens: int,
    counter: TokenCounter,
    prices: Prices = Prices(),
    caching: bool = True,
) -> CacheStep:
    """Account one model call: its cached, written and output tokens, its cost, the new state.

    With `caching=False` (a call the provider does not cache) every input token is billed at
    the input price, nothing is read or written, and the state keeps its last requests.
    """
    previous = state.reasoning if state.reasoning is not None else state.summary
    shared = shared_prefix(previous.wire, request.wire) if previous is not None else 0
    prefix = _prefix(request, previous, shared)
    input_tokens = counter.total(prefix[-1] + request.unseen, request.tools)
    earlier = [state.reasoning] if kind == "reasoning" else [state.reasoning, state.summary]
    cached = max((_cached(counter, request, prefix, e) for e in earlier if e is not None), default=0)
    usage = settle(
        kind=kind,
        input_tokens=input_tokens,
        cached_tokens=cached,
        output_tokens=output_tokens,
        prices=prices,
        caching=caching,
    )
    state = replace(state, totals=add_usage(state.totals, usage, prices))
    return CacheStep(state=_remember(state, request, prefix, kind) if caching else state, usage=usage)


def settle(
    *,
    kind: CallKind,
    input_tokens: int,
    cached_tokens: int,
    output_tokens: int,
    prices: Prices,
    caching: bool = True,
) -> CallUsage:
    """The usage and cost of one call whose shared prefix holds `cached_tokens` tokens.

    Without caching nothing is read or written and every input token is billed at the input price.

    >>> settle(kind="reasoning", input_tokens=100, cached_tokens=60, output_tokens=0, prices=Prices()).cost
    5.6e-05
    """
    cached = min(cached_tokens, input_tokens) if caching else 0
    written = input_tokens - cached if caching else 0
    cost = (
        cached * prices.cached_read
        + written * prices.cache_write
        + (0 if caching else input_tokens * prices.input)
        + output_tokens * prices.output
    ) / PER
    return CallUsage(
        kind=kind,
        input_tokens=input_tokens,
        cached_tokens=cached,
        written_tokens=written,
        output_tokens=output_tokens,
        cost=cost,
    )


def add_usage(totals: CacheTotals, usage: CallUsage, prices: Prices) -> CacheTotals:
    """`totals` with one more call."""
    return CacheTotals(
        calls=totals.calls + 1,
        input_tokens=totals.input_tokens + usage.input_tokens,
        cached_tokens=totals.cached_tokens + usage.cached_tokens,
        written_tokens=totals.written_tokens + usage.written_tokens,
        output_tokens=totals.output_tokens + usage.output_tokens,
        cost=totals.cost + usage.cost,
        cost_without_cache=totals.cost_without_cache
        + (usage.input_tokens * prices.input + usage.output_tokens * prices.output) / PER,
    )


def _remember(
    state: CacheState, request: RequestView, prefix: tuple[Tally, ...], kind: CallKind
) -> CacheState:
    remembered = CachedRequest(wire=request.wire, sizes=request.sizes, prefix=prefix, tools=request.tools)
    if kind == "reasoning":
        return replace(state, reasoning=remembered)
    return replace(state, summary=remembered)
