"""Google ADK 2.13.0's session events read off a ctxlab context, and its events compaction.

ADK keeps every event of a session and sends what `_process_compaction_events` leaves: raw events
outside every surviving compaction range, and each surviving summary materialised where its range
ends. Here the raw events are read off the stored context (which the preset never edits): one per
user message, one per model response (its text and calls), one per batch of tool responses. An
event's timestamp is its ordinal; a compaction is kept in the preset's memo with the raw events
it covers (`start`, `end`) and how many raw events the session held when it was appended.

Sources (`google/adk/`): `apps/compaction.py` (both triggers, the ranges, the worth check),
`flows/llm_flows/context/_compaction.py` (`_process_compaction_events`), `apps/_configs.py`.

Invariants:
- `events_of(context)` covers every block of the context once, in order; appending to the
  context never changes the events already read (so ordinals are stable), and they stay the
  same objects (each message's events are kept by identity, `message_events`; a long reply
  that grew keeps those of its closed runs, resumed by `LeadingScan`).
- A sequence of raw events is in timestamp order (`effective` finds ranges by bisection).
- Functions here are pure and take everything as arguments; what is asked of a whole session or
  request at every call is kept per event or message by identity, or resumed after the leading
  ones it shares with the last (`LeadingFold`), so a session that grew costs what it gained.
"""

from __future__ import annotations

import bisect
import json
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal, NamedTuple

from ctxlab.core.messages.blocks import (
    Block,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.memo import Closing, IdentityMemo, LeadingFold, LeadingScan
from ctxlab.core.messages.message import Message
from ctxlab.presets.google_adk.arguments import parsed_arguments
from ctxlab.presets.google_adk.layout import Layout, latest, layout_of

Role = Literal["user", "model", "response"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RawEvent:
    """One session event: its ordinal (the timestamp), invocation (the user turn), kind, blocks.

    Attributes:
        ts: the event's ordinal from 1, standing for its timestamp.
        invocation: the user turn it belongs to.
        role: a user message, a model response, or a batch of tool responses.
        blocks: the context blocks it stands for.
        message_id: the id of the stored message it was read from.
        user: a user event's message, kept whole (None for the other events).
    """

    ts: int
    invocation: int
    role: Role
    blocks: tuple[Block, ...]
    message_id: str
    user: Message | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Compacted:
    """A compaction event: the summary of raw events `start` to `end` (timestamps, inclusive),
    appended when the session held `after` raw events."""

    start: int
    end: int
    text: str
    after: int


Item = RawEvent | Compacted


def events_of(context: Sequence[Message], turns: Sequence[int]) -> tuple[RawEvent, ...]:
    """The raw events of the context; `turns[i]` is the invocation of message `i`.

    A message's events depend only on it, its invocation and the ordinal its first one takes, so
    each message's are read once for those (`message_events`): a context that grows at its end
    is read at the cost of its new messages, and its old events stay the same objects.
    """
    out: list[RawEvent] = []
    for message, turn in zip(context, turns, strict=True):
        out.extend(message_events(message, turn, len(out) + 1))
    return tuple(out)


def _read_events(message: Message, turn: int, first: int) -> tuple[RawEvent, ...]:
    """The events of one message of invocation `turn`, numbered from `first`: a user message is
    one event; another is split into runs of tool results and runs of everything else. A long
    message (a reply that grows by a round at every call) resumes the read of the blocks it
    begins with (`LeadingScan`): the events of its closed runs stay the same objects."""
    if message.role == "user":
        event = RawEvent(
            ts=first, invocation=turn, role="user", blocks=message.blocks, message_id=message.id, user=message
        )
        return (event,)
    place = _Place(turn, first, message.id)
    return _runs.finished(message.blocks, _NO_RUN, partial(_close_run, place), place)


class _Place(NamedTuple):
    """Where a message's events stand: its invocation, the first one's ordinal, its id."""

    turn: int
    first: int
    message_id: str

    def event_at(self, ordinal: int, role: Role, blocks: tuple[Block, ...]) -> RawEvent:
        """The message's event `ordinal` (from 0)."""
        return RawEvent(
            ts=self.first + ordinal,
            invocation=self.turn,
            role=role,
            blocks=blocks,
            message_id=self.message_id,
        )


class _Run(NamedTuple):
    """The run of blocks a message's read holds open: its role and its blocks so far."""

    role: Role
    blocks: tuple[Block, ...]


_NO_RUN = _Run("model", ())


def _run_step(run: _Run, block: Block, before: int, place: _Place) -> tuple[tuple[RawEvent, ...], _Run]:
    """The event `block` closes (the open run's, when it begins a run of the other role), and
    the run it leaves open; `before` is the number of events closed ahead of it."""
    role: Role = "response" if isinstance(block, ToolResultBlock) else "model"
    if run.blocks and role != run.role:
        return (place.event_at(before, run.role, run.blocks),), _Run(role, (block,))
    return (), _Run(role, (*run.blocks, block))


def _close_run(place: _Place, run: _Run, done: Sequence[RawEvent]) -> Closing[RawEvent]:
    return len(done), (place.event_at(len(done), run.role, run.blocks),) if run.blocks else ()


_runs = LeadingScan[Block, _Run, RawEvent](_run_step)


message_events = IdentityMemo[Message, tuple[RawEvent, ...]](_read_events)
"""`message_events(message, turn, first)`: the events of one message, kept by identity."""


def counted_response(raw: Sequence[RawEvent], compactions: Sequence[Compacted], answered: int) -> int | None:
    """The model response whose usage `_latest_prompt_token_count` reads, as its ordinal among
    the model events of `raw` (from 0): the latest one after the session's latest compaction
    among the first `answered` (the model calls that have answered), None when there is none.

    In the session a compaction stands before the first raw event at or past its `after`, and
    after those appended before it, so what follows the last one is `raw` from the greatest
    `after` on. Ordinals grow along `raw`, so the response sought is `min(models, answered) - 1`
    if it stands there: the walk back stops at it, or where the compactions stand.
    """
    models = _model_events(raw, 0)
    wanted = min(models, answered) - 1
    if wanted < 0:
        return None
    shown_from = _shown_from(tuple(compactions))
    ordinal = models
    for index in range(len(raw) - 1, shown_from - 1, -1):
        if raw[index].role == "model":
            ordinal -= 1
            if ordinal == wanted:
                return wanted
    return None


def _latest_after(compactions: tuple[Compacted, ...]) -> int:
    return max((c.after for c in compactions), default=0)


_shown_from = IdentityMemo[tuple[Compacted, ...], int](_latest_after)
"""Where the raw events after the last compaction start, once per tuple of compactions."""


def _add_model_event(count: int, event: RawEvent) -> int:
    return count + (event.role == "model")


_model_events = LeadingFold[RawEvent, int](_add_model_event)
"""The model events of a sequence of events: a session that grew costs what it gained."""


def effective(raw: Sequence[RawEvent], compactions: tuple[Compacted, ...]) -> list[Item]:
    """What a request carries (`_process_compaction_events`): surviving summaries at their end,
    raw events outside every surviving range, in timestamp order (a summary after its end event).

    `raw` is in timestamp order, so the events shown are the runs between the hidden ranges,
    found by bisection: the cost is a few slices, not a test per event and range. What depends
    on the compactions alone is worked out once for them (`layout_of`).
    """
    layout = layout_of(compactions)
    return _in_order(_outside(raw, layout.hidden), layout)


def _in_order(shown: list[RawEvent], layout: Layout) -> list[Item]:
    """The shown events and the summaries merged by timestamp, each summary after the event at
    its end, a run of either at a time (the end of each run found by bisection)."""
    out: list[Item] = []
    at, placed = 0, 0
    while placed < len(layout.summaries) and at < len(shown):
        upto = bisect.bisect_right(shown, layout.ends[placed], lo=at, key=_timestamp)
        out += shown[at:upto]
        at = upto
        if at < len(shown):
            # the event at `at` is past the end at `placed`, so each pass places a summary
            before = bisect.bisect_left(layout.ends, shown[at].ts, lo=placed)
            out += layout.summaries[placed:before]
            placed = before
    return out + shown[at:] + list(layout.summaries[placed:])


def _outside(raw: Sequence[RawEvent], hidden: Sequence[tuple[int, int]]) -> list[RawEvent]:
    """The events of `raw` (in timestamp order) outside the disjoint, ordered `hidden` ranges."""
    out: list[RawEvent] = []
    at = 0
    for start, end in hidden:
        out += raw[at : bisect.bisect_left(raw, start, lo=at, key=_timestamp)]
        at = bisect.bisect_right(raw, end, lo=at, key=_timestamp)
    return out + list(raw[at:])


_timestamp = operator.attrgetter("ts")
_invocation = operator.attrgetter("invocation")


def call_ids(event: RawEvent) -> set[str]:
    """The ids of the event's function calls."""
    return {b.id for b in event.blocks if isinstance(b, ToolCallBlock)}


def response_ids(event: RawEvent) -> set[str]:
    """The ids of the event's function responses."""
    return {b.id for b in event.blocks if isinstance(b, ToolResultBlock)}


def self_contained_prefix(events: Sequence[RawEvent]) -> list[RawEvent]:
    """The longest prefix leaving no call open (`_longest_self_contained_prefix`, strict pass;
    no call of a finished invocation is ever left unanswered here, so the dead-call pass never
    finds one)."""
    open_ids: set[str] = set()
    safe = 0
    for index, event in enumerate(events):
        open_ids = (open_ids - response_ids(event)) | call_ids(event)
        if not open_ids:
            safe = index + 1
    return list(events[:safe])


def safe_split(candidates: Sequence[RawEvent], retention: int) -> int:
    """`_safe_token_compaction_split_index`: the latest split at or before `len - retention`
    whose retained tail answers no call of the compacted prefix."""
    initial = len(candidates) - retention
    if initial <= 0:
        return 0
    unmatched: set[str] = set()
    for i in range(len(candidates) - 1, -1, -1):
        unmatched = (unmatched | response_ids(candidates[i])) - call_ids(candidates[i])
        if not unmatched and i <= initial:
            return i
    return 0


def token_candidates(
    raw: Sequence[RawEvent], compactions: Sequence[Compacted], retention: int
) -> list[RawEvent]:
    """`_events_to_compact_for_token_threshold` without the seed: raw events after the latest
    compaction's end, less the retained tail (moved earlier to keep calls with their responses).
    `raw` is in timestamp order, so the events after the end are found by bisection."""
    last = latest(compactions)
    candidates = list(raw[bisect.bisect_right(raw, last.end if last else 0, key=_timestamp) :])
    if len(candidates) <= retention:
        return []
    chosen = candidates if retention == 0 else candidates[: safe_split(candidates, retention)]
    return self_contained_prefix(chosen)


def window_candidates(
    raw: Sequence[RawEvent], compactions: Sequence[Compacted], interval: int, overlap: int
) -> list[RawEvent]:
    """The sliding window's range (`_run_compaction_for_sliding_window`): once `interval`
    invocations ended after the last compaction's end, from `overlap` invocations before the first
    of them to the last of them. The last compaction is the last in stream order, not the widest.

    `raw` is in timestamp order and an invocation's events stand together, in invocation order
    (`events_of`): an invocation ended after the end when one of its events is after it, so the
    new ones are those of the events past the end, and every place is found by bisection. A
    session that grows costs what it gained, not a walk over every event at every turn.
    """
    last_end = compactions[-1].end if compactions else 0
    new = _invocations_from(raw, bisect.bisect_right(raw, last_end, key=_timestamp))
    if len(new) < interval:
        return []
    first = bisect.bisect_left(raw, new[0], key=_invocation)
    for _ in range(overlap):  # back over the invocations before, as many as stand there
        if first == 0:
            break
        first = bisect.bisect_left(raw, raw[first - 1].invocation, hi=first, key=_invocation)
    last = bisect.bisect_right(raw, new[-1], key=_invocation)
    return self_contained_prefix(raw[first:last])


def _invocations_from(raw: Sequence[RawEvent], at: int) -> list[int]:
    """The invocations of `raw[at:]`, in order, each found past the last one's events."""
    out: list[int] = []
    while at < len(raw):
        out.append(raw[at].invocation)
        at = bisect.bisect_right(raw, out[-1], lo=at, key=_invocation)
    return out


def content_json(item: Item, author: str) -> str:
    """`content.model_dump_json(exclude_none=True)` of what the item contributes to a request."""
    if isinstance(item, Compacted):
        return _dump({"parts": [{"text": item.text}], "role": "model"})
    parts: list[dict[str, object]] = []
    for block in item.blocks:
        if isinstance(block, TextBlock):
            parts.append({"text": block.text})
        elif isinstance(block, ThinkingBlock) and block.thinking:  # an empty one: no part
            parts.append({"text": block.thinking, "thought": True})
        elif isinstance(block, ToolCallBlock):
            parts.append({"function_call": {"id": block.id, "args": arguments(block), "name": block.name}})
        elif isinstance(block, ToolResultBlock):
            response = {"result": block.text}
            parts.append({"function_response": {"id": block.id, "name": block.name, "response": response}})
    return _dump({"parts": parts, "role": "model" if item.role == "model" else "user"})


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def arguments(call: ToolCallBlock) -> dict[str, object]:
    """A call's arguments as ADK keeps them (`parsed_arguments`: strict JSON, else its repairs).

    Raises:
        ValueError: ADK's LiteLLM adapter discards such a call (arguments it cannot read as an
            object), so no ADK session holds one to send, count or summarize.
    """
    parsed = parsed_arguments(call.input)
    if parsed is None:
        raise ValueError(
            f"call {call.id!r} ({call.name}): its arguments are not a JSON object, even after "
            "ADK's repairs (a Python literal, unquoted keys, a code fence); ADK's model adapter "
            "discards such a call (MALFORMED_FUNCTION_CALL), so an ADK session never holds one"
        )
    return parsed


def serialized_size(items: Sequence[Item]) -> int:
    """`_serialized_size`: the summed JSON length of the items' contents."""
    return sum(map(_content_length, items))


def _json_length(item: Item) -> int:
    return len(content_json(item, ""))


_content_length = IdentityMemo[Item, int](_json_length)
"""The JSON length of an item's content, once per item: a session's events and summaries are the
same objects from turn to turn, and every turn weighs them all."""


def worth_compacting(
    raw: Sequence[RawEvent], compactions: tuple[Compacted, ...], chosen: Sequence[RawEvent], start: int
) -> bool:
    """`_is_range_worth_compacting`: an empty summary from `start` (the range's first timestamp,
    or the latest summary's start when it seeds the range) to the range's end would remove more
    characters from the request than the latest summary holds."""
    weightless = Compacted(start=start, end=chosen[-1].ts, text="", after=len(raw))
    before = serialized_size(effective(raw, compactions))
    after = effective(raw, (*compactions, weightless))
    removable = before - sum(
        len(_dump({"parts": [], "role": "model"})) if item is weightless else _content_length(item)
        for item in after
    )
    last = latest(compactions)
    return removable > (_content_length(last) if last else 0)
