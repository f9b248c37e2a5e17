"""OpenAI Responses output items in LangGraph threads, read as the Responses reader reads them.

`langchain-openai`'s `ChatOpenAI` with the Responses API keeps a response's output items other
than its text and function calls on the AI message: with `output_version="responses/v1"` in its
`content`, next to the text parts, in the order of the response; with `output_version="v0"`
(the older default) in `additional_kwargs.tool_outputs`, its reasoning item in
`additional_kwargs.reasoning`. Each item is read by the Responses reader's own mapping
(`responses.ItemMapper.call_item`, `responses.skipped`), so a thread and a Responses log of the
same conversation replay alike:

- An item the server ran that carries its output (`mcp_call`, `code_interpreter_call`, a
  `file_search_call` with its `results`: `CARRIED`) is a call and its result; the AI message is
  split after it, as after a server tool's result part (langgraph's `_pieces`).
- An item of a built-in tool the client runs (`computer_call`, `local_shell_call`, `shell_call`,
  `apply_patch_call`, `tool_search_call`: `CLIENT`) is a call of the message, on its last
  assistant message with the message's own calls (after them), which the thread's ToolMessages
  answer by its `call_id`. `function_call` and `custom_tool_call` items are not: LangChain keeps
  those calls in `tool_calls` too, so they are counted as other unknown parts are.
- The other items (`web_search_call`, whose results the API does not return; a file search
  without its results; `image_generation_call`, `mcp_list_tools`, `mcp_approval_request`:
  `COUNTED`) are counted as the Responses reader counts them.
- `v0`'s `tool_outputs` and `reasoning` are read as parts before the message's content: the
  response's order is lost there, and the tools the server ran ran before the model wrote its
  text (langchain-core puts them there too when it converts such a message).
- A ToolMessage whose `additional_kwargs.type` is `computer_call_output` (how langchain-openai
  sends a computer call's screenshot) is the image of its first `input_image` part, or of its
  content when that is a string (the image's URL), as the Responses reader reads a
  `computer_call_output`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.workloads.importers.base import Calls, Report, Wire, field_of, text_of, tool
from ctxlab.workloads.importers.responses import ANSWERED, CALLS, ItemMapper, searched, skipped

CLIENT = CALLS - {"function_call", "custom_tool_call"}
"""Call items of a built-in tool the client runs: a call of the message, answered by a
ToolMessage."""
COUNTED = frozenset(
    {"web_search_call", "file_search_call", "image_generation_call", "mcp_list_tools", "mcp_approval_request"}
)
"""Items that are counted (a file search carrying its results is `CARRIED`)."""
ITEMS = CLIENT | COUNTED
"""The items a content part reader keeps for `Items.read` (a `CARRIED` item ends its piece)."""


def carried(item: object) -> bool:
    """Whether `item` is a call the server ran carrying its output (a call and its result)."""
    return isinstance(item, Mapping) and (item.get("type") in ANSWERED or searched(item))


def with_kept_items(fields: Mapping[str, Any]) -> object:
    """An AI message's content, with `v0`'s `additional_kwargs.reasoning` and `tool_outputs`
    items before it (the content as it is when it has none)."""
    kept = field_of(fields, "additional_kwargs", "tool_outputs")
    reasoning = field_of(fields, "additional_kwargs", "reasoning")
    listed = kept if isinstance(kept, list) else []
    items: list[object] = [item for item in listed if isinstance(item, Mapping)]
    if isinstance(reasoning, Mapping):
        items.insert(0, {**reasoning, "type": "reasoning"})
    value = fields.get("content")
    if not items:
        return value
    return items + (value if isinstance(value, list) else [value] if isinstance(value, str) and value else [])


def reasoning_text(item: object) -> str:
    """The text of a Responses reasoning item: its `summary` texts, or (none) its `content`
    texts (`reasoning_text`, as open-weight models write it), a blank line apart."""
    parts = field_of(item, "summary") or field_of(item, "content")
    texts = (text_of(field_of(p, "text")) for p in parts) if isinstance(parts, list) else ()
    return "\n\n".join(text for text in texts if text)


@dataclass(slots=True)
class Items:
    """The Responses items of one AI message. Invariant: every call it gives is declared in
    `calls` when given; a carried call's result comes with it, a client call is held in `client`
    for the message's last assistant message."""

    report: Report
    calls: Calls
    client: list[Wire] = field(default_factory=list)
    mapper: ItemMapper = field(init=False)

    def __post_init__(self) -> None:
        self.mapper = ItemMapper(self.report, self.calls)

    def read(self, items: list[Mapping[str, Any]]) -> None:
        """Client calls kept in `client`, the other items counted as the Responses reader
        counts them."""
        for item in items:
            kind = str(item.get("type"))
            if kind in CLIENT:
                self.client.append(self.mapper.call_item(kind, item)[0])
            else:
                self.report.skip(skipped(kind))

    def answered(self, item: Mapping[str, Any]) -> tuple[Wire, Wire]:
        """A `carried` item's call and its result."""
        listed, result = self.mapper.call_item(str(item.get("type")), item)
        assert result is not None, "a carried item is no CALLS item: it carries its result"
        return listed, result


def computer_output(fields: Mapping[str, Any], call_id: str, report: Report) -> Wire | None:
    """The tool message of a ToolMessage langchain-openai made from a computer call's screenshot
    (`additional_kwargs.type` `computer_call_output`), None for any other ToolMessage."""
    if field_of(fields, "additional_kwargs", "type") != "computer_call_output":
        return None
    value = fields.get("content")
    images = [p for p in value if field_of(p, "type") == "input_image"] if isinstance(value, list) else []
    output = images[0] if images else {"image_url": value} if isinstance(value, str) else None
    if output is None:
        report.skip("computer_call_output without an input_image")
        return tool(call_id, "")
    mapper = ItemMapper(report, Calls(report))
    return mapper.result("computer_call_output", {"output": output}, call_id)
