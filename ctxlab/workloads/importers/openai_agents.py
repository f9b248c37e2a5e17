"""OpenAI Agents SDK histories, as OpenAI chat messages: the input items an agent's run leaves,
as users keep them (`result.to_input_list()` dumped as a JSON list, or a session's items, the
same items, one a row of its `agent_messages` table as JSON).

A file is one JSON list of items, or JSONL of one item a line: the second is what a session's
table holds, row by row (its `message_data`, in the order of its `id`), so a session exported
from its database (`SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id`)
reads as it is, and a history written an item at a time can be cut short and still read. The
database file itself is read as a store of sessions (`stores`), each session's rows so.

Mapping rules: every item is read by `responses.ItemMapper`, as in an OpenAI Responses request
log, so the two formats agree item for item:
- A user message (`{"role": "user", "content": ...}`, its content a string or `input_text` and
  `input_image` parts) is a user message with its images; an assistant message (`type:
  message`, `output_text` and `refusal` parts) is the assistant's text, the `function_call`
  items after it its calls (an agent's parallel calls stay one message, a handoff is a call of
  its `transfer_to_*` tool); a `function_call_output` is its call's result, an output of
  content parts keeping its images. A tool that failed is answered with the text the SDK sent
  the model (its error function's), which the items mark as no error: it is a plain result.
- A `reasoning` item is the thinking of the next assistant message (its summary, else its
  `reasoning_text`), never its text; one with no readable text (encrypted only) is counted.
- The built-in tools' items are read as in a Responses log (a computer call and its output, an
  MCP or code interpreter call answered at its place); a web search, whose results the items do
  not hold, and any other item no rule replays (MCP listings, approvals) is counted, and so is
  a `compaction` item, with a note.
- The agent's instructions are not among the items (the SDK sends them apart, as the request's
  instructions): the replay has no system prompt, and a note says so, unless the list opens
  with a system or developer message of its own. The tools are read off the calls.

Invariants:
- Detection takes a JSON list (its first items), or JSONL (its first lines), holding an item
  written only as Responses items are (a `type` of a Responses input item, or an `input_text`
  / `output_text` / `input_image` / `input_file` part) and no OpenAI chat message (untyped,
  with `tool_calls`, `tool_call_id`, `function_call`, `name`, or a `tool` or `function`
  role): an OpenAI chat list has no such item, a Responses request log's entries are requests
  (`input`, no `type`), and an item of another shape among the first is read, and refused at
  its line, rather than leaving the file unrecognised.
- A shape the SDK never writes is an error at its line (the item's, inside a JSON list): an
  item that is not an object, a `type` that is not text, an item with neither a `type` nor a
  `role`, a call without a string `call_id` and `name`, a result answering no call before it,
  a message of another role, a second list in a JSONL file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers.base import Calls, Entry, Report, Wire
from ctxlab.workloads.importers.responses import ItemMapper

ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "mcp_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "tool_search_call",
        "tool_search_output",
        "item_reference",
        "compaction",
    }
)
"""The Responses input items an agent's history may hold."""
ROLES = frozenset({"user", "assistant", "system", "developer"})
RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})
"""Content parts only Responses items have (chat's are `text`, `image_url`, `file`...)."""
CHAT_ONLY = frozenset({"tool_calls", "tool_call_id", "function_call", "name"})
"""Keys of an OpenAI chat message that no Responses message has."""
DETECT_ITEMS = 8
"""How many items of a JSON list detection looks at."""
NO_INSTRUCTIONS = (
    "the agent's instructions are not in its input items (the SDK sends them apart, as the "
    "request's instructions): the replay has no system prompt"
)
ONE_LIST = (
    "an OpenAI Agents history is one JSON list of items, or JSONL of one item a line; this line "
    "holds a second list"
)
MUTE_REASONING = "reasoning item with no readable text (encrypted)"


def _is_chat(value: object) -> bool:
    """An OpenAI chat message: untyped, with a key or a role no Responses message has."""
    if not isinstance(value, Mapping) or "type" in value:
        return False
    return bool(CHAT_ONLY & value.keys()) or value.get("role") in {"tool", "function"}


def _only_responses(value: object) -> bool:
    """An item only the Responses form writes: a known item `type`, or a message of Responses
    content parts."""
    if not isinstance(value, Mapping):
        return False
    if value.get("type") in ITEM_TYPES:
        return True
    parts = value.get("content")
    return isinstance(parts, list) and any(
        isinstance(p, Mapping) and p.get("type") in RESPONSES_PARTS for p in parts
    )


def _are_items(values: list[Any]) -> bool:
    return any(_only_responses(v) for v in values) and not any(_is_chat(v) for v in values)


def is_agent_items(values: list[object]) -> bool:
    """A JSON list of input items, or JSONL whose first lines are items (module docstring)."""
    first = values[0] if values else None
    if isinstance(first, list):
        return _are_items(first[:DETECT_ITEMS])
    return _are_items(values)


def _checked(item: object, line: int, report: Report) -> Mapping[str, Any]:
    """`item`, when it has the shape the SDK writes.

    Raises:
        TraceError: an item that is not an object, a `type` that is not text, a call item
            without a string `call_id` and `name`.
    """
    if not isinstance(item, Mapping):
        raise report.error(line, f"an item must be an object, got {type(item).__name__}")
    kind = item.get("type")
    if kind is not None and not isinstance(kind, str):
        raise report.error(line, f"an item's 'type' must be text, got {type(kind).__name__}")
    if kind is None and "role" not in item:
        raise report.error(line, "an item has neither a 'type' nor a 'role'; is the file of this format?")
    if kind in {"function_call", "custom_tool_call"}:
        for key in ("call_id", "name"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise report.error(line, f"a {kind} item needs a string {key!r}, as the SDK writes it")
    return item


def _mute(item: Mapping[str, Any]) -> bool:
    """A reasoning item with no text to read (its summary and content empty or missing)."""
    if item.get("type") != "reasoning":
        return False
    listed = [item.get(key) for key in ("summary", "content")]
    parts = [p for found in listed if isinstance(found, list) for p in found]
    return not any(isinstance(p, Mapping) and p.get("text") for p in parts)


def _items(entries: Iterator[Entry], report: Report) -> Iterator[tuple[int, object]]:
    """Each item of the file with its line: a JSON list's (located by `Report.each`), or a
    JSONL file's, one a line.

    Raises:
        TraceError: a JSONL file holding a list after its first line.
    """
    for index, (number, value) in enumerate(entries):
        if isinstance(value, list):
            if index:
                raise report.error(number, ONE_LIST)
            for _, item in report.each(value):
                yield number, item
        else:
            yield number, value


def read_openai_agents(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of an agent's input items (see the module docstring)."""
    mapper = ItemMapper(report, Calls(report))
    first = True
    for number, value in _items(entries, report):
        item = _checked(value, number, report)
        if first and item.get("role") not in {"system", "developer"}:
            report.note_once(NO_INSTRUCTIONS)
        first = False
        if _mute(item):
            report.skip(MUTE_REASONING)
        yield from mapper.item(item, number)
    yield from mapper.flush()
