"""claude-trace logs (`.claude-trace/log-*.jsonl`): Claude Code's API traffic, one HTTP request
and its response a line, read as the requests of an Anthropic Messages request log
(`anthropic`).

Each line is `{"request": {"url", "method", "headers", "body"}, "response": {"status_code",
"headers", "body" | "body_raw"} | null, "logged_at"}`. The request is `request.body`; the
response is `response.body` (JSON) or the message rebuilt from `response.body_raw`, the streamed
events (`anthropic_stream`). A line calling another endpoint than `/v1/messages` (behind any
base path; `count_tokens` among them), an orphaned request (`response` null), a failed one (a
status outside 2xx, an error body or a stream ending on an error) or one whose response has no
body is counted and skipped; a Messages call whose `request.body` is not a request, or whose
stream cannot be read, is an error at its line.

Detection (`is_trace_log`): claude-trace logs every call to the Messages API (`count_tokens`
too), and with `--include-all-requests` every call to the API's host (sign-in, telemetry), so a
log may open with other calls than the conversation's: it is recognised by a Messages call among
the first entries, or by every first entry having claude-trace's line shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ctxlab.workloads.importers.anthropic_stream import StreamError, stream_message
from ctxlab.workloads.importers.base import Report, field_of


@dataclass(frozen=True, slots=True)
class Logged:
    """One request of a log with its logged response (None when not logged), or (`request`
    None) the reason the entry is no conversation, as it is counted."""

    request: Mapping[str, Any] | None
    response: object = None
    skipped: str = ""


MESSAGES, COUNT_TOKENS = "/v1/messages", "/v1/messages/count_tokens"


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
    """A file's first entries are a claude-trace log: a claude-trace line among them calls the
    Messages API (`count_tokens` too), or every entry is a line as claude-trace writes it
    (`is_pair`), as in a log that opens with more calls to other endpoints (sign-in, telemetry,
    with `--include-all-requests`) than detection reads. No other format's entry has the pair's
    shape, so neither rule takes another format's file."""
    traced = [value for value in values if is_traced(value)]
    if any(_endpoint(str(field_of(v, "request", "url"))) in {MESSAGES, COUNT_TOKENS} for v in traced):
        return True
    return bool(values) and all(is_pair(value) for value in values)


def _endpoint(url: str) -> str:
    """The Messages endpoint a URL calls (behind any base path), else its path."""
    path = urlsplit(url).path.rstrip("/")
    for endpoint in (COUNT_TOKENS, MESSAGES):
        if path.endswith(endpoint):
            return endpoint
    return path


def traced(value: Mapping[str, Any], number: int, report: Report) -> Logged:
    """A claude-trace line read: the request body, and the response body or its stream.

    Raises:
        TraceError: a Messages call whose body is no request, or whose stream cannot be read.
    """
    request, response = value["request"], value.get("response")
    endpoint = _endpoint(str(request["url"]))
    if endpoint == COUNT_TOKENS:
        return Logged(None, skipped="count_tokens call")
    if endpoint != MESSAGES:
        return Logged(None, skipped="call to another endpoint than /v1/messages")
    if not isinstance(response, Mapping):
        return Logged(None, skipped="request without a response (claude-trace's orphaned request)")
    status = response.get("status_code")
    if isinstance(status, int) and not 200 <= status < 300:
        return Logged(None, skipped=f"failed request (HTTP {status})")
    body = request.get("body")
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        raise report.error(
            number,
            "request.body is not a Messages request (an object with 'messages'); "
            "is the line cut, or was the body logged as text? re-record it or remove the line",
        )
    return _answered(body, response, number, report)


def _answered(body: Mapping[str, Any], response: Mapping[str, Any], number: int, report: Report) -> Logged:
    """A traced request with its response's message: `body` as JSON, or `body_raw` a stream."""
    if isinstance(response.get("body"), Mapping):
        message = response["body"]
        if message.get("type") == "error":
            return Logged(None, skipped=f"failed request ({field_of(message, 'error', 'type')})")
        return Logged(body, message)
    raw = response.get("body_raw")
    if not isinstance(raw, str) or not raw.strip():
        return Logged(None, skipped="response without a body")
    try:
        streamed = stream_message(raw, report.skip)
    except StreamError as error:
        raise report.error(
            number, f"response.body_raw: {error}; is the stream cut? re-record it or remove the line"
        ) from None
    if streamed.message is None:
        return Logged(None, skipped=f"failed request (stream error {streamed.error})")
    return Logged(body, streamed.message)
