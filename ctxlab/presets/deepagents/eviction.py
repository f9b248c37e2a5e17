"""deepagents 0.7.32's eviction of a large tool result: the file it names and the stub with a
numbered head-and-tail preview left in the result's place.

Sources: `middleware/filesystem.py` (`FilesystemMiddleware.wrap_tool_call`,
`_process_large_message`, `TOOLS_EXCLUDED_FROM_EVICTION`), `middleware/_message_eviction.py`
(`_create_content_preview`, `_preview_note`, `_render_too_large_tool_msg`) and
`backends/utils.py` (`format_content_with_line_numbers`, `sanitize_tool_call_id`).

Invariants:
- The text measured and saved is the result's text parts joined by newlines; a result is evicted
  when that text is longer than 4 characters per token times the limit, unless its tool is one
  of the file tools (which deepagents never evicts) or no limit is set.
- The preview shows every line when there are at most 5 + 5, otherwise the first 5 and the last
  5 around a marker counting the lines between; each shown line is cut to 1000 characters; line
  numbers are right-aligned to the widest number of their block and followed by two spaces.
- The note before the preview names only the losses the preview has.
- An evicted result keeps its id, name, state and data blocks; only its text changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.texts.deepagents import DeepAgentsTexts

NUM_CHARS_PER_TOKEN = 4
HEAD_LINES = 5
TAIL_LINES = 5
PREVIEW_LINE_CHAR_LIMIT = 1000
MAX_LINE_LENGTH = 5000
VISIBLE_CALL_ID_LIMIT = 32
MAX_CALL_ID_PATH_BYTES = 128
LARGE_TOOL_RESULTS = "/large_tool_results"
CONVERSATION_HISTORY = "/conversation_history"
HUMANS_KEY = "deepagents_humans"
"""The memo of evicted user messages: message id to the path it was saved at."""
TOOLS_EXCLUDED_FROM_EVICTION = ("ls", "glob", "grep", "read_file", "edit_file", "write_file", "delete")


@dataclass(frozen=True, slots=True, kw_only=True)
class Preview:
    """A numbered preview and what it left out: whole lines (behind a marker) or line ends."""

    text: str
    lines_omitted: bool
    lines_clipped: bool


def numbered(lines: Sequence[str], start: int) -> str:
    """Lines numbered from `start`, the numbers right-aligned, two spaces before each line; a line
    longer than 5,000 characters goes on in rows numbered `N.1`, `N.2`, ...

    >>> print(numbered(["a", "b"], 9))
     9  a
    10  b
    """
    rows: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        chunks = [line[s : s + MAX_LINE_LENGTH] for s in range(0, len(line), MAX_LINE_LENGTH)] or [line]
        number = start + i
        rows.extend((f"{number}.{k}" if k else str(number), chunk) for k, chunk in enumerate(chunks))
    width = max((len(marker) for marker, _ in rows), default=0)
    return "\n".join(f"{marker:>{width}}  {chunk}" for marker, chunk in rows)


def _clipped(lines: Sequence[str]) -> tuple[list[str], bool]:
    cut = any(len(line) > PREVIEW_LINE_CHAR_LIMIT for line in lines)
    return [line[:PREVIEW_LINE_CHAR_LIMIT] for line in lines], cut


def content_preview(content: str, texts: DeepAgentsTexts) -> Preview:
    """The head and tail of `content` (module invariants)."""
    lines = content.splitlines()
    if len(lines) <= HEAD_LINES + TAIL_LINES:
        shown, clipped = _clipped(lines)
        return Preview(text=numbered(shown, 1), lines_omitted=False, lines_clipped=clipped)
    head, head_clipped = _clipped(lines[:HEAD_LINES])
    tail, tail_clipped = _clipped(lines[-TAIL_LINES:])
    marker = texts.truncation_marker.format(omitted_lines=len(lines) - HEAD_LINES - TAIL_LINES)
    text = f"{numbered(head, 1)}\n{marker}\n{numbered(tail, len(lines) - TAIL_LINES + 1)}"
    return Preview(text=text, lines_omitted=True, lines_clipped=head_clipped or tail_clipped)


def preview_note(preview: Preview, texts: DeepAgentsTexts, subject: str = "result") -> str:
    """The sentence before a preview, with the caveats that apply, ending in a colon."""
    base = texts.preview_head_tail if preview.lines_omitted else texts.preview_plain
    caveats = [
        caveat
        for applies, caveat in (
            (preview.lines_omitted, texts.caveat_omitted),
            (preview.lines_clipped, texts.caveat_clipped),
        )
        if applies
    ]
    note = base.format(subject=subject)
    return f"{note} ({'; '.join(caveats)}):" if caveats else f"{note}:"


def sanitized_call_id(call_id: str) -> str:
    """The call id as a path component: `.`, `/`, `\\` become `_`; over 128 bytes, a hash.

    >>> sanitized_call_id("call.1/2")
    'call_1_2'
    """
    safe = call_id.replace(".", "_").replace("/", "_").replace("\\", "_")
    if len(safe.encode("utf-8")) > MAX_CALL_ID_PATH_BYTES:
        return f"call-{hashlib.sha256(call_id.encode('utf-8')).hexdigest()}"
    return safe


def visible_call_id(call_id: str) -> str:
    """The call id as the stub shows it: over 32 characters, its first 32 and `...`."""
    return f"{call_id[:VISIBLE_CALL_ID_LIMIT]}..." if len(call_id) > VISIBLE_CALL_ID_LIMIT else call_id


def result_text(result: ToolResultBlock) -> str:
    """What deepagents measures and saves of a result: its text parts joined by newlines."""
    return "\n".join(p.text for p in result.output if isinstance(p, TextBlock))


def result_path(call_id: str) -> str:
    """Where deepagents saves an evicted result."""
    return f"{LARGE_TOOL_RESULTS}/{sanitized_call_id(call_id)}"


def should_evict(result: ToolResultBlock, limit: int | None) -> bool:
    """Whether the result is evicted (module invariants)."""
    if not limit or result.name in TOOLS_EXCLUDED_FROM_EVICTION:
        return False
    return len(result_text(result)) > NUM_CHARS_PER_TOKEN * limit


def evicted(result: ToolResultBlock, texts: DeepAgentsTexts) -> ToolResultBlock:
    """The result as deepagents leaves it once its text is saved at `result_path(result.id)`."""
    content = result_text(result)
    preview = content_preview(content, texts)
    stub = texts.evicted_stub.format(
        tool_call_id=visible_call_id(result.id),
        file_path=result_path(result.id),
        preview_note=preview_note(preview, texts),
        content_sample=preview.text,
    )
    data = tuple(p for p in result.output if isinstance(p, DataBlock))
    output: tuple[TextBlock | DataBlock, ...] = (TextBlock(text=stub), *data)
    return ToolResultBlock(id=result.id, name=result.name, output=output, state=result.state)


def message_text(message: Message) -> str:
    """What deepagents measures and saves of a user message: its text parts joined by newlines."""
    return "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock))


def human_to_evict(
    messages: Sequence[Message], tagged: Mapping[str, str], limit: int | None
) -> Message | None:
    """The last message, when it is a user message deepagents evicts now: not yet evicted, its
    text longer than 4 characters per token times the limit."""
    if not limit or not messages or messages[-1].role != "user" or messages[-1].id in tagged:
        return None
    last = messages[-1]
    return last if len(message_text(last)) > NUM_CHARS_PER_TOKEN * limit else None


def human_path(number: int) -> str:
    """Where an evicted user message is saved (deepagents names it with a uuid4; the lab with a
    counter in the same shape)."""
    return f"{CONVERSATION_HISTORY}/{number:08x}-0000-4000-8000-000000000000.md"


def humans_evicted(
    messages: tuple[Message, ...], tagged: Mapping[str, str], texts: DeepAgentsTexts
) -> tuple[Message, ...]:
    """`messages` with every evicted user message shown as its stub and preview (the stored
    message stays whole); data blocks stay."""
    if not tagged:
        return messages
    out = []
    for message in messages:
        path = tagged.get(message.id) if message.role == "user" else None
        if path is None:
            out.append(message)
            continue
        preview = content_preview(message_text(message), texts)
        stub = texts.evicted_human.format(
            file_path=path, preview_note=preview_note(preview, texts, "content"), content_sample=preview.text
        )
        data = tuple(b for b in message.blocks if not isinstance(b, TextBlock))
        out.append(replace(message, blocks=(TextBlock(text=stub), *data)))
    return tuple(out)
