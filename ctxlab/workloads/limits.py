"""How large a workload may be asked for: bounds on every size and count a scenario gives.

A slip of the keyboard (`bytes: 40000000000`, `turns: 10000000`) would otherwise make loading
allocate without end or never finish; with these bounds it is a located error at load time.
The bounds are far above any window a provider offers, so no real experiment meets them.

Invariants:
- Every filler size (`{bytes: N}`, `{tokens: N}`, a generator's `*_bytes` and `*_tokens`) is at
  most `MAX_ITEM_BYTES` bytes; every generator count (turns, rounds, tasks, ...) at most
  `MAX_COUNT`.
- A field with a tighter bound of its own (`fan_out: le=12`) stays a plain `int`: pydantic keeps
  only one upper bound, the type's, so the two must not meet.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

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
