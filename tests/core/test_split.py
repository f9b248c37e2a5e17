"""Split points: AgentScope's message-level scan, block-level cut and orphan fixed point."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.compress import fixed_messages
from ctxlab.core.agentscope.split import Split, SplitError, SplitInput, split_context
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tokens import AgentScopeEstimator, measure_all
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import to_openai
from tests.strategies import paired_histories

EST = AgentScopeEstimator()
SYSTEM = "S" * 40  # 10 tokens


def call(i: str, size: int = 4) -> ToolCallBlock:
    return ToolCallBlock(id=i, name="t", input="x" * size)


def res(i: str, size: int = 400) -> ToolResultBlock:
    return ToolResultBlock(id=i, name="t", output=(TextBlock(text="r" * size),))


def do_split(
    context: list[Message],
    budget: float,
    summary: str = "",
    unfinished: frozenset[str] = frozenset(),
    tools: tuple[ToolSchema, ...] = (),
) -> Split:
    fixed = measure_all(EST, fixed_messages(SYSTEM, summary))
    return split_context(
        SplitInput(fixed=fixed, context=tuple(context), tools=tools, budget=budget, unfinished=unfinished),
        EST,
    )


def kinds(messages: tuple[Message, ...]) -> list[list[str]]:
    return [[f"{type(b).__name__[:-5]}:{getattr(b, 'id', '')}" for b in m.blocks] for m in messages]


def budget_of(history: list[Message], share: float) -> float:
    """A budget as a share of the whole request, so cuts land everywhere."""
    return share * EST.count([text_message("system", SYSTEM), *history], ())


shares = st.one_of(st.floats(0, 1.05), st.sampled_from([0.0, 0.5, 1.0]))


USER = text_message("user", "u" * 40, id="u1")
BATCH = Message(
    role="assistant",
    id="r1",
    name="agent",
    blocks=(
        TextBlock(text="t" * 40),
        call("a"),
        call("b"),
        call("c"),
        res("a"),
        res("b"),
        res("c"),
        call("d"),
        res("d"),
    ),
)


def test_everything_fits_compresses_nothing() -> None:
    split = do_split([USER], budget=10_000)
    assert split == Split(compress=(), reserve=(USER,))


def test_parallel_batch_is_never_split() -> None:
    # Budget keeps resC only by tokens; resC's call is earlier, so the cut cascades to the round.
    split = do_split([USER, BATCH], budget=10 + 101 + 102 + 100)
    assert kinds(split.reserve) == [["ToolCall:d", "ToolResult:d"]]
    assert kinds(split.compress)[-1][-1] == "ToolResult:c"
    wire = to_openai([*fixed_messages(SYSTEM, ""), *split.reserve])
    assert violations(wire, ["openai", "anthropic"]) == []


def test_cut_inside_a_batch_cascades_to_the_round_start() -> None:
    # By tokens, call c and every result fit; call b does not. resA and resB lose their calls, so
    # the cut moves past resB, which orphans resC, so it moves again: one round stays.
    split = do_split([USER, BATCH], budget=412)
    assert kinds(split.reserve) == [["ToolCall:d", "ToolResult:d"]]


def test_message_level_uses_ge_and_block_level_uses_gt() -> None:
    # The suffix from the user message equals the budget exactly: the message loop stops there
    # (>=) and the block loop keeps all of it (>), so the compressed region is empty.
    budget = EST.count([text_message("system", SYSTEM), USER], ())
    split = do_split([USER], budget=budget)
    assert split.compress == ()
    assert split.reserve == (USER,)


def test_empty_boundary_message_disappears() -> None:
    carrier = Message(role="assistant", blocks=(), id="r9", name="agent")
    split = do_split([USER, carrier], budget=1)
    assert split.compress == (USER,)
    assert split.reserve == ()


def test_unfinished_call_and_everything_after_are_reserved() -> None:
    reply = Message(
        role="assistant",
        id="r1",
        name="agent",
        blocks=(
            call("a"),
            res("a", 4000),
            call("z"),
        ),
    )
    split = do_split([USER, reply], budget=1, unfinished=frozenset({"z"}))
    assert kinds(split.reserve) == [["ToolCall:z"]]


def test_orphan_result_before_an_unfinished_call_moves_the_cut_earlier() -> None:
    # One response called A, B and the sequential compression tool Z: A and B ran first, Z is
    # still running. Compressing resA/resB's calls would need the cut past Z, so it moves before
    # the calls instead and the whole round is reserved.
    reply = Message(
        role="assistant",
        id="r1",
        name="agent",
        blocks=(
            call("a"),
            call("b"),
            call("z"),
            res("a"),
            res("b"),
        ),
    )
    split = do_split([USER, reply], budget=1, unfinished=frozenset({"z"}))
    assert split.compress == (USER,)
    assert kinds(split.reserve) == [
        ["ToolCall:a", "ToolCall:b", "ToolCall:z", "ToolResult:a", "ToolResult:b"]
    ]


def test_interleaved_results_around_an_unfinished_call_raise_instead_of_looping() -> None:
    # Deliberate deviation: here AgentScope's fixed-point loop alternates between two cuts forever.
    # The layout cannot arise from AgentScope's own loop (a round stores its calls first).
    reply = Message(
        role="assistant",
        id="r1",
        name="agent",
        blocks=(
            call("a"),
            call("b"),
            res("a"),
            call("z"),
            res("b"),
        ),
    )
    with pytest.raises(SplitError, match="does not settle"):
        do_split([USER, reply], budget=1, unfinished=frozenset({"z"}))


def test_orphan_whose_call_is_in_another_message_raises() -> None:
    first = Message(role="assistant", id="r1", name="agent", blocks=(call("a"),))
    second = Message(role="assistant", id="r2", name="agent", blocks=(call("z"), res("a")))
    because = "^an orphaned result's call is outside the boundary message, so the cut cannot move before it "
    with pytest.raises(SplitError, match=because):
        do_split([USER, first, second], budget=1, unfinished=frozenset({"z"}))


def test_a_budget_only_the_whole_context_exceeds_compresses_the_first_message() -> None:
    # The message scan stops at index 0; the block scan then compresses the user's one block.
    reply_message = Message(role="assistant", id="r1", name="agent", blocks=(TextBlock(text="t" * 40),))
    whole = EST.count([text_message("system", SYSTEM), USER, reply_message], ())
    split = do_split([USER, reply_message], budget=whole - 1)
    assert split == Split(compress=(USER,), reserve=(reply_message,))


def test_the_message_scan_counts_the_tools() -> None:
    # The budget is the request of the last message with the tools: the scan stops there and
    # keeps it whole (a tie), though without the tools the whole request would fit.
    tools = (ToolSchema.of("t", "d" * 400, {}),)
    reply_message = Message(role="assistant", id="r1", name="agent", blocks=(TextBlock(text="t" * 40),))
    budget = EST.count([text_message("system", SYSTEM), reply_message], tools)
    assert EST.count([text_message("system", SYSTEM), USER, reply_message], ()) < budget
    split = do_split([USER, reply_message], budget=budget, tools=tools)
    assert split == Split(compress=(USER,), reserve=(reply_message,))


def test_tools_and_summary_use_up_the_budget() -> None:
    tools = (ToolSchema.of("t", "d" * 400, {}),)
    assert do_split([USER, BATCH], budget=120, tools=tools).reserve == ()
    assert do_split([USER, BATCH], budget=120, summary="s" * 480).reserve == ()


@given(paired_histories(), shares)
def test_split_keeps_every_block_in_order_and_pairs_intact(history: list[Message], share: float) -> None:
    split = do_split(history, budget=budget_of(history, share))
    flat = [b for m in (*split.compress, *split.reserve) for b in m.blocks]
    assert flat == [b for m in history for b in m.blocks]
    wire = to_openai([*fixed_messages(SYSTEM, "sum"), *split.reserve])
    assert violations(wire, ["openai", "anthropic"]) == []


# --- parity with agentscope 2.0.11's own _split_context_for_compression ---------------------


def agentscope_split(history: list[Message], budget: float, summary: str, reply_id: str | None) -> Any:
    from tests.parity.agent import load_state, minimal_agent, run

    agent = minimal_agent(system_prompt=SYSTEM)
    load_state(agent, history, summary=summary, reply_id=reply_id)
    return run(agent._split_context_for_compression(budget, []))


@given(paired_histories(), shares, st.sampled_from(["", "old summary 旧摘要"]), st.booleans())
def test_split_equals_agentscope(history: list[Message], share: float, summary: str, running: bool) -> None:
    from tests.parity.agent import our_signature, signature

    unfinished: frozenset[str] = frozenset()
    reply_id = None
    if running:  # the reply is mid-round: its last call has no result yet
        last = history[-1]
        history = [*history[:-1], last.appended(call("running"))]
        unfinished, reply_id = frozenset({"running"}), last.id
    budget = budget_of(history, share)
    ours = do_split(history, budget=budget, summary=summary, unfinished=unfinished)
    theirs = agentscope_split(history, budget, summary, reply_id)
    assert our_signature(ours.compress) == signature(theirs[0])
    assert our_signature(ours.reserve) == signature(theirs[1])


# --- exact ties: the budget equal to a suffix's count -----------------------------------------


def tie_budgets(history: list[Message], summary: str) -> list[float]:
    """The request count of every suffix of `history`: budgets that tie the message-level scan."""
    fixed = measure_all(EST, fixed_messages(SYSTEM, summary))
    return [float(EST.total(fixed + measure_all(EST, history[k:]), ())) for k in range(len(history))]


def with_zero_tails(history: list[Message], where: list[bool]) -> list[Message]:
    """`history` with an empty text (zero tokens) closing the messages `where` marks."""
    return [m.appended(TextBlock(text="")) if mark else m for m, mark in zip(history, where, strict=False)]


def test_a_tie_stops_the_message_scan_before_a_message_ending_in_a_zero_token_block() -> None:
    # The budget equals the count of [system, last]: `>=` stops there and keeps `last` whole; `>`
    # would go one message further and reserve the reply's empty text as well.
    reply_message = Message(role="assistant", id="r1", name="agent", blocks=(TextBlock(text="t" * 40),))
    last = text_message("user", "v" * 40, id="u2")
    history = [USER, reply_message.appended(TextBlock(text="")), last]
    split = do_split(history, budget=tie_budgets(history, "")[2])
    assert split.compress == tuple(history[:2])
    assert split.reserve == (last,)


@given(paired_histories(), st.lists(st.booleans(), min_size=8, max_size=8), st.sampled_from(["", "旧摘要"]))
def test_split_equals_agentscope_at_every_exact_tie(
    history: list[Message], zero_tails: list[bool], summary: str
) -> None:
    pytest.importorskip("agentscope")
    from tests.parity.agent import our_signature, signature

    history = with_zero_tails(history, zero_tails)
    for budget in tie_budgets(history, summary):
        ours = do_split(history, budget=budget, summary=summary)
        theirs = agentscope_split(history, budget, summary, None)
        assert our_signature(ours.compress) == signature(theirs[0]), budget
        assert our_signature(ours.reserve) == signature(theirs[1]), budget
