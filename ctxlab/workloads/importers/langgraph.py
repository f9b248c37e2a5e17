"""LangGraph / LangChain threads (such as deer-flow's thread files), as OpenAI chat messages.

A thread is a JSON object whose `values.messages` (or `messages`) lists serialised LangChain
messages, or a bare list of them: `type` `human`, `ai`, `tool`, `system`, `chat` or `function`
(or `dumpd`'s `{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`
form, or `messages_to_dict`'s `{"type": "ai", "data": {...}}`), `content` a string or a list of
parts, `tool_calls` (`name`, `args`, `id`) on AI messages, `tool_call_id` on tool messages. A
checkpoint (`channel_values.messages`, also under `checkpoint`) is read the same way; a list of
thread states (a thread's history, newest first as LangGraph lists it) is read from its first
state, the others counted; a JSONL file of several threads, one a line, is read from its line
`--session N` (0, the first, unless given), the others counted.

Mapping rules:
- `human` is a user message, `system` a system message (one after the first message is user text
  at its place, as for every format), `ai` an assistant message with its tool calls (`args`
  JSON-encoded), `tool` the result of its call (an error result when its `status` is `error`);
  a `chat` message takes the kind of its `role` (`user`, `assistant`, `system`, `developer`,
  `tool`, `function`); one of another role is an error at its message, as no model API takes it.
- A tool's result that is not message content (an object, a number) is its JSON text, and so is
  each part without a `type` that has no `text` (one that has is that text), and a `json` part's
  `json`: LangChain sends a tool's output that is not message content as its JSON text.
- An AI message's legacy `additional_kwargs.function_call` (OpenAI's function calling, which
  gives the call no id) is a call with the id `function_call_<index of the message>`; a
  `function` message (`FunctionMessage`) is the result of the AI message's call before it, and
  one with no such call is an error at its message.
- Text parts join the text; image parts (`image_url`, or `image` with a URL or base64 data, also
  in an Anthropic `source`) are image parts (one with neither is counted); `thinking` and
  `reasoning` parts (a Responses-API reasoning part's `summary` texts too) and
  `additional_kwargs.reasoning_content` are reasoning, kept apart from the text.
- An AI message's calls are its `tool_calls`; when it has none, its `tool_use` / `tool_call`
  content parts (how Anthropic models' AI messages carry them), else the OpenAI-form calls of
  `additional_kwargs.tool_calls` (what LangChain before `tool_calls` existed kept).
- A `refusal` part (the model declining, as LangChain keeps it from OpenAI and Anthropic models)
  is the assistant's text, and so is an AI message's `additional_kwargs.refusal` (Chat
  Completions' refusal), after its text, when its content has no `refusal` part: the readers of
  those APIs' own logs replay a refusal as what the model said.
- A tool the provider's server ran within the response is a call and its result, as the
  Anthropic reader reads them (`anthropic`): a `server_tool_use` / `mcp_tool_use` part (Anthropic
  models' own blocks) or LangChain's standard `server_tool_call` part is a call (`input` or
  `args` its arguments), and its result part (`web_search_tool_result`, `mcp_tool_result` and
  the other `*_tool_result` blocks, or a `server_tool_result` naming it by `tool_call_id`) is its
  tool message at its place: the AI message is split there, the text and server calls before
  the result, the result, then the rest as the next assistant message, which carries the
  message's own calls (none when nothing is left). A result block's text is the Anthropic
  reader's; a `server_tool_result`'s `output` is read alike (a string as it is, none ''), but a
  file search's results, which the Responses reader gives (`responses.file_search_results`);
  its `status` `error` makes it an error result. A result answering no call before it is an
  error at the thread.
- OpenAI Responses output items that langchain-openai keeps (in `content`, `output_version=
  "responses/v1"`; in `additional_kwargs` `tool_outputs` and `reasoning`, `"v0"`) are read as the
  Responses reader reads them (`langgraph_items`): a server-run call with its output is a call
  and its result, ending its piece as a result part does; a computer call is a call; others counted.
- Other content parts (audio, files) are skipped and counted.
- `invalid_tool_calls` (calls the model wrote but that could not be parsed) are calls, their
  arguments as written, when a tool message answers them; the others are skipped and counted,
  as are `remove` markers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers.anthropic import is_server_result, server_output, server_result
from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    call,
    field_of,
    name_of,
    object_of,
    session_entry,
    system,
    text_of,
    text_only,
    tool,
    user,
)
from ctxlab.workloads.importers.langgraph_content import message_body, read_parts, tool_result
from ctxlab.workloads.importers.langgraph_items import (
    Items,
    carried,
    computer_output,
    with_kept_items,
)
from ctxlab.workloads.importers.responses import file_search_results

KINDS = {
    "human": "human",
    "HumanMessage": "human",
    "HumanMessageChunk": "human",
    "ai": "ai",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "tool": "tool",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "system": "system",
    "SystemMessage": "system",
    "SystemMessageChunk": "system",
    "chat": "chat",
    "ChatMessage": "chat",
    "ChatMessageChunk": "chat",
    "function": "function",
    "FunctionMessage": "function",
    "FunctionMessageChunk": "function",
    "remove": "remove",
    "RemoveMessage": "remove",
}


ROLES = {
    "user": "human",
    "human": "human",
    "assistant": "ai",
    "ai": "ai",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "function",
}
"""The kind of a `chat` message, by its `role` (a role not here keeps the kind `chat`, refused)."""


def _unwrap(message: object) -> tuple[str | None, Mapping[str, Any]]:
    """A message's kind and fields, from either serialised form."""
    if not isinstance(message, Mapping):
        return None, {}
    fields: Mapping[str, Any] = message
    kind = KINDS.get(str(message.get("type")))
    if message.get("lc") == 1 and isinstance(message.get("kwargs"), Mapping):
        ident = message.get("id")
        fields = message["kwargs"]
        kind = KINDS.get(str(ident[-1] if isinstance(ident, list) and ident else None))
    elif kind is not None and "content" not in message and isinstance(message.get("data"), Mapping):
        fields = message["data"]  # messages_to_dict's form, {"type", "data"}
    if kind == "chat":
        return ROLES.get(str(fields.get("role")), "chat"), fields
    if kind == "function" and not isinstance(fields.get("name"), str):
        return None, fields  # a FunctionMessage names its function; a tool schema's `type` is not one
    return kind, fields


def _state(value: object) -> object:
    """The state holding a thread's messages: a checkpoint's channel values, or the newest
    state of a history list."""
    if isinstance(value, list) and value and all(isinstance(v, Mapping) and "values" in v for v in value):
        value = value[0]
    for path in (("checkpoint", "channel_values"), ("channel_values",), ("values",)):
        found = field_of(value, *path)
        if found is not None:
            return found
    return value


def thread_messages(value: object) -> list[Any] | None:
    """The serialised messages of a thread, or None when `value` is not one."""
    state = _state(value)
    messages = state.get("messages") if isinstance(state, Mapping) else state
    if not isinstance(messages, list) or not messages:
        return None
    return messages if all(_unwrap(m)[0] is not None for m in messages[:5]) else None


def read_langgraph(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of a thread (see the module docstring)."""
    for number, value in session_entry(entries, report, "further thread"):
        messages = thread_messages(value)
        if messages is None:
            raise report.error(
                number, "not a LangGraph thread: expected values.messages of LangChain messages"
            )
        if isinstance(value, list) and messages is not value:
            for _ in value[1:]:
                report.skip("earlier thread state")
        yield from thread_wires(messages, number, report)


def thread_wires(messages: list[Any], number: int, report: Report) -> Iterator[Wire]:
    """The thread's messages in order (the module docstring's rules); every error is at the
    line of the thread's entry, `number`, naming the message by its index."""
    calls = Calls(report)
    answered = {str(_unwrap(m)[1].get("tool_call_id")) for m in messages if _unwrap(m)[0] == "tool"}
    function: str | None = None  # the id of the last AI message's legacy function call, unanswered
    for index, message in report.each(messages):
        kind, fields = _unwrap(message)
        if kind == "tool":
            error = fields.get("status") == "error"
            call_id = calls.answer(fields.get("tool_call_id"), number, key="tool_call_id")
            screenshot = computer_output(fields, call_id, report)
            yield screenshot or tool(call_id, tool_result(fields.get("content"), report), error=error)
        elif kind == "function":
            call_id = _function_answered(function, fields, f"message {index}", number, report)
            yield tool(call_id, tool_result(fields.get("content"), report))
            function = None
        elif kind == "ai":
            wires, function = _ai(fields, index, calls, answered, number=number, report=report)
            yield from wires
        elif kind in {"human", "system"}:
            body = message_body(fields.get("content"), report)
            yield user(body) if kind == "human" else system(text_only(body, report, "system"))
        elif kind == "remove":
            report.skip("remove")
        elif kind == "chat":
            raise report.error(
                number,
                f"message {index}: a ChatMessage with role {fields.get('role')!r}, which no model API "
                "takes; set its role to user, assistant or system (the one it plays), or remove it",
            )
        else:
            raise report.error(number, f"message {index}: unknown message type {field_of(message, 'type')!r}")


def _ai(
    fields: Mapping[str, Any], index: int, calls: Calls, answered: set[str], *, number: int, report: Report
) -> tuple[list[Wire], str | None]:
    """An AI message, split after each server tool's result (`_pieces`), and the id of its legacy
    function call (`additional_kwargs.function_call`, one call with no id: it gets one from its
    message's place, `function_call_<index>`), None when it has none.

    Invariants: each server tool's result (a result part, or a Responses item's own output)
    follows the assistant message holding its call (or the results before it, when two results
    follow each other); the message's own calls (and its refusal in `additional_kwargs`), then
    its Responses items' client calls, are on its last assistant message, which the tool
    messages after it answer; an AI message with no server tool is one assistant message."""
    *before, last = _pieces(with_kept_items(fields), field_of(fields, "additional_kwargs", "refusal"))
    names: dict[str, str] = {}
    wires: list[Wire] = []
    used: list[Mapping[str, Any]] = []  # a client tool's call parts, wherever they are, call last
    items = Items(report, calls)  # its Responses items (`langgraph_items`)
    for piece in before:
        read = read_parts(piece[:-1], report)
        used += read.used
        items.read(read.items)
        listed = _server_calls(read.server, calls, names)
        ran, result = _answer(piece[-1], items, names, number)
        if listed or ran or not read.empty():
            wires.append(assistant(text_only(read.body(), report, "assistant"), listed + ran, read.thought()))
        wires.append(result)
    read = read_parts(last, report)
    items.read(read.items)
    listed = _server_calls(read.server, calls, names)
    used += read.used
    listed += [call(calls.declare(i), n, a) for i, n, a in _calls(fields, used, answered, report)]
    listed += items.client
    function = field_of(fields, "additional_kwargs", "function_call")
    legacy = calls.declare(f"function_call_{index}") if isinstance(function, Mapping) else None
    if legacy is not None:
        listed.append(call(legacy, str(function.get("name")), function.get("arguments") or "{}"))
    if listed or not (read.empty() and wires):
        wires.append(assistant(text_only(read.body(), report, "assistant"), listed, read.thought()))
    _reasoning_kept(wires, text_of(field_of(fields, "additional_kwargs", "reasoning_content")))
    return wires, legacy


def _reasoning_kept(wires: list[Wire], reasoning: str) -> None:
    """`additional_kwargs.reasoning_content` as the reasoning of the message's first assistant
    message, when no content part gave any (reasoning comes before what the model wrote)."""
    said = [wire for wire in wires if wire["role"] == "assistant"]
    if reasoning and said and not any("reasoning_content" in wire for wire in said):
        said[0]["reasoning_content"] = reasoning


def _pieces(value: object, refusal: object) -> list[list[object]]:
    """An AI message's content cut after each server tool's result: every piece but the last
    ends with a result; the last holds the rest (maybe nothing) and, when the content has no
    `refusal` part, a refusal LangChain kept in `additional_kwargs` (Chat Completions' refusal),
    as a part."""
    pieces: list[list[object]] = [[]]
    parts: list[object] = value if isinstance(value, list) else [text] if (text := text_of(value)) else []
    for item in parts:
        pieces[-1].append(item)
        if _is_result(item):
            pieces.append([])
    if isinstance(refusal, str) and refusal and not any(field_of(p, "type") == "refusal" for p in parts):
        pieces[-1].append({"type": "refusal", "refusal": refusal})
    return pieces


def _is_result(item: object) -> bool:
    """A server tool's result: a result part (Anthropic's, `server_tool_result`) or a `carried` item."""
    kind = field_of(item, "type")
    return kind == "server_tool_result" or is_server_result(kind) or carried(item)


def _answer(item: object, items: Items, names: Mapping[str, str], number: int) -> tuple[list[Wire], Wire]:
    """The result ending a piece, after the calls it brings: a carried Responses item's own
    call, none for a result part (its call is a part before it)."""
    if isinstance(item, Mapping) and carried(item):
        ran, result = items.answered(item)
        return [ran], result
    return [], _server_result(item, items.calls, names, number, items.report)


def _server_calls(items: list[Mapping[str, Any]], calls: Calls, names: dict[str, str]) -> list[Wire]:
    """The calls of server tool call parts (`server_tool_use`, `mcp_tool_use`, LangChain's
    `server_tool_call`), each tool's name kept by its call id in `names`."""
    listed = []
    for item in items:
        call_id = calls.declare(str(item.get("id")))
        names[call_id] = str(item.get("name"))
        listed.append(call(call_id, names[call_id], _arguments(item)))
    return listed


def _server_result(item: object, calls: Calls, names: Mapping[str, str], number: int, report: Report) -> Wire:
    """The tool message of a server tool's result, as the Anthropic reader reads its blocks
    (`anthropic.server_result`); a `server_tool_result`'s `output` likewise (none is ''), a file
    search's results as the Responses reader gives them (`responses.file_search_results`), and
    its `status` `error` an error result.

    Raises:
        TraceError: the result answers no call before it."""
    if field_of(item, "type") != "server_tool_result":
        return server_result(item, calls, report, number)
    call_id = calls.answer(field_of(item, "tool_call_id"), number, key="tool_call_id")
    output = field_of(item, "output")
    if names.get(call_id) == "file_search" and isinstance(output, list):
        return tool(call_id, file_search_results(output), error=field_of(item, "status") == "error")
    text, error = ("", False) if output is None else server_output(output, report)
    return tool(call_id, text, error=error or field_of(item, "status") == "error")


def _function_answered(
    function: str | None, fields: Mapping[str, Any], where: str, number: int, report: Report
) -> str:
    """The id of the call a FunctionMessage (a legacy function's result) answers: the function
    call of the AI message before it.

    Raises:
        TraceError: that AI message made no function call, or its call has its result.
    """
    if function is None:
        raise report.error(
            number,
            f"{where}: a FunctionMessage (the result of function {fields.get('name')!r}) answers no "
            "function call: the AIMessage before it has no additional_kwargs.function_call awaiting "
            "a result; add the call there, or write the result as a ToolMessage with the "
            "tool_call_id of its call",
        )
    return function


def _calls(
    fields: Mapping[str, Any], used: list[Mapping[str, Any]], answered: set[str], report: Report
) -> Iterator[tuple[str, str, object]]:
    """An AI message's calls as (id, name, arguments), in the order of the module docstring."""
    invalid = fields.get("invalid_tool_calls") or []
    # LangChain keeps the raw calls in additional_kwargs too; those it could not parse are
    # the invalid_tool_calls, read below
    legacy = [] if invalid else field_of(fields, "additional_kwargs", "tool_calls")
    for item in map(object_of, fields.get("tool_calls") or used or legacy or []):
        function = item.get("function")
        if isinstance(function, Mapping):
            yield str(item.get("id")), name_of(function), function.get("arguments") or "{}"
        else:  # a call without a name is no call LangChain writes: refused, not named 'None'
            yield str(item.get("id")), name_of(item), _arguments(item)
    for item in invalid:
        if str(field_of(item, "id")) in answered:
            yield str(item.get("id")), str(field_of(item, "name")), field_of(item, "args") or "{}"
        else:
            report.skip("invalid_tool_calls")


def _arguments(item: Mapping[str, Any]) -> object:
    """A call's arguments: `args` of a LangChain tool call, `input` of a `tool_use` part."""
    return item.get("args") or item.get("input") or {}
