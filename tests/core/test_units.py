"""View units match `to_openai` message for message; edits by unit change exactly those messages."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import (
    DataBlock,
    HintBlock,
    Tally,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.drops import drop_units
from ctxlab.core.messages.edits import holds_only, replace_blocks, with_output
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.sizes import (
    Sizer,
    context_size,
    message_tallies,
    tally_after,
    unit_tallies,
    unseen_size,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator, measure_all
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.messages.units import (
    BlockRef,
    ProtocolUnit,
    ViewUnit,
    answers_own_calls,
    call_blocks,
    placed_units,
    protocol_units,
    result_block,
    result_ref,
    safe_cut,
    split_at_unit,
    view_units,
)
from ctxlab.core.wire.views import to_openai
from tests.strategies import messages, paired_histories
from tests.zoo_strategies import IMAGE, agent_histories, call, reply, result, user

COUNTER = AgentScopeEstimator()
contexts = st.one_of(st.lists(messages, max_size=6), paired_histories(), agent_histories())


def kinds(msgs: list[Message]) -> list[tuple[str, int, int, int]]:
    return [(u.kind, u.message, u.start, u.end) for u in view_units(msgs)]


def media_straddles(units: tuple[ViewUnit, ...], cut: int) -> bool:
    """True when a media message after `cut` shows images of a result before it."""
    results = {(u.message, u.blocks[0]): u.index for u in units if u.kind == "result"}
    return any(
        u.kind == "media" and u.index >= cut and any(results[(u.message, i)] < cut for i in u.blocks)
        for u in units
    )


def test_a_reply_splits_into_its_view_messages() -> None:
    msgs = [
        user("go"),
        reply(
            HintBlock(hint="<time>"),
            ThinkingBlock(thinking="plan"),
            TextBlock(text="two sources"),
            call("a", "Read", path="x"),
            call("b", "Read", path="y"),
            result("a", "ra", "Read", IMAGE),
            result("b", "rb"),
            TextBlock(text="done"),
        ),
    ]
    assert kinds(msgs) == [
        ("user", 0, 0, 1),
        ("hint", 1, 0, 1),
        ("calls", 1, 1, 5),  # the thinking before the text belongs to the assistant message
        ("result", 1, 5, 6),
        ("result", 1, 6, 7),
        ("media", 1, 7, 7),  # the images of the batch, owned by nobody
        ("text", 1, 7, 8),
    ]
    units = view_units(msgs)
    assert units[2].call_ids == ("a", "b") and units[3].call_ids == ("a",)
    assert units[5].blocks == (5,)  # the result holding the image


def test_hidden_blocks_join_the_next_unit_or_else_the_last() -> None:
    msgs = [
        reply(
            ThinkingBlock(thinking="a"), TextBlock(text="t"), HintBlock(hint=()), ThinkingBlock(thinking="z")
        )
    ]
    assert kinds(msgs) == [("text", 0, 0, 4)]
    assert kinds([reply(ThinkingBlock(thinking="only"))]) == []  # a message no provider sees


@given(contexts)
def test_units_are_the_openai_view_message_for_message(msgs: list[Message]) -> None:
    units = view_units(msgs)
    wire = to_openai(msgs)
    assert [u.role for u in units] == [w["role"] for w in wire]
    assert [u.index for u in units] == list(range(len(wire)))
    for unit in units:
        if unit.kind != "media":
            owned = Message(
                role=msgs[unit.message].role, blocks=msgs[unit.message].blocks[unit.start : unit.end]
            )
            assert to_openai([owned])[0] == wire[unit.index]


@given(contexts)
def test_owned_ranges_partition_each_message(msgs: list[Message]) -> None:
    units = view_units(msgs)
    for m, message in enumerate(msgs):
        ranges = [(u.start, u.end) for u in units if u.message == m]
        if ranges:
            bounds = [0] + [e for _, e in ranges]
            assert [s for s, _ in ranges] == bounds[:-1]  # each unit starts where the last ended
            assert bounds[-1] == len(message.blocks)


@given(st.lists(st.tuples(agent_histories(), st.integers(0, 40)), min_size=1, max_size=4))
def test_whole_history_reads_equal_a_plain_reading_as_histories_grow_and_change(
    runs: list[tuple[list[Message], int]],
) -> None:
    """Views, sizes and calls of the whole history (kept for the histories last read) equal a
    reading from scratch, for a history read as it grows, cut back, and another in between."""
    for history, cut in runs:
        grown = [*history, *history[: cut % (len(history) + 1)]] * 6  # long enough to be kept
        for end in (len(grown), len(grown) // 2, len(grown), 1, len(grown)):
            msgs = tuple(grown[:end])
            plain_calls: dict[str, tuple[BlockRef, ToolCallBlock]] = {}
            for m, message in enumerate(msgs):
                for i, block in enumerate(message.blocks):
                    if isinstance(block, ToolCallBlock):
                        plain_calls[block.id] = (BlockRef(m, i), block)
            assert call_blocks(msgs) == plain_calls
            plain_size = Tally(sum(m.tally.nbytes for m in msgs), sum(m.tally.ndata for m in msgs))
            assert measure_all(COUNTER, msgs) == plain_size
            units: list[ViewUnit] = []
            for m, message in enumerate(msgs):
                units.extend(placed_units(message, m, len(units)))
            assert view_units(msgs) == tuple(units)
            assert unit_tallies(msgs, COUNTER) == tuple(
                size for message in msgs for size in message_tallies(message, COUNTER)
            )


@given(contexts)
def test_unit_tallies_add_up_to_the_counter(msgs: list[Message]) -> None:
    units = view_units(msgs)
    total = unseen_size(msgs, units, COUNTER)
    for tally in unit_tallies(msgs, COUNTER):
        total = total + tally
    assert total == context_size(msgs, COUNTER)
    assert COUNTER.total(total, ()) == COUNTER.count(msgs, ())


@given(contexts, st.data())
def test_dropping_units_removes_exactly_those_view_messages(msgs: list[Message], data: st.DataObject) -> None:
    units = view_units(msgs)
    drop = data.draw(st.sets(st.sampled_from(range(len(units))))) if units else set()
    out = drop_units(msgs, units, drop)
    expected = [
        w for w, u in zip(to_openai(msgs), units, strict=True) if u.index not in drop and u.kind != "media"
    ]
    got = [w for w, u in zip(to_openai(out), view_units(out), strict=True) if u.kind != "media"]
    assert got == expected


@given(contexts, st.data())
def test_a_split_keeps_the_view_whole(msgs: list[Message], data: st.DataObject) -> None:
    units = view_units(msgs)
    cut = data.draw(st.integers(0, len(units)))
    head, tail = split_at_unit(msgs, units, cut)
    if not media_straddles(units, cut):
        assert to_openai(head) + to_openai(tail) == to_openai(msgs)
        assert len(view_units(head)) == cut


def test_dropping_a_hint_between_texts_splits_the_message_instead_of_merging() -> None:
    msgs = [reply(TextBlock(text="a"), HintBlock(hint="h"), TextBlock(text="b"), id="r")]
    out = drop_units(msgs, view_units(msgs), {1})
    assert [m.blocks for m in out] == [(TextBlock(text="a"),), (TextBlock(text="b"),)]
    assert [m.id for m in out] == ["r", "r"]
    assert [w["content"] for w in to_openai(out)] == ["a", "b"]


def test_images_travel_with_their_results() -> None:
    msgs = [reply(call("a", "Read", path="x"), result("a", "ra", "Read", IMAGE), TextBlock(text="t"))]
    units = view_units(msgs)
    assert [u.kind for u in units] == ["calls", "result", "media", "text"]
    no_media = drop_units(msgs, units, {2})
    assert [u.kind for u in view_units(no_media)] == ["calls", "result", "text"]
    assert no_media[0].blocks[1] == result("a", "ra")
    no_result = drop_units(msgs, units, {1})
    assert [u.kind for u in view_units(no_result)] == ["calls", "text"]


def test_untouched_messages_stay_the_same_objects() -> None:
    msgs = [user("a"), reply(TextBlock(text="b")), user("c")]
    out = drop_units(msgs, view_units(msgs), {1})
    assert out[0] is msgs[0] and out[1] is msgs[2]
    edited = replace_blocks(msgs, {BlockRef(1, 0): TextBlock(text="B")})
    assert edited[0] is msgs[0] and edited[2] is msgs[2] and edited[1].blocks == (TextBlock(text="B"),)


def test_protocol_units_group_a_batch_with_its_results_and_images() -> None:
    msgs = [
        user("go"),
        reply(call("a", "Read", path="x"), call("b", "Read", path="y"), result("a", "ra", "Read", IMAGE)),
        reply(result("b", "rb"), result("zz", "orphan")),
    ]
    groups = protocol_units(view_units(msgs))
    assert [(g.units, g.complete) for g in groups] == [((0,), True), ((1, 2, 3, 4), True), ((5,), True)]
    pending = protocol_units(view_units(msgs[:2]))
    assert [(g.units, g.complete) for g in pending] == [((0,), True), ((1, 2, 3), False)]


def test_a_call_batch_opening_the_view_groups_with_its_results() -> None:
    # A window that starts at an assistant call batch (a trimmed history): the batch is view
    # unit 0, and its results and their images still belong to it.
    msgs = [
        reply(
            call("a", "Read", path="x"),
            call("b", "grep"),
            result("a", "ra", "Read", IMAGE),
            result("b", "rb"),
        ),
        user("next"),
        reply(call("c", "Read", path="y"), result("c", "rc")),
    ]
    units = view_units(msgs)
    assert [u.kind for u in units] == ["calls", "result", "result", "media", "user", "calls", "result"]
    groups = protocol_units(units)
    assert [(g.units, g.call_ids, g.complete) for g in groups] == [
        ((0, 1, 2, 3), ("a", "b"), True),
        ((4,), (), True),
        ((5, 6), ("c",), True),
    ]


@given(contexts)
def test_a_result_joins_the_latest_earlier_batch_declaring_its_id(msgs: list[Message]) -> None:
    units = view_units(msgs)
    group_of = {i: g for g in protocol_units(units) for i in g.units}
    for unit in units:
        if unit.kind != "result":
            continue
        batches = [
            u.index for u in units[: unit.index] if u.kind == "calls" and unit.call_ids[0] in u.call_ids
        ]
        expected = batches[-1] if batches else unit.index
        assert group_of[unit.index].first == expected


def test_a_message_answers_its_own_calls_only_when_each_result_follows_its_call_inside_it() -> None:
    assert answers_own_calls(view_units([reply(call("a", "t"), result("a", "r"), TextBlock(text="ok"))]))
    assert answers_own_calls(view_units([user("no calls at all")]))
    assert not answers_own_calls(view_units([reply(result("a", "r"), call("a", "t"))]))  # answered too soon
    assert not answers_own_calls(view_units([reply(result("zz", "orphan"))]))


@given(contexts)
def test_messages_that_answer_their_own_calls_group_one_by_one(msgs: list[Message]) -> None:
    """`protocol_units` of such a history is each message's own protocol units, in turn."""
    alone = [view_units([message]) for message in msgs]
    if not all(answers_own_calls(units) for units in alone):
        return
    one_by_one: list[tuple[int, ...]] = []
    offset = 0
    for units in alone:
        one_by_one += [tuple(offset + i for i in g.units) for g in protocol_units(units)]
        offset += len(units)
    assert [g.units for g in protocol_units(view_units(msgs))] == one_by_one


def test_safe_cut_moves_back_to_the_start_of_a_straddling_unit() -> None:
    groups = [ProtocolUnit(units=(0,)), ProtocolUnit(units=(1, 2, 4)), ProtocolUnit(units=(3,))]
    assert [safe_cut(groups, k) for k in range(6)] == [0, 1, 1, 1, 1, 5]


@given(agent_histories(), st.data())
def test_safe_cuts_never_split_a_protocol_unit(msgs: list[Message], data: st.DataObject) -> None:
    groups = protocol_units(view_units(msgs))
    cut = safe_cut(groups, data.draw(st.integers(0, sum(len(g.units) for g in groups))))
    assert all(g.last < cut or g.first >= cut for g in groups)


def test_tallies_are_zero_sized_for_an_empty_context() -> None:
    assert unit_tallies([], COUNTER) == () and context_size([], COUNTER) == Tally(0, 0)


def view_without(msgs: list[Message], units: tuple[ViewUnit, ...], drop: set[int]) -> list[dict[str, Any]]:
    """The oracle: the view of `msgs` without the units `drop`, in order; a media message shows
    the images of its results that stay, and is gone when none stays."""
    kept = {(u.message, u.blocks[0]) for u in units if u.kind == "result" and u.index not in drop}
    out: list[dict[str, Any]] = []
    for wire, unit in zip(to_openai(msgs), units, strict=True):
        if unit.index in drop:
            continue
        if unit.kind != "media":
            out.append(wire)
            continue
        blocks = msgs[unit.message].blocks
        images = tuple(
            part
            for i in unit.blocks
            if (unit.message, i) in kept
            for part in getattr(blocks[i], "output", ())
            if isinstance(part, DataBlock)
        )
        if images:
            out.extend(to_openai([Message(role="user", blocks=images)]))
    return out


@given(contexts, st.data())
def test_dropping_units_keeps_the_views_order_media_included(
    msgs: list[Message], data: st.DataObject
) -> None:
    units = view_units(msgs)
    drawn = data.draw(st.sets(st.sampled_from(range(len(units))))) if units else set()
    for drop in [drawn, *({i} for i in range(len(units)))]:  # the drawn set and every single unit
        assert to_openai(drop_units(msgs, units, drop)) == view_without(msgs, units, drop), drop


def test_dropping_a_later_call_keeps_an_earlier_results_images_before_the_next_result() -> None:
    first = (call("a", "Read", path="x"), result("a", "ra", "Read", IMAGE))
    msgs = [reply(*first, call("b", "grep"), result("b", "rb"))]
    units = view_units(msgs)
    assert [u.kind for u in units] == ["calls", "result", "media", "calls", "result"]
    out = drop_units(msgs, units, {3})
    assert [w["role"] for w in to_openai(out)] == ["assistant", "tool", "user", "tool"]
    assert to_openai(out) == view_without(msgs, units, {3})


@given(contexts)
def test_every_split_keeps_every_block_in_order_and_protocol_units_partition_the_view(
    msgs: list[Message],
) -> None:
    units = view_units(msgs)
    blocks = [b for m in msgs for b in m.blocks if m.blocks]
    empty = [m for m in msgs if not m.blocks]
    for cut in range(len(units) + 1):  # a cut at a media unit too, where the views need not add up
        head, tail = split_at_unit(msgs, units, cut)
        assert [b for m in (*head, *tail) for b in m.blocks] == blocks
        assert [m for m in (*head, *tail) if not m.blocks] == empty  # a cut makes no empty piece
        if not media_straddles(units, cut):  # the head shows exactly the units before the cut
            assert len(view_units(head)) == cut
            assert to_openai(head) + to_openai(tail) == to_openai(msgs)
    groups = protocol_units(units)
    assert sorted(i for g in groups for i in g.units) == list(range(len(units)))
    assert [g.first for g in groups] == sorted(g.first for g in groups)


@given(contexts)
def test_each_unit_shows_its_own_blocks_and_has_its_roles_kind(msgs: list[Message]) -> None:
    shown = (TextBlock, DataBlock, ToolCallBlock)
    plain = {"system": "system", "user": "user", "assistant": "text"}
    for unit in view_units(msgs):
        blocks = msgs[unit.message].blocks
        if unit.kind in ("system", "user", "text", "calls"):
            assert unit.blocks == tuple(
                i for i in range(unit.start, unit.end) if isinstance(blocks[i], shown)
            )
            assert unit.kind == ("calls" if unit.call_ids else plain[msgs[unit.message].role])


def test_sizer_edits_and_tallies() -> None:
    tools = (ToolSchema.of(name="t", description="d", parameters={"type": "object"}),)
    sizer = Sizer(counter=COUNTER, tools=tools, overhead=Tally(400, 0))
    assert sizer.tokens(Tally(40, 0)) == COUNTER.total(Tally(440, 0), tools)
    old, new = [TextBlock(text="a" * 80)], [TextBlock(text="b" * 8), TextBlock(text="c" * 4)]
    assert tally_after(Tally(100, 0), COUNTER, old, new) == Tally(100, 0) - COUNTER.measure(old[0]) + Tally(
        12, 0
    )
    base = ToolResultBlock(id="x", name="t", output=(IMAGE,), state="error")
    assert with_output(base, "short") == ToolResultBlock(
        id="x", name="t", output=(TextBlock(text="short"),), state="error"
    )


def test_plain_messages_have_their_roles_kind() -> None:
    msgs = [text_message("system", "s"), user("u"), reply(TextBlock(text="a"))]
    assert [u.kind for u in view_units(msgs)] == ["system", "user", "text"]


def test_a_cut_at_the_media_unit_ending_a_message_keeps_the_message_before_it() -> None:
    msgs = [reply(call("a", "Read", path="x"), result("a", "ra", "Read", IMAGE)), user("next")]
    units = view_units(msgs)
    assert [(u.kind, u.start) for u in units][2] == ("media", 2)
    head, tail = split_at_unit(msgs, units, 2)
    assert head == (msgs[0],) and tail == (msgs[1],)


def test_calls_and_results_are_found_where_they_live() -> None:
    messages = [
        user("go"),
        reply(call("a", "Read", path="x"), result("a", "ra"), call("b", "grep"), result("b", "rb")),
        reply(call("a", "Read", path="y"), result("a", "again")),  # a later call of the same id wins
    ]
    calls = call_blocks(messages)
    assert {i: ref for i, (ref, _) in calls.items()} == {"a": BlockRef(2, 0), "b": BlockRef(1, 2)}
    assert all(messages[m].blocks[b] is block for i, ((m, b), block) in calls.items())
    results = [u for u in view_units(messages) if u.kind == "result"]
    assert [result_ref(u) for u in results] == [BlockRef(1, 1), BlockRef(1, 3), BlockRef(2, 1)]
    assert [result_block(messages, u) for u in results] == [
        messages[1].blocks[1],
        messages[1].blocks[3],
        messages[2].blocks[1],
    ]


def test_a_sizer_sizes_messages_with_its_own_counter() -> None:
    messages = [user("go"), reply(call("a", "Read", path="x"), result("a", "ra" * 50))]
    sizer = Sizer(counter=AgentScopeEstimator(), tools=())
    assert sizer.size(messages) == context_size(messages, AgentScopeEstimator())
    assert sizer.count(messages) == sizer.tokens(sizer.size(messages)) > 0


@given(
    st.lists(st.sampled_from(["[cleared]", "", "[cleared] ", "data"]), max_size=3),
    st.booleans(),
    st.sampled_from(["[cleared]", ""]),
)
def test_holds_only_is_the_output_compared_with_one_text(texts: list[str], image: bool, text: str) -> None:
    parts: tuple[TextBlock | DataBlock, ...] = tuple(TextBlock(text=t) for t in texts)
    output = (*parts, IMAGE) if image else parts
    block = ToolResultBlock(id="c1", name="read", output=output)
    assert holds_only(block, text) == (block.output == (TextBlock(text=text),))
