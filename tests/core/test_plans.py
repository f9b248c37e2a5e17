"""Clearing plans: a clearing resumed from the last history it read is the clearing of the whole
history, request after request, whatever the history does between them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.clearing import AnthropicClearParams, Clearing, _cleared_at_once, clear_tool_uses
from ctxlab.core.compaction.plans import Plan, Verdict
from ctxlab.core.messages.blocks import Block, TextBlock, ToolCallBlock, ToolResultBlock, sum_tallies
from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import GROWN, Message, same_leading
from ctxlab.core.messages.units import BlockRef
from ctxlab.presets.langchain import exact
from ctxlab.presets.langchain.exact import LangChainClearParams, clear_exact
from ctxlab.presets.lc_count import count_tokens
from ctxlab.presets.lc_messages import lc_view
from tests.core.test_clearing import SIZER, call, reply, result, rounds, user
from tests.strategies import messages, paired_histories
from tests.zoo_strategies import agent_histories

PLACEHOLDERS = st.sampled_from(["[cleared]", "", "a"])
TOOLS = st.lists(st.sampled_from(["Read", "grep", "bash", "retrieve", "search"]), max_size=2).map(tuple)
anthropic_params = st.builds(
    AnthropicClearParams,
    trigger=st.sampled_from([0, 0, 40]),
    trigger_kind=st.sampled_from(["input_tokens", "tool_uses"]),
    keep=st.integers(0, 4),
    clear_at_least=st.none() | st.integers(0, 60),
    exclude_tools=TOOLS,
    placeholder=PLACEHOLDERS,
)
langchain_params = st.builds(
    LangChainClearParams, trigger=st.sampled_from([0, 0, 40]), keep=st.integers(0, 4), exclude_tools=TOOLS
)


@st.composite
def tangled_histories(draw: st.DrawFn) -> list[Message]:
    """Histories whose few call ids recur: results before their calls, in other messages, twice."""
    ids, tools = st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(["Read", "grep", "bash"])
    block = st.one_of(
        st.builds(ToolCallBlock, id=ids, name=tools, input=st.just("{}")),
        st.builds(
            ToolResultBlock,
            id=ids,
            name=tools,
            output=st.sampled_from([(TextBlock(text="x" * 300),), (TextBlock(text="[cleared]"),), ()]),
        ),
        st.builds(TextBlock, text=st.sampled_from(["", "ok"])),
    )
    shape = st.builds(
        Message, role=st.sampled_from(["user", "assistant"]), blocks=st.lists(block, max_size=4).map(tuple)
    )
    return draw(st.lists(shape, max_size=8))


histories = st.one_of(
    agent_histories(), paired_histories(), st.lists(messages, max_size=6), tangled_histories()
)


def requests(history: list[Message]) -> Iterator[list[Message]]:
    """The requests a run makes of a history: growing block by block, then without its first
    message, with its last message changed, cut short, and whole again."""
    for m, message in enumerate(history):
        for b in range(1, max(len(message.blocks), 1) + 1):
            yield [*history[:m], message.with_blocks(message.blocks[:b])]
    if history:
        yield history[1:]
        yield [*history[:-1], history[-1].with_blocks(history[-1].blocks[::-1])]
        yield history[: len(history) // 2]
    yield history


def same_objects(a: Clearing, b: Clearing) -> bool:
    """The very copies, so the meters reuse their work; a long last message is a plan's own copy
    (the same one while its verdicts are)."""
    last = len(a.messages) - 1
    return all(
        x is y or (k == last and len(x.blocks) >= RESUMED_BLOCKS)
        for k, (x, y) in enumerate(zip(a.messages, b.messages, strict=True))
    )


@given(histories, anthropic_params)
def test_anthropic_clearing_resumed_is_the_clearing_of_the_whole_history(
    history: list[Message], params: AnthropicClearParams
) -> None:
    for seen in requests(history):
        out = clear_tool_uses(seen, sizer=SIZER, params=params)
        whole = _cleared_at_once(seen, SIZER, params)
        assert out == whole
        assert same_objects(out, whole)  # the very copies, so the meters reuse their work
        kept = clear_tool_uses(out.messages, sizer=SIZER, params=params)  # as `persist` stores it
        assert kept == _cleared_at_once(out.messages, SIZER, params)


@given(histories, langchain_params, PLACEHOLDERS)
def test_langchain_clearing_resumed_is_the_clearing_of_the_whole_history(
    history: list[Message], params: LangChainClearParams, placeholder: str
) -> None:
    for seen in requests(history):
        out = clear_exact(seen, params, placeholder)
        whole = exact._cleared_at_once(seen, params, placeholder)
        assert out == whole
        assert same_objects(out, whole)
        kept = clear_exact(out.messages, params, placeholder)
        assert kept == exact._cleared_at_once(out.messages, params, placeholder)


GROWN_IDS = st.sampled_from([f"c{k}" for k in range(40)])
grown_blocks = st.one_of(
    st.builds(
        lambda i, tool, text: [call(i, tool, q=i), result(i, text, tool)],
        GROWN_IDS,
        st.sampled_from(["Read", "grep", "search"]),
        st.sampled_from(["x" * 300, "[cleared]", "y"]),
    ),
    st.builds(lambda i: [result(i, "z" * 200, "search")], st.sampled_from(["late", "c1"])),  # awaits, or not
    st.just([call("late", "search", q="late")]),  # declares what a stray result awaits
    st.just([TextBlock(text="step")]),
)
"""What a long reply gains: mostly rounds (ids from a pool, so some recur), sometimes a result
whose call is declared later or earlier, that declaration, or text."""


def long_reply_requests(grown: list[Block], after: bool, data: st.DataObject) -> Iterator[list[Message]]:
    """The requests of one history whose reply grows by `grown` a block at a time, sometimes cut a
    few blocks back and grown again, with a message after it when `after` (its first message the
    same object throughout, so a plan kept for it resumes)."""
    reply_, first = Message(role="assistant", blocks=(), id="r"), user("go")
    at = 0
    while at < len(grown):
        reply_, at = reply_.appended(grown[at]), at + 1
        if data.draw(st.sampled_from(["grow"] * 5 + ["cut"])) == "cut":
            cut = data.draw(st.integers(max(0, len(reply_.blocks) - 6), len(reply_.blocks)))
            reply_, at = reply_.with_blocks(reply_.blocks[:cut]), cut
        yield [first, reply_, *([reply(call("late", "search", q=0))] if after else [])]


@given(
    st.lists(grown_blocks, min_size=8, max_size=30).map(lambda rounds: [b for r in rounds for b in r]),
    anthropic_params,
    st.booleans(),
    st.data(),
)
def test_anthropic_clearing_of_a_long_reply_resumed_is_the_clearing_of_the_whole_history(
    grown: list[Block], params: AnthropicClearParams, after: bool, data: st.DataObject
) -> None:
    """A long reply grows a block at a time, is sometimes cut short and grows again, sometimes
    with a message after it; each request clears as the whole history read at once."""
    for seen in long_reply_requests(grown, after, data):
        out = clear_tool_uses(seen, sizer=SIZER, params=params)
        whole = _cleared_at_once(seen, SIZER, params)
        assert out == whole
        assert out.messages[0] is whole.messages[0]
        assert clear_tool_uses(seen, sizer=SIZER, params=params).messages == out.messages
        assert all(m.tally == sum_tallies(m.blocks) for m in out.messages)  # a copy's, kept running
        parent = GROWN.parent(out.cleared)  # a cleared-ids tuple begins with what it was noted to share
        assert parent is None or same_leading(out.cleared, parent) >= (GROWN.shared(out.cleared, parent) or 0)


@given(
    st.lists(grown_blocks, min_size=8, max_size=30).map(lambda rounds: [b for r in rounds for b in r]),
    langchain_params,
    PLACEHOLDERS,
    st.booleans(),
    st.data(),
)
def test_langchain_clearing_of_a_long_reply_resumed_is_the_clearing_of_the_whole_history(
    grown: list[Block], params: LangChainClearParams, placeholder: str, after: bool, data: st.DataObject
) -> None:
    """The LangChain judge judges a reply that grew past what it gained (`judge_from`): a long
    reply grows a block at a time, sometimes cut short, sometimes with a message after it; each
    request clears and counts as the whole history read at once, the stored reply and each
    cleared copy in turn."""
    for seen in long_reply_requests(grown, after, data):
        out = clear_exact(seen, params, placeholder)
        assert out == exact._cleared_at_once(seen, params, placeholder)
        assert out.tokens_after == count_tokens(lc_view(out.messages))  # the count after, read afresh
        assert clear_exact(out.messages, params, placeholder) == exact._cleared_at_once(
            out.messages, params, placeholder
        )


def test_langchain_judges_a_grown_reply_past_what_it_gained(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reply that gains a block at a time is judged from the first new block on, each new
    result against the AI unit that made its call, and clears as the whole history read at once."""
    judged: list[int] = []
    judge_from = exact._LangChainJudge.judge_from

    def counted(judge: Any, message: Message, position: int, carry: object, first: int) -> Any:
        judged.append(first)
        return judge_from(judge, message, position, carry, first)

    monkeypatch.setattr(exact._LangChainJudge, "judge_from", counted)
    reply_, first, params = (
        Message(role="assistant", blocks=(), id="r"),
        user("go"),
        LangChainClearParams(trigger=0, keep=1),
    )
    for k in range(12):
        for block in (
            TextBlock(text="step"),
            call(f"c{k}", "search", q=k),
            result(f"c{k}", "x" * 300, "search"),
        ):
            reply_ = reply_.appended(block)
            seen = [first, reply_]
            assert clear_exact(seen, params, "[cleared]") == exact._cleared_at_once(seen, params, "[cleared]")
    assert judged == list(range(RESUMED_BLOCKS, len(reply_.blocks)))  # each block judged once


def test_a_result_whose_call_is_declared_later_is_judged_again() -> None:
    early = [user("go"), reply(result("c9", "x" * 400, "search"), TextBlock(text="?"))]
    later = [*early, *rounds(4)[1:], reply(call("c9", "search", q=9))]
    params = AnthropicClearParams(trigger=0, keep=1)
    assert clear_tool_uses(early, sizer=SIZER, params=params).cleared == ()
    assert clear_tool_uses(later, sizer=SIZER, params=params) == _cleared_at_once(later, SIZER, params)
    assert "c9" in clear_tool_uses(later, sizer=SIZER, params=params).cleared
    without = [*later[:-1], reply(call("c8", "search", q=8))]  # the message that declared it, replaced
    assert clear_tool_uses(without, sizer=SIZER, params=params) == _cleared_at_once(without, SIZER, params)
    assert "c9" not in clear_tool_uses(without, sizer=SIZER, params=params).cleared


def test_a_call_id_declared_twice_makes_the_whole_history_read() -> None:
    twice = [*rounds(3), reply(call("c0", "keep", q=0))]
    params = AnthropicClearParams(trigger=0, keep=1, exclude_tools=("keep",))
    clear_tool_uses(rounds(3), sizer=SIZER, params=params)
    out = clear_tool_uses(twice, sizer=SIZER, params=params)
    assert out == _cleared_at_once(twice, SIZER, params)
    assert "c0" not in out.cleared  # its last declaration is an excluded tool


def verdicts(message: Message, position: int) -> list[Verdict]:
    return [
        Verdict(BlockRef(position, i), b.id, cleared=ToolResultBlock(id=b.id, name=b.name, output=()))
        for i, b in enumerate(message.blocks)
        if isinstance(b, ToolResultBlock)
    ]


class CountingJudge:
    """Clears every result; counts the messages it was asked to judge."""

    def __init__(self) -> None:
        self.judged = 0

    def start(self) -> object:
        return None

    def judge(self, message: Message, position: int, carry: object) -> tuple[list[Verdict], object]:
        self.judged += 1
        return verdicts(message, position), carry

    def resumable(self) -> bool:
        return True


def test_a_plan_judges_only_the_messages_a_history_gained() -> None:
    history = rounds(6)[1:]
    grown = [*history, *(reply(call(f"d{k}", "t"), result(f"d{k}", "y", "t")) for k in range(5))]
    plan, judge = Plan(), CountingJudge()
    plan.resume(history, judge)
    plan.resume(grown, judge)
    assert judge.judged == len(grown)
    assert plan.cleared_ids(plan.applied(2)) == (*(f"c{k}" for k in range(6)), "d0", "d1", "d2")
    plan.resume(grown[1:], judge)  # a new front: judged again from the start
    assert judge.judged == 2 * len(grown) - 1


def test_edited_rebuilds_from_the_first_message_whose_edits_changed() -> None:
    history = [reply(call(f"c{k}", "t"), result(f"c{k}", "y", "t")) for k in range(6)]
    plan, judge = Plan(), CountingJudge()
    plan.resume(history, judge)
    first = plan.edited(history, plan.applied(2))
    plan.resume([*history, reply(call("c6", "t"), result("c6", "y", "t"))], judge)
    second = plan.edited(plan.messages, plan.applied(2))
    assert all(a is b for a, b in zip(first[:4], second[:4], strict=True))
    assert second[4] is not history[4] and second[5] is history[5]
    assert isinstance(second[4].blocks[1], ToolResultBlock) and second[4].blocks[1].output == ()


class AwaitingJudge(CountingJudge):
    """Every result awaits a declaration of its call."""

    def judge(self, message: Message, position: int, carry: object) -> tuple[list[Verdict], object]:
        self.judged += 1
        found = [
            Verdict(v.ref, v.call_id, awaits=v.call_id, reads=position) for v in verdicts(message, position)
        ]
        return found, carry


def test_a_declaration_judges_again_only_while_a_kept_result_awaits_it() -> None:
    waiting, declare_z, declare_x = (
        [user("go"), reply(result("x", "y", "t"))],
        reply(call("z", "t")),
        reply(call("x", "t")),
    )
    plan, judge = Plan(), AwaitingJudge()
    plan.resume(waiting, judge)
    plan.resume([waiting[0], declare_z], judge)  # the awaiting result is gone
    plan.resume([waiting[0], declare_z, declare_x], judge)
    assert judge.judged == 2 + 1 + 1
    plan.resume(waiting, judge)
    plan.resume([*waiting, declare_x], judge)  # a kept result awaits it: all judged again
    assert judge.judged == 4 + 1 + 3


class BlockCountingJudge(CountingJudge):
    """`CountingJudge` judging a message from a block on; counts the blocks it was asked to judge."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = 0

    def judge(self, message: Message, position: int, carry: object) -> tuple[list[Verdict], object]:
        return self.judge_from(message, position, carry, 0)

    def judge_from(
        self, message: Message, position: int, carry: object, first: int
    ) -> tuple[list[Verdict], object]:
        self.judged += 1
        self.blocks += len(message.blocks) - first
        return [v for v in verdicts(message, position) if v.ref.block >= first], carry


def test_cleared_ids_are_the_last_tuple_or_one_noted_as_its_extension() -> None:
    """The same tuple while the ids are unchanged; a tuple noted (`GROWN`) as beginning with the
    last when they grew; a fresh one, not noted, when the history lost what the last one held."""
    history = rounds(4)[1:]
    grown = [*history, *(reply(call(f"d{k}", "t"), result(f"d{k}", "y", "t")) for k in range(3))]
    plan, judge = Plan(), CountingJudge()
    plan.resume(history, judge)
    first = plan.cleared_ids(plan.applied(1))
    assert first == ("c0", "c1", "c2") and plan.cleared_ids(plan.applied(1)) is first
    plan.resume(grown, judge)
    longer = plan.cleared_ids(plan.applied(1))
    assert longer == (*first, "c3", "d0", "d1")
    assert GROWN.parent(longer) is first and same_leading(longer, first) == len(first)
    plan.resume(grown[1:], judge)  # a new front: judged again, the ids made afresh
    fresh = plan.cleared_ids(plan.applied(1))
    assert fresh == ("d0", "d1") and GROWN.parent(fresh) is None


def test_a_plan_judges_only_the_blocks_a_long_reply_gained() -> None:
    rounds_ = [b for k in range(12) for b in (call(f"c{k}", "t"), result(f"c{k}", "y", "t"))]
    history = [user("go"), reply(*rounds_)]
    plan, judge = Plan(), BlockCountingJudge()
    plan.resume(history, judge)
    grown = [history[0], history[1].appended(call("d", "t"), result("d", "y", "t"))]
    plan.resume(grown, judge)
    assert judge.blocks == 1 + 24 + 2
    assert plan.cleared_ids(plan.applied(2)) == (*(f"c{k}" for k in range(11)),)
    edited = plan.edited(grown, plan.applied(2))
    assert edited[1].blocks[21].output == () and edited[1].blocks[23] is rounds_[23]
    assert plan.edited(grown, plan.applied(2))[1] is edited[1]  # the same copy for the same verdicts


def test_a_long_reply_whose_awaited_call_is_declared_is_edited_from_its_new_verdicts() -> None:
    """The verdict of a result awaiting its call changes once the call is declared, in the reply
    itself as it grows or in a message before it; the reply's copy follows the new verdicts."""
    rounds_ = (b for k in range(10) for b in (call(f"c{k}", "t", q=k), result(f"c{k}", "y" * 300, "t")))
    long_reply = reply(result("late", "z" * 300, "search"), *rounds_)
    params = AnthropicClearParams(trigger=0, keep=1)
    front, between = user("go"), reply(TextBlock(text="and"))
    for first, then in (
        ([front, long_reply], [front, long_reply.appended(call("late", "search", q=0))]),
        ([front, between, long_reply], [front, between, reply(call("late", "search", q=0)), long_reply]),
    ):
        assert "late" not in clear_tool_uses(first, sizer=SIZER, params=params).cleared
        out = clear_tool_uses(then, sizer=SIZER, params=params)
        assert out == _cleared_at_once(then, SIZER, params)
        assert "late" in out.cleared


def test_a_long_reply_s_cleared_copy_is_noted_as_sharing_what_it_shares_with_the_last() -> None:
    """A reply that grows a round at a time is cleared at every request: its copy's blocks are
    known (`GROWN`) to share with the copy before them the blocks neither request changed, and
    never more than they share (readers resume on it without comparing)."""
    params = AnthropicClearParams(trigger=10, keep=2)
    first, reply_ = user("go"), Message(role="assistant", blocks=(), id="r")
    copies: list[Message] = []
    for i in range(RESUMED_BLOCKS + 6):
        reply_ = reply_.appended(call(f"c{i}", "search", q=i), result(f"c{i}", "x" * 300, "search"))
        copies.append(clear_tool_uses([first, reply_], sizer=SIZER, params=params).messages[1])
        if len(reply_.blocks) > RESUMED_BLOCKS + 2:
            last, before = copies[-1].blocks, copies[-2].blocks
            known, shared = GROWN.shared(last, before), same_leading(last, before)
            assert known is not None and shared - 2 <= known <= shared, (known, shared)
