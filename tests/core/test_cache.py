"""Prompt-cache accounting (docs/architecture.md, Results): shared prefixes, writes, summary
requests, cost."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.clearing import AnthropicClearParams, clear_tool_uses
from ctxlab.core.compaction.microcompact import microcompact
from ctxlab.core.messages.blocks import ZERO, TextBlock, ThinkingBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.sizes import (
    Sizer,
    sent_tokens,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.cache import (
    CacheState,
    CacheStep,
    Prices,
    RequestView,
    account,
    request_view,
    shared_prefix,
)
from tests.zoo_strategies import agent_histories, reply, user

COUNTER = AgentScopeEstimator()
TOOLS = (ToolSchema.of("search", "Search.", {"type": "object"}),)
SYSTEM = text_message("system", "s" * 400)  # 100 tokens


def step(
    state: CacheState,
    msgs: list[Message],
    kind: str = "reasoning",
    tools: tuple[ToolSchema, ...] = TOOLS,
    **kw: object,
) -> CacheStep:
    return account(
        state, request_view(msgs, COUNTER, tools), kind=kind, output_tokens=10, counter=COUNTER, **kw
    )  # type: ignore[arg-type]


def test_the_first_request_writes_everything() -> None:
    state, usage = step(CacheState(), [SYSTEM, user("q" * 400)])
    assert usage.input_tokens == COUNTER.count([SYSTEM, user("q" * 400)], TOOLS)
    assert (usage.cached_tokens, usage.written_tokens) == (0, usage.input_tokens)
    assert usage.cost == pytest.approx((usage.input_tokens * 1.25 + 10 * 4.0) / 1e6)
    assert state.totals.calls == 1 and state.reasoning is not None


def test_an_appending_request_reads_the_previous_one() -> None:
    first = [SYSTEM, user("q" * 400)]
    state, one = step(CacheState(), first)
    state, two = step(state, [*first, reply(TextBlock(text="a" * 400)), user("again")])
    assert two.cached_tokens == one.input_tokens  # the whole previous request, tools included
    assert two.written_tokens == two.input_tokens - one.input_tokens
    state, three = step(state, [*first, reply(TextBlock(text="a" * 400)), user("again")])
    assert three.cached_tokens == three.input_tokens  # identical: all of it
    assert state.totals.hit_rate == pytest.approx(
        (one.input_tokens + three.input_tokens) / state.totals.input_tokens
    )


def test_an_edit_in_the_middle_caches_only_the_prefix_before_it() -> None:
    msgs = [SYSTEM, user("a" * 400), reply(TextBlock(text="b" * 400)), user("c" * 400)]
    state, _ = step(CacheState(), msgs)
    edited = [SYSTEM, user("a" * 400), reply(TextBlock(text="[cleared]")), user("c" * 400)]
    _, usage = step(state, edited)
    assert usage.cached_tokens == COUNTER.count(edited[:2], TOOLS)


def test_other_tools_cache_nothing_and_same_tools_cache_at_least_the_tools() -> None:
    """A provider's cached prefix starts with the tools: a request offering other tools reads
    none of an earlier one's messages (a summary request offering its schema tool alone)."""
    msgs = [SYSTEM, user("a" * 400)]
    state, _ = step(CacheState(), msgs)
    _, other = step(state, msgs, tools=())
    assert other.cached_tokens == 0 and other.written_tokens == other.input_tokens
    _, fresh = step(state, [text_message("system", "new"), user("a" * 400)])
    assert fresh.cached_tokens == COUNTER.total(ZERO, TOOLS) > 0
    _, nothing = step(state, [text_message("system", "new")], tools=())
    assert nothing.cached_tokens == 0


def test_a_summary_request_reads_the_better_of_the_last_reasoning_and_summary_requests() -> None:
    history = [SYSTEM, user("a" * 400), reply(TextBlock(text="b" * 400))]
    instruction = user("summarize" * 10)
    state, _ = step(CacheState(), history)
    state, first = step(state, [*history, instruction], kind="summary")
    assert first.cached_tokens == COUNTER.count(history, TOOLS)
    assert state.reasoning is not None and len(state.reasoning.wire) == 3  # summaries do not move it
    state, _ = step(state, [SYSTEM, user("short")])  # a compacted reasoning request
    _, again = step(state, [*history, instruction], kind="summary")
    assert again.cached_tokens == again.input_tokens  # the previous summary request is identical
    _, reasoning = step(state, [*history, instruction])
    assert reasoning.cached_tokens == COUNTER.count([SYSTEM], TOOLS)  # reasoning reads only reasoning


def test_a_summary_request_with_its_own_prefix_pays_a_full_write() -> None:
    # opencode #25120: the compaction request shares no prefix with the conversation
    history = [SYSTEM, user("a" * 400)]
    state, _ = step(CacheState(), history)
    _, usage = step(state, [user("summarize: " + "a" * 400)], kind="summary", tools=())
    assert usage.cached_tokens == 0 and usage.written_tokens == usage.input_tokens


def test_an_uncached_call_pays_the_input_price_and_leaves_the_cache_alone() -> None:
    state, _ = step(CacheState(), [SYSTEM])
    after, usage = step(state, [SYSTEM], kind="summary", caching=False, prices=Prices(input=3.0))
    assert (usage.cached_tokens, usage.written_tokens) == (0, 0)
    assert usage.cost == pytest.approx((usage.input_tokens * 3.0 + 10 * 4.0) / 1e6)
    assert after.summary is None and after.reasoning is state.reasoning and after.totals.calls == 2


def test_costs_add_up_with_and_without_cache() -> None:
    prices = Prices(input=3.0, cached_read=0.3, cache_write=3.75, output=15.0)
    state = CacheState()
    msgs = [SYSTEM]
    for k in range(3):
        msgs = [*msgs, user(f"turn {k} " * 50)]
        state, _ = step(state, msgs, prices=prices)
    t = state.totals
    assert t.cost == pytest.approx(
        (t.cached_tokens * 0.3 + t.written_tokens * 3.75 + t.output_tokens * 15.0) / 1e6
    )
    assert t.cost_without_cache == pytest.approx((t.input_tokens * 3.0 + t.output_tokens * 15.0) / 1e6)
    assert t.written_tokens + t.cached_tokens == t.input_tokens


def test_shared_prefix_stops_at_the_first_difference() -> None:
    a = [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]
    assert shared_prefix(a, a) == 2 and shared_prefix(a, a[:1]) == 1 and shared_prefix(a, a[::-1]) == 0


def test_thinking_no_request_carries_changes_neither_the_size_nor_the_shared_prefix() -> None:
    msgs = [SYSTEM, reply(TextBlock(text="b" * 40))]
    state, _ = step(CacheState(), msgs)
    # the same view with unsent thinking added: the provider receives the very same request
    thinking = [SYSTEM, reply(ThinkingBlock(thinking="t" * 400), TextBlock(text="b" * 40))]
    view = request_view(thinking, COUNTER, TOOLS)
    _, usage = account(state, view, kind="reasoning", output_tokens=0, counter=COUNTER)
    assert usage.input_tokens == sent_tokens(COUNTER, thinking, TOOLS) == COUNTER.count(msgs, TOOLS)
    assert usage.input_tokens < COUNTER.count(thinking, TOOLS)
    assert usage.cached_tokens == usage.input_tokens  # the provider sees the same messages
    # thinking sent back in a field (`reasoning_content`) is received, and counted
    sent = [SYSTEM, reply(ThinkingBlock(thinking="t" * 400, wire_field="reasoning_content"))]
    assert request_view(sent, COUNTER, TOOLS).sizes[-1].nbytes == 400


@given(
    agent_histories(max_turns=5), st.lists(st.sampled_from(["grow", "clear", "micro", "summary"]), max_size=8)
)
def test_cached_tokens_never_exceed_input_and_input_is_the_counter(
    msgs: list[Message], moves: list[str]
) -> None:
    state = CacheState()
    context: list[Message] = [SYSTEM]
    rest = iter(msgs)
    for move in itertools.chain(["grow"], moves):
        if move == "grow":
            context += list(itertools.islice(rest, 2))
        elif move == "clear":
            context = list(
                clear_tool_uses(
                    context, sizer=Sizer(counter=COUNTER), params=AnthropicClearParams(trigger=0, keep=1)
                ).messages
            )
        elif move == "micro":
            context = list(microcompact(context).messages)
        kind = "summary" if move == "summary" else "reasoning"
        request = [*context, user("summarize")] if kind == "summary" else context
        view = request_view(request, COUNTER, TOOLS)
        previous = state
        state, usage = account(state, view, kind=kind, output_tokens=5, counter=COUNTER)  # type: ignore[arg-type]
        assert 0 <= usage.cached_tokens <= usage.input_tokens == sent_tokens(COUNTER, request, TOOLS)
        if kind == "reasoning" and previous.reasoning is not None and previous.reasoning.wire == view.wire:
            assert usage.cached_tokens == usage.input_tokens


def test_a_message_no_request_shows_sends_nothing() -> None:
    view = request_view([SYSTEM, reply(ThinkingBlock(thinking="x" * 40))], COUNTER)
    assert isinstance(view, RequestView) and len(view.wire) == 1 and view.unseen.nbytes == 0
