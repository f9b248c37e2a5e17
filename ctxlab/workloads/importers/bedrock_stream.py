"""The Anthropic stream events of a Bedrock response stream (`invoke-with-response-stream`) logged
as text, as claude-trace logs it: AWS's binary event-stream framing read as UTF-8.

Each frame is a binary prelude (lengths and a checksum), headers (`:event-type` `chunk`,
`:content-type`, `:message-type` `event`), a JSON payload `{"bytes": "<base64>"}` whose bytes
are one Anthropic stream event's JSON, and a checksum. Read as UTF-8 text, the binary parts may
turn into replacement characters, but every ASCII byte stays as it was, so the JSON payloads and
the header names and values survive whole and are found by their text, not by the lengths.

Rules:
- Each `{"bytes": ...}` payload, in order, is the next event: its base64 decoded as UTF-8 JSON.
- An exception frame (an `:exception-type` header, such as `throttlingException`) ends the
  stream as an `error` event of that type, as the Messages API's own error event does.
- A text with neither is not a Bedrock stream; a payload that is not base64 of JSON, or of JSON
  a transcript's line could not hold either (`anthropic_stream.stream_json`), is an error saying
  which event (`StreamError`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from ctxlab.workloads.files import JSON_DEPTH, nests_too_deep
from ctxlab.workloads.importers.anthropic_stream import StreamError, stream_json
from ctxlab.workloads.importers.base import base64_bytes

FRAME = re.compile(r'\{"bytes"\s*:|:exception-type\x07\x00([\x00-\x7f])')
"""A chunk's payload, or an exception's type header: its string type (7), then the value's
two-byte length, whose high byte is 0 for any exception name."""
DECODER = json.JSONDecoder()


def is_event_stream(text: str, content_type: object) -> bool:
    """A response body in AWS's event-stream framing: so labelled, or starting with a prelude's
    length, whose first byte is 0 for any frame under 16 MiB."""
    return (isinstance(content_type, str) and "vnd.amazon.eventstream" in content_type) or (
        text.startswith("\x00")
    )


def chunk_events(text: str) -> Iterator[tuple[int, object]]:
    """Each event's number (from 1) and its JSON (see the module docstring).

    Raises:
        StreamError: a payload is not base64 of JSON, or the text has no frame at all.
    """
    number, position = 0, 0
    while (found := FRAME.search(text, position)) is not None:
        number += 1
        if found.group(1) is not None:
            name = text[found.end() : found.end() + ord(found.group(1))]
            yield number, {"type": "error", "error": {"type": name}}
            return
        payload, position = _payload(text, found.start(), number)
        yield number, _event(payload, number)
    if number == 0:
        raise StreamError("no event-stream chunk or exception: not a Bedrock response stream")


def _payload(text: str, start: int, number: int) -> tuple[object, int]:
    deep = f"event {number}'s frame payload is nested too deep to read (over {JSON_DEPTH} levels)"
    try:
        payload, end = DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise StreamError(f"event {number}'s frame payload is not JSON ({error.msg})") from None
    except RecursionError:
        raise StreamError(deep) from None
    if nests_too_deep(text[start:end], payload):
        raise StreamError(deep)
    return payload, end


def _event(payload: object, number: int) -> object:
    """The event a chunk's payload carries: its `bytes`, base64 of the event's JSON."""
    raw = base64_bytes(payload.get("bytes") if isinstance(payload, dict) else None)
    try:
        if raw is None:
            raise ValueError
        text = raw.decode("utf-8")
    except ValueError:  # not base64, or not UTF-8
        raise StreamError(f"event {number}'s chunk bytes are not base64 of UTF-8 JSON") from None
    return stream_json(text, f"event {number}'s chunk")
