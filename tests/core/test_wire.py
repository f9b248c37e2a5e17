"""Provider views: OpenAI and Anthropic shapes, and the OpenAI round trip."""

from __future__ import annotations

import json
import re

from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import (
    ZERO,
    Block,
    DataBlock,
    HintBlock,
    Tally,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.message import Message, Role, text_message
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.units import ViewUnit
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import anthropic_id, anthropic_tool, events, from_openai, to_anthropic, to_openai
from tests.oracles import broken_pairs
from tests.strategies import blocks, messages, paired_histories


def call(i: str) -> ToolCallBlock:
    return ToolCallBlock(id=i, name="retrieve", input='{"q": "' + i + '"}')


def result(i: str, *parts: TextBlock | DataBlock) -> ToolResultBlock:
    return ToolResultBlock(id=i, name="retrieve", output=parts or (TextBlock(text="r" + i),))


REPLY = Message(
    role="assistant",
    id="r1",
    blocks=(
        HintBlock(hint="<time>", source="runtime"),
        ThinkingBlock(thinking="plan"),
        TextBlock(text="Checking two sources."),
        call("a"),
        call("b"),
        result("a", TextBlock(text="ra"), DataBlock(media_type="image/png", source="https://x/p.png")),
        result("b"),
        TextBlock(text="Done."),
    ),
)


def test_openai_view_splits_a_reply_like_the_formatter() -> None:
    wire = to_openai([text_message("system", "sys"), text_message("user", "hi"), REPLY])
    assert [m["role"] for m in wire] == [
        "system",
        "user",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    assert wire[2]["content"] == "<time>"
    assert wire[3]["content"] == "Checking two sources."
    assert [c["id"] for c in wire[3]["tool_calls"]] == ["a", "b"]
    assert wire[4] == {"role": "tool", "tool_call_id": "a", "content": "ra"}
    assert wire[6]["content"][0]["type"] == "image_url"  # tool images follow the batch
    assert wire[7]["content"] == "Done."
    assert violations(wire, ["openai", "anthropic", "bedrock"]) == []


def test_anthropic_view_alternates_roles_with_results_first() -> None:
    system, turns = to_anthropic([text_message("system", "sys"), text_message("user", "hi"), REPLY])
    assert system == "sys"
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in turns[1]["content"]] == ["text", "tool_use", "tool_use"]
    assert [b["type"] for b in turns[2]["content"]] == ["tool_result", "tool_result", "image"]
    assert turns[1]["content"][1]["input"] == {"q": "a"}


def test_events_list_texts_then_calls_then_each_result_with_its_texts() -> None:
    reply = Message(
        role="assistant",
        blocks=(call("a"), TextBlock(text="after"), result("a", TextBlock(text="ra")), TextBlock(text="")),
    )
    assert events([text_message("user", "go"), reply]) == [
        ("text", "go"),
        ("text", "after"),
        ("call", 'a:retrieve:{"q": "a"}'),
        ("result", "a"),
        ("text", "ra"),
    ]


@given(st.lists(messages, max_size=6))
def test_openai_round_trip_keeps_texts_calls_and_results_in_order(msgs: list[Message]) -> None:
    assert events(from_openai(to_openai(msgs))) == events(msgs)


@given(paired_histories())
def test_well_formed_history_has_no_violations(history: list[Message]) -> None:
    wire = to_openai([text_message("system", "s"), *history])
    assert broken_pairs(wire) == []
    _, turns = to_anthropic(history)
    if not turns:  # blank texts only: the system prompt alone, which Anthropic and Bedrock refuse
        found = violations(wire, ["openai", "anthropic", "bedrock"])
        assert [(v.rule, v.kind) for v in found] == [(r, "empty_request") for r in ("anthropic", "bedrock")]
        return
    assert violations(wire, ["openai", "anthropic"]) == []
    # A first user message of blank texts is no turn, so Bedrock would see the reply first.
    expected = ["assistant_first"] if turns[0]["role"] == "assistant" else []
    assert [v.kind for v in violations(wire, ["bedrock"])] == expected


@given(messages)
@example(REPLY)  # a batch whose first result returns an image and whose second does not
def test_view_sizes_are_the_sizes_of_the_view_units(message: Message) -> None:
    """A view message owns the blocks of its unit; a media message counts its results' images,
    which the results do not."""
    from ctxlab.core.messages.sizes import view_sizes
    from ctxlab.core.messages.tokens import AgentScopeEstimator
    from ctxlab.core.messages.units import view_units
    from ctxlab.core.wire.views import to_openai_one

    counter = AgentScopeEstimator()
    units = view_units((message,))
    found = view_sizes(message, counter)
    assert found.sizes == tuple(_owned_size(message, unit, counter) for unit in units)
    assert len(found.sizes) == len(to_openai_one(message))
    assert found.unseen == (counter.measure_message(message) if not units else (0, 0))


@given(messages)
@example(REPLY)
def test_a_piece_is_the_view_its_sizes_and_facts_read_apart(message: Message) -> None:
    """The one read both meters share gives what the three reads of a message give apart."""
    from ctxlab.core.messages.sizes import sent_view_sizes
    from ctxlab.core.wire.piece import piece_of
    from ctxlab.core.wire.protocol import fact_of, facts_of_message
    from ctxlab.core.wire.views import to_openai_one

    counter = AgentScopeEstimator()
    piece, wires = piece_of(message, counter), to_openai_one(message)
    assert piece.message is message and piece.wire == tuple(wires)
    assert (piece.sizes, piece.unseen) == sent_view_sizes(message, counter)
    assert piece.facts == facts_of_message(message) == tuple(fact_of(w) for w in wires)
    assert piece.views == tuple(zip(piece.wire, piece.sizes, piece.facts, strict=True))
    assert piece_of(message, counter) is piece  # read once while remembered


@given(messages)
@example(REPLY)
def test_sizes_as_sent_are_the_sizes_of_the_message_without_its_unsent_thinking(message: Message) -> None:
    """What the provider receives: thinking sent in no field counts nothing, the rest as it is."""
    from ctxlab.core.messages.sizes import sent_view_sizes, view_sizes

    counter = AgentScopeEstimator()
    kept = tuple(b for b in message.blocks if not (isinstance(b, ThinkingBlock) and not b.wire_field))
    assert sent_view_sizes(message, counter) == view_sizes(message.with_blocks(kept), counter)


def _owned_size(message: Message, unit: ViewUnit, counter: AgentScopeEstimator) -> Tally:
    blocks = message.blocks
    owned = sum((counter.measure(b) for b in blocks[unit.start : unit.end]), ZERO)
    images = [p for i in unit.blocks if isinstance(r := blocks[i], ToolResultBlock) for p in r.output]
    data = sum((counter.measure(p) for p in images if isinstance(p, DataBlock)), ZERO)
    return owned + data if unit.kind == "media" else owned - data if unit.kind == "result" else owned


IMAGE = DataBlock(media_type="image/png", source="https://x/p.png")


def test_from_openai_names_results_after_their_calls_and_keeps_images() -> None:
    msgs = [
        Message(role="system", blocks=(TextBlock(text="s"),)),
        Message(role="user", blocks=(TextBlock(text="u"),)),
        Message(role="assistant", blocks=(call("a"), result("a", TextBlock(text="r"), IMAGE))),
    ]
    back = from_openai([*to_openai(msgs), {"role": "tool", "tool_call_id": "zz", "content": "late"}])
    assert [m.role for m in back] == ["system", "user", "assistant", "assistant", "user", "assistant"]
    assert [b.name for m in back for b in m.blocks if isinstance(b, ToolCallBlock | ToolResultBlock)] == [
        "retrieve",
        "retrieve",
        "",
    ]
    assert back[4].blocks == (DataBlock(media_type="image/*", source=IMAGE.source),)


def test_from_openai_reads_missing_arguments_and_call_ids_as_empty() -> None:
    bare = {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "t"}}]}
    (message,) = from_openai([bare])
    assert message.blocks == (ToolCallBlock(id="a", name="t", input=""),)
    (lone,) = from_openai([{"role": "tool", "content": "late"}])  # a result naming no call
    assert lone.blocks == (ToolResultBlock(id="", name="", output=(TextBlock(text="late"),)),)


def test_the_texts_of_a_multi_part_system_message_or_result_reach_the_anthropic_view() -> None:
    # Two texts make a list of parts in the OpenAI view; the Anthropic view keeps their text.
    msgs = [
        Message(role="system", blocks=(TextBlock(text="rules "), TextBlock(text="apply"))),
        text_message("user", "go"),
        Message(
            role="assistant",
            blocks=(call("a"), result("a", TextBlock(text="first "), TextBlock(text="second"))),
        ),
    ]
    assert isinstance(to_openai(msgs)[0]["content"], list)
    system, turns = to_anthropic(msgs)
    assert system == "rules apply"
    assert turns[-1]["content"] == [{"type": "tool_result", "tool_use_id": "a", "content": "first second"}]


def test_the_anthropic_system_text_is_the_text_of_the_system_messages_alone() -> None:
    # The Messages API takes the system prompt as text: an image in a system message is not sent.
    image = DataBlock(media_type="image/png", source="https://x/p.png")
    msgs = [Message(role="system", blocks=(TextBlock(text="rules"), image)), text_message("user", "go")]
    assert isinstance(to_openai(msgs)[0]["content"], list)
    assert to_anthropic(msgs)[0] == "rules"


def test_arguments_that_are_not_a_json_object_reach_the_anthropic_view_whole_under_raw() -> None:
    for arguments in ("[1, 2]", "3", "not json"):
        reply = Message(role="assistant", blocks=(ToolCallBlock(id="a", name="t", input=arguments),))
        (turn,) = to_anthropic([reply])[1]
        assert turn["content"][0]["input"] == {"raw": arguments}


def test_arguments_holding_nan_or_infinity_reach_the_anthropic_view_whole_under_raw() -> None:
    """Python's `json.dumps` writes NaN and infinities bare, and a transcript written so holds
    them; read as an object they made the recorded Anthropic request invalid JSON."""
    for arguments in ('{"x": NaN}', '{"x": [Infinity]}', '{"x": {"y": -Infinity}}'):
        reply = Message(role="assistant", blocks=(ToolCallBlock(id="a", name="t", input=arguments),))
        (turn,) = to_anthropic([reply])[1]
        assert turn["content"][0]["input"] == {"raw": arguments}
        json.dumps(turn, allow_nan=False)
    # A string that spells one is JSON.
    reply = Message(role="assistant", blocks=(ToolCallBlock(id="a", name="t", input='{"x": "NaN"}'),))
    assert to_anthropic([reply])[1][0]["content"][0]["input"] == {"x": "NaN"}


def test_a_call_id_the_messages_api_refuses_reaches_it_as_one_it_takes() -> None:
    """The API refuses ids outside `^[a-zA-Z0-9_-]+$`; a transcript from an OpenAI-compatible
    server holds such ids (`write_todos:14`): the call and its result get one valid id."""
    reply = Message(role="assistant", blocks=(call("write_todos:14"), result("write_todos:14")))
    _, turns = to_anthropic([text_message("user", "plan"), reply])
    use, answer = turns[1]["content"][0], turns[2]["content"][0]
    assert use["id"] == answer["tool_use_id"] == "write_todos_14_4e9c0ca5"
    assert (
        to_anthropic([text_message("user", "plan"), Message(role="assistant", blocks=(call("ok_1-a"),))])[1][
            1
        ]["content"][0]["id"]
        == "ok_1-a"
    )


@given(st.text(max_size=12), st.text(max_size=12))
@example("a:b", "a_b")
@example("a:b", "a.b")
def test_anthropic_ids_match_the_api_pattern_and_keep_ids_apart(one: str, other: str) -> None:
    for call_id in (one, other):
        assert re.fullmatch(r"[a-zA-Z0-9_-]+", anthropic_id(call_id))
        if re.fullmatch(r"[a-zA-Z0-9_-]+", call_id):
            assert anthropic_id(call_id) == call_id
    assert (anthropic_id(one) == anthropic_id(other)) == (one == other)


def test_an_openai_tool_as_the_anthropic_api_defines_it() -> None:
    tool = {
        "type": "function",
        "function": {"name": "t", "description": "d", "parameters": {"type": "object"}},
    }
    assert anthropic_tool(tool) == {"name": "t", "description": "d", "input_schema": {"type": "object"}}
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    search = {"type": "function", "function": {"name": "s", "description": "find", "parameters": schema}}
    assert anthropic_tool(search) == {"name": "s", "description": "find", "input_schema": schema}
    bare = anthropic_tool({"type": "function", "function": {"name": "t"}})
    assert bare == {"name": "t", "description": "", "input_schema": {"type": "object"}}


def test_the_anthropic_view_is_the_messages_api_request_key_for_key() -> None:
    # Every key as the Messages API names it: a misspelt one is a request the API refuses.
    png = DataBlock(media_type="image/png", source="data:image/png;base64,iVBORw0KGgo=")
    web = DataBlock(media_type="image/png", source="https://example.com/a.png")
    pdf = DataBlock(media_type="application/pdf", source="data:application/pdf;base64,JVBERi0=")
    history = [
        text_message("system", "s"),
        text_message("user", "go"),
        Message(
            role="assistant",
            blocks=(TextBlock(text="Reading."), call("a"), result("a", TextBlock(text="ra"), png)),
            id="r",
        ),
        Message(role="user", blocks=(TextBlock(text="more"), web, pdf), id="u"),
    ]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert to_anthropic(history) == (
        "s",
        [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "a", "name": "retrieve", "input": {"q": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "ra"},
                    image,
                    {"type": "text", "text": "more"},
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
                    },
                ],
            },
        ],
    )


def test_the_openai_view_is_the_chat_completions_request_key_for_key() -> None:
    pdf = DataBlock(media_type="application/pdf", source="data:application/pdf;base64,JVBERi0=")
    png = DataBlock(media_type="image/png", source="data:image/png;base64,iVBORw0KGgo=")
    history = [
        text_message("system", "s"),
        Message(role="user", blocks=(TextBlock(text="read"), pdf), id="u"),
        Message(
            role="assistant",
            blocks=(TextBlock(text="Reading."), call("a"), result("a", TextBlock(text="ra"), png)),
            id="r",
        ),
    ]
    file = {"file_data": "data:application/pdf;base64,JVBERi0=", "media_type": "application/pdf"}
    assert to_openai(history) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "read"}, {"type": "file", "file": file}]},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "retrieve", "arguments": '{"q": "a"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "ra"},
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}],
        },
    ]


def _read_whole(message: Message, counter: AgentScopeEstimator) -> tuple[object, ...]:
    """A message's view, sizes and facts, each read from its first block (no resuming)."""
    from ctxlab.core.messages import memo

    saved, memo.RESUMED_BLOCKS = memo.RESUMED_BLOCKS, 10**9
    try:
        return _read(message, counter)
    finally:
        memo.RESUMED_BLOCKS = saved


def _read(message: Message, counter: AgentScopeEstimator) -> tuple[object, ...]:
    """Every read of one message that resumes: its view, sizes and facts, apart and in one piece,
    its units where it stands alone and placed further on, and its calls (the memos by identity
    are not asked)."""
    from ctxlab.core.messages.sizes import sent_view_sizes, view_sizes
    from ctxlab.core.messages.units import _message_calls, _place_units
    from ctxlab.core.wire.piece import _piece
    from ctxlab.core.wire.protocol import facts_of_message
    from ctxlab.core.wire.views import to_openai_one

    piece = _piece(message, counter)[1:]
    sizes = view_sizes(message, counter), sent_view_sizes(message, counter)
    views = to_openai_one(message), *sizes, facts_of_message(message), piece
    units = _place_units(message, 0, 0), _place_units(message, 3, 7)
    return (*views, *units, tuple(_message_calls(message, 3, 0)))


@given(st.lists(blocks, min_size=20, max_size=60), st.sampled_from(["user", "assistant"]), st.data())
def test_a_long_message_read_by_resuming_reads_as_a_whole_read(
    grown: list[Block], role: Role, data: st.DataObject
) -> None:
    """A reply grows a block at a time; each version resumes the read of one it begins with, also
    after an early block was edited, its front was cut (a window: the read may resume inside an
    earlier one) or another long message was read in between."""
    from ctxlab.core.messages.resumable import forget

    forget()
    counter = AgentScopeEstimator()
    message = Message(role=role, blocks=(), id="reply")
    for block in grown:
        message = message.appended(block)
        step = data.draw(st.sampled_from(["grow", "grow", "edit", "front", "other"]))
        if step == "front":
            message = message.with_blocks(message.blocks[data.draw(st.integers(0, len(message.blocks))) :])
        elif step == "edit" and len(message.blocks) > 1:
            at = data.draw(st.integers(0, len(message.blocks) - 2))
            edited = (*message.blocks[:at], data.draw(blocks), *message.blocks[at + 1 :])
            message = message.with_blocks(edited)
        elif step == "other":
            _read(Message(role="assistant", blocks=tuple(reversed(grown))), counter)
        whole = _read_whole(message, counter)
        assert _read(message, counter) == whole
        assert _read(message, counter) == whole  # read again: the kept read, whole


@given(paired_histories(), st.lists(st.integers(0, 12), min_size=1, max_size=6), st.data())
def test_a_reply_whose_front_a_window_cuts_reads_as_a_whole_read(
    history: list[Message], cuts: list[int], data: st.DataObject
) -> None:
    """A long reply of rounds, cut at its front (at a round's end or inside one) and grown again,
    reads as a whole read: a read that resumes inside an earlier one (`LeadingScan`, anywhere)
    takes its parts from where the cut left them."""
    from dataclasses import replace

    from ctxlab.core.messages.resumable import forget

    forget()
    counter = AgentScopeEstimator()
    rounds = [replace(b) for _ in range(4) for m in history if m.role == "assistant" for b in m.blocks]
    reply = Message(role="assistant", blocks=tuple(rounds), id="reply")
    for cut in cuts:
        grown = data.draw(st.lists(blocks, max_size=3))
        reply = reply.with_blocks((*reply.blocks[cut:], *grown))
        assert _read(reply, counter) == _read_whole(reply, counter)


def test_a_reply_cut_after_a_round_takes_the_views_and_facts_read_before() -> None:
    """A window that cuts a long reply's first rounds: its view messages and facts are the very
    objects the read of the whole reply made (resumed inside it, not read again)."""
    from ctxlab.core.messages.sizes import view_sizes
    from ctxlab.core.wire.piece import piece_of
    from ctxlab.core.wire.protocol import facts_of_message
    from ctxlab.core.wire.views import openai_one

    rounds = [
        block
        for i in range(12)
        for block in (
            TextBlock(text=f"step {i}"),
            ToolCallBlock(id=f"c{i}", name="Read", input="{}"),
            ToolResultBlock(id=f"c{i}", name="Read", output=(TextBlock(text="x" * i),)),
        )
    ]
    reply = Message(role="assistant", blocks=tuple(rounds), id="reply")
    counter = AgentScopeEstimator()
    views, facts = openai_one(reply), facts_of_message(reply)
    sizes = view_sizes(reply, counter).sizes
    piece = piece_of(reply, counter)
    cut = reply.with_blocks((*reply.blocks[6:], TextBlock(text="done")))  # two rounds fewer
    assert all(a is b for a, b in zip(openai_one(cut)[:-1], views[4:], strict=True))
    assert all(a is b for a, b in zip(facts_of_message(cut)[:-1], facts[4:], strict=True))
    assert view_sizes(cut, counter).sizes[:-1] == sizes[4:]
    assert all(a is b for a, b in zip(piece_of(cut, counter).views[:-1], piece.views[4:], strict=True))


@given(messages, st.lists(blocks, max_size=4))
def test_a_message_with_blocks_appended_is_the_message_made_with_them(
    message: Message, more: list[Block]
) -> None:
    """`appended` adds the new blocks' tally to the message's own instead of summing all again."""
    import dataclasses

    from ctxlab.core.messages.message import _FIELDS

    grown = message.appended(*more)
    made = Message(role=message.role, blocks=(*message.blocks, *more), id=message.id, name=message.name)
    assert grown == made and grown.tally == made.tally
    assert tuple(f.name for f in dataclasses.fields(Message)) == _FIELDS  # every field is copied


@given(messages, st.lists(blocks, min_size=1, max_size=6), st.integers(1, 3))
def test_a_grown_messages_view_is_known_to_share_all_its_earlier_views_but_the_open_end(
    message: Message, more: list[Block], appends: int
) -> None:
    from ctxlab.core.messages.memo import RESUMED_BLOCKS
    from ctxlab.core.messages.message import GROWN
    from ctxlab.core.wire.piece import piece_of
    from ctxlab.core.wire.protocol import facts_of_message
    from ctxlab.core.wire.views import openai_one, to_openai_one

    counter = AgentScopeEstimator()
    long = message.appended(*more * RESUMED_BLOCKS)  # long enough to be read by resuming
    for view in (openai_one, facts_of_message, lambda m: piece_of(m, counter).views):
        old = view(long)
        grown = long
        for _ in range(appends):
            grown = grown.appended(*more)
        new = view(grown)
        known = GROWN.shared(new, old) or 0  # None: nothing known (a view of the open end only)
        assert known >= len(old) - 2  # the open end: a media message, or one being built
        assert all(a is b for a, b in zip(new[:known], old[:known], strict=True))
    assert openai_one(grown) == tuple(to_openai_one(grown))


def test_a_long_reply_read_as_it_grows_and_is_cut_keeps_its_columns_those_of_its_views() -> None:
    """Each read of a growing reply takes the columns of the read before up to what the two
    share; whatever came before, a piece's columns are its views' and the three reads apart."""
    from ctxlab.core.messages.memo import RESUMED_BLOCKS
    from ctxlab.core.messages.sizes import view_sizes
    from ctxlab.core.wire.piece import piece_of
    from ctxlab.core.wire.protocol import facts_of_message
    from ctxlab.core.wire.views import openai_one

    counter = AgentScopeEstimator()
    reply = Message(role="assistant", blocks=(), id="reply")
    for i in range(RESUMED_BLOCKS + 6):
        reply = reply.appended(
            TextBlock(text=f"step {i}"),
            ToolCallBlock(id=f"c{i}", name="Read", input="{}"),
            ToolResultBlock(id=f"c{i}", name="Read", output=(TextBlock(text="x" * (i % 7)),)),
        )
        if i % 9 == 8:  # now and then a window cuts the reply's first rounds
            reply = reply.with_blocks(reply.blocks[3:])
        piece = piece_of(reply, counter)
        assert (piece.wire, piece.sizes, piece.facts) == tuple(zip(*piece.views, strict=True))
        assert piece.wire == openai_one(reply) and piece.facts == facts_of_message(reply)
        assert piece.sizes == view_sizes(reply, counter).sizes
