"""Cutoff choosers of LangChain (and deepagents) summarization."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.cutoff import (
    DEEPAGENTS_SUMMARY,
    ContextSize,
    SummaryCut,
    SummaryParams,
    langchain_cut,
)
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.units import (
    view_units,
)
from ctxlab.core.wire.views import to_openai
from tests.oracles import broken_pairs
from tests.zoo_strategies import agent_histories, call, reply, result, user

SIZER = Sizer(counter=AgentScopeEstimator())
MESSAGES = ContextSize("messages", 1)


def chat(count: int) -> list[Message]:
    """`count` single-text messages, alternating user and assistant: one view message each."""
    return [user(f"u{k}") if k % 2 == 0 else reply(TextBlock(text=f"a{k}")) for k in range(count)]


def pieces_are_whole(msgs: list[Message], cut: SummaryCut) -> None:
    assert to_openai(cut.head) + to_openai(cut.summarize) + to_openai(cut.keep) == to_openai(msgs)
    for piece in (cut.head, cut.summarize, cut.keep):
        assert broken_pairs(to_openai(piece)) == []
    assert (
        len(view_units(cut.head)) == cut.start
        and len(view_units(cut.keep)) == len(view_units(msgs)) - cut.end
    )


# LangChain SummarizationMiddleware ------------------------------------------------------------


def test_langchain_never_summarizes_without_a_trigger() -> None:
    assert langchain_cut(chat(100), sizer=SIZER) is None


def test_langchain_keeps_the_last_20_messages() -> None:
    params = SummaryParams(trigger=(ContextSize("messages", 30),))
    assert langchain_cut(chat(29), sizer=SIZER, params=params) is None
    cut = langchain_cut(chat(30), sizer=SIZER, params=params)
    assert cut is not None and (cut.start, cut.end) == (0, 10)
    assert (
        langchain_cut(chat(20), sizer=SIZER, params=SummaryParams(trigger=(MESSAGES,))) is None
    )  # nothing to cut


def test_langchain_moves_a_cut_inside_a_batch_back_to_its_call() -> None:
    msgs = [
        user("go"),
        reply(
            call("a", "s"), call("b", "s"), result("a", "1", "s"), result("b", "2", "s"), TextBlock(text="ok")
        ),
    ]
    # view: user, calls, result a, result b, text; keeping 2 would start at result b
    cut = langchain_cut(
        msgs, sizer=SIZER, params=SummaryParams(trigger=(MESSAGES,), keep=ContextSize("messages", 2))
    )
    assert cut is not None and (cut.start, cut.end) == (0, 1)
    pieces_are_whole(msgs, cut)
    assert (
        langchain_cut(
            msgs[1:], sizer=SIZER, params=SummaryParams(trigger=(MESSAGES,), keep=ContextSize("messages", 2))
        )
        is None
    )


def test_langchain_keeps_a_token_budget() -> None:
    msgs = [
        user("x" * 400) if k % 2 == 0 else reply(TextBlock(text="y" * 400)) for k in range(10)
    ]  # 100 tokens each
    params = SummaryParams(trigger=(ContextSize("tokens", 1000),), keep=ContextSize("tokens", 250))
    cut = langchain_cut(msgs, sizer=SIZER, params=params)
    assert cut is not None and cut.end == 8  # the last two messages fit 250 tokens, three do not
    assert (
        langchain_cut(msgs, sizer=SIZER, params=SummaryParams(trigger=(ContextSize("tokens", 1001),))) is None
    )


def test_deepagents_fractions_need_the_window() -> None:
    msgs = [user("x" * 400) if k % 2 == 0 else reply(TextBlock(text="y" * 400)) for k in range(10)]
    with pytest.raises(ValueError, match="context size"):
        langchain_cut(msgs, sizer=SIZER, params=DEEPAGENTS_SUMMARY)
    assert (
        langchain_cut(msgs, sizer=SIZER, params=DEEPAGENTS_SUMMARY, context_size=1200) is None
    )  # 1000 < 1020
    cut = langchain_cut(msgs, sizer=SIZER, params=DEEPAGENTS_SUMMARY, context_size=1100)  # 1000 ≥ 935
    assert cut is not None and cut.end == 9  # keep 10% of 1100 = 110 tokens: one message


def test_langchain_keeps_the_last_message_when_even_it_is_over_the_budget() -> None:
    msgs = chat(5)
    params = SummaryParams(trigger=(MESSAGES,), keep=ContextSize("tokens", 0))
    cut = langchain_cut(msgs, sizer=SIZER, params=params)
    assert cut is not None and cut.end == 4
    assert langchain_cut(chat(1), sizer=SIZER, params=params) is None


@given(agent_histories(max_turns=5), st.integers(1, 12))
def test_cuts_are_always_whole_protocol_units(msgs: list[Message], size: int) -> None:
    keep = SummaryParams(trigger=(MESSAGES,), keep=ContextSize("messages", size))
    cut = langchain_cut(msgs, sizer=SIZER, params=keep)
    if cut is not None:
        pieces_are_whole(msgs, cut)
        assert 0 <= cut.start < cut.end <= len(view_units(msgs))
