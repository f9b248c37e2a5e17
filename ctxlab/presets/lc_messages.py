"""The LangChain view of a context, and the pure functions LangChain's middleware runs on it.

LangChain's agent keeps its history as a list of messages (human, AI with tool calls, one tool
message per result), which is the OpenAI view of ctxlab's stored context. Its summarization and
clearing middleware count, trim and render that list; this module does the same on `LCMessage`s
(the count is `ctxlab.presets.lc_count`'s) so that the LangChain presets decide exactly as the
installed package does. Sources (langchain 1.5.0, langchain-core 1.8.3):
`langchain_core.messages.utils` (`trim_messages`, `get_buffer_string(format="xml")`) and
`langchain.agents.middleware.summarization` (trigger clauses, cutoffs).

Invariants:
- `lc_view(messages)` has one `LCMessage` per message of `wire.to_openai(messages)`, in order,
  so a view index is a `ctxlab.core.messages.units.view_units` index.
- `trim_last` equals `trim_messages(strategy="last", allow_partial=True, start_on="human",
  include_system=True)` with the default line splitter: the kept suffix starts on a human
  message (possibly cut to its last lines) or is empty.
- `lc_answer` stores each call's arguments as LangChain holds and sends them: the object an
  OpenAI-compatible chat model integration parses (`parse_tool_call`) written back as
  langchain-core's OpenAI form writes `tool_calls[].args` (`json.dumps(args, ensure_ascii=False)`),
  so `LCCall.args` is that text and `LCCall.arguments()` the object.
- Every function here is pure: equal inputs give equal outputs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal
from xml.sax.saxutils import escape, quoteattr

from ctxlab.core.messages.blocks import Block, TextBlock, ThinkingBlock, ToolCallBlock
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.units import ViewUnit
from ctxlab.core.wire.along import ViewParts
from ctxlab.core.wire.views import Wire

LCKind = Literal["human", "ai", "tool", "system"]
ROLES: Mapping[LCKind, str] = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
_KINDS: Mapping[str, LCKind] = {"user": "human", "assistant": "ai", "tool": "tool", "system": "system"}
TOOL_CALL_ID_DISPLAY_LIMIT = 64
"""Tool-call ids longer than this are shown cut, with `...`, in the XML transcript."""


@dataclass(frozen=True, slots=True)
class LCCall:
    """A tool call of an AI message: name, arguments as the request writes them (JSON text), id."""

    name: str
    args: str
    id: str

    def arguments(self) -> Any:
        """The arguments as LangChain holds them: the parsed JSON object (`{}` when unparsable,
        which no call `lc_answer` kept is)."""
        try:
            return json.loads(self.args)
        except json.JSONDecodeError:
            return {}


@dataclass(frozen=True, slots=True, kw_only=True)
class LCMessage:
    """One message of LangChain's history.

    Attributes:
        kind: human, ai, tool or system.
        content: the text, or a list of content blocks (OpenAI parts: text, image_url, ...).
        tool_calls: the calls of an AI message.
        tool_call_id: the call a tool message answers.
        name: the sender name (LangChain counts it).
        provider: `response_metadata["model_provider"]` of an AI message.
        total_tokens: `usage_metadata["total_tokens"]` of an AI message.
    """

    kind: LCKind
    content: str | tuple[Wire, ...] = ""
    tool_calls: tuple[LCCall, ...] = ()
    tool_call_id: str = ""
    name: str | None = None
    provider: str | None = None
    total_tokens: int | None = None

    @property
    def role(self) -> str:
        """The OpenAI role."""
        return ROLES[self.kind]

    def first_text(self) -> str | None:
        """The text `trim_messages` splits: the string content, or the first text block."""
        if isinstance(self.content, str):
            return self.content
        for block in self.content:
            if block.get("type") == "text":
                return str(block.get("text", ""))
        return None


def from_wire(wire: Wire, name: str | None = None) -> LCMessage:
    """The LangChain message for one OpenAI message, sent by `name`."""
    kind = _KINDS[wire["role"]]
    raw = wire.get("content")
    content: str | tuple[Wire, ...] = (
        raw if isinstance(raw, str) else tuple(raw) if isinstance(raw, list) else ""
    )
    calls = tuple(
        LCCall(name=c["function"]["name"], args=c["function"]["arguments"], id=c["id"])
        for c in wire.get("tool_calls") or ()
    )
    return LCMessage(
        kind=kind, content=content, tool_calls=calls, tool_call_id=wire.get("tool_call_id", ""), name=name
    )


def lc_view(messages: Sequence[Message]) -> tuple[LCMessage, ...]:
    """The LangChain history of a stored context: a tool message is named after its tool (as
    LangChain's tool node names it); nothing else has a name.

    Each stored message's part is its own (`to_openai` and `view_units` take the messages one
    by one), so it is worked out once per message object, and the views of the histories last
    read are kept (`LeadingConcat`): a step costs the parts of the messages that changed."""
    return _lc_view(messages)


def _lc_part(message: Message, wire: Wire, unit: ViewUnit) -> LCMessage:
    if unit.kind == "result":
        return from_wire(wire, getattr(message.blocks[unit.blocks[0]], "name", None))
    return from_wire(wire)


lc_of = IdentityMemo[Message, tuple[LCMessage, ...]](ViewParts(_lc_part))
"""`lc_of(message)`: one stored message's part of `lc_view`, read once per message object (a
reply that grew, past what it gained)."""
_lc_view = LeadingConcat[Message, LCMessage](lambda message, _at, _before: lc_of(message))


def lc_arguments(call: ToolCallBlock) -> str:
    r"""A call's arguments as every later request of LangChain's agent writes them.

    An OpenAI-compatible chat model integration parses the model's text with langchain-core's
    `parse_tool_call` (JSON, control characters allowed in strings; an empty text, or a value
    that is false, is `{}`) into `AIMessage.tool_calls[].args`, and langchain-core's OpenAI form
    writes that object back with `json.dumps(args, ensure_ascii=False)`: `", "` and `": "`,
    non-ASCII as is, numbers as Python writes them, a duplicated key once (its last value).

    >>> lc_arguments(ToolCallBlock(id="c1", name="t", input=' {"q" : "\\u6570", "k":1e3, "k":1.50} '))
    '{"q": "数", "k": 1.5}'

    Raises:
        ValueError: arguments LangChain holds as no call (see `lc_answer`), naming the call.
    """
    try:
        parsed = _PARSER.decode(call.input) if call.input else {}
    except json.JSONDecodeError:
        raise ValueError(
            f"call {call.id!r} ({call.name}): its arguments are not JSON; LangChain keeps such a call "
            "as an invalid tool call, which its agent does not run, and the lab does not model that"
        ) from None
    if parsed and not isinstance(parsed, dict):
        raise ValueError(
            f"call {call.id!r} ({call.name}): its arguments are JSON but not an object; LangChain's "
            "AI message holds only object arguments, so the chat model fails on such an answer"
        )
    return _WRITER.encode(parsed or {})


_PARSER = json.JSONDecoder(strict=False)
"""`json.loads(text, strict=False)`'s decoder, made once: `loads` makes one at every call given an
option (a byte-order mark, which `loads` refuses first, fails the decode alike)."""
_WRITER = json.JSONEncoder(ensure_ascii=False)
"""`json.dumps(value, ensure_ascii=False)`'s encoder, made once."""


def lc_answer(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """An answer as LangChain's agent keeps it: every answer is an AI message in the state, an
    empty one (no text, no call) an AI message with empty content, sent and counted in every
    later request (an empty text block, which the OpenAI view sends as `""`).

    Each call's arguments are kept as `lc_arguments` writes them, so every request sends and
    every counter reads them as LangChain does; a call written so already is the same object.
    Arguments that are not JSON, or JSON other than an object, fail the run there, naming the
    call: LangChain's chat model raises on the second; the first it keeps as an invalid tool
    call, never run, answered in each request by an error text its state does not hold (a
    declared deviation).

    A model's thinking is left out: an OpenAI-compatible chat model's `reasoning_content` is kept
    in the AI message's `additional_kwargs`, which no later request carries (the OpenAI form is
    the content and the calls), `count_tokens_approximately` does not read, and the summary
    prompt's transcript (`get_buffer_string` of a text content) does not show; an answer of
    thinking alone is an AI message with empty content."""
    if any(isinstance(b, ThinkingBlock) for b in blocks):
        blocks = tuple(b for b in blocks if not isinstance(b, ThinkingBlock))
    if not blocks:
        return (TextBlock(text=""),)
    return tuple(_kept_call(b) if isinstance(b, ToolCallBlock) else b for b in blocks)


def _kept_call(call: ToolCallBlock) -> ToolCallBlock:
    written = lc_arguments(call)
    return call if written == call.input else ToolCallBlock(id=call.id, name=call.name, input=written)


Counter = Callable[[Sequence[LCMessage]], int]


def split_lines(text: str) -> list[str]:
    """LangChain's default text splitter: lines, each keeping its newline.

    >>> split_lines("a\\nb\\n")
    ['a\\n', 'b\\n', '']
    """
    pieces = text.split("\n")
    return [p + "\n" for p in pieces[:-1]] + pieces[-1:]


def _with_text(message: LCMessage, text: str) -> LCMessage:
    return replace(message, content=text)


def _partial(message: LCMessage, kept: list[LCMessage], limit: int, counter: Counter) -> LCMessage | None:
    """The boundary message cut to what fits, or None (`_first_max_tokens`' partial step, "last")."""
    if not isinstance(message.content, str):
        blocks = list(reversed(message.content))
        for _ in range(1, len(blocks)):
            blocks = blocks[:-1]
            candidate = replace(message, content=tuple(blocks))
            if counter([*kept, candidate]) <= limit:
                return replace(message, content=tuple(reversed(blocks)))
        base = replace(message, content=tuple(blocks))  # what is left of it, reversed
        text = base.first_text()
    else:
        text, base = message.content, message
    if not text:
        return None
    pieces = list(reversed(split_lines(text)))
    used = counter(kept)
    left, right = 0, len(pieces)
    for _ in range(len(pieces).bit_length()):
        if left >= right:
            break
        mid = (left + right + 1) // 2
        if used + counter([_with_text(base, "".join(pieces[:mid]))]) <= limit:
            left = mid
        else:
            right = mid - 1
    if left == 0:
        return None
    return _with_text(base, "".join(reversed(pieces[:left])))


def trim_last(messages: Sequence[LCMessage], limit: int, counter: Counter) -> tuple[LCMessage, ...]:
    """The last messages within `limit` tokens, starting on a human message (module invariants).

    >>> human, ai = LCMessage(kind="human", content="q" * 40), LCMessage(kind="ai", content="a")
    >>> quarter = lambda messages: sum(len(str(m.content)) // 4 for m in messages)
    >>> [m.kind for m in trim_last([human, ai], 1000, quarter)]
    ['human', 'ai']
    >>> trim_last([human, ai], 8, quarter)
    ()
    """
    rest = list(messages)
    system = None
    if rest and rest[0].kind == "system":
        system, rest = rest[0], rest[1:]
    budget = limit if system is None else max(0, limit - counter([system]))
    chosen = _first_within(rest[::-1], budget, counter)
    out = tuple(chosen[::-1])
    return out if system is None else (system, *out)


def _first_within(messages: list[LCMessage], limit: int, counter: Counter) -> list[LCMessage]:
    """`_first_max_tokens(partial_strategy="last", end_on="human")` on the reversed history."""
    if not messages:
        return messages
    if counter(messages) <= limit:
        return _end_on_human(messages, len(messages))
    left, right = 0, len(messages)
    for _ in range(len(messages).bit_length()):
        if left >= right:
            break
        mid = (left + right + 1) // 2
        if counter(messages[:mid]) <= limit:
            left = mid
        else:
            right = mid - 1
    count = left
    if count < len(messages):
        cut = _partial(messages[count], messages[:count], limit, counter)
        if cut is not None:
            messages = [*messages[:count], cut]
            count += 1
    return _end_on_human(messages, count)


def _end_on_human(messages: list[LCMessage], count: int) -> list[LCMessage]:
    for _ in range(count):
        if count > 0 and messages[count - 1].kind != "human":
            count -= 1
        else:
            break
    return messages[:count]


def xml_transcript(messages: Sequence[LCMessage]) -> str:
    """`get_buffer_string(messages, format="xml")` for text, tool-call and media-URL content (an
    OpenAI `image_url` part, a standard `image`, `audio` or `video` block)."""
    return "\n".join(_xml_entry(m) for m in messages)


def _xml_part(block: Wire) -> str | None:
    kind = block.get("type", "")
    if kind == "text":
        text = str(block.get("text", ""))
        return escape(text) if text else None
    if kind == "image_url":
        url = str((block.get("image_url") or {}).get("url", ""))
        return None if not url or url.startswith("data:") else f"<image url={quoteattr(url)} />"
    if kind in {"image", "audio", "video"} and not block.get("base64"):  # a standard media block
        url = str(block.get("url") or "")
        return None if not url or url.startswith("data:") else f"<{kind} url={quoteattr(url)} />"
    return None


def _display_id(call_id: str) -> str:
    if len(call_id) > TOOL_CALL_ID_DISPLAY_LIMIT:
        return f"{call_id[:TOOL_CALL_ID_DISPLAY_LIMIT]}..."
    return call_id


def _xml_entry(message: LCMessage) -> str:
    kind = quoteattr(message.kind)
    if isinstance(message.content, str):
        parts = [escape(message.content)] if message.content else []
    else:
        parts = [p for b in message.content if (p := _xml_part(b))]
    if message.kind == "ai" and message.tool_calls:
        lines = [f"<message type={kind}>"]
        if parts:
            lines.append(f"  <content>{' '.join(parts)}</content>")
        for call in message.tool_calls:
            args = escape(json.dumps(call.arguments(), ensure_ascii=False))
            shown = quoteattr(_display_id(call.id))
            lines.append(f"  <tool_call id={shown} name={quoteattr(call.name)}>{args}</tool_call>")
        lines.append("</message>")
        return "\n".join(lines)
    return f"<message type={kind}>{' '.join(parts)}</message>"
