"""Scripted rounds a strategy never plays: turns with more rounds than its reply limit allows.

The loader warns of each (`ctxlab.scenarios.load`); a replayed transcript raises the limit to
fit instead (`ctxlab.scenarios.load.with_every_round`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.presets.entries import StrategyEntry
from ctxlab.presets.limits import ReplyLimit, reply_limit
from ctxlab.presets.registry import build_strategy
from ctxlab.scenarios.workload import Workload
from ctxlab.texts import load_texts


@dataclass(frozen=True, slots=True)
class RoundsCut:
    """Scripted rounds a strategy never plays: turns with more rounds than its reply limit.

    Attributes:
        strategy: the entry's index in the scenario's strategies.
        limit: what limits the entry's replies.
        longest: the most rounds one turn scripts; `turn` is the first such turn (from 0).
        turns: how many turns script more rounds than the limit.
        unplayed: their rounds past the limit, never played.
    """

    strategy: int
    limit: ReplyLimit
    longest: int
    turn: int
    turns: int
    unplayed: int

    @property
    def needed(self) -> int:
        """The least limit that plays every scripted round and lets each turn answer unforced."""
        return self.longest + 1

    def message(self, preset: str, scripts: str = "") -> str:
        """The warning; `scripts` names whose turns they are (a sub-agent's), else the workload's."""
        limit = self.limit
        unplayed, turns = _counted(self.unplayed, "scripted round"), _counted(self.turns, "turn")
        ends = "run fails" if limit.fails else "reply stops" if limit.steps else "reply is made to answer"
        verb = "is" if self.unplayed == 1 else "are"
        return (
            f"{scripts}turn {self.turn} scripts {self.longest:,} rounds, but {preset} plays at most "
            f"{limit.rounds:,} a reply ({limit.setting}): {unplayed} in {turns} {verb} never "
            f"played, the {ends} first; set {limit.setting}: {self.needed} to play every round"
        )


def _counted(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def scripted_rounds(workload: Workload) -> list[int]:
    """The rounds each turn of a built workload scripts, in turn order."""
    return [len(turn.rounds) for turn in workload.script.turns]


def delegated_rounds(workload: Workload) -> list[int]:
    """The rounds each turn of every delegated script scripts (sub-agents' and theirs, depth
    first in call order): what sub-agents play under their own reply limit."""
    out: list[int] = []
    pending = [workload.script]
    while pending:
        script = pending.pop(0)
        for call in script.calls():
            if call.delegate is not None:
                out.extend(len(turn.rounds) for turn in call.delegate.turns)
                pending.append(call.delegate)
    return out


def rounds_cut(strategies: Sequence[StrategyEntry], rounds: Sequence[int]) -> list[RoundsCut]:
    """The strategies whose reply limit cuts turns that script `rounds` short."""
    longest = max(rounds, default=0)
    cuts: list[RoundsCut] = []
    for i, entry in enumerate(strategies):
        limit = reply_limit(entry, build_strategy(entry, load_texts(entry.texts)))
        over = [r - limit.rounds for r in rounds if r > limit.rounds]
        if over:
            cuts.append(RoundsCut(i, limit, longest, list(rounds).index(longest), len(over), sum(over)))
    return cuts
