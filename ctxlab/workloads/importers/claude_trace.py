"""claude-trace logs (`.claude-trace/log-*.jsonl`): Claude Code's API traffic, one HTTP request
and its response a line, read as the requests of an Anthropic Messages request log
(`anthropic`).

Each line is `{"request": {"url", "method", "headers", "body"}, "response": {"status_code",
"headers", "body" | "body_raw"} | null, "logged_at"}`. The request is `request.body`; the
response is `response.body` (JSON) or the message rebuilt from `response.body_raw`, the streamed
events (`anthropic_stream`).

A model call is a call of the Messages API (`/v1/messages`, behind any base path) or of Claude on
a cloud, as Anthropic's Bedrock and Vertex clients send it:
- Amazon Bedrock: `/model/<model id>/invoke`, or `/invoke-with-response-stream` streamed. The
  model is in the URL, not the body, which carries `anthropic_version` (`bedrock-2023-05-31`)
  and the betas as `anthropic_beta` instead; neither is replayed. A streamed answer is AWS's
  binary event-stream framing, which claude-trace logs as text (`bedrock_stream` reads it).
- Vertex AI: `.../publishers/anthropic/models/<model>:rawPredict`, or `:streamRawPredict`
  streamed as server-sent events; the body carries `anthropic_version` (`vertex-2023-10-16`).
  claude-trace logs these only when `ANTHROPIC_BASE_URL` names their host and
  `--include-all-requests` is on (it logs the base URL's host and Bedrock's, not Vertex's).

A token count (`count_tokens`, Bedrock's `count-tokens`, Vertex's `count-tokens:rawPredict`), a
call to any other endpoint, an orphaned request (`response` null), a failed one (a status outside
2xx, an error body, a stream ending on an error or, on Bedrock, an exception frame) or one whose
response has no body is counted and skipped. A cloud call whose `request.body` was not logged as
JSON is counted too, with a note; a Messages API call whose `request.body` is not a request, or a
model call whose stream cannot be read, is an error at its line.

Detection (`is_trace_log`): claude-trace logs every call to the Messages API (`count_tokens`
too) and every call to Bedrock's runtime, and with `--include-all-requests` every call to the
API's host (sign-in, telemetry), so a log may open with other calls than the conversation's: it
is recognised by a model call or a token count among the first entries, or by every first entry
having claude-trace's line shape.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ctxlab.workloads.importers.anthropic_stream import Streamed, StreamError, message_of, stream_message
from ctxlab.workloads.importers.base import Report, field_of
from ctxlab.workloads.importers.bedrock_stream import chunk_events, is_event_stream
from ctxlab.workloads.importers.request_log import failed, failure


@dataclass(frozen=True, slots=True)
class Logged:
    """One request of a log with its logged response (None when not logged), or (`request`
    None) the reason the entry is no conversation, as it is counted."""

    request: Mapping[str, Any] | None
    response: object = None
    skipped: str = ""


MESSAGES, COUNT_TOKENS = "/v1/messages", "/v1/messages/count_tokens"
BEDROCK = re.compile(r"/model/.+/(invoke|invoke-with-response-stream|count-tokens)$")
"""Bedrock's runtime calls of a model (its id, URL-encoded, may hold colons and, as an ARN, `%2F`)."""
VERTEX = re.compile(r"/publishers/anthropic/models/([^/]+):(rawPredict|streamRawPredict)$")
"""Vertex AI's calls of an Anthropic model; the model `count-tokens` counts tokens."""
CLOUDS = {"bedrock": "Bedrock", "vertex": "Vertex AI"}
"""The endpoints of Claude on a cloud, by the name a count or note gives them."""
UNLOGGED_BODY = (
    "a {cloud} call's request body was not logged as JSON, so it cannot be replayed (counted); "
    "claude-trace logs a body only when the client hands it over as JSON text"
)


def is_traced(value: object) -> bool:
    """A claude-trace line: the HTTP request (`url`, `body`) and its response, as a pair."""
    request = field_of(value, "request")
    return isinstance(request, Mapping) and isinstance(request.get("url"), str) and "body" in request


def is_pair(value: object) -> bool:
    """A line as claude-trace writes every one: the request (`url`, `method`, `body`), its
    `response` (null for an orphaned request) and when it was `logged_at`."""
    return (
        isinstance(value, Mapping)
        and is_traced(value)
        and isinstance(field_of(value, "request", "method"), str)
        and "response" in value
        and isinstance(value.get("logged_at"), str)
    )


def is_trace_log(values: list[object]) -> bool:
    """A file's first entries are a claude-trace log: a claude-trace line among them calls a
    model (the Messages API, Claude on Bedrock or Vertex AI, `count_tokens` too), or every entry
    is a line as claude-trace writes it (`is_pair`), as in a log that opens with more calls to
    other endpoints (sign-in, telemetry, with `--include-all-requests`) than detection reads. No
    other format's entry has the pair's shape, so neither rule takes another format's file."""
    traced = [value for value in values if is_traced(value)]
    if any(_endpoint(str(field_of(v, "request", "url"))) is not None for v in traced):
        return True
    return bool(values) and all(is_pair(value) for value in values)


def _endpoint(url: str) -> str | None:
    """What a URL calls (behind any base path): `MESSAGES`, `COUNT_TOKENS`, a cloud of `CLOUDS`,
    or None for any other endpoint."""
    path = urlsplit(url).path.rstrip("/")
    if path.endswith(COUNT_TOKENS):
        return COUNT_TOKENS
    if path.endswith(MESSAGES):
        return MESSAGES
    if bedrock := BEDROCK.search(path):
        return COUNT_TOKENS if bedrock.group(1) == "count-tokens" else "bedrock"
    if vertex := VERTEX.search(path):
        return COUNT_TOKENS if vertex.group(1) == "count-tokens" else "vertex"
    return None


def traced(value: Mapping[str, Any], number: int, report: Report) -> Logged:
    """A claude-trace line read: the request body, and the response body or its stream.

    Raises:
        TraceError: a Messages API call whose body is no request, or a model call whose stream
            cannot be read.
    """
    request, response = value["request"], value.get("response")
    endpoint = _endpoint(str(request["url"]))
    if endpoint == COUNT_TOKENS:
        return Logged(None, skipped="count_tokens call")
    if endpoint is None:
        return Logged(None, skipped="call to another endpoint than a model's")
    if not isinstance(response, Mapping):
        return Logged(None, skipped="request without a response (claude-trace's orphaned request)")
    status = response.get("status_code")
    if isinstance(status, int) and not 200 <= status < 300:
        return Logged(None, skipped=failed(f"HTTP {status}"))
    body = request.get("body")
    if isinstance(body, Mapping) and isinstance(body.get("messages"), list):
        return _answered(body, response, number, report)
    if endpoint in CLOUDS:
        return _unlogged(CLOUDS[endpoint], report)
    raise report.error(
        number,
        "request.body is not a Messages request (an object with 'messages'); "
        "is the line cut, or was the body logged as text? re-record it or remove the line",
    )


def _unlogged(cloud: str, report: Report) -> Logged:
    """A cloud call whose request body claude-trace did not log: counted, and said once."""
    note = UNLOGGED_BODY.format(cloud=cloud)
    if note not in report.notes:
        report.notes.append(note)
    return Logged(None, skipped=f"{cloud} call without its request body")


def _answered(body: Mapping[str, Any], response: Mapping[str, Any], number: int, report: Report) -> Logged:
    """A traced request with its response's message: `body` as JSON, or `body_raw` a stream."""
    if isinstance(response.get("body"), Mapping):
        message = response["body"]
        if (name := failure(message)) is not None:
            return Logged(None, skipped=failed(name))
        return Logged(body, message)
    raw = response.get("body_raw")
    if not isinstance(raw, str) or not raw.strip():
        return Logged(None, skipped="response without a body")
    try:
        streamed = _streamed(raw, response.get("headers"), report)
    except StreamError as error:
        raise report.error(
            number, f"response.body_raw: {error}; is the stream cut? re-record it or remove the line"
        ) from None
    if streamed.message is None:
        return Logged(None, skipped=failed(f"stream error {streamed.error}"))
    return Logged(body, streamed.message)


def _streamed(raw: str, headers: object, report: Report) -> Streamed:
    """The message of a logged stream: AWS event-stream frames (Bedrock) or server-sent events.

    Raises:
        StreamError: the text is neither stream.
    """
    content_type = (
        next((v for k, v in headers.items() if str(k).lower() == "content-type"), None)
        if isinstance(headers, Mapping)
        else None
    )
    if is_event_stream(raw, content_type):
        return message_of(chunk_events(raw), report.skip)
    return stream_message(raw, report.skip)
