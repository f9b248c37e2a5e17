"""LlamaIndex chat histories (llama-index-core) as OpenAI chat messages: a `SimpleChatStore`
persisted as JSON (`persist(path)`; also inside a `ChatMemoryBuffer`'s `to_string()`), or
`ChatMessage`s as JSON (a list of them, as `[m.model_dump(mode="json") for m in
memory.get_all()]` gives, or one a line), mapped as the OpenAI integration
(llama-index-llms-openai) sends a history to a chat model.

A store is `{"store": {key: [message, ...]}, "class_name": "SimpleChatStore"}`: each key is one
conversation, and session N is the N-th key in the order the file lists them (the order the store
first wrote to them), counted from 0 across the file's stores. A message is `{role,
additional_kwargs, blocks}`, each block naming its `block_type`; versions before blocks wrote a
`content` string instead.

Mapping rules:
- Roles: `system` and `developer` are system messages; `user`; `assistant` (and `model`,
  `chatbot`, the Gemini and Cohere integrations' names for it); `tool`, a result.
- Text is the message's `text` blocks joined with nothing between, as the integration joins them.
  A user message is its text and images: a `url`, or base64 `image` data with its
  `image_mimetype`, as a `data:` URL.
- An assistant message's `thinking` blocks are its reasoning, never text (the integration does not
  send them). Its calls are its `tool_call` blocks (`tool_call_id`, `tool_name`, `tool_kwargs` an
  object, sent as its JSON, or JSON text); a message without any (written before those blocks)
  has them in `additional_kwargs.tool_calls`, as OpenAI writes calls (`id`, `function.name`,
  `function.arguments`). Current versions write both; the blocks are read, as they are sent.
- A tool message answers the call named by its `additional_kwargs.tool_call_id`, with its text
  (the integration sends a result's text only). A tool that failed is not told apart: the agent
  stores the error's text as the result and nothing marks it, so it replays as a result.
- Counted, not replayed: audio, video, document, cache, citable and citation blocks; an image
  given only by a local `path` (the file is not read) or with no image media type; a medium in a
  message that carries only text (system, assistant, tool); a legacy `function_call` and its
  `function` result (no call id); a message with nothing to send.
- Not read: the agent's system prompt (the agent holds it, not its memory, so none is replayed),
  and every other `additional_kwargs` key. A workflow's `Context.to_dict()` is not read either: it
  leaves the agent's memory out, so it holds no conversation.

Invariants:
- A bare list of messages is recognised when its messages carry `blocks`; messages of the older
  `content` form look like other formats' chat messages, so they are read only with
  `--format llamaindex`.
- A role, block type or field of a shape LlamaIndex never writes is an error at its line (inside a
  document, the message's line); a result must answer a call before it. Another shape of call in
  `additional_kwargs.tool_calls` (an older Anthropic integration's) is such an error, not dropped.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    base64_bytes,
    call,
    chosen_run,
    content,
    data_url,
    image_part,
    one_conversation,
    system,
    text_only,
    text_part,
    tool,
    user,
)

ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "model": "assistant",
    "chatbot": "assistant",
    "tool": "tool",
    "function": "function",
}
"""LlamaIndex's roles, as the replay's."""
COUNTED = frozenset({"audio", "video", "document", "cache", "citable", "citation"})
BLOCKS = COUNTED | {"text", "image", "thinking", "tool_call"}
KEY = "chat key of the store (another session)"
"""What a store's other conversations are counted as."""
EXPECTED = (
    "not a LlamaIndex chat history: expected a persisted SimpleChatStore ({'store': {key: "
    "[messages]}}) or ChatMessage dumps ('role', 'additional_kwargs', 'blocks')"
)


def not_message(value: object) -> str | None:
    """What keeps `value` from being a `ChatMessage` dump, or None when it is one."""
    if not isinstance(value, Mapping):
        return f"is {type(value).__name__}, not an object"
    role = value.get("role")
    if not isinstance(role, str) or role not in ROLES:
        return f"its role is {role!r}; LlamaIndex writes {', '.join(ROLES)}"
    if not isinstance(value.get("additional_kwargs", {}), Mapping):
        return "its 'additional_kwargs' is not an object"
    if "blocks" not in value:
        said = value.get("content")
        return (
            None
            if said is None or isinstance(said, str)
            else "it has no 'blocks', and its content is not text"
        )
    blocks = value["blocks"]
    if not isinstance(blocks, list):
        return f"its blocks are {type(blocks).__name__}, not a list"
    for k, block in enumerate(blocks):
        kind = block.get("block_type") if isinstance(block, Mapping) else None
        if not isinstance(kind, str) or kind not in BLOCKS:
            return f"blocks[{k}] is no block of LlamaIndex's types ({', '.join(sorted(BLOCKS))})"
    return None


def _dumped(value: object) -> bool:
    """Whether `value` carries the keys of a `ChatMessage` dump of the current form."""
    return isinstance(value, Mapping) and "blocks" in value and "additional_kwargs" in value


def _blocked(value: object) -> bool:
    """A message of the current form: `additional_kwargs` and a list of blocks."""
    return _dumped(value) and isinstance(value, Mapping) and not_message(value) is None


def store_of(value: object) -> Mapping[str, Any] | None:
    """The conversations (`store`) of a persisted `SimpleChatStore`, or of the one a
    `ChatMemoryBuffer`'s dump holds; None for anything else."""
    held = value.get("chat_store") if isinstance(value, Mapping) else None
    outer = held if isinstance(held, Mapping) else value
    store = outer.get("store") if isinstance(outer, Mapping) else None
    if not isinstance(store, Mapping) or not isinstance(outer, Mapping):
        return None
    if outer.get("class_name") == "SimpleChatStore":
        return store
    head = [
        m for listed in itertools.islice(store.values(), 5) if isinstance(listed, list) for m in listed[:5]
    ]
    return store if head and all(_blocked(m) for m in head) else None


def is_llamaindex(values: list[object]) -> bool:
    """Whether the first entry is a chat store, or messages of the current form: each of the first
    with a dump's keys, one at least a whole message (one of another shape among them is told when
    it is read). The older form is read only when the format is forced (the module docstring)."""
    first = values[0] if values else None
    if store_of(first) is not None:
        return True
    head = (first if isinstance(first, list) else values)[:5]
    return all(_dumped(m) for m in head) and any(_blocked(m) for m in head)


def read_llamaindex(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of the file's conversation `report.session` (see the module docstring).

    Raises:
        SessionError: a session past 0 of a file of messages, or past the stores' keys.
    """
    first = next(entries, None)
    if first is None:
        return
    rest = itertools.chain([first], entries)
    if store_of(first.value) is not None:
        yield from _stored(rest, report)
        return
    if report.session:
        raise one_conversation(report.source, "a file of LlamaIndex messages", report.session)
    calls = Calls(report)
    for number, value in rest:
        listed = value if isinstance(value, list) else [value]
        for index, message in report.each(listed):
            yield from _message(message, f"message {index}", number, calls)


def _keys(value: object) -> list[Any] | None:
    store = store_of(value)
    return None if store is None else list(store.items())


def _stored(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The chosen key's messages; every other key counted."""
    chosen = ""
    for number, _, (key, listed) in chosen_run(
        entries, report, _keys, kind=KEY, runs="chat keys", expected=EXPECTED
    ):
        chosen, where = key, f"key {key!r}"
        if not isinstance(listed, list):
            raise report.error(number, f"{where}: the store holds {type(listed).__name__}, not a list")
        calls = Calls(report)
        for index, message in report.each(listed):
            yield from _message(message, f"{where}, message {index}", number, calls)
    total = 1 + report.skipped[KEY]
    if total > 1:
        report.notes.append(
            f"chat key {chosen!r} is replayed: session {report.session} of the file's {total} "
            "(counted from 0 in file order)"
        )


# ---------------------------------------------------------------------------------------------
# messages


@dataclass(frozen=True, slots=True)
class _Read:
    """A message's blocks, read: its content parts, reasoning and calls."""

    parts: list[Wire]
    reasoning: list[str]
    calls: list[Wire]


def _message(message: object, where: str, number: int, calls: Calls) -> Iterator[Wire]:
    """The OpenAI chat message of one `ChatMessage` dump (none for one with nothing to send)."""
    report = calls.report
    wrong = not_message(message)
    if wrong is not None:
        raise report.error(number, f"{where} is not a LlamaIndex chat message: {wrong}")
    assert isinstance(message, Mapping)
    role, extra = ROLES[message["role"]], message.get("additional_kwargs") or {}
    if role == "function":
        report.skip("function message (a legacy function result, no call id)")
        return
    read = _blocks(_legacy(message), role, where, number, calls)
    if role == "tool":
        answered = calls.answer(extra.get("tool_call_id"), number, key="additional_kwargs.tool_call_id")
        yield tool(answered, text_only(content(read.parts), report, "tool"))
    elif role == "assistant":
        yield from _assistant(read, extra, where, number, calls)
    elif not read.parts:
        report.skip(f"empty {role} message")
    elif role == "user":
        yield user(_user_body(read.parts))
    else:
        yield system(text_only(content(read.parts), report, "system"))


def _legacy(message: Mapping[str, Any]) -> list[Any]:
    """The blocks of a message; of the older form, its `content` as one text block."""
    if "blocks" in message:
        return list(message["blocks"])
    said = message.get("content")
    return [] if said is None else [{"block_type": "text", "text": said}]


def _user_body(parts: list[Wire]) -> str | list[Wire]:
    """Text alone as one string, as the integration sends it; else the parts."""
    if all(part["type"] == "text" for part in parts):
        return "".join(str(part["text"]) for part in parts)
    return parts


def _assistant(
    read: _Read, extra: Mapping[str, Any], where: str, number: int, calls: Calls
) -> Iterator[Wire]:
    report = calls.report
    made = read.calls or _kwargs_calls(extra, where, number, calls)
    text = text_only(content(read.parts), report, "assistant")
    reasoning = "\n".join(read.reasoning)
    if not text and not made and not reasoning:
        report.skip("empty assistant message")
        return
    yield assistant(text, made, reasoning)


def _blocks(blocks: list[Any], role: str, where: str, number: int, calls: Calls) -> _Read:
    report, read = calls.report, _Read([], [], [])
    for k, block in enumerate(blocks):
        at, kind = f"{where}.blocks[{k}]", block["block_type"]
        if kind == "text":
            read.parts.append(text_part(_text(block, "text", at, number, report)))
        elif kind == "image":
            read.parts.extend(_image(block, at, number, report))
        elif kind in COUNTED:
            report.skip(f"{kind} block in a {role} message")
        elif role != "assistant":
            raise report.error(
                number, f"{at}: a {kind} block in a {role} message; LlamaIndex writes it in an assistant's"
            )
        elif kind == "thinking":
            thought = block.get("content")
            if thought is not None:
                read.reasoning.append(_text(block, "content", at, number, report))
        else:
            read.calls.append(_block_call(block, at, number, calls))
    return read


def _text(block: Mapping[str, Any], key: str, where: str, number: int, report: Report) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise report.error(number, f"{where}: a {block['block_type']} block's {key!r} is not text")
    return value


def _image(block: Mapping[str, Any], where: str, number: int, report: Report) -> list[Wire]:
    """An image block as an image part: its URL, or its base64 data as a `data:` URL."""
    url, data, media = block.get("url"), block.get("image"), block.get("image_mimetype")
    if isinstance(url, str) and url:
        return [image_part(url)]
    if data is not None:
        if base64_bytes(data) is None:
            raise report.error(number, f"{where}: an image block's 'image' is not base64 text")
        if isinstance(media, str) and media.startswith("image/"):
            return [image_part(data_url(media, str(data)))]
        report.skip("image block without an image media type")
        return []
    if isinstance(block.get("path"), str):
        report.skip("image block given by a local path (the file is not read)")
        return []
    raise report.error(number, f"{where}: an image block has no 'url', 'image' or 'path'")


def _block_call(block: Mapping[str, Any], where: str, number: int, calls: Calls) -> Wire:
    report = calls.report
    call_id, name = block.get("tool_call_id"), _text(block, "tool_name", where, number, report)
    if not isinstance(call_id, str) or not call_id:
        raise report.error(
            number, f"{where}: a tool_call block has no 'tool_call_id'; a result could not answer it"
        )
    kwargs = block.get("tool_kwargs", {})
    if isinstance(kwargs, Mapping):
        kwargs = json.dumps(kwargs)  # as the integration encodes them, non-ASCII escaped
    elif not isinstance(kwargs, str):
        raise report.error(number, f"{where}: a tool_call block's 'tool_kwargs' is not an object or text")
    return call(calls.declare(call_id), name, kwargs)


def _kwargs_calls(extra: Mapping[str, Any], where: str, number: int, calls: Calls) -> list[Wire]:
    """The calls an assistant message keeps in `additional_kwargs` (before `tool_call` blocks)."""
    report, listed = calls.report, extra.get("tool_calls")
    if listed is None:
        if "function_call" in extra:
            report.skip("legacy function_call (no call id)")
        return []
    if not isinstance(listed, list):
        raise report.error(number, f"{where}: 'additional_kwargs.tool_calls' is not a list")
    return [
        _kwargs_call(item, f"{where}.additional_kwargs.tool_calls[{k}]", number, calls)
        for k, item in enumerate(listed)
    ]


def _kwargs_call(item: object, where: str, number: int, calls: Calls) -> Wire:
    function = item.get("function") if isinstance(item, Mapping) else None
    call_id = item.get("id") if isinstance(item, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    arguments = function.get("arguments") if isinstance(function, Mapping) else None
    if not (isinstance(call_id, str) and call_id and isinstance(name, str) and isinstance(arguments, str)):
        raise calls.report.error(
            number,
            f"{where} is not an OpenAI tool call ('id', 'function.name', 'function.arguments' as text); "
            "only that shape is read there: write the calls as tool_call blocks",
        )
    return call(calls.declare(call_id), name, arguments)
