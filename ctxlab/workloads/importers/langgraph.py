"""LangGraph / LangChain threads (such as deer-flow's thread files), as OpenAI chat messages.

A thread is a JSON object whose `values.messages` (or `messages`) lists serialised LangChain
messages, or a bare list of them: `type` `human`, `ai`, `tool`, `system`, `chat` or `function`
(or `dumpd`'s `{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`
form, or `messages_to_dict`'s `{"type": "ai", "data": {...}}`), `content` a string or a list of
parts, `tool_calls` (`name`, `args`, `id`) on AI messages, `tool_call_id` on tool messages. A
checkpoint (`channel_values.messages`, also under `checkpoint`) is read the same way; a list of
thread states (a thread's history, newest first as LangGraph lists it) is read from its first
state, the others counted; a JSONL file of several threads, one a line, is read from its line
`--session N` (0, the first, unless given), the others counted.

Mapping rules:
- `human` is a user message, `system` a system message (one after the first message is user text
  at its place, as for every format), `ai` an assistant message with its tool calls (`args`
  JSON-encoded), `tool` the result of its call (an error result when its `status` is `error`);
  a `chat` message takes the kind of its `role` (`user`, `assistant`, `system`, `developer`,
  `tool`, `function`); one of another role is an error at its message, as no model API takes it.
- A tool's result that is not message content (an object, a number) is its JSON text, and so is
  each part without a `type` that has no `text` (one that has is that text), and a `json` part's
  `json`: LangChain sends a tool's output that is not message content as its JSON text.
- An AI message's legacy `additional_kwargs.function_call` (OpenAI's function calling, which
  gives the call no id) is a call with the id `function_call_<index of the message>`; a
  `function` message (`FunctionMessage`) is the result of the AI message's call before it, and
  one with no such call is an error at its message.
- Text parts join the text; image parts (`image_url`, or `image` with a URL or base64 data, also
  in an Anthropic `source`) are image parts (one with neither is counted); `thinking` and
  `reasoning` parts (a Responses-API reasoning part's `summary` texts too) and
  `additional_kwargs.reasoning_content` are reasoning, kept apart from the text.
- An AI message's calls are its `tool_calls`; when it has none, its `tool_use` / `tool_call`
  content parts (how Anthropic models' AI messages carry them), else the OpenAI-form calls of
  `additional_kwargs.tool_calls` (what LangChain before `tool_calls` existed kept).
- Other content parts (audio, files) are skipped and counted.
- `invalid_tool_calls` (calls the model wrote but that could not be parsed) are calls, their
  arguments as written, when a tool message answers them; the others are skipped and counted,
  as are `remove` markers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    call,
    content,
    data_url,
    field_of,
    image_part,
    session_entry,
    system,
    text_of,
    text_only,
    text_part,
    tool,
    user,
)

KINDS = {
    "human": "human",
    "HumanMessage": "human",
    "HumanMessageChunk": "human",
    "ai": "ai",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "tool": "tool",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "system": "system",
    "SystemMessage": "system",
    "SystemMessageChunk": "system",
    "chat": "chat",
    "ChatMessage": "chat",
    "ChatMessageChunk": "chat",
    "function": "function",
    "FunctionMessage": "function",
    "FunctionMessageChunk": "function",
    "remove": "remove",
    "RemoveMessage": "remove",
}


ROLES = {
    "user": "human",
    "human": "human",
    "assistant": "ai",
    "ai": "ai",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "function",
}
"""The kind of a `chat` message, by its `role` (a role not here keeps the kind `chat`, refused)."""


def _unwrap(message: object) -> tuple[str | None, Mapping[str, Any]]:
    """A message's kind and fields, from either serialised form."""
    if not isinstance(message, Mapping):
        return None, {}
    fields: Mapping[str, Any] = message
    kind = KINDS.get(str(message.get("type")))
    if message.get("lc") == 1 and isinstance(message.get("kwargs"), Mapping):
        ident = message.get("id")
        fields = message["kwargs"]
        kind = KINDS.get(str(ident[-1] if isinstance(ident, list) and ident else None))
    elif kind is not None and "content" not in message and isinstance(message.get("data"), Mapping):
        fields = message["data"]  # messages_to_dict's form, {"type", "data"}
    if kind == "chat":
        return ROLES.get(str(fields.get("role")), "chat"), fields
    if kind == "function" and not isinstance(fields.get("name"), str):
        return None, fields  # a FunctionMessage names its function; a tool schema's `type` is not one
    return kind, fields


def _state(value: object) -> object:
    """The state holding a thread's messages: a checkpoint's channel values, or the newest
    state of a history list."""
    if isinstance(value, list) and value and all(isinstance(v, Mapping) and "values" in v for v in value):
        value = value[0]
    for path in (("checkpoint", "channel_values"), ("channel_values",), ("values",)):
        found = field_of(value, *path)
        if found is not None:
            return found
    return value


def thread_messages(value: object) -> list[Any] | None:
    """The serialised messages of a thread, or None when `value` is not one."""
    state = _state(value)
    messages = state.get("messages") if isinstance(state, Mapping) else state
    if not isinstance(messages, list) or not messages:
        return None
    return messages if all(_unwrap(m)[0] is not None for m in messages[:5]) else None


def read_langgraph(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of a thread (see the module docstring)."""
    for number, value in session_entry(entries, report, "further thread"):
        messages = thread_messages(value)
        if messages is None:
            raise report.error(
                number, "not a LangGraph thread: expected values.messages of LangChain messages"
            )
        if isinstance(value, list) and messages is not value:
            for _ in value[1:]:
                report.skip("earlier thread state")
        yield from _messages(messages, number, report)


def _messages(messages: list[Any], number: int, report: Report) -> Iterator[Wire]:
    """The thread's messages in order (the module docstring's rules); every error is at the
    line of the thread's entry, `number`, naming the message by its index."""
    calls = Calls(report)
    answered = {str(_unwrap(m)[1].get("tool_call_id")) for m in messages if _unwrap(m)[0] == "tool"}
    function: str | None = None  # the id of the last AI message's legacy function call, unanswered
    for index, message in report.each(messages):
        kind, fields = _unwrap(message)
        if kind == "tool":
            error = fields.get("status") == "error"
            call_id = calls.answer(fields.get("tool_call_id"), number, key="tool_call_id")
            yield tool(call_id, _result(fields.get("content"), report), error=error)
        elif kind == "function":
            call_id = _function_answered(function, fields, f"message {index}", number, report)
            yield tool(call_id, _result(fields.get("content"), report))
            function = None
        elif kind == "ai":
            wire, function = _ai(fields, index, calls, answered, report)
            yield wire
        elif kind in {"human", "system"}:
            body = _parts(fields.get("content"), report)[0]
            yield user(body) if kind == "human" else system(text_only(body, report, "system"))
        elif kind == "remove":
            report.skip("remove")
        elif kind == "chat":
            raise report.error(
                number,
                f"message {index}: a ChatMessage with role {fields.get('role')!r}, which no model API "
                "takes; set its role to user, assistant or system (the one it plays), or remove it",
            )
        else:
            raise report.error(number, f"message {index}: unknown message type {field_of(message, 'type')!r}")


def _ai(
    fields: Mapping[str, Any], index: int, calls: Calls, answered: set[str], report: Report
) -> tuple[Wire, str | None]:
    """An AI message, and the id of its legacy function call (`additional_kwargs.function_call`,
    one call with no id: it gets one from its message's place, `function_call_<index>`), None
    when it has none."""
    body, reasoning, used = _parts(fields.get("content"), report)
    reasoning = reasoning or text_of(field_of(fields, "additional_kwargs", "reasoning_content"))
    listed = [call(calls.declare(i), n, a) for i, n, a in _calls(fields, used, answered, report)]
    function = field_of(fields, "additional_kwargs", "function_call")
    legacy = calls.declare(f"function_call_{index}") if isinstance(function, Mapping) else None
    if legacy is not None:
        listed.append(call(legacy, str(function.get("name")), function.get("arguments") or "{}"))
    return assistant(text_only(body, report, "assistant"), listed, reasoning), legacy


def _function_answered(
    function: str | None, fields: Mapping[str, Any], where: str, number: int, report: Report
) -> str:
    """The id of the call a FunctionMessage (a legacy function's result) answers: the function
    call of the AI message before it.

    Raises:
        TraceError: that AI message made no function call, or its call has its result.
    """
    if function is None:
        raise report.error(
            number,
            f"{where}: a FunctionMessage (the result of function {fields.get('name')!r}) answers no "
            "function call: the AIMessage before it has no additional_kwargs.function_call awaiting "
            "a result; add the call there, or write the result as a ToolMessage with the "
            "tool_call_id of its call",
        )
    return function


def _calls(
    fields: Mapping[str, Any], used: list[Mapping[str, Any]], answered: set[str], report: Report
) -> Iterator[tuple[str, str, object]]:
    """An AI message's calls as (id, name, arguments), in the order of the module docstring."""
    invalid = fields.get("invalid_tool_calls") or []
    # LangChain keeps the raw calls in additional_kwargs too; those it could not parse are
    # the invalid_tool_calls, read below
    legacy = [] if invalid else field_of(fields, "additional_kwargs", "tool_calls")
    for item in fields.get("tool_calls") or used or legacy or []:
        if isinstance(item, Mapping):
            function = item.get("function")
            if isinstance(function, Mapping):
                yield str(item.get("id")), str(function.get("name")), function.get("arguments") or "{}"
            else:
                yield str(item.get("id")), str(item.get("name")), _arguments(item)
    for item in invalid:
        if str(field_of(item, "id")) in answered:
            yield str(item.get("id")), str(field_of(item, "name")), field_of(item, "args") or "{}"
        else:
            report.skip("invalid_tool_calls")


def _arguments(item: Mapping[str, Any]) -> object:
    """A call's arguments: `args` of a LangChain tool call, `input` of a `tool_use` part."""
    return item.get("args") or item.get("input") or {}


def _summary(item: object) -> str:
    """The text of a Responses-API reasoning part's `summary` list."""
    summary = field_of(item, "summary")
    if not isinstance(summary, list):
        return ""
    return "\n\n".join(t for t in (text_of(field_of(p, "text")) for p in summary) if t)


def _image(block: object) -> Wire | None:
    """The image part of an `image` block: its base64 `data` (LangChain's `base64` too) with its
    `mime_type` (an Anthropic source's `media_type`), or its `url`; None when it has neither."""
    data = field_of(block, "data") or field_of(block, "base64")
    url = field_of(block, "url")
    if isinstance(data, str):
        media = field_of(block, "mime_type") or field_of(block, "media_type")
        return image_part(data_url(media if isinstance(media, str) else "image/png", data))
    return image_part(url) if isinstance(url, str) else None


def _result(value: object, report: Report) -> str | list[Wire]:
    """A tool message's content as the tool's result: as `_parts` reads content, but content
    that is not message content (an object, a number, a part without a `type`) is its JSON
    text (a part's `text` where it has one), as LangChain turns a tool's output into a string
    (`json.dumps`) when it is not message content."""
    if isinstance(value, list):
        value = [_result_part(part) for part in value]
    elif value is not None and not isinstance(value, str):
        value = _json_text(value)
    return _parts(value, report)[0]


def _result_part(part: object) -> object:
    """A part of a tool's result: a `json` part is the JSON text of its `json`, another typed
    part (or a string) as it is, an untyped one its `text` or its JSON text."""
    if field_of(part, "type") == "json":
        return _json_text(field_of(part, "json"))
    if isinstance(part, str) or field_of(part, "type") is not None:
        return part
    text = field_of(part, "text")
    return text if isinstance(text, str) else _json_text(part)


def _json_text(value: object) -> str:
    """A JSON value's text as LangChain writes a tool's output (`json.dumps`, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


def _parts(value: object, report: Report) -> tuple[str | list[Wire], str, list[Mapping[str, Any]]]:
    """Content as OpenAI content, the reasoning parts' text, and the call parts."""
    if not isinstance(value, list):
        return text_of(value), "", []
    parts: list[Wire] = []
    reasoning: list[str] = []
    used: list[Mapping[str, Any]] = []
    for item in value:
        if isinstance(item, str):
            parts.append(text_part(item))
            continue
        kind = field_of(item, "type")
        if kind == "text":
            parts.append(text_part(text_of(field_of(item, "text"))))
        elif kind in {"thinking", "reasoning"}:
            reasoning.append(
                text_of(field_of(item, kind)) or text_of(field_of(item, "text")) or _summary(item)
            )
        elif kind == "image_url":
            url = field_of(item, "image_url")
            parts.append(image_part(str(field_of(url, "url") if isinstance(url, Mapping) else url)))
        elif kind == "image":
            image = _image(item) or _image(field_of(item, "source"))
            if image is None:
                report.skip("content part 'image' without its data or URL")
            else:
                parts.append(image)
        elif kind in {"tool_use", "tool_call"} and isinstance(item, Mapping):
            used.append(item)
        else:
            report.skip(f"content part {kind!r}")
    return content(parts), "\n\n".join(r for r in reasoning if r), used
