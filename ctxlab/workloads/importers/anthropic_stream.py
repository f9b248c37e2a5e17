"""The message an Anthropic Messages stream carries, put back together from its server-sent
events (a streamed response logged as text, such as claude-trace's `response.body_raw`), or from
the same events framed otherwise (`message_of`; Bedrock's, `bedrock_stream`).

Rules:
- Events are separated by blank lines; an event's `data:` lines, joined, are its JSON; the
  JSON's `type` names the event (`event:` lines, comments and `ping` add nothing).
- `message_start` gives the message; `content_block_start` opens block `index` as given;
  `content_block_delta` adds to it: `text_delta` to its text, `thinking_delta` to its thinking,
  `signature_delta` to its signature, `citations_delta` a citation, `input_json_delta` a piece
  of its input's JSON (a call's input is the pieces joined, parsed when the block closes or the
  stream ends; no piece keeps the input it opened with); `message_delta` sets the message's
  `stop_reason` and the like. The content is the blocks in index order.
- An `error` event means the request failed: the stream gives no message, only the error's type.

A stream that cannot be read this way (an event that is not JSON, or JSON that a transcript's
line could not hold either: nested too deep, a lone surrogate; a `message_start` message or
a `message_delta` delta that is not an object, a delta to a block never opened, a call's input
that is not JSON) raises `StreamError` saying where; a delta of a kind not known here is counted
and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.workloads.files import TraceError, json_value
from ctxlab.workloads.importers.base import Wire, field_of


class StreamError(ValueError):
    """A stream that is not an Anthropic Messages stream; the message says where."""


@dataclass(frozen=True, slots=True)
class Streamed:
    """What a stream gave: its message, or (`message` None) the type of the error it ended on."""

    message: Wire | None
    error: str = ""


DELTA_FIELDS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
    "compaction_delta": "content",
}
"""Deltas that extend a string field of their block, and that field."""


def events(text: str) -> Iterator[tuple[int, object]]:
    """Each event's number (from 1) and its JSON data.

    Raises:
        StreamError: an event's data is not JSON.
    """
    data: list[str] = []
    number = 0
    # Split on "\n" only: JSON strings may hold U+2028 and the like, which splitlines() splits on.
    for raw in [*text.split("\n"), ""]:
        line = raw.removesuffix("\r")
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            number += 1
            yield number, _json(number, "\n".join(data))
            data = []


def _json(number: int, data: str) -> object:
    return stream_json(data, f"event {number}'s data")


def stream_json(text: str, what: str) -> object:
    """The JSON value of a piece of a stream (an event, a call's streamed input), refused as a
    transcript's line is (`files.json_value`): JSON nested deeper than `files.JSON_DEPTH`, or
    holding a lone surrogate, which no request or result file can carry.

    Raises:
        StreamError: `what` is not JSON, or is JSON no transcript can mean.
    """
    try:
        return json_value(text, "", None)
    except json.JSONDecodeError as error:
        raise StreamError(f"{what} is not JSON ({error.msg}, column {error.colno})") from None
    except TraceError as error:
        raise StreamError(f"{what}: {error.message}") from None


@dataclass(slots=True)
class _Building:
    """A message being put together from its events."""

    skip: Callable[[str], None]
    message: dict[str, Any] = field(default_factory=dict)
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    pieces: dict[int, list[str]] = field(default_factory=dict)

    def start(self, event: Mapping[str, Any]) -> None:
        block = event.get("content_block")
        self.blocks[_index(event)] = dict(block) if isinstance(block, Mapping) else {}

    def delta(self, number: int, event: Mapping[str, Any]) -> None:
        index, delta = _index(event), event.get("delta")
        block = self.blocks.get(index)
        if block is None:
            raise StreamError(f"event {number} adds to block {index}, which no content_block_start opened")
        kind = field_of(delta, "type")
        if kind in DELTA_FIELDS:
            name = DELTA_FIELDS[kind]
            block[name] = str(block.get(name) or "") + str(field_of(delta, name) or "")
        elif kind == "input_json_delta":
            self.pieces.setdefault(index, []).append(str(field_of(delta, "partial_json") or ""))
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(field_of(delta, "citation"))
        else:
            self.skip(f"stream delta {kind!r}")

    def close(self, index: int) -> None:
        """Parse the input pieces of block `index`, if it has any."""
        pieces = self.pieces.pop(index, None)
        if not pieces or not "".join(pieces).strip():
            return
        self.blocks[index]["input"] = stream_json("".join(pieces), f"block {index}'s streamed input")

    def done(self) -> Wire:
        for index in list(self.pieces):
            self.close(index)
        return {**self.message, "content": [self.blocks[i] for i in sorted(self.blocks)]}


def _index(event: Mapping[str, Any]) -> int:
    index = event.get("index")
    if not isinstance(index, int):
        raise StreamError(f"a {event.get('type')} event without an integer index")
    return index


def _object(event: Mapping[str, Any], key: str, number: int) -> Mapping[str, Any]:
    """An event's `key` object (`message`, `delta`); {} where it is absent or null.

    Raises:
        StreamError: it is there but not an object.
    """
    value = event.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise StreamError(f"event {number}'s {key} is not a JSON object")
    return value


def stream_message(text: str, skip: Callable[[str], None]) -> Streamed:
    """The message of a stream's text (see the module docstring); `skip` counts what is not read.

    Raises:
        StreamError: the text is not an Anthropic Messages stream.
    """
    return message_of(events(text), skip)


def message_of(numbered: Iterable[tuple[int, object]], skip: Callable[[str], None]) -> Streamed:
    """The message of a stream's events, each with its number (from 1), however the stream
    framed them (server-sent events here, AWS event-stream frames in `bedrock_stream`).

    Raises:
        StreamError: the events are not an Anthropic Messages stream.
    """
    building = _Building(skip)
    for number, event in numbered:
        if not isinstance(event, Mapping):
            raise StreamError(f"event {number}'s data is not a JSON object")
        kind = event.get("type")
        if kind == "message_start":
            building.message = dict(_object(event, "message", number))
        elif kind == "content_block_start":
            building.start(event)
        elif kind == "content_block_delta":
            building.delta(number, event)
        elif kind == "content_block_stop":
            building.close(_index(event))
        elif kind == "message_delta":
            building.message.update(_object(event, "delta", number))
        elif kind == "error":
            return Streamed(None, str(field_of(event, "error", "type") or "error"))
    if not building.message and not building.blocks:
        raise StreamError("no message_start or content block: not an Anthropic Messages stream")
    return Streamed(building.done())
