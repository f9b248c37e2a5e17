"""LangGraph / LangChain threads (such as deer-flow's thread files), as OpenAI chat messages.

A thread is a JSON object whose `values.messages` (or `messages`) lists serialised LangChain
messages, or a bare list of them: `type` `human`, `ai`, `tool` or `system` (or the
`{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}` form), `content` a
string or a list of parts, `tool_calls` (`name`, `args`, `id`) on AI messages, `tool_call_id` on
tool messages.

Mapping rules:
- `human` is a user message, `system` a system message (one after the first message is user text
  at its place, as for every format), `ai` an assistant message with its tool calls (`args`
  JSON-encoded), `tool` the result of its call (an error result when its `status` is `error`).
- Text parts join the text; image parts (`image_url`, or `image` with a URL or base64 data) are
  image parts; `thinking`/`reasoning` parts and `additional_kwargs.reasoning_content` are
  reasoning, kept apart from the text.
- `tool_use` / `tool_call` content parts (how Anthropic models' AI messages carry their calls)
  are the calls `tool_calls` lists; they are read as the calls only when `tool_calls` is empty.
- Other content parts (audio, files) are skipped and counted.
- `invalid_tool_calls` (calls the model wrote but that could not be parsed) and `remove`
  markers are skipped and counted.
"""

from __future__ import annotations

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
    "remove": "remove",
    "RemoveMessage": "remove",
}


def _unwrap(message: object) -> tuple[str | None, Mapping[str, Any]]:
    """A message's kind and fields, from either serialised form."""
    if not isinstance(message, Mapping):
        return None, {}
    if message.get("lc") == 1 and isinstance(message.get("kwargs"), Mapping):
        ident = message.get("id")
        name = ident[-1] if isinstance(ident, list) and ident else None
        return KINDS.get(str(name)), message["kwargs"]
    return KINDS.get(str(message.get("type"))), message


def thread_messages(value: object) -> list[Any] | None:
    """The serialised messages of a thread, or None when `value` is not one."""
    messages = field_of(value, "values", "messages")
    if messages is None and isinstance(value, Mapping):
        messages = value.get("messages")
    if messages is None and isinstance(value, list):
        messages = value
    if not isinstance(messages, list) or not messages:
        return None
    return messages if all(_unwrap(m)[0] is not None for m in messages[:5]) else None


def read_langgraph(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of a thread (see the module docstring)."""
    for number, value in entries:
        messages = thread_messages(value)
        if messages is None:
            raise report.error(
                number, "not a LangGraph thread: expected values.messages of LangChain messages"
            )
        calls = Calls(report)
        for index, message in enumerate(messages):
            kind, fields = _unwrap(message)
            body, reasoning, used = _parts(fields.get("content"), report)
            if kind == "human":
                yield user(body)
            elif kind == "system":
                yield system(text_only(body, report, "system"))
            elif kind == "ai":
                reasoning = reasoning or text_of(field_of(fields, "additional_kwargs", "reasoning_content"))
                declared = fields.get("tool_calls") or used
                listed = [
                    call(calls.declare(str(item.get("id"))), str(item.get("name")), _arguments(item))
                    for item in declared or []
                    if isinstance(item, Mapping)
                ]
                for _ in fields.get("invalid_tool_calls") or []:
                    report.skip("invalid_tool_calls")
                yield assistant(text_only(body, report, "assistant"), listed, reasoning)
            elif kind == "tool":
                error = fields.get("status") == "error"
                yield tool(calls.answer(fields.get("tool_call_id"), number), body, error=error)
            elif kind == "remove":
                report.skip("remove")
            else:
                raise report.error(
                    number, f"message {index}: unknown message type {field_of(message, 'type')!r}"
                )


def _arguments(item: Mapping[str, Any]) -> object:
    """A call's arguments: `args` of a LangChain tool call, `input` of a `tool_use` part."""
    return item.get("args") or item.get("input") or {}


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
            reasoning.append(text_of(field_of(item, kind)) or text_of(field_of(item, "text")))
        elif kind == "image_url":
            url = field_of(item, "image_url")
            parts.append(image_part(str(field_of(url, "url") if isinstance(url, Mapping) else url)))
        elif kind == "image":
            data = field_of(item, "data") or field_of(item, "base64")
            url = field_of(item, "url")
            if isinstance(data, str):
                parts.append(image_part(data_url(str(field_of(item, "mime_type") or "image/png"), data)))
            elif isinstance(url, str):
                parts.append(image_part(url))
        elif kind in {"tool_use", "tool_call"} and isinstance(item, Mapping):
            used.append(item)
        else:
            report.skip(f"content part {kind!r}")
    return content(parts), "\n\n".join(r for r in reasoning if r), used
