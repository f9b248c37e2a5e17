"""Free-text summary requests: the conversation rendered as text inside one user message.

The LangChain, deepagents, OpenHands and nonoka families ask a model for a plain-text summary
in one call, with the span to summarize written out as text in the prompt (LangChain formats
the messages into its prompt; OpenHands lists the forgotten events, each cut to
`max_event_length` = 10,000 characters). The wording of every prompt is the caller's.

Invariants:
- `transcript(messages)` renders the OpenAI view of `messages` (`wire.to_openai`), one entry per
  view message, in order, separated by a blank line: `role: text` (`role:` without text); each
  call of an assistant message on its own line as `call <name> <id>: <arguments>`; a tool
  message as `tool result <id>: <text>`; images and files as `[image]` / `[file]`.
- With `max_event_chars`, each entry is cut to that many characters plus a marker saying how
  many were left out; nothing else is shortened.
- `summary_request` is one user message: the template filled in one pass with
  `{conversation}` and `{previous_summary}`, so braces in the conversation are kept as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.templates import fill
from ctxlab.core.wire.views import to_openai


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in content if isinstance(content, list) else ():
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            pieces.append(str(part.get("text", "")))
        elif kind is not None:
            pieces.append("[image]" if kind == "image_url" else "[file]")
    return "".join(pieces)


def _entry(wire: Mapping[str, Any]) -> str:
    role = wire["role"]
    if role == "tool":
        return f"tool result {wire.get('tool_call_id', '')}: {_content_text(wire.get('content'))}"
    text = _content_text(wire.get("content"))
    lines = [f"{role}: {text}" if text else f"{role}:"]
    for call in wire.get("tool_calls") or ():
        function = call.get("function", {})
        lines.append(f"call {function.get('name', '')} {call.get('id', '')}: {function.get('arguments', '')}")
    return "\n".join(lines)


def clip(text: str, max_chars: int | None, marker: str = " [... {omitted} characters left out]") -> str:
    """`text`, or its first `max_chars` characters and a marker with how many were left out.

    >>> clip("abcdef", 4), clip("abc", 4), clip("abcdef", None)
    ('abcd [... 2 characters left out]', 'abc', 'abcdef')
    """
    if max_chars is None or len(text) <= max_chars:
        return text
    return text[:max_chars] + fill(marker, omitted=len(text) - max_chars)


def transcript(messages: Sequence[Message], max_event_chars: int | None = None) -> str:
    """The conversation of `messages` as text (see the module invariants).

    >>> from ctxlab.core.messages.blocks import ToolCallBlock, ToolResultBlock, TextBlock
    >>> reply = Message(role="assistant", blocks=(ToolCallBlock(id="c1", name="ls", input="{}"),
    ...     ToolResultBlock(id="c1", name="ls", output=(TextBlock(text="a.py"),))))
    >>> print(transcript([text_message("user", "list"), reply]))
    user: list
    <BLANKLINE>
    assistant:
    call ls c1: {}
    <BLANKLINE>
    tool result c1: a.py
    """
    return "\n\n".join(clip(_entry(wire), max_event_chars) for wire in to_openai(messages))


def summary_request(
    template: str,
    messages: Sequence[Message],
    *,
    previous_summary: str = "",
    max_event_chars: int | None = None,
) -> tuple[Message, ...]:
    """The one-message request asking for a free-text summary of `messages`.

    >>> summary_request("Summarize:\\n{conversation}\\nBefore: {previous_summary}",
    ...     [text_message("user", "{x}")])[0].blocks[0].text
    'Summarize:\\nuser: {x}\\nBefore: '
    """
    text = fill(
        template,
        conversation=transcript(messages, max_event_chars),
        previous_summary=previous_summary,
    )
    return (text_message("user", text),)
