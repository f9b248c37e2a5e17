"""What the three request-log formats share (`anthropic`, `chat_log`, `responses_log`): an
entry's request and the response logged with it, and a failed call, whose response is an error.

A request's response is logged wrapped with it (`{"request", "response"}`, or `body`/`params`
for `request`) or as the entry after it. A failed call's response is an error, in any of the
shapes providers and loggers write:
- the OpenAI API's error body, `{"error": {"message", "type", "param", "code"}}` (`code` may be
  null);
- the Anthropic API's error body, `{"type": "error", "error": {"type", "message"}}`;
- an OpenAI Responses response that failed, `{"object": "response", "status": "failed",
  "error": {"code", "message"}, "output": []}`;
- a wrapper holding an `error` in place of a response, `{"request", "error"}`, which is read as
  the error body `{"error": ...}`;
- a wrapper whose HTTP status (`status_code` or `status`) is outside 2xx, its response no error
  body (none logged, or the text a gateway answered): named `HTTP <status>`, as claude-trace
  logs' failed calls are.

Invariants:
- `failure` names an error as its body does: its `code`, else its `type` (of the innermost
  error object, where a logger nested a whole error body under `error`). A failed request is
  counted as `failed request (<name>)`, the name claude-trace logs' failed calls have.
- A failed request never joins a chain (`chains`): its call was answered with an error, so no
  model answered it, and a client that goes on sends its messages again (a retry, which does
  join). So the conversation is chosen among the other requests: a log whose last request
  failed gives the last request of the chain ending latest before it, the conversation as a
  model last answered it, and a log whose every request failed is an error (`nothing_to_replay`).
- An error is no request (`is_error`): an error entry, like a response entry, answers the
  request before it, and one that follows no request awaiting a response is an error at its line
  (`unawaited`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.workloads.importers.base import Report, field_of
from ctxlab.workloads.trace import TraceError

WRAPPERS = ("request", "body", "params")
UNNAMED = "untyped error"
"""The name of an error whose body names no `code` or `type` (a message alone, a string)."""


def unwrap(value: object) -> tuple[Mapping[str, Any] | None, object]:
    """A logged request and its logged response (None when not logged); a wrapper's `error` is
    the response, as the error body it stands for, and so is a wrapper's HTTP status outside
    2xx (`status_code` or `status`, a whole number) where its response is no error body:
    `{"error": {"code": "HTTP 429"}}`."""
    if not isinstance(value, Mapping):
        return None, None
    for key in WRAPPERS:
        inner = value.get(key)
        if isinstance(inner, Mapping):
            error, response = value.get("error"), value.get("response")
            if error:
                return inner, {"error": error}
            status = value.get("status_code", value.get("status"))
            if _failed_status(status) and failure(response) is None:
                return inner, {"error": {"code": f"HTTP {status}"}}
            return inner, response
    return value, None


def _failed_status(status: object) -> bool:
    return isinstance(status, int) and not isinstance(status, bool) and not 200 <= status < 300


def failure(response: object) -> str | None:
    """The name of the error a logged response is (see the module docstring); None when it is
    none (a Responses response carries `error: null` when it did not fail)."""
    if not isinstance(response, Mapping):
        return None
    error = response.get("error")
    if not (error or response.get("type") == "error" or response.get("status") == "failed"):
        return None
    while isinstance(field_of(error, "error"), Mapping):
        error = field_of(error, "error")
    for key in ("code", "type"):
        name = field_of(error, key)
        if isinstance(name, str) and name:
            return name
    return UNNAMED


def failed(name: str) -> str:
    """How a failed request is counted."""
    return f"failed request ({name})"


def is_error(value: object) -> bool:
    """An error logged as an entry of its own: an error body holding no request (neither
    `messages` nor `input`, nor a wrapper)."""
    return (
        isinstance(value, Mapping)
        and failure(value) is not None
        and not {"messages", "input"} & value.keys()
        and unwrap(value)[0] is value
    )


def unawaited(api: str, entry: object, number: int, report: Report) -> TraceError:
    """The error for a response (of `api`, such as "Messages") or an error entry that follows no
    request awaiting one."""
    name = failure(entry)
    what = f"an error response ({name})" if name is not None else f"a {api} response"
    return report.error(
        number,
        f"{what} that follows no request awaiting one (the entry before it is no request, or has its "
        'response): log each response right after its request, or as {"request": ..., "response": ...}',
    )


def nothing_to_replay(line: int, what: str, report: Report) -> TraceError:
    """The error for a log none of whose requests can be replayed (each failed, or was counted
    otherwise), at its last line, with what was counted."""
    counted = ", ".join(f"{n} × {kind}" for kind, n in sorted(report.skipped.items()))
    return report.error(line, f"the log holds no {what} to replay" + (f" ({counted})" if counted else ""))
