"""Clearing plans kept from one request to the next.

Anthropic's and LangChain's tool-result clearing edit each request anew from the whole history:
every tool result but the `keep` most recent becomes a placeholder, unless the family spares it.
Worked out from scratch, that is a Python step per old result at every call, so a long
transcript costs the square of its length. A plan keeps, for the history it last read, each
result's `Verdict` (does it count toward `keep`, what it becomes when cleared) and running sums
over them; a request that begins with the same message objects keeps the verdicts of the
messages it shares and judges only the rest.

Invariants:
- A family's `Judge` gives a message's verdicts from the message, its position and a carry (what
  the messages before it left, such as the nearest assistant turn), and the carry after it. A
  verdict names the last message it read (`reads`) and the call it awaits when it found none
  (`awaits`). Kept verdicts are reused only while the messages they read are kept, no new
  message declares a call one awaits, and the judge finds the history regular (`resumable`);
  otherwise the plan judges the whole history again. So the verdicts are always the ones judging
  the whole history gives.
- `applied(keep)` is the number of leading verdicts that take effect: those before the `keep`
  most recent ranked ones. The clearing of the first `k` verdicts is `cleared_ids(k)`, and
  `delta(k)` the change of the counter's tally; `edited(messages, k)` equals `replace_blocks` of
  their replacements (the same copies), rebuilding only the messages from the first one whose
  edits changed since the last request it edited.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ctxlab.core.messages.blocks import ZERO, Tally, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.edits import replace_blocks
from ctxlab.core.messages.memo import Resumable
from ctxlab.core.messages.message import Message, same_leading
from ctxlab.core.messages.units import BlockRef


@dataclass(frozen=True, slots=True)
class Verdict:
    """One tool result as a clearing family judges it.

    Attributes:
        ref: where the result lives.
        call_id: the call it answers, as the family reports it cleared.
        ranked: whether it counts among the results `keep` spares.
        cleared: what it becomes when cleared (None: it is never cleared).
        delta: how the counter's tally changes when it is cleared.
        reads: the last message the verdict was judged from.
        awaits: the call it found no declaration for, if a later one would change it.
    """

    ref: BlockRef
    call_id: str
    ranked: bool = True
    cleared: ToolResultBlock | None = None
    delta: Tally = ZERO
    reads: int = 0
    awaits: str | None = None


class Judge(Protocol):
    """How a family judges the results of one request's history."""

    def start(self) -> object:
        """The carry before the first message."""
        ...

    def judge(self, message: Message, position: int, carry: object) -> tuple[list[Verdict], object]:
        """The verdicts of the results of `message`, stored at `position`, and the carry after it."""
        ...

    def resumable(self) -> bool:
        """Whether verdicts kept from an earlier history may stand for this one."""
        ...


@dataclass(slots=True, eq=False)
class Plan:
    """The verdicts of one history, with running sums over them (`[k]`: the first `k`)."""

    messages: list[Message] = field(default_factory=list)
    carries: list[object] = field(default_factory=lambda: [None])  # into message i
    starts: list[int] = field(default_factory=lambda: [0])  # verdicts of the first i messages
    verdicts: list[Verdict] = field(default_factory=list)
    ranks: list[int] = field(default_factory=lambda: [0])
    clears: list[int] = field(default_factory=lambda: [0])
    cleared: list[str] = field(default_factory=list)  # call ids of the clearing verdicts
    deltas: list[Tally] = field(default_factory=lambda: [ZERO])
    reach: list[int] = field(default_factory=lambda: [-1])  # last message the first k read
    awaited: list[tuple[int, str]] = field(default_factory=list)  # (verdict, call id)
    out: list[Message] = field(default_factory=list)  # the last request edited
    out_applied: int = 0
    out_valid: int = 0  # leading messages of `out` whose verdicts are unchanged since

    def applied(self, keep: int) -> int:
        """How many leading verdicts take effect when the `keep` most recent ranked are spared."""
        return bisect_left(self.ranks, max(self.ranks[-1] - max(keep, 0), 0))

    def clearing(self, applied: int) -> int:
        """How many of the first `applied` verdicts clear their result."""
        return self.clears[applied]

    def cleared_ids(self, applied: int) -> tuple[str, ...]:
        """The call ids the first `applied` verdicts clear, in order."""
        return tuple(self.cleared[: self.clears[applied]])

    def delta(self, applied: int) -> Tally:
        """How the counter's tally changes when the first `applied` verdicts take effect."""
        return self.deltas[applied]

    def edited(self, messages: Sequence[Message], applied: int) -> tuple[Message, ...]:
        """`messages` (the history planned) with the first `applied` verdicts' replacements."""
        low = min(applied, self.out_applied)
        changed = self.verdicts[low].ref.message if low < len(self.verdicts) else len(messages)
        k = min(self.out_valid, changed)
        edits = {
            BlockRef(v.ref.message - k, v.ref.block): v.cleared
            for v in self.verdicts[self.starts[k] : applied]
            if v.cleared is not None
        }
        out = self.out[:k]
        out.extend(replace_blocks(messages[k:], edits))
        self.out, self.out_applied, self.out_valid = out, applied, len(messages)
        return tuple(out)

    def resume(self, messages: Sequence[Message], judge: Judge, same: int | None = None) -> None:
        """Bring the plan to `messages`, of which the first `same` are its own (counted when not
        given): keep what still holds, judge the rest."""
        if same is None:
            same = same_leading(self.messages, messages)
        self._cut(same)
        if not (judge.resumable() and self._holds(messages[same:])):
            same = 0
            self._cut(0)
        carry = self.carries[-1]
        for position in range(same, len(messages)):
            message = messages[position]
            verdicts, carry = judge.judge(message, position, carry)
            for verdict in verdicts:
                self._add(verdict)
            self.messages.append(message)
            self.carries.append(carry)
            self.starts.append(len(self.verdicts))

    def _holds(self, gained: Sequence[Message]) -> bool:
        """Whether the kept verdicts stand when the history gains the messages `gained`."""
        if self.reach[-1] >= len(self.messages):
            return False
        waiting = {call_id for _, call_id in self.awaited}
        return not waiting or not any(
            isinstance(block, ToolCallBlock) and block.id in waiting
            for message in gained
            for block in message.blocks
        )

    def _cut(self, same: int) -> None:
        kept = self.starts[same]
        del self.messages[same:], self.carries[same + 1 :], self.starts[same + 1 :]
        del self.verdicts[kept:], self.ranks[kept + 1 :], self.clears[kept + 1 :]
        del self.deltas[kept + 1 :], self.reach[kept + 1 :], self.cleared[self.clears[kept] :]
        while self.awaited and self.awaited[-1][0] >= kept:
            self.awaited.pop()
        self.out_valid = min(self.out_valid, same)

    def _add(self, verdict: Verdict) -> None:
        clears = verdict.cleared is not None
        if verdict.awaits is not None:
            self.awaited.append((len(self.verdicts), verdict.awaits))
        self.verdicts.append(verdict)
        self.ranks.append(self.ranks[-1] + verdict.ranked)
        self.clears.append(self.clears[-1] + clears)
        self.deltas.append(self.deltas[-1] + verdict.delta if clears else self.deltas[-1])
        self.reach.append(max(self.reach[-1], verdict.reads))
        if clears:
            self.cleared.append(verdict.call_id)


class Plans:
    """The plans of the histories last cleared, a few per family setting (`key`)."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept = Resumable[Hashable, Plan](lambda plan: plan.messages)

    def plan(self, messages: Sequence[Message], key: Hashable, judge: Judge) -> Plan:
        """The plan of `messages`, resumed from the kept one it shares most with (when it shares
        at least half of it), or made anew in place of the least recently used."""
        plan, same = self._kept.resume(key, messages, lambda: Plan(carries=[judge.start()]))
        plan.resume(messages, judge, same)
        return plan
