"""LangChain's approximate count of a stored history, read along the stored messages
(`count_stored`), equals the count of its LangChain view whatever was counted before."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.message import Message, text_message
from ctxlab.presets.lc_messages import ApproxParams, count_stored, count_tokens, lc_view
from tests.strategies import paired_histories


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
