"""Budget zones (nonoka) and prompt-only trimming, the last safety net."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.budget import (
    BudgetParams,
    PromptTrimParams,
    Zones,
    should_compact,
    trim_prompt,
    zone_of,
    zones,
)
from ctxlab.core.messages.blocks import Tally, TextBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.units import (
    view_units,
)
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import to_openai
from tests.zoo_strategies import agent_histories, call, reply, result, user

COUNTER = AgentScopeEstimator()


def test_nonoka_defaults_fire_at_6144_and_aim_at_4096() -> None:
    assert zones() == Zones(target=4096, trigger=6144, window=8192)
    assert not should_compact(6144) and should_compact(6145)


def test_a_buffer_wider_than_the_reserve_cannot_put_the_trigger_below_the_target() -> None:
    wide = BudgetParams(max_tokens=8192, reserve_output_tokens=1000, compaction_buffer_tokens=4000)
    assert zones(wide) == Zones(target=7192, trigger=7192, window=8192)


def test_a_reserve_that_eats_the_window_falls_back_to_the_window() -> None:
    assert zones(BudgetParams(max_tokens=100, reserve_output_tokens=100)).target == 100


def test_zones_of_a_request() -> None:
    assert [zone_of(n) for n in (0, 4096, 4097, 6144, 6145, 8192, 8193)] == [
        "target",
        "target",
        "buffer",
        "buffer",
        "compact",
        "compact",
        "overflow",
    ]


def context() -> list[Message]:
    return [
        text_message("system", "s"),
        user("one " * 100),
        reply(
            call("a", "Read", path="x"),
            call("b", "Read", path="y"),
            result("a", "r" * 800),
            result("b", "q" * 800),
        ),
        user("two"),
        reply(TextBlock(text="ok")),
    ]


def test_trimming_drops_whole_units_from_the_front_and_keeps_the_summary() -> None:
    msgs = context()
    summary = Tally(400, 0)  # the summary travels beside the context and is never trimmed
    trim = trim_prompt(msgs, limit=150, sizer=Sizer(counter=COUNTER, overhead=summary))
    assert trim.dropped == (1, 2, 3, 4)
    assert [u.kind for u in view_units(trim.messages)] == ["system", "user", "text"]
    assert trim.fits and trim.tokens == COUNTER.total(summary + Tally(6, 0), ())  # "s", "two", "ok"
    assert [u.kind for u in view_units(msgs)][1] == "user"  # the stored context is untouched


def test_trimming_never_reaches_into_the_last_messages() -> None:
    msgs = context()[:3]  # the last two view messages are the results of one batch
    trim = trim_prompt(msgs, limit=1, sizer=Sizer(counter=COUNTER))
    assert trim.dropped == (1,) and not trim.fits  # the batch's call stays with its results
    assert violations(to_openai(trim.messages), ["openai"]) == []
    none = trim_prompt(msgs, limit=1, sizer=Sizer(counter=COUNTER), params=PromptTrimParams(keep_last=0))
    assert none.dropped == (1, 2, 3, 4)


@given(agent_histories(), st.integers(0, 2000), st.integers(0, 4))
def test_trimming_never_orphans(msgs: list[Message], limit: int, keep: int) -> None:
    trim = trim_prompt(
        msgs, limit=limit, sizer=Sizer(counter=COUNTER), params=PromptTrimParams(keep_last=keep)
    )
    found = violations(to_openai(trim.messages), ["openai", "anthropic"])
    # keep=0 may trim every message (nonoka refuses it for that); one kept message keeps a turn
    assert [v for v in found if keep or v.kind != "empty_request"] == []
    n = len(view_units(msgs))
    assert all(i < n - keep for i in trim.dropped)
    assert trim.fits == (trim.tokens <= limit) and trim.tokens == COUNTER.count(trim.messages, ())
