"""No-progress and loop detection for compactions, and a circuit breaker value.

Sources: users' reports of compaction loops: NousResearch/hermes-agent #53008 (each cycle reclaimed
under 0.5%, fixed by stopping after 2 ineffective attempts), MoonshotAI/kimi-code PR #2498 and
pipecat PR #5505 (fixed overhead at or above the threshold keeps the trigger always true),
OpenHands/OpenHands #8630 (endless condensation); the 3-failure summary breaker of nonoka
(`memory.py` l.482, l.593–607) and Claude Code (`MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES = 3`,
reverse-engineered).

Invariants:
- A compaction is flagged `futile` when it reclaims less than `min_reclaim_ratio` of the tokens
  it started from, and `floor_at_trigger` when what no compaction can remove (system prompt,
  tools, summary, protected tail) is already at or above the trigger: the next check fires again.
- `Breaker.record(ok)` counts consecutive failures; `limit` of them trip it for good; a success
  before that resets the count. A tripped breaker stays tripped (nonoka disables the summarizer
  for the rest of the session).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import TokenCounter
from ctxlab.core.messages.tools import ToolSchema

SUMMARY_FAILURE_LIMIT = 3
"""Consecutive summary failures before falling back for good (nonoka, Claude Code)."""

FUTILE_COMPACTION_LIMIT = 2
"""Consecutive futile compactions before giving up on compaction (hermes-agent #53008)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressParams:
    """When a compaction counts as futile: under 1% of the tokens reclaimed."""

    min_reclaim_ratio: float = 0.01


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionProgress:
    """What one compaction achieved, and whether it is flagged."""

    before: int
    after: int
    floor: int
    trigger: int
    futile: bool
    floor_at_trigger: bool

    @property
    def reclaimed(self) -> int:
        """Tokens the compaction removed (negative when it grew the request)."""
        return self.before - self.after

    @property
    def flagged(self) -> bool:
        """True when the compaction is futile or cannot get below the trigger by design."""
        return self.futile or self.floor_at_trigger


def assess_compaction(
    *, before: int, after: int, floor: int, trigger: int, params: ProgressParams = ProgressParams()
) -> CompactionProgress:
    """Judge one compaction from the request tokens before and after it.

    >>> assess_compaction(before=10_000, after=9_950, floor=2_000, trigger=8_000).futile
    True
    >>> assess_compaction(before=10_000, after=5_000, floor=8_000, trigger=8_000).flagged
    True
    """
    return CompactionProgress(
        before=before,
        after=after,
        floor=floor,
        trigger=trigger,
        futile=before - after < params.min_reclaim_ratio * before,
        floor_at_trigger=floor >= trigger,
    )


def compaction_floor(
    counter: TokenCounter,
    *,
    fixed: Sequence[Message],
    tail: Sequence[Message] = (),
    tools: tuple[ToolSchema, ...] = (),
) -> int:
    """Tokens no compaction can remove: `fixed` (system prompt, summary, ledger), the protected
    `tail`, and the tools."""
    return counter.count([*fixed, *tail], tools)


@dataclass(frozen=True, slots=True, kw_only=True)
class Breaker:
    """Consecutive-failure circuit breaker.

    >>> b = Breaker(limit=2).record(False)
    >>> b.strikes, b.record(True).strikes, b.record(False).tripped
    (1, 0, True)
    """

    limit: int = SUMMARY_FAILURE_LIMIT
    strikes: int = 0
    tripped: bool = False

    def record(self, ok: bool) -> Breaker:
        """The breaker after one attempt that succeeded (`ok`) or failed."""
        if self.tripped:
            return self
        if ok:
            return replace(self, strikes=0)
        strikes = self.strikes + 1
        return replace(self, strikes=strikes, tripped=strikes >= self.limit)
