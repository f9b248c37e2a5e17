"""The lineage a growing history carries (`message.GROWN`), and the readers that use it: each
equals a reading from scratch whatever was read before; the lineage only spares comparisons."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.clearing import Clearing
from ctxlab.core.compaction.observations import LastNObservationsParams, elide_observations
from ctxlab.core.messages import message as message_module
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.latest import Front, Joined, Leading
from ctxlab.core.messages.message import (
    GROWN,
    LINEAGE_WORTH,
    Lineage,
    Message,
    extended,
    resumed_at,
    same_leading,
    same_leading_known,
    text_message,
)
from ctxlab.core.messages.resumable import Resumable, forget
from ctxlab.core.wire.meter import ProtocolMeter
from ctxlab.core.wire.protocol import RULES, violations
from ctxlab.core.wire.views import to_openai
from ctxlab.engine.cache import PromptCacheMeter
from tests.engine.test_cache_meter import COUNTER, pure_replay
from tests.strategies import messages as any_messages
from tests.strategies import paired_histories


@given(st.lists(st.tuples(st.integers(0, 40), st.lists(st.integers(0, 39), max_size=4)), max_size=30))
def test_a_front_is_every_place_before_the_stop_but_the_spared_whatever_came_before(
    plan: list[tuple[int, list[int]]],
) -> None:
    """`Front` equals the plain comprehension when the stop moves on (the last answer extended,
    and noted so), stays, or moves back, and when the spared places change."""
    front = Front()
    last: tuple[tuple[int, ...], int, list[int]] | None = None
    for stop, spared in plan:
        spared_before = sorted({s for s in spared if s < stop})
        places = front(stop, spared_before)
        assert places == tuple(i for i in range(stop) if i not in spared_before)
        if last is not None and last[2] == spared_before and last[1] < stop:
            assert GROWN.extends(places, last[0])  # what `Picked` reads to skip the comparison
        last = (places, stop, spared_before)
    forget()


def test_a_front_that_moves_on_is_the_last_one_extended() -> None:
    front = Front()
    first = front(5, [1])
    assert first == (0, 2, 3, 4) and front(5, [1]) is first
    more = front(8, [1])
    assert more == (0, 2, 3, 4, 5, 6, 7) and GROWN.extends(more, first)
    assert front(3, [1]) == (0, 2)  # moved back: made afresh
    forget()


@given(
    st.lists(st.tuples(st.sampled_from(["grow", "same", "cut", "edit"]), st.integers(0, 3)), max_size=25),
    st.booleans(),
)
def test_the_part_before_a_place_is_the_slice_whatever_came_before(
    plan: list[tuple[str, int]], beside: bool
) -> None:
    """`Leading` equals the slice as a long history grows, keeps its place, is cut or edited; it
    gives back the very part while the history keeps it, and notes a part no more than it shares
    with the last part and with its history."""
    leading = Leading(beside_history=beside)
    history = tuple(text_message("user", str(i)) for i in range(LINEAGE_WORTH))
    last: tuple[tuple[Message, ...], int, tuple[Message, ...]] | None = None
    for step, k in plan:
        before = history
        if step == "grow":
            history = (*history, text_message("user", f"g{k}"))
            GROWN.note(history, before)
        elif step == "cut":
            history = history[: max(1, len(history) - k)]
        elif step == "edit":
            at = len(history) - 1 - k
            history = (*history[:at], text_message("user", f"e{k}"), *history[at + 1 :])
        count = min(last[1], len(history)) if step == "same" and last else max(0, len(history) - k)
        part = leading(history, count)
        assert part == history[:count]
        kept = step in {"grow", "same"} and len(history) >= LINEAGE_WORTH  # a short one is sliced
        if last is not None and kept and count == last[1]:
            assert part is last[2]
        if last is not None:
            assert (GROWN.shared(part, last[2]) or 0) <= same_leading(part, last[2])
        assert (GROWN.shared(part, history) or 0) <= same_leading(part, history)
        last = (history, count, part)
    forget()


def test_a_part_that_grew_with_its_history_is_noted_as_beginning_with_the_last() -> None:
    leading = Leading()
    history = tuple(text_message("user", str(i)) for i in range(LINEAGE_WORTH + 2))
    first = leading(history, LINEAGE_WORTH)
    assert leading(history, LINEAGE_WORTH) is first
    grown = (*history, text_message("user", "more"))
    GROWN.note(grown, history)
    assert leading(grown, LINEAGE_WORTH) is first
    longer = leading(grown, LINEAGE_WORTH + 1)
    assert longer == grown[: LINEAGE_WORTH + 1] and GROWN.extends(longer, first)
    forget()


def test_a_part_beside_its_history_is_noted_as_its_beginning() -> None:
    """A reader given the part and the whole history in turn resumes either from the other."""
    leading = Leading(beside_history=True)
    history = tuple(text_message("user", str(i)) for i in range(LINEAGE_WORTH + 2))
    first = leading(history, LINEAGE_WORTH)
    grown = (*history, text_message("user", "more"))
    GROWN.note(grown, history)
    longer = leading(grown, LINEAGE_WORTH + 1)
    assert longer == grown[: LINEAGE_WORTH + 1] and GROWN.extends(longer, first)
    later = (*grown, text_message("user", "later"))
    GROWN.note(later, grown)
    assert GROWN.extends(later, longer) and GROWN.shared(longer, later) == len(longer)
    assert GROWN.shared(first, grown) == len(first)
    forget()


def test_a_request_extended_from_a_kept_part_is_known_to_begin_with_it() -> None:
    head = tuple(text_message("user", str(i)) for i in range(LINEAGE_WORTH))
    tail = (text_message("user", "tail"),)
    made = extended(head, tail)
    assert made == (*head, *tail) and GROWN.extends(made, head)
    forget()


HISTORY_PLANS = st.lists(
    st.tuples(st.sampled_from(["grow", "grow", "edit", "head"]), st.integers(0, 5)), max_size=25
)


@given(HISTORY_PLANS)
def test_a_request_joined_from_a_grown_history_is_known_to_share_what_it_truly_shares(
    plan: list[tuple[str, int]],
) -> None:
    """`Joined` gives `(*head, *tail)`; a join whose head is the same objects and whose tail grew
    from the last tail (noted) is noted as sharing the head and that much of the last join, and
    never more than the two truly share. `rest` gives back the very tail of the last join."""
    joined = Joined()
    head: tuple[object, ...] = (object(),)
    tail: tuple[object, ...] = tuple(object() for _ in range(3))
    last: tuple[object, ...] | None = None
    for action, n in plan:
        if action == "grow":
            grown = tail + tuple(object() for _ in range(n))
            GROWN.note(grown, tail)
            tail = grown
        elif action == "edit":
            tail = (*tail[: n % (len(tail) + 1)], object(), *tail[n % (len(tail) + 1) + 1 :])
        else:
            head = (object(),) * (n % 3)
        made = joined(head, tail)
        assert made == (*head, *tail)
        assert joined.rest(made, len(head)) is tail or not head
        assert joined.rest(made, 0) == made
        if last is not None:
            known = GROWN.shared(made, last)
            assert known is None or known <= same_leading(made, last)
        last = made
    forget()


def test_a_request_without_fixed_messages_is_its_context_itself() -> None:
    joined = Joined()
    context = tuple(object() for _ in range(LINEAGE_WORTH))  # a long history: shorter ones are compared
    assert joined((), context) is context
    system = (object(),)
    request = joined(system, context)
    grown = (*context, object())
    GROWN.note(grown, context)
    after = joined(system, grown)
    assert GROWN.shared(after, request) == len(request)  # the head and the whole last context
    assert joined.rest(after, 1) is grown and joined.rest(request, 1) == context
    forget()


@given(st.lists(st.tuples(st.integers(0, 6), st.booleans()), max_size=20), st.integers(0, 8))
def test_leading_objects_counted_along_the_lineage_are_those_a_comparison_finds(
    plan: list[tuple[int, bool]], cut: int
) -> None:
    """`same_leading_known(held, items, source)`, `held` holding the objects of `source`, equals
    `same_leading(held, items)` whether `items` grew from `source` (noted or not), was cut short,
    or was edited inside."""
    versions: list[tuple[object, ...]] = [tuple(object() for _ in range(4))]
    for pick, noted in plan:
        source = versions[pick % len(versions)]
        made = (*source, object()) if pick % 3 else (*source[: cut % (len(source) + 1)], object())
        if noted:
            GROWN.note(made, source, len(source) if pick % 3 else cut % (len(source) + 1))
        versions.append(made)
        held = list(source)
        assert same_leading_known(held, made, source) == same_leading(held, made)
        assert same_leading_known(held, made, None) == same_leading(held, made)
    forget()


@given(st.lists(st.integers(0, 9), max_size=14), st.lists(st.integers(0, 12), max_size=14), st.integers(0, 6))
def test_where_a_window_resumes_is_the_first_later_held_object_it_goes_on_with(
    held_at: list[int], items_at: list[int], same: int
) -> None:
    """`resumed_at` against its definition: of the first `_PROBES` items of `items` after
    `same`, the first that is one of the `_NEAR` held objects after `same`, at its first place
    there; else the first item that is a held object later than `same`, and that object's first
    such place. Indices past the pool's held part stand for objects the held list lacks (a
    message a window cut short); the near part is made short here, so that both ways are taken."""
    pool = [object() for _ in range(13)]
    held, items = [pool[i] for i in held_at], [pool[i] for i in items_at]

    def first_places(stop: int) -> dict[int, int]:
        return {id(x): j for j, x in reversed(list(enumerate(held[:stop]))) if j > same}

    near, later = first_places(same + 1 + 3), first_places(len(held))
    probed = range(same, min(len(items), same + message_module._PROBES))
    expected = next(((i, near[id(items[i])]) for i in probed if id(items[i]) in near), None)
    if expected is None:
        expected = next(
            ((i, later[id(items[i])]) for i in range(same, len(items)) if id(items[i]) in later), None
        )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(message_module, "_NEAR", 3)
        assert resumed_at(held, items, same) == expected


def test_the_lineage_holds_at_most_its_share_of_objects() -> None:
    """Long histories are long tuples: the oldest notes go once the noted tuples hold `HELD`
    objects between them, so the lineage never keeps more than that alive (and notes stay
    exact)."""
    lineage = Lineage()
    size = Lineage.HELD // 4
    versions = [tuple(range(size))]
    for _ in range(10):
        grown = (*versions[-1][:size], len(versions))
        lineage.note(grown, versions[-1], size)
        versions.append(grown)
        assert sum(len(noted[0]) for noted in lineage._parents.values()) <= Lineage.HELD
    assert lineage.shared(versions[-1], versions[-2]) == size  # the latest notes stand
    assert lineage.parent(versions[1]) is None  # the oldest went
    lineage.clear()
    assert lineage.shared(versions[-1], versions[-2]) is None


def test_a_comparison_that_finds_a_shared_history_is_remembered() -> None:
    """A history read beside an equal one it is not noted to come from (a request without its
    system message beside its context) is compared once; what the comparison found is noted,
    so the next history grown from either resumes without comparing."""
    kept = Resumable[str, tuple[object, ...]](lambda held: held, source=lambda held: held)
    context = tuple(object() for _ in range(LINEAGE_WORTH))  # a long history: shorter ones are compared
    kept.resume("k", context, lambda: context)
    copy = context[:3] + context[3:]  # the same objects, another tuple
    assert copy is not context and GROWN.shared(copy, context) is None
    _, same = kept.resume("k", copy, lambda: copy)
    assert same == len(context) and GROWN.shared(copy, context) == len(context)
    forget()


LONG_REQUESTS = st.lists(
    st.tuples(
        st.sampled_from(["grow", "grow", "grow", "edit", "copy", "system"]), any_messages, st.integers(0, 400)
    ),
    max_size=8,
)


@given(paired_histories(), LONG_REQUESTS)
def test_both_meters_stay_exact_along_a_long_history_and_its_lineage(
    history: list[Message], steps: list[tuple[str, Message, int]]
) -> None:
    """Requests over a history long enough to be found along its lineage: grown by appending
    (noted, as the engine notes its context), joined after a system message, edited inside
    (noted as sharing what comes before the edit, as a clearing plan notes its copies), or
    copied without a note. Each request's protocol check and cache figures equal a check and
    an accounting of it from scratch."""
    filler = tuple(text_message("user" if k % 2 else "assistant", f"m{k}") for k in range(LINEAGE_WORTH))
    context: tuple[Message, ...] = (*filler, *history)
    system: tuple[Message, ...] = ()
    joined, protocol, cache, seen = Joined(), ProtocolMeter(RULES), PromptCacheMeter(COUNTER), []
    for op, message, place in steps:
        if op == "grow":
            grown = (*context, message)
            GROWN.note(grown, context)
            context = grown
        elif op == "edit":
            at = place % len(context)
            edited = (*context[:at], message, *context[at + 1 :])
            GROWN.note(edited, context, at)
            context = edited
        elif op == "copy":
            context = tuple(list(context))
        else:
            system = () if system else (text_message("system", "rules"),)
        request = joined(system, context)
        assert list(protocol.check(request)) == violations(to_openai(request), RULES)
        cache.observe("reasoning", request, ())
        seen.append(("reasoning", request, (), 0))
    assert [(u.cached_tokens, u.written_tokens) for u in cache.usages] == pure_replay(seen)
    forget()


def _turn(k: int) -> tuple[Message, Message]:
    """A user turn answered by one call and its result, in the reply that made it."""
    answer = Message(
        role="assistant",
        blocks=(ToolCallBlock.of(f"c{k}", "read", {"k": k}), _result(f"c{k}", f"out {k}")),
        id=f"r{k}",
    )
    return text_message("user", f"question {k}", id=f"u{k}"), answer


def _result(call_id: str, text: str) -> ToolResultBlock:
    return ToolResultBlock(id=call_id, name="read", output=(TextBlock(text=text),))


@given(st.lists(st.sampled_from(["grow", "grow", "grow", "other", "shorter"]), min_size=1, max_size=12))
def test_a_masked_history_is_noted_as_sharing_what_it_shares_with_the_last_one(plan: list[str]) -> None:
    """SWE-agent's window over a long history (the engine's context growing by a turn, another
    history, or a history cut short read in between) is noted as beginning with exactly the
    messages and the cleared ids it shares with the window read last, so the meters and counts
    that kept the last request resume without comparing; and it is the window read afresh."""
    params = LastNObservationsParams(n=3)
    turns = [message for k in range(2 * LINEAGE_WORTH) for message in _turn(k)]  # ids to note too
    other = tuple(message for k in range(2 * LINEAGE_WORTH, 3 * LINEAGE_WORTH) for message in _turn(k))
    context: tuple[Message, ...] = tuple(turns)
    last = elide_observations(context, params)
    read: list[tuple[tuple[Message, ...], Clearing]] = []
    for step, before_it in zip(plan, ["grow", *plan], strict=False):
        if step == "grow":
            grown = (*context, *_turn(len(context)))
            GROWN.note(grown, context)
            history = context = grown
        else:
            history = other if step == "other" else context[: len(context) // 2]
        made = elide_observations(history, params)
        read.append((history, made))
        for now, before in ((made.messages, last.messages), (made.cleared, last.cleared)):
            assert GROWN.shared(now, before) in (None, same_leading(now, before))
        if step == "grow" and before_it != "other":
            assert GROWN.shared(made.messages, last.messages) == same_leading(made.messages, last.messages)
            assert GROWN.extends(made.cleared, last.cleared)
        last = made
    forget()
    assert all(elide_observations(history, params) == made for history, made in read)  # read afresh
    forget()
