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
- The clock never moves by itself: only `advance` moves it, so every read inside one step of the
  agent sees the same instant.
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

from ctxlab.core.script import Script


@dataclass(slots=True)
class VirtualClock:
    """An instant that only moves when told to."""

    instant: dt.datetime

    def now(self, tz: dt.tzinfo | None = None) -> dt.datetime:
        """The instant in `tz`, or as naive UTC when `tz` is None.

        >>> clock = VirtualClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
        >>> clock.now(ZoneInfo("Asia/Shanghai")).isoformat()
        '2026-01-01T08:00:00+08:00'
        """
        if tz is None:
            return self.instant.astimezone(dt.UTC).replace(tzinfo=None)
        return self.instant.astimezone(tz)

    def stamp(self) -> str:
        """The instant in ISO format, as AgentScope's `created_at` fields hold it."""
        return self.instant.isoformat()

    def advance(self, seconds: float) -> None:
        """Move the instant forward (or back, for a negative value)."""
        self.instant += dt.timedelta(seconds=seconds)


def start_of(script: Script) -> dt.datetime:
    """The script's start as an aware instant: a naive start is read in `script.timezone`."""
    if script.start.tzinfo is None:
        return script.start.replace(tzinfo=ZoneInfo(script.timezone))
    return script.start


def frozen_datetime(clock: VirtualClock) -> type[dt.datetime]:
    """A `datetime` class whose `now` reads `clock`."""

    class FrozenDatetime(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> dt.datetime:  # type: ignore[override]
            return clock.now(tz)

    return FrozenDatetime


@contextmanager
def deterministic_agentscope(clock: VirtualClock) -> Iterator[None]:
    """Within the block, agentscope reads time from `clock` and makes counter ids."""
    import agentscope.agent._agent as agent_module
    from agentscope._utils import _common

    counter = itertools.count(1)
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(agent_module, "datetime", frozen_datetime(clock)))
        stack.enter_context(mock.patch.object(_common, "_id_factory", lambda: f"as-{next(counter):05d}"))
        stack.enter_context(mock.patch.object(_common, "_timestamp_factory", clock.stamp))
        yield
