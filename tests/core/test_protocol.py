"""The protocol checker finds each kind of violation, and reads the vendored real transcripts right."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.core.wire.protocol import RULES, Fact, Rule, anthropic_violations, violations
from ctxlab.core.wire.views import anthropic_of_openai as to_anthropic_view

KIMI = "deerflow_kimi-k2.5_caren-landing-page_b83fbb2a.jsonl"
TAU2 = "tau2_gpt-4.1_retail_task55.jsonl"


def asst(*ids: str) -> dict[str, Any]:
    calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def tool(i: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": i, "content": "ok"}


USER = {"role": "user", "content": "hi"}
TEXT = {"role": "assistant", "content": "thinking aloud"}
SYSTEM = {"role": "system", "content": "You are terse."}


def found(msgs: list[dict[str, Any]], rule: str) -> list[tuple[int, str, str]]:
    return [(v.index, v.call_id, v.kind) for v in violations(msgs, [rule])]  # type: ignore[list-item]


def test_orphan_result_is_found_under_every_rule() -> None:
    msgs = [USER, tool("x"), TEXT]
    assert found(msgs, "openai") == [(1, "x", "orphan_result")]
    assert found(msgs, "anthropic") == [(1, "x", "orphan_result")]
    assert found(msgs, "bedrock") == [(1, "x", "excess_results")]


def test_dangling_call_at_request_end_and_before_next_message() -> None:
    assert found([USER, asst("a")], "openai") == [(1, "a", "dangling_call")]
    assert found([USER, asst("a"), USER], "openai") == [(2, "a", "dangling_call")]
    assert found([USER, asst("a")], "anthropic") == [(1, "a", "dangling_call")]
    assert found([USER, asst("a"), USER], "anthropic") == [(2, "a", "dangling_call")]
    assert found([USER, asst("a")], "bedrock") == []  # bedrock only bounds results by uses


def undeclared(msgs: list[dict[str, Any]], rule: str) -> list[tuple[int, str, str]]:
    return [
        (v.index, v.call_id, v.kind)
        for v in violations(msgs, [rule], declares_tools=False)  # type: ignore[list-item]
    ]


def test_tool_blocks_in_a_request_that_declares_no_tools_break_the_anthropic_and_bedrock_rules() -> None:
    msgs = [SYSTEM, USER, TEXT, asst("a", "b"), tool("a"), tool("b"), USER]
    assert undeclared(msgs, "anthropic") == undeclared(msgs, "bedrock") == [(3, "a", "undeclared_tools")]
    assert undeclared(msgs, "openai") == []  # the OpenAI API accepts it
    (seen,) = violations(msgs, ["anthropic"], declares_tools=False)
    assert seen.detail == "the request holds a tool call ('a') but declares no tools"
    for rule in RULES:  # declared tools, or no tool block: nothing to say
        assert violations(msgs, [rule]) == []
        assert undeclared([SYSTEM, USER, TEXT, USER], rule) == []


def test_an_undeclared_tool_result_is_named_in_message_order_with_the_rest() -> None:
    msgs = [USER, tool("x"), TEXT, asst("a")]
    assert undeclared(msgs, "anthropic") == [
        (1, "x", "undeclared_tools"),
        (1, "x", "orphan_result"),
        (3, "a", "dangling_call"),
    ]
    assert undeclared(msgs, "bedrock") == [(1, "x", "undeclared_tools"), (1, "x", "excess_results")]
    repeated = [USER, asst("a", "a"), tool("a"), USER]  # a repeated id comes first at its index
    kinds = [kind for _, _, kind in undeclared(repeated, "anthropic")]
    assert kinds[:2] == ["duplicate_id", "undeclared_tools"]
    (first, *_) = violations(msgs, ["bedrock"], declares_tools=False)
    assert first.detail == "the request holds a tool result ('x') but declares no tools"


@pytest.mark.parametrize("rule", ["openai", "anthropic"])
def test_a_dangling_call_says_by_when_it_was_due(rule: str) -> None:
    (at_end,) = violations([USER, asst("a")], [rule])  # type: ignore[list-item]
    assert at_end.detail == "call 'a' is not answered before the request ends"
    (cut_off,) = violations([USER, asst("a"), USER], [rule])  # type: ignore[list-item]
    due = "before the next non-tool message" if rule == "openai" else "in the next user turn"
    assert cut_off.detail == f"call 'a' is not answered {due}"
    assert at_end.rule == cut_off.rule == rule


def test_result_after_an_intervening_message() -> None:
    msgs = [USER, asst("a"), USER, tool("a")]
    assert found(msgs, "openai") == [(2, "a", "dangling_call"), (3, "a", "orphan_result")]
    # Anthropic merges the user text and the result into one user turn: the result is answered
    # in the next turn, so it is accepted.
    assert found(msgs, "anthropic") == []


def test_user_text_between_results_is_an_openai_violation_only() -> None:
    msgs = [USER, asst("a", "b"), tool("a"), USER, tool("b")]
    assert found(msgs, "openai") == [(3, "b", "dangling_call"), (4, "b", "orphan_result")]
    assert found(msgs, "anthropic") == []


def test_duplicate_ids_and_results() -> None:
    msgs = [USER, asst("a"), tool("a"), asst("a"), tool("a")]
    assert (3, "a", "duplicate_id") in found(msgs, "openai")
    assert (3, "a", "duplicate_id") in found(msgs, "anthropic")
    assert (3, "a", "duplicate_id") in found(msgs, "bedrock")
    assert found([USER, asst("a"), tool("a"), tool("a")], "openai") == [(3, "a", "duplicate_result")]
    assert found([USER, asst("a"), tool("a"), tool("a")], "anthropic") == [(3, "a", "duplicate_result")]
    assert found([USER, asst("a"), tool("a"), tool("a")], "bedrock") == [(3, "a", "excess_results")]


def test_a_conversation_starting_with_the_assistant_breaks_the_bedrock_rule_alone() -> None:
    # A window that begins at an assistant tool call (strands' tool-pair trim point): the
    # first-party APIs accept it, Bedrock's Converse API refuses it.
    msgs = [{"role": "user", "content": ""}, asst("a"), tool("a"), TEXT, USER]
    assert found(msgs, "bedrock") == [(1, "", "assistant_first")]  # a turn's fault, not a call's
    (first,) = violations(msgs, ["bedrock"])
    assert first.detail == "the conversation starts with an assistant turn, not a user message"
    assert found(msgs, "openai") == found(msgs, "anthropic") == []
    system = {"role": "system", "content": "rules"}
    assert found([system, TEXT, USER], "bedrock") == [(1, "", "assistant_first")]
    assert found([system, USER, TEXT, USER], "bedrock") == []


def test_a_message_of_empty_text_parts_has_no_turn_like_an_empty_string() -> None:
    # The Anthropic view leaves out a message whose content shows nothing, however it is spelt.
    for empty in ("", [], [{"type": "text", "text": ""}, {"type": "text", "text": ""}]):
        assert found([{"role": "user", "content": empty}, TEXT, USER], "bedrock") == [
            (1, "", "assistant_first")
        ]
    shown = [{"type": "text", "text": ""}, {"type": "image_url", "image_url": {"url": "https://x/p.png"}}]
    assert found([{"role": "user", "content": shown}, TEXT, USER], "bedrock") == []


@pytest.mark.parametrize("rule", RULES)
def test_every_violation_names_the_rule_that_found_it(rule: str) -> None:
    # A repeated id, a call left unanswered across a user text, a result of no call.
    msgs = [USER, asst("a"), tool("a"), asst("a", "b"), USER, tool("b"), tool("x")]
    found = violations(msgs, [rule])  # type: ignore[list-item]
    assert {v.kind for v in found} >= {"duplicate_id"} and {v.rule for v in found} == {rule}
    if rule != "bedrock":
        assert "dangling_call" in {v.kind for v in found}


def test_a_result_answered_before_a_text_comes_again_after_it_as_an_orphan() -> None:
    # The batch's answered calls are forgotten at the next non-tool message, so a repeat is no
    # second result of the batch but a result arriving after another message.
    (v,) = violations([USER, asst("a"), tool("a"), TEXT, tool("a")], ["openai"])
    assert (v.index, v.kind) == (4, "orphan_result") and "intervening" in v.detail


def test_violation_renders_as_rule_index_id() -> None:
    (v,) = violations([USER, tool("x")], ["openai"])
    assert str(v) == "openai:1:x"
    assert "no call" in v.detail


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_shared_transcripts_match_their_manifest(traces_dir: Path) -> None:
    files = sorted(traces_dir.glob("*.jsonl"))
    assert len(files) == 6
    for path in files:
        msgs = read(path)
        openai = [(v.index, v.call_id) for v in violations(msgs, ["openai"])]
        if path.name == KIMI:
            assert openai == [(21, "write_todos:14"), (22, "write_todos:14")]
            # Messages 20 and 21 are consecutive assistant turns, which Anthropic merges, so
            # under its rules (and Bedrock's) the transcript is valid.
            assert violations(msgs, ["anthropic", "bedrock"]) == []
        elif path.name == TAU2:
            # The agent greets first, so Bedrock would refuse the conversation from its first call.
            assert [(v.rule, v.index, v.kind) for v in violations(msgs, RULES)] == [
                ("bedrock", 1, "assistant_first")
            ]
        else:
            assert violations(msgs, RULES) == [], path.name


@pytest.mark.parametrize("rule", RULES)
def test_a_request_of_no_message_is_refused_under_every_rule(rule: Rule) -> None:
    assert [(v.index, v.call_id, v.kind) for v in violations([], [rule])] == [(0, "", "empty_request")]


def test_a_system_prompt_alone_or_with_blank_texts_is_refused_by_anthropic_and_bedrock_only() -> None:
    blanks = [{"role": "user", "content": " \n\t"}, {"role": "assistant", "content": ""}]
    for request in ([SYSTEM], [SYSTEM, *blanks]):
        assert [(v.rule, v.kind) for v in violations(request, RULES)] == [
            ("anthropic", "empty_request"),
            ("bedrock", "empty_request"),
        ]
        assert to_anthropic_view(request)[1] == []
        assert [v.kind for v in anthropic_violations([])] == ["empty_request"]


def test_a_blank_text_is_no_anthropic_turn_so_the_turns_around_it_merge() -> None:
    # user, assistant "\n\n" (what a model may answer), user: one user turn for Anthropic.
    request = [USER, {"role": "assistant", "content": "\n\n"}, {"role": "user", "content": "again"}]
    assert [t["role"] for t in to_anthropic_view(request)[1]] == ["user"]
    assert violations(request, RULES) == []


# --- the incremental meter equals a full check, request after request --------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ctxlab.core.messages.message import Message  # noqa: E402
from ctxlab.core.wire.meter import ProtocolMeter  # noqa: E402
from ctxlab.core.wire.views import to_openai  # noqa: E402
from tests.strategies import messages as any_messages  # noqa: E402
from tests.strategies import paired_histories  # noqa: E402


@given(
    paired_histories(),
    st.lists(
        st.tuples(
            st.sampled_from(["append", "drop", "slide", "cut", "swap", "grow", "clear", "same"]), any_messages
        ),
        max_size=8,
    ),
)
def test_meter_equals_a_full_check_after_any_edit(
    history: list[Message], edits: list[tuple[str, Message]]
) -> None:
    meter = ProtocolMeter(RULES)
    request = list(history)
    for op, message in edits:
        if op == "append":
            request.append(message)
        elif op == "drop" and request:
            request.pop(0)
        elif op == "slide" and len(request) > 1:  # a window that keeps its first message moves on
            del request[1 : 1 + len(message.blocks)]
        elif op == "cut" and len(request) > 1:  # ... and cuts the oldest message it keeps short
            request[1] = request[1].with_blocks(request[1].blocks[1:] or message.blocks)
        elif op == "swap" and request:
            request[-1] = message
        elif op == "grow" and request:  # the reply message, a new object with blocks appended
            request[-1] = request[-1].appended(*message.blocks)
        elif op == "clear" and request:  # a message anywhere copied with its results' outputs cleared
            at = len(message.blocks) % len(request)
            request[at] = _cleared(request[at])
        declares = len(request) % 3 != 0  # now and then a request that offers no tool
        expected = violations(to_openai(request), RULES, declares_tools=declares)
        assert list(meter.check(request, declares_tools=declares)) == expected


def _cleared(message: Message) -> Message:
    """`message` with every tool result's output replaced, as a clearing copies it."""
    from ctxlab.core.messages.blocks import ToolResultBlock
    from ctxlab.core.messages.edits import with_output

    return message.with_blocks(
        tuple(with_output(b, "[cleared]") if isinstance(b, ToolResultBlock) else b for b in message.blocks)
    )


@given(any_messages)
def test_facts_read_from_blocks_equal_the_facts_of_the_openai_view(message: Message) -> None:
    from ctxlab.core.wire.protocol import fact_of, facts_of_message
    from ctxlab.core.wire.views import to_openai_one

    assert facts_of_message(message) == tuple(fact_of(w) for w in to_openai_one(message))


def test_the_meter_forgets_the_views_of_messages_long_gone_and_still_checks_right() -> None:
    from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock

    meter = ProtocolMeter(RULES)
    user = Message(role="user", blocks=(TextBlock(text="go"),), id="u")
    for k in range(40):  # a short request whose reply is a new object each time
        blocks = (
            ToolCallBlock(id=f"c{k}", name="Read", input="{}"),
            ToolResultBlock(id=f"c{k}", name="Read", output=()),
        )
        request = [user, Message(role="assistant", blocks=blocks[: 1 + k % 2], id=f"r{k}")]
        assert list(meter.check(request)) == violations(to_openai(request), RULES)


def test_the_meter_keeps_the_views_of_messages_still_sent_when_it_forgets_the_others() -> None:
    from ctxlab.core.messages.blocks import TextBlock
    from ctxlab.core.messages.resumable import forget

    meter = ProtocolMeter(RULES)
    user = Message(role="user", blocks=(TextBlock(text="go"),), id="u")
    first = Message(role="assistant", blocks=(TextBlock(text="r0"),), id="r0")
    kept, gone = meter.facts(user), meter.facts(first)
    for k in range(40):  # enough new replies for the meter to forget views
        meter.check([user, Message(role="assistant", blocks=(TextBlock(text=f"r{k}"),), id=f"r{k}")])
    assert meter.facts(user) is kept  # still sent: still memoised
    forget()  # what a released run drops: the pieces the meters of a run share (`piece_of`)
    assert meter.facts(user) is kept  # still memoised by the meter
    assert meter.facts(first) is not gone and meter.facts(first) == gone  # long gone: read again


def test_the_meter_refuses_an_empty_request_before_or_after_others() -> None:
    from ctxlab.core.messages.blocks import ToolCallBlock

    meter = ProtocolMeter(RULES)
    empty = tuple(violations([], RULES))
    assert meter.check([]) == empty and {v.kind for v in empty} == {"empty_request"}
    dangling = Message(role="assistant", blocks=(ToolCallBlock(id="a", name="Read", input="{}"),), id="r")
    assert list(meter.check([dangling])) == violations(to_openai([dangling]), RULES) != []
    assert meter.check([]) == empty


def test_call_ids_count_the_uses_beyond_the_first_and_roll_back() -> None:
    from ctxlab.core.wire.protocol import CallIds

    ids = CallIds()
    ids.add(1, ["a", "b"])
    assert ids.repeated == 0 and ids.duplicates("openai") == []
    ids.add(3, ["a"])
    ids.add(5, ["a"])
    assert ids.repeated == 2
    assert [(v.index, v.call_id) for v in ids.duplicates("openai")] == [(3, "a"), (5, "a")]
    ids.remove(["a"])
    ids.remove(["a"])
    assert ids.repeated == 0 and ids.places == {"a": [1], "b": [1]}


def test_the_meter_finds_a_repeated_id_again_after_a_request_without_it() -> None:
    from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock

    first = Message(role="user", blocks=(TextBlock(text="go"),), id="u")
    call_a = Message(role="assistant", blocks=(ToolCallBlock(id="a", name="Read", input="{}"),), id="r1")
    again = Message(role="assistant", blocks=(ToolCallBlock(id="a", name="Read", input="{}"),), id="r2")
    meter = ProtocolMeter(RULES)
    for request in ([first, call_a, again], [first, call_a], [first, call_a, again], [first, call_a, again]):
        assert list(meter.check(request)) == violations(to_openai(request), RULES)


def test_an_orphan_whose_call_the_window_dropped_reads_as_having_no_call() -> None:
    from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock

    system = Message(role="system", blocks=(TextBlock(text="be brief"),), id="s")
    call = Message(role="assistant", blocks=(ToolCallBlock(id="c1", name="Read", input="{}"),), id="a")
    user = Message(role="user", blocks=(TextBlock(text="go on"),), id="u")
    reply = Message(role="assistant", blocks=(TextBlock(text="ok"),), id="b")
    late = Message(role="user", blocks=(ToolResultBlock(id="c1", name="Read", output=()),), id="r")
    meter = ProtocolMeter(RULES)
    again, reply_again = user.with_blocks(user.blocks), reply.with_blocks(reply.blocks)
    moved = [system, user, reply, again, reply_again, late]  # the checkers agree before the result
    for request in ([system, call, *moved[1:]], moved):
        assert list(meter.check(request)) == violations(to_openai(request), RULES)
    details = {v.detail for v in meter.check(moved) if v.rule == "openai"}
    assert details == {"result for 'c1' has no call in this request"}


def _rounds(first: int, count: int, *, prefix: str = "c", hint: bool = False) -> list[Any]:
    """`count` rounds of a reply: a text, a call and its result (after a hint, when `hint`)."""
    from ctxlab.core.messages.blocks import HintBlock, TextBlock, ToolCallBlock, ToolResultBlock

    return [
        block
        for i in range(first, first + count)
        for block in (
            *([HintBlock(hint="time is short", source="runtime")] if hint else []),
            TextBlock(text=f"step {i}"),
            ToolCallBlock(id=f"{prefix}{i}", name="Read", input="{}"),
            ToolResultBlock(id=f"{prefix}{i}", name="Read", output=()),
        )
    ]


@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 2), st.booleans()), min_size=1, max_size=10),
    st.sampled_from(["c", "d"]),
)
def test_the_meter_checks_a_reply_whose_front_a_window_cuts_as_a_full_check(
    plan: list[tuple[int, int, bool]], again: str
) -> None:
    """A window over one long reply: each request cuts blocks from the reply's front (at a round's
    end or inside one, orphaning a result), the reply grows by rounds (some reusing a call id),
    and a user message may follow; every check equals a full check."""
    from ctxlab.core.messages.blocks import TextBlock

    system = Message(role="system", blocks=(TextBlock(text="be brief"),), id="s")
    user = Message(role="user", blocks=(TextBlock(text="go"),), id="u")
    blocks, made = _rounds(0, 8), 8
    meter = ProtocolMeter(RULES)
    for cut, grow, follow in plan:
        blocks = [*blocks[cut:], *_rounds(made, grow, prefix=again if grow == 2 else "c")]
        made += grow
        reply = Message(role="assistant", blocks=tuple(blocks), id="r")
        request = [system, user, reply, *([user] if follow else [])]
        assert list(meter.check(request)) == violations(to_openai(request), RULES)


def test_a_window_that_cuts_a_replys_front_costs_the_meter_what_changed() -> None:
    """Each request drops the reply's two oldest rounds and adds two: the meter feeds the rules a
    few facts, not the reply's (each round's hint is a fact equal to every other round's: the
    stretch the window kept is found past the first equal one)."""
    from ctxlab.core.messages.blocks import TextBlock

    system = Message(role="system", blocks=(TextBlock(text="be brief"),), id="s")
    blocks = _rounds(0, 40, hint=True)
    fed: list[Fact] = []
    meter = ProtocolMeter(RULES)
    advance = ProtocolMeter._advance

    def counted(self: ProtocolMeter, before: Any, fact: Fact, stamp: int) -> Any:
        fed.append(fact)
        return advance(self, before, fact, stamp)

    for k in range(40, 80, 2):
        blocks = [*blocks[8:], *_rounds(k, 2, hint=True)]
        request = [system, Message(role="assistant", blocks=tuple(blocks), id="r")]
        fed.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ProtocolMeter, "_advance", counted)
            assert list(meter.check(request)) == violations(to_openai(request), RULES)
        if k > 40:
            assert len(fed) <= 10


def test_a_reply_that_only_grows_is_not_searched_for_a_window_s_cut() -> None:
    """A reply that gains a round at every call begins with the very facts the kept read made:
    the meter does not look for a stretch a window kept (a search as long as the reply)."""
    from ctxlab.core.messages.blocks import TextBlock

    system = Message(role="system", blocks=(TextBlock(text="be brief"),), id="s")
    reply = Message(role="assistant", blocks=tuple(_rounds(0, 20)), id="r")
    searched: list[int] = []
    stretch = ProtocolMeter._stretch

    def counted(self: ProtocolMeter, facts: tuple[Fact, ...], low: int, end: int) -> int | None:
        searched.append(low)
        return stretch(self, facts, low, end)

    meter = ProtocolMeter(RULES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ProtocolMeter, "_stretch", counted)
        for k in range(20, 30):
            reply = reply.appended(*_rounds(k, 1))
            request = [system, reply]
            assert list(meter.check(request)) == violations(to_openai(request), RULES)
    assert searched == []


def test_what_a_meter_keeps_for_a_request_is_its_leading_messages_else_the_run_it_goes_on_with() -> None:
    """`reusable` (what the engine picks a meter by): the leading stored messages a request shares
    with the one checked last, else the run of them it goes on with after a new head (a summary
    request of the span a reasoning request held), else none (a request of other messages)."""
    from ctxlab.core.messages.blocks import TextBlock

    history = [
        Message(role="user" if k % 2 else "assistant", blocks=(TextBlock(text=f"m{k}"),)) for k in range(9)
    ]
    meter = ProtocolMeter(RULES)
    assert meter.reusable(history) == 0  # nothing checked yet
    meter.check(history)
    head = Message(role="user", blocks=(TextBlock(text="summarise"),))
    assert meter.reusable([*history, head]) == 9
    assert meter.reusable([head, *history[3:7]]) == 4
    assert meter.reusable([head]) == 0
    request = [head, *history[3:]]
    assert meter.reusable(request) == 6
    assert list(meter.check(request)) == violations(to_openai(request), RULES)
