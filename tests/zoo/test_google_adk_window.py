"""Google ADK's sliding-window range, read by bisection, equals the plain reading of ADK's rule
over every event (`_run_compaction_for_sliding_window`), for any session `events_of` makes."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.presets.google_adk import session
from ctxlab.presets.google_adk.session import Compacted, RawEvent


def plainly(
    raw: Sequence[RawEvent], compactions: Sequence[Compacted], interval: int, overlap: int
) -> list[RawEvent]:
    """The rule read over every event: each invocation's latest timestamp, the invocations
    ended after the last compaction's end, the window from `overlap` invocations before the
    first of them (in order of first appearance) to the last of them."""
    last_end = compactions[-1].end if compactions else 0
    latest: dict[int, int] = {}
    for event in raw:
        latest[event.invocation] = max(latest.get(event.invocation, 0), event.ts)
    order = list(latest)
    new = [i for i in order if latest[i] > last_end]
    if len(new) < interval:
        return []
    start = order[max(0, order.index(new[0]) - overlap)]
    first = next(k for k, e in enumerate(raw) if e.invocation == start)
    last = max(k for k, e in enumerate(raw) if e.invocation == new[-1])
    return session.self_contained_prefix(raw[first : last + 1])


def events(sizes: list[int], skip: list[int]) -> tuple[RawEvent, ...]:
    """A session as `events_of` numbers it: timestamps from 1 in order, each invocation's events
    together, invocations rising (by one at a user turn; `skip` adds gaps, which no session has
    but the rule does not need ruled out)."""
    out: list[RawEvent] = []
    invocation = 0
    for k, size in enumerate(sizes):
        invocation += 1 + (skip[k % len(skip)] if skip else 0)
        for _ in range(size):
            block = (TextBlock(text="x"),)
            out.append(
                RawEvent(ts=len(out) + 1, invocation=invocation, role="user", blocks=block, message_id="m")
            )
    return tuple(out)


@given(
    st.lists(st.integers(1, 4), max_size=12),
    st.lists(st.integers(0, 2), max_size=3),
    st.lists(st.integers(0, 40), max_size=3),
    st.integers(1, 4),
    st.integers(0, 3),
)
def test_the_window_read_by_bisection_is_the_rule_read_over_every_event(
    sizes: list[int], skip: list[int], ends: list[int], interval: int, overlap: int
) -> None:
    raw = events(sizes, skip)
    compactions = [Compacted(start=1, end=end, text="s", after=end) for end in ends]
    assert session.window_candidates(raw, compactions, interval, overlap) == plainly(
        raw, compactions, interval, overlap
    )
