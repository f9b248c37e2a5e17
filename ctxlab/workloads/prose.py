"""English prose filler: paragraphs of sentences drawn from a seeded generator, in blocks.

Invariants:
- `sentence(rng)` draws the template by `randrange`, then each of its fields in sorted name order
  by `choice` (`number` by `randrange(2, 90)`).
- `sentence_pool()` is `POOL_SIZE` sentences made from templates and word banks by a generator of
  a fixed seed, the same on every machine and in every process.
- `prose(rng)` reads `rng` in blocks of `BLOCK` 16-bit values (`rng.randbytes`, little-endian);
  each paragraph takes one value for its length (3 to 6 sentences: 3 plus the value's low two
  bits) and one per sentence (the pool's sentence at the value's low 12 bits). These draws fix
  the text: every seed's bytes are pinned by them, and a paragraph costs a few C calls, not a
  Python step per word.
- Pure ASCII: one byte per character.
"""

from __future__ import annotations

import functools
import itertools
import random
import string
import struct
from collections.abc import Iterator, Sequence

from ctxlab.workloads import banks as b

_SENTENCES = (
    "The {adj} {noun} {verb} the {noun2} {prep} the {adj2} {noun3}.",
    "{connective}, each {noun} {adverb} {verb} its own {noun2}.",
    "{name} said the {noun} {verb} {number} {noun2}s {prep} the {adj} {noun3}.",
    "When the {noun} is {adj}, the {noun2} {verb} {an_adj2} {noun3}.",
    "{An_adj} {noun} {adverb} {verb} the {noun2}, and the {noun3} follows.",
    "Why does the {noun} keep the {adj} {noun2} {prep} the {noun3}?",
)
_FIELDS = tuple(frozenset(f for _, f, _, _ in string.Formatter().parse(t) if f) for t in _SENTENCES)


def _with_article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


_BANKS: dict[str, Sequence[object]] = {
    "adj": b.ADJECTIVES,
    "adj2": b.ADJECTIVES,
    "noun": b.NOUNS,
    "noun2": b.NOUNS,
    "noun3": b.NOUNS,
    "verb": b.VERBS,
    "prep": b.PREPOSITIONS,
    "adverb": b.ADVERBS,
    "connective": b.CONNECTIVES,
    "name": b.NAMES,
    "number": range(2, 90),
    "an_adj2": tuple(_with_article(a) for a in b.ADJECTIVES),
    "An_adj": tuple(_with_article(a).capitalize() for a in b.ADJECTIVES),
}
"""Each field's words, dressed (`choice` of `number`'s bank is `randrange(2, 90)`)."""


def sentence(rng: random.Random) -> str:
    """One sentence drawn from `rng`."""
    k = rng.randrange(len(_SENTENCES))
    return _SENTENCES[k].format(**{field: rng.choice(_BANKS[field]) for field in sorted(_FIELDS[k])})


POOL_SIZE = 4096
"""Sentences in the pool: a power of two, so that a 16-bit value's low bits pick one uniformly."""
_POOL_SEED = 20_260_101
BLOCK = 64
"""16-bit values drawn at a time: one `randbytes` call per ~50 sentences (~3 kB of prose)."""
_VALUES = struct.Struct(f"<{BLOCK}H")


@functools.cache
def sentence_pool() -> tuple[str, ...]:
    """`POOL_SIZE` sentences from a generator of a fixed seed: every sentence's template by
    `choices`, then, template by template, each field's words for all its sentences by `choices`
    (fields in the order they stand)."""
    rng = random.Random(_POOL_SEED)
    templates = rng.choices(range(len(_SENTENCES)), k=POOL_SIZE)
    made: list[Iterator[str]] = []
    for k, template in enumerate(_SENTENCES):
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f]
        percent = template.format_map({f: "%s" for f in fields})
        columns = [rng.choices(_BANKS[f], k=templates.count(k)) for f in fields]
        made.append(iter([percent % words for words in zip(*columns, strict=True)]))
    return tuple(next(made[k]) for k in templates)


@functools.cache
def _by_value() -> tuple[str, ...]:
    """The pool repeated to 65,536 entries: indexed by a whole 16-bit value, it gives the
    sentence at the value's low 12 bits."""
    pool = sentence_pool()
    return pool * (2**16 // len(pool))


def draws(rng: random.Random) -> Iterator[int]:
    """`rng`'s 16-bit values, without end, drawn `BLOCK` at a time (`rng.randbytes`,
    little-endian): a whole block costs a few C calls, whatever it is used for."""
    blocks = map(rng.randbytes, itertools.repeat(2 * BLOCK))
    return itertools.chain.from_iterable(map(_VALUES.unpack, blocks))


def prose(rng: random.Random) -> Iterator[str]:
    """Paragraphs of 3 to 6 pool sentences, without end."""
    pick, values = _by_value().__getitem__, draws(rng)
    while True:
        count = 3 + (next(values) & 3)
        yield " ".join(map(pick, itertools.islice(values, count))) + "\n\n"
