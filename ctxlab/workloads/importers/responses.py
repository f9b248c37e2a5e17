"""OpenAI Responses items (shared by Codex CLI rollouts) and OpenAI Responses API request logs,
as OpenAI chat messages.

A request log is a JSON request, a JSON list of requests, or JSONL with one request a line, each
possibly wrapped as `{"request": {...}, "response": {...}}` (or `body`/`params`); the last request
holds the conversation (its `instructions` and `input`), earlier ones are counted and skipped,
and a logged response's `output` items end it. A request that continues a response by
`previous_response_id` sends only what is new: its conversation is the chain's requests' inputs,
each followed by its response's output, oldest first (a chain onto a response the log does not
hold is an error at that request's line); `instructions` and `tools` are the last request's, as
the API does not carry them over.

Mapping rules for items (also Codex's):
- A `message` item (or an item with only `role` and `content`) is a message of its role;
  `developer` is `system` (one after the first message is user text at its place, as for every
  format); `input_text`/`output_text` parts join the text, `input_image` parts are image parts.
- `function_call` items are calls of the assistant message they follow (an assistant message
  and the calls after it are one message, so parallel calls stay together); `custom_tool_call`
  is a call with arguments `{"input": "<its input>"}`, `local_shell_call` a call of
  `local_shell` with its `action` as arguments.
- `function_call_output`, `custom_tool_call_output` and `local_shell_call_output` items are the
  results of their `call_id`s: the output string as recorded, or an output of content parts
  read as a message's (text and `input_image` parts; others counted), or a structured output's.
- `reasoning` items are reasoning (their summary text, or the `reasoning_text` of their
  `content` when they have no summary, as open-weight models write them) of the next assistant
  message, kept apart from its text. Other items (web searches, ...) are counted and skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.workloads.importers.anthropic import unwrap
from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    call,
    content,
    field_of,
    image_part,
    schema,
    system,
    text_of,
    text_only,
    text_part,
    tool,
    user,
)

CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})


@dataclass(slots=True)
class ItemMapper:
    """Maps Responses items one at a time, holding back the assistant message being built."""

    report: Report
    calls: Calls
    texts: list[str] = field(default_factory=list)
    listed: list[Wire] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    open: bool = False

    def flush(self) -> Iterator[Wire]:
        """The assistant message being built, if any."""
        if self.open:
            yield assistant("\n\n".join(self.texts), self.listed, "\n\n".join(self.reasoning))
        self.texts, self.listed, self.reasoning, self.open = [], [], [], False

    def item(self, item: object, line: int | None) -> Iterator[Wire]:
        """The messages completed by one item."""
        if not isinstance(item, Mapping):
            raise self.report.error(line, f"an item must be an object, got {type(item).__name__}")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            yield from self._message(item, line)
        elif kind == "reasoning":
            if self.listed:
                yield from self.flush()
            parts = item.get("summary") or item.get("content") or []
            self.reasoning.extend(text_of(field_of(p, "text")) for p in parts if isinstance(p, Mapping))
        elif kind in CALLS:
            self.open = True
            call_id = self.calls.declare(str(item.get("call_id") or item.get("id")))
            if kind == "function_call":
                self.listed.append(call(call_id, str(item.get("name")), item.get("arguments") or "{}"))
            elif kind == "custom_tool_call":
                self.listed.append(
                    call(call_id, str(item.get("name")), {"input": text_of(item.get("input"))})
                )
            else:
                self.listed.append(call(call_id, "local_shell", item.get("action") or {}))
        elif kind in OUTPUTS:
            yield from self.flush()
            call_id = self.calls.answer(item.get("call_id"), line)
            yield tool(call_id, self._output(item.get("output")))
        else:
            self.report.skip(f"item {kind!r}")

    def _message(self, item: Mapping[str, Any], line: int | None) -> Iterator[Wire]:
        role = item.get("role")
        parts = self._parts(item.get("content"))
        if role == "assistant":
            if self.listed:
                yield from self.flush()
            self.open = True
            self.texts.append(text_only(parts, self.report, "assistant"))
            return
        yield from self.flush()
        if role in {"system", "developer"}:
            yield system(text_only(parts, self.report, "system"))
        elif role == "user":
            yield user(parts)
        else:
            raise self.report.error(line, f"unknown message role {role!r}")

    def _output(self, value: object) -> str | list[Wire]:
        """A call's output: the string as recorded, or its content parts (text and images, as a
        message's), or a structured output's `content` (or `output`)."""
        if isinstance(value, str):
            return value
        if isinstance(value, Mapping):
            return self._output(value.get("content") or value.get("output"))
        if isinstance(value, list):
            return self._parts(value)
        return ""

    def _parts(self, value: object) -> str | list[Wire]:
        if not isinstance(value, list):
            return text_of(value)
        parts: list[Wire] = []
        for part in value:
            kind = field_of(part, "type")
            if kind in {"input_text", "output_text", "text"}:
                parts.append(text_part(text_of(part.get("text"))))
            elif kind == "input_image" and isinstance(part.get("image_url"), str):
                parts.append(image_part(part["image_url"]))
            else:
                self.report.skip(f"content part {kind!r}")
        return content(parts)


def is_responses_request(value: object) -> bool:
    """An OpenAI Responses request: `model` and `input` (or `instructions`)."""
    request, _ = unwrap(value[-1] if isinstance(value, list) and value else value)
    return bool(request) and "input" in request and ("model" in request or "instructions" in request)  # type: ignore[operator]


@dataclass(frozen=True, slots=True)
class Link:
    """One logged request of a conversation chained with `previous_response_id`: its line, the
    response it continues, and its own items (its input, then its response's output)."""

    line: int
    previous: str | None
    items: tuple[Any, ...]


def _link(number: int, request: Mapping[str, Any], response: object) -> Link:
    given = request.get("input")
    items: list[Any] = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
    if isinstance(response, Mapping):
        items.extend(response.get("output") or [])
    previous = request.get("previous_response_id")
    return Link(number, previous if isinstance(previous, str) else None, tuple(items))


def _requests(entries: Iterator[Entry]) -> Iterator[tuple[int, object]]:
    for number, value in entries:
        for item in value if isinstance(value, list) else [value]:
            yield number, item


def _last_with_chain(entries: Iterator[Entry], report: Report) -> tuple[int, object, tuple[Link, ...]] | None:
    """The last request, with the links it continues, oldest first (none when it does not chain).

    Only the previous request is kept until a request chains onto a response; from then on,
    every request with a logged response id is kept (each sends only what is new, so they hold
    the conversation once). Earlier requests are counted as skipped.
    """
    kept: dict[str, Link] = {}
    chained = False
    last: tuple[int, object] | None = None
    seen = 0
    for number, value in _requests(entries):
        seen += 1
        last = (number, value)
        request, response = unwrap(value)
        if request is None:
            continue
        link = _link(number, request, response)
        chained = chained or link.previous is not None
        if not chained:
            kept.clear()
        response_id = field_of(response, "id")
        if isinstance(response_id, str):
            kept[response_id] = link
    if last is None:
        return None
    request, response = unwrap(last[1])
    chain: list[Link] = []
    previous = field_of(request, "previous_response_id")
    while isinstance(previous, str):
        if previous not in kept or kept[previous] in chain:
            raise report.error(
                (chain[-1].line if chain else last[0]),
                f"previous_response_id {previous!r} names no logged response; the conversation before it "
                "is not in the file",
            )
        chain.append(kept[previous])
        previous = kept[previous].previous
    if seen - 1 > len(chain):
        report.skipped["earlier request"] += seen - 1 - len(chain)
    if chain:
        report.notes.append(
            f"the last request continues {len(chain)} earlier request(s) by previous_response_id"
        )
    return last[0], last[1], tuple(reversed(chain))


def read_responses_log(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of the last request of a log (see the module docstring)."""
    found = _last_with_chain(entries, report)
    if found is None:
        return
    number, value, chain = found
    request, response = unwrap(value)
    if request is None or "input" not in request:
        raise report.error(number, "not an OpenAI Responses request: expected an object with 'input'")
    for item in request.get("tools") or []:
        found_schema = schema(
            field_of(item, "name"), field_of(item, "description"), field_of(item, "parameters")
        )
        if found_schema is None or field_of(item, "type") != "function":
            report.skip(f"tool of type {field_of(item, 'type')!r}")
        else:
            report.tools.append(found_schema)
    if isinstance(request.get("instructions"), str) and request["instructions"]:
        yield system(request["instructions"])
    mapper = ItemMapper(report, Calls(report))
    for link in (*chain, _link(number, request, response)):
        for item in link.items:
            yield from mapper.item(item, link.line)
    yield from mapper.flush()
