"""The stored context as pydantic-ai's message history, and the harness's counting on it (its
cutoffs: `cutoffs.py`).

pydantic-ai keeps a history of requests and responses: a request holds user prompts, tool returns
and summaries (parts), a response holds text and tool calls. `pa_view` reads the lab's stored
context through its OpenAI view (one view unit per OpenAI message) into that shape, each part
remembering the view unit it stands for, so that every edit the harness makes on requests and
responses becomes an edit of view units.

Requests: a user message starts one; the tool results that follow one assistant message form one
(pydantic-ai returns a round's results in one request); a summary the lab stored for
`SummarizingCompaction` is recognised by its frame and read back as the raw summary. pydantic-ai
merges adjacent requests when a run starts from a history (each new user turn): those merges are
remembered as the `joined` keys of the parts that were appended to the request before them.

The harness counts with about four characters per token: the text of every part (a tool call as
its name and its arguments) and the most recent instructions once, summed, then divided by 4
(`estimate_token_count`); the lab's scripted models report no usage, so no count is anchored on a
provider's.

A tool's files (the data blocks of a result) are part of its return, as pydantic-ai holds them:
the return's text names each by its identifier (`files.return_text`), and the view unit that sends
a batch's files (`media`) stands for no part of its own.

Invariants:
- Every view unit of the context but a media unit belongs to exactly one part (an assistant unit
  may hold a text part and call parts), in view order.
- The functions here are pure and use only the standard library, `ctxlab.core` and the pure
  `returns`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from ctxlab.core.messages.blocks import Block, ToolResultBlock
from ctxlab.core.messages.memo import Closing, IdentityMemo, LeadingFold, LeadingScan
from ctxlab.core.messages.message import GROWN, LINEAGE_WORTH, Message
from ctxlab.core.messages.resumable import Resumable
from ctxlab.core.messages.units import placed_units
from ctxlab.core.wire.views import NO_WIRE, REASONING_FIELD, Wire, WireCarry, wire_step, wire_tail
from ctxlab.presets.pydantic_ai.returns import return_text

PartKind = Literal["user", "summary", "return", "thinking", "text", "call"]
CHARS_PER_TOKEN = 4
"""How far around a cutoff the harness looks for a call whose return would be split from it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Frame:
    """How a summary is stored as a user message: its text between `head` and `tail`; and how a
    file a tool returned is named in its return's text (`file_reference`, with `{id}`)."""

    head: str
    tail: str
    file_reference: str

    def wrap(self, summary: str) -> str:
        """The user text standing for `summary`."""
        return f"{self.head}{summary}{self.tail}"

    def unwrap(self, text: str) -> str | None:
        """The summary `text` frames, or None when it is no summary."""
        if (
            len(text) >= len(self.head) + len(self.tail)
            and text.startswith(self.head)
            and text.endswith(self.tail)
        ):
            return text[len(self.head) : len(text) - len(self.tail)]
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class PAPart:
    """One part of a request or response.

    Attributes:
        kind: user prompt, summary, tool return, reasoning (sent in `reasoning_content`, counted
            by the estimate, left out of the summarizer's transcript), assistant text or tool call.
        unit: the view unit it stands for (a call: its assistant message's unit).
        key: the stored message id (user, summary) it comes from: what a merge remembers.
        text: the prompt, the raw summary, the return's content, the text, or the call's arguments.
        name: the tool's name (calls and returns).
        call_id: the call's id (calls and returns).
        shown: a user prompt of several items as the summarizer's transcript shows it, its texts
            joined with a space (`_summarizing_compaction`), where `text` joins them with nothing
            as the harness counts them (`_shared`); None: `text`.
    """

    kind: PartKind
    unit: int
    key: str = ""
    text: str = ""
    name: str = ""
    call_id: str = ""
    shown: str | None = None

    def segments(self) -> tuple[str, ...]:
        """What the harness counts of the part."""
        return (self.name, self.text) if self.kind == "call" else (self.text,)


@dataclass(frozen=True, slots=True, kw_only=True)
class PAMessage:
    """A request or a response and its parts."""

    kind: Literal["request", "response"]
    parts: tuple[PAPart, ...]

    @property
    def is_request(self) -> bool:
        """Whether it is a request."""
        return self.kind == "request"

    def call_ids(self) -> tuple[str, ...]:
        """The ids of the tool calls a response makes."""
        return tuple(p.call_id for p in self.parts if p.kind == "call" and p.call_id)

    def return_ids(self) -> tuple[str, ...]:
        """The ids of the calls a request's tool returns answer."""
        return tuple(p.call_id for p in self.parts if p.kind == "return")

    def units(self) -> tuple[int, ...]:
        """The view units it stands for, in order."""
        return tuple(dict.fromkeys(p.unit for p in self.parts))


def _text(content: Any, between: str = "") -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return between.join(
            str(p["text"]) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _shown(content: Any) -> str | None:
    """A user prompt's texts joined with a space, when it holds several items (None otherwise)."""
    return _text(content, " ") if isinstance(content, list) and len(content) > 1 else None


def pa_view(messages: Sequence[Message], frame: Frame, joined: Collection[str] = ()) -> tuple[PAMessage, ...]:
    """The history pydantic-ai would hold for the stored context `messages`.

    `joined` names the user and summary messages a run start merged into the request before them.
    Each stored message's requests and responses are worked out once for the place it stands in
    (`_items`); only a request that continues across two stored messages is joined here. The
    views of the histories last read are kept (`_Viewed`): a history that begins with the same
    message objects, none of them joined otherwise than before, is read from there on.
    """
    viewed, same = _VIEWS.resume(frame, messages, _Viewed)
    return viewed.read(messages, frame, frozenset(joined), same)


@dataclass(slots=True, eq=False)
class _Viewed:
    """The view of one history, with what it was after each stored message (`[i]`: after the
    first i): the requests and responses so far, the last of them (a request the next message
    may still extend), and the next message's first view unit."""

    messages: list[Message] = field(default_factory=list)
    joined: frozenset[str] = frozenset()
    out: list[PAMessage] = field(default_factory=list)
    ends: list[int] = field(default_factory=lambda: [0])
    lasts: list[PAMessage | None] = field(default_factory=lambda: [None])
    firsts: list[int] = field(default_factory=lambda: [0])
    first_at: dict[str, int] = field(default_factory=dict)  # a kept message id -> its first place
    made: tuple[PAMessage, ...] = ()  # the view last given
    source: tuple[Message, ...] | None = None  # the history `messages` holds, when one was read

    def read(
        self, messages: Sequence[Message], frame: Frame, joined: frozenset[str], same: int
    ) -> tuple[PAMessage, ...]:
        """The view of `messages`, whose first `same` are the first messages it read last; noted
        (`GROWN`) as beginning with the view last given up to the request the next message may
        extend, so what folds the views along (`merged_keys`) resumes without comparing them."""
        if joined != self.joined:
            moved = [self.first_at[key] for key in joined ^ self.joined if key in self.first_at]
            same = min([same, *moved])
            self.joined = joined
        self._cut(same)
        self.source = None  # until `messages` is read whole
        kept = max(0, len(self.out) - 1)  # the last one kept may be extended below
        out, first = self.out, self.firsts[-1]
        for position in range(same, len(messages)):
            message = messages[position]
            key_joined = message.id in joined
            items = _items(message, first, frame, key_joined)
            first += len(placed_units(message, position, first))
            if items and out and _continues(out[-1], items[0], key_joined):
                out[-1] = PAMessage(kind="request", parts=(*out[-1].parts, *items[0].parts))
                out.extend(items[1:])
            else:
                out.extend(items)
            self.messages.append(message)
            self.first_at.setdefault(message.id, position)
            self.ends.append(len(out))
            self.lasts.append(out[-1] if out else None)
            self.firsts.append(first)
        made, before = tuple(out), self.made
        if min(kept, len(before)) >= LINEAGE_WORTH:
            GROWN.note(made, before, min(kept, len(before)))
        self.made, self.source = made, messages if type(messages) is tuple else None
        return made

    def _cut(self, same: int) -> None:
        for position in range(same, len(self.messages)):
            if self.first_at.get(self.messages[position].id, -1) >= same:
                del self.first_at[self.messages[position].id]
        del self.messages[same:], self.ends[same + 1 :], self.lasts[same + 1 :], self.firsts[same + 1 :]
        del self.out[self.ends[-1] :]
        last = self.lasts[-1]
        if last is not None:
            self.out[-1] = last


def _source(viewed: _Viewed) -> tuple[Message, ...] | None:
    return viewed.source


_VIEWS = Resumable[Frame, _Viewed](lambda viewed: viewed.messages, keys=4, source=_source)
"""The views of the histories last read, a few per frame (a history grown from one read last is
resumed by its lineage, `GROWN`, without comparing)."""


def _continues(before: PAMessage, item: PAMessage, key_joined: bool) -> bool:
    """Whether the request `item` opening a stored message merges into `before`: tool returns
    join a request of returns only, a user part one its message was joined to."""
    if not (before.is_request and item.is_request):
        return False
    if item.parts[0].kind == "return":
        return all(p.kind == "return" for p in before.parts)
    return key_joined


@dataclass(frozen=True, slots=True)
class _Place:
    """What a stored message's requests and responses depend on besides its blocks and first
    view unit: its role and id, the summary frame, and whether its id is joined."""

    role: str
    key: str
    frame: Frame
    joined: bool


_ItemCarry = tuple[WireCarry, int, tuple[PAPart, ...], int]
"""What `_message_read` carries from block to block (a plain tuple: made at every block): the
OpenAI view's carry, the next view unit's index, the parts of the request still open, and the
characters of every part made so far."""


def _message_read(
    message: Message, first: int, frame: Frame, key_joined: bool
) -> tuple[tuple[PAMessage, ...], int]:
    """The requests and responses of one stored message whose first view unit is `first`, read
    alone (merging inside it only; `key_joined`: whether its id is joined), and the characters of
    their parts.

    Its OpenAI view is read block by block (`wire_step`), each view message becoming a part or a
    response as it is completed; a message of `RESUMED_BLOCKS` blocks or more (a reply that grows
    by a round at every call) resumes the read of an earlier one whose blocks it begins with, and
    is closed in one copy (`LeadingScan.finished`).
    """
    place = _Place(message.role, message.id, frame, key_joined)
    closing = _Closing(place)
    done = _item_scan.finished(message.blocks, (NO_WIRE, first, (), 0), closing, place)
    return done, closing.chars


@dataclass(slots=True)
class _Closing:
    """Closes a message's read (`LeadingScan.finished`): the view messages its last block left
    open, and the request still open, follow the read's parts; `chars` is then the characters of
    them all."""

    place: _Place
    chars: int = 0

    def __call__(self, carry: _ItemCarry, done: Sequence[PAMessage]) -> Closing[PAMessage]:
        wires, index, request, chars = carry
        tail: list[PAMessage] = []
        media = bool(wires[2])  # the files of the last results come first, in their returns
        for k, wire in enumerate(wire_tail(wires, self.place.role)):
            if not (media and k == 0):
                request, chars = _take(tail, request, chars, wire, index=index, name="", place=self.place)
            index += 1
        if request:
            tail.append(PAMessage(kind="request", parts=request))
        self.chars = chars
        return len(done), tail


def _item_step(
    carry: _ItemCarry, block: Block, before: int, place: _Place
) -> tuple[list[PAMessage], _ItemCarry]:
    """The requests and responses `block` completes, and the carry after it."""
    wires, index, request, chars = carry
    done: list[PAMessage] = []
    media = bool(wires[2]) and not isinstance(block, ToolResultBlock)  # `made` starts with the files
    made, wires = wire_step(wires, block, before, place.role)
    name, text = "", None
    if isinstance(block, ToolResultBlock):  # only a result makes a tool message
        name = block.name
        text = return_text(block, place.frame.file_reference) if block.tally.ndata else None
    for k, wire in enumerate(made):
        if not (media and k == 0):
            request, chars = _take(done, request, chars, wire, index=index, name=name, place=place, text=text)
        index += 1
    return done, (wires, index, request, chars)


_item_scan = LeadingScan[Block, _ItemCarry, PAMessage](_item_step)


def _take(
    done: list[PAMessage],
    request: tuple[PAPart, ...],
    chars: int,
    wire: Wire,
    *,
    index: int,
    name: str,
    place: _Place,
    text: str | None = None,
) -> tuple[tuple[PAPart, ...], int]:
    """Read the OpenAI message `wire` (view unit `index`; `name`: a tool message's tool; `text`:
    a tool message's return text, when not its content's): a response or a request it closes
    joins `done`; the open request and the characters after it.

    Tool returns join an open request of returns only (a request never takes a return after
    another part, so its last part tells), a user part any open request when its id is joined.
    """
    role = wire["role"]
    if role == "assistant":
        response = PAMessage(kind="response", parts=_response_parts(wire, index))
        if request:
            done.append(PAMessage(kind="request", parts=request))
        done.append(response)
        return (), chars + message_chars((response,))
    text = _text(wire.get("content")) if text is None or role != "tool" else text
    if role == "tool":
        part = PAPart(kind="return", unit=index, text=text, name=name, call_id=wire["tool_call_id"])
        merge = bool(request) and request[-1].kind == "return"
    else:
        summary = place.frame.unwrap(text)
        kind: PartKind = "user" if summary is None else "summary"
        shown = _shown(wire.get("content")) if summary is None else None
        part = PAPart(
            kind=kind, unit=index, key=place.key, text=text if summary is None else summary, shown=shown
        )
        merge = bool(request) and place.joined
    chars += sum(len(s) for s in part.segments())
    if merge:
        return (*request, part), chars
    if request:
        done.append(PAMessage(kind="request", parts=request))
    return (part,), chars


def _message_items(message: Message, first: int, frame: Frame, key_joined: bool) -> tuple[PAMessage, ...]:
    """`_message_read`'s requests and responses."""
    return _message_read(message, first, frame, key_joined)[0]


_items = IdentityMemo[Message, tuple[PAMessage, ...]](_message_items)


def _response_parts(wire: Wire, index: int) -> tuple[PAPart, ...]:
    """The thinking part (reasoning sent back), the text part (when the message has content) and
    the call parts of an assistant message."""
    reasoning = wire.get(REASONING_FIELD)
    parts = [PAPart(kind="thinking", unit=index, text=reasoning)] if reasoning else []
    if wire.get("content"):
        parts.append(PAPart(kind="text", unit=index, text=_text(wire.get("content"))))
    for call in wire.get("tool_calls") or ():
        function = call["function"]
        parts.append(
            PAPart(
                kind="call", unit=index, text=function["arguments"], name=function["name"], call_id=call["id"]
            )
        )
    return tuple(parts)


def merged_keys(history: Sequence[PAMessage]) -> frozenset[str]:
    """The keys of the parts a run start appends to the request before them (adjacent requests
    merge). Folded along the history and kept (`LeadingFold`): a turn costs what it added."""
    return _merges(history, _NO_MERGES).keys


class _Merging(NamedTuple):
    """The keys merged so far, and whether the last message was a request."""

    after_request: bool
    keys: frozenset[str]


def _merge_step(carry: _Merging, message: PAMessage) -> _Merging:
    after_request, keys = carry
    if after_request and message.is_request and (key := message.parts[0].key) and key not in keys:
        keys = keys | {key}
    return _Merging(message.is_request, keys)


_NO_MERGES = _Merging(False, frozenset())
_merges = LeadingFold[PAMessage, _Merging](_merge_step)


def estimate_stored_tokens(messages: Sequence[Message], frame: Frame, instructions: str) -> int:
    """`estimate_tokens(pa_view(messages, frame), instructions)`, from `stored_chars`."""
    return tokens_of(stored_chars(messages, frame), instructions)


def stored_chars(messages: Sequence[Message], frame: Frame) -> int:
    """`message_chars(pa_view(messages, frame, joined))` for any `joined`, read message by
    message: a part counts the same whatever request it is merged into, so each stored message
    is counted once, and the sums of the histories last counted are kept (`LeadingFold`): the
    harness's counter and its steps ask at every call, of a context that mostly stays."""
    return _stored_chars(messages, 0, frame)


def _message_chars(message: Message, frame: Frame) -> int:
    return _message_read(message, 0, frame, False)[1]


_chars_of = IdentityMemo[Message, int](_message_chars)
_stored_chars = LeadingFold[Message, int](lambda chars, message, frame: chars + _chars_of(message, frame))


def estimate_tokens(history: Sequence[PAMessage], instructions: str) -> int:
    """The harness's estimate of a history sent with `instructions`: characters // 4."""
    return tokens_of(message_chars(history), instructions)


def tokens_of(chars: int, instructions: str) -> int:
    """The harness's estimate of a history of `chars` counted characters sent with `instructions`."""
    return (chars + len(instructions)) // CHARS_PER_TOKEN


def message_chars(history: Sequence[PAMessage]) -> int:
    """The characters of every part's counted text."""
    return sum(len(s) for m in history for p in m.parts for s in p.segments())
