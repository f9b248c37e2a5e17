"""A set grown one item at a time is the frozenset of its items, whatever is grown from it, and
growing the newest version shares the set it grew from."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.growing import GrowingSet

ITEMS = st.sampled_from([f"f{k}.py" for k in range(12)])
steps = st.lists(
    st.tuples(st.sampled_from(["grow", "grow", "grow", "keep"]), st.integers(0, 1_000), ITEMS), max_size=60
)
"""Each step grows some earlier version (the newest most often, when the index is large) by an
item, or keeps only some items of it, as a compression keeps the reserved reads."""


@given(st.lists(ITEMS, max_size=6), steps, st.frozensets(ITEMS))
def test_every_version_is_the_frozenset_of_its_items_whatever_grows_from_it(
    first: list[str], program: list[tuple[str, int, str]], kept: frozenset[str]
) -> None:
    versions = [GrowingSet(first)]
    models = [frozenset(first)]
    for action, which, item in program:
        at = min(which, len(versions) - 1)  # mostly the newest: the run's own line of states
        if action == "grow":
            versions.append(versions[at].with_item(item))
            models.append(models[at] | {item})
        else:
            versions.append(versions[at] & (kept | {item}))
            models.append(models[at] & (kept | {item}))
    for version, model in zip(versions, models, strict=True):  # none changed since it was made
        assert version == model and model == version
        assert len(version) == len(model) and set(version) == model
        assert hash(version) == hash(model)
        assert all((item in version) == (item in model) for item in [*model, "absent.py"])
        assert pickle.loads(pickle.dumps(version)) == model


def test_growing_the_newest_version_shares_what_it_grew_from() -> None:
    """A run's reads cost O(1) each: the newest version's items are not copied as it grows, and a
    version it already holds is itself; an older version grown (a branch) is a copy."""
    read = GrowingSet[str]().with_item("a")
    grown = read.with_item("b").with_item("c")
    assert grown._places is read._places
    assert grown.with_item("b") is grown
    branch = read.with_item("d")
    assert branch._places is not read._places
    assert read == {"a"} and grown == {"a", "b", "c"} and branch == {"a", "d"}
    assert GrowingSet[str]().with_item("x")._places is not GrowingSet[str]().with_item("y")._places
