"""pydantic-ai message histories (`result.all_messages_json()`, `ModelMessagesTypeAdapter.dump_json`),
as OpenAI chat messages, mapped as pydantic-ai sends a history to an OpenAI chat model.

A history is a JSON list of messages: `ModelRequest` (`kind: request`, its `parts` and the
`instructions` it was sent with) and `ModelResponse` (`kind: response`, its `parts`); a JSONL file
of such lists, or of one message a line, is one history read in file order.

Mapping rules:
- A history holding several runs (several `run_id`s, as `message_history=` continues a
  conversation) is one conversation.
- The instructions are those in force for the last request (its own, or, when it holds only tool
  returns and retries, the request's before it), a system message after the leading system
  prompts; a note says when earlier requests were sent other instructions.
- A `system-prompt` part is a system message where it stands; a `user-prompt` part a user
  message: text, `text-content` and images (`image-url`, an image `binary` as a `data:` URL);
  audio, video, documents and uploaded files, and `cache-point` markers, are counted.
- A `tool-return` (also `tool-search-return`, `capability-load-return`) answers its call: its
  content's text as pydantic-ai writes it (a string as is, any other value its compact JSON, a
  list of values one JSON array); a `failed` or `retried` outcome is an error result whose text
  is `{"error": ...}`. Files it returns stay in the result as its parts (text items as text,
  images as images, other files counted), the form every preset frames its own way.
- A legacy `retry-prompt` with a `tool_name` is its call's retried result; without one, and a
  `retry-feedback` part, is the feedback pydantic-ai sends: fenced in `<validation_errors>` or
  `<retry_feedback>` behind its attribution line, a user message; the framework's fixed
  `no_output` texts a system message.
- A response's `text` parts are its text (joined by a blank line), `thinking` parts its
  reasoning (never text), `tool-call` parts its calls (also `tool-search-call`,
  `capability-load-call`), arguments as compact JSON of the object (a string that is no JSON
  object is `{"INVALID_JSON": "<text>"}`). Built-in tool calls and returns, files, speech and
  compaction parts, which pydantic-ai does not send to a chat model, are counted; a response with
  nothing to send is counted as empty. Instruction and settings deltas are counted.

Invariants:
- An entry or part of a shape pydantic-ai never writes (an unknown `kind` or `part_kind`, parts
  that are no list) is an error at its line; a result must answer a call before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from ctxlab.problems import as_written
from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Reader,
    Report,
    Wire,
    assistant,
    call,
    content,
    data_url,
    image_part,
    system,
    text_part,
    tool,
    user,
)
from ctxlab.workloads.importers.pydantic_json import pydantic_json

KINDS = ("request", "response")
FILE_KINDS = ("image-url", "audio-url", "document-url", "video-url", "binary", "uploaded-file")
RETURNS = ("tool-return", "tool-search-return", "capability-load-return")
CALLS = ("tool-call", "tool-search-call", "capability-load-call")
ERRORS = ("failed", "retried")
OUTCOMES = ("success", "failed", "denied", "interrupted", "retried")
"""A tool return's outcomes (pydantic-ai 2.62's `ToolReturnPart.outcome`); `ERRORS` are sent
wrapped as errors (its `ERROR_OUTCOMES`)."""
RESPONSE_SKIPPED = (
    "builtin-tool-call",
    "builtin-tool-return",
    "builtin-tool-search-call",
    "builtin-tool-search-return",
    "file",
    "speech",
    "compaction",
)
REQUEST_SKIPPED = (
    "instruction",
    "instruction-delta",
    "instruction-baseline",
    "instruction-digest",
    "tool-availability-delta",
    "model-settings-delta",
    "compaction",
    "speech",
)
FRAMING = (
    "Your previous response failed the application's validation "
    "(this is automated feedback, not a message from the user):"
)
"""The line pydantic-ai puts before retry feedback sent as a user message."""
TAGS = (
    "system",
    "tool_result",
    "assistant_thinking",
    "context",
    "context_diff",
    "validation_errors",
    "retry_feedback",
    "conversation_summary",
)
"""pydantic-ai's framing tags, whose openings in fenced feedback it escapes."""
_NO_OUTPUT_SLOTS = (
    ("return text",),
    ("include your response in a tool call", "call a tool"),
    ("return an image",),
)


def _no_output_texts() -> frozenset[str]:
    """Every fixed text of pydantic-ai's `no_output` feedback ('Please return text or call a tool.')."""
    chosen: list[tuple[str, ...]] = [()]
    for slot in _NO_OUTPUT_SLOTS:
        chosen = [*chosen, *((*c, option) for c in chosen for option in slot)]
    return frozenset(f"Please {' or '.join(c)}." for c in chosen)


NO_OUTPUT = _no_output_texts()


def is_message(value: object) -> bool:
    """A pydantic-ai message: an object of `kind` request or response with a list of `parts`."""
    return isinstance(value, Mapping) and value.get("kind") in KINDS and isinstance(value.get("parts"), list)


def messages_of(value: object) -> list[Any] | None:
    """The messages of an entry (a list of them, or one), or None when it holds none: a list with
    a message among its first items (one of another shape is told when it is read)."""
    listed = value if isinstance(value, list) else [value]
    return listed if any(is_message(item) for item in listed[:5]) else None


def is_pydantic_ai(values: list[object]) -> bool:
    """Whether the first entry is a pydantic-ai message history (or one of its messages)."""
    return bool(values) and messages_of(values[0]) is not None


def _entry_messages(number: int, value: object, report: Report) -> list[Any]:
    listed = [value] if isinstance(value, Mapping) else messages_of(value)
    if listed is None:
        raise report.error(
            number, "not a pydantic-ai history: expected a list of request and response messages"
        )
    return listed


def in_force(requests: Sequence[Mapping[str, Any]]) -> str | None:
    """The instructions in force for the last of `requests` (the last two suffice)."""
    if not requests:
        return None
    last = requests[-1]
    if last.get("instructions") is not None or len(requests) < 2:
        return _instructions(last)
    only_returns = all(
        p.get("part_kind") in (*RETURNS, "retry-feedback", "retry-prompt") for p in last["parts"]
    )
    return _instructions(requests[-2]) if only_returns else None


def _instructions(request: Mapping[str, Any]) -> str | None:
    found = request.get("instructions")
    if found is not None and not isinstance(found, str):
        raise TypeError(f"instructions are {type(found).__name__}, not text")
    return found


def survey(entries: Iterator[Entry]) -> Reader:
    """The reader, given the instructions in force for the history's last request."""
    last_two: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    for _, value in entries:
        for message in messages_of(value) or []:
            if is_message(message) and message["kind"] == "request":
                last_two = [*last_two[-1:], message]
                given = _instructions(message)
                seen |= {given} if given is not None else set()
    return partial(read_pydantic_ai, instructions=(in_force(last_two), len(seen) > 1))


def read_pydantic_ai(
    entries: Iterator[Entry], report: Report, *, instructions: tuple[str | None, bool] | None = None
) -> Iterator[Wire]:
    """The messages of a history (see the module docstring); without a survey, the instructions of
    the first request that has them, unless the file is one document."""
    calls, leading = Calls(report), True
    pending = instructions
    for number, value in entries:
        listed = _entry_messages(number, value, report)
        if pending is None:
            pending = _unsurveyed(listed, report)
        for _, message in report.each(listed):
            for wire in _message(message, number, calls):
                if leading and wire["role"] != "system":
                    leading = False
                    yield from _instruction_message(pending)
                yield wire
    if leading and pending is not None:
        yield from _instruction_message(pending)
    if pending is not None and pending[1]:
        report.note_once(
            "requests of the history were sent other instructions: the last request's are replayed"
        )


def _unsurveyed(listed: list[Any], report: Report) -> tuple[str | None, bool]:
    requests = [m for m in listed if is_message(m) and m["kind"] == "request"]
    if report.document is None:
        report.note_once("the history was read once: the first request's instructions are replayed")
        return next((i for m in requests if (i := _instructions(m)) is not None), None), False
    given = {i for m in requests if (i := _instructions(m)) is not None}
    return in_force(requests[-2:]), len(given) > 1


def _instruction_message(pending: tuple[str | None, bool]) -> Iterator[Wire]:
    if pending[0]:
        yield system(pending[0])


def _message(message: object, number: int, calls: Calls) -> Iterator[Wire]:
    if not isinstance(message, Mapping):
        raise calls.report.error(number, f"a message is {type(message).__name__}, not an object")
    kind = message.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        said = f"a message's kind is {kind!r}; pydantic-ai writes request or response"
        raise calls.report.error(number, said)
    parts = message["parts"]
    if not isinstance(parts, list):
        raise calls.report.error(number, "a message's 'parts' is not a list")
    if message["kind"] == "request":
        yield from _request(parts, number, calls)
    else:
        yield from _response(parts, number, calls)


# ---------------------------------------------------------------------------------------------
# requests


def _request(parts: list[Any], number: int, calls: Calls) -> Iterator[Wire]:
    report = calls.report
    for _, part in report.each(parts):
        kind = part["part_kind"]
        if kind == "system-prompt":
            yield system(_text(part["content"], "a system prompt"))
        elif kind == "user-prompt":
            yield user(_user_content(part["content"], report))
        elif kind in RETURNS:
            yield _tool_return(part, number, calls)
        elif kind == "retry-prompt":
            yield _legacy_retry(part, number, calls)
        elif kind == "retry-feedback":
            yield _feedback(part["content"], str(part["retry"]["cause"]))
        elif kind in REQUEST_SKIPPED:
            report.skip(f"request part {kind!r}")
        else:
            raise report.error(number, f"unknown request part_kind {kind!r}")


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} is {type(value).__name__}, not text")
    return value


def _user_content(value: object, report: Report) -> str | list[Wire]:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise TypeError(f"a user prompt's content is {type(value).__name__}, not text or a list")
    parts: list[Wire] = []
    for item in value:
        if isinstance(item, str):
            parts.append(text_part(item))
        elif item["kind"] in ("text-content", "structured-content"):
            parts.append(text_part(_text(item["content"], "a text content")))
        elif item["kind"] == "cache-point":
            report.skip("user prompt cache point (a cache marker, no content)")
        else:
            parts.extend(_file(item, report, "user prompt"))
    return content(parts) if parts else ""


def _file(item: Mapping[str, Any], report: Report, where: str) -> list[Wire]:
    """An image as an image part; any other file counted."""
    kind, media = item["kind"], item.get("media_type")
    if kind not in FILE_KINDS:
        raise TypeError(f"unknown content kind {kind!r}")
    if kind == "image-url":
        return [image_part(_text(item["url"], "an image URL"))]
    if kind == "binary" and isinstance(media, str) and media.startswith("image/"):
        return [image_part(data_url(media, _text(item["data"], "a file's data")))]
    report.skip(f"{where} file {kind!r}" + (f" ({media})" if isinstance(media, str) else ""))
    return []


def _is_file(value: object) -> bool:
    return isinstance(value, Mapping) and value.get("kind") in FILE_KINDS


def dumps(value: object) -> str:
    """Compact JSON, non-ASCII as is, as pydantic-ai writes a value for the model (floats spelt
    as pydantic spells them, infinities and NaN null)."""
    return pydantic_json(value)


def _value_text(value: object) -> str:
    """A value's text: a string as is, None as '', else its JSON."""
    return "" if value is None else value if isinstance(value, str) else dumps(value)


def _returned(part: Mapping[str, Any]) -> tuple[object, list[Any]]:
    """A return's data (one item unwrapped, as pydantic-ai sends it) and its files."""
    body = part["content"]
    if _is_file(body):
        return None, [body]
    if not isinstance(body, list):
        return body, []
    data = [item for item in body if not _is_file(item)]
    files = [item for item in body if _is_file(item)]
    if not data:
        return None, files
    return (data[0] if len(data) == 1 and files else data), files


def _tool_return(part: Mapping[str, Any], number: int, calls: Calls) -> Wire:
    call_id = calls.answer(part.get("tool_call_id"), number, key="tool_call_id")
    outcome = part.get("outcome", "success")
    if outcome not in OUTCOMES:
        raise calls.report.error(
            number, f"a tool return's outcome is {as_written(outcome)}; expected one of {', '.join(OUTCOMES)}"
        )
    value, files = _returned(part)
    error = outcome in ERRORS
    text = dumps(
        {"error": value if outcome == "retried" and not isinstance(value, str | None) else _value_text(value)}
    )
    if not files:
        return tool(call_id, text if error else _value_text(value), error=error)
    items = [text] if error else _items(part["content"])
    body = [text_part(i) for i in items] + [p for f in files for p in _file(f, calls.report, "tool return")]
    return tool(call_id, content(body), error=error)


def _items(body: object) -> list[str]:
    """The text of each item of a return holding files but for its files."""
    listed = body if isinstance(body, list) else [body]
    return [_value_text(item) for item in listed if not _is_file(item)]


def _legacy_retry(part: Mapping[str, Any], number: int, calls: Calls) -> Wire:
    body = part["content"]
    if part.get("tool_name") is None:
        return _feedback(body, "model_retry" if isinstance(body, str) else "validation_error")
    call_id = calls.answer(part.get("tool_call_id"), number, key="tool_call_id")
    error = body if isinstance(body, str) else error_details(body)
    return tool(call_id, dumps({"error": error}), error=True)


def error_details(errors: object) -> list[Any]:
    """Validation errors as pydantic-ai shows them: without `ctx`, a root-level `input` repeated
    by a later root-level error left out."""
    if not isinstance(errors, list):
        raise TypeError(f"validation errors are {type(errors).__name__}, not a list")
    shown, root, seen = [], None, False
    for detail in errors:
        kept = {k: v for k, v in detail.items() if k != "ctx"}
        if len(detail.get("loc", ())) <= 1:
            if not seen:
                root, seen = detail.get("input"), True
            elif detail.get("input") == root:
                kept.pop("input", None)
        shown.append(kept)
    return shown


def _feedback(body: object, cause: str) -> Wire:
    """Retry feedback as pydantic-ai sends it to a chat model."""
    text = body if isinstance(body, str) else dumps(error_details(body))
    if cause == "no_output" and text in NO_OUTPUT:
        return system(text)
    tag = "validation_errors" if cause == "validation_error" else "retry_feedback"
    return user(f"{FRAMING}\n<{tag}>{neutralized(chr(10) + text + chr(10))}</{tag}>")


def neutralized(text: str) -> str:
    """`text` with the `<` of every opening or closing framing tag escaped, as pydantic-ai fences it."""
    out, index = [], 0
    while (found := text.find("<", index)) >= 0:
        out.append(text[index:found])
        out.append("&lt;" if _opens_tag(text[found + 1 :]) else "<")
        index = found + 1
    return "".join(out) + text[index:]


def _opens_tag(rest: str) -> bool:
    body = rest.lstrip()
    if body.startswith("/"):
        body = body[1:].lstrip()
    lowered = body.lower()
    return any(
        lowered.startswith(tag) and (len(body) == len(tag) or body[len(tag)] in "/> \t\n\r\f\v")
        for tag in TAGS
    )


# ---------------------------------------------------------------------------------------------
# responses


def _response(parts: list[Any], number: int, calls: Calls) -> Iterator[Wire]:
    report = calls.report
    texts: list[str] = []
    thoughts: list[str] = []
    made: list[Wire] = []
    for _, part in report.each(parts):
        kind = part["part_kind"]
        if kind == "text":
            texts.append(_text(part["content"], "a text part"))
        elif kind == "thinking":
            thoughts.append(_text(part["content"], "a thinking part"))
        elif kind in CALLS:
            made.append(_call(part, calls))
        elif kind in RESPONSE_SKIPPED:
            report.skip(f"response part {kind!r} (not sent to a chat model)")
        else:
            raise report.error(number, f"unknown response part_kind {kind!r}")
    if not texts and not made and not thoughts:
        report.skip("empty model response (nothing to send)")
        return
    yield assistant("\n\n".join(texts), made, "\n\n".join(t for t in thoughts if t))


def _call(part: Mapping[str, Any], calls: Calls) -> Wire:
    name, call_id = _text(part["tool_name"], "a tool name"), _text(part["tool_call_id"], "a call id")
    return call(calls.declare(call_id), name, arguments(part.get("args")))


def arguments(args: object) -> str:
    """A call's arguments as pydantic-ai sends them: the compact JSON of their object."""
    if not args:
        return "{}"
    if isinstance(args, Mapping):
        return pydantic_json(args, constants=True)
    text = _text(args, "a call's args")
    try:
        parsed = json.loads(text)
    except RecursionError:  # kept as written: the replay refuses it, saying how deep it nests
        return text
    except ValueError:
        parsed = None
    return pydantic_json(parsed if isinstance(parsed, dict) else {"INVALID_JSON": text}, constants=True)
