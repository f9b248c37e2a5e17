"""The OpenHands SDK's event view of a ctxlab context, and its condenser's cut (SDK 1.58.2).

The SDK keeps a list of events and sends what its view holds: the system prompt (event 0), one
event per user message, one per tool call (the response's text is the first call's thought),
one per tool result, one per final text, and the summary of an earlier condensation. Here the
same events are read off the stored context: a ctxlab message holds a whole reply, so one message
may hold many events, and a summary is a user message of its own (id prefix `SUMMARY_ID`).

Sources (`openhands/sdk/`): `context/view/` (manipulation indices: batch atomicity and tool-call
matching), `context/condenser/llm_summarizing_condenser.py` (`_get_forgotten_events`),
`event/*` (`__str__` of each event kind, previews of `N_CHAR_PREVIEW` characters),
`utils/truncate.py` (`maybe_truncate`).

Invariants:
- `events_of(context)` covers every block of the context once, in order; `rebuild` of the events
  gives the context back (a reply split by a summary becomes two messages, the later keeping the
  reply's id so the loop goes on appending to it).
- Indices are the SDK's: position 0 is the system prompt, so a context event `i` is view `i + 1`.
- A cut never starts inside a batch or between a call and its result (both edges move forward to
  the next manipulation index, as the SDK's do).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ctxlab.core.messages.blocks import Block, DataBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat
from ctxlab.core.messages.message import Message, text_message

SUMMARY_ID = "openhands-summary"
"""Id prefix of the summary messages the condenser inserts into the context."""

EventKind = Literal["user", "summary", "action", "observation", "message"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One SDK event read off the context: its kind, the blocks it stands for, where they live.

    Attributes:
        kind: the SDK event class it stands for.
        blocks: the context blocks of the event (an action's thought comes with its call).
        message: index of the message holding the blocks.
        batch: for an action, the index of the response it belongs to (its `llm_response_id`).
        thought: for an action, its thought (the response's text, on the batch's first call).
    """

    kind: EventKind
    blocks: tuple[Block, ...]
    message: int
    batch: int = -1
    thought: str = ""


def events_of(context: Sequence[Message]) -> tuple[Event, ...]:
    """The view's events after the system prompt, in order (a message's events depend on it and
    its place only, so those of the contexts last read are kept: `LeadingConcat`)."""
    return _events(context)


def _message_events(message: Message, index: int, _before: int) -> list[Event]:
    if message.role == "assistant":
        return _reply_events(message.blocks, index)
    kind: EventKind = "summary" if message.id.startswith(SUMMARY_ID) else "user"
    return [Event(kind=kind, blocks=message.blocks, message=index)]


_events = LeadingConcat[Message, Event](_message_events)


def _reply_events(blocks: tuple[Block, ...], index: int) -> list[Event]:
    out: list[Event] = []
    texts: list[Block] = []
    batch, in_batch = index * 10_000, False
    for block in blocks:
        if isinstance(block, ToolCallBlock):
            if not in_batch:
                batch, in_batch = batch + 1, True
            thought = "".join(b.text for b in texts if isinstance(b, TextBlock))
            out.append(
                Event(kind="action", blocks=(*texts, block), message=index, batch=batch, thought=thought)
            )
            texts = []
        elif isinstance(block, ToolResultBlock):
            out.append(Event(kind="observation", blocks=(block,), message=index))
        else:
            in_batch = False
            texts.append(block)
            continue
        in_batch = in_batch and isinstance(block, ToolCallBlock)
    if texts:
        out.append(Event(kind="message", blocks=tuple(texts), message=index))
    return out


def manipulation_indices(events: Sequence[Event]) -> frozenset[int]:
    """View indices where events may be cut or inserted (the SDK's properties, all of them).

    Batch atomicity: never between two calls of one response. Tool-call matching: never while a
    call waits for its result. Indices count the system prompt as view event 0.
    """
    view = 1 + len(events)
    allowed = set(range(view + 1))
    pending: set[str] = set()
    for offset, event in enumerate(events):
        index = offset + 1
        previous = events[offset - 1] if offset else None
        if event.kind == "action" and previous is not None and previous.batch == event.batch:
            allowed.discard(index)  # batch atomicity: never between two calls of one response
        last = event.blocks[-1] if event.blocks else None  # a user message may hold no block
        if event.kind == "action" and isinstance(last, ToolCallBlock):
            pending.add(last.id)
        elif event.kind == "observation" and isinstance(last, ToolResultBlock):
            pending.discard(last.id)
        if pending:
            allowed.discard(index + 1)
    return frozenset(allowed)


def find_next(indices: frozenset[int], threshold: int) -> int | None:
    """The smallest index at or above `threshold`, or None (the SDK raises ValueError)."""
    above = [i for i in indices if i >= threshold]
    return min(above) if above else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Cut:
    """A condensation's range in view indices: events `start` to `end` (exclusive) are forgotten
    and the summary goes to `start`."""

    start: int
    end: int


def forgotten_range(events: Sequence[Event], *, keep_first: int, events_from_tail: int) -> Cut | None:
    """The SDK's `_get_forgotten_events`: both edges moved forward to manipulation indices.

    None where the SDK raises (no index at or after an edge).
    """
    view = 1 + len(events)
    indices = manipulation_indices(events)
    start = find_next(indices, max(keep_first, 1))
    end = find_next(indices, view - events_from_tail)
    if start is None or end is None:
        return None
    return Cut(start=start, end=max(start, end))


def preview(text: str, limit: int, *, dots_inside: bool) -> str:
    """An SDK preview: the text, or its start and `...` when longer than `limit`.

    Messages and summaries keep `limit - 3` characters and the dots (`dots_inside`); thoughts
    and results keep `limit` characters, then the dots.

    >>> preview("abcdef", 5, dots_inside=True), preview("abcdef", 5, dots_inside=False)
    ('ab...', 'abcde...')
    """
    if len(text) <= limit:
        return text
    return text[: limit - 3] + "..." if dots_inside else text[:limit] + "..."


def _texts(blocks: Sequence[Block]) -> list[str]:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, DataBlock) and block.is_image:
            parts.append("[Image: 1 URLs]")
    return parts


def render(event: Event, *, limit: int, action_class: str) -> str:
    """`str(event)` as the SDK writes it for the summary request (a failed result's header is
    part of its stored output)."""
    match event.kind:
        case "user" | "summary" | "message":
            name, source, role = {
                "user": ("MessageEvent", "user", "user"),
                "summary": ("CondensationSummaryEvent", "environment", "user"),
                "message": ("MessageEvent", "agent", "assistant"),
            }[event.kind]
            parts = _texts(event.blocks)
            shown = preview(" ".join(parts), limit, dots_inside=True) if parts else "[no text content]"
            return f"{name} ({source})\n  {role}: {shown}"
        case "action":
            thought = preview(event.thought, limit, dots_inside=False)
            return f"ActionEvent (agent)\n  Thought: {thought}\n  Action: {action_class}"
        case "observation":
            result = event.blocks[0]
            assert isinstance(result, ToolResultBlock)
            content = "".join(_texts(result.output))
            shown = preview(content, limit, dots_inside=False)
            return f"ObservationEvent (environment)\n  Tool: {result.name}\n  Result: {shown}"


def truncate_middle(content: str, limit: int | None, notice: str) -> str:
    """The SDK's `maybe_truncate` (no file saved): the head, the notice, the tail.

    >>> truncate_middle("abcdefghij", 8, "..")
    'abc..hij'
    """
    if not limit or len(content) <= limit or limit < 0:
        return content
    if len(notice) >= limit:
        return notice[:limit]
    available = limit - len(notice)
    head = available // 2 + available % 2
    tail = limit - len(notice) - head
    return content[:head] + notice + (content[-tail:] if tail > 0 else "")


def rebuild(
    context: Sequence[Message], events: Sequence[Event], summary: Message | None, at: int
) -> tuple[Message, ...]:
    """The context holding `events` (kept, in order) with `summary` before kept event `at`.

    Blocks of one message stay together; a reply interrupted by the summary splits, the earlier
    part taking a derived id and the later the original one.
    """
    items: list[Event | Message] = list(events)
    if summary is not None:
        items.insert(at, summary)
    out: list[Message] = []
    group: list[Block] = []
    source = -1
    for item in items:
        if isinstance(item, Message) or item.message != source:
            _flush(out, context, source, group)
            group = []
        if isinstance(item, Message):
            out.append(item)
            source = -1
            continue
        source = item.message
        group.extend(item.blocks)
    _flush(out, context, source, group)
    return _unique_ids(tuple(out))


def _flush(out: list[Message], context: Sequence[Message], source: int, group: list[Block]) -> None:
    if group and source >= 0:
        out.append(context[source].with_blocks(tuple(group)))


def _unique_ids(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Earlier parts of a split message take `<id>~<n>`; the last part keeps the id."""
    last = {m.id: i for i, m in enumerate(messages)}
    return tuple(
        m
        if last[m.id] == i or not m.id
        else Message(role=m.role, blocks=m.blocks, id=f"{m.id}~{i}", name=m.name)
        for i, m in enumerate(messages)
    )


def sdk_arguments(raw: str) -> str:
    r"""A call's arguments as the SDK stores them: parsed and dumped again (ASCII escapes).

    >>> print(sdk_arguments('{"path":"ä"}'))
    {"path": "\u00e4"}
    """
    try:
        return json.dumps(json.loads(raw))
    except json.JSONDecodeError:
        return raw


TOOL_TEXT_LIMIT = 50_000
"""Characters of one text part of a tool result the SDK sends (`DEFAULT_TEXT_CONTENT_LIMIT`, SDK
1.58.2): a longer part is cut in the middle (`maybe_truncate`) each time a request is written."""

CLIP_NOTICE = "<clipped>"
"""ctxlab's wording of the notice in the middle of a cut text (`texts: openhands` takes the SDK's)."""


def sdk_request(context: Sequence[Message], notice: str = CLIP_NOTICE) -> tuple[Message, ...]:
    """The context as the SDK sends it to a model without vision (`test-model`'s): every call's
    arguments re-serialised, every text part of a tool result over `TOOL_TEXT_LIMIT` cut in the
    middle around `notice`, every image of a user message or a tool result left out, and user
    messages that follow each other (a summary after a user message) merged into one, their
    parts in order. A result whose parts were all images keeps its tool message, empty; a user
    message of images alone is sent empty (`NO_CONTENT`). Unchanged messages are the same
    objects, so they keep their cached sizes, and a message sent again is the very copy made for
    it before (`sent_as`)."""
    out: list[Message] = []
    for message in context:
        sent = sent_as(message, notice)
        if sent.role == "user" and out and out[-1].role == "user":
            out[-1] = _merged(out[-1], sent)
        else:
            out.append(sent)
    return tuple(out)


NO_CONTENT = TextBlock(text="")
"""What is sent of a user message whose parts were all images: the SDK sends it with an empty
list of parts, here one empty text (the same text and the same tokens). Known by identity, so a
user's own empty text is never taken for it."""


def _empty(message: Message) -> bool:
    return len(message.blocks) == 1 and message.blocks[0] is NO_CONTENT


def _merged(first: Message, second: Message) -> Message:
    """Two user messages sent as one, the parts of both in order (`NO_CONTENT` is no part)."""
    if _empty(second):
        return first
    return first.with_blocks(second.blocks) if _empty(first) else first.appended(*second.blocks)


def is_image(block: Block) -> bool:
    """Whether a block is an image (the parts a model without vision is not sent)."""
    return isinstance(block, DataBlock) and block.is_image


def latest_user_has_image(context: Sequence[Message]) -> bool:
    """Whether the last user message of the request holds an image: the last user message of
    `context` and the user messages right before it, which the request merges with it."""
    found = False
    for message in reversed(context):
        if message.role != "user":
            if found:
                return False
            continue
        found = True
        if any(is_image(b) for b in message.blocks):
            return True
    return False


def _sent_as(message: Message, notice: str) -> Message:
    if message.role == "user":
        kept = tuple(b for b in message.blocks if not is_image(b))
        return message if len(kept) == len(message.blocks) else message.with_blocks(kept or (NO_CONTENT,))
    if message.role != "assistant" or not any(
        isinstance(b, ToolCallBlock | ToolResultBlock) for b in message.blocks
    ):
        return message
    blocks = tuple(_sdk_blocks(message.blocks, notice))
    same = len(blocks) == len(message.blocks) and all(
        a is b for a, b in zip(blocks, message.blocks, strict=True)
    )
    return message if same else message.with_blocks(blocks)


sent_as = IdentityMemo[Message, Message](_sent_as)
"""One stored message as the SDK sends it (itself when nothing changes), made once per message
and notice:
the request is worked out from the whole context at every call."""


def _sdk_blocks(blocks: tuple[Block, ...], notice: str) -> list[Block]:
    """A reply's blocks as sent: calls re-serialised, long result texts cut, blank thoughts of a
    call message dropped."""
    out: list[Block] = []
    for index, block in enumerate(blocks):
        if isinstance(block, ToolCallBlock):
            changed = sdk_arguments(block.input)
            out.append(block if changed == block.input else replace(block, input=changed))
        elif isinstance(block, ToolResultBlock):
            out.append(_clipped(_imageless(block), notice))
        elif isinstance(block, TextBlock) and not block.text.strip() and _before_calls(blocks, index):
            continue
        else:
            out.append(block)
    return out


def _imageless(result: ToolResultBlock) -> ToolResultBlock:
    """The result without its images (no part left is an empty result: its tool message stays)."""
    if not any(is_image(b) for b in result.output):
        return result
    return replace(result, output=tuple(b for b in result.output if not is_image(b)))


def _clipped(result: ToolResultBlock, notice: str) -> ToolResultBlock:
    """The result with each text part over `TOOL_TEXT_LIMIT` cut in the middle (each part on its
    own, as the SDK cuts each text content of a tool message)."""
    if not any(isinstance(b, TextBlock) and len(b.text) > TOOL_TEXT_LIMIT for b in result.output):
        return result
    output = tuple(
        replace(b, text=truncate_middle(b.text, TOOL_TEXT_LIMIT, notice)) if isinstance(b, TextBlock) else b
        for b in result.output
    )
    return replace(result, output=output)


def _before_calls(blocks: tuple[Block, ...], index: int) -> bool:
    """Whether the text at `index` is part of a response that makes calls (its thought)."""
    for block in blocks[index + 1 :]:
        if isinstance(block, ToolCallBlock):
            return True
        if not isinstance(block, TextBlock):
            return False
    return False


def summary_message(text: str, number: int) -> Message:
    """The summary event as a context message."""
    return text_message("user", text, id=f"{SUMMARY_ID}-{number}")
