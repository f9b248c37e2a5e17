"""The structured 5-field summary: its request, its tool, reading the model's answer, rendering.

Invariants:
- The summary request is, in order: the system prompt, the old summary (when there is one), the
  messages to compress, an optional assistant message holding instruction hints, and the
  compression prompt as the last user message. No agent tool schemas are sent with it; the only
  tool is `generate_structured_output`, whose parameters are the summary schema.
- What the provider receives ("as sent") additionally carries the structured-output instruction
  as an extra text block of that last user message (or a new user message if the last message
  is not a user's), and is written from `sent` where the request has one: the messages as the
  provider's client writes them (AgentScope's formatter with media in tool results).
- An answer is accepted only as a `generate_structured_output` call whose input is a JSON object
  meeting the schema (required keys present, declared string fields are strings); anything else
  is a `StructuredOutputError`, which moves AgentScope's attempt ladder to its next rung.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.core.messages.blocks import Block, HintBlock, Part, TextBlock, ToolCallBlock
from ctxlab.core.messages.message import Message, fixed_messages, text_message
from ctxlab.core.messages.tools import ToolSchema

SUMMARY_TOOL = "generate_structured_output"
ATTEMPT_CHOICES: tuple[str, ...] = (SUMMARY_TOOL, "auto", "none")
"""AgentScope's structured-output ladder for a model without thinking: forced, auto, none."""

Summary = str | tuple[Part, ...]
"""A summary is a string, or text and data parts (the empty string means no summary)."""


class StructuredOutputError(ValueError):
    """The model did not answer with a valid structured-output call."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRequest:
    """A summary request and the two extra views the lab counts."""

    messages: tuple[Message, ...]
    schema_tool: ToolSchema
    sent: tuple[Message, ...] | None = None
    """`messages` as the provider's client writes them, where that differs (None: as stored)."""

    def as_sent(self, instruction: str) -> tuple[Message, ...]:
        """The messages the provider receives: the structured-output instruction appended."""
        return with_instruction(self.messages if self.sent is None else self.sent, instruction)


def summary_tool(schema_json: str, description: str) -> ToolSchema:
    """The one tool of a summary request."""
    return ToolSchema(name=SUMMARY_TOOL, description=description, parameters=schema_json)


def build_summary_request(
    *,
    system_prompt: str | None,
    old_summary: Summary,
    compress: Sequence[Message],
    instructions: Sequence[HintBlock],
    prompt: str,
    schema_tool: ToolSchema,
) -> SummaryRequest:
    """The summary request in AgentScope's order (see the module docstring)."""
    head = fixed_messages(system_prompt, old_summary)
    hints = [Message(role="assistant", blocks=tuple(instructions))] if instructions else []
    messages = (*head, *compress, *hints, text_message("user", prompt))
    return SummaryRequest(messages=messages, schema_tool=schema_tool)


def with_instruction(messages: Sequence[Message], instruction: str) -> tuple[Message, ...]:
    """`messages` with `instruction` added to the last user message, or as a new user message."""
    block = TextBlock(text=instruction)
    if messages and messages[-1].role == "user":
        return (*messages[:-1], messages[-1].appended(block))
    return (*messages, Message(role="user", blocks=(block,)))


def read_summary_fields(blocks: Sequence[Block], schema: Mapping[str, Any]) -> dict[str, str]:
    """The fields of a structured-output answer.

    Raises:
        StructuredOutputError: no `generate_structured_output` call, its input is not a JSON
            object, or it misses a required field or gives a non-string for a string field.
    """
    calls = [b for b in blocks if isinstance(b, ToolCallBlock) and b.name == SUMMARY_TOOL]
    if not calls:
        raise StructuredOutputError(f"the answer has no {SUMMARY_TOOL!r} call")
    try:
        fields = json.loads(calls[0].input)
    except json.JSONDecodeError as bad:
        raise StructuredOutputError(f"the {SUMMARY_TOOL!r} input is not JSON: {bad}") from bad
    if not isinstance(fields, dict):
        raise StructuredOutputError(f"the {SUMMARY_TOOL!r} input is not a JSON object")
    _check_schema(fields, schema)
    return {str(k): v for k, v in fields.items()}


def _check_schema(fields: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    missing = [k for k in schema.get("required", ()) if k not in fields]
    if missing:
        raise StructuredOutputError(f"the summary lacks required fields {missing}")
    for name, spec in schema.get("properties", {}).items():
        if name in fields and spec.get("type") == "string" and not isinstance(fields[name], str):
            raise StructuredOutputError(f"summary field {name!r} is not a string")


def render_summary(template: str, fields: Mapping[str, str]) -> str:
    """`template.format(**fields)`: extra fields are ignored; a missing one raises KeyError.

    >>> render_summary("# Task\\n{task}", {"task": "a {b}", "extra": "x"})
    '# Task\\na {b}'
    """
    return template.format(**fields)


def with_offload_reminder(summary: Summary, reminder: str) -> Summary:
    """The summary with the offload reminder added once (never duplicated on reuse).

    >>> with_offload_reminder(with_offload_reminder("S", "R"), "R")
    'S\\nR'
    """
    if isinstance(summary, str):
        return summary if reminder in summary else f"{summary}\n{reminder}"
    if any(isinstance(p, TextBlock) and p.text == reminder for p in summary):
        return summary
    return (*summary, TextBlock(text=reminder))


def summary_text(summary: Summary) -> str:
    """The summary's text (its text parts joined)."""
    if isinstance(summary, str):
        return summary
    return "".join(p.text for p in summary if isinstance(p, TextBlock))
