"""Values kept by identity: the same object gives back the value made for it, and nothing else
changes (`ctxlab.core.messages.memo`), as used for a message's LangChain form and its edited copies."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import TextBlock, ToolResultBlock
from ctxlab.core.messages.edits import replace_blocks, with_output
from ctxlab.core.messages.latest import Replaced, Running
from ctxlab.core.messages.mapped import MappedAlong
from ctxlab.core.messages.memo import (
    IdentityMemo,
    LeadingConcat,
    LeadingFold,
    LeadingScan,
    weight_of,
)
from ctxlab.core.messages.message import Message, same_run
from ctxlab.core.messages.resumable import closest, forget
from ctxlab.core.messages.units import BlockRef, placed_units, view_units
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import ScriptedRound, assign_call_ids
from ctxlab.engine.session import assemble
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.lc_messages import from_wire, lc_of, lc_view
from ctxlab.texts import CTXLAB_TEXTS
from tests.strategies import paired_histories


def test_the_same_object_gives_back_its_value_and_an_equal_one_is_computed_again() -> None:
    calls: list[object] = []

    def compute(obj: object, *args: object) -> list[object]:
        calls.append(obj)
        return [obj, *args]

    memo = IdentityMemo[object, list[object]](compute)
    first, second = (1, 2), tuple([1, 2])  # equal, distinct objects
    assert first is not second
    value = memo(first)
    assert memo(first) is value and calls == [first]
    assert memo(second) == value and memo(second) is not value and calls == [first, second]
    assert memo(first, "x") == [first, "x"] and memo(first, "x") is memo(first, "x")


def test_past_its_limit_the_memo_starts_again_and_stays_right() -> None:
    memo = IdentityMemo[tuple[int], int](lambda t: t[0] * 2, limit=3)
    keys = [(i,) for i in range(10)]
    assert [memo(k) for k in keys] == [2 * i for i in range(10)]
    assert [memo(k) for k in keys] == [2 * i for i in range(10)]


def test_a_working_set_larger_than_the_limit_is_computed_once_per_object() -> None:
    """A context longer than the limit, read whole at every step, must not be computed again at
    every step (each pass would empty the memo before coming back to its first object)."""
    computed: list[int] = []
    memo = IdentityMemo[tuple[int], int](lambda t: computed.append(t[0]) or t[0], limit=4)
    history = [(i,) for i in range(3)]
    for step in range(40):  # the history grows by one object per step, past ten times the limit
        history.append((step + 3,))
        assert [memo(t) for t in history] == [t[0] for t in history]
    assert sorted(computed) == list(range(43))


def test_objects_used_once_never_hold_more_than_two_generations() -> None:
    memo = IdentityMemo[tuple[int], int](lambda t: t[0], limit=8)
    for i in range(1000):
        assert memo((i,)) == i
        assert len(memo._kept) + len(memo._previous) <= 16
    assert memo._limit == 8
    forget()
    assert len(memo._kept) + len(memo._previous) == 0


def _reply(rounds: int) -> list[Message]:
    """Every version of a reply that gains two blocks a round, as a run stores it."""
    versions, reply = [], Message(role="assistant", blocks=())
    for i in range(rounds):
        reply = reply.appended(TextBlock(text=f"step {i}"), TextBlock(text="x"))
        versions.append(reply)
    return versions


def test_a_growing_reply_s_versions_are_not_all_held() -> None:
    """Each version of a reply that grows at every call is a new object, asked for at one call;
    an entry weighs by the message's blocks, so the memo holds its last few versions, not all of
    them (every version held would be memory in the square of the reply's length)."""
    memo = IdentityMemo[Message, int](lambda m: len(m.blocks), limit=256)
    versions = _reply(400)
    assert [memo(m) for m in versions] == [2 * (i + 1) for i in range(400)]
    held = [m for m, _value, _weight in (*memo._previous.values(), *memo._kept.values())]
    assert 0 < len(held) <= 24 and held[-1] is versions[-1]
    weights = [weight_of(m) for m in held]
    assert sum(weights) <= 2 * (256 + weights[-1])  # two generations, each past its limit by one entry


def test_long_messages_asked_at_every_step_are_computed_once() -> None:
    """A history of long messages (past replies of many rounds) read whole at every step, while a
    reply grows at its end and then joins it, computes each past reply once: what keeps coming
    back doubles the limit, however much the growing reply's versions weigh."""
    computed: list[Message] = []
    memo = IdentityMemo[Message, int](lambda m: computed.append(m) or len(m.blocks), limit=16)
    history: list[Message] = []
    for _turn in range(12):
        for reply in _reply(30):  # gains a round at every call
            asked = (*history, reply)
            assert [memo(m) for m in asked] == [len(m.blocks) for m in asked]
        history.append(reply)  # 60 blocks: weighing 4
    assert [sum(c is m for c in computed) for m in history] == [1] * 12


class Item:
    """An object compared by identity only, carrying a number to fold."""

    def __init__(self, value: float) -> None:
        self.value = value


POOL = [Item(v) for v in (0.1, 0.2, 0.3, 1e16, -1e16, 3.0, 0.7)]
"""Values whose float sum depends on the order of additions."""

sequences = st.lists(st.lists(st.sampled_from(range(len(POOL))), max_size=12), max_size=12)
steps = st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.sampled_from([0.0, 0.5])), max_size=25)


@given(sequences, steps)
def test_a_leading_fold_is_the_plain_fold_whatever_it_folded_before(
    histories: list[list[int]], plan: list[tuple[int, bool, float]]
) -> None:
    """Histories that grow, lose their front, are edited or alternate with an edited copy."""
    fold = LeadingFold[Item, float](lambda total, item, scale: total + item.value * scale)
    kept: list[list[Item]] = [[POOL[i] for i in h] for h in histories] or [[]]
    for pick, grow, start in plan:
        items = kept[pick % len(kept)]
        if grow:
            items.append(POOL[pick % len(POOL)])
        for scale in (1.0, 2.0):
            plain = [start]
            for item in items:
                plain.append(plain[-1] + item.value * scale)
            if pick % 2:
                assert fold(tuple(items), start, scale) == plain[-1]
            elif grow:
                at = pick % len(plain)
                assert fold.folds_at(tuple(items), start, at, len(items), scale) == (plain[at], plain[-1])
            else:
                assert fold.running(tuple(items), start, scale) == tuple(plain)
    forget()
    assert fold((), 1.5, 1.0) == 1.5 and fold.running((), 1.5, 1.0) == (1.5,)


@given(sequences, steps)
def test_a_leading_concat_is_the_plain_concatenation_whatever_it_joined_before(
    histories: list[list[int]], plan: list[tuple[int, bool, float]]
) -> None:
    """Each item's parts depend on the item, its place and the parts before it, as a message's
    view units do."""

    def parts(item: Item, at: int, before: int, copies: int) -> list[tuple[float, int, int]]:
        return [(item.value, at, before)] * (copies + int(item.value > 0.5))

    concat = LeadingConcat[Item, tuple[float, int, int]](parts)
    kept: list[list[Item]] = [[POOL[i] for i in h] for h in histories] or [[]]
    for pick, grow, _ in plan:
        items = kept[pick % len(kept)]
        if grow:
            items.insert(pick % (len(items) + 1), POOL[pick % len(POOL)])
        for copies in (0, 2):
            plain: list[tuple[float, int, int]] = []
            for at, item in enumerate(items):
                plain.extend(parts(item, at, len(plain), copies))
            joined = concat(tuple(items), copies)
            assert joined == tuple(plain)
            assert concat(tuple(items), copies) is joined  # joined again unchanged: the same tuple


@given(sequences, steps)
def test_a_leading_scan_is_the_plain_walk_whatever_it_scanned_before(
    histories: list[list[int]], plan: list[tuple[int, bool, float]]
) -> None:
    """Each item's parts depend on what the items before it carried, and on the parts before it."""

    def step(carry: float, item: Item, before: int, copies: int) -> tuple[list[tuple[float, int]], float]:
        carry += item.value
        return [(carry, before)] * (copies + int(item.value > 0.5)), carry

    scan = LeadingScan[Item, float, tuple[float, int]](step)
    kept: list[list[Item]] = [[POOL[i] for i in h] for h in histories] or [[]]
    for pick, grow, start in plan:
        items = kept[pick % len(kept)]
        if grow:
            items.insert(pick % (len(items) + 1), POOL[pick % len(POOL)])
        for copies in (0, 2):
            plain: list[tuple[float, int]] = []
            carry = start
            for item in items:
                parts, carry = step(carry, item, len(plain), copies)
                plain.extend(parts)
            scanned = scan(tuple(items), start, copies)
            assert scanned == tuple(plain)
            assert scan(tuple(items), start, copies) is scanned


@given(
    st.lists(st.tuples(st.sampled_from(["grow", "grow", "grow", "cut", "back", "again"]), st.integers(0, 9)))
)
def test_a_reply_grown_by_appending_resumes_every_read_from_the_tuple_it_grew_from(
    plan: list[tuple[str, int]],
) -> None:
    """Reads of block tuples that `Message.appended` grew (known to begin with their parent's
    blocks, never compared) equal plain reads, also after a cut, after an older version is read
    again, and when the same tuple is read twice."""

    def step(carry: int, block: TextBlock, before: int) -> tuple[list[tuple[int, int]], int]:
        carry += len(block.text)
        return [(carry, before)] * (1 + len(block.text) % 2), carry

    scan = LeadingScan[TextBlock, int, tuple[int, int]](step)
    fold = LeadingFold[TextBlock, int](lambda total, block: total * 3 + len(block.text))
    message, versions = Message(role="assistant", blocks=()), []
    for action, n in plan:
        if action == "grow":
            message = message.appended(*(TextBlock(text="x" * k) for k in range(n % 3 + 1)))
        elif action == "cut":
            message = message.with_blocks(message.blocks[: n % (len(message.blocks) + 1)])
        elif action == "back" and versions:
            message = versions[n % len(versions)]
        versions.append(message)
        blocks = message.blocks
        plain: list[tuple[int, int]] = []
        carry = total = 0
        for block in blocks:
            parts, carry = step(carry, block, len(plain))
            plain.extend(parts)
            total = total * 3 + len(block.text)
        assert scan(blocks, 0) == tuple(plain) and fold(blocks, 0) == total
    forget()


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["grow", "grow", "grow", "cut", "edit", "back", "walk"]), st.integers(0, 9)
        ),
        max_size=30,
    )
)
def test_a_finished_scan_is_the_plain_walk_closed_and_every_tuple_noted_shares_what_it_says(
    plan: list[tuple[str, int]],
) -> None:
    """`finished` equals the plain walk closed by `finish` (which may keep fewer parts than the
    scan made and add others), also when the same scan is read whole in between; and every
    lineage note it leaves (`GROWN`) holds: the tuple begins with that many objects of its parent."""
    from ctxlab.core.messages.memo import RESUMED_BLOCKS
    from ctxlab.core.messages.message import GROWN

    def step(carry: int, block: TextBlock, before: int) -> tuple[list[tuple[int, int]], int]:
        carry += len(block.text)
        return [(carry, before)] * (len(block.text) % 3), carry

    def finish(carry: int, done: Sequence[tuple[int, int]]) -> tuple[int, list[tuple[int, int]]]:
        keep = len(done) - carry % 2 if done else 0  # an odd carry replaces the last part
        return keep, [(carry, -1)] * (carry % 3)

    scan = LeadingScan[TextBlock, int, tuple[int, int]](step)
    message, versions = Message(role="assistant", blocks=()), []
    for action, n in plan:
        if action == "grow":
            message = message.appended(*(TextBlock(text="x" * k) for k in range(n % 4 + RESUMED_BLOCKS // 4)))
        elif action == "cut":
            message = message.with_blocks(message.blocks[: n % (len(message.blocks) + 1)])
        elif action == "edit":  # the last blocks cut and others in their place, in one read
            kept = message.blocks[: len(message.blocks) - n % 3]
            message = message.with_blocks((*kept, *(TextBlock(text="y" * k) for k in range(n % 4))))
        elif action == "back" and versions:
            message = versions[n % len(versions)]
        versions.append(message)
        plain: list[tuple[int, int]] = []
        carry = 0
        for block in message.blocks:
            parts, carry = step(carry, block, len(plain))
            plain.extend(parts)
        if action == "walk":
            assert scan.with_carry(message.blocks, 0) == (tuple(plain), carry)
        keep, tail = finish(carry, plain)
        assert scan.finished(message.blocks, 0, finish) == (*plain[:keep], *tail)
    for grown, parent, shared in GROWN._parents.values():  # every note, read where it is kept
        assert shared <= min(len(grown), len(parent))
        assert all(a is b for a, b in zip(grown[:shared], parent[:shared], strict=True))
    forget()


@given(st.lists(st.tuples(st.sampled_from(["grow", "grow", "other", "back"]), st.lists(st.integers(0, 5)))))
def test_an_index_is_the_dict_of_its_pairs_whatever_it_indexed_before(
    plan: list[tuple[str, list[int]]],
) -> None:
    """`Indexed` extends its dictionary for a tuple that grew from the last one read (noted or
    not) and starts afresh otherwise; either way it reads as `dict(pairs)`, later pairs winning."""
    from ctxlab.core.messages.latest import Indexed
    from ctxlab.core.messages.message import GROWN

    indexed = Indexed[int, object]()
    pairs: tuple[tuple[int, object], ...] = ()
    versions = [pairs]
    for action, keys in plan:
        new = tuple((key, object()) for key in keys)
        if action == "grow":
            grown = pairs + new
            if len(keys) % 2:  # half of them noted, as a resumed read notes its parts
                GROWN.note(grown, pairs)
            pairs = grown
        elif action == "other":
            pairs = new
        else:
            pairs = versions[len(keys) % len(versions)]
        versions.append(pairs)
        assert dict(indexed(pairs)) == dict(pairs)
    forget()


LINEAGE_PLANS = st.lists(
    st.tuples(st.integers(0, 30), st.sampled_from(["grow", "cut", "edit"]), st.integers(0, 4)), max_size=30
)


@given(LINEAGE_PLANS, st.data())
def test_lineage_never_claims_more_than_two_tuples_share(
    plan: list[tuple[int, str, int]], data: st.DataObject
) -> None:
    """Tuples made from earlier ones (grown, cut short, or edited at a place), each noted with
    its parent and what the two truly share: `shared` of any two is at most the leading objects
    they share, and a tuple grown whole from another shares all of it."""
    from ctxlab.core.messages.message import Lineage, same_leading

    lineage = Lineage()
    versions: list[tuple[object, ...]] = [tuple(object() for _ in range(3))]
    for pick, action, amount in plan:
        parent = versions[pick % len(versions)]
        if action == "grow":
            made = parent + tuple(object() for _ in range(amount))
            lineage.note(made, parent)
            assert lineage.shared(made, parent) == len(parent)
        elif action == "cut":
            made = parent[: max(len(parent) - amount, 0)]
            lineage.note(made, parent, len(made))
        else:
            at = min(amount, len(parent))
            made = (*parent[:at], object(), *parent[at + 1 :])
            lineage.note(made, parent, at)
        versions.append(made)

    def chain(items: tuple[object, ...]) -> list[tuple[tuple[object, ...], int]]:
        """`items` and its first `STEPS` noted ancestors, each with what `items` shares with it."""
        out = [(items, len(items))]
        while len(out) <= Lineage.STEPS and (parent := lineage.parent(out[-1][0])) is not None:
            noted = lineage._parents[id(out[-1][0])][2]
            out.append((parent, min(out[-1][1], noted)))
        return out

    for _ in range(10):
        a, b = data.draw(st.sampled_from(versions)), data.draw(st.sampled_from(versions))
        known = lineage.shared(a, b)
        assert known is None or known <= same_leading(a, b)
        assert lineage.shared(a, a) == len(a)
        nearest = [min(n, m) for t, n in chain(a) for u, m in chain(b) if t is u][:1]  # a's nearest first
        assert known == (nearest[0] if nearest else None)


UNSEEN_PLANS = st.lists(
    st.tuples(st.sampled_from(["grow", "grow", "same", "other", "back"]), st.lists(st.integers(0, 6)))
)


@given(UNSEEN_PLANS)
def test_unseen_keys_are_those_the_set_before_lacks_whatever_was_read_before(
    plan: list[tuple[str, list[int]]],
) -> None:
    """`Unseen` looks up only the keys a tuple noted grown from the last one read gained, and
    reads any other pair whole; either way it says whether `keys` holds one `before` lacks
    (keys recur, so a grown tuple may gain one it had)."""
    from ctxlab.core.messages.latest import Unseen
    from ctxlab.core.messages.message import GROWN

    unseen = Unseen[int]()
    before: tuple[int, ...] | frozenset[int] = ()
    versions: list[tuple[int, ...] | frozenset[int]] = [before]
    for action, keys in plan:
        if action == "grow" and isinstance(before, tuple):
            keys_: tuple[int, ...] | frozenset[int] = before + tuple(keys)
            if len(keys) % 2:  # half of them noted, as a plan notes the ids it extends
                GROWN.note(keys_, before)
        elif action == "same":
            keys_ = before
        elif action == "other":
            keys_ = tuple(keys) if len(keys) % 3 else frozenset(keys)
        else:
            keys_ = versions[len(keys) % len(versions)]
        assert unseen(keys_, before) == (not set(before).issuperset(keys_))
        before = keys_
        versions.append(before)
    forget()


@given(UNSEEN_PLANS)
def test_distinct_keys_are_a_set_when_none_repeats_whatever_was_read_before(
    plan: list[tuple[str, list[int]]],
) -> None:
    """`Distinct` adds only the keys of a tuple noted grown from the last one read, and reads any
    other tuple whole; either way it gives the tuple's set when no key repeats, else None (a grown
    tuple may repeat a key it had, or gain one twice)."""
    from ctxlab.core.messages.latest import Distinct
    from ctxlab.core.messages.message import GROWN

    distinct = Distinct[int]()
    last: tuple[int, ...] = ()
    versions: list[tuple[int, ...]] = [last]
    for action, keys in plan:
        if action == "grow":
            read = last + tuple(keys)
            if len(keys) % 2:
                GROWN.note(read, last)
        elif action == "same":
            read = last
        elif action == "other":
            read = tuple(keys)
        else:
            read = versions[len(keys) % len(versions)]
        assert distinct(read) == (set(read) if len(set(read)) == len(read) else None)
        last = read
        versions.append(read)
    forget()


def test_the_closest_kept_sequence_is_the_last_used_when_extended_whole() -> None:
    a, b, c, d, x = (Item(float(v)) for v in range(5))
    assert closest([[a, b, c], [a, b]], [a, b, c, d], list) == (1, 2)  # the last used, extended
    assert closest([[a, b], [a, x]], [a, b, c], list) == (0, 2)  # else the one sharing most
    assert closest([[a, b, x], [a, b, c, d]], [a, b, d], list) == (0, 2)  # of those, the least to cut
    assert closest([], [a], list) == (-1, 0)


def test_a_kept_sequence_known_to_be_an_ancestor_is_taken_without_comparing() -> None:
    """A reader alternating between a growing reply and copies that cut its front: the slot of the
    reply's last version is found by lineage (`GROWN`) wherever it stands, not by walking the reply."""
    reply = _reply(20)
    grown, cut = reply[-1].blocks, reply[-2].blocks[4:]
    compared: list[object] = []

    def held(slot: tuple[object, ...]) -> tuple[object, ...]:
        compared.append(slot)
        return slot

    def source(slot: tuple[object, ...]) -> tuple[object, ...]:
        return slot

    slots = [reply[-2].blocks, cut]  # the reply's last version read, then a cut copy (used last)
    assert closest(slots, grown, held, source) == (0, len(reply[-2].blocks)) and compared == []
    assert closest([cut], grown, held, source) == (0, 0) and compared == [cut]  # no relation: compared


def _old_lc_view(messages: list[Message]) -> tuple[object, ...]:
    """`lc_view` worked out over the whole context at once, as it was defined."""
    out = []
    for wire, unit in zip(to_openai(messages), view_units(messages), strict=True):
        lc = from_wire(wire)
        if unit.kind == "result":
            lc = replace(lc, name=getattr(messages[unit.message].blocks[unit.blocks[0]], "name", None))
        out.append(lc)
    return tuple(out)


@given(paired_histories())
def test_the_langchain_view_is_the_whole_contexts_view(history: list[Message]) -> None:
    assert lc_view(history) == _old_lc_view(history)
    assert lc_view(history) == lc_view(history)  # and again, from the memo


def _units_at_once(messages: list[Message]) -> tuple[object, ...]:
    """`view_units` worked out without kept placements: every message walked afresh."""
    units: list[object] = []
    for m, message in enumerate(messages):
        units.extend(placed_units(message, m, len(units)))
    return tuple(units)


@given(paired_histories())
def test_view_units_are_the_same_wherever_a_message_stood_before(history: list[Message]) -> None:
    assert view_units(history) == _units_at_once(history)
    moved = history[1:]  # every message one place earlier than it was just viewed
    assert view_units(moved) == _units_at_once(moved)
    assert view_units(history) == _units_at_once(history)


def test_a_result_given_the_same_output_twice_is_one_block() -> None:
    result = ToolResultBlock(id="c1", name="read", output=(TextBlock(text="long"),), state="error")
    once, again = with_output(result, "[cleared]"), with_output(result, "[cleared]")
    assert once is again
    assert once == ToolResultBlock(id="c1", name="read", output=(TextBlock(text="[cleared]"),), state="error")
    assert with_output(result, "[gone]").output == (TextBlock(text="[gone]"),)
    equal = replace(result)  # an equal, distinct result gets its own block, equal to the first
    assert with_output(equal, "[cleared]") == once and with_output(equal, "[cleared]") is not once


@given(paired_histories())
def test_editing_a_history_twice_alike_gives_the_same_copies(history: list[Message]) -> None:
    results = [
        BlockRef(m, b)
        for m, message in enumerate(history)
        for b, block in enumerate(message.blocks)
        if isinstance(block, ToolResultBlock)
    ]

    def cleared() -> dict[BlockRef, ToolResultBlock]:
        made: dict[BlockRef, ToolResultBlock] = {}
        for ref in results:
            block = history[ref.message].blocks[ref.block]
            assert isinstance(block, ToolResultBlock)
            made[ref] = with_output(block, "[cleared]")
        return made

    once = replace_blocks(history, cleared())
    again = replace_blocks(history, cleared())  # equal edits
    assert once == again and all(a is b for a, b in zip(once, again, strict=True))
    for m, message in enumerate(history):
        if any(ref.message == m for ref in results):
            edited = [b for b in once[m].blocks if isinstance(b, ToolResultBlock)]
            assert all(b.output == (TextBlock(text="[cleared]"),) for b in edited)
        else:
            assert once[m] is message


def test_forget_drops_every_memos_entries() -> None:
    memo = IdentityMemo[tuple[int], int](lambda t: t[0])
    key = (7,)
    assert memo(key) == 7 and len(memo) == 1
    forget()
    assert len(memo) == 0 and memo(key) == 7


def test_a_released_run_leaves_nothing_in_the_memos() -> None:
    """The memos would otherwise hold a finished run's messages until their limit."""
    from ctxlab.presets.langchain import preset as langchain
    from tests.zoo.runs import one_turn, tool_call
    from tests.zoo.runs import text as filler

    rounds = [ScriptedRound(calls=(tool_call("retrieve", "{}", filler(900)),)) for _ in range(6)]
    script = assign_call_ids(one_turn(*rounds))
    session = assemble(
        script,
        langchain.CLEAR_PRESET.strategy(),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields={"task_overview": "The task."}),
        texts=CTXLAB_TEXTS,
        context_size=100_000,
    )
    session.run()
    assert len(lc_of) > 0
    session.release()
    assert len(lc_of) == 0


class _Texts:
    """An accumulator of the texts taken (what `Running` carries), read as a tuple."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def take(self, block: TextBlock) -> None:
        self.texts.append(block.text)

    def value(self) -> tuple[str, ...]:
        return tuple(self.texts)


@given(st.lists(st.tuples(st.integers(0, 8), st.lists(st.sampled_from("abc"), max_size=3)), max_size=12))
def test_a_running_value_equals_reading_the_tuple_whole_whichever_version_grows(
    steps: list[tuple[int, list[str]]],
) -> None:
    """Each step grows some earlier version (the latest, or one the kept one grew past, or
    one on another branch) by appended blocks; a forgotten accumulator is made again."""
    running = Running[tuple[str, ...]](_Texts)
    versions = [Message(role="assistant", blocks=())]
    for pick, texts in steps:
        grown = versions[pick % len(versions)].appended(*(TextBlock(text=t) for t in texts))
        versions.append(grown)
        assert running(grown.blocks) == tuple(b.text for b in grown.blocks if isinstance(b, TextBlock))
        if pick == 8:
            forget()


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 8), st.booleans()), max_size=12))
def test_what_an_edited_copy_replaced_equals_comparing_it_whole_as_copies_come_and_go(
    steps: list[tuple[int, int, bool]],
) -> None:
    """Each step grows the original by appended blocks and makes a copy that keeps the leading
    `keep` blocks of the last copy (noted so in `GROWN`) and replaces some of the others, or one
    that starts afresh (not noted)."""
    from ctxlab.core.messages.message import GROWN

    replaced = Replaced[str](lambda block: block.text)
    original = Message(role="assistant", blocks=())
    copy: tuple[TextBlock, ...] = ()
    for grow, wanted, noted in steps:
        original = original.appended(*(TextBlock(text=f"{len(original.blocks) + i}") for i in range(grow)))
        blocks = original.blocks
        keep = min(wanted, len(copy), len(blocks)) if noted else 0
        rest = tuple(TextBlock(text=f"new {b.text}") if i % 3 == 0 else b for i, b in enumerate(blocks))
        new_copy = copy[:keep] + rest[keep:]
        if noted:
            GROWN.note(new_copy, copy, keep)
        copy = new_copy
        expected = tuple(o.text for o, c in zip(blocks, copy, strict=True) if c is not o)
        assert replaced(blocks, copy) == expected


def _reset_step(calls: list[TextBlock]) -> object:
    """A scan step that never reads `before`: its carry sums the texts' lengths, back to 0 at `|`."""

    def step(carry: int, block: TextBlock, before: int) -> tuple[list[int], int]:
        calls.append(block)
        carry = 0 if block.text == "|" else carry + len(block.text)
        return [carry] * (1 + len(block.text) % 2), carry

    return step


def _walked(step: object, blocks: Sequence[TextBlock]) -> tuple[int, ...]:
    out: list[int] = []
    carry = 0
    for block in blocks:
        parts, carry = step(carry, block, len(out))  # type: ignore[operator]
        out.extend(parts)
    return tuple(out)


def test_a_scan_read_anywhere_resumes_a_sequence_whose_front_was_cut_where_its_carry_restarts() -> None:
    """A window that cuts a reply's front after an item that restarts the carry costs the items
    it gained; cut one or two items before such an item, it costs those too; cut further from
    one, the sequence is read afresh; each reads as the plain walk."""
    from ctxlab.core.messages.memo import RESUMED_BLOCKS

    calls: list[TextBlock] = []
    step = _reset_step(calls)
    scan = LeadingScan[TextBlock, int, int](step, anywhere=True)
    blocks = tuple(
        TextBlock(text="|" if k % 4 == 0 else "x" * (1 + k % 5)) for k in range(4 * RESUMED_BLOCKS)
    )
    assert scan(blocks, 0) == _walked(step, blocks)
    # after "|"; two items before one ("|" at 8); three before one: read whole
    for front, read in ((5, 1), (7, 3), (6, 4 * RESUMED_BLOCKS - 6 + 1)):
        cut = (*blocks[front:], TextBlock(text="yy"))
        calls.clear()
        scanned = scan(cut, 0)
        assert len(calls) == read
        assert scanned == _walked(step, cut)
    forget()


def test_a_window_moving_along_a_long_sequence_compares_only_the_read_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A window that drops items from the front and gains as many at the end at every read, the
    reads of the windows before it all kept: each read walks only the items it gained, compares
    what it shares with the latest read once (an older read, ending sooner, could share no
    more), and reads as the plain walk, whether its first item stood near the front of the read
    before or far into it."""
    from ctxlab.core.messages import kept, memo

    compared: list[int] = []

    def counted(a: Sequence[object], i: int, b: Sequence[object], j: int, most: int) -> int:
        compared.append(most)
        return same_run(a, i, b, j, most)

    monkeypatch.setattr(kept, "same_run", counted)
    calls: list[TextBlock] = []
    step = _reset_step(calls)
    scan = LeadingScan[TextBlock, int, int](step, anywhere=True)
    pool = tuple(TextBlock(text="|" if k % 4 == 0 else "x" * (1 + k % 5)) for k in range(600))
    width = 10 * memo.RESUMED_BLOCKS
    scan(pool[1 : 1 + width], 0)
    before = 1
    for front in (5, 9, 13, 17, 21, 25, 77, 81, 85):  # each just after a "|"; 25 to 77 is far
        window = pool[front : front + width]
        calls.clear()
        compared.clear()
        assert scan(window, 0) == _walked(_reset_step([]), window)
        assert len(calls) == front - before  # what it gained past the read before it
        assert sum(compared) == width - (front - before)  # what they share, once
        before = front
    forget()


@given(
    st.lists(st.tuples(st.sampled_from(["grow", "grow", "front", "back"]), st.integers(0, 40)), max_size=25)
)
def test_a_scan_read_anywhere_is_the_plain_walk_after_any_cut_of_the_front(
    plan: list[tuple[str, int]],
) -> None:
    """Grown at the end, cut at the front anywhere, or an older version read again: every read
    equals the plain walk (`finished` too), whichever kept run it resumed."""
    from ctxlab.core.messages.memo import RESUMED_BLOCKS

    step = _reset_step([])
    scan = LeadingScan[TextBlock, int, int](step, anywhere=True)
    blocks: tuple[TextBlock, ...] = ()
    versions: list[tuple[TextBlock, ...]] = []
    for action, n in plan:
        if action == "grow":
            blocks = (
                *blocks,
                *(TextBlock(text="|" if k % 4 == n % 4 else "x" * k) for k in range(RESUMED_BLOCKS)),
            )
        elif action == "front":
            blocks = blocks[n % (len(blocks) + 1) :]
        elif action == "back" and versions:
            blocks = versions[n % len(versions)]
        versions.append(blocks)
        plain = _walked(step, blocks)
        assert scan(blocks, 0) == plain
        assert scan.finished(blocks, 0, lambda carry, done: (len(done), [carry])) == (*plain, _carry(blocks))
    forget()


REPLACED_PLANS = st.lists(
    st.tuples(st.sampled_from(["grow", "clear", "clear", "back", "cut"]), st.integers(0, 60)), max_size=25
)
"""A long sequence grown, copied with a few items replaced (as a clearing copies a reply), an
older version read again, or cut short."""


def _replaced_versions(plan: list[tuple[str, int]]) -> Iterator[tuple[TextBlock, ...]]:
    from ctxlab.core.messages.memo import RESUMED_BLOCKS

    blocks: tuple[TextBlock, ...] = ()
    versions: list[tuple[TextBlock, ...]] = []
    for action, n in plan:
        if action == "grow":
            blocks = (
                *blocks,
                *(TextBlock(text="|" if k % 3 == n % 3 else "x" * (k % 5)) for k in range(n % 7 + 1)),
            )
        elif action == "clear" and blocks:
            at = n % len(blocks)  # the same text, or "|" (which changes the carry after it), or another
            text = ("|", "y", blocks[at].text)[n % 3]
            blocks = (*blocks[:at], TextBlock(text=text), *blocks[at + 1 :])
        elif action == "back" and versions:
            blocks = versions[n % len(versions)]
        elif action == "cut":
            blocks = blocks[: max(len(blocks) - n % 5, 0)]
        if len(blocks) < RESUMED_BLOCKS:
            blocks = (*blocks, *(TextBlock(text="z") for _ in range(RESUMED_BLOCKS)))
        versions.append(blocks)
        yield blocks


def _totals(
    kept: tuple[int, int], now: tuple[int, int]
) -> Callable[[tuple[int, int]], tuple[int, int]] | None:
    """A fold's values kept after an item map to those folded now when the carries agree."""
    gained = now[1] - kept[1]
    return (lambda value: (value[0], value[1] + gained)) if kept[0] == now[0] else None


def _sum_step(value: tuple[int, int], block: TextBlock) -> tuple[int, int]:
    carry = 0 if block.text == "|" else value[0] + len(block.text)
    return carry, value[1] + carry


@given(REPLACED_PLANS)
def test_a_fold_or_scan_past_items_a_copy_replaced_is_the_plain_one(plan: list[tuple[str, int]]) -> None:
    """A copy of a long sequence with a few items replaced rejoins the kept read after them
    (a fold's values mapped by `rejoin`, a scan read anywhere taking the kept parts): every read
    equals the plain fold and walk, whichever it resumed and rejoined."""
    fold = LeadingFold[TextBlock, tuple[int, int]](_sum_step, _totals)
    step = _reset_step([])
    scan = LeadingScan[TextBlock, int, int](step, anywhere=True)
    for blocks in _replaced_versions(plan):
        plain = [(0, 0)]
        for block in blocks:
            plain.append(_sum_step(plain[-1], block))
        assert fold.running(blocks, (0, 0)) == tuple(plain)
        walked = _walked(step, blocks)
        assert scan(blocks, 0) == walked
        assert scan.finished(blocks, 0, lambda carry, done: (len(done), [carry])) == (*walked, _carry(blocks))
    forget()


def test_a_copy_with_one_item_replaced_walks_a_few_items_only() -> None:
    """A copy of a long sequence whose one item was replaced, keeping the carry after it, walks
    that item and what it gained, not the items after it (a cleared copy of a reply)."""
    from ctxlab.core.messages.memo import RESUMED_BLOCKS

    walked: list[TextBlock] = []
    scan = LeadingScan[TextBlock, int, int](_reset_step(walked), anywhere=True)
    folded: list[TextBlock] = []
    fold = LeadingFold[TextBlock, tuple[int, int]](lambda v, b: folded.append(b) or _sum_step(v, b), _totals)
    blocks = tuple(TextBlock(text="|" if k % 2 else "ab") for k in range(4 * RESUMED_BLOCKS))
    scan(blocks, 0), fold(blocks, (0, 0))
    walked.clear(), folded.clear()
    at = len(blocks) // 2 + 1  # a "|": the carry after it is the kept one's
    for text, walks in (("|", ["|"]), ("abc", ["abc", "ab", "|"])):  # "abc" changes it up to the next "|"
        copy = (*blocks[:at], TextBlock(text=text), *blocks[at + 1 :], TextBlock(text="d"))
        assert scan(copy, 0) == _walked(_reset_step([]), copy)
        assert fold(copy, (0, 0)) == functools.reduce(_sum_step, copy, (0, 0))
        assert [b.text for b in walked] == [b.text for b in folded] == [*walks, "d"]
        scan(blocks, 0), fold(blocks, (0, 0))
        walked.clear(), folded.clear()


@given(paired_histories(), st.integers(0, 40))
def test_a_message_s_units_read_in_place_are_its_units(history: list[Message], at: int) -> None:
    """`own_units_read` reads a long message's units off its kept scan without copying them: the
    same units, in order, by index from either end and by slice, for each version of a reply."""
    from ctxlab.core.messages.units import own_units, own_units_read

    blocks = tuple(b for m in history for b in m.blocks) * 4
    for end in (len(blocks) // 2, len(blocks)):
        message = Message(role="assistant", blocks=blocks[:end])
        units, read = own_units(message), own_units_read(message)
        assert len(read) == len(units) and list(read) == list(units)
        assert list(read[at:]) == list(units[at:])
        if units:
            assert read[-1 - at % len(units)] == units[-1 - at % len(units)]
        with pytest.raises(IndexError):
            read[len(units)]


def _carry(blocks: Sequence[TextBlock]) -> int:
    carry = 0
    for block in blocks:
        carry = 0 if block.text == "|" else carry + len(block.text)
    return carry


@given(
    st.lists(
        st.tuples(st.sampled_from(["more", "more", "again", "table", "other"]), st.integers(0, 30)),
        max_size=25,
    )
)
def test_a_pick_is_the_items_at_its_indices_whatever_was_picked_before(plan: list[tuple[str, int]]) -> None:
    """`Picked` equals indexing afresh when a window drops more (the pick extended, and noted so),
    when it picks the same again, when the table grows or changes under it, or picks elsewhere."""
    from ctxlab.core.messages.latest import Picked
    from ctxlab.core.messages.message import GROWN

    pick = Picked[str]()
    table: tuple[str, ...] = tuple(f"n{k}" for k in range(40))
    indices: tuple[int, ...] = ()
    last: tuple[str, ...] | None = None
    for action, n in plan:
        if action == "more":
            indices = (*indices, *range(len(indices), min(len(indices) + n % 4, len(table))))
        elif action == "table":  # grown at its end, or one name changed (the table read afresh)
            table = (
                (*table, f"m{n}")
                if n % 2
                else (*table[: n % len(table)], f"x{n}", *table[n % len(table) + 1 :])
            )
        elif action == "other":
            indices = tuple(sorted({n % len(table), (3 * n) % len(table)}))
        picked = pick(table, indices)
        assert picked == tuple(table[i] for i in indices)
        if last is not None and len(picked) > len(last) and picked[: len(last)] == last and action == "more":
            assert GROWN.extends(picked, last)  # what `Unseen` reads to look up only the new keys
        last = picked
    forget()


def _shouted(message: Message) -> Message:
    """A message in a form of its own when it says "x", else itself."""
    return (
        message.with_blocks((TextBlock(text="X"),)) if message.blocks == (TextBlock(text="x"),) else message
    )


_shout = MappedAlong[Message](_shouted)


@given(st.lists(st.sampled_from(["a", "x", "b"]), max_size=8), st.integers(0, 8))
def test_mapped_along_maps_each_item_and_keeps_an_unchanged_sequence(texts: list[str], cut: int) -> None:
    messages = tuple(Message(role="user", blocks=(TextBlock(text=t),)) for t in texts)
    for items in (messages[:cut], messages, (*messages, Message(role="user", blocks=(TextBlock(text="x"),)))):
        mapped = _shout(items)
        assert [m.blocks for m in mapped] == [_shouted(m).blocks for m in items]
        assert (mapped is items) == all(_shouted(m) is m for m in items)
        assert _shout(items) is mapped  # the same sequence again: the very tuple, or `items`
