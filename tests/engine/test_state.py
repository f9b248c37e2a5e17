"""The state's context transitions: what they make, and what the lineage says they share."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.compress import ReplyMark
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.message import GROWN, LINEAGE_WORTH, Message, same_leading, text_message
from ctxlab.core.messages.tokens import AgentScopeEstimator, measure_all
from ctxlab.core.world.script import DEFAULT_START
from ctxlab.engine.clock import VirtualClock
from ctxlab.engine.state import EpisodeState, append_message, append_to_reply, evolve, with_context

EST = AgentScopeEstimator()


def _state(length: int) -> EpisodeState:
    history = tuple(text_message("user" if i % 2 else "assistant", f"m{i}") for i in range(length))
    state = EpisodeState(clock=VirtualClock(instant=DEFAULT_START))
    return evolve(with_context(state, history, EST), reply=ReplyMark(reply_id="r0", has_usage=False))


@given(st.integers(0, 3), st.lists(st.sampled_from(["user", "blocks", "reply"]), max_size=40))
def test_a_context_grows_as_written_out_and_its_lineage_never_overstates(
    short: int, steps: list[str]
) -> None:
    """Appending a message, adding blocks to the reply (replacing the context's last message, or
    starting the reply) and starting a new reply give the context written out plainly, its tally
    recounted; the lineage says how many leading messages each context shares with the one
    before, never more than they do, and all but the last when only the reply changed."""
    state = _state(LINEAGE_WORTH - short)
    plain: list[Message] = list(state.context)
    for n, step in enumerate(steps):
        before = state.context
        if step == "user":
            message = text_message("user", f"u{n}")
            state, plain = append_message(state, message, EST), [*plain, message]
        elif step == "reply":
            state = evolve(state, reply=ReplyMark(reply_id=f"r{n}", has_usage=False))
        else:
            block = TextBlock(text=f"b{n}")
            replaced = plain[-1].role == "assistant" and plain[-1].id == state.reply.reply_id
            state = append_to_reply(state, (block,), EST)
            plain = [*plain[:-1], plain[-1].appended(block)] if replaced else [*plain, state.context[-1]]
            if replaced and len(before) >= LINEAGE_WORTH:
                assert GROWN.shared(state.context, before) == len(before) - 1
        assert list(state.context) == plain
        assert state.context_tally == measure_all(EST, plain)
        known = GROWN.shared(state.context, before)
        assert known is None or known <= same_leading(state.context, before)
