"""Anthropic Messages content (shared with Claude Code logs) and Anthropic Messages API request
logs, as OpenAI chat messages.

A request log is a JSON request, a JSON list of requests, or JSONL with one request a line; a
request may be wrapped as `{"request": {...}, "response": {...}}` (or `body`/`params`), or be
followed by its response as an entry of its own (a Messages response object: `type: message`, an
assistant `role`, `content` blocks); an entry that is no request, and a response that does not
follow a request without one, are errors at their line. A request whose call failed (its
response an error, such as the API's `{"type": "error", "error": {"type", "message"}}`, wrapped
with it or the entry after it; `request_log` lists the shapes) is counted as `failed request
(<error type>)` and joins no chain (`request_log` says why): the retry after it is the
conversation's next request, and a log whose last request failed gives the conversation as a
model last answered it. A log may hold several conversations (an agent's, its sub-agents', side
requests for a title or a quota check): the conversation taken is the last request of the chain
that ends latest among the chains of two requests or more, a chain being requests each
continuing the one before (its messages begin with all of that one's, or, after a compaction,
hold the summary it was answered with; `chains` states the rule).
Every other request is counted and skipped, and when some were outside that chain a note names
the line taken. A logged response to the request taken is its final assistant message; where the
request ends with an assistant message (a prefill), the response continues that message, and the
two are one assistant message.

claude-trace logs (`.claude-trace/log-*.jsonl`, Claude Code's API traffic) are request logs
too; `claude_trace` reads their lines.

Mapping rules (also Claude Code's):
- `system` (a string or text blocks) is the system prompt; `tools` (`name`, `description`,
  `input_schema`) are the tool schemas (server tools without a schema are skipped and counted).
- A user message's `tool_result` blocks are tool messages, in order, before the message's text
  and images (a user message of results alone gives no user message); a result's content is its
  text, or its text and image parts; `is_error` makes it an error result.
- An assistant message's `text` blocks join its text, `tool_use` blocks are its calls (`input`
  JSON-encoded), `thinking` is reasoning (kept apart), `redacted_thinking` is counted and skipped.
  A server-side `compaction` block's summary joins its text, after the history it replaced (the
  API sent the model the summary instead), with a note; a request's `context_management` edits,
  which the API applied server-side, are noted (the messages are replayed as the client sent them).
- Images (`image` with a base64 or URL source) are image parts. A `document` of text (a `text`
  or `content` source) and a `search_result` are text parts: their title (and a document's
  `context`, a search result's `source`) then their text, a blank line between. A PDF document,
  an image or document given by `file_id`, and a `container_upload` carry no text the lab can
  replay: they are counted and skipped.

A tool the API runs within one response (`server_tool_use`, `mcp_tool_use`) is a call, and its
result block (`mcp_tool_result`, `web_search_tool_result` and the other `*_tool_result` blocks) is
the call's tool message at its place, so the assistant message is split there: the text and calls
before the result, the result, then the rest as the next assistant message (`Answer`; a Claude
Code answer streamed over several lines is split alike). A result's text is its text blocks, a web search
result's title and URL (its `encrypted_content` is opaque, noted), a web fetch's document, or the
JSON of any other structured result; an `*_error` result or `is_error` makes it an error result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.core.messages.tools import NotJSONError
from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    call,
    content,
    data_url,
    field_of,
    image_part,
    listed,
    object_of,
    schema,
    system,
    text_of,
    text_part,
    tool,
    user,
)
from ctxlab.workloads.importers.chains import Chains, tell
from ctxlab.workloads.importers.claude_trace import Logged, is_trace_log, is_traced, traced
from ctxlab.workloads.importers.dialect import is_completion, openai_model, speaks_openai
from ctxlab.workloads.importers.request_log import (
    failed,
    failure,
    is_error,
    nothing_to_replay,
    unawaited,
    unwrap,
)


@dataclass(slots=True)
class AssistantParts:
    """An assistant message being assembled from content blocks."""

    texts: list[str] = field(default_factory=list)
    calls: list[Wire] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        """Nothing was added."""
        return not (self.texts or self.calls or self.reasoning)

    def wire(self) -> Wire:
        return assistant("".join(self.texts), self.calls, "\n\n".join(r for r in self.reasoning if r))


def _image(block: Mapping[str, Any]) -> Wire | None:
    source = block.get("source")
    if field_of(source, "type") == "base64":
        return image_part(data_url(str(field_of(source, "media_type")), text_of(field_of(source, "data"))))
    if field_of(source, "type") == "url":
        return image_part(text_of(field_of(source, "url")))
    return None


def add_assistant_blocks(parts: AssistantParts, value: object, calls: Calls, report: Report) -> None:
    """Add an assistant message's content (a string or blocks) to `parts`."""
    if isinstance(value, str):
        parts.texts.append(value)
        return
    for block in listed(value):
        kind = field_of(block, "type")
        if kind == "text":
            parts.texts.append(text_of(block.get("text")))
        elif kind == "tool_use":
            call_id = calls.declare(str(block.get("id")))
            parts.calls.append(call(call_id, str(block.get("name")), block.get("input") or {}))
        elif kind == "thinking":
            parts.reasoning.append(text_of(block.get("thinking")))
        elif kind == "compaction":  # the model's summary, which the API sends in place of the history
            parts.texts.append(text_of(block.get("content")))
            report.note_once(COMPACTED)
        else:
            report.skip(f"assistant block {kind!r}")


COMPACTED = (
    "a server-side compaction block: its summary is replayed as the assistant's text, after the "
    "history it replaced (the API sent the model the summary in place of that history; the "
    "strategies replayed decide what of it a request keeps)"
)


SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})
"""Blocks of a call the API runs within the response (its result a block of the same message)."""


def is_server_result(kind: object) -> bool:
    """Whether a block of type `kind` is a server tool's result (`mcp_tool_result` and the
    `*_tool_result` blocks, a client's `tool_result` aside)."""
    return kind == "mcp_tool_result" or (
        isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result"
    )


def assistant_messages(value: object, calls: Calls, report: Report, line: int | None) -> Iterator[Wire]:
    """An assistant message of a request log: one assistant message, split after each server
    tool call that has its result within it (see the module docstring). Every result follows
    the message that holds its call (or the results alone, when the call closed an earlier
    message); an empty message is one empty assistant message."""
    answer = Answer(calls, report)
    yield from answer.add(value, line)
    yield from answer.rest()


@dataclass(slots=True)
class Answer:
    """An assistant message read block by block (a request log's in one go, a Claude Code
    answer line by line), split after each server tool's result: `parts` is the message still
    being built, `split` whether a result closed an earlier part.

    Invariant: a server tool's result comes right after the message holding its call."""

    calls: Calls
    report: Report
    parts: AssistantParts = field(default_factory=AssistantParts)
    split: bool = False

    def add(self, value: object, line: int | None) -> Iterator[Wire]:
        """The messages content `value` (a string or blocks) completes: before each server tool's
        result, the message built so far (when it holds anything), then the result."""
        if not isinstance(value, list):
            add_assistant_blocks(self.parts, value, self.calls, self.report)
            return
        for block in value:
            kind = field_of(block, "type")
            if kind in SERVER_CALLS:
                call_id = self.calls.declare(str(field_of(block, "id")))
                self.parts.calls.append(
                    call(call_id, str(field_of(block, "name")), field_of(block, "input") or {})
                )
            elif is_server_result(kind):
                if not self.parts.empty():
                    yield self.parts.wire()
                self.parts, self.split = AssistantParts(), True
                yield server_result(block, self.calls, self.report, line)
            else:
                add_assistant_blocks(self.parts, [block], self.calls, self.report)

    def rest(self) -> Iterator[Wire]:
        """The message still being built: none when a server tool's result closed the answer and
        nothing came after it."""
        if not (self.parts.empty() and self.split):
            yield self.parts.wire()


def server_result(block: object, calls: Calls, report: Report, line: int | None) -> Wire:
    """The tool message of a server tool's result block (the module docstring's rules).

    Raises:
        TraceError: the block answers no call before it.
    """
    call_id = calls.answer(field_of(block, "tool_use_id"), line, key="tool_use_id")
    text, error = server_output(field_of(block, "content"), report)
    return tool(call_id, text, error=error or field_of(block, "is_error") is True)


def server_output(found: object, report: Report) -> tuple[str, bool]:
    """The text of a server tool result's `content` (the module docstring's rules), and whether
    it is an error (an `*_error` result)."""
    error = str(field_of(found, "type")).endswith("_error")
    if isinstance(found, list):
        return _joined([_server_item(item, report) for item in found]), error
    if field_of(found, "type") == "web_fetch_result":
        document = field_of(found, "content")
        text = _document_text(field_of(document, "source"))
        if text is None:
            report.skip(f"web fetch result {_kind(document)}")
        return _joined([text_of(field_of(found, "url")), text or ""]), error
    return (found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)), error


def _server_item(item: object, report: Report) -> str:
    """One item of a server tool's result list as text."""
    kind = field_of(item, "type")
    if kind == "text":
        return text_of(field_of(item, "text"))
    if kind == "web_search_result":
        report.skip("web search result's encrypted_content (opaque; its title and URL are kept)")
        return _joined([text_of(field_of(item, "title")), text_of(field_of(item, "url"))])
    return json.dumps(item, ensure_ascii=False)


def user_blocks(value: object, calls: Calls, report: Report, line: int | None) -> Iterator[Wire]:
    """The tool messages and then the user message of a user message's content."""
    if isinstance(value, str):
        yield user(value)
        return
    parts: list[Wire] = []
    for block in listed(value):
        kind = field_of(block, "type")
        if kind == "tool_result":
            call_id = calls.answer(block.get("tool_use_id"), line, key="tool_use_id")
            yield tool(call_id, _result(block.get("content"), report), error=block.get("is_error") is True)
        elif (part := _part(block)) is not None:
            parts.append(part)
        else:
            report.skip(f"user block {_kind(block)}")
    if parts:
        yield user(content(parts))


def _result(value: object, report: Report) -> str | list[Wire]:
    if not isinstance(value, list):
        return text_of(value)
    parts: list[Wire] = []
    for block in value:
        if (part := _part(block)) is not None:
            parts.append(part)
        else:
            report.skip(f"tool result block {_kind(block)}")
    return content(parts)


def _part(block: object) -> Wire | None:
    """The content part of a text, image, text document or search result block; None for any
    other block."""
    kind = field_of(block, "type")
    if kind == "text":
        return text_part(text_of(field_of(block, "text")))
    if kind == "image" and isinstance(block, Mapping):
        return _image(block)
    if kind == "document":
        body = _document_text(field_of(block, "source"))
        head = [text_of(field_of(block, "title")), text_of(field_of(block, "context"))]
        return None if body is None else text_part(_joined([*head, body]))
    if kind == "search_result":
        head = [text_of(field_of(block, "title")), text_of(field_of(block, "source"))]
        return text_part(_joined([*head, _blocks_text(field_of(block, "content"))]))
    return None


def _document_text(source: object) -> str | None:
    """The text of a document's source; None for a PDF (base64, URL or file) or a file."""
    kind = field_of(source, "type")
    if kind == "text":
        return text_of(field_of(source, "data"))
    if kind == "content":
        return _blocks_text(field_of(source, "content"))
    return None


def _blocks_text(value: object) -> str:
    """A string, or the text of a list of text blocks, joined with nothing between as every
    importer joins parts (`base.text_only`)."""
    if isinstance(value, list):
        return "".join(text_of(object_of(b).get("text")) for b in value)
    return text_of(value)


def _joined(texts: list[str]) -> str:
    return "\n\n".join(t for t in texts if t)


def _kind(block: object) -> str:
    """How a skipped block is counted: its type, and for an image or document its source's."""
    kind = field_of(block, "type")
    source = field_of(block, "source", "type")
    if kind in {"image", "document"} and isinstance(source, str):
        return f"{kind!r} ({source} source)"
    return repr(kind)


def is_messages_request(value: object) -> bool:
    """An Anthropic Messages request: `messages` with Anthropic content, no OpenAI-only roles."""
    request, _ = unwrap(value[-1] if isinstance(value, list) and value else value)
    messages = field_of(request, "messages")
    if not isinstance(messages, list) or not request or "input" in request:
        return False
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") not in {"user", "assistant"}:
            return False
        if "tool_calls" in message:
            return False
    blocks = {
        field_of(b, "type") for m in messages if isinstance(m.get("content"), list) for b in m["content"]
    }
    tools = request.get("tools") or []
    return bool(
        blocks & {"tool_use", "tool_result", "thinking"}
        or ("max_tokens" in request and not openai_model(request))
        or "system" in request
        or any(isinstance(t, Mapping) and "input_schema" in t for t in tools)
    )


def is_messages_log(values: list[object]) -> bool:
    """A request log: its last entry a Messages request, or a claude-trace log
    (`claude_trace.is_trace_log`) when its entries are claude-trace lines; never a log holding
    what only OpenAI's Chat Completions takes (`dialect`), such as its responses."""
    flat = [item for value in values for item in (value if isinstance(value, list) else [value])]
    if any(is_traced(value) for value in flat):
        return is_trace_log(flat)
    requests = [value for value in flat if not (is_response(value) or is_error(value))]
    openai = any(is_completion(v) or speaks_openai(unwrap(v)[0] or {}) for v in requests)
    return bool(requests) and not openai and is_messages_request(requests[-1])


def is_response(value: object) -> bool:
    """A Messages API response logged as an entry of its own: `type: message`, an assistant
    `role` and `content` blocks (a request has `messages` instead)."""
    return (
        isinstance(value, Mapping)
        and value.get("type") == "message"
        and value.get("role") == "assistant"
        and isinstance(value.get("content"), list)
        and "messages" not in value
    )


def _logged(value: object, number: int, report: Report) -> Logged:
    """An entry of a log read as a request (see the module docstring).

    Raises:
        TraceError: an entry that is no request, or a request that cannot be read.
    """
    if isinstance(value, Mapping) and is_traced(value):
        return traced(value, number, report)
    request, response = unwrap(value)
    if request is None or not isinstance(request.get("messages"), list):
        raise report.error(number, "not an Anthropic Messages request: expected an object with 'messages'")
    return Logged(request, response)


def read_anthropic_log(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of a log: the last request of the chain that ends latest (`chains`)."""
    chains: Chains[tuple[Mapping[str, Any], object]] = Chains()
    last = None
    pending: tuple[int, Logged] | None = None  # the last request read, until its response may follow
    for number, value in entries:
        last = number
        for item in value if isinstance(value, list) else [value]:
            if is_response(item) or is_error(item):
                pending = _answered(pending, item, number, report)
                continue
            if pending is not None:
                _chain(chains, *pending, report)
            logged, pending = _logged(item, number, report), None
            if logged.request is None:
                report.skip(logged.skipped)
            else:
                pending = number, logged
    if pending is not None:
        _chain(chains, *pending, report)
    choice = chains.choice()
    if choice is None:
        if last is not None:
            raise nothing_to_replay(last, "Messages request with a response", report)
        return
    tell(choice, report)
    request, response = choice.payload
    yield from _request(request, response, choice.line, report)


def _answered(
    pending: tuple[int, Logged] | None, response: object, number: int, report: Report
) -> tuple[int, Logged]:
    """The request read last, answered by a response or an error logged as the entry after it.

    Raises:
        TraceError: no request without a response comes right before the response.
    """
    if pending is None or pending[1].response is not None:
        raise unawaited("Messages", response, number, report)
    return pending[0], Logged(pending[1].request, response)


def _chain(
    chains: Chains[tuple[Mapping[str, Any], object]], number: int, logged: Logged, report: Report
) -> None:
    """Add a request to the chains, or count it when its call failed (`request_log`)."""
    if (name := failure(logged.response)) is not None:
        report.skip(failed(name))
    elif logged.request is not None:
        said = answer_texts(logged.response)
        chains.add(number, logged.request["messages"], (logged.request, logged.response), answer=said)


def answer_texts(response: object) -> list[str]:
    """What a logged Messages response wrote that a later request may carry (`chains`): its text
    blocks, and a compaction block's summary."""
    blocks = field_of(response, "content")
    kinds = {"text": "text", "compaction": "content"}
    found = [field_of(b, kinds.get(field_of(b, "type"), "")) for b in blocks or [] if isinstance(b, Mapping)]
    return [text for text in found if isinstance(text, str)]


def _note_edits(request: Mapping[str, Any], report: Report) -> None:
    """A note for each kind of context edit the request asks the API to make server-side."""
    for edit in field_of(request.get("context_management"), "edits") or []:
        report.note_once(
            f"the log's requests ask the API to edit the context ({field_of(edit, 'type')}): it did so "
            "server-side, so the model saw less than the requests hold; they are replayed as the "
            "client sent them (the anthropic-clear preset reproduces tool-result clearing)"
        )


def _request(request: Mapping[str, Any], response: object, number: int, report: Report) -> Iterator[Wire]:
    _note_edits(request, report)
    for item in listed(request.get("tools")):
        name, description = field_of(object_of(item), "name"), field_of(item, "description")
        try:
            found = schema(name, description, field_of(item, "input_schema"))
        except NotJSONError as error:
            raise report.error(number, str(error)) from None
        if found is not None and "input_schema" in item:
            report.tools.append(found)
        elif item.get("type") not in (None, "custom"):  # a server tool: its type names it
            report.skip("server tool")
        else:
            report.skip("tool without an input_schema (the API refuses a request declaring one)")
    prompt = _blocks_text(request.get("system"))
    if prompt:
        yield system(prompt)
    calls = Calls(report)
    answer = None if (said := field_of(response, "content")) is None else _blocks(said)  # text: a block
    prefill: list[object] = []
    for index, message in report.each(request["messages"]):
        role = field_of(message, "role")
        if role == "assistant" and isinstance(answer, list) and index == len(request["messages"]) - 1:
            prefill = _blocks(message.get("content"))
        elif role == "user":
            yield from user_blocks(message.get("content"), calls, report, number)
        elif role == "assistant":
            yield from assistant_messages(message.get("content"), calls, report, number)
        else:
            raise report.error(
                number, f"messages[{index}]: unknown role {role!r}; expected user or assistant"
            )
    if isinstance(answer, list):
        yield from assistant_messages([*prefill, *answer], calls, report, number)


def _blocks(value: object) -> list[object]:
    """An assistant message's content as blocks (a string is one text block)."""
    if isinstance(value, str):
        return [{"type": "text", "text": value}] if value else []
    return list(listed(value))
