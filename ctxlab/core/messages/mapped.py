"""A sequence mapped item by item, kept along the sequences last mapped.

Invariants:
- `MappedAlong(one)(items, *args)` equals `tuple(one(item, *args) for item in items)`, or is
  `items` itself when every item maps to itself: `one` must be pure and the items immutable.
  Each item's value is kept by identity (`IdentityMemo`) and a sequence's values along it
  (`LeadingConcat`), so a sequence that grew costs what it gained.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat

K = TypeVar("K")


class MappedAlong(Generic[K]):
    """`tuple(one(item, *args) for item in items)`, or `items` itself when every item maps to
    itself: each item's value kept by identity (`IdentityMemo`) and a sequence's values kept
    along it (`LeadingConcat`), so a sequence that grew costs what it gained. The form a
    framework sends a stored message in, message by message, is one.
    """

    __slots__ = ("_along", "_one")

    def __init__(self, one: Callable[..., K]) -> None:
        self._one = IdentityMemo[K, K](one)
        self._along = LeadingConcat[K, K](lambda item, _at, _before, *args: (self._one(item, *args),))

    def __call__(self, items: tuple[K, ...], *args: Any) -> tuple[K, ...]:
        mapped = self._along(items, *args)
        return items if all(map(operator.is_, mapped, items)) else mapped
