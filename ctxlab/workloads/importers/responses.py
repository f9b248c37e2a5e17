"""OpenAI Responses items (shared by Codex CLI rollouts) and OpenAI Responses API request logs,
as OpenAI chat messages.

A request log is a JSON request, a JSON list of requests, or JSONL with one request a line, each
possibly wrapped as `{"request": {...}, "response": {...}}` (or `body`/`params`); the request
holding the conversation (its `instructions` and `input`) is the last of the chain ending latest
among chains of two requests or more, as in an Anthropic log (`chains`), so a side request a
client sends after its agent's last (a title) is not taken for it; the others are counted and
skipped, and a logged response's `output` items end it. A request that continues a response by
`previous_response_id` sends only what is new: its conversation is the chain's requests' inputs,
each followed by its response's output, oldest first (a chain onto a response the log does not
hold is an error at that request's line); `instructions` and `tools` are the last request's, as
the API does not carry them over. A request that adds to a `conversation` (an id, or `{id}`)
sends only what is new too: its conversation is every logged request of that conversation, in
order, each followed by its response's output (what the conversation held before the first
logged one is not in the file, and a note says so). A request of a stored `prompt` (which may
set the model and instructions) is a request too; the prompt's text is not in the log, as a
note says.

Mapping rules for items (also Codex's):
- A `message` item (or an item with only `role` and `content`) is a message of its role;
  `developer` is `system` (one after the first message is user text at its place, as for every
  format); `input_text`/`output_text` parts join the text, `input_image` parts are image parts.
- `function_call` items are calls of the assistant message they follow (an assistant message
  and the calls after it are one message, so parallel calls stay together); `custom_tool_call`
  is a call with arguments `{"input": "<its input>"}`; a built-in tool's call is a call of that
  tool with its `action` (or `operation`, or `arguments`) as arguments: `local_shell_call` of
  `local_shell`, `shell_call` of `shell`, `apply_patch_call` of `apply_patch`, `computer_call`
  of `computer`, `tool_search_call` of `tool_search` (Codex). A call into a
  `namespace` (Codex offers each MCP server's tools as one, `mcp__<server>__`) is named as Codex
  names it where the namespace cannot stay apart (`flat_name`: `mcp__<server>__<tool>`, the name
  MCP tools had before namespaces), and so are the functions of a request's `namespace` tool.
- `function_call_output`, `custom_tool_call_output`, `local_shell_call_output`,
  `shell_call_output`, `apply_patch_call_output`, `computer_call_output` and
  `tool_search_output` items are the results of their `call_id`s (a `tool_search_output`
  without one answers the last tool search): the output string as recorded, or an output of
  content parts read as a message's (text and `input_image` parts; others counted), or a
  screenshot's image, or a structured output's; a shell call's result is each command's stdout
  and stderr, a patch's that `failed` an error; a tool search's result is the JSON of the tools
  it found.
- A call the server runs carries its output: `mcp_call` is a call of its `name` answered by its
  `output` (its `error`, an error result), `code_interpreter_call` a call of `code_interpreter`
  with its `code`, answered by its logs and images. Its assistant message ends there.
- A `refusal` part is the assistant's text.
- An `agent_message` (Codex's message from another agent) is a user message of its text parts
  joined by a line break, as Codex sends it to a model that does not take agent messages; one
  with encrypted content is counted.
- An `item_reference` is the item of that `id` among the logged responses' outputs (a request
  log keeps those items, as the API does); one the log does not hold is an error, but for a
  reasoning item's (`rs_`), which holds no readable text: counted.
- `reasoning` items are reasoning (their summary text, or the `reasoning_text` of their
  `content` when they have no summary, as open-weight models write them) of the next assistant
  message, kept apart from its text. Other items (web searches, whose results the API does not
  return, MCP tool listings, ...) are counted and skipped.
"""

from __future__ import annotations

import json
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
from ctxlab.workloads.importers.chains import Chains, Choice

CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "computer_call",
        "tool_search_call",
        "shell_call",
        "apply_patch_call",
    }
)
OUTPUTS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "computer_call_output",
        "tool_search_output",
        "shell_call_output",
        "apply_patch_call_output",
    }
)
ANSWERED = frozenset({"mcp_call", "code_interpreter_call"})
"""Calls the server runs, each item carrying its own output."""
BUILT_IN = {
    "local_shell_call": "local_shell",
    "computer_call": "computer",
    "tool_search_call": "tool_search",
    "code_interpreter_call": "code_interpreter",
    "shell_call": "shell",
    "apply_patch_call": "apply_patch",
}
"""The tool a built-in call item calls."""


def _arguments(kind: str, item: Mapping[str, Any]) -> tuple[str, object]:
    """The tool name and the arguments of a call item."""
    if kind == "custom_tool_call":
        return flat_name(item.get("namespace"), item.get("name")), {"input": text_of(item.get("input"))}
    if kind == "code_interpreter_call":
        return BUILT_IN[kind], {"code": text_of(item.get("code"))}
    if kind in BUILT_IN:
        return BUILT_IN[kind], item.get("action") or item.get("operation") or item.get("arguments") or {}
    return flat_name(item.get("namespace"), item.get("name")), item.get("arguments") or "{}"


def _shell_output(value: object) -> str:
    """The text of a shell call's output: each command's stdout then stderr, a line apart (a
    string output as recorded)."""
    if not isinstance(value, list):
        return text_of(value)
    texts = (text_of(field_of(run, key)) for run in value for key in ("stdout", "stderr"))
    return "\n".join(text for text in texts if text)


def flat_name(namespace: object, name: object) -> str:
    """A tool's name; one in a namespace (Codex's MCP tools: `mcp__<server>__`) is named as Codex
    names it where the namespace cannot stay apart: the namespace without trailing `_`, `__`,
    the name without leading `_`, as MCP tools were named before namespaces."""
    if isinstance(namespace, str) and namespace:
        return f"{namespace.rstrip('_')}__{str(name).lstrip('_')}"
    return str(name)


@dataclass(slots=True)
class ItemMapper:
    """Maps Responses items one at a time, holding back the assistant message being built."""

    report: Report
    calls: Calls
    texts: list[str] = field(default_factory=list)
    listed: list[Wire] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    open: bool = False
    known: Mapping[str, Any] = field(default_factory=dict)
    listed_id: str = ""
    search: str | None = None

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
        elif kind in CALLS or kind in ANSWERED:
            self.open = True
            self.listed.append(self._call(kind, item))
            if kind in ANSWERED:
                yield from self.flush()
                yield self._result(kind, item, self.listed_id)
        elif kind in OUTPUTS:
            yield from self.flush()
            answered = item.get("call_id") or (self.search if kind == "tool_search_output" else None)
            yield self._result(kind, item, self.calls.answer(answered, line))
        elif kind == "item_reference":
            yield from self._reference(item.get("id"), line)
        elif kind == "agent_message":
            yield from self._agent_message(item.get("content"))
        else:
            self.report.skip(f"item {kind!r}")

    def _call(self, kind: str, item: Mapping[str, Any]) -> Wire:
        """The call of a call item (the name the tool has for a built-in one)."""
        given = item.get("call_id") or item.get("id") or f"{kind}_{len(self.calls.ids)}"
        call_id = self.calls.declare(str(given))
        self.listed_id = call_id
        if kind == "tool_search_call":
            self.search = call_id
        name, arguments = _arguments(kind, item)
        return call(call_id, name, arguments)

    def _result(self, kind: str, item: Mapping[str, Any], call_id: str) -> Wire:
        """The result of a call: an output item's, or that a server-run call carries."""
        if kind == "tool_search_output":
            return tool(call_id, json.dumps(item.get("tools") or [], ensure_ascii=False))
        if kind == "mcp_call" and item.get("error"):
            error = item["error"]
            return tool(call_id, error if isinstance(error, str) else json.dumps(error), error=True)
        if kind == "code_interpreter_call":
            return tool(call_id, self._interpreter(item.get("outputs")))
        if kind == "shell_call_output":
            return tool(call_id, _shell_output(item.get("output")))
        failed = kind == "apply_patch_call_output" and item.get("status") == "failed"
        return tool(call_id, self._output(item.get("output")), error=failed)

    def _interpreter(self, outputs: object) -> str | list[Wire]:
        """A code interpreter's outputs: its logs as text, its images as image parts."""
        parts: list[Wire] = []
        for output in outputs if isinstance(outputs, list) else []:
            if field_of(output, "type") == "logs":
                parts.append(text_part(text_of(output.get("logs"))))
            elif field_of(output, "type") == "image" and isinstance(output.get("url"), str):
                parts.append(image_part(output["url"]))
            else:
                self.report.skip(f"code interpreter output {field_of(output, 'type')!r}")
        return content(parts)

    def _agent_message(self, parts: object) -> Iterator[Wire]:
        """Another agent's message (Codex's sub-agents) as the user message of its text, as Codex
        sends it to a model that does not take agent messages; an encrypted one is counted."""
        listed = parts if isinstance(parts, list) else []
        if not listed or any(field_of(p, "type") != "input_text" for p in listed):
            self.report.skip("agent_message without plain text (encrypted)")
            return
        yield from self.flush()
        yield user("\n".join(text_of(p.get("text")) for p in listed))

    def _reference(self, ref: object, line: int | None) -> Iterator[Wire]:
        """The item an `item_reference` names, from the log's responses; one the log does not
        hold is an error, but for a reasoning item's (`rs_`), counted: it holds no text."""
        target = self.known.get(ref) if isinstance(ref, str) else None
        if target is not None and field_of(target, "type") != "item_reference":
            yield from self.item(target, line)
        elif isinstance(ref, str) and ref.startswith("rs_"):
            self.report.skip("item_reference to a reasoning item the log does not hold")
        else:
            raise self.report.error(
                line,
                f"item_reference {ref!r} names an item that no logged response holds; log each "
                "request with its response, or send the items themselves",
            )

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
        message's), or a screenshot's image, or a structured output's `content` (or `output`)."""
        if isinstance(value, str):
            return value
        if isinstance(value, Mapping) and isinstance(value.get("image_url"), str):
            return [image_part(value["image_url"])]
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
            elif kind == "refusal":
                parts.append(text_part(text_of(part.get("refusal"))))
            elif kind == "input_image" and isinstance(part.get("image_url"), str):
                parts.append(image_part(part["image_url"]))
            else:
                self.report.skip(f"content part {kind!r}")
        return content(parts)


def is_responses_request(value: object) -> bool:
    """An OpenAI Responses request: `input`, with `model`, `instructions` or a stored `prompt`
    (which may set both)."""
    request, _ = unwrap(value[-1] if isinstance(value, list) and value else value)
    if not request or "input" not in request:
        return False
    return bool({"model", "instructions", "prompt"} & request.keys())


@dataclass(frozen=True, slots=True)
class Link:
    """One logged request of a conversation chained with `previous_response_id`: its line, the
    response it continues, and its own items (its input, then its response's output)."""

    line: int
    previous: str | None
    items: tuple[Any, ...]


def _link(number: int, request: Mapping[str, Any], response: object, report: Report) -> Link:
    """A logged request's link.

    Raises:
        TraceError: its `input` is neither a string nor a list of items.
    """
    given = request.get("input")
    if given is not None and not isinstance(given, str | list):
        raise report.error(number, f"'input' must be a string or a list of items, got {type(given).__name__}")
    items: list[Any] = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
    if isinstance(response, Mapping):
        items.extend(response.get("output") or [])
    previous = request.get("previous_response_id")
    return Link(number, previous if isinstance(previous, str) else None, tuple(items))


def _requests(entries: Iterator[Entry]) -> Iterator[tuple[int, object]]:
    for number, value in entries:
        for item in value if isinstance(value, list) else [value]:
            yield number, item


def _last_with_chain(
    entries: Iterator[Entry], report: Report, known: dict[str, Any]
) -> tuple[int, object, tuple[Link, ...]] | None:
    """The request holding the conversation, with the links it continues, oldest first (none when
    it sends the whole conversation); `known` gets every logged response's output items that have
    an `id`, for `item_reference`.

    The request is the last of the chain ending latest among chains of two requests or more,
    as for an Anthropic log (`chains`): a side request asked once (a title, a summary) that a
    client sends after its agent's last one is not the conversation. A request continues the
    one whose response its `previous_response_id` names, the one before it in its
    `conversation`, or one whose whole `input` its own begins with (a client that resends the
    conversation). Only the previous request is kept until a request chains onto a response;
    from then on, every request with a logged response id is kept (each sends only what is new,
    so they hold the conversation once). So is every request of a `conversation`, for the same
    reason. The other requests are counted as skipped.
    """
    kept: dict[str, Link] = {}
    threads: dict[str, list[Link]] = {}
    orders: dict[str, int] = {}  # a response's id, or a conversation's, -> its request's order
    chains: Chains[tuple[int, object]] = Chains()
    chained = False
    for number, value in _requests(entries):
        request, response = unwrap(value)
        if request is None:
            continue
        link = _link(number, request, response, report)
        chained = chained or link.previous is not None
        if not chained:
            kept.clear()
        thread = _conversation(request)
        after = orders.get(link.previous or "") if thread is None else orders.get(thread)
        order = len(chains.links)
        given = request.get("input")
        chains.add(number, given if isinstance(given, list) else [given], (number, value), after=after)
        response_id = field_of(response, "id")
        if isinstance(response_id, str):
            kept[response_id] = link
            orders[response_id] = order
        if thread is not None:
            threads.setdefault(thread, []).append(link)
            orders[thread] = order
        known.update(_identified(field_of(response, "output")))
    choice = chains.choice()
    if choice is None:
        return None
    number, value = choice.payload
    request, _ = unwrap(value)
    thread = _conversation(request)
    chain = threads[thread][:-1] if thread is not None else _previous(request, kept, number, report)
    _tell(choice, len(chain), thread, report)
    return number, value, tuple(chain)


def _tell(choice: Choice[tuple[int, object]], replayed: int, thread: str | None, report: Report) -> None:
    """Count the requests not taken (`replayed` of its chain are), and say which was taken."""
    if choice.earlier > replayed:
        report.skipped["earlier request"] += choice.earlier - replayed
    if choice.others:
        report.skipped["request outside the conversation (a side request or sub-agent)"] += choice.others
        report.notes.append(
            f"the conversation is the request at line {choice.line}: the last of the chain ending latest "
            f"({choice.depth} requests, each continuing the one before); {choice.others} requests in "
            f"{choice.chains} other chains (side requests, sub-agents) are skipped"
        )
    if replayed and thread is not None:
        report.notes.append(
            f"the last request continues {replayed} earlier request(s) of conversation {thread!r}; "
            "any items it held before the first logged request are not in the file"
        )
    elif replayed:
        report.notes.append(
            f"the last request continues {replayed} earlier request(s) by previous_response_id"
        )


def _conversation(request: object) -> str | None:
    """The id of the conversation a request adds to (`conversation`: an id or `{id}`), if any."""
    thread = field_of(request, "conversation")
    thread = field_of(thread, "id") if isinstance(thread, Mapping) else thread
    return thread if isinstance(thread, str) else None


def _previous(request: object, kept: dict[str, Link], line: int, report: Report) -> list[Link]:
    """The links a request continues by `previous_response_id`, oldest first.

    Raises:
        TraceError: a link names a response the log does not hold.
    """
    chain: list[Link] = []
    previous = field_of(request, "previous_response_id")
    while isinstance(previous, str):
        at = chain[-1].line if chain else line
        if previous in kept and (kept[previous] in chain or kept[previous].line == line):
            raise report.error(
                at,
                f"previous_response_id {previous!r} leads back to a request already in the chain, so "
                "the chain loops; a request continues an earlier response only (are ids repeated?)",
            )
        if previous not in kept:
            raise report.error(
                at,
                f"previous_response_id {previous!r} names no logged response; the conversation before it "
                "is not in the file",
            )
        chain.append(kept[previous])
        previous = kept[previous].previous
    return chain[::-1]


def _identified(items: object) -> Iterator[tuple[str, Any]]:
    for item in items if isinstance(items, list) else []:
        if isinstance(field_of(item, "id"), str):
            yield item["id"], item


def _tool_schemas(item: object, report: Report, namespace: object = None) -> None:
    """The schemas of a request's tool: a function's, or each function's of a `namespace`
    (named by `flat_name`); any other tool is counted."""
    kind = field_of(item, "type")
    if kind == "namespace" and namespace is None:
        for inner in field_of(item, "tools") or []:
            _tool_schemas(inner, report, field_of(item, "name"))
        return
    given = field_of(item, "name")
    name = flat_name(namespace, given) if isinstance(given, str) and given else None
    found = schema(name, field_of(item, "description"), field_of(item, "parameters"))
    if found is None or kind != "function":
        report.skip(f"tool of type {kind!r}")
    else:
        report.tools.append(found)


def read_responses_log(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of the last request of a log (see the module docstring)."""
    known: dict[str, Any] = {}
    found = _last_with_chain(entries, report, known)
    if found is None:
        return
    number, value, chain = found
    request, response = unwrap(value)
    if request is None or "input" not in request:
        raise report.error(number, "not an OpenAI Responses request: expected an object with 'input'")
    for item in request.get("tools") or []:
        _tool_schemas(item, report)
    if isinstance(request.get("instructions"), str) and request["instructions"]:
        yield system(request["instructions"])
    if isinstance(request.get("prompt"), Mapping):
        report.notes.append(
            f"the request uses the stored prompt {field_of(request, 'prompt', 'id')!r}: its text is "
            "not in the file, so the replay lacks what it adds (instructions, messages)"
        )
    mapper = ItemMapper(report, Calls(report), known=known)
    for link in (*chain, _link(number, request, response, report)):
        for item in link.items:
            yield from mapper.item(item, link.line)
    yield from mapper.flush()
