"""Views of a request in provider formats: `to_openai`, `to_anthropic`, and back `from_openai`.

Invariants:
- `to_openai` yields what an OpenAI-compatible chat endpoint would receive for the stored
  messages, split the way AgentScope's formatter splits them: inside an assistant message, text
  and calls accumulate into one assistant message; a tool result becomes a `tool` message
  (flushing what accumulated); a hint becomes a standalone user message at its place; images a
  tool returned follow the batch's tool messages as one user message; thinking is dropped, unless
  its block names the field it is sent in (`ThinkingBlock.wire_field`): then the assistant
  message it belongs to carries it there (the thinking of one message joined), and a message of
  such thinking alone is still not sent.
- `to_anthropic` yields `(system, messages)` the Messages API accepts in form: strictly
  alternating roles, no empty turn or blank text, tool results and user text sharing user turns
  (results first), calls as `tool_use` blocks (input always an object, and strict JSON: no
  `NaN` or `Infinity`) of assistant turns, every call id one the API takes (`anthropic_id`).
- `from_openai(to_openai(x))` keeps every text, call and result in order (see `events`); thinking
  is dropped and hints come back as user text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Literal, assert_never

from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    HintBlock,
    Part,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.memo import Closing, LeadingScan
from ctxlab.core.messages.message import Message

Wire = dict[str, Any]
REASONING_FIELD = "reasoning_content"
"""The field of an assistant message OpenAI-compatible chat endpoints (DeepSeek, Kimi) return the
model's reasoning in, and the frameworks that send it back send it in."""
WireName = Literal["openai", "anthropic"]  # which API's form a request is recorded in


def _data_part(block: DataBlock) -> Wire:
    url = block.source if block.kind == "url" else f"data:{block.media_type};base64,{block.source}"
    if block.is_image:
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "file", "file": {"file_data": url, "media_type": block.media_type}}


def wire_content(parts: Sequence[Part]) -> str | list[Wire]:
    """A lone text is sent as a string; anything else as a list of parts."""
    if len(parts) == 1 and isinstance(parts[0], TextBlock):
        return parts[0].text
    return [{"type": "text", "text": p.text} if isinstance(p, TextBlock) else _data_part(p) for p in parts]


def _call_wire(call: ToolCallBlock) -> Wire:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.input},
    }


WireCarry = tuple[tuple[Part | ThinkingBlock, ...], tuple[ToolCallBlock, ...], tuple[Part, ...]]
"""What `to_openai_one` carries from block to block (a plain tuple: made at every block): the
parts (and thinking sent in a field) and calls of the message being built, and the images of the
batch of results not yet sent."""

NO_WIRE: WireCarry = ((), (), ())
"""The carry before a message's first block."""


def flushed(role: str, parts: Sequence[Part | ThinkingBlock], calls: Sequence[ToolCallBlock]) -> list[Wire]:
    """The message the accumulated parts and calls make (none when there are none), with the
    thinking sent in a field among `parts` in that field."""
    shown = [p for p in parts if not isinstance(p, ThinkingBlock)]
    if not shown and not calls:
        return []
    wire: Wire = {"role": role, "content": wire_content(shown) if shown else None}
    if calls:
        wire["tool_calls"] = [_call_wire(c) for c in calls]
    if len(shown) < len(parts):
        for block in parts:
            if isinstance(block, ThinkingBlock) and block.wire_field:
                wire[block.wire_field] = wire.get(block.wire_field, "") + block.thinking
    return [wire]


def wire_step(carry: WireCarry, block: Block, before: int, role: str) -> tuple[list[Wire], WireCarry]:
    """The OpenAI messages `block` of a message of `role` completes, and the carry after it
    (`before`, what a `LeadingScan` step is given, is not read): a reader of a message's view
    that walks its blocks itself (`wire_tail` ends the walk)."""
    parts, calls, media = carry
    out: list[Wire] = []
    if media and not isinstance(block, ToolResultBlock):
        out.append({"role": "user", "content": wire_content(media)})
        media = ()
    match block:
        case TextBlock() | DataBlock():
            parts = (*parts, block)
        case ThinkingBlock():
            if block.wire_field:
                parts = (*parts, block)
        case ToolCallBlock():
            calls = (*calls, block)
        case HintBlock():
            out += flushed(role, parts, calls)
            parts, calls = (), ()
            hint = (TextBlock(text=block.hint),) if isinstance(block.hint, str) else block.hint
            if hint:
                out.append({"role": "user", "content": wire_content(hint)})
        case ToolResultBlock():
            out += flushed(role, parts, calls)
            parts, calls = (), ()
            out.append(tool_wire(block))
            media = (*media, *(p for p in block.output if isinstance(p, DataBlock)))
        case _:
            assert_never(block)
    return out, (parts, calls, media)


_wire_scan = LeadingScan[Block, WireCarry, Wire](wire_step, anywhere=True)


def tool_wire(result: ToolResultBlock) -> Wire:
    """The `tool` message a result becomes (its texts, as a list of parts when it is `listed`;
    the images it returned follow the batch)."""
    texts = [p for p in result.output if isinstance(p, TextBlock)]
    content: str | list[Wire] = wire_content(texts) if texts else ""
    if result.listed and isinstance(content, str) and texts:
        content = [{"type": "text", "text": content}]
    return {"role": "tool", "tool_call_id": result.id, "content": content}


def to_openai_one(message: Message) -> list[Wire]:
    """The OpenAI chat messages one stored message becomes (each stored message on its own).

    A message of `RESUMED_BLOCKS` blocks or more resumes an earlier read of the blocks it begins
    with (`LeadingScan`): the messages it shares with that read are the same objects, which no
    reader of a view changes.
    """
    out, carry = _wire_scan.walk(message.blocks, NO_WIRE, message.role)
    return out + wire_tail(carry, message.role)


def openai_one(message: Message) -> tuple[Wire, ...]:
    """`to_openai_one` as a tuple. A long message's (`RESUMED_BLOCKS` blocks or more) is noted
    (`LeadingScan.finished`) as sharing its leading messages with the tuple of the earlier
    message whose read it resumed, so a meter that kept that one finds them without comparing."""
    return _wire_scan.finished(message.blocks, NO_WIRE, partial(_open_wire, message.role), message.role)


def _open_wire(role: str, carry: WireCarry, done: Sequence[Wire]) -> Closing[Wire]:
    return len(done), wire_tail(carry, role)


def wire_tail(carry: WireCarry, role: str) -> list[Wire]:
    """The OpenAI messages still open after a message's last block (`carry`, from `wire_step`)."""
    parts, calls, media = carry
    out: list[Wire] = [{"role": "user", "content": wire_content(media)}] if media else []
    return out + flushed(role, parts, calls)


def to_openai(messages: Sequence[Message]) -> list[Wire]:
    """The OpenAI chat messages a provider receives for `messages`."""
    return [wire for message in messages for wire in to_openai_one(message)]


def _anthropic_blocks(wire: Mapping[str, Any]) -> Iterator[Wire]:
    """Anthropic content blocks for one OpenAI message."""
    if wire["role"] == "tool":
        yield {
            "type": "tool_result",
            "tool_use_id": anthropic_id(wire["tool_call_id"]),
            "content": _wire_text(wire.get("content")),
        }
        return
    yield from _anthropic_content(wire.get("content"))
    for call in wire.get("tool_calls") or ():
        yield {
            "type": "tool_use",
            "id": anthropic_id(call["id"]),
            "name": call["function"]["name"],
            "input": _arguments(call["function"]["arguments"]),
        }


_ANTHROPIC_ID = re.compile(r"[A-Za-z0-9_-]+")
_NOT_IN_ID = re.compile(r"[^A-Za-z0-9_-]")


def anthropic_id(call_id: str) -> str:
    """A call id as the Messages API takes it. The API refuses a `tool_use` id or `tool_use_id`
    outside `^[a-zA-Z0-9_-]+$` ("String should match pattern"), which ids from other servers
    break (`write_todos:14`, `functions.read.0`). Such an id is sent with every other character
    as `_`, then `_` and the first 8 hex digits of its SHA-256: a function of the id alone, so a
    call and its result keep one id in every request. A valid id is sent as it is; a changed
    one ends in a digest of the id it stands for, so ids that differ stay apart (short of an
    id written to equal another's changed form, digest and all).

    >>> anthropic_id("toolu_01A-b"), anthropic_id("write_todos:14")
    ('toolu_01A-b', 'write_todos_14_4e9c0ca5')
    """
    if _ANTHROPIC_ID.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{_NOT_IN_ID.sub('_', call_id)}_{digest}"


def blank(text: str) -> bool:
    """Whether a text is empty or all whitespace: the Messages API refuses such a text block
    ("text content blocks must contain non-whitespace text"), so the Anthropic view leaves it out."""
    return not text or text.isspace()


def _anthropic_content(content: object) -> Iterator[Wire]:
    """Text, image and document blocks; blank texts are left out (the API rejects them)."""
    if isinstance(content, str):
        if not blank(content):
            yield {"type": "text", "text": content}
        return
    for part in content if isinstance(content, list) else ():
        if part.get("type") == "text":
            if not blank(part["text"]):
                yield {"type": "text", "text": part["text"]}
        elif part.get("type") == "image_url":
            yield {"type": "image", "source": _source(part["image_url"]["url"])}
        else:
            yield {"type": "document", "source": _source(str(part.get("file", {}).get("file_data", "")))}


def _source(url: str) -> Wire:
    """An Anthropic source: a `data:` URL becomes base64 data, anything else stays a URL."""
    head, comma, data = url.partition(",")
    if url.startswith("data:") and comma and head.endswith(";base64"):
        return {"type": "base64", "media_type": head[5 : -len(";base64")], "data": data}
    return {"type": "url", "url": url}


def _arguments(raw: str) -> dict[str, object]:
    """A call's input object; arguments that are not a JSON object are kept whole under `raw`.
    They are read as strict JSON: `NaN`, `Infinity` and `-Infinity` (which Python's `json.dumps`
    writes, and a transcript may hold) are not JSON, and an input holding one would make the
    request invalid JSON, so such arguments are kept whole under `raw` too, as the agent wrote
    them."""
    try:
        value = json.loads(raw, parse_constant=_not_json)
    except ValueError:  # json.JSONDecodeError, or a constant strict JSON forbids
        return {"raw": raw}
    return value if isinstance(value, dict) else {"raw": raw}


def _not_json(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


def to_anthropic(messages: Sequence[Message]) -> tuple[str, list[Wire]]:
    """`(system, messages)` as the Anthropic Messages API receives them (see `anthropic_of_openai`)."""
    return anthropic_of_openai(to_openai(messages))


def anthropic_of_openai(wires: Sequence[Mapping[str, Any]]) -> tuple[str, list[Wire]]:
    """`(system, messages)` of the Anthropic Messages API for a request's OpenAI messages.

    System messages become the system text; a message with no Anthropic block (only blank
    texts) is left out; consecutive turns of one role merge (as the API itself merges them);
    within a user turn, tool results come before everything else, in their order.

    Invariants: roles alternate; every turn has a block; `tool_result` blocks lead their user
    turn. Whether every `tool_use` is answered in the next user turn is the `anthropic` rule's
    question (`protocol.anthropic_violations`), not something a view can repair.
    """
    system: list[str] = []
    turns: list[Wire] = []
    for wire in wires:
        if wire["role"] == "system":
            system.append(_wire_text(wire.get("content")))
            continue
        role = "assistant" if wire["role"] == "assistant" else "user"
        blocks = list(_anthropic_blocks(wire))
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            turn["content"].sort(key=lambda b: b["type"] != "tool_result")
    return "\n".join(system), turns


def anthropic_tool(openai_tool: Mapping[str, Any]) -> Wire:
    """An OpenAI `{"type": "function", ...}` tool as the Anthropic API's tool definition."""
    function = openai_tool["function"]
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "input_schema": function.get("parameters", {"type": "object"}),
    }


def _wire_text(content: object) -> str:
    """The text of an OpenAI content field (string, list of parts, or None)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return ""


def _wire_parts(content: object) -> tuple[Part, ...]:
    if isinstance(content, str):
        return (TextBlock(text=content),) if content else ()
    parts: list[Part] = []
    for part in content if isinstance(content, list) else ():
        if part.get("type") == "text":
            parts.append(TextBlock(text=part["text"]))
        elif part.get("type") == "image_url":
            parts.append(DataBlock(media_type="image/*", source=part["image_url"]["url"]))
    return tuple(parts)


def from_openai(wires: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Stored messages for OpenAI chat messages.

    Each OpenAI message becomes one stored message; a `tool` message becomes an assistant
    message holding one result. Hints cannot be told from user text and come back as user text.
    An assistant message's `reasoning_content` comes back as thinking sent in that field, ahead
    of its content.
    """
    names: dict[str, str] = {}
    out: list[Message] = []
    for wire in wires:
        role = wire.get("role")
        if role == "tool":
            call_id = str(wire.get("tool_call_id", ""))
            output = _wire_parts(wire.get("content"))
            result = ToolResultBlock(id=call_id, name=names.get(call_id, ""), output=output)
            out.append(Message(role="assistant", blocks=(result,)))
            continue
        blocks: list[Block] = list(_wire_parts(wire.get("content")))
        reasoning = wire.get("reasoning_content") if role == "assistant" else None
        if isinstance(reasoning, str) and reasoning:
            blocks.insert(0, ThinkingBlock(thinking=reasoning, wire_field=REASONING_FIELD))
        for call in wire.get("tool_calls") or ():
            function = call.get("function", {})
            names[str(call.get("id"))] = str(function.get("name", ""))
            blocks.append(
                ToolCallBlock(
                    id=str(call.get("id")),
                    name=str(function.get("name", "")),
                    input=str(function.get("arguments", "")),
                )
            )
        stored_role = role if role in ("system", "user", "assistant") else "user"
        out.append(Message(role=stored_role, blocks=tuple(blocks)))  # type: ignore[arg-type]
    return out


def events(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """The order-relevant facts of `messages`: texts, calls and results (for round trips).

    In order, except that the texts and calls one provider message carries are listed texts
    first: an OpenAI assistant message has one content and one list of calls, so a text that
    followed a call in the stored reply arrives before it. Thinking is omitted (it has no
    OpenAI field); hints appear as text; empty texts, which no provider sees, are omitted.
    """
    facts: list[tuple[str, str]] = []
    for message in messages:
        texts: list[tuple[str, str]] = []
        calls: list[tuple[str, str]] = []
        for block in message.blocks:
            match block:
                case TextBlock(text=text):
                    texts.append(("text", text))
                case ToolCallBlock():
                    calls.append(("call", f"{block.id}:{block.name}:{block.input}"))
                case HintBlock() | ToolResultBlock():
                    facts += texts + calls + _standalone_facts(block)
                    texts, calls = [], []
                case ThinkingBlock() | DataBlock():
                    pass
                case _:
                    assert_never(block)
        facts += texts + calls
    return [fact for fact in facts if fact != ("text", "")]


def _standalone_facts(block: HintBlock | ToolResultBlock) -> list[tuple[str, str]]:
    """A hint or a result: each becomes a provider message of its own."""
    if isinstance(block, HintBlock):
        return [("text", p.text) for p in _hint_texts(block)]
    return [("result", block.id), *(("text", p.text) for p in block.output if isinstance(p, TextBlock))]


def _hint_texts(block: HintBlock) -> tuple[TextBlock, ...]:
    if isinstance(block.hint, str):
        return (TextBlock(text=block.hint),)
    return tuple(p for p in block.hint if isinstance(p, TextBlock))
