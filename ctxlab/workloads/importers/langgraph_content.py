"""A LangChain message's content, read part by part as the LangGraph importer maps it (the
rules of `langgraph`'s module docstring): text, refusals, reasoning, images, a client tool's and
a server tool's call parts, the Responses items langchain-openai keeps; and a tool message's
content as the tool's result.

Invariant: what is not replayed is counted in the report, never dropped without a word.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.workloads.importers.anthropic import SERVER_CALLS as ANTHROPIC_SERVER_CALLS
from ctxlab.workloads.importers.base import (
    Report,
    Wire,
    content,
    data_url,
    field_of,
    image_part,
    text_of,
    text_part,
)
from ctxlab.workloads.importers.langgraph_items import ITEMS, reasoning_text

SERVER_CALLS = ANTHROPIC_SERVER_CALLS | {"server_tool_call"}
"""Parts of a call a server ran within the AI message (its result a part after it)."""


def _image(block: object) -> Wire | None:
    """The image part of an `image` block: its base64 `data` (LangChain's `base64` too) with its
    `mime_type` (an Anthropic source's `media_type`), or its `url`; None when it has neither."""
    data = field_of(block, "data") or field_of(block, "base64")
    url = field_of(block, "url")
    if isinstance(data, str):
        media = field_of(block, "mime_type") or field_of(block, "media_type")
        return image_part(data_url(media if isinstance(media, str) else "image/png", data))
    return image_part(url) if isinstance(url, str) else None


def tool_result(value: object, report: Report) -> str | list[Wire]:
    """A tool message's content as the tool's result: as `message_body` reads content, but content
    that is not message content (an object, a number, a part without a `type`) is its JSON
    text (a part's `text` where it has one), as LangChain turns a tool's output into a string
    (`json.dumps`) when it is not message content."""
    if isinstance(value, list):
        value = [_result_part(part) for part in value]
    elif value is not None and not isinstance(value, str):
        value = _json_text(value)
    return message_body(value, report)


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


@dataclass(slots=True)
class Read:
    """Content read part by part (`langgraph`'s rules): its parts as OpenAI parts, the
    text of its reasoning parts, and its call parts, a client tool's (`used`) or a server
    tool's (`server`)."""

    report: Report
    parts: list[Wire] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    used: list[Mapping[str, Any]] = field(default_factory=list)
    server: list[Mapping[str, Any]] = field(default_factory=list)
    items: list[Mapping[str, Any]] = field(default_factory=list)

    def body(self) -> str | list[Wire]:
        """The parts as OpenAI content."""
        return content(self.parts)

    def thought(self) -> str:
        """The reasoning parts' text."""
        return "\n\n".join(r for r in self.reasoning if r)

    def empty(self) -> bool:
        """Nothing but call parts a client's tool made, if any, was read."""
        return not (self.parts or self.server or self.thought())

    def add(self, item: object) -> None:
        """Read one part."""
        if isinstance(item, str):
            self.parts.append(text_part(item))
            return
        kind = field_of(item, "type")
        if kind == "text":
            self.parts.append(text_part(text_of(field_of(item, "text"))))
        elif kind == "refusal":  # the model's refusal is what it said, as every reader replays it
            self.parts.append(text_part(text_of(field_of(item, "refusal"))))
        elif kind in {"thinking", "reasoning"}:
            self.reasoning.append(
                text_of(field_of(item, kind)) or text_of(field_of(item, "text")) or reasoning_text(item)
            )
        elif kind in {"image_url", "image"}:
            self._image(kind, item)
        elif kind in {"tool_use", "tool_call"} and isinstance(item, Mapping):
            self.used.append(item)
        elif kind in SERVER_CALLS and isinstance(item, Mapping):
            self.server.append(item)
        elif kind in ITEMS and isinstance(item, Mapping):
            self.items.append(item)
        else:
            self.report.skip(f"content part {kind!r}")

    def _image(self, kind: str, item: object) -> None:
        if kind == "image_url":
            url = field_of(item, "image_url")
            self.parts.append(image_part(str(field_of(url, "url") if isinstance(url, Mapping) else url)))
            return
        image = _image(item) or _image(field_of(item, "source"))
        if image is None:
            self.report.skip("content part 'image' without its data or URL")
        else:
            self.parts.append(image)


def read_parts(items: list[object], report: Report) -> Read:
    """Content parts, read."""
    read = Read(report)
    for item in items:
        read.add(item)
    return read


def message_body(value: object, report: Report) -> str | list[Wire]:
    """The content of a message other than an AI message (whose content `langgraph` reads in
    pieces) as OpenAI content; a server tool's call or result, which only an AI message holds,
    is counted."""
    if not isinstance(value, list):
        return text_of(value)
    read = read_parts(value, report)
    for item in read.server + read.items:
        report.skip(f"content part {item.get('type')!r}")
    return read.body()
