"""claude-trace logs of Claude Code on Amazon Bedrock and on Vertex AI: the model in the URL, the
body with its `anthropic_version`, and Bedrock's streamed answer in AWS's binary event-stream
framing, logged as the UTF-8 text `Response.text()` gives (`importers.bedrock_stream`)."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from typing import Any

import pytest

from ctxlab.workloads.importers import import_lines
from ctxlab.workloads.importers.anthropic_stream import StreamError, message_of
from ctxlab.workloads.importers.bedrock_stream import chunk_events
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import lines
from tests.workloads.test_import_claude_trace import STREAM, sse

BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0"
VERTEX = (
    "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models"
)
MESSAGES = [{"role": "user", "content": "list the files"}]
BEDROCK_BODY = {
    "anthropic_version": "bedrock-2023-05-31",
    "anthropic_beta": ["claude-code-20250219"],
    "max_tokens": 32000,
    "system": [{"type": "text", "text": "You are Claude Code."}],
    "messages": MESSAGES,
}
VERTEX_BODY = {
    "anthropic_version": "vertex-2023-10-16",
    "stream": True,
    "max_tokens": 32000,
    "messages": MESSAGES,
}
EVENT_STREAM = {"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "r1"}


def _header(name: str, value: str) -> bytes:
    """A string header as AWS's event-stream framing encodes it: type 7, a two-byte length."""
    return bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude and its CRC, headers, payload, message CRC."""
    head = b"".join(_header(k, v) for k, v in headers.items())
    prelude = struct.pack(">II", 16 + len(head) + len(payload), len(head))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    return body + struct.pack(">I", zlib.crc32(body))


def chunk(event: dict[str, Any]) -> bytes:
    """A Bedrock chunk carrying one Anthropic stream event, padded as Bedrock pads its chunks."""
    data = base64.b64encode(json.dumps(event).encode()).decode()
    payload = json.dumps({"bytes": data, "p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"}, separators=(",", ":"))
    headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
    return frame(headers, payload.encode())


def exception(kind: str) -> bytes:
    headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    return frame(headers, b'{"message":"Too many requests, please wait before trying again."}')


def as_logged(stream: bytes) -> str:
    """The binary stream as claude-trace keeps it: `response.text()`, UTF-8 with replacements."""
    return stream.decode("utf-8", errors="replace")


def line(url: str, body: Any, response: dict[str, Any] | None) -> dict[str, Any]:
    """A line as claude-trace writes it."""
    request = {"timestamp": 1.0, "method": "POST", "url": url, "headers": {}, "body": body}
    return {"request": request, "response": response, "logged_at": "2025-09-04T00:00:00Z"}


def raw(text: str, headers: dict[str, str]) -> dict[str, Any]:
    return {"timestamp": 2.0, "status_code": 200, "headers": headers, "body_raw": text}


HELLO = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "hello"}]}
OK = {"timestamp": 2.0, "status_code": 200, "headers": {"content-type": "application/json"}, "body": HELLO}


def test_a_bedrock_stream_logged_as_text_gives_back_its_message() -> None:
    """The prelude's lengths and the checksums turn into replacement characters; the payloads
    do not, so every event comes back."""
    logged = as_logged(b"".join(chunk(e) for e in STREAM))
    assert logged.startswith("\x00") and "\ufffd" in logged
    imported = import_lines(
        lines(line(f"{BEDROCK}/invoke-with-response-stream", BEDROCK_BODY, raw(logged, EVENT_STREAM))),
        "t.jsonl",
    )
    assert imported.format == "anthropic-messages"
    system, user, answer = imported.messages
    assert (system["content"], user["content"]) == ("You are Claude Code.", "list the files")
    assert answer["content"] == "Line\u2028one, then a call." and answer["reasoning_content"] == "Look first."
    assert [c["function"]["arguments"] for c in answer["tool_calls"]] == ['{"path": "."}', "{}"]


def test_a_bedrock_invoke_and_a_vertex_stream_are_replayed() -> None:
    for url, body, response in [
        (f"{BEDROCK}/invoke", BEDROCK_BODY, OK),
        (f"{VERTEX}/claude-sonnet-4@20250514:streamRawPredict", VERTEX_BODY, raw(sse(*STREAM), {})),
        (f"{VERTEX}/claude-sonnet-4@20250514:rawPredict", VERTEX_BODY, OK),
    ]:
        imported = import_lines(lines(line(url, body, response)), "t.jsonl")
        assert imported.messages[-1]["role"] == "assistant", url
        assert not [w for w in imported.warnings if "another endpoint" in w], url


def test_a_log_of_bedrock_calls_alone_is_detected_and_takes_its_chain() -> None:
    """Before, a log without a /v1/messages call was not recognised."""
    first = line(f"{BEDROCK}/invoke", BEDROCK_BODY, OK)
    follow_up = {
        **BEDROCK_BODY,
        "messages": [
            *MESSAGES,
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "and?"},
        ],
    }
    later = line(
        f"{BEDROCK}/invoke-with-response-stream",
        follow_up,
        raw(as_logged(b"".join(chunk(e) for e in STREAM)), EVENT_STREAM),
    )
    imported = import_lines(lines(first, later), "t.jsonl")
    assert imported.format == "anthropic-messages"
    assert [m["role"] for m in imported.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert "skipped 1 × earlier request (not replayed)" in imported.warnings


def test_token_counts_and_exceptions_are_counted() -> None:
    throttled = as_logged(chunk(STREAM[0]) + exception("throttlingException"))
    entries = [
        line(f"{BEDROCK}/invoke", BEDROCK_BODY, OK),
        line(f"{BEDROCK}/invoke-with-response-stream", BEDROCK_BODY, raw(throttled, EVENT_STREAM)),
        line(f"{BEDROCK}/count-tokens", {"input": {}}, OK),
        line(f"{VERTEX}/count-tokens:rawPredict", VERTEX_BODY, OK),
    ]
    imported = import_lines(lines(*entries), "t.jsonl")
    assert imported.messages[-1]["content"] == "hello"
    assert set(imported.warnings) >= {
        "skipped 1 × failed request (stream error throttlingException) (not replayed)",
        "skipped 2 × count_tokens call (not replayed)",
    }


def test_a_cloud_call_whose_body_was_not_logged_is_counted_with_a_note() -> None:
    """claude-trace logs a body only when the client hands it over as JSON text; a null body
    cannot be replayed, but the log's other calls still are."""
    unlogged = line(f"{BEDROCK}/invoke", None, OK)
    imported = import_lines(lines(line(f"{BEDROCK}/invoke", BEDROCK_BODY, OK), unlogged, unlogged), "t.jsonl")
    assert imported.messages[-1]["content"] == "hello"
    assert "skipped 2 × Bedrock call without its request body (not replayed)" in imported.warnings
    assert sum("Bedrock call's request body was not logged as JSON" in w for w in imported.warnings) == 1


@pytest.mark.parametrize(
    ("stream", "why"),
    [
        (
            chunk(STREAM[0]) + frame({":event-type": "chunk"}, b'{"bytes":"not base64!"}'),
            "event 2's chunk bytes",
        ),
        (
            chunk(STREAM[0]) + frame({":event-type": "chunk"}, '{"bytes":"ü=="}'.encode()),
            "event 2's chunk bytes",
        ),
        (b"\x00\x00\x00\x10 nothing framed here", "not a Bedrock response stream"),
        (chunk(STREAM[0]) + chunk({"type": "message_delta", "delta": ["end_turn"]}), "event 2's delta"),
        (chunk(STREAM[0]) + chunk({"type": "ping", "x": "\udfff"}), "event 2's chunk: x: \\udfff is a lone"),
        (
            chunk(STREAM[0]) + frame({}, b'{"bytes": ' + b"[" * 100_000),
            "event 2's frame payload is nested too deep",
        ),
        (
            chunk(STREAM[0]) + frame({}, b'{"bytes": ' + b"[" * 500 + b"]" * 500 + b"}"),
            "event 2's frame payload is nested too deep to read (over 500 levels)",
        ),
    ],
)
def test_a_bedrock_stream_that_cannot_be_read_is_an_error_at_its_line(stream: bytes, why: str) -> None:
    entry = line(f"{BEDROCK}/invoke-with-response-stream", BEDROCK_BODY, raw(as_logged(stream), EVENT_STREAM))
    with pytest.raises(TraceError, match=r"t\.jsonl:1: response\.body_raw: .*" + re.escape(why)):
        import_lines(lines(entry), "t.jsonl")


def test_chunk_events_number_the_events_in_order() -> None:
    numbered = list(chunk_events(as_logged(b"".join(chunk(e) for e in STREAM[:3]))))
    assert numbered == [(1, STREAM[0]), (2, STREAM[1]), (3, STREAM[2])]
    with pytest.raises(StreamError, match="not a Bedrock response stream"):
        message_of(chunk_events("no frames"), [].append)
