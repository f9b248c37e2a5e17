"""Every loop in the core that moves a cut, driven to its bounds: it ends, within its bounds, at
the nearest safe place (each loop's docstring states why it terminates; a per-test timeout turns
a loop that stops ending into a failure with a traceback)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.split import SplitInput, split_context
from ctxlab.core.compaction.evict import EvictParams, LedgerNote, capped
from ctxlab.core.messages.blocks import ZERO, Block, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.units import ProtocolUnit, safe_cut

pytestmark = pytest.mark.timeout(60)
Grouping = tuple[int, list[ProtocolUnit]]


@st.composite
def groupings(draw: st.DrawFn) -> Grouping:
    """`n` view units in groups that may interleave (a batch whose results come after another's)."""
    n = draw(st.integers(0, 12))
    labels = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    members: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        members.setdefault(label, []).append(index)
    groups = [ProtocolUnit(units=tuple(units)) for units in members.values()]
    return n, sorted(groups, key=lambda g: g.first)


def straddles(groups: list[ProtocolUnit], cut: int) -> bool:
    return any(g.first < cut <= g.last for g in groups)


def chain(n: int) -> list[ProtocolUnit]:
    """Each unit reaches into the next: a cut anywhere inside moves to an end, step by step."""
    return [ProtocolUnit(units=(i, i + 2)) for i in range(n - 2)] + [ProtocolUnit(units=(n - 2,))]


@given(groupings())
def test_safe_cut_ends_at_the_largest_safe_cut_at_or_before_every_point(
    grouping: tuple[int, list[ProtocolUnit]],
) -> None:
    n, groups = grouping
    for at in range(n + 1):
        cut = safe_cut(groups, at)
        assert 0 <= cut <= at and not straddles(groups, cut)
        assert all(straddles(groups, k) for k in range(cut + 1, at + 1))


@pytest.mark.parametrize("n", [3, 40, 400])
def test_cuts_on_a_chain_run_the_whole_way(n: int) -> None:
    groups = chain(n)
    assert safe_cut(groups, n - 1) == 0


def test_the_orphan_fix_settles_after_a_long_chain_of_batches() -> None:
    # [c0, c1, r0, c2, r1, c3, r2, ...]: every result's call sits just before the previous
    # result, so each fix step moves the cut past one more result.
    blocks: list[Block] = [ToolCallBlock(id="c0", name="t", input="x")]
    for i in range(1, 200):
        blocks += [ToolCallBlock(id=f"c{i}", name="t", input="x")]
        blocks += [ToolResultBlock(id=f"c{i - 1}", name="t", output=(TextBlock(text="r" * 40),))]
    blocks += [ToolResultBlock(id="c199", name="t", output=(TextBlock(text="r" * 40),))]
    reply = Message(role="assistant", blocks=tuple(blocks), id="r")
    context = (Message(role="user", blocks=(TextBlock(text="go"),)), reply)
    split = split_context(SplitInput(fixed=ZERO, context=context, tools=(), budget=50), AgentScopeEstimator())
    kept = [b for m in split.reserve for b in m.blocks]
    called = {b.id for b in kept if isinstance(b, ToolCallBlock)}
    assert all(b.id in called for b in kept if isinstance(b, ToolResultBlock))
    assert [b for m in (*split.compress, *split.reserve) for b in m.blocks] == [*context[0].blocks, *blocks]


@given(st.lists(st.integers(0, 300), max_size=30), st.integers(0, 4000))
def test_the_ledger_cap_ends_with_the_newest_items_that_fit(sizes: list[int], limit: int) -> None:
    items = [LedgerNote(role="user", content="p" * size) for size in sizes]
    params = EvictParams(max_bytes=limit)
    kept = capped(items, params)
    assert tuple(items[len(items) - len(kept) :]) == kept
