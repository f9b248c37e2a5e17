"""Anthropic Messages content (shared with Claude Code logs) and Anthropic Messages API request
logs, as OpenAI chat messages.

A request log is a JSON request, a JSON list of requests, or JSONL with one request a line; a
request may be wrapped as `{"request": {...}, "response": {...}}` (or `body`/`params`). The last
request of the log holds the whole conversation; earlier ones are counted and skipped. A logged
response to that last request is its final assistant message.

Mapping rules (also Claude Code's):
- `system` (a string or text blocks) is the system prompt; `tools` (`name`, `description`,
  `input_schema`) are the tool schemas (server tools without a schema are skipped and counted).
- A user message's `tool_result` blocks are tool messages, in order, before the message's text
  and images (a user message of results alone gives no user message); a result's content is its
  text, or its text and image parts; `is_error` makes it an error result.
- An assistant message's `text` blocks join its text, `tool_use` blocks are its calls (`input`
  JSON-encoded), `thinking` is reasoning (kept apart), `redacted_thinking` is counted and skipped.
- Images (`image` with a base64 or URL source) are image parts; other blocks (documents, server
  tool results) are counted and skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
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
    last_request,
    schema,
    system,
    text_of,
    text_part,
    tool,
    user,
)

WRAPPERS = ("request", "body", "params")


@dataclass(slots=True)
class AssistantParts:
    """An assistant message being assembled from content blocks."""

    texts: list[str] = field(default_factory=list)
    calls: list[Wire] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    def wire(self) -> Wire:
        return assistant("".join(self.texts), self.calls, "\n\n".join(r for r in self.reasoning if r))


def _image(block: Mapping[str, Any]) -> Wire | None:
    source = block.get("source")
    if field_of(source, "type") == "base64":
        return image_part(data_url(str(field_of(source, "media_type")), text_of(field_of(source, "data"))))
    if field_of(source, "type") == "url":
        return image_part(text_of(field_of(source, "url")))
    return None


def add_assistant_blocks(parts: AssistantParts, value: object, calls: Calls, report: Report) -> None:
    """Add an assistant message's content (a string or blocks) to `parts`."""
    if isinstance(value, str):
        parts.texts.append(value)
        return
    for block in value if isinstance(value, list) else []:
        kind = field_of(block, "type")
        if kind == "text":
            parts.texts.append(text_of(block.get("text")))
        elif kind == "tool_use":
            call_id = calls.declare(str(block.get("id")))
            parts.calls.append(call(call_id, str(block.get("name")), block.get("input") or {}))
        elif kind == "thinking":
            parts.reasoning.append(text_of(block.get("thinking")))
        else:
            report.skip(f"assistant block {kind!r}")


def user_blocks(value: object, calls: Calls, report: Report, line: int | None) -> Iterator[Wire]:
    """The tool messages and then the user message of a user message's content."""
    if isinstance(value, str):
        yield user(value)
        return
    parts: list[Wire] = []
    for block in value if isinstance(value, list) else []:
        kind = field_of(block, "type")
        if kind == "tool_result":
            call_id = calls.answer(block.get("tool_use_id"), line)
            yield tool(call_id, _result(block.get("content"), report), error=block.get("is_error") is True)
        elif kind == "text":
            parts.append(text_part(text_of(block.get("text"))))
        elif kind == "image" and (image := _image(block)) is not None:
            parts.append(image)
        else:
            report.skip(f"user block {kind!r}")
    if parts:
        yield user(content(parts))


def _result(value: object, report: Report) -> str | list[Wire]:
    if not isinstance(value, list):
        return text_of(value)
    parts: list[Wire] = []
    for block in value:
        kind = field_of(block, "type")
        if kind == "text":
            parts.append(text_part(text_of(block.get("text"))))
        elif kind == "image" and (image := _image(block)) is not None:
            parts.append(image)
        else:
            report.skip(f"tool result block {kind!r}")
    return content(parts)


def unwrap(value: object) -> tuple[Mapping[str, Any] | None, object]:
    """A logged request and its logged response (None when not logged)."""
    if not isinstance(value, Mapping):
        return None, None
    for key in WRAPPERS:
        inner = value.get(key)
        if isinstance(inner, Mapping):
            return inner, value.get("response")
    return value, None


def is_messages_request(value: object) -> bool:
    """An Anthropic Messages request: `messages` with Anthropic content, no OpenAI-only roles."""
    request, _ = unwrap(value[-1] if isinstance(value, list) and value else value)
    messages = field_of(request, "messages")
    if not isinstance(messages, list) or not request or "input" in request:
        return False
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") not in {"user", "assistant"}:
            return False
        if "tool_calls" in message:
            return False
    blocks = {
        field_of(b, "type") for m in messages if isinstance(m.get("content"), list) for b in m["content"]
    }
    tools = request.get("tools") or []
    return bool(
        blocks & {"tool_use", "tool_result", "thinking"}
        or "max_tokens" in request
        or "system" in request
        or any(isinstance(t, Mapping) and "input_schema" in t for t in tools)
    )


def read_anthropic_log(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of the last request of a log (see the module docstring)."""
    last = last_request(entries, report)
    if last is None:
        return
    number, value = last
    request, response = unwrap(value)
    if request is None or not isinstance(request.get("messages"), list):
        raise report.error(number, "not an Anthropic Messages request: expected an object with 'messages'")
    yield from _request(request, response, number, report)


def _request(request: Mapping[str, Any], response: object, number: int, report: Report) -> Iterator[Wire]:
    for item in request.get("tools") or []:
        found = schema(field_of(item, "name"), field_of(item, "description"), field_of(item, "input_schema"))
        if found is None or "input_schema" not in item:
            report.skip("server tool")
        else:
            report.tools.append(found)
    prompt = request.get("system")
    if isinstance(prompt, list):
        prompt = "".join(text_of(field_of(b, "text")) for b in prompt)
    if isinstance(prompt, str) and prompt:
        yield system(prompt)
    calls = Calls(report)
    for index, message in enumerate(request["messages"]):
        role = field_of(message, "role")
        if role == "user":
            yield from user_blocks(message.get("content"), calls, report, number)
        elif role == "assistant":
            parts = AssistantParts()
            add_assistant_blocks(parts, message.get("content"), calls, report)
            yield parts.wire()
        else:
            raise report.error(
                number, f"messages[{index}]: unknown role {role!r}; expected user or assistant"
            )
    if isinstance(response, Mapping) and isinstance(response.get("content"), list):
        parts = AssistantParts()
        add_assistant_blocks(parts, response["content"], calls, report)
        yield parts.wire()
