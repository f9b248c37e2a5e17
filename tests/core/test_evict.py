"""Protocol-unit eviction and the evidence ledger (nonoka's deterministic compactor)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.evict import (
    EvictParams,
    Ledger,
    LedgerCall,
    LedgerNote,
    ResultFacts,
    capped,
    evict,
    item_json,
    ledger_arguments,
    preview,
    render_ledger,
)
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, utf8_len
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.units import (
    protocol_units,
    view_units,
)
from ctxlab.core.settings import SettingError
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import to_openai
from tests.zoo_strategies import agent_histories, call, reply, result, user

SIZER = Sizer(counter=AgentScopeEstimator())


def items(ledger: Ledger) -> list[dict[str, object]]:
    return json.loads(ledger.text().split("\n", 1)[1])  # type: ignore[no-any-return]


def history() -> list[Message]:
    return [
        text_message("system", "rules"),
        user("first task", id="u0"),
        reply(
            TextBlock(text="reading"),
            call("a", "Read", file_path="a.py"),
            result("a", "A" * 2000),
            TextBlock(text="done a"),
            id="r0",
        ),
        user("second task", id="u1"),
        reply(call("b", "grep", pattern="x"), result("b", "B" * 400, "grep"), id="r1"),
    ]


def test_a_request_under_the_target_is_left_alone() -> None:
    ledger = Ledger(items=(LedgerNote(role="user", content="old"),))
    out = evict(history(), target=10_000, sizer=SIZER, ledger=ledger)
    assert out.evicted == () and out.ledger is ledger and not out.exceeded
    assert (
        out.tokens_before == out.tokens_after == SIZER.count(history()) + SIZER.count([render_ledger(ledger)])
    )  # type: ignore[list-item]


def test_oldest_units_go_first_and_the_latest_user_message_stays() -> None:
    msgs = history()
    out = evict(msgs, target=150, sizer=SIZER)
    kinds = [u.kind for u in view_units(msgs)]
    assert kinds == ["system", "user", "calls", "result", "text", "user", "calls", "result"]
    assert out.evicted == (1, 2, 3)  # the first user message and the read batch were enough
    assert [m.id for m in out.messages] == ["", "r0", "u1", "r1"]
    assert out.messages[1].blocks == (TextBlock(text="done a"),)
    assert evict(msgs, target=100, sizer=SIZER).evicted == (1, 2, 3, 4, 6, 7)  # never 5, the latest user
    assert not out.exceeded and out.tokens_after <= 150


def test_ledger_items_follow_nonoka() -> None:
    out = evict(
        history(), target=400, sizer=SIZER, facts={"a": ResultFacts(artifact_ref="ws://a", exit_code=0)}
    )
    assert items(out.ledger) == [
        {"role": "user", "content": "first task"},
        {
            "tool": "Read",
            "arguments": {"file_path": "a.py"},
            "tool_call_id": "a",
            "artifact_ref": "ws://a",
            "exit_code": 0,
            "result": "A" * 360 + "\n[... middle omitted ...]\n" + "A" * 360,
        },
    ]
    # the evicted assistant texts "reading" and "done a" leave no item: nonoka records only
    # the role and content of user entries (its assistant branch only collects calls)
    assert "done a" not in out.ledger.text()
    assert out.ledger.text().startswith("[Evidence ledger: tool calls evicted from the context]\n[{")


def test_previews_keep_short_results_whole() -> None:
    assert preview("x" * 800) == "x" * 800
    long = "h" * 400 + "t" * 401
    assert preview(long) == "h" * 360 + "\n[... middle omitted ...]\n" + "t" * 360


def test_arguments_that_are_not_an_object() -> None:
    assert ledger_arguments('{"a": 1, "b": [1, 2]}') == '{"a":1,"b":[1,2]}'
    assert ledger_arguments("x" * 600) == json.dumps({"raw": "x" * 500}, separators=(",", ":"))
    assert ledger_arguments('"text"') == "{}"


def test_a_result_evicted_without_its_call_has_no_tool_or_arguments() -> None:
    item = LedgerCall(call_id="z", result="r")
    assert item_json(item) == '{"tool_call_id":"z","artifact_ref":null,"exit_code":null,"result":"r"}'


def test_incomplete_batches_and_protected_messages_are_never_evicted() -> None:
    pending = reply(call("p", "Read", path="x"), id="r9")  # its result has not arrived yet
    msgs = [user("keep me", id="k"), pending, *history()[1:]]
    out = evict(msgs, target=1, sizer=SIZER, protected=frozenset({"k"}))
    kept = [u.kind for u in view_units(out.messages)]
    assert kept == ["user", "calls", "user"]  # protected, pending, latest user
    assert out.exceeded
    first = evict(history(), target=1, sizer=SIZER, params=EvictParams(protect_first_user=True))
    assert [u.kind for u in view_units(first.messages)] == ["system", "user", "user"]


def test_the_ledger_merges_with_the_previous_one() -> None:
    previous = Ledger(items=(LedgerNote(role="user", content="older"),))
    out = evict(history(), target=400, sizer=SIZER, ledger=previous)
    assert items(out.ledger)[0] == {"role": "user", "content": "older"}
    assert len(items(out.ledger)) == 3


def test_the_ledger_is_capped_by_dropping_its_oldest_items() -> None:
    many = [LedgerNote(role="user", content=f"{k:04d}" + "y" * 200) for k in range(100)]
    kept = capped(many)
    text = Ledger(items=kept).text()
    assert utf8_len(text) <= 12 * 1024
    assert kept == tuple(many[-len(kept) :])
    assert utf8_len(Ledger(items=(many[-len(kept) - 1], *kept)).text()) > 12 * 1024  # one more would not fit
    assert capped(many, EvictParams(max_bytes=10)) == ()


def test_a_ledger_that_alone_breaks_the_budget_is_dropped() -> None:
    msgs = history()
    fits = evict(msgs, target=400, sizer=SIZER)
    assert fits.ledger.items
    tight = evict(msgs, target=fits.tokens_after - 1, sizer=SIZER)
    assert tight.ledger == Ledger() and not tight.exceeded
    assert tight.tokens_after == SIZER.count(tight.messages)


@given(agent_histories(), st.integers(50, 3000), st.booleans())
def test_eviction_never_orphans_and_keeps_its_promises(msgs: list[Message], target: int, first: bool) -> None:
    params = EvictParams(protect_first_user=first, max_bytes=2048)
    out = evict(msgs, target=target, sizer=SIZER, params=params)
    assert violations(to_openai(out.messages), ["openai", "anthropic"]) == []
    assert utf8_len(out.ledger.text(params)) <= 2048
    ledger = render_ledger(out.ledger, params)
    assert out.tokens_after == SIZER.count([*out.messages, *([ledger] if ledger else [])])
    assert out.exceeded == (out.tokens_after > target)
    units = view_units(msgs)
    evicted = set(out.evicted)
    for group in protocol_units(units):
        assert set(group.units) <= evicted or not set(group.units) & evicted  # whole units only
    users = [u.index for u in units if u.kind == "user"]
    assert users[-1] not in evicted and (not first or users[0] not in evicted)
    calls = [b for m in msgs for b in m.blocks if isinstance(b, ToolCallBlock)]
    assert {i["tool_call_id"] for i in items(out.ledger) if "tool_call_id" in i} <= {c.id for c in calls}


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (
            {"preview_chars": -1},
            "preview_chars=-1: a count of characters is not negative; use more than twice",
        ),
        ({"preview_chars": 0}, "preview_side=360: a preview keeps 720 characters"),
        ({"max_bytes": -1}, "use 0 or more (0 keeps no ledger)"),
    ],
)
def test_a_refused_setting_says_a_value_the_rules_take(settings: dict[str, int], said: str) -> None:
    """A negative preview length was told to use 0 or more, which the preview's ends refuse."""
    with pytest.raises(SettingError, match=re.escape(said)):
        EvictParams(**settings)  # type: ignore[arg-type]
