"""English prose filler: sentences from templates and word banks, drawn from a seeded generator.

Invariants:
- `prose(rng)` draws, per paragraph, `randrange(3, 7)` sentences; per sentence the template by
  `randrange`, then each of its fields in sorted name order by `choice` (`number` by
  `randrange(2, 90)`). These draws fix the text: every seed's bytes are pinned by them.
- `prose_text(out, n)` is the first n characters of `prose(out.rng)` and consumes exactly the same
  draws (`ctxlab.workloads.draws`), with no Python call per word; a test compares the two.
- Pure ASCII: one byte per character.
"""

from __future__ import annotations

import operator
import random
import re
import string
from collections.abc import Callable, Iterator, Sequence

from ctxlab.workloads import banks as b
from ctxlab.workloads.draws import Outputs, shift_below

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
"""`_DRAWS` as data: each field's words, dressed, in its bank's order (`number` is `randrange(2, 90)`)."""


_DRAWS: dict[str, Callable[[random.Random], object]] = {
    "adj": lambda rng: rng.choice(b.ADJECTIVES),
    "adj2": lambda rng: rng.choice(b.ADJECTIVES),
    "noun": lambda rng: rng.choice(b.NOUNS),
    "noun2": lambda rng: rng.choice(b.NOUNS),
    "noun3": lambda rng: rng.choice(b.NOUNS),
    "verb": lambda rng: rng.choice(b.VERBS),
    "prep": lambda rng: rng.choice(b.PREPOSITIONS),
    "adverb": lambda rng: rng.choice(b.ADVERBS),
    "connective": lambda rng: rng.choice(b.CONNECTIVES),
    "name": lambda rng: rng.choice(b.NAMES),
    "number": lambda rng: rng.randrange(2, 90),
    "an_adj2": lambda rng: _with_article(rng.choice(b.ADJECTIVES)),
    "An_adj": lambda rng: _with_article(rng.choice(b.ADJECTIVES)).capitalize(),
}


def sentence(rng: random.Random) -> str:
    """One sentence drawn from `rng`."""
    k = rng.randrange(len(_SENTENCES))
    return _SENTENCES[k].format(**{field: _DRAWS[field](rng) for field in sorted(_FIELDS[k])})


def prose(rng: random.Random) -> Iterator[str]:
    """Paragraphs of 3 to 6 sentences, without end."""
    while True:
        sentences = [sentence(rng) for _ in range(rng.randrange(3, 7))]
        yield " ".join(sentences) + "\n\n"


# Prose read from a generator's outputs in blocks: the same draws as `prose`, in the same order,
# without a Python call per word (`ctxlab.workloads.draws`). Long results are mostly prose.

_Draw = tuple[Sequence[object], int, int]
_Plan = tuple[str, Callable[[list[object]], tuple[object, ...]], tuple[_Draw, ...]]


def _plan(template: str, fields: frozenset[str]) -> _Plan:
    """The template with `%s` for its fields in place order, how to order the drawn words so, and
    what to draw for each field in drawing (sorted) order: its bank, the bank's size and shift."""
    drawn = sorted(fields)
    placed = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    assert "%" not in template and sorted(set(placed)) == drawn and len(placed) > 1
    percent = re.sub(r"\{(\w+)\}", "%s", template)
    order = operator.itemgetter(*(drawn.index(f) for f in placed))
    draws = tuple((_BANKS[f], len(_BANKS[f]), shift_below(len(_BANKS[f]))) for f in drawn)
    return percent, order, draws


_PLANS = tuple(_plan(t, f) for t, f in zip(_SENTENCES, _FIELDS, strict=True))
_SENTENCE_SHIFT = shift_below(len(_SENTENCES))
_COUNT_SHIFT = shift_below(4)  # sentences per paragraph: randrange(3, 7)
_MARGIN = 128
"""Outputs kept ahead of a paragraph, which uses about 46 (rarely over 90); a paragraph that runs
past them is drawn again after a fetch."""
_BYTES_PER_OUTPUT = 6
"""Prose draws about one output per six bytes (0.16-0.19 per byte past a paragraph): a fetch
sized by the bytes still wanted rarely needs a second one, and a short text fetches little."""


def prose_text(out: Outputs, nbytes: int) -> str:
    """The first `nbytes` of `prose(rng)`, picking from `out` (the outputs of that `rng`), which
    advances by exactly the outputs `prose` would have drawn for it."""
    pieces: list[str] = []
    size = 0
    while size < nbytes:
        if len(out.words) - out.used < _MARGIN:
            out.fetch(_MARGIN + (nbytes - size) // _BYTES_PER_OUTPUT)
        try:
            at, paragraph = _paragraph(out.words, out.used)
        except IndexError:  # ran past the fetched outputs: fetch more, draw it again
            out.fetch(_MARGIN)
            continue
        out.used = at
        pieces.append(paragraph)
        size += len(paragraph)
    return "".join(pieces)[:nbytes]


def _paragraph(words: list[int], at: int) -> tuple[int, str]:
    """The paragraph drawn from `words[at:]`, and where its draws end (IndexError past the end)."""
    count = words[at] >> _COUNT_SHIFT
    at += 1
    while count >= 4:
        count = words[at] >> _COUNT_SHIFT
        at += 1
    sentences: list[str] = []
    for _ in range(3 + count):
        k = words[at] >> _SENTENCE_SHIFT
        at += 1
        while k >= len(_SENTENCES):
            k = words[at] >> _SENTENCE_SHIFT
            at += 1
        template, order, draws = _PLANS[k]
        drawn: list[object] = []
        for bank, n, shift in draws:
            value = words[at] >> shift
            at += 1
            while value >= n:
                value = words[at] >> shift
                at += 1
            drawn.append(bank[value])
        sentences.append(template % order(drawn))
    return at, " ".join(sentences) + "\n\n"
