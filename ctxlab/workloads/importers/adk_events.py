"""Google ADK events read from their JSON, each checked: an event's author, timestamps, content and
parts (text, function calls and responses, inline data) as the request assembly (`google_adk`)
reads them. An event's fields may be ADK's names or their camelCase aliases (`get`).

Invariants:
- Every shape error is a `TraceError` at the event's entry, naming the event (`events[N]`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ctxlab.workloads.importers.base import Report, Wire, data_url, image_part


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def get(value: Mapping[str, Any], name: str) -> Any:
    """A field by its name or its camelCase alias (ADK writes either)."""
    found = value.get(name)
    return value.get(_camel(name)) if found is None else found


@dataclass(frozen=True, slots=True)
class Part:
    """A part read from its JSON: its kind (`text`, `call`, `response`, `image`, or the name of
    a part not replayed) and what it carries."""

    kind: str
    text: str = ""
    thought: bool = False
    call_id: str = ""
    name: str = ""
    payload: Any = None  # a call's args, a response's response
    media: tuple[Wire, ...] = ()  # a response's images; an image part's own, as one


@dataclass(slots=True)
class Event:
    """An event as the request assembly reads it."""

    index: int
    author: str
    invocation: str
    timestamp: float
    branch: str
    scope: str | None
    role: str | None
    parts: list[Part] | None
    compaction: tuple[float, float, Event] | None = None
    rewind: str | None = None
    partial: bool = False
    pending: set[str] = field(default_factory=set)


def read_event(index: int, value: object, number: int, report: Report) -> Event:
    """One event read and checked (every shape error at the event's line)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("author"), str):
        raise report.error(number, f"events[{index}] is not an ADK event (an object with an `author`)")
    actions = value.get("actions") or {}
    stamp = seconds(value.get("timestamp"))
    if stamp is None:
        raise report.error(number, f"events[{index}] has no `timestamp` in seconds (a number a float holds)")
    body = value.get("content")
    event = Event(
        index=index,
        author=value["author"],
        invocation=str(get(value, "invocation_id") or ""),
        timestamp=stamp,
        branch=str(value.get("branch") or ""),
        scope=get(value, "isolation_scope"),
        role=None if body is None else body.get("role"),
        parts=None if body is None else [_part(p, index, number, report) for p in body.get("parts") or []],
        rewind=get(actions, "rewind_before_invocation_id"),
        partial=bool(value.get("partial")),
        pending=set(get(value, "long_running_tool_ids") or ()),
    )
    squeezed = get(actions, "compaction")
    if squeezed is not None:
        summary = get(squeezed, "compacted_content")
        start, end = seconds(get(squeezed, "start_timestamp")), seconds(get(squeezed, "end_timestamp"))
        if start is None or end is None:
            raise report.error(
                number,
                f"events[{index}]: a compaction without a `start_timestamp` and an `end_timestamp` in "
                "seconds (numbers a float holds), which ADK writes to tell the events it replaces",
            )
        parts = [_part(p, index, number, report) for p in summary["parts"] or []]
        event.compaction = (start, end, replace(event, role=summary["role"], parts=parts))
    return event


def seconds(value: object) -> float | None:
    """A timestamp in seconds as a float, or None when `value` is no number a float holds (text,
    a boolean, an integer past a float's range)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _part(value: Mapping[str, Any], index: int, number: int, report: Report) -> Part:
    """A part of an event's content."""
    called, answered, blob = (
        get(value, "function_call"),
        get(value, "function_response"),
        get(value, "inline_data"),
    )
    if called is not None:
        call_id, name = called.get("id"), called["name"]
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise report.error(number, f"events[{index}]: a function call without a string `id` and `name`")
        return Part("call", call_id=call_id, name=name, payload=called.get("args") or {})
    if answered is not None:
        call_id = answered.get("id")
        if not isinstance(call_id, str):
            raise report.error(number, f"events[{index}]: a function response without a string `id`")
        media = (_blob(get(p, "inline_data"), index, number, report) for p in answered.get("parts") or [])
        images = tuple(m for m in media if m)
        response = answered.get("response")
        return Part(
            "response", call_id=call_id, name=str(answered.get("name")), payload=response, media=images
        )
    if blob is not None:
        image = _blob(blob, index, number, report)
        return Part("image", media=(image,)) if image else Part("inline_data")
    text = value.get("text")
    if isinstance(text, str):
        return Part("text", text=text, thought=bool(value.get("thought")))
    other = next((key for key, v in value.items() if v is not None and key not in _FLAGS), "empty")
    return Part(other, thought=bool(value.get("thought")))


_FLAGS = frozenset(
    {"thought", "thought_signature", "thoughtSignature", "text", "part_metadata", "partMetadata"}
)


def _blob(blob: Mapping[str, Any] | None, index: int, number: int, report: Report) -> Wire | None:
    return None if blob is None else inline_image(blob, f"events[{index}]", number, report)


def inline_image(blob: Mapping[str, Any], where: str, number: int | None, report: Report) -> Wire | None:
    """An image part of a genai `Blob` (inline data; `where` names its holder in an error); other
    media (audio, a PDF) are counted."""
    mime, data = get(blob, "mime_type"), blob.get("data")
    if not isinstance(mime, str) or not isinstance(data, str):
        raise report.error(number, f"{where}: inline data without a string `mimeType` and `data`")
    if mime.startswith("image/"):
        return image_part(data_url(mime, data))
    report.skip(f"inline data {mime!r} (the replay sends text and images)")
    return None
