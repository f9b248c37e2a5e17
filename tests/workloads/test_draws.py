"""Block draws: the same values and the same generator position as drawing one call at a time."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.workloads import draws, prose
from ctxlab.workloads.draws import outputs, pick, shift_below
from ctxlab.workloads.filler import filler, filler_at, item_rng


class _Plain(random.Random):
    """A subclass that draws as `random.Random` does, but is not read in blocks."""


@given(st.integers(0, 2**64), st.lists(st.integers(1, 2**32 - 1), max_size=3000))
def test_picks_are_randrange_and_leave_the_generator_where_it_would_be(seed: int, sizes: list[int]) -> None:
    fast, slow = random.Random(seed), random.Random(seed)
    with outputs(fast) as out:
        assert out is not None
        drawn = [pick(out, n) for n in sizes]
    assert drawn == [slow.randrange(n) for n in sizes]
    assert fast.getstate() == slow.getstate()
    assert fast.random() == slow.random()


def test_the_generator_is_given_back_its_unused_outputs_when_drawing_fails() -> None:
    fast, slow = random.Random(3), random.Random(3)
    with pytest.raises(ValueError, match="0 < n < 2"), outputs(fast) as out:
        assert out is not None
        pick(out, 10)
        pick(out, 0)
    slow.randrange(10)
    assert fast.getstate() == slow.getstate()


def test_only_an_exact_random_is_read_in_blocks() -> None:
    with outputs(_Plain(1)) as out:
        assert out is None
    assert shift_below(1) == 31 and shift_below(6) == 29
    with pytest.raises(ValueError):
        shift_below(2**32)


SIZES = [0, 1, 2, 3, 9, 64, 100, 999, 4000, 20011]


@pytest.mark.parametrize("seed", range(40))
def test_block_prose_is_the_prose_stream_drawn_call_by_call(seed: int) -> None:
    """The same bytes as `prose(rng)` cut to size, and the generator left at the same place."""
    for n in SIZES:
        fast, slow = random.Random(seed), _Plain(seed)
        assert filler("prose", n, fast) == filler("prose", n, slow)
        assert fast.getstate() == slow.getstate()


def _recorded_fetches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The count of every `Outputs.fetch` from now on, in order (the fetches still happen)."""
    fetched: list[int] = []
    fetch = draws.Outputs.fetch
    monkeypatch.setattr(draws.Outputs, "fetch", lambda out, count: fetched.append(count) or fetch(out, count))
    return fetched


def test_a_paragraph_past_the_fetched_outputs_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = filler("prose", 5000, random.Random(8))
    monkeypatch.setattr(prose, "_MARGIN", 0)  # fetch one output at a time: every paragraph runs past
    monkeypatch.setattr(prose, "_BYTES_PER_OUTPUT", 10**9)
    fetched = _recorded_fetches(monkeypatch)
    fast, slow = random.Random(8), _Plain(8)
    assert filler("prose", 5000, fast) == filler("prose", 5000, slow) == expected
    assert fast.getstate() == slow.getstate()
    assert set(fetched) == {0} and len(fetched) > 5000 // 8  # one output a fetch, more fetches than words


@pytest.mark.parametrize("n", SIZES)
def test_an_item_s_prose_is_its_generator_s_prose(n: int) -> None:
    """`filler_at` reads an item's private generator without giving it back its outputs: the
    same text as `filler` on that generator."""
    assert filler_at(5, "turns[3].user", "prose", n) == filler("prose", n, item_rng(5, "turns[3].user"))


def test_a_long_prose_fetches_about_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    fetched = _recorded_fetches(monkeypatch)
    with outputs(random.Random(2)) as out:
        assert out is not None
        prose.prose_text(out, 60_000)
        assert len(fetched) <= 2 and out.used <= sum(fetched) < out.used + 2 * 60_000 // 6
