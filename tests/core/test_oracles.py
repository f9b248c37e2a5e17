"""Each rule alone, and the Anthropic view as sent, against brute-force oracles (`tests.oracles`).

Inputs: every well-formed stored history and every one-edit neighbour of it (a message split at a
block boundary, with or without a user text in the gap; a block dropped; a lone result inserted
anywhere), enumerated exhaustively for each drawn history.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from hypothesis import given

from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.wire.meter import ProtocolMeter
from ctxlab.core.wire.protocol import Rule, anthropic_violations, violations
from ctxlab.core.wire.views import to_anthropic, to_openai
from tests.oracles import anthropic_problems, anthropic_shape, bedrock_problems, openai_problems
from tests.strategies import paired_histories
from tests.zoo_strategies import IMAGE, call, reply, result, user

GAPS: tuple[Message | None, ...] = (None, text_message("user", "gap"), text_message("user", ""))


def splits(history: list[Message]) -> Iterator[list[Message]]:
    """Every message split at every inner block boundary, optionally with a user text between."""
    for m, message in enumerate(history):
        for b in range(1, len(message.blocks)):
            head, tail = message.with_blocks(message.blocks[:b]), message.with_blocks(message.blocks[b:])
            for gap in GAPS:
                yield [*history[:m], head, *([gap] if gap else []), tail, *history[m + 1 :]]


def drops(history: list[Message]) -> Iterator[list[Message]]:
    """Every block dropped, one at a time."""
    for m, message in enumerate(history):
        for b in range(len(message.blocks)):
            blocks = message.blocks[:b] + message.blocks[b + 1 :]
            yield [*history[:m], message.with_blocks(blocks), *history[m + 1 :]]


def lone_results(history: list[Message]) -> Iterator[list[Message]]:
    """A lone result (for a call of the history, or for none) at every place, inside a message or
    as a message of its own."""
    calls = [b.id for m in history for b in m.blocks if isinstance(b, ToolCallBlock)]
    for call_id in dict.fromkeys([*calls[:1], *calls[-1:], "nobody"]):
        lone = ToolResultBlock(id=call_id, name="t", output=(TextBlock(text="late"),))
        for m, message in enumerate(history):
            for b in range(len(message.blocks) + 1):
                blocks = (*message.blocks[:b], lone, *message.blocks[b:])
                yield [*history[:m], message.with_blocks(blocks), *history[m + 1 :]]
        for m in range(len(history) + 1):
            yield [*history[:m], Message(role="assistant", blocks=(lone,)), *history[m:]]


def neighbours(history: list[Message]) -> Iterator[list[Message]]:
    yield history
    yield from splits(history)
    yield from drops(history)
    yield from lone_results(history)


def kinds(found: list[str]) -> Counter[str]:
    return Counter(found)


def assert_rules_equal_their_oracles(messages: list[Message]) -> None:
    wires = to_openai(messages)
    system, turns = to_anthropic(messages)
    assert anthropic_shape(system, turns) == [], messages
    for offers in (True, False):  # a request with tools, and one offering none
        oracles: dict[Rule, list[str]] = {
            "openai": openai_problems(wires),
            "anthropic": anthropic_problems(turns, offers_tools=offers),
            "bedrock": bedrock_problems(turns, offers_tools=offers),
        }
        for rule, oracle in oracles.items():
            found = violations(wires, [rule], declares_tools=offers)
            assert bool(found) == bool(oracle), (rule, found, oracle, messages)
            assert {v.call_id for v in found} == {p.split(":", 1)[1] for p in oracle}, (rule, messages)
            assert ProtocolMeter(rules=(rule,)).check(messages, declares_tools=offers) == tuple(found)
            assert all(v.rule == rule for v in found)
            assert kinds([v.kind for v in found]) == kinds([p.split(":", 1)[0] for p in oracle]), rule
    oracles = {"anthropic": anthropic_problems(turns)}
    on_view = anthropic_violations(turns)
    assert all(v.rule == "anthropic" for v in on_view)
    on_wires = violations(wires, ["anthropic"])
    assert kinds([f"{v.kind}:{v.call_id}:{v.detail}" for v in on_view]) == kinds(
        [f"{v.kind}:{v.call_id}:{v.detail}" for v in on_wires]
    )
    assert kinds([f"{v.kind}:{v.call_id}" for v in on_view]) == kinds(oracles["anthropic"])


@given(paired_histories())
def test_each_rule_alone_equals_its_oracle_on_every_neighbour(history: list[Message]) -> None:
    for neighbour in neighbours(history):
        assert_rules_equal_their_oracles(neighbour)


def test_a_user_text_between_a_call_and_its_result_stays_behind_the_result() -> None:
    # [user, assistant(call a), user text, tool(a)]: the user turn holds the text and the result;
    # the API wants the result first.
    reply_message = reply(call("a", "Read", path="x"), result("a", "ra"), id="r")
    split = [user("go"), reply_message.with_blocks(reply_message.blocks[:1]), user("wait")]
    messages = [*split, reply_message.with_blocks(reply_message.blocks[1:])]
    system, turns = to_anthropic(messages)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert [b["type"] for b in turns[2]["content"]] == ["tool_result", "text"]
    assert anthropic_shape(system, turns) == []
    assert anthropic_problems(turns) == [] and violations(to_openai(messages), ["anthropic"]) == []


def test_a_result_two_assistant_turns_after_its_use_breaks_the_anthropic_rule_alone() -> None:
    messages = [
        user("go"),
        reply(call("a", "Read", path="x"), id="r1"),
        user("more"),
        reply(TextBlock(text="thinking aloud"), id="r2"),
        reply(result("a", "ra"), id="r3"),
    ]
    wires = to_openai(messages)
    _, turns = to_anthropic(messages)
    assert anthropic_problems(turns) == ["dangling_call:a", "orphan_result:a"]
    assert [f"{v.kind}:{v.call_id}" for v in violations(wires, ["anthropic"])] == [
        "dangling_call:a",
        "orphan_result:a",
    ]


def test_same_role_messages_merge_into_one_turn() -> None:
    # Two stored assistant messages (a reply split in two) are one Anthropic turn; its uses are
    # answered by the next user turn, so the rule finds nothing.
    messages = [
        user("go"),
        reply(call("a", "Read", path="x"), id="r1"),
        reply(call("b", "Read", path="y"), id="r2"),
        reply(result("a", "ra"), result("b", "rb", "Read", IMAGE), id="r3"),
    ]
    system, turns = to_anthropic(messages)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert [b["type"] for b in turns[1]["content"]] == ["tool_use", "tool_use"]
    assert [b["type"] for b in turns[2]["content"]] == ["tool_result", "tool_result", "image"]
    assert anthropic_shape(system, turns) == []
    assert violations(to_openai(messages), ["anthropic"]) == []
    assert [str(v) for v in violations(to_openai(messages), ["openai"])] == ["openai:2:a", "openai:3:a"]


def test_messages_of_empty_texts_have_no_turn() -> None:
    # An empty assistant text between two results is no Anthropic turn, so the results share one.
    messages = [
        user("go"),
        reply(call("a", "Read", path="x"), call("b", "Read", path="y"), id="r1"),
        reply(result("a", "ra"), TextBlock(text=""), result("b", "rb"), id="r2"),
    ]
    system, turns = to_anthropic(messages)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert anthropic_shape(system, turns) == []
    assert violations(to_openai(messages), ["anthropic", "bedrock"]) == []
    assert [v.kind for v in violations(to_openai(messages), ["openai"])] == ["dangling_call", "orphan_result"]


def test_on_the_anthropic_view_a_violation_names_its_turn() -> None:
    messages = [user("go"), reply(call("a", "Read", path="x"), id="r1"), user("?"), reply(call("b", "grep"))]
    _, turns = to_anthropic(messages)
    found = [(v.index, v.kind, v.call_id) for v in anthropic_violations(turns)]
    assert found == [(2, "dangling_call", "a"), (3, "dangling_call", "b")]
    lone = [
        user("go"),
        reply(call("a", "Read", path="x"), result("a", "ra")),
        user("?"),
        reply(result("z", "rz")),
    ]
    _, turns = to_anthropic(lone)  # the orphan is named at the user turn holding it (merged: the last)
    assert [(v.index, v.kind, v.call_id) for v in anthropic_violations(turns)] == [(2, "orphan_result", "z")]


def test_a_repeated_call_id_reads_the_same_on_both_views() -> None:
    messages = [
        user("go"),
        reply(call("a", "Read", path="x"), result("a", "ra"), call("a", "Read", path="y"), result("a", "rb")),
    ]
    wires = to_openai(messages)
    _, turns = to_anthropic(messages)
    on_view = [(v.kind, v.call_id, v.detail) for v in anthropic_violations(turns)]
    on_wires = [(v.kind, v.call_id, v.detail) for v in violations(wires, ["anthropic"])]
    assert ("duplicate_id", "a", "call id 'a' is used by more than one call") in on_view
    assert {v.rule for v in anthropic_violations(turns)} == {"anthropic"}
    assert sorted(on_view) == sorted(on_wires)


def test_a_second_result_for_one_use_reads_the_same_on_both_views() -> None:
    messages = [user("go"), reply(call("a", "Read", path="x"), result("a", "ra"), result("a", "again"))]
    _, turns = to_anthropic(messages)
    on_view = [(v.rule, v.kind, v.call_id, v.detail) for v in anthropic_violations(turns)]
    on_wires = [(v.rule, v.kind, v.call_id, v.detail) for v in violations(to_openai(messages), ["anthropic"])]
    assert on_view == on_wires == [("anthropic", "duplicate_result", "a", "a second result for call 'a'")]


def test_a_use_left_open_at_the_end_reads_the_same_on_both_views() -> None:
    messages = [user("go"), reply(call("a", "Read", path="x"))]
    _, turns = to_anthropic(messages)
    on_view = [(v.rule, v.kind, v.call_id, v.detail) for v in anthropic_violations(turns)]
    on_wires = [(v.rule, v.kind, v.call_id, v.detail) for v in violations(to_openai(messages), ["anthropic"])]
    assert (
        on_view
        == on_wires
        == [("anthropic", "dangling_call", "a", "call 'a' is not answered before the request ends")]
    )
