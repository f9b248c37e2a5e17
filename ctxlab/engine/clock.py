"""Simulated time and counter ids: the only sources of time and identity in a run.

Invariants:
- Nothing reads the wall clock: `VirtualClock` holds an instant that scenarios advance, move
  backwards, or show in another zone; `IdGen` issues `prefix-0001`, `prefix-0002`, ... from one
  counter. Both are values: each step returns a new one.
- An unknown zone name falls back to UTC, as AgentScope's resolver does.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, replace
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


@functools.cache
def resolve_zone(name: str) -> dt.tzinfo:
    """The zone of an IANA name, or UTC when the name is unknown.

    >>> resolve_zone("Asia/Shanghai").utcoffset(None) is None, resolve_zone("Nowhere/City")
    (True, datetime.timezone.utc)
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return dt.UTC


@dataclass(frozen=True, slots=True, kw_only=True)
class VirtualClock:
    """A simulated instant (timezone-aware) and the zone it is shown in."""

    instant: dt.datetime
    timezone: str = "UTC"

    def __post_init__(self) -> None:
        if self.instant.tzinfo is None:
            raise ValueError(f"the clock needs a timezone-aware instant, got {self.instant!r}")

    def now(self) -> dt.datetime:
        """The current time in the clock's zone."""
        return self.instant.astimezone(resolve_zone(self.timezone))

    def advanced(self, seconds: float) -> VirtualClock:
        """The clock `seconds` later (earlier when negative)."""
        return replace(self, instant=self.instant + dt.timedelta(seconds=seconds))

    def in_zone(self, timezone: str) -> VirtualClock:
        """The same instant shown in another zone."""
        return replace(self, timezone=timezone)


@dataclass(frozen=True, slots=True, kw_only=True)
class Issued:
    """A new id and the generator to use next."""

    id: str
    ids: IdGen


@dataclass(frozen=True, slots=True, kw_only=True)
class IdGen:
    """Counter ids: one counter shared by every prefix, so ids are unique across kinds.

    >>> first = IdGen().issue("reply"); first.id, first.ids.issue("msg").id
    ('reply-0001', 'msg-0002')
    """

    issued: int = 0

    def issue(self, prefix: str) -> Issued:
        """The next id with `prefix`."""
        n = self.issued + 1
        return Issued(id=f"{prefix}-{n:04d}", ids=IdGen(issued=n))
