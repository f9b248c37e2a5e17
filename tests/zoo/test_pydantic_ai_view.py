"""pydantic-ai's history read message by message equals the history read wire by wire.

`pa_view` works each stored message's requests and responses out once for the place it stands
in and joins requests across messages; the reference here reads the whole OpenAI view in one
pass, the way the history is defined (docs in `ctxlab.presets.pydantic_ai.view`).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import Block, HintBlock, ToolResultBlock
from ctxlab.core.messages.message import GROWN, Message, Role, text_message
from ctxlab.core.messages.resumable import forget
from ctxlab.core.messages.units import view_units
from ctxlab.core.wire.views import to_openai
from ctxlab.presets.pydantic_ai.returns import return_text
from ctxlab.presets.pydantic_ai.view import (
    Frame,
    PAMessage,
    PAPart,
    PartKind,
    _message_read,
    estimate_stored_tokens,
    estimate_tokens,
    merged_keys,
    message_chars,
    pa_view,
)
from tests.strategies import blocks, texts
from tests.zoo_strategies import agent_histories

FRAME = Frame(head="<summary>\n", tail="\n</summary>", file_reference="[file {id}]")


def _text(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def reference(messages: Sequence[Message], frame: Frame, joined: Collection[str]) -> tuple[PAMessage, ...]:
    """The history read wire by wire over the whole context."""
    out: list[PAMessage] = []
    for index, (wire, unit) in enumerate(zip(to_openai(messages), view_units(messages), strict=True)):
        if wire["role"] == "assistant":
            parts = (
                [PAPart(kind="text", unit=index, text=_text(wire["content"]))] if wire.get("content") else []
            )
            parts += [
                PAPart(
                    kind="call",
                    unit=index,
                    text=c["function"]["arguments"],
                    name=c["function"]["name"],
                    call_id=c["id"],
                )
                for c in wire.get("tool_calls") or ()
            ]
            out.append(PAMessage(kind="response", parts=tuple(parts)))
            continue
        open_request = out[-1] if out and out[-1].is_request else None
        if unit.kind == "media":  # the files of a batch of results belong to their returns
            continue
        if wire["role"] == "tool":
            result = messages[unit.message].blocks[unit.blocks[0]]
            assert isinstance(result, ToolResultBlock)
            text = return_text(result, frame.file_reference) if result.tally.ndata else _text(wire["content"])
            part = PAPart(
                kind="return",
                unit=index,
                text=text,
                name=result.name,
                call_id=wire["tool_call_id"],
            )
            merge = open_request is not None and all(p.kind == "return" for p in open_request.parts)
        else:
            key, text = messages[unit.message].id, _text(wire["content"])
            summary = frame.unwrap(text)
            kind: PartKind = "user" if summary is None else "summary"
            content = wire["content"]
            several = summary is None and isinstance(content, list) and len(content) > 1
            shown = " ".join(p["text"] for p in content if p["type"] == "text") if several else None
            part = PAPart(
                kind=kind, unit=index, key=key, text=text if summary is None else summary, shown=shown
            )
            merge = open_request is not None and key in joined
        if merge and open_request is not None:
            out[-1] = PAMessage(kind="request", parts=(*open_request.parts, part))
        else:
            out.append(PAMessage(kind="request", parts=(part,)))
    return tuple(out)


@st.composite
def contexts(draw: st.DrawFn) -> tuple[list[Message], frozenset[str]]:
    """A history with stored summaries and consecutive user turns, and a set of joined ids."""
    history = draw(agent_histories())
    for at in draw(st.lists(st.integers(0, len(history)), max_size=3)):
        text = FRAME.wrap(f"summary {at}") if draw(st.booleans()) else f"more {at}"
        history.insert(at, text_message("user", text, id=f"s{at}-{len(history)}"))
    ids = sorted({m.id for m in history if m.role == "user"})
    joined = draw(st.frozensets(st.sampled_from(ids))) if ids else frozenset()
    return history, joined


@given(contexts(), st.integers(0, 6))
def test_the_history_is_read_message_by_message_as_wire_by_wire(
    drawn: tuple[list[Message], frozenset[str]], dropped: int
) -> None:
    history, joined = drawn
    # the whole history, then a window that lost its front, then the whole again: what is kept
    # for a message at one place is never used for it at another
    for messages in (history, history[dropped:], history):
        assert pa_view(messages, FRAME, joined) == reference(messages, FRAME, joined)
        assert estimate_stored_tokens(messages, FRAME, "abc") == estimate_tokens(
            reference(messages, FRAME, ()), "abc"
        )


@given(contexts(), st.data())
def test_the_history_read_as_it_grows_and_merges_is_the_history_read_afresh(
    drawn: tuple[list[Message], frozenset[str]], data: st.DataObject
) -> None:
    history, joined = drawn
    ids = sorted({m.id for m in history if m.role == "user"})
    for size in range(len(history) + 1):  # a run's history, merged differently now and then
        if ids and data.draw(st.booleans()):
            joined = data.draw(st.frozensets(st.sampled_from(ids)))
        messages = history[:size]
        assert pa_view(messages, FRAME, joined) == reference(messages, FRAME, joined)
        assert estimate_stored_tokens(messages, FRAME, "") == estimate_tokens(
            reference(messages, FRAME, ()), ""
        )
    cut = history[: len(history) // 2]
    assert pa_view(cut, FRAME, joined) == reference(cut, FRAME, joined)


@given(contexts(), st.data())
def test_a_history_known_grown_from_the_last_one_read_is_read_as_afresh(
    drawn: tuple[list[Message], frozenset[str]], data: st.DataObject
) -> None:
    """A run's context is a tuple noted (`GROWN`) as beginning with the one before: the view
    resumes by that note, without comparing, and still reads as a fresh read (also across a
    merge that changed, an edited copy and a cut, which no note vouches for)."""
    history, joined = drawn
    ids = sorted({m.id for m in history if m.role == "user"})
    before: tuple[Message, ...] = ()
    for size in range(len(history) + 1):
        if ids and data.draw(st.booleans()):
            joined = data.draw(st.frozensets(st.sampled_from(ids)))
        messages = tuple(history[:size])
        if data.draw(st.booleans()):
            GROWN.note(messages, before, min(len(before), size))
        assert pa_view(messages, FRAME, joined) == reference(messages, FRAME, joined)
        before = messages
    if history:
        at = data.draw(st.integers(0, len(history) - 1))
        edited = (*history[:at], text_message("user", "edited"), *history[at + 1 :])
        GROWN.note(edited, before, at)
        assert pa_view(edited, FRAME, joined) == reference(list(edited), FRAME, joined)
    cut = tuple(history[: len(history) // 2])
    assert pa_view(cut, FRAME, joined) == reference(list(cut), FRAME, joined)
    forget()


def merged_plainly(history: Sequence[PAMessage]) -> frozenset[str]:
    """The keys of the requests that follow a request, read pair by pair over the history."""
    return frozenset(
        message.parts[0].key
        for before, message in itertools.pairwise(history)
        if before.is_request and message.is_request and message.parts[0].key
    )


@given(contexts(), st.data())
def test_the_merged_keys_of_a_history_as_it_grows_or_is_cut_are_those_read_pair_by_pair(
    drawn: tuple[list[Message], frozenset[str]], data: st.DataObject
) -> None:
    history, joined = drawn
    for size in [*range(len(history) + 1), data.draw(st.integers(0, len(history)))]:
        view = pa_view(history[:size], FRAME, joined)
        assert merged_keys(view) == merged_plainly(view)


def test_a_merge_undone_or_moved_is_read_again() -> None:
    front = [text_message("user", f"z{k}", id=f"z{k}") for k in range(4)]
    second, third = (text_message("user", t, id=t) for t in ("b", "c"))
    merged = pa_view([*front, second], FRAME, {"b"})
    assert len(merged) == 4  # b appended to the request of z3
    assert pa_view([*front, second], FRAME, ()) == reference([*front, second], FRAME, ())  # undone
    pa_view([third, *front, third, second], FRAME, ())
    pa_view([third, *front], FRAME, ())
    pa_view([third, *front, second], FRAME, ())  # b now stands where c stood
    moved = [third, *front, second]
    assert pa_view(moved, FRAME, {"b"}) == reference(moved, FRAME, {"b"})


def _read_whole(message: Message, first: int, key_joined: bool) -> tuple[tuple[PAMessage, ...], int]:
    """A message's requests, responses and characters, read from its first block (no resuming)."""
    from ctxlab.core.messages import memo

    saved, memo.RESUMED_BLOCKS = memo.RESUMED_BLOCKS, 10**9
    try:
        return _message_read(message, first, FRAME, key_joined)
    finally:
        memo.RESUMED_BLOCKS = saved


long_reply_blocks = st.one_of(blocks, st.builds(HintBlock, hint=texts.map(FRAME.wrap)))


@given(
    st.lists(long_reply_blocks, min_size=20, max_size=60),
    st.sampled_from(["user", "assistant"]),
    st.data(),
)
def test_a_long_message_read_by_resuming_reads_as_a_whole_read(
    grown: list[Block], role: Role, data: st.DataObject
) -> None:
    """A reply grows a block at a time; each version resumes the read of one it begins with, also
    after it was cut short (its end or its front dropped) and grew again, was read at another place
    or joined otherwise, or another long message was read in between."""
    from ctxlab.core.messages.resumable import forget

    forget()
    message = Message(role=role, blocks=(), id="reply")
    lead = text_message("user", "go", id="go")
    for block in grown:
        message = message.appended(block)
        step = data.draw(st.sampled_from(["grow", "grow", "grow", "cut", "front", "other"]))
        if step == "cut":
            message = message.with_blocks(message.blocks[: data.draw(st.integers(0, len(message.blocks)))])
        elif step == "front":
            message = message.with_blocks(message.blocks[data.draw(st.integers(0, len(message.blocks))) :])
        elif step == "other":
            _message_read(Message(role="assistant", blocks=tuple(reversed(grown))), 1, FRAME, False)
        first, key_joined = data.draw(st.integers(0, 2)), data.draw(st.booleans())
        read = _message_read(message, first, FRAME, key_joined)
        assert read == _read_whole(message, first, key_joined)
        assert _message_read(message, first, FRAME, key_joined) == read  # read again: the kept read
        items, chars = _message_read(message, 0, FRAME, key_joined)
        assert items == reference([message], FRAME, {"reply"} if key_joined else ())
        assert chars == message_chars(items)
        joined = {"reply"} if key_joined else set()
        assert pa_view([lead, message], FRAME, joined) == reference([lead, message], FRAME, joined)


@given(contexts(), st.integers(0, 4), st.booleans())
def test_a_cleared_history_is_counted_by_what_clearing_took(
    drawn: tuple[list[Message], frozenset[str]], keep_pairs: int, clear_inputs: bool
) -> None:
    """`ClearStep` counts the cleared history from the stored one's characters less what clearing
    took; a message clearing left alone is the same object."""
    from ctxlab.presets.pydantic_ai import harness

    history = pa_view(drawn[0], FRAME, drawn[1])
    plan = harness.clear_plan(history, keep_pairs=keep_pairs, exclude_tools=(), clear_inputs=clear_inputs)
    new = harness.cleared(history, plan, "[cleared]")
    assert message_chars(new) == message_chars(history) - harness.chars_cleared(history, new)
    assert all(m is n or m != n for m, n in zip(history, new, strict=True))
