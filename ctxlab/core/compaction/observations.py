"""Observation elision: all but the last observations replaced by a one-line notice, per request.

Source: SWE-agent `LastNObservations` (`sweagent/agent/history_processors.py`; `n` required, 5 in
the paper and the 0.7 config). OpenHands' SDK has no observation masking; the Complexity Trap's
masking (`openhands-hybrid`) is this one.

What counts as an observation, as SWE-agent counts them: one per step. The first user message
stands for SWE-agent's instance template (its first observation, never elided); then every round
of tool calls is one step, whose results are its observation. SWE-agent's function calling takes
one call per step, so its steps have one result; a ctxlab round of parallel calls counts once and
its results are elided together, each with its own notice.

Invariants:
- A request view: apply it to the full stored history before each request (as SWE-agent does),
  not to its own output.
- Each call and its result stay in place, so no protocol rule is broken.
- Untouched messages stay the same objects, and a message elided alike is the very copy made
  before, so whatever the meters keep by identity is reused.
- Worked out message by message when each stored message answers its own calls (as the engine
  stores a reply), else from the whole history at once (`observation_steps`); the two agree.
  The observations before each message are a fold resumed after the messages the last history
  shared (`LeadingFold`), which also keeps each message as elided when the window covers it
  whole; the few messages past the window's edge are elided per window (`IdentityMemo`). A call
  reads only the messages the history gained and those at or past the window's edge.
- A long message (`memo.RESUMED_BLOCKS` blocks or more: a reply grows by a round at every call)
  whose observations come in block order is read and elided by resuming the reads of an earlier
  message it begins with (`LeadingScan`, `LeadingConcat`): the same observations and copies as a
  whole read, worked out for the blocks it gained.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ctxlab.core.compaction.clearing import Clearing, replace_results
from ctxlab.core.messages import latest, memo
from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.edits import edited, holds_only, with_output
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat, LeadingFold, LeadingScan
from ctxlab.core.messages.message import GROWN, LINEAGE_WORTH, Message, same_leading
from ctxlab.core.messages.resumable import register
from ctxlab.core.messages.sizes import running_tally
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.units import (
    ViewUnit,
    answers_own_calls,
    protocol_units,
    result_block,
    view_units,
)
from ctxlab.core.settings import SettingError


@dataclass(frozen=True, slots=True, kw_only=True)
class LastNObservationsParams:
    """SWE-agent `last_n_observations`.

    Attributes:
        n: observations (steps) kept in full; required and positive, as in SWE-agent (the paper: 5).
        polling: the kept count moves only every `polling` observations (SWE-agent: 1), which
            keeps between `n` and `n + polling` and breaks the cache less often.
        keep_tools: results of these tools are always kept, as SWE-agent keeps an observation
            tagged `keep_output` (ctxlab's messages carry no tags: the tool's name stands for
            the tag; off by default).
        remove_tools: results of these tools are always elided, even among the last `n`, as
            SWE-agent elides an observation tagged `remove_output`; removal wins over keeping.
        notice: what an elided result becomes; `{lines}` is its number of text lines.
        media_notice: appended when it held images; `{count}` is how many.
    """

    n: int = field(metadata={"suggest": "n: 5, the SWE-agent paper's value"})
    polling: int = 1
    keep_tools: tuple[str, ...] = ()
    remove_tools: tuple[str, ...] = ()
    notice: str = "[earlier tool output elided: {lines} lines]"
    media_notice: str = " [{count} images elided]"

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise SettingError(
                ("n",),
                f"n={self.n}: SWE-agent keeps a positive number of observations (its own check); "
                "give n: 5 as in the paper, or another count above 0",
            )
        if self.polling <= 0:
            raise SettingError(("polling",), f"polling={self.polling}: use 1 (every step) or more")


def observation_steps(messages: Sequence[Message]) -> list[tuple[ViewUnit, ...]]:
    """The observations of `messages` in order, as SWE-agent counts them (see the module).

    Each is a tuple of view units: the first user message alone, or the results of one round.
    """
    units = view_units(messages)
    first_user = next((u.index for u in units if u.kind == "user"), None)
    steps: list[tuple[ViewUnit, ...]] = []
    for group in protocol_units(units):
        members = [units[i] for i in group.units]
        results = tuple(u for u in members if u.kind == "result")
        if results:
            steps.append(results)
        elif group.first == first_user:
            steps.append((units[first_user],))
    return steps


def elide_observations(messages: Sequence[Message], params: LastNObservationsParams) -> Clearing:
    """Replace all but the last `n` observations by a one-line notice.

    As in SWE-agent the first observation is never elided by the window: SWE-agent's first
    observation is the task itself (its instance template); here it is the first user message.
    Results of `keep_tools` escape the window, results of `remove_tools` are always elided.
    Read message by message when each answers its own calls, else from the whole history.
    """
    read = _followed.running(messages, NO_OBSERVATIONS, params)
    if not read[-1].own_calls:
        return _elide_over_history(messages, params)
    last_removed = _last_removed(read[-1].steps, params)
    whole = bisect.bisect_right(read, last_removed, lo=1, key=_steps) - 1  # messages covered whole
    rest = zip(messages[whole:], read[whole:-1], read[whole + 1 :], strict=True)
    return _covered(
        read[1 : whole + 1],
        [_elided(m, b.user_seen, *_window(b.steps, a.steps, last_removed), params) for m, b, a in rest],
    )


class _Covered:
    """`covered(reads, tail)`: the `Clearing` of every read's `covered` (the messages the window
    covers whole, each elided; none before any message), then of `tail`, ids in the same order.

    Kept for the last reads: reads that begin with the very same objects (a history that grew:
    `LeadingFold` keeps its reads) read only the rest, so a window over a long history costs
    what it gained and a copy at C speed. Both tuples are noted (`GROWN`) as beginning with what
    they share with the last ones, so whatever kept the last request (or ids) resumes them
    without comparing. `forget()` drops them.
    """

    __slots__ = ("__weakref__", "_id_ends", "_ids", "_last", "_message_ends", "_messages", "_reads")

    def __init__(self) -> None:
        self.clear()
        register(self)

    def clear(self) -> None:
        """Drop what is kept."""
        self._reads: list[LeadingObservations] = []
        self._messages: list[Message] = []
        self._ids: list[str] = []
        self._message_ends, self._id_ends = [0], [0]  # after the first k reads
        self._last = Clearing(messages=(), cleared=())

    def __call__(self, reads: Sequence[LeadingObservations], tail: Sequence[ElidedMessage]) -> Clearing:
        same = self._same_reads(reads)
        del self._reads[same:], self._message_ends[same + 1 :], self._id_ends[same + 1 :]
        del self._messages[self._message_ends[-1] :], self._ids[self._id_ends[-1] :]
        kept = (len(self._messages), len(self._ids))
        for read in reads[same:]:
            if read.covered is not None:
                self._messages.append(read.covered.message)
                self._ids.extend(read.covered.cleared)
            self._reads.append(read)
            self._message_ends.append(len(self._messages))
            self._id_ends.append(len(self._ids))
        made = Clearing(
            messages=(*self._messages, *(piece.message for piece in tail)),
            cleared=(*self._ids, *itertools.chain.from_iterable(piece.cleared for piece in tail)),
        )
        _note_grown(made.messages, self._last.messages, kept[0])
        _note_grown(made.cleared, self._last.cleared, kept[1])
        self._last = made
        return made

    def _same_reads(self, reads: Sequence[LeadingObservations]) -> int:
        """How many leading reads are the kept ones: all, uncompared, when the last stands at its
        place (a fold's reads stay the very objects only while those before do: `LeadingFold`)."""
        held = self._reads
        if held and len(reads) >= len(held) and reads[len(held) - 1] is held[-1]:
            return len(held)
        return same_leading(held, reads)


def _note_grown(made: tuple[object, ...], last: tuple[object, ...], kept: int) -> None:
    """Note `made` as beginning with what it shares of `last`: its first `kept`, then compared."""
    if kept and len(made) >= LINEAGE_WORTH:
        kept = min(kept, len(last))
        GROWN.note(made, last, kept + same_leading(last[kept:], made[kept:]))


_covered = _Covered()


def _last_removed(steps: int, params: LastNObservationsParams) -> int:
    """One past the last observation the window elides, of `steps` (SWE-agent's arithmetic)."""
    return max(0, (steps // params.polling) * params.polling - params.n)


def _elides(result: ToolResultBlock, windowed: bool, params: LastNObservationsParams) -> bool:
    """Whether `result` becomes its notice: covered by the window and not kept, or removed."""
    return (windowed and result.name not in params.keep_tools) or result.name in params.remove_tools


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageObservations:
    """The observations one stored message holds, read from it alone.

    Attributes:
        steps: each observation's results as block indices, in order; the message's first user
            unit is an empty step, an observation only where no earlier message shows one.
        user_step: where that empty step stands in `steps` (-1 when the message shows no user unit).
        own_calls: every result answers a call declared before it in the message
            (`answers_own_calls`); only then are its observations those of any history holding it.
    """

    steps: tuple[tuple[int, ...], ...]
    user_step: int
    own_calls: bool

    def counted(self, user_seen: bool) -> tuple[tuple[int, ...], ...]:
        """Its observations in a history where an earlier message shows a user unit (`user_seen`)
        or none does."""
        if user_seen and self.user_step >= 0:
            return self.steps[: self.user_step] + self.steps[self.user_step + 1 :]
        return self.steps


def _read_observations(message: Message) -> MessageObservations:
    """A message's observations: resumed from an earlier read when it is long and they come in
    block order (`_in_order`), else read from its view units."""
    read = _in_order(message)
    return read if read is not None else _whole_observations(message)


def _whole_observations(message: Message) -> MessageObservations:
    units = view_units((message,))
    first_user = next((u.index for u in units if u.kind == "user"), None)
    steps: list[tuple[int, ...]] = []
    user_step = -1
    for group in protocol_units(units):
        results = tuple(units[i].blocks[0] for i in group.units if units[i].kind == "result")
        if results:
            steps.append(results)
        elif group.first == first_user:
            user_step = len(steps)
            steps.append(())
    return MessageObservations(steps=tuple(steps), user_step=user_step, own_calls=answers_own_calls(units))


message_observations = IdentityMemo[Message, MessageObservations](_read_observations)
"""`message_observations(message)`: a message's observations, read once per message object."""


_ObservationCarry = tuple[
    int, bool, tuple[str, ...], tuple[str, ...], bool, tuple[int, ...] | None, bool, bool
]
"""What the observation scan carries from block to block (a plain tuple: made at every block):
the next block's index; whether the view message being built shows blocks, and its calls; the
calls of the latest call batch, and whether it is an observation yet; the results of the latest
observation, not yet given out (None before the first); whether the first user unit was seen;
and whether the observations still come in block order."""

_NO_OBSERVATIONS: _ObservationCarry = (0, False, (), (), False, None, False, True)


def _observation_step(
    carry: _ObservationCarry, block: Block, before: int, role: str
) -> tuple[list[tuple[int, ...]], _ObservationCarry]:
    """The observations `block` closes (the one before a new one), and the carry after it.

    The observations come in block order while each result answers the latest call batch and
    the first user unit comes before any batch; past that the scan only counts blocks, and the
    message is read whole."""
    at, shown, calls, batch, answered, latest, user_seen, in_order = carry
    if not in_order or isinstance(block, ThinkingBlock):
        return [], (at + 1, *carry[1:])
    if isinstance(block, TextBlock | DataBlock):
        return [], (at + 1, True, *carry[2:])
    if isinstance(block, ToolCallBlock):
        return [], (at + 1, True, (*calls, block.id), *carry[3:])
    done: list[tuple[int, ...]] = []
    if shown and calls:  # the view message flushed here is a call batch
        batch, answered = calls, False
    elif shown and role == "user" and not user_seen:  # the first user unit: an empty observation
        user_seen, in_order, latest = True, not batch, ()
    if isinstance(block, ToolResultBlock):
        if block.id not in batch:
            in_order = False
        elif answered:
            latest = (*(latest or ()), at)
        else:
            done = [] if latest is None else [latest]
            latest, answered = (at,), True
    return done, (at + 1, False, (), batch, answered, latest, user_seen, in_order)


_observation_scan = LeadingScan[Block, _ObservationCarry, tuple[int, ...]](_observation_step)


def _scan_observations(message: Message) -> MessageObservations | None:
    """The observations of a long message, resumed from the read of an earlier message it begins
    with; None when it is short or they do not come in block order (see `_observation_step`)."""
    if len(message.blocks) < memo.RESUMED_BLOCKS:
        return None
    role = message.role
    done, carry = _observation_scan.with_carry(message.blocks, _NO_OBSERVATIONS, role)
    _at, shown, calls, batch, _answered, latest, user_seen, in_order = carry
    if shown and not calls and role == "user" and not user_seen:  # the last unit, the first user one
        user_seen, in_order, latest = True, in_order and not batch, ()
    if not in_order:
        return None
    steps = done if latest is None else (*done, latest)
    return MessageObservations(steps=steps, user_step=0 if user_seen else -1, own_calls=True)


_in_order = IdentityMemo[Message, MessageObservations | None](_scan_observations)
"""`_scan_observations` once per message object."""


class ElidedMessage(NamedTuple):
    """A message with its elided results' notices in place, and their call ids in order."""

    message: Message
    cleared: tuple[str, ...]


def elide_message(
    message: Message, user_seen: bool, first: int, end: int, params: LastNObservationsParams
) -> ElidedMessage:
    """`message` with the results of its observations `first` to `end - 1` (as counted after
    `user_seen`) elided, as the window does, and `remove_tools`' results wherever they stand."""
    read = _in_order(message)
    if read is None:
        return _elide_each(message, message_observations(message).counted(user_seen), first, end, params)
    return _elide_in_order(message, read.counted(user_seen), first, end, params)


def _elide_in_order(
    message: Message,
    steps: tuple[tuple[int, ...], ...],
    first: int,
    end: int,
    params: LastNObservationsParams,
) -> ElidedMessage:
    """`elide_message` for a long message whose observations `steps` come in block order: its
    blocks elided as outside the window, with those of observations `first` to `end - 1` elided
    as inside it, both resumed from an earlier message it begins with (`_as_elided`)."""
    blocks = message.blocks
    elided = outside = _as_elided(blocks, False, params)
    if first < end:
        start, stop = _boundary(steps, first), _boundary(steps, end)
        inside = _as_elided(blocks, True, params)
        elided = outside[:start] + inside[start:stop] + outside[stop:]
        GROWN.note(elided, *((outside, start) if start else (inside, stop)))  # its longest leading run
    if same_leading(elided, blocks) == len(blocks):
        return ElidedMessage(message=message, cleared=())
    copy = message.with_blocks(elided, running_tally(elided))
    return ElidedMessage(message=copy, cleared=_elided_ids(blocks, elided))


_elided_ids = latest.Replaced[str](operator.attrgetter("id"))
"""The call ids of the results an elided copy replaced, read where the copy changed (a reply's
copy is made again at every call, most of it as before)."""


def _boundary(steps: Sequence[tuple[int, ...]], k: int) -> int:
    """Where observation `k` may begin, when observations come in block order: one past the
    last result of those before it (0 when they hold none)."""
    for j in range(min(k, len(steps)) - 1, -1, -1):
        if steps[j]:
            return steps[j][-1] + 1
    return 0


def _elided_block(
    block: Block, at: int, before: int, windowed: bool, params: LastNObservationsParams
) -> tuple[Block]:
    """`block` as the window leaves it: a result it elides becomes its notice."""
    if not isinstance(block, ToolResultBlock) or not _elides(block, windowed, params):
        return (block,)
    text = _notice(block, params)
    return (block,) if holds_only(block, text) else (with_output(block, text),)


_as_elided = LeadingConcat[Block, Block](_elided_block)
"""`_as_elided(blocks, windowed, params)`: every block as the window leaves it when it covers
(`windowed`) or does not cover its observation, the blocks a kept sequence shares read once."""


def _elide_each(
    message: Message,
    steps: tuple[tuple[int, ...], ...],
    first: int,
    end: int,
    params: LastNObservationsParams,
) -> ElidedMessage:
    """`elide_message` read from each of the message's observations `steps`, in any order."""
    edits: dict[int, ToolResultBlock] = {}
    for k, step in enumerate(steps):
        for b in step:
            result = message.blocks[b]
            assert isinstance(result, ToolResultBlock)
            text = _notice(result, params) if _elides(result, first <= k < end, params) else None
            if text is not None and not holds_only(result, text):
                edits[b] = with_output(result, text)
    if not edits:
        return ElidedMessage(message=message, cleared=())
    return ElidedMessage(
        message=edited(message, tuple(edits.items())), cleared=tuple(e.id for e in edits.values())
    )


_elided = IdentityMemo[Message, ElidedMessage](elide_message)
"""`elide_message` once per message object and window: the window covers the same old
observations, whole, at every step."""


def _window(before: int, after: int, last_removed: int) -> tuple[int, int]:
    """Which of a message's observations the window covers, as a range of its own (`(0, 0)` when
    none): they are the history's `before` to `after - 1`, and it covers 1 to `last_removed - 1`."""
    first = max(1, before) - before
    end = min(last_removed, after) - before
    return (first, end) if first < end else (0, 0)


class LeadingObservations(NamedTuple):
    """The leading messages of a history as the window reads them.

    Attributes:
        steps: how many observations they hold.
        user_seen: whether one of them shows a user unit (the first one is an observation).
        own_calls: whether each answers its own calls (see `MessageObservations`).
        covered: the last of them elided as where the window covers all its observations (None
            before any message).
    """

    steps: int
    user_seen: bool
    own_calls: bool
    covered: ElidedMessage | None


NO_OBSERVATIONS = LeadingObservations(steps=0, user_seen=False, own_calls=True, covered=None)


def follow(
    leading: LeadingObservations, message: Message, params: LastNObservationsParams
) -> LeadingObservations:
    """`leading` once `message` follows the messages it reads."""
    read = message_observations(message)
    steps = leading.steps + len(read.counted(leading.user_seen))
    return LeadingObservations(
        steps=steps,
        user_seen=leading.user_seen or read.user_step >= 0,
        own_calls=leading.own_calls and read.own_calls,
        covered=_elided(message, leading.user_seen, *_window(leading.steps, steps, steps), params),
    )


_followed = LeadingFold[Message, LeadingObservations](follow)


def _steps(leading: LeadingObservations) -> int:
    return leading.steps


def _elide_over_history(messages: Sequence[Message], params: LastNObservationsParams) -> Clearing:
    """`elide_observations` read from the whole history at once: results may answer calls of
    other messages."""
    steps = observation_steps(messages)
    windowed = {u.index for step in steps[1 : _last_removed(len(steps), params)] for u in step}
    plan = []
    for unit in (u for step in steps for u in step if u.kind == "result"):
        result = result_block(messages, unit)
        if _elides(result, unit.index in windowed, params):
            plan.append((unit, _notice(result, params)))
    return replace_results(messages, plan)


def _count_notice(result: ToolResultBlock, params: LastNObservationsParams) -> str:
    """SWE-agent's count: text lines of the text parts, and the images (other data not counted)."""
    lines = sum(len(p.text.splitlines()) for p in result.output if isinstance(p, TextBlock))
    images = sum(1 for p in result.output if isinstance(p, DataBlock) and p.is_image)
    text = fill(params.notice, lines=lines)
    return text + fill(params.media_notice, count=images) if images else text


_notice = IdentityMemo[ToolResultBlock, str](_count_notice)
"""`_count_notice`, worked out once per result object and parameters: the window elides the
same old results at every step."""
