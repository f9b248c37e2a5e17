"""Filler: exact sizes for every kind, exact estimator tokens, determinism, realistic tokenization."""

from __future__ import annotations

import base64
import itertools
import os
import random
import subprocess
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import TextBlock, utf8_len
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.workloads.filler import (
    FILLER_KINDS,
    derive_seed,
    filler,
    filler_at,
    filler_tokens,
    image_block,
    item_rng,
)

SIZES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 17, 31, 64, 99, 100, 101, 255, 1000, 4097, 20011]
ESTIMATOR = AgentScopeEstimator()


@pytest.mark.parametrize("kind", FILLER_KINDS)
def test_filler_has_exactly_the_requested_bytes(kind: str) -> None:
    for n in SIZES:
        text = filler(kind, n, random.Random(n))  # type: ignore[arg-type]
        assert utf8_len(text) == n, (kind, n)
        if kind != "zh":
            assert text.isascii(), (kind, n)


@pytest.mark.parametrize("kind", FILLER_KINDS)
def test_filler_tokens_are_exact_under_the_estimator(kind: str) -> None:
    for n in [0, 1, 2, 3, 7, 50, 333, 2000]:
        text = filler_tokens(kind, n, random.Random(n))  # type: ignore[arg-type]
        assert utf8_len(text) == 4 * n
        assert ESTIMATOR.text_tokens(text) == n
        assert ESTIMATOR.count([Message(role="user", blocks=(TextBlock(text=text),))], ()) == n


@given(st.lists(st.integers(0, 3000), min_size=1, max_size=5), st.integers(0, 2**32))
def test_token_fillers_add_up_exactly_when_joined(sizes: list[int], seed: int) -> None:
    """4·N bytes each: the estimator's single rounding on the total never drifts."""
    rng = random.Random(seed)
    texts = [filler_tokens(rng.choice(FILLER_KINDS), n, rng) for n in sizes]
    message = Message(role="user", blocks=tuple(TextBlock(text=t) for t in texts))
    assert ESTIMATOR.count([message], ()) == sum(sizes)


def test_chinese_filler_is_mostly_cjk_and_padded_with_at_most_two_ascii_bytes() -> None:
    for n in [3, 4, 5, 300, 301, 302, 5000]:
        text = filler("zh", n, random.Random(7))
        cjk = sum(1 for ch in text if unicodedata.east_asian_width(ch) == "W")
        assert cjk * 3 >= 0.6 * n, n
        assert utf8_len(text) == n
    assert filler("zh", 1, random.Random(0)).isascii()
    assert filler("zh", 2, random.Random(0)).isascii()


def test_same_seed_same_text_and_different_seeds_differ() -> None:
    for kind in FILLER_KINDS:
        assert filler(kind, 2000, random.Random(3)) == filler(kind, 2000, random.Random(3))
        assert filler(kind, 2000, random.Random(3)) != filler(kind, 2000, random.Random(4))


def test_a_shorter_filler_is_a_prefix_of_a_longer_one() -> None:
    """Sizes cut the same stream, so growing one item never reshuffles its start."""
    for kind in ("prose", "code", "json", "log", "shell"):
        assert filler(kind, 5000, random.Random(1)).startswith(filler(kind, 777, random.Random(1)))
    # Chinese is cut at a character and padded with digits, before which it is the same stream
    longer, shorter = filler("zh", 5000, random.Random(1)), filler("zh", 777, random.Random(1))
    assert longer.startswith(shorter.rstrip("0123456789"))


def test_items_draw_from_independent_generators() -> None:
    assert filler_at(0, "turns[0].user", "prose", 500) == filler_at(0, "turns[0].user", "prose", 500)
    assert filler_at(0, "turns[0].user", "prose", 500) != filler_at(0, "turns[1].user", "prose", 500)
    assert filler_at(0, "turns[0].user", "prose", 500) != filler_at(1, "turns[0].user", "prose", 500)
    assert item_rng(5, "a").random() == item_rng(5, "a").random()


def test_derive_seed_is_a_stable_hash_not_pythons_salted_one() -> None:
    # BLAKE2b-64 of "0\x00turns[0].user": pinned, since every generated text depends on it.
    assert derive_seed(0, "turns[0].user") == 0xE75978657DAEA404
    code = (
        "from ctxlab.workloads.filler import derive_seed, filler_at;"
        "print(derive_seed(3, 'x'), filler_at(3, 'turns[0].user', 'zh', 300))"
    )
    assert len(_printed_under_two_hash_seeds(code)) == 1


def _printed_under_two_hash_seeds(code: str) -> set[str]:
    """What `code` prints in two processes whose `hash()` differs."""
    return {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": salt},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for salt in ("1", "2")
    }


def test_negative_size_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="0 or more"):
        filler("prose", -1, random.Random(0))


def test_image_blocks_are_deterministic_urls_or_valid_png_payloads() -> None:
    url = image_block("image/jpeg", seed=1, path="p")
    assert url == image_block("image/jpeg", seed=1, path="p")
    assert url != image_block("image/jpeg", seed=1, path="q")
    assert url.kind == "url" and url.source.endswith(".jpeg") and url.is_image
    png = image_block("image/png", seed=1, path="p", source="base64", name="fig")
    raw = base64.b64decode(png.source)
    assert raw.startswith(b"\x89PNG\r\n\x1a\n") and raw.endswith(b"IEND\xaeB`\x82")
    assert png.name == "fig" and png.tally.ndata == 1
    other = image_block("audio/mpeg", seed=1, path="p", source="base64")
    assert len(base64.b64decode(other.source)) == 48


# Bytes per o200k token of real text of each kind (measured on the transcripts in tests/data/traces and on
# public text): the filler should fall in the same range, so real-tokenizer runs look realistic.
REALISTIC_BYTES_PER_TOKEN = {
    "prose": (4.3, 6.0),
    "code": (3.2, 5.0),
    "json": (2.4, 4.0),
    "log": (1.8, 3.2),
    "shell": (2.3, 3.8),
    "zh": (3.0, 6.0),
}


@pytest.mark.parametrize("kind", FILLER_KINDS)
def test_filler_tokenizes_like_real_text_of_its_kind(kind: str) -> None:
    from ctxlab.tokenizers import BpeCounter

    text = filler(kind, 30000, random.Random(11))  # type: ignore[arg-type]
    ratio = utf8_len(text) / BpeCounter().text_tokens(text)
    low, high = REALISTIC_BYTES_PER_TOKEN[kind]
    assert low <= ratio <= high, (kind, ratio)


POOL_DIGESTS = {
    "code": "44ad8aee57d7790e",
    "json": "9e9056bd338e9324",
    "log": "30c6f118aed67fae",
    "shell": "27fb7197cfa80bc0",
    "zh": "634c37c6f19c3bcd",
}


@pytest.mark.parametrize("kind", sorted(POOL_DIGESTS))
def test_each_kind_s_pool_is_the_same_in_every_process(kind: str) -> None:
    """A kind's units come from a pool made from a fixed seed; a change here changes every filler
    of the kind, and so every workload that holds one: on purpose only."""
    code = (
        "import hashlib, json; from ctxlab.workloads.filler import _pool;"
        f"print(hashlib.sha256(json.dumps(_pool({kind!r})).encode()).hexdigest()[:16])"
    )
    assert _printed_under_two_hash_seeds(code) == {POOL_DIGESTS[kind]}


def test_units_are_drawn_in_blocks_not_a_word_at_a_time() -> None:
    """An item reads its generator 64 values at a time: 20 kB of any kind takes a few blocks,
    where drawing word by word took thousands of draws."""

    class Counting(random.Random):
        draws = 0

        def getrandbits(self, k: int) -> int:  # every draw of the generator comes through here
            self.draws += 1
            return super().getrandbits(k)

    for kind in FILLER_KINDS:
        rng = Counting(5)
        filler(kind, 20_000, rng)
        assert 1 <= rng.draws <= 40, (kind, rng.draws)


def test_json_ids_and_log_times_rise_through_an_item() -> None:
    import datetime as dt
    import json
    import re

    records = json.loads(
        filler("json", 30_000, random.Random(2)).rsplit("\n    {\n", 1)[0].rstrip(",") + "]}"
    )
    ids = [record["id"] for record in records["results"]]
    assert len(ids) > 20 and all(b - a in range(1, 14) for a, b in itertools.pairwise(ids))
    stamps = re.findall(r"^(\S+Z) ", filler("log", 30_000, random.Random(2)), re.MULTILINE)
    times = [dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ") for s in stamps]
    assert len(times) > 200
    assert all(
        dt.timedelta(milliseconds=1) <= b - a < dt.timedelta(seconds=4) for a, b in itertools.pairwise(times)
    )
