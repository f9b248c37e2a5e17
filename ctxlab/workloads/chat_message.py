"""One message of an OpenAI chat transcript, validated: its role, its content as parts (text,
images as data blocks), its tool calls, the call a tool message answers, the reasoning and error
keys the importers write (`ctxlab.workloads.trace` maps the messages into a script).

Invariants:
- `developer` is read as `system`; any other role is refused with the roles allowed.
- Calls are allowed on assistant messages only; their arguments are kept as the JSON text the
  transcript wrote (an object given instead is written with `json.dumps`). A custom tool's call
  (`type: custom`, its free-form `input` in place of arguments) is a call with arguments
  `{"input": "<its input>"}`, as the Responses importer reads one.
- An assistant message's `refusal` (what the Chat Completions API returns, content null, when a
  model declines) is text after its content: the model said it, and it was sent back.
- An audio or file part (`input_audio`, `file`) is not replayed: the presets and both wire forms
  replay text and images only (Anthropic takes no audio, and the lab sends no file the OpenAI
  API reads). The message keeps its other parts, and the part's type is in `unreplayed`, for the
  reader to count; any other part type is refused, naming the ones read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.workloads.files import JSON_DEPTH, TOO_LONG, holds_lone_surrogate, nests_too_deep

WireRole = Literal["system", "user", "assistant", "tool"]
_ROLES: dict[str, WireRole] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
_TEXT_PARTS = {"text": "text", "input_text": "text", "output_text": "text", "refusal": "refusal"}
UNREPLAYED_PARTS = frozenset({"input_audio", "file"})
"""Content part types read but not replayed (see the module docstring)."""
_IMAGE_TYPES = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceCall:
    """A tool call as the transcript wrote it."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceMessage:
    """One validated transcript message."""

    role: WireRole
    parts: tuple[Part, ...]
    calls: tuple[TraceCall, ...] = ()
    call_id: str | None = None
    reasoning: str = ""
    error: bool = False
    unreplayed: tuple[str, ...] = ()
    """The types of the content parts left out (`UNREPLAYED_PARTS`), one per part."""

    @property
    def text(self) -> str:
        """The text parts joined with nothing between."""
        return "".join(p.text for p in self.parts if isinstance(p, TextBlock))


def _data_block(url: str) -> DataBlock:
    if url.startswith("data:") and ";base64," in url:
        header, payload = url[5:].split(";base64,", 1)
        return DataBlock(media_type=header or "application/octet-stream", source=payload, kind="base64")
    ext = url.rsplit("?", 1)[0].rsplit(".", 1)[-1].lower()
    return DataBlock(media_type=_IMAGE_TYPES.get(ext, "image/*"), source=url, kind="url")


def _part(item: object) -> Part | str:
    """A content part, or the type of an unreplayed one."""
    if not isinstance(item, Mapping):
        raise ValueError(f"a content part must be an object, got {type(item).__name__}")
    kind = str(item.get("type"))
    if kind in _TEXT_PARTS and isinstance(item.get(_TEXT_PARTS[kind]), str):
        return TextBlock(text=item[_TEXT_PARTS[kind]])
    if kind == "image_url":
        image = item.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        if isinstance(url, str):
            return _data_block(url)
    if kind in UNREPLAYED_PARTS:
        return kind
    anthropic = (
        " (an Anthropic content block: give --format anthropic-messages for a request log, or "
        "anthropic-history for a list of messages)"
        if kind in {"tool_use", "tool_result", "thinking", "redacted_thinking"}
        else ""
    )
    raise ValueError(
        f"unsupported content part {json.dumps(item)[:80]}; expected text, image_url, input_audio or "
        f"file parts{anthropic}"
    )


def _parts(content: object) -> tuple[tuple[Part, ...], tuple[str, ...]]:
    """The replayed parts of a message's content, and the types of those left out."""
    if content is None:
        return (), ()
    if isinstance(content, str):
        return (TextBlock(text=content),), ()
    if isinstance(content, list):
        read = [_part(item) for item in content]
        return tuple(p for p in read if not isinstance(p, str)), tuple(p for p in read if isinstance(p, str))
    raise ValueError(f"'content' must be a string, null or a list of parts, got {type(content).__name__}")


def _refusal(wire: Mapping[str, object]) -> tuple[Part, ...]:
    """An assistant message's `refusal` text as a part (none when it has none).

    Raises:
        ValueError: `refusal` is neither a string nor null.
    """
    refusal = wire.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        raise ValueError("'refusal' must be a string or null")
    return (TextBlock(text=refusal),) if refusal else ()


def _custom(item: object) -> object:
    """A custom tool call's `custom` object as a function's: its input as `{"input": ...}`
    arguments; any other call as it is."""
    if not isinstance(item, Mapping) or item.get("type") != "custom" or "function" in item:
        return item
    custom = item.get("custom")
    if not isinstance(custom, Mapping):
        return item
    given = custom.get("input")
    arguments = json.dumps({"input": given}, ensure_ascii=False) if isinstance(given, str) else given
    return {**item, "function": {"name": custom.get("name"), "arguments": arguments}}


def _call(item: object, k: int) -> TraceCall:
    item = _custom(item)
    function = item.get("function") if isinstance(item, Mapping) else None
    if not isinstance(item, Mapping) or not isinstance(function, Mapping):
        raise ValueError(f"tool_calls[{k}] must be an object with a 'function' object")
    call_id, name, arguments = item.get("id"), function.get("name"), function.get("arguments", "")
    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"tool_calls[{k}] has no 'id' string")
    if not isinstance(name, str):
        raise ValueError(f"tool_calls[{k}].function has no 'name' string")
    if isinstance(arguments, Mapping):
        arguments = json.dumps(arguments, ensure_ascii=False)
    if not isinstance(arguments, str):
        raise ValueError(f"tool_calls[{k}].function.arguments must be a JSON string")
    problem = _unreadable(arguments)
    if problem is not None:
        raise ValueError(f"tool_calls[{k}].function.arguments: {problem}")
    return TraceCall(id=call_id, name=name, arguments=arguments)


_LONG_INTEGER = re.compile(r"\d{4301}")


def _unreadable(arguments: str) -> str | None:
    """Why arguments, read as JSON as every preset reads them, cannot be replayed: a lone
    surrogate (no request can carry it as UTF-8), nesting past `files.JSON_DEPTH` (a line's
    limit: the presets read arguments deep in the stack), an integer longer than Python reads;
    None when they can. Arguments that are not JSON are kept as
    written. Only arguments that could hold one of these are parsed."""
    escaped = "\\ud" in arguments or "\\uD" in arguments  # a surrogate comes from an escape
    nested = arguments.count("[") + arguments.count("{") > JSON_DEPTH
    if not (escaped or nested or _LONG_INTEGER.search(arguments)):
        return None
    try:
        value = json.loads(arguments)
    except RecursionError:
        return _TOO_DEEP
    except json.JSONDecodeError:
        return None
    except ValueError:
        return TOO_LONG
    if nested and nests_too_deep(arguments, value):
        return _TOO_DEEP
    if escaped and holds_lone_surrogate(value):
        return (
            "its JSON escapes a lone surrogate (half of a UTF-16 pair, such as \\ud800), which is "
            "not a character; write the character itself, or both halves of its pair"
        )
    return None


_TOO_DEEP = (
    f"its JSON nests deeper than {JSON_DEPTH} levels, more than the presets read; no model "
    "writes such arguments: flatten them, or write the deep part as a string"
)


def role_of(wire: Mapping[str, Any]) -> WireRole:
    """The role of a message `parse_message` read (`developer` is `system`)."""
    return _ROLES[wire["role"]]


def parse_message(wire: object) -> TraceMessage:
    """A validated transcript message.

    Raises:
        ValueError: not a message (with what is wrong).
    """
    if not isinstance(wire, Mapping):
        raise ValueError(f"not a message: expected a JSON object with a 'role', got {type(wire).__name__}")
    if "role" not in wire:
        raise ValueError("not a message: no 'role' field")
    role = _ROLES.get(str(wire["role"]))
    if role is None:
        given = wire["role"]
        shown = repr(given) if isinstance(given, str) else json.dumps(given)  # null, not None
        raise ValueError(f"unknown role {shown}; expected one of system, developer, user, assistant, tool")
    calls = wire.get("tool_calls") or []
    if not isinstance(calls, list) or (calls and role != "assistant"):
        raise ValueError("'tool_calls' must be a list, on assistant messages only")
    call_id = wire.get("tool_call_id")
    if role == "tool" and not isinstance(call_id, str):
        raise ValueError("a tool message needs a 'tool_call_id' string")
    reasoning = wire.get("reasoning_content")
    if reasoning is not None and not isinstance(reasoning, str):
        raise ValueError("'reasoning_content' must be a string")
    error = wire.get("is_error", False)
    if not isinstance(error, bool):
        raise ValueError("'is_error' must be true or false")
    parts, unreplayed = _parts(wire.get("content"))
    return TraceMessage(
        role=role,
        parts=parts + (_refusal(wire) if role == "assistant" else ()),
        unreplayed=unreplayed,
        calls=tuple(_call(item, k) for k, item in enumerate(calls)),
        call_id=call_id if role == "tool" else None,
        reasoning=reasoning or "" if role == "assistant" else "",
        error=error and role == "tool",
    )
