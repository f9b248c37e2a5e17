"""LangChain's approximate count of a stored history, read along the stored messages
(`count_stored`), equals the count of its LangChain view whatever was counted before; a long
message's, read along its blocks, equals that of its LangChain messages made afresh; a cleared
result's shift is what clearing it changes of a history's count."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    HintBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.edits import with_output
from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import Message, Role, text_message
from ctxlab.core.messages.resumable import forget
from ctxlab.core.messages.units import placed_units
from ctxlab.core.wire.views import to_openai_one
from ctxlab.presets.lc_count import ApproxParams, count_stored, count_tokens, noted_count, result_shift
from ctxlab.presets.lc_messages import LCMessage, _lc_part, lc_view
from tests.strategies import data_blocks, paired_histories, parts, text_blocks, texts, tool_inputs


@given(paired_histories(), st.booleans(), st.data())
def test_a_stored_history_counts_as_its_view_whatever_was_counted_before(
    history: list[Message], scaling: bool, data: st.DataObject
) -> None:
    params = ApproxParams(use_usage_metadata_scaling=scaling)
    held = tuple(history)
    for end in range(len(held) + 1):  # a history growing, as a run counts it at every call
        assert count_stored(held[:end], params) == count_tokens(lc_view(held[:end]), params)
    at = data.draw(st.integers(0, max(0, len(held) - 1)))
    edited = (*held[:at], text_message("user", "[cleared]"), *held[at + 1 :])  # as clearing edits
    assert count_stored(edited, params) == count_tokens(lc_view(edited), params)
    assert count_stored(held, params) == count_tokens(lc_view(held), params)  # and back


long_blocks = st.one_of(
    st.builds(
        lambda k, i: ToolCallBlock(id=f"c{k}", name=f"t{k % 3}", input=i), st.integers(0, 9), tool_inputs()
    ),
    st.builds(
        lambda k, out, listed: ToolResultBlock(
            id=f"c{k}", name=f"t{k % 3}", output=tuple(out), listed=listed
        ),
        st.integers(0, 9),
        st.lists(parts, max_size=3),
        st.booleans(),
    ),
    text_blocks,
    data_blocks,
    st.builds(ThinkingBlock, thinking=texts, wire_field=st.sampled_from([None, "reasoning_content"])),
    st.builds(HintBlock, hint=st.one_of(texts, st.lists(parts, max_size=2).map(tuple))),
)


def afresh(message: Message) -> tuple[LCMessage, ...]:
    """A stored message's LangChain messages made from its whole view, nothing kept."""
    wires = to_openai_one(message)
    return tuple(map(_lc_part, [message] * len(wires), wires, placed_units(message, 0, 0)))


@given(
    st.lists(long_blocks, min_size=RESUMED_BLOCKS, max_size=RESUMED_BLOCKS + 30),
    st.sampled_from(["assistant", "user"]),
    st.builds(
        ApproxParams,
        chars_per_token=st.sampled_from([4.0, 3.3, 2.5]),
        extra_tokens_per_message=st.sampled_from([3.0, 0.7, 2.25]),
        count_name=st.booleans(),
    ),
    st.data(),
)
def test_a_long_message_counts_as_its_langchain_messages_made_afresh_as_it_grows_and_is_edited(
    blocks: list[Block], role: Role, params: ApproxParams, data: st.DataObject
) -> None:
    """A long message is counted along its blocks (a reply that grows), never through its view:
    each count, as it grows a block at a time, is cut back or has a result cleared, equals the
    count of its LangChain messages made afresh, after any message before it."""
    before = (text_message("user", data.draw(texts)),)
    message = Message(role=role, blocks=tuple(blocks[:RESUMED_BLOCKS]), id="r")
    for block in [*blocks[RESUMED_BLOCKS:], None]:
        shown = (*before, message)
        expected = count_tokens((*lc_view(before), *afresh(message)), params)
        assert count_stored(shown, params) == expected
        action = data.draw(st.sampled_from(["grow", "grow", "cut", "clear"]))
        if action == "cut":
            message = message.with_blocks(message.blocks[: data.draw(st.integers(0, len(message.blocks)))])
        elif action == "clear":
            message = message.with_blocks(
                tuple(
                    with_output(b, "[cleared]") if isinstance(b, ToolResultBlock) else b
                    for b in message.blocks
                )
            )
        if block is not None:
            message = message.appended(block)


@given(
    paired_histories(),
    st.builds(
        ApproxParams,
        chars_per_token=st.sampled_from([4.0, 3.3, 2.5]),
        extra_tokens_per_message=st.sampled_from([3.0, 0.0, 0.7]),
        count_name=st.booleans(),
    ),
    st.sampled_from(["[cleared]", "", "中文 placeholder"]),
    st.data(),
)
def test_a_result_s_shift_is_what_clearing_it_changes_of_any_history_s_count(
    history: list[Message], params: ApproxParams, placeholder: str, data: st.DataObject
) -> None:
    """`result_shift` is the change of the whole history's count when one result is cleared,
    wherever it stands (short message or long, among media), or None: media, or a fractional
    overhead per message."""
    held = tuple(history)
    results = [
        (at, k) for at, m in enumerate(held) for k, b in enumerate(m.blocks) if isinstance(b, ToolResultBlock)
    ]
    if not results:
        return
    at, k = data.draw(st.sampled_from(results))
    result = held[at].blocks[k]
    assert isinstance(result, ToolResultBlock)
    cleared = with_output(result, placeholder)
    blocks = (*held[at].blocks[:k], cleared, *held[at].blocks[k + 1 :])
    edited = (*held[:at], held[at].with_blocks(blocks), *held[at + 1 :])
    shift = result_shift(result, cleared, params)
    media = any(isinstance(p, DataBlock) for p in result.output)
    assert (shift is None) == (media or not params.extra_tokens_per_message.is_integer())
    if shift is not None:
        whole = count_tokens(lc_view(edited), params) - count_tokens(lc_view(held), params)
        assert shift == whole


def test_a_noted_count_is_given_for_that_very_tuple_only_and_forgotten() -> None:
    """`noted_count` stands for a count worked out otherwise: the very tuple (with those
    parameters) gives it, an equal one is counted, and `forget()` drops it."""
    history = (text_message("user", "abcdefgh"), text_message("assistant", "ok"))
    true = count_tokens(lc_view(history))
    assert noted_count(history, true) == true == count_stored(history)
    noted_count(history, true + 7)  # a wrong note shows it is read, not the history
    assert count_stored(history) == true + 7
    assert count_stored(tuple(list(history))) == true  # an equal tuple is no noted one
    assert count_stored(history, ApproxParams(chars_per_token=2.0)) != true + 7
    forget()
    assert count_stored(history) == true
