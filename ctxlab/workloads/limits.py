"""How large a workload may be asked for: bounds on every size and count a scenario gives.

A slip of the keyboard (`bytes: 40000000000`, `turns: 10000000`) would otherwise make loading
allocate without end or never finish; with these bounds it is a located error at load time.
The bounds are far above any window a provider offers, so no real experiment meets them.

Invariants:
- Every filler size (`{bytes: N}`, `{tokens: N}`, a generator's `*_bytes` and `*_tokens`) is at
  most `MAX_ITEM_BYTES` bytes; every generator count (turns, rounds, tasks, ...) at most
  `MAX_COUNT`.
- The filler one workload builds adds up to at most `MAX_WORKLOAD_BYTES` (`filler_budget`):
  sizes and counts each within bounds still multiply (a million rounds of 64 MiB).
- A field with a tighter bound of its own (`fan_out: le=12`) stays a plain `int`: pydantic keeps
  only one upper bound, the type's, so the two must not meet.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated

from pydantic import Field

from ctxlab.problems import Problem, WorkloadError

MAX_ITEM_BYTES = 64 * 1024 * 1024
"""One filler item: 64 MiB, some 16 million estimator tokens."""

MAX_COUNT = 100_000
"""Turns, rounds, tasks or any other count a generator repeats."""

Bytes = Annotated[int, Field(le=MAX_ITEM_BYTES)]
"""A size in bytes, at most `MAX_ITEM_BYTES` (the field gives its own lower bound)."""

Tokens = Annotated[int, Field(le=MAX_ITEM_BYTES // 4)]
"""A size in estimator tokens (4 bytes each), at most `MAX_ITEM_BYTES` bytes."""

Count = Annotated[int, Field(le=MAX_COUNT)]
"""How many of something, at most `MAX_COUNT` (the field gives its own lower bound)."""

MAX_WORKLOAD_BYTES = 4 * MAX_ITEM_BYTES
"""All the filler of one workload: 256 MiB, about 64 million estimator tokens."""

_budget: ContextVar[list[int] | None] = ContextVar("filler_budget", default=None)


@contextmanager
def filler_budget() -> Iterator[None]:
    """Count the filler generated inside (by `spend`), refusing more than `MAX_WORKLOAD_BYTES`."""
    token = _budget.set([0])
    try:
        yield
    finally:
        _budget.reset(token)


def spend(nbytes: int) -> None:
    """Count `nbytes` of filler against the open budget, if any.

    Raises:
        WorkloadError: the workload's filler would pass `MAX_WORKLOAD_BYTES`.
    """
    spent = _budget.get()
    if spent is None:
        return
    spent[0] += max(nbytes, 0)
    if spent[0] > MAX_WORKLOAD_BYTES:
        message = (
            f"its filler adds up to over {MAX_WORKLOAD_BYTES:,} bytes, more than a run can hold; "
            "ask for fewer or smaller items"
        )
        raise WorkloadError([Problem(loc=(), message=message)])
