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
  same objects (each message's events are kept by identity, `message_events`).
- Functions here are pure and take everything as arguments.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ctxlab.core.messages.blocks import Block, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.memo import IdentityMemo
from ctxlab.core.messages.message import Message

Role = Literal["user", "model", "response"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RawEvent:
    """One session event: its ordinal (the timestamp), invocation (the user turn), kind, blocks.

    Attributes:
        ts: the event's ordinal from 1, standing for its timestamp.
        invocation: the user turn it belongs to.
        role: a user message, a model response, or a batch of tool responses.
        blocks: the context blocks it stands for.
        message: the stored message it was read from (a user message is kept whole).
    """

    ts: int
    invocation: int
    role: Role
    blocks: tuple[Block, ...]
    message: Message


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
    one event; another is split into runs of tool results and runs of everything else."""
    if message.role == "user":
        return (RawEvent(ts=first, invocation=turn, role="user", blocks=message.blocks, message=message),)
    runs: list[tuple[Role, tuple[Block, ...]]] = []
    run: list[Block] = []
    results = False
    for block in message.blocks:
        if isinstance(block, ToolResultBlock) != results and run:
            runs.append(("response" if results else "model", tuple(run)))
            run = []
        results = isinstance(block, ToolResultBlock)
        run.append(block)
    if run:
        runs.append(("response" if results else "model", tuple(run)))
    return tuple(
        RawEvent(ts=first + k, invocation=turn, role=role, blocks=blocks, message=message)
        for k, (role, blocks) in enumerate(runs)
    )


message_events = IdentityMemo[Message, tuple[RawEvent, ...]](_read_events)
"""`message_events(message, turn, first)`: the events of one message, kept by identity."""


def session(raw: Sequence[RawEvent], compactions: Sequence[Compacted]) -> list[Item]:
    """The session's event list: raw events with each compaction where it was appended."""
    out: list[Item] = []
    pending = list(compactions)
    for index, event in enumerate(raw):
        while pending and pending[0].after <= index:
            out.append(pending.pop(0))
        out.append(event)
    return out + pending


def surviving(compactions: Sequence[Compacted]) -> list[int]:
    """Indices of the compactions no other contains (`_get_compaction_ranges`): sorted by start,
    descending end, descending index; each whose end passes every earlier one survives."""
    order = sorted(range(len(compactions)), key=lambda i: (compactions[i].start, -compactions[i].end, -i))
    kept: set[int] = set()
    max_end: int | None = None
    for i in order:
        if max_end is None or compactions[i].end > max_end:
            kept.add(i)
            max_end = compactions[i].end
    return sorted(kept)


def effective(raw: Sequence[RawEvent], compactions: Sequence[Compacted]) -> list[Item]:
    """What a request carries (`_process_compaction_events`): surviving summaries at their end,
    raw events outside every surviving range, in timestamp order (a summary after its end event)."""
    kept = [compactions[i] for i in surviving(compactions)]
    covered = [(c.start, c.end) for c in kept if c.start <= c.end]
    items: list[tuple[int, int, Item]] = [(c.end, 1, c) for c in kept]
    items += [(e.ts, 0, e) for e in raw if not any(a <= e.ts <= b for a, b in covered)]
    items.sort(key=lambda item: (item[0], item[1]))
    return [item for _, _, item in items]


def latest(compactions: Sequence[Compacted]) -> Compacted | None:
    """The latest surviving compaction in stream order."""
    kept = surviving(compactions)
    return compactions[kept[-1]] if kept else None


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
    compaction's end, less the retained tail (moved earlier to keep calls with their responses)."""
    last = latest(compactions)
    candidates = [e for e in raw if e.ts > (last.end if last else 0)]
    if len(candidates) <= retention:
        return []
    chosen = candidates if retention == 0 else candidates[: safe_split(candidates, retention)]
    return self_contained_prefix(chosen)


def window_candidates(
    raw: Sequence[RawEvent], compactions: Sequence[Compacted], interval: int, overlap: int
) -> list[RawEvent]:
    """The sliding window's range (`_run_compaction_for_sliding_window`): once `interval`
    invocations ended after the last compaction's end, from `overlap` invocations before the first
    of them to the last of them. The last compaction is the last in stream order, not the widest."""
    last_end = compactions[-1].end if compactions else 0
    latest_ts: dict[int, int] = {}
    for event in raw:
        latest_ts[event.invocation] = max(latest_ts.get(event.invocation, 0), event.ts)
    invocations = list(latest_ts)
    new = [i for i in invocations if latest_ts[i] > last_end]
    if len(new) < interval:
        return []
    start = invocations[max(0, invocations.index(new[0]) - overlap)]
    first = next(k for k, e in enumerate(raw) if e.invocation == start)
    last = max(k for k, e in enumerate(raw) if e.invocation == new[-1])
    return self_contained_prefix(raw[first : last + 1])


def content_json(item: Item, author: str) -> str:
    """`content.model_dump_json(exclude_none=True)` of what the item contributes to a request."""
    if isinstance(item, Compacted):
        return _dump({"parts": [{"text": item.text}], "role": "model"})
    parts: list[dict[str, object]] = []
    for block in item.blocks:
        if isinstance(block, TextBlock):
            parts.append({"text": block.text})
        elif isinstance(block, ToolCallBlock):
            parts.append({"function_call": {"id": block.id, "args": arguments(block), "name": block.name}})
        elif isinstance(block, ToolResultBlock):
            response = {"result": block.text}
            parts.append({"function_response": {"id": block.id, "name": block.name, "response": response}})
    return _dump({"parts": parts, "role": "model" if item.role == "model" else "user"})


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def arguments(call: ToolCallBlock) -> dict[str, object]:
    """A call's arguments as the model gave them (an object)."""
    parsed = json.loads(call.input) if call.input.strip() else {}
    return parsed if isinstance(parsed, dict) else {}


def serialized_size(items: Sequence[Item]) -> int:
    """`_serialized_size`: the summed JSON length of the items' contents."""
    return sum(len(content_json(item, "")) for item in items)


def worth_compacting(
    raw: Sequence[RawEvent], compactions: Sequence[Compacted], chosen: Sequence[RawEvent], start: int
) -> bool:
    """`_is_range_worth_compacting`: an empty summary from `start` (the range's first timestamp,
    or the latest summary's start when it seeds the range) to the range's end would remove more
    characters from the request than the latest summary holds."""
    weightless = Compacted(start=start, end=chosen[-1].ts, text="", after=len(raw))
    before = serialized_size(effective(raw, compactions))
    after = effective(raw, (*compactions, weightless))
    removable = before - sum(
        len(_dump({"parts": [], "role": "model"})) if item is weightless else len(content_json(item, ""))
        for item in after
    )
    last = latest(compactions)
    return removable > (len(content_json(last, "")) if last else 0)


def estimate_tokens(items: Sequence[Item]) -> int | None:
    """`_estimate_prompt_token_count`: characters of the request's contents // 4 (texts, call and
    response names, arguments and responses as `json.dumps`), None when there are none."""
    total = sum(len(item.text) if isinstance(item, Compacted) else _counted(item) for item in items)
    return total // 4 if total > 0 else None


def _counted_chars(event: RawEvent) -> int:
    total = 0
    for block in event.blocks:
        if isinstance(block, TextBlock):
            total += len(block.text)
        elif isinstance(block, ToolCallBlock):
            args = arguments(block)
            total += len(block.name) + (len(json.dumps(args)) if args else 0)
        elif isinstance(block, ToolResultBlock):
            total += len(block.name) + len(json.dumps({"result": block.text}))
    return total


_counted = IdentityMemo[RawEvent, int](_counted_chars)
"""The characters `estimate_tokens` counts of one raw event, kept by identity."""
