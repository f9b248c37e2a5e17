"""Anthropic message histories, as OpenAI chat messages: a JSON list of Anthropic Messages
`MessageParam`s (or JSONL, one message a line), the history the VS Code agents Cline and Roo Code
keep per task (`tasks/<id>/api_conversation_history.json` in the extension's storage) and many
Anthropic-SDK agents keep as their `messages`. The format is named `anthropic-history`.

A message is `{"role": "user" | "assistant", "content": <text or blocks>}`, and the agents add
fields beside them: `ts`, the response's `id`, Cline's `modelInfo` and `metrics`, Roo Code's
reasoning keys and its condensing and truncation marks (below). Content blocks map as in an
Anthropic request log (`anthropic`: `tool_result` blocks are tool messages before the user's
text, `tool_use` blocks are calls, `thinking` is reasoning, images and text documents are
parts); fields the mapping does not read (`ts`, `modelInfo`, a block's `call_id` or
`reasoning_details`) are ignored. Beyond Anthropic's blocks:
- Roo Code's `reasoning` block is reasoning when it has `text`; one with only
  `encrypted_content` is counted, as are its standalone reasoning items (no `role`, `type:
  reasoning`) and its `thoughtSignature` blocks, which are opaque. A message's own
  `reasoning_content` text, and the text of its `reasoning_details` (OpenRouter's
  `reasoning.text` and `reasoning.summary` entries), are the message's reasoning too.
- Tool calls an agent wrote as XML in the assistant's text (their older, prompt-based tools)
  stay text, as the model was sent them; a note says so when the file holds no `tool_use`.

What is replayed is what the agent sends from the file (Roo Code's "effective history",
`getEffectiveApiHistory` and `getMessagesSinceLastSummary` in its `src/core/condense`):
- The last message marked `isSummary` opens the conversation: every message before it is left
  out (condensed away) and counted. A summary the assistant wrote (Roo Code's earlier condensing)
  follows the file's first message, which stays when it is the user's. After a summary, a
  `tool_result` whose call lies before it is left out and counted (the agent drops it too), and
  a user message left with no block is none.
- A message whose `truncationParent` names a truncation marker (`isTruncationMarker`,
  `truncationId`) the conversation holds is left out and counted; the marker, a user message,
  stays. A mark naming nothing the file holds is a message the agent sends again.
- Cline keeps what it cut (`conversationHistoryDeletedRange`) and its edits of old messages in
  the task's metadata and `context_history.json`, not in this file: the file is replayed whole,
  with a note, when it carries Cline's fields.
- The system prompt is not in the file (the agents build it anew for each request): none is
  replayed, and a note says so.

Invariants:
- The messages left out are known before reading: a first read of the file (`survey`) finds the
  last summary and the truncation markers; a file that can be read once only is held whole to
  find them (a JSON document is held whole anyway).
- Detection takes a JSON list (its first items), or JSONL (its first lines), of messages of
  role user or assistant (or Roo Code's reasoning items), none with a part only OpenAI chat
  writes (`image_url`, `input_audio`, `file`, `refusal`), one holding a block only Anthropic writes
  (`tool_use`, `tool_result`, `thinking`, `redacted_thinking`, `document`, an `image` with a
  `source`, Roo Code's `reasoning` and `thoughtSignature`) or a field only the agents write:
  a list of text alone means the same as OpenAI chat, and is read as that.
- A shape the agents never write is an error at its line (the item's, inside a JSON list): an
  item that is not an object, a role other than user or assistant, content that is neither text
  nor a list of blocks with a `type`, a result answering no call before it (outside a summary's
  reach) or a call answered already.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from ctxlab.workloads.importers.anthropic import assistant_messages, user_blocks
from ctxlab.workloads.importers.base import Calls, Entry, Reader, Report, Wire, field_of, text_of

ANTHROPIC_ONLY = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "document"})
AGENT_BLOCKS = frozenset({"reasoning", "thoughtSignature"})
"""Roo Code's own blocks."""
AGENT_FIELDS = frozenset(
    {
        "ts",
        "modelInfo",
        "metrics",
        "isSummary",
        "condenseId",
        "condenseParent",
        "truncationId",
        "truncationParent",
        "isTruncationMarker",
    }
)
"""Fields Cline and Roo Code write beside `role` and `content` (an OpenAI chat message has none)."""
OPENAI_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
"""Content parts only an OpenAI chat message holds."""
CLINE_FIELDS = frozenset({"modelInfo", "metrics"})
DETECT_ITEMS = 16
"""How many items of a JSON list detection looks at (an agent's first message is often text)."""
NO_PROMPT = "the history holds no system prompt (the agent builds it anew for each request): none is replayed"
CONDENSED = "message condensed away (before the last summary)"
ORPHANED = "tool result of a call condensed away"
TRUNCATED = "message truncated away (its truncationParent marker is in the history)"
CLINE_CUTS = (
    "Cline keeps the range of messages it truncated (conversationHistoryDeletedRange) and its edits "
    "of old messages in the task's metadata and context_history.json, not in this file: every "
    "message is replayed, so requests may hold more than Cline sent"
)
TEXT_TOOLS = (
    "the history holds no tool_use block: tools called in the assistant's text (as XML, the "
    "agents' older way) are replayed as that text, as the model was sent it"
)


# ---------------------------------------------------------------------------------------------
# Detection


def _is_reasoning_item(value: Mapping[str, Any]) -> bool:
    """Roo Code's standalone reasoning item: `type: reasoning` and no role."""
    return value.get("type") == "reasoning" and "role" not in value


def _is_message(value: object) -> bool:
    """A message as the agents write it: role user or assistant, text or a list of content with
    no OpenAI-only part, no `type` of its own but `message` (an API response kept as it came,
    `Message.model_dump()`, appended to the history); or a reasoning item."""
    if not isinstance(value, Mapping):
        return False
    if _is_reasoning_item(value):
        return True
    found = value.get("content")
    parts = found if isinstance(found, list) else []
    return (
        value.get("role") in {"user", "assistant"}
        and value.get("type", "message") == "message"
        and isinstance(found, str | list)
        and not {"tool_calls", "tool_call_id", "function_call"} & value.keys()
        and not any(field_of(part, "type") in OPENAI_PARTS for part in parts)
    )


def _telling(value: Mapping[str, Any]) -> bool:
    """A message only an Anthropic history holds: an agent's field, or a block only Anthropic
    (or Roo Code) writes. A reasoning item alone tells nothing: a Responses item list holds one."""
    if AGENT_FIELDS & value.keys():
        return True
    blocks = value.get("content")
    for block in blocks if isinstance(blocks, list) else []:
        kind = field_of(block, "type")
        if kind in ANTHROPIC_ONLY or kind in AGENT_BLOCKS or (kind == "image" and "source" in block):
            return True
    return False


def is_history(values: list[object]) -> bool:
    """A JSON list of messages, or JSONL whose first lines are messages, with one at least that
    only an Anthropic history holds (see the module docstring)."""
    first = values[0] if values else None
    head = first[:DETECT_ITEMS] if isinstance(first, list) else values
    messages = [v for v in head if _is_message(v) and isinstance(v, Mapping)]
    return bool(head) and len(messages) == len(head) and any(_telling(m) for m in messages)


# ---------------------------------------------------------------------------------------------
# What the agent leaves out


@dataclass(frozen=True, slots=True)
class Hidden:
    """What the agent leaves out of its requests: every item before `start` (the last summary's
    index; 0 without one) but the first when `keep_first`, and the items whose
    `truncationParent` is among `markers` (the ids of the truncation markers from `start` on)."""

    start: int = 0
    summary: bool = False
    keep_first: bool = False
    markers: frozenset[str] = frozenset()

    def why(self, index: int, item: Mapping[str, Any]) -> str | None:
        """Why item `index` is left out, or None when the agent sends it."""
        if index < self.start and not (index == 0 and self.keep_first):
            return CONDENSED
        if item.get("truncationParent") in self.markers:
            return TRUNCATED
        return None


def _items(entries: Iterator[Entry]) -> Iterator[tuple[int, object]]:
    """Each item with the line of its entry: a JSON list's items, or a JSONL file's lines."""
    for number, value in entries:
        for item in value if isinstance(value, list) else [value]:
            yield number, item


def hidden_of(entries: Iterator[Entry]) -> Hidden:
    """What the agent leaves out of a history whose entries are `entries` (see `Hidden`)."""
    summary: tuple[int, object] | None = None
    first_role: object = None
    markers: dict[str, int] = {}
    for index, (_, item) in enumerate(_items(entries)):
        first_role = field_of(item, "role") if index == 0 else first_role
        if field_of(item, "isSummary") is True:
            summary = index, field_of(item, "role")
        marker = field_of(item, "truncationId")
        if field_of(item, "isTruncationMarker") is True and isinstance(marker, str):
            markers[marker] = index
    start = summary[0] if summary else 0
    return Hidden(
        start=start,
        summary=summary is not None,
        keep_first=summary is not None and summary[1] == "assistant" and first_role == "user",
        markers=frozenset(marker for marker, index in markers.items() if index >= start),
    )


def survey(entries: Iterator[Entry]) -> Reader:
    """The reader of a history whose entries `entries` gave once already."""
    return partial(read_history, hidden=hidden_of(entries))


# ---------------------------------------------------------------------------------------------
# Reading


def read_history(entries: Iterator[Entry], report: Report, *, hidden: Hidden | None = None) -> Iterator[Wire]:
    """The messages the agent sends from the history (see the module docstring); without a
    survey, the entries are held to find what it leaves out."""
    if hidden is None:
        held = list(entries)
        hidden, entries = hidden_of(iter(held)), iter(held)
    calls, cline, index = Calls(report, once=True), False, 0
    for number, value in entries:
        items = value if isinstance(value, list) else [value]
        for _, item in report.each(items):
            message = _checked(item, number, report)
            cline = cline or bool(CLINE_FIELDS & message.keys())
            left_out = hidden.why(index, message)
            yield from _item(message, number, calls, left_out=left_out, after_summary=hidden.summary)
            index += 1
    _notes(hidden, cline, calls, report)


def _notes(hidden: Hidden, cline: bool, calls: Calls, report: Report) -> None:
    report.note_once(NO_PROMPT)
    if hidden.summary:
        report.note_once(
            "the history was condensed: the last summary (isSummary) opens what is replayed, as the "
            "agent sends it; the messages it replaced are left out"
        )
    if cline:
        report.note_once(CLINE_CUTS)
    if not calls.ids:
        report.note_once(TEXT_TOOLS)


def _checked(item: object, number: int, report: Report) -> Mapping[str, Any]:
    """`item`, when it is shaped as the agents write a message (see the module docstring).

    Raises:
        TraceError: at the item's line.
    """
    if not isinstance(item, Mapping):
        raise report.error(number, f"a message must be an object, got {type(item).__name__}")
    if _is_reasoning_item(item):
        return item
    role = item.get("role")
    if role not in {"user", "assistant"}:
        raise report.error(number, f"a message's role is {role!r}; a history has user or assistant")
    found = item.get("content")
    if not isinstance(found, str | list):
        raise report.error(number, "a message's content must be text or a list of blocks")
    for block in found if isinstance(found, list) else []:
        if not isinstance(field_of(block, "type"), str):
            raise report.error(number, "a content block must be an object with a 'type'")
    return item


def _item(
    item: Mapping[str, Any], number: int, calls: Calls, *, left_out: str | None, after_summary: bool
) -> Iterator[Wire]:
    """The messages of an item the agent sends; nothing, counted, for one it leaves out."""
    report = calls.report
    if left_out is not None:
        report.skip(left_out)
    elif _is_reasoning_item(item):
        report.skip("reasoning item (its encrypted_content is opaque)")
    elif item["role"] == "user":
        content = _reached(item["content"], calls, report) if after_summary else item["content"]
        if content != []:
            yield from user_blocks(content, calls, report, number)
    else:
        yield from assistant_messages(_assistant_blocks(item, report), calls, report, number)


def _reached(content: object, calls: Calls, report: Report) -> object:
    """A user message's content after a summary, less the results whose call it left out; [] when
    nothing is left of a list of blocks."""
    if not isinstance(content, list):
        return content
    kept = [b for b in content if b["type"] != "tool_result" or b.get("tool_use_id") in calls.ids]
    for _ in range(len(content) - len(kept)):
        report.skip(ORPHANED)
    return kept


def _assistant_blocks(message: Mapping[str, Any], report: Report) -> list[object]:
    """An assistant message's blocks, the agents' reasoning as Anthropic `thinking` blocks: the
    message's own reasoning keys first, then its blocks in order."""
    content = message["content"]
    blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    found: list[object] = [_thinking(text) for text in _message_reasoning(message, report)]
    for block in blocks:
        if block["type"] != "reasoning":
            found.append(block)
        elif isinstance(block.get("text"), str):  # Roo Code's plain reasoning
            found.append(_thinking(block["text"]))
        else:
            report.skip("reasoning block (its encrypted_content is opaque)")
    return found


def _thinking(text: str) -> Wire:
    return {"type": "thinking", "thinking": text}


def _message_reasoning(message: Mapping[str, Any], report: Report) -> Iterator[str]:
    """The reasoning texts a message carries beside its content: `reasoning_content`, and the
    texts of its `reasoning_details` (an entry with none is counted)."""
    if isinstance(message.get("reasoning_content"), str) and message["reasoning_content"]:
        yield message["reasoning_content"]
    details = message.get("reasoning_details")
    for detail in details if isinstance(details, list) else []:
        text = text_of(field_of(detail, "text")) or text_of(field_of(detail, "summary"))
        if text:
            yield text
        else:
            report.skip(f"reasoning_details entry {field_of(detail, 'type')!r} (no text)")
