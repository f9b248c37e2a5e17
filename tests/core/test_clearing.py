"""Clearing and masking families, deepagents' large-result eviction, the protocol-blind window."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.clearing import (
    AnthropicClearParams,
    clear_tool_uses,
)
from ctxlab.core.compaction.large_results import (
    LargeResultParams,
    apply_result_offload,
    plan_result_offload,
    plan_result_offloads,
    result_preview,
)
from ctxlab.core.compaction.observations import (
    LastNObservationsParams,
    elide_observations,
)
from ctxlab.core.compaction.window import SlidingWindowParams, slide_window
from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    sum_tallies,
)
from ctxlab.core.messages.drops import drop_front, drop_units, system_units_before
from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import Message, Role, text_message
from ctxlab.core.messages.sizes import (
    Sizer,
    unit_tallies,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.messages.units import BlockRef, protocol_units, view_units
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import to_openai
from tests.strategies import blocks, messages, paired_histories
from tests.zoo_strategies import IMAGE, agent_histories, call, lines, reply, result, user

SIZER = Sizer(counter=AgentScopeEstimator())


def outputs(msgs: tuple[Message, ...] | list[Message]) -> list[str]:
    return [b.text for m in msgs for b in m.blocks if isinstance(b, ToolResultBlock)]


def inputs(msgs: tuple[Message, ...]) -> list[str]:
    return [b.input for m in msgs for b in m.blocks if isinstance(b, ToolCallBlock)]


def rounds(count: int, size: int = 400, tool: str = "search") -> list[Message]:
    """A user message, then `count` rounds of one call and a result of `size` bytes."""
    blocks = []
    for k in range(count):
        blocks += [call(f"c{k}", tool, q=k), result(f"c{k}", str(k) * size, tool)]
    return [user("go"), reply(*blocks, TextBlock(text="done"))]


# Anthropic clear_tool_uses_20250919 -------------------------------------------------------


def test_anthropic_clearing_waits_for_the_trigger() -> None:
    msgs = rounds(6)
    tokens = SIZER.count(msgs)
    out = clear_tool_uses(msgs, sizer=SIZER, params=AnthropicClearParams(trigger=tokens))
    assert (
        out.cleared == () and out.messages == tuple(msgs) and out.tokens_before == out.tokens_after == tokens
    )


def test_anthropic_clearing_keeps_the_three_most_recent_tool_uses() -> None:
    msgs = rounds(6)
    out = clear_tool_uses(msgs, sizer=SIZER, params=AnthropicClearParams(trigger=10))
    placeholder = AnthropicClearParams().placeholder
    assert out.cleared == ("c0", "c1", "c2")
    assert outputs(out.messages) == [placeholder] * 3 + ["3" * 400, "4" * 400, "5" * 400]
    assert inputs(out.messages) == inputs(tuple(msgs))  # inputs stay by default
    assert out.tokens_after == SIZER.count(out.messages) < out.tokens_before


def test_anthropic_clearing_of_inputs_all_or_by_tool() -> None:
    msgs = [
        user("go"),
        reply(
            call("a", "grep", q=1), call("b", "bash", q=2), result("a", "x", "grep"), result("b", "y", "bash")
        ),
    ]
    every = clear_tool_uses(
        msgs, sizer=SIZER, params=AnthropicClearParams(trigger=0, keep=0, clear_tool_inputs=True)
    )
    assert inputs(every.messages) == ["{}", "{}"] and every.inputs_cleared == ("a", "b")
    some = clear_tool_uses(
        msgs, sizer=SIZER, params=AnthropicClearParams(trigger=0, keep=0, clear_tool_inputs=("bash",))
    )
    assert inputs(some.messages) == ['{"q": 1}', "{}"]


def test_anthropic_excluded_tools_count_toward_keep_but_are_never_cleared() -> None:
    msgs = [
        user("go"),
        reply(
            *[
                b
                for k, t in enumerate(["memory", "s", "s", "s", "s"])
                for b in (call(f"c{k}", t), result(f"c{k}", "r" * 100, t))
            ]
        ),
    ]
    out = clear_tool_uses(
        msgs, sizer=SIZER, params=AnthropicClearParams(trigger=0, exclude_tools=("memory",))
    )
    assert out.cleared == ("c1",)


def test_anthropic_clear_at_least_is_all_or_nothing() -> None:
    msgs = rounds(5, size=400)  # clearing the 2 oldest reclaims about 2 × 100 tokens
    assert clear_tool_uses(
        msgs, sizer=SIZER, params=AnthropicClearParams(trigger=0, clear_at_least=150)
    ).cleared == ("c0", "c1")
    none = clear_tool_uses(msgs, sizer=SIZER, params=AnthropicClearParams(trigger=0, clear_at_least=500))
    assert none.cleared == () and none.messages == tuple(msgs)


def test_anthropic_clearing_that_grows_the_request_applies_only_without_a_minimum() -> None:
    msgs = [user("go"), reply(call("a", "s"), result("a", "x", "s"), call("b", "s"), result("b", "y", "s"))]
    grown = clear_tool_uses(msgs, sizer=SIZER, params=AnthropicClearParams(trigger=0, keep=0))
    assert grown.cleared == ("a", "b") and grown.tokens_after > grown.tokens_before
    assert (
        clear_tool_uses(
            msgs, sizer=SIZER, params=AnthropicClearParams(trigger=0, keep=0, clear_at_least=0)
        ).cleared
        == ()
    )


def test_anthropic_trigger_on_tool_uses() -> None:
    msgs = rounds(4)
    assert (
        clear_tool_uses(
            msgs, sizer=SIZER, params=AnthropicClearParams(trigger=4, trigger_kind="tool_uses")
        ).cleared
        == ()
    )
    assert clear_tool_uses(
        msgs, sizer=SIZER, params=AnthropicClearParams(trigger=3, trigger_kind="tool_uses")
    ).cleared == ("c0",)


def test_anthropic_clearing_leaves_cleared_results_alone() -> None:
    params = AnthropicClearParams(trigger=0, persist=True)
    once = clear_tool_uses(rounds(5), sizer=SIZER, params=params)
    again = clear_tool_uses(once.messages, sizer=SIZER, params=params)
    assert again.cleared == () and again.messages == once.messages


# LangChain ClearToolUsesEdit ------------------------------------------------------------------


# SWE-agent last_n_observations -----------------------------------------------------------------


def test_swe_agent_keeps_the_last_n_and_never_the_task() -> None:
    msgs = [
        user("the task"),
        reply(*[b for k in range(8) for b in (call(f"c{k}", "bash"), result(f"c{k}", lines(k + 1), "bash"))]),
    ]
    out = elide_observations(msgs, LastNObservationsParams(n=5))
    assert out.cleared == ("c0", "c1", "c2")
    assert outputs(out.messages)[:3] == [f"[earlier tool output elided: {k} lines]" for k in (1, 2, 3)]
    assert outputs(out.messages)[3:] == outputs(msgs)[3:]


def test_swe_agent_polling_moves_the_window_in_steps() -> None:
    def elided(count: int) -> int:
        msgs = [
            user("t"),
            reply(*[b for k in range(count) for b in (call(f"c{k}", "bash"), result(f"c{k}", "x", "bash"))]),
        ]
        return len(elide_observations(msgs, LastNObservationsParams(n=2, polling=3)).cleared)

    assert [elided(k) for k in range(1, 9)] == [0, 0, 0, 0, 3, 3, 3, 6]  # keeps between n and n + polling


def test_swe_agent_counts_images_and_spares_the_first_observation_without_a_task() -> None:
    pdf = DataBlock(media_type="application/pdf", source="https://example.com/a.pdf")
    parts = (IMAGE, pdf, TextBlock(text="c\nd\n"))
    msgs = [reply(*[b for k in range(7) for b in (call(f"c{k}", "s"), result(f"c{k}", "a\nb", "s", *parts))])]
    out = elide_observations(msgs, LastNObservationsParams(n=5))
    assert out.cleared == ("c1",)  # c0 stands in for the task and is never elided
    # lines of every text part, images only (SWE-agent counts `image_url` parts, nothing else)
    assert outputs(out.messages)[1] == "[earlier tool output elided: 4 lines] [1 images elided]"


def test_swe_agent_counts_a_round_of_parallel_calls_as_one_observation() -> None:
    rounds = [[call(f"c{k}.{j}", "bash") for j in range(k % 2 + 1)] for k in range(6)]
    blocks = [b for batch in rounds for b in (*batch, *(result(c.id, "x", "bash") for c in batch))]
    out = elide_observations([user("task"), reply(*blocks)], LastNObservationsParams(n=4))
    # seven observations (the task and six steps): steps 0 and 1 go, both results of step 1 with it
    assert out.cleared == ("c0.0", "c1.0", "c1.1")


def test_swe_agent_keep_and_remove_tools_act_as_its_tags_and_removal_wins() -> None:
    blocks = [
        b for k in range(6) for b in (call(f"c{k}", "ls" if k % 2 else "cat"), result(f"c{k}", "x", "cat"))
    ]
    msgs = [user("task"), reply(*blocks)]
    named = [replace_name(m) for m in msgs]
    base = elide_observations(named, LastNObservationsParams(n=3)).cleared
    assert base == ("c0", "c1", "c2")
    kept = elide_observations(named, LastNObservationsParams(n=3, keep_tools=("ls",))).cleared
    assert kept == ("c0", "c2")
    both = LastNObservationsParams(n=3, keep_tools=("ls",), remove_tools=("ls",))
    assert elide_observations(named, both).cleared == ("c0", "c1", "c2", "c3", "c5")


def test_swe_agent_deviation_a_demonstration_stands_in_for_the_task_and_later_users_do_not_count() -> None:
    steps = [b for k in range(6) for b in (call(f"c{k}", "bash"), result(f"c{k}", "x", "bash"))]
    plain = elide_observations([user("task"), reply(*steps)], LastNObservationsParams(n=2)).cleared
    demo = [user("a demonstration"), user("task"), reply(*steps[:6]), user("and now"), reply(*steps[6:])]
    assert elide_observations(demo, LastNObservationsParams(n=2)).cleared == plain == ("c0", "c1", "c2", "c3")
    # demonstration steps written as calls (as the importer writes text actions) count as steps
    # and are elided themselves, where SWE-agent never touches a demonstration
    shown = [user("demo"), reply(call("d0", "bash"), result("d0", "x", "bash")), user("task"), reply(*steps)]
    assert elide_observations(shown, LastNObservationsParams(n=2)).cleared == ("d0", "c0", "c1", "c2", "c3")


def test_swe_agent_polling_below_1_is_refused() -> None:
    with pytest.raises(ValueError, match="polling=0"):
        LastNObservationsParams(n=5, polling=0)


def notice_of(result: ToolResultBlock, params: LastNObservationsParams) -> str:
    """SWE-agent's notice: the text parts' lines, and the images when there are any."""
    text_lines = sum(len(p.text.splitlines()) for p in result.output if isinstance(p, TextBlock))
    images = sum(1 for p in result.output if isinstance(p, DataBlock) and p.is_image)
    notice = params.notice.replace("{lines}", str(text_lines))
    return notice + params.media_notice.replace("{count}", str(images)) if images else notice


def elided_at_once(
    msgs: list[Message], params: LastNObservationsParams
) -> tuple[tuple[Message, ...], tuple[str, ...]]:
    """The window read from the whole history at once: one observation per protocol unit with
    results, and the first user unit's; all but the first and the last `n` (in steps of
    `polling`) elided, `keep_tools` spared, `remove_tools` elided wherever they stand."""
    units = view_units(msgs)
    first_user = next((u.index for u in units if u.kind == "user"), None)
    steps = []
    for group in protocol_units(units):
        results = [units[i] for i in group.units if units[i].kind == "result"]
        if results or group.first == first_user:
            steps.append(results)
    last_removed = max(0, len(steps) // params.polling * params.polling - params.n)
    blocks = [list(m.blocks) for m in msgs]
    cleared = []
    for k, step in enumerate(steps):
        for unit in step:
            old = msgs[unit.message].blocks[unit.blocks[0]]
            assert isinstance(old, ToolResultBlock)
            windowed = 1 <= k < last_removed and old.name not in params.keep_tools
            notice = (TextBlock(text=notice_of(old, params)),)
            if (windowed or old.name in params.remove_tools) and old.output != notice:
                blocks[unit.message][unit.blocks[0]] = dataclasses.replace(old, output=notice)
                cleared.append(old.id)
    return tuple(m.with_blocks(tuple(b)) for m, b in zip(msgs, blocks, strict=True)), tuple(cleared)


@st.composite
def observed_histories(draw: st.DrawFn) -> list[Message]:
    """Stored histories, well formed or not, some with messages cut in two (so that results
    answer the calls of the message before theirs)."""
    history = draw(st.one_of(agent_histories(), paired_histories(), st.lists(messages, max_size=5)))
    if not draw(st.booleans()):
        return history
    cut: list[Message] = []
    for message in history:
        at = draw(st.none() | st.integers(0, len(message.blocks)))
        halves = (
            [message]
            if at is None
            else [message.with_blocks(message.blocks[:at]), message.with_blocks(message.blocks[at:])]
        )
        cut.extend(halves)
    return cut


def grown(history: list[Message]) -> Iterator[list[Message]]:
    """The history as a run stores it, each message growing block by block; then without its
    first message, then whole again."""
    for m, message in enumerate(history):
        for b in range(1, max(len(message.blocks), 1) + 1):
            yield [*history[:m], message.with_blocks(message.blocks[:b])]
    yield history[1:]
    yield history


TOOL_SETS = st.lists(st.sampled_from(["Read", "grep", "Bash", "bash", "retrieve"]), max_size=2).map(tuple)
window_params = st.builds(
    LastNObservationsParams,
    n=st.integers(1, 4),
    polling=st.integers(1, 3),
    keep_tools=TOOL_SETS,
    remove_tools=TOOL_SETS,
)


@given(observed_histories(), window_params)
def test_swe_agent_window_read_message_by_message_is_the_window_read_at_once(
    history: list[Message], params: LastNObservationsParams
) -> None:
    for seen in grown(history):
        out = elide_observations(seen, params)
        assert (out.messages, out.cleared) == elided_at_once(seen, params)
        assert all(new is old for new, old in zip(out.messages, seen, strict=True) if new == old)
        again = elide_observations(seen, params)  # the same copies, so the meters reuse their work
        assert all(a is b for a, b in zip(again.messages, out.messages, strict=True))
    twice = elide_observations(out.messages, params)  # a notice already in place is left alone
    assert (twice.messages, twice.cleared) == elided_at_once(list(out.messages), params)


ROUND_IDS = st.sampled_from(["a", "b", "c"])
ROUNDS = st.lists(ROUND_IDS, min_size=1, max_size=2).map(
    lambda ids: [*(call(i, "bash") for i in ids), *(result(i, lines(2), "bash") for i in ids)]
)
OTHERS = st.one_of(
    st.builds(lambda i: [call(i, "ls")], ROUND_IDS),
    st.sampled_from([[TextBlock(text="step")], [HintBlock(hint="<note>")], [ThinkingBlock(thinking="so")]]),
)
round_blocks = st.one_of(ROUNDS, ROUNDS, OTHERS)
"""The blocks a reply gains: mostly rounds of calls and their results, sometimes a call left
unanswered, text, a hint or thinking."""
TASKS: list[list[Block]] = [[], [TextBlock(text="task")], [TextBlock(text="task"), HintBlock(hint="")]]
"""How a message may begin: in a user message, text shown before any call is its first user unit."""


@given(
    st.tuples(st.sampled_from(TASKS), st.lists(round_blocks, min_size=6, max_size=30)).map(
        lambda drawn: [*drawn[0], *(b for r in drawn[1] for b in r)]
    ),
    st.none() | st.tuples(st.integers(0, 100), ROUND_IDS),
    st.sampled_from(["user", "assistant"]),
    window_params,
    st.data(),
)
def test_swe_agent_reads_a_long_message_by_resuming_as_it_reads_it_whole(
    grown: list[Block],
    stray: tuple[int, str] | None,
    role: Role,
    params: LastNObservationsParams,
    data: st.DataObject,
) -> None:
    """A reply grows a block at a time, is sometimes cut short and grows again, and another long
    message is read in between; each version's observations and elided copies are those read
    from the whole message, the very blocks included. A stray result (of an earlier batch, or of
    none) puts the observations out of block order from where it stands."""
    from ctxlab.core.compaction.observations import (
        _elide_each,
        _whole_observations,
        elide_message,
        message_observations,
    )
    from ctxlab.core.messages.resumable import forget

    forget()
    if stray is not None:
        grown.insert(min(stray[0], len(grown)), result(stray[1], "x", "ls"))
    message = Message(role=role, blocks=(), id="reply")
    at = 0
    while at < len(grown):
        message, at = message.appended(grown[at]), at + 1
        step = data.draw(st.sampled_from(["grow"] * 6 + ["cut", "other"]))
        if step == "cut":  # a few blocks back, so that the message still grows long
            cut = data.draw(st.integers(max(0, len(message.blocks) - 8), len(message.blocks)))
            message, at = message.with_blocks(message.blocks[:cut]), cut
        elif step == "other":
            message_observations(Message(role="assistant", blocks=tuple(reversed(grown))))
        whole = _whole_observations(message)
        assert message_observations(message) == whole
        user_seen = data.draw(st.booleans())
        steps = whole.counted(user_seen)
        first, end = data.draw(st.integers(0, 2)), data.draw(st.integers(0, len(steps) + 1))
        expected = _elide_each(message, steps, first, end, params)
        out = elide_message(message, user_seen, first, end, params)
        assert out == expected
        assert all(a is b for a, b in zip(out.message.blocks, expected.message.blocks, strict=True))
        assert out.message.tally == sum_tallies(out.message.blocks)  # kept running, not summed


def test_swe_agent_reads_a_long_reply_of_rounds_by_resuming() -> None:
    """A reply of rounds, each result answering the batch before it, is read by the block scan."""
    from ctxlab.core.compaction.observations import _scan_observations

    blocks = [b for k in range(10) for b in (call(f"c{k}", "bash"), result(f"c{k}", "x", "bash"))]
    read = _scan_observations(reply(*blocks))
    assert read is not None
    assert read.steps == tuple((2 * k + 1,) for k in range(10))


def replace_name(message: Message) -> Message:
    """Each result named after its call's tool."""
    names = {b.id: b.name for b in message.blocks if isinstance(b, ToolCallBlock)}
    blocks = tuple(
        dataclasses.replace(b, name=names[b.id]) if isinstance(b, ToolResultBlock) else b
        for b in message.blocks
    )
    return message.with_blocks(blocks)


# deepagents eviction of large tool results ----------------------------------------------------


def test_deepagents_evicts_results_over_80000_characters() -> None:
    params = LargeResultParams()
    small = result("a/b.c", "x" * 80_000, "bash")
    assert plan_result_offload(small) is None
    big = result("a/b.c", "x" * 80_001, "bash")
    plan = plan_result_offload(big)
    assert plan is not None and plan.path == "/large_tool_results/a_b_c" and plan.content == "x" * 80_001
    assert plan_result_offload(result("r", "x" * 90_000, "read_file"), params) is None  # excluded tool


def test_deepagents_replaces_the_result_with_a_stub_and_a_head_and_tail_preview() -> None:
    text = "\n".join(f"row {k}" for k in range(30_000))
    big = ToolResultBlock(id="c1", name="bash", output=(TextBlock(text=text), IMAGE), state="error")
    plan = plan_result_offload(big)
    assert plan is not None
    out = apply_result_offload(big, plan, "/ws/large/c1")
    assert out.id == "c1" and out.state == "error" and out.output[1] == IMAGE
    stub = out.text
    assert "c1" in stub and "/ws/large/c1" in stub
    assert (
        "     1\trow 0\n" in stub
        and "     5\trow 4\n... [29990 lines omitted] ...\n 29996\trow 29995" in stub
    )
    assert stub.rstrip().endswith(" 30000\trow 29999")


def test_the_stub_is_filled_in_one_pass() -> None:
    big = result("id-{path}", "x" * 80_001, "bash")
    plan = plan_result_offload(big)
    assert plan is not None
    text = apply_result_offload(big, plan, "/p").text
    assert "tool call id-{path} was" in text and "saved at /p." in text


def test_preview_shows_short_content_whole_and_clips_long_lines() -> None:
    assert result_preview("a\nb") == "     1\ta\n     2\tb"
    assert result_preview("y" * 2000) == "     1\t" + "y" * 1000


def test_deepagents_scans_a_context_for_large_results() -> None:
    msgs = [
        reply(
            call("a", "bash"), result("a", "x" * 90_000, "bash"), call("b", "bash"), result("b", "ok", "bash")
        )
    ]
    [(ref, plan)] = plan_result_offloads(msgs)
    assert ref == BlockRef(0, 1) and plan.call_id == "a"


# the protocol-blind sliding window ------------------------------------------------------------


def test_the_window_drops_view_messages_from_the_front_and_can_orphan() -> None:
    msgs = [text_message("system", "s"), *rounds(3, size=400)]
    budget = SIZER.count(msgs) - 2  # less than the user message and the first call
    out = slide_window(msgs, sizer=SIZER, params=SlidingWindowParams(max_tokens=budget))
    assert out.dropped == (1, 2)  # the user message and the first call; its result is now alone
    assert [u.kind for u in view_units(out.messages)][:3] == ["system", "result", "calls"]
    found = violations(to_openai(out.messages), ["openai", "anthropic"])
    assert [(v.rule, v.kind, v.call_id) for v in found] == [
        ("openai", "orphan_result", "c0"),
        ("anthropic", "orphan_result", "c0"),
    ]


def test_the_window_keeps_system_messages_and_a_minimum() -> None:
    msgs = [text_message("system", "s"), *rounds(2)]
    out = slide_window(msgs, sizer=SIZER, params=SlidingWindowParams(max_tokens=0, min_messages=2))
    assert [u.kind for u in view_units(out.messages)] == ["system", "text"]
    blind = slide_window(msgs, sizer=SIZER, params=SlidingWindowParams(max_tokens=0, keep_system=False))
    assert [u.kind for u in view_units(blind.messages)] == ["text"]


def test_a_window_that_drops_nothing_gives_back_the_very_history() -> None:
    """The history itself, not a copy: what read it (its size, its units) finds it at once."""
    msgs = (text_message("system", "s"), *rounds(3, size=400))
    for params in (SlidingWindowParams(max_tokens=10**9), SlidingWindowParams(max_tokens=0, min_messages=99)):
        out = slide_window(msgs, sizer=SIZER, params=params)
        assert out.messages is msgs and out.dropped == () and out.tokens == SIZER.count(msgs)


def test_the_window_keeps_the_images_a_result_returned_with_the_result() -> None:
    """A tool's images are sent after its result, but they are the result's own: a window that
    stopped between them dropped both and sent nothing, below `min_messages`."""
    msgs = [user("read it"), reply(call("c1", "Read")), reply(result("c1", "x" * 40, "Read", IMAGE))]
    assert [u.kind for u in view_units(msgs)] == ["user", "calls", "result", "media"]
    out = slide_window(msgs, sizer=SIZER, params=SlidingWindowParams(max_tokens=10))
    assert out.dropped == (0, 1)
    assert [u.kind for u in view_units(out.messages)] == ["result", "media"]
    assert [w["role"] for w in to_openai(out.messages)] == ["tool", "user"]


def walked_window(msgs: list[Message], sizer: Sizer, params: SlidingWindowParams) -> tuple[int, ...]:
    """The window's drops found the plain way: take off each dropped unit's size and count the
    request again, one unit at a time."""
    units = view_units(msgs)
    sizes = unit_tallies(msgs, sizer.counter)
    tally = sizer.size(msgs)
    dropped: list[int] = []
    for unit in units:
        if sizer.tokens(tally) <= params.max_tokens or len(units) - len(dropped) <= params.min_messages:
            break
        if params.keep_system and unit.kind == "system":
            continue
        dropped.append(unit.index)
        tally = tally - sizes[unit.index]
    kept = [u for u in units if u.index not in dropped and not (params.keep_system and u.kind == "system")]
    if kept and kept[0].kind == "media":  # its images are its results': they stay with them
        media = kept[0]
        holders = [
            u.index
            for u in units
            if u.kind == "result" and u.message == media.message and set(u.blocks) & set(media.blocks)
        ]
        dropped = [d for d in dropped if d < min(holders)]
    return tuple(dropped)


windows = st.builds(
    SlidingWindowParams,
    max_tokens=st.integers(0, 3000),
    keep_system=st.booleans(),
    min_messages=st.integers(0, 6),
)


@given(agent_histories(), st.lists(st.integers(0, 8), max_size=3), windows, st.sampled_from([0, 120]))
def test_the_window_stops_where_a_walk_counting_after_every_drop_stops(
    msgs: list[Message], systems: list[int], params: SlidingWindowParams, tools: int
) -> None:
    for at in sorted(systems, reverse=True):  # system prompts anywhere, the front included
        msgs.insert(min(at, len(msgs)), text_message("system", f"rules {at}"))
    sizer = Sizer(counter=AgentScopeEstimator(), tools=(ToolSchema(name="t", description="d" * tools),))
    out = slide_window(msgs, sizer=sizer, params=params)
    assert out.dropped == walked_window(msgs, sizer, params)
    assert out.messages == drop_units(msgs, view_units(msgs), out.dropped)
    assert out.tokens == sizer.count(out.messages)


@given(st.lists(st.tuples(st.integers(1, 3), st.integers(200, 4000)), min_size=1, max_size=8), st.booleans())
def test_a_window_sliding_along_a_long_history_counts_what_it_keeps(
    steps: list[tuple[int, int]], keep_system: bool
) -> None:
    """A history longer than what is summed directly, grown by turns and windowed at every step
    (the kept messages' size read off the history's running sums): the window the walk finds,
    and its tokens counted afresh."""
    history: list[Message] = [text_message("system", "rules")]
    for turn in range(20):
        history += [user(f"question {turn}"), reply(TextBlock(text=f"answer {turn} " * turn))]
    for turns, budget in steps:
        for turn in range(turns):
            history += [user(f"more {turn}"), reply(call(f"m{len(history)}", "search", q=turn))]
            history += [reply(result(f"m{len(history) - 1}", "r" * 90, "search"))]
        params = SlidingWindowParams(max_tokens=budget, keep_system=keep_system)
        msgs = tuple(history)
        out = slide_window(msgs, sizer=SIZER, params=params)
        assert out.dropped == walked_window(history, SIZER, params)
        assert out.tokens == SIZER.tokens(sum_tallies(out.messages))


@given(st.lists(st.tuples(st.integers(1, 12), st.integers(100, 3000)), min_size=1, max_size=8))
def test_a_window_cutting_a_long_reply_at_every_step_keeps_its_blocks_and_their_size(
    steps: list[tuple[int, int]],
) -> None:
    """One reply that grows by rounds and is cut from its front at every step (the size of what
    it keeps read off the reply's running sums): the blocks and size of what the window keeps."""
    blocks: list[Block] = []
    for rounds_added, budget in steps:
        for _ in range(rounds_added):
            k = len(blocks)
            blocks += [call(f"c{k}", "search", q=k), result(f"c{k}", "r" * (40 + k % 7), "search")]
        msgs = (user("go"), reply(*blocks))
        params = SlidingWindowParams(max_tokens=budget)
        out = slide_window(msgs, sizer=SIZER, params=params)
        assert out.dropped == walked_window(list(msgs), SIZER, params)
        assert out.messages == drop_units(msgs, view_units(msgs), out.dropped)
        assert all(m.tally == sum_tallies(m.blocks) for m in out.messages)


@given(agent_histories(), st.integers(0, 3000))
def test_the_lab_catches_exactly_the_orphans_the_window_makes(msgs: list[Message], budget: int) -> None:
    units = view_units(msgs)
    out = slide_window(msgs, sizer=SIZER, params=SlidingWindowParams(max_tokens=budget))
    dropped = set(out.dropped)
    declared_in_dropped = {c for u in units if u.kind == "calls" and u.index in dropped for c in u.call_ids}
    orphans = [
        u.call_ids[0]
        for u in units
        if u.kind == "result" and u.index not in dropped and u.call_ids[0] in declared_in_dropped
    ]
    found = violations(to_openai(out.messages), ["openai"])
    assert [(v.kind, v.call_id) for v in found] == [("orphan_result", c) for c in orphans]
    assert out.tokens == SIZER.count(out.messages)


def test_a_cut_inside_a_batch_of_image_results_keeps_the_images_of_the_results_kept() -> None:
    """The batch's media message stays while any of its results does; it goes with the last."""
    batch = reply(
        call("a", "Read"),
        call("b", "Read"),
        result("a", "ra", "Read", IMAGE),
        result("b", "rb", "Read", IMAGE),
        result("c", "rc"),
        TextBlock(text="done"),
    )
    msgs = [user("go"), batch]
    units = view_units(msgs)
    assert [u.kind for u in units] == ["user", "calls", "result", "result", "result", "media", "text"]
    for stop in range(len(units) + 1):
        dropped = [u.index for u in units[:stop]]
        out = drop_front(msgs, units, stop, keep_system=True)
        assert out == drop_units(msgs, units, dropped)
    kept = view_units(drop_front(msgs, units, 3, keep_system=True))  # result "a" went, "b" stays
    assert [u.kind for u in kept] == ["result", "result", "media", "text"]


long_messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant"]),
    blocks=st.lists(blocks, min_size=RESUMED_BLOCKS, max_size=2 * RESUMED_BLOCKS).map(tuple),
)


@given(st.lists(messages | long_messages, max_size=7), st.integers(0, 80), st.booleans())
def test_dropping_the_front_is_dropping_its_units(msgs: list[Message], stop: int, keep_system: bool) -> None:
    units = view_units(msgs)
    stop = min(stop, len(units))
    dropped = [u.index for u in units[:stop] if not (keep_system and u.kind == "system")]
    out, whole = drop_front(msgs, units, stop, keep_system=keep_system), drop_units(msgs, units, dropped)
    assert out == whole
    untouched = {id(m) for m in msgs}
    assert all(a is b for a, b in zip(out, whole, strict=True) if id(b) in untouched)  # the same objects
    assert system_units_before(msgs, units, stop) == [u.index for u in units[:stop] if u.kind == "system"]


@given(st.one_of(agent_histories(), st.lists(messages, max_size=6)), windows)
def test_the_window_over_a_growing_history_is_the_window_read_afresh(
    history: list[Message], params: SlidingWindowParams
) -> None:
    for seen in grown(history):
        out = slide_window(seen, sizer=SIZER, params=params)
        assert out.dropped == walked_window(seen, SIZER, params)
        assert out.messages == drop_units(seen, view_units(seen), out.dropped)


@given(st.lists(messages, max_size=3), long_messages, windows)
def test_the_window_over_a_reply_growing_a_block_at_a_time_is_the_window_read_afresh(
    before: list[Message], reply: Message, params: SlidingWindowParams
) -> None:
    """A long reply's units, sizes and names are read where it grew; the window over it is the
    one a walk over the whole history finds."""
    for seen in grown([*before, reply]):
        out = slide_window(seen, sizer=SIZER, params=params)
        assert out.dropped == walked_window(seen, SIZER, params)
        assert out.messages == drop_units(seen, view_units(seen), out.dropped)
        assert out.tokens == SIZER.count(out.messages)
