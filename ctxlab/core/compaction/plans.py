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
  `delta(k)` the change of the counter's tally, `shift(k)` the change of the family's own count
  (None when a clearing verdict among them does not know its own); `edited(messages, k)` equals
  `replace_blocks` of their replacements (the same copies, but for a long last message: a copy
  of its own, the same for the same verdicts), rebuilding only the messages from the first one
  whose edits changed since the last request it edited.
- A long message (`memo.RESUMED_BLOCKS` blocks or more: a reply grows by a round at every call)
  that begins with the blocks of the kept message at its place keeps that message's verdicts
  when the judge judges a message block by block (`GrowingJudge`), which then judges only the
  blocks it gained; the last message of a history, when long, is edited from its blocks with all
  its verdicts applied, kept while it grows. Either way the verdicts and copies are the same.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeGuard

from ctxlab.core.messages import memo
from ctxlab.core.messages.blocks import ZERO, Block, Tally, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.edits import replace_blocks
from ctxlab.core.messages.message import GROWN, Message, begins_with, equal_leading, same_leading
from ctxlab.core.messages.resumable import Resumable
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
        shift: how the family's own count of the history changes when it is cleared (None: it
            cannot be told apart from the rest of the history, which is then counted again).
        reads: the last message the verdict was judged from.
        awaits: the call it found no declaration for, if a later one would change it.
    """

    ref: BlockRef
    call_id: str
    ranked: bool = True
    cleared: ToolResultBlock | None = None
    delta: Tally = ZERO
    shift: int | None = None
    reads: int = 0
    awaits: str | None = None


class Judge(Protocol):
    """How a family judges the results of one request's history."""

    def start(self) -> object:
        """The carry before the first message."""
        ...

    def judge(self, message: Message, position: int, carry: object) -> tuple[list[Verdict], object]:
        """The verdicts of the results of `message`, stored at `position`, in block order, and the
        carry after it."""
        ...

    def resumable(self) -> bool:
        """Whether verdicts kept from an earlier history may stand for this one."""
        ...


class GrowingJudge(Judge, Protocol):
    """A judge whose verdicts of a message's results depend on its blocks up to each result (and
    its position and the carry into it) only, so a message that grew keeps those it had."""

    def judge_from(
        self, message: Message, position: int, carry: object, first: int
    ) -> tuple[list[Verdict], object]:
        """`judge`'s verdicts of the results at blocks `first` on, and the carry after the message."""
        ...


def grows(judge: Judge) -> TypeGuard[GrowingJudge]:
    """Whether `judge` judges block by block: the structural check `isinstance` makes against a
    runtime-checkable protocol, without its walk over the protocol's members at every call."""
    return callable(getattr(judge, "judge_from", None))


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
    resized: list[Tally] = field(default_factory=lambda: [ZERO])  # cleared blocks' tallies less the results'
    shifts: list[int] = field(default_factory=lambda: [0])  # of the known shifts
    unknown: list[int] = field(default_factory=lambda: [0])  # clearing verdicts of unknown shift
    reach: list[int] = field(default_factory=lambda: [-1])  # last message the first k read
    awaited: list[tuple[int, str]] = field(default_factory=list)  # (verdict, call id)
    out: list[Message] = field(default_factory=list)  # the last request edited
    out_made: tuple[Message, ...] = ()  # `out` as the tuple given
    source: tuple[Message, ...] | None = None  # the tuple `messages` holds, when one was planned
    out_applied: int = 0
    out_valid: int = 0  # leading messages of `out` whose verdicts are unchanged since
    full_of: Message | None = None  # the long message `full` holds, with its first `full_used` verdicts
    full: list[Block] = field(default_factory=list)
    full_used: int = 0
    full_start: int = 0  # where those verdicts began
    full_valid: int = 0  # leading verdicts unchanged since `full` was made
    last_edit: tuple[Message, int, Message] | None = None  # the long message, a cut, its copy
    ids: tuple[str, ...] = ()  # the last `cleared_ids` given
    ids_valid: int = 0  # leading ones of `ids` still those of `cleared`

    def applied(self, keep: int) -> int:
        """How many leading verdicts take effect when the `keep` most recent ranked are spared."""
        return bisect_left(self.ranks, max(self.ranks[-1] - max(keep, 0), 0))

    def clearing(self, applied: int) -> int:
        """How many of the first `applied` verdicts clear their result."""
        return self.clears[applied]

    def cleared_ids(self, applied: int) -> tuple[str, ...]:
        """The call ids the first `applied` verdicts clear, in order: the tuple given last when
        they are the same, else a tuple noted (`GROWN`) as sharing its leading ids, so a reader
        that kept the last one reads only the ids that changed. Ids judged again alike (a new
        turn re-reads the messages after the last one kept) still count as the same."""
        count, ids = self.clears[applied], self.ids
        valid = self.ids_valid
        if valid < len(ids):
            end = min(len(ids), count)
            valid += equal_leading(ids[valid:end], self.cleared[valid:end])
        if count == len(ids) == valid:
            self.ids_valid = valid
            return ids
        if len(ids) == valid < count:
            self.ids = ids + tuple(self.cleared[len(ids) : count])
        else:
            self.ids = tuple(self.cleared[:count])
        if min(valid, count):
            GROWN.note(self.ids, ids, min(valid, count))
        self.ids_valid = count
        return self.ids

    def delta(self, applied: int) -> Tally:
        """How the counter's tally changes when the first `applied` verdicts take effect."""
        return self.deltas[applied]

    def shift(self, applied: int) -> int | None:
        """How the family's own count changes when the first `applied` verdicts take effect, when
        every one of them that clears knows it."""
        return None if self.unknown[applied] else self.shifts[applied]

    def edited(self, messages: Sequence[Message], applied: int) -> tuple[Message, ...]:
        """`messages` (the history planned) with the first `applied` verdicts' replacements."""
        low = min(applied, self.out_applied)
        changed = self.verdicts[low].ref.message if low < len(self.verdicts) else len(messages)
        k = min(self.out_valid, changed)
        last = len(messages) - 1
        grown = k <= last and len(messages[last].blocks) >= memo.RESUMED_BLOCKS
        edits = {
            BlockRef(v.ref.message - k, v.ref.block): v.cleared
            for v in self.verdicts[self.starts[k] : min(applied, self.starts[last]) if grown else applied]
            if v.cleared is not None
        }
        out = self.out  # the plan's own list, cut in place: a long history is not copied twice
        del out[k:]
        out.extend(replace_blocks(messages[k:last] if grown else messages[k:], edits))
        if grown:
            out.append(self._edited_last(messages[last], last, applied))
        self.out, self.out_applied, self.out_valid = out, applied, len(messages)
        made = tuple(out)
        if k:  # the request edited before and this one: noted, so their readers resume at once
            GROWN.note(made, self.out_made, min(k, len(self.out_made)))
        self.out_made = made
        return made

    def _edited_last(self, message: Message, position: int, applied: int) -> Message:
        """The long last message with those of the first `applied` verdicts that are its own
        applied: its verdicts come in block order, so its blocks with all of them applied up to
        the last one applied, the rest as they are (the same copy for the same cut). The copy's
        blocks are made in one copy of `full`, noted (`GROWN`) as sharing with the last copy's
        the blocks neither changed; its tally is the message's and what its applied verdicts
        changed of it (`resized`), not summed again."""
        first, end = self.starts[position], min(applied, self.starts[position + 1])
        cut = self.verdicts[end - 1].ref.block + 1 if end > first else 0
        unchanged = self._full(message, position)
        last = self.last_edit
        if last is not None and last[0] is message and last[1] == cut and unchanged == len(self.full):
            return last[2]
        full = self.full
        applied_part = full[cut:]
        full[cut:] = message.blocks[cut:]
        blocks = tuple(full)
        full[cut:] = applied_part
        if last is not None and min(last[1], cut, unchanged):
            GROWN.note(blocks, last[2].blocks, min(last[1], cut, unchanged))
        same = same_leading(blocks, message.blocks) == len(blocks)
        tally = message.tally + (self.resized[end] - self.resized[first])  # sizes are integers: exact
        copy = message if same else message.with_blocks(blocks, tally)
        self.last_edit = (message, cut, copy)
        return copy

    def _full(self, message: Message, position: int) -> int:
        """Bring `full` to `message`'s blocks with every one of its clearing verdicts applied,
        extended from the last message it was made for when `message` begins with its blocks and
        verdicts; how many leading blocks it kept unchanged."""
        start, stop = self.starts[position], self.starts[position + 1]
        held, used = self.full_of, self.full_used
        same = max(0, min(used, self.full_valid - start)) if self.full_start == start else 0
        if held is message and used == stop - start == same:
            return len(self.full)
        if held is None or same < used or not begins_with(message.blocks, held.blocks):
            self.full, used = [], 0
        unchanged = len(self.full)
        self.full.extend(message.blocks[unchanged:])
        for verdict in self.verdicts[start + used : stop]:
            if verdict.cleared is not None:
                self.full[verdict.ref.block] = verdict.cleared
                unchanged = min(unchanged, verdict.ref.block)
        self.full_of, self.full_used, self.full_start, self.full_valid = message, stop - start, start, stop
        return unchanged

    def resume(self, messages: Sequence[Message], judge: Judge, same: int | None = None) -> None:
        """Bring the plan to `messages`, of which the first `same` are its own (counted when not
        given): keep what still holds, judge the rest."""
        if same is None:
            same = same_leading(self.messages, messages)
        self.source = messages if type(messages) is tuple else None
        judged = self._judged(messages, same, judge)
        self._cut(same, self.starts[same + 1] if judged else None)
        if not (judge.resumable() and self._holds(messages[same:], judged)):
            same, judged = 0, 0
            self._cut(0)
        carry = self.carries[-1]
        for position in range(same, len(messages)):
            message = messages[position]
            if judged and grows(judge):
                verdicts, carry = judge.judge_from(message, position, carry, judged)
                judged = 0
            else:
                verdicts, carry = judge.judge(message, position, carry)
            for verdict in verdicts:
                self._add(verdict, message)
            self.messages.append(message)
            self.carries.append(carry)
            self.starts.append(len(self.verdicts))

    def _judged(self, messages: Sequence[Message], same: int, judge: Judge) -> int:
        """How many leading blocks of `messages[same]` keep the verdicts the kept message at its
        place had: all of that message's when it is long and they begin `messages[same]`, and the
        judge judges block by block; else 0."""
        if same >= min(len(self.messages), len(messages)) or not grows(judge):
            return 0
        kept = self.messages[same].blocks
        if len(kept) < memo.RESUMED_BLOCKS or not begins_with(messages[same].blocks, kept):
            return 0
        return len(kept)

    def _holds(self, gained: Sequence[Message], judged: int) -> bool:
        """Whether the kept verdicts stand when the history gains the messages `gained`, of which
        the first `judged` blocks of the first were kept with their verdicts (which read no
        message past theirs)."""
        same = len(self.messages)
        if self.reach[self.starts[same]] >= same or self.reach[-1] > same:
            return False
        waiting = {call_id for _, call_id in self.awaited}
        if not waiting:
            return True
        first = gained[0].blocks[judged:] if gained else ()
        blocks = itertools.chain(first, *(message.blocks for message in gained[1:]))
        return not any(isinstance(block, ToolCallBlock) and block.id in waiting for block in blocks)

    def _cut(self, same: int, verdicts: int | None = None) -> None:
        """Keep the first `same` messages and their verdicts, or the first `verdicts` verdicts
        (those of the next message too, which is judged on from where they end)."""
        kept = self.starts[same] if verdicts is None else verdicts
        del self.messages[same:], self.carries[same + 1 :], self.starts[same + 1 :]
        del self.verdicts[kept:], self.ranks[kept + 1 :], self.clears[kept + 1 :]
        del self.deltas[kept + 1 :], self.reach[kept + 1 :], self.cleared[self.clears[kept] :]
        del self.resized[kept + 1 :], self.shifts[kept + 1 :], self.unknown[kept + 1 :]
        self.ids_valid = min(self.ids_valid, len(self.cleared))
        self.full_valid = min(self.full_valid, kept)
        while self.awaited and self.awaited[-1][0] >= kept:
            self.awaited.pop()
        self.out_valid = min(self.out_valid, same)

    def _add(self, verdict: Verdict, message: Message) -> None:
        clears = verdict.cleared is not None
        if verdict.awaits is not None:
            self.awaited.append((len(self.verdicts), verdict.awaits))
        self.verdicts.append(verdict)
        self.ranks.append(self.ranks[-1] + verdict.ranked)
        self.clears.append(self.clears[-1] + clears)
        self.deltas.append(self.deltas[-1] + verdict.delta if clears else self.deltas[-1])
        resized = self.resized[-1]
        shift: int | None = 0  # a verdict that does not clear shifts nothing
        if verdict.cleared is not None:
            resized += verdict.cleared.tally - message.blocks[verdict.ref.block].tally
            shift = verdict.shift
        self.resized.append(resized)
        self.shifts.append(self.shifts[-1] + (shift or 0))
        self.unknown.append(self.unknown[-1] + (shift is None))
        self.reach.append(max(self.reach[-1], verdict.reads))
        if clears:
            self.cleared.append(verdict.call_id)


class Plans:
    """The plans of the histories last cleared, a few per family setting (`key`)."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept = Resumable[Hashable, Plan](lambda plan: plan.messages, source=lambda plan: plan.source)

    def plan(self, messages: Sequence[Message], key: Hashable, judge: Judge) -> Plan:
        """The plan of `messages`, resumed from the kept one it shares most with (when it shares
        at least half of it), or made anew in place of the least recently used."""
        plan, same = self._kept.resume(key, messages, lambda: Plan(carries=[judge.start()]))
        plan.resume(messages, judge, same)
        return plan
