"""A frozen virtual clock and counter ids for the real agentscope agent.

AgentScope 2.0.11 reads the time and makes ids in exactly these places on the paths a parity run
takes (found by reading `agent/_agent.py`, `_utils/_common.py`, `message/`, `state/`, `tool/`):
- `agent/_agent.py` calls `datetime.now(tz)` twice: for the `{current_time}` of the compression
  prompt and for the runtime-state injection. Both read the module-level name `datetime`, which
  is replaced by a subclass whose `now` reads the clock (`strptime` is inherited unchanged).
- `_utils/_common.py` holds the global `_id_factory` (uuid4 hex) behind `_generate_id`, used for
  session, reply, message, block, task and response ids, and `_timestamp_factory` (local
  `datetime.now().isoformat()`) behind `_generate_timestamp`, used for `created_at` fields.
  Both are swapped for the run and restored afterwards.

Invariants:
- The clock is ctxlab's own `VirtualClock`, held in a cell: it never moves by itself, only
  `advance` moves it, so every read inside one step of the agent sees the same instant.
- Ids are `as-00001`, `as-00002`, ... in the order agentscope asks for them, fresh per run.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from unittest import mock
from zoneinfo import ZoneInfo

from ctxlab.core.world.script import Script
from ctxlab.engine.clock import VirtualClock


@dataclass(slots=True)
class ClockCell:
    """The run's current ctxlab clock, in a cell that the patched agentscope reads."""

    clock: VirtualClock

    def now(self, tz: dt.tzinfo | None = None) -> dt.datetime:
        """The instant in `tz`, or as naive UTC when `tz` is None.

        >>> cell = ClockCell(VirtualClock(instant=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)))
        >>> cell.now(ZoneInfo("Asia/Shanghai")).isoformat()
        '2026-01-01T08:00:00+08:00'
        """
        if tz is None:
            return self.clock.instant.astimezone(dt.UTC).replace(tzinfo=None)
        return self.clock.instant.astimezone(tz)

    def stamp(self) -> str:
        """The instant in ISO format, as AgentScope's `created_at` fields hold it."""
        return self.clock.instant.isoformat()

    def advance(self, seconds: float) -> None:
        """Move the clock forward (or back, for a negative value)."""
        self.clock = self.clock.advanced(seconds)

    def move_to(self, timezone: str) -> None:
        """Show the same instant in another zone (agentscope reads it in the zone it asks for)."""
        self.clock = self.clock.in_zone(timezone)


def start_clock(script: Script) -> ClockCell:
    """The script's clock: `start` (a naive start is read in `script.timezone`)."""
    start = script.start
    if start.tzinfo is None:
        start = start.replace(tzinfo=ZoneInfo(script.timezone))
    return ClockCell(VirtualClock(instant=start, timezone=script.timezone))


def frozen_datetime(clock: ClockCell) -> type[dt.datetime]:
    """A `datetime` class whose `now` reads `clock`."""

    class FrozenDatetime(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> dt.datetime:  # type: ignore[override]
            return clock.now(tz)

    return FrozenDatetime


@contextmanager
def deterministic_agentscope(clock: ClockCell) -> Iterator[None]:
    """Within the block, agentscope reads time from `clock` and makes counter ids."""
    import agentscope.agent._agent as agent_module
    from agentscope._utils import _common

    counter = itertools.count(1)
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(agent_module, "datetime", frozen_datetime(clock)))
        stack.enter_context(mock.patch.object(_common, "_id_factory", lambda: f"as-{next(counter):05d}"))
        stack.enter_context(mock.patch.object(_common, "_timestamp_factory", clock.stamp))
        yield
