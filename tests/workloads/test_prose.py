"""Prose filler: paragraphs of pool sentences, drawn in blocks; pinned bytes for every seed."""

from __future__ import annotations

import hashlib
import itertools
import random
import re
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.workloads import prose
from ctxlab.workloads.filler import filler, filler_at, item_rng

SIZES = [0, 1, 2, 3, 9, 64, 100, 999, 4000, 20011]


def test_the_pool_is_the_same_in_every_process_and_holds_distinct_sentences() -> None:
    pool = prose.sentence_pool()
    assert len(pool) == prose.POOL_SIZE == 4096 and len(set(pool)) == len(pool)
    assert all(s.isascii() and s[0].isupper() and s[-1] in ".?" for s in pool)
    digest = hashlib.sha256("\n".join(pool).encode()).hexdigest()[:16]
    assert digest == "20c9d934b14981c2"  # a change here changes every prose filler: on purpose only


def test_a_paragraph_is_three_to_six_pool_sentences() -> None:
    pool = set(prose.sentence_pool())
    counts = set()
    for paragraph in itertools.islice(prose.prose(random.Random(4)), 400):
        assert paragraph.endswith("\n\n")
        sentences = re.split(r"(?<=[.?]) ", paragraph[:-2])
        assert set(sentences) <= pool and 3 <= len(sentences) <= 6, paragraph
        counts.add(len(sentences))
    assert counts == {3, 4, 5, 6}


@given(st.integers(0, 2**64), st.integers(0, 5000), st.integers(0, 5000))
def test_a_shorter_prose_is_the_start_of_a_longer_one(seed: int, a: int, b: int) -> None:
    short, long = sorted((a, b))
    assert filler("prose", long, random.Random(seed))[:short] == filler("prose", short, random.Random(seed))


@pytest.mark.parametrize("n", SIZES)
def test_an_item_s_prose_is_its_generator_s_prose(n: int) -> None:
    assert filler_at(5, "turns[3].user", "prose", n) == filler("prose", n, item_rng(5, "turns[3].user"))


def test_the_generator_advances_by_whole_blocks() -> None:
    """What a generator drawn from again gives next is fixed by the blocks read: 64 values, 128
    bytes, per block."""
    rng, twin = random.Random(9), random.Random(9)
    filler("prose", 4000, rng)
    blocks = 0
    while twin.getstate() != rng.getstate():
        twin.randbytes(2 * prose.BLOCK)
        blocks += 1
        assert blocks < 100
    # the values the paragraphs of 4,000 bytes take, read as the module's invariants say
    values = struct.unpack(f"<{100 * prose.BLOCK}H", random.Random(9).randbytes(200 * prose.BLOCK))
    pool, size, used = prose.sentence_pool(), 0, 0
    while size < 4000:
        count = 3 + (values[used] & 3)
        size += len(" ".join(pool[v % prose.POOL_SIZE] for v in values[used + 1 : used + 1 + count])) + 2
        used += 1 + count
    assert blocks == -(-used // prose.BLOCK) > 1


def test_pinned_bytes() -> None:
    """Every seed's bytes are pinned by the draws; these are seed 0's first 200."""
    assert filler("prose", 200, random.Random(0)) == (
        "A secondary failure slowly describes the report, and the directory follows. Why does the "
        "shipment keep the daily metric during the backup? When the queue is custom, the endpoint "
        "measures a remote late"
    )
