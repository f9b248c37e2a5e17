"""Cutoff choosers of LangChain (and deepagents) summarization and the OpenHands condenser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.cutoff import (
    DEEPAGENTS_SUMMARY,
    CondenserParams,
    ContextSize,
    SummaryCut,
    SummaryParams,
    langchain_cut,
    openhands_cut,
)
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.units import Sizer, view_units
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import to_openai
from tests.zoo_strategies import agent_histories, call, reply, result, user

SIZER = Sizer(counter=AgentScopeEstimator())
MESSAGES = ContextSize("messages", 1)


def chat(count: int) -> list[Message]:
    """`count` single-text messages, alternating user and assistant: one view message each."""
    return [user(f"u{k}") if k % 2 == 0 else reply(TextBlock(text=f"a{k}")) for k in range(count)]


def pieces_are_whole(msgs: list[Message], cut: SummaryCut) -> None:
    assert to_openai(cut.head) + to_openai(cut.summarize) + to_openai(cut.keep) == to_openai(msgs)
    for piece in (cut.head, cut.summarize, cut.keep):
        assert violations(to_openai(piece), ["openai", "anthropic"]) == []
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


# OpenHands LLMSummarizingCondenser ------------------------------------------------------------


def test_openhands_halves_the_view_above_120_events() -> None:
    assert openhands_cut(chat(120), sizer=SIZER) is None
    cut = openhands_cut(chat(121), sizer=SIZER)
    assert cut is not None and (cut.start, cut.end) == (4, 66)  # keep 4 + the summary + 55 = 60 events
    pieces_are_whole(chat(121), cut)


def test_openhands_counts_and_forgets_its_previous_summary() -> None:
    assert openhands_cut(chat(120), sizer=SIZER, summary_present=True) is not None
    cut = openhands_cut(chat(120), sizer=SIZER, summary_present=True)
    assert cut is not None and (cut.start, cut.end) == (4, 65)


def test_openhands_condensation_requests_halve_the_current_view() -> None:
    cut = openhands_cut(chat(12), sizer=SIZER, requested=True)
    assert cut is not None and (cut.start, cut.end) == (4, 11)  # target 6: head 4, summary, 1 event
    # OpenHands' slice semantics: with a tail length of 0 or less, view[keep_first:-k] forgets
    # nothing (or a slice up to |k|), so a request on a short view condenses nothing
    assert openhands_cut(chat(6), sizer=SIZER, requested=True) is None
    assert openhands_cut(chat(10), sizer=SIZER, requested=True) is None


def test_openhands_token_limit() -> None:
    params = CondenserParams(max_size=200, max_tokens=10)
    cut = openhands_cut(chat(130), sizer=SIZER, params=params)
    assert cut is not None and (cut.start, cut.end) == (4, 35)  # the tail still follows max_size
    assert (
        openhands_cut(chat(130), sizer=SIZER, params=CondenserParams(max_size=200, max_tokens=1000)) is None
    )


def test_openhands_token_trigger_on_a_short_view_forgets_nothing() -> None:
    # the OpenHands quirk: the tail length comes from max_size even when max_tokens fired, so a
    # view shorter than max_size // 2 gives an empty forgotten slice
    assert openhands_cut(chat(20), sizer=SIZER, params=CondenserParams(max_tokens=10)) is None


def test_openhands_settings_must_leave_room_for_a_tail() -> None:
    with pytest.raises(ValueError, match="keep_first must be below"):
        CondenserParams(max_size=10, keep_first=4)


def test_openhands_edges_move_around_call_batches() -> None:
    batch = reply(call("a", "s"), call("b", "s"), result("a", "1", "s"), result("b", "2", "s"))
    msgs = [user("u"), user("v"), user("w"), batch, *chat(10)]
    # view: 3 users, calls (3), result (4), result (5), 10 chat: 16 events; keep_first 4 ends in the batch
    cut = openhands_cut(msgs, sizer=SIZER, params=CondenserParams(max_size=14, keep_first=4))
    assert cut is not None and cut.start == 6  # the head takes the whole batch
    pieces_are_whole(msgs, cut)
    tail = [*chat(6), batch, *chat(4)]  # view: 6 chat, calls (6), results (7, 8), 4 chat
    cut = openhands_cut(tail, sizer=SIZER, params=CondenserParams(max_size=12, keep_first=0))
    assert cut is not None and (cut.start, cut.end) == (0, 6)  # the slice ends at 8: the tail takes the batch
    pieces_are_whole(tail, cut)


@given(agent_histories(max_turns=5), st.integers(1, 12), st.integers(0, 3), st.booleans())
def test_cuts_are_always_whole_protocol_units(
    msgs: list[Message], size: int, first: int, summary: bool
) -> None:
    keep = SummaryParams(trigger=(MESSAGES,), keep=ContextSize("messages", size))
    for cut in (
        langchain_cut(msgs, sizer=SIZER, params=keep),
        openhands_cut(
            msgs,
            sizer=SIZER,
            params=CondenserParams(max_size=2 * first + 4, keep_first=first),
            summary_present=summary,
        ),
    ):
        if cut is not None:
            pieces_are_whole(msgs, cut)
            assert 0 <= cut.start < cut.end <= len(view_units(msgs))
