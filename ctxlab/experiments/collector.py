"""How often Python's cyclic garbage collector runs while the lab loads, runs and writes.

A run allocates millions of small objects (frozen messages and states, YAML nodes, table rows)
that reference counting frees by itself; they almost never form cycles (a finished run's loop,
whose hooks refer back to it, is released to that end: `engine.session.Session.release`).
Python's default collector still walks the young objects every 700 allocations, and every object
in the process on each full pass, which costs a fifth of the CPU time of a 2,000-reply scenario
file (about 60% of parsing its YAML). The lab's processes therefore collect less often, and
leave out of every pass the objects that exist once the lab is imported (modules, classes,
functions), which live as long as the process.

Invariants:
- Only when collections happen changes: every object is freed as before (cycles at the next
  collection), so results do not depend on it; no result reads `id()` of a freed object.
- `collecting_less` restores the thresholds it found and unfreezes what it froze, so a process
  that calls the lab in-process (a test, a notebook) keeps its own collector settings. The
  `ctxlab` command runs in it, and so do runs executed in the calling process.
- Local worker processes collect less for their whole life (`collect_less`, their initializer);
  a Dask worker, which the lab does not start, collects less while it runs one of the lab's runs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (500_000, 20, 20)
"""Allocations between young collections, and young (then middle) collections between older ones
(Python's defaults: 700, 10, 10). A young collection walks every young container, a history tuple
as long as the conversation included, and a long replay keeps a few such tuples alive at a time
(`message.Lineage`): at 50,000, replaying a 54 MB agent log spent 0.3-1.1 s of its 5-10 s in
young and middle collections; at 500,000, 0.2-0.45 s (docs/performance.md)."""


def collect_less() -> None:
    """From now on in this process: collect at `THRESHOLDS`, and leave the objects that exist now
    out of every collection."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


@contextmanager
def collecting_less() -> Iterator[None]:
    """`collect_less` for the block; the collector's settings are restored after it. A block
    inside another changes nothing, and objects someone else froze stay frozen (this block then
    freezes nothing)."""
    before = gc.get_threshold()
    if before == THRESHOLDS:
        yield
        return
    freezing = gc.get_freeze_count() == 0
    if freezing:
        gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if freezing:
            gc.unfreeze()
