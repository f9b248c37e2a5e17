"""What a parity run records, as plain frozen values (no agentscope import).

Invariants:
- `calls` holds every model API call in order; a summarizer invocation that AgentScope retries
  through its structured-output ladder appears once per attempt.
- For a reasoning call `messages` and `preflight` are `count_tokens(messages, tools)`, and
  `as_sent` counts what the API received: the same less the thinking AgentScope's OpenAI chat
  formatter leaves out. For a summary call `messages` counts the summary request alone,
  `preflight` adds the summary-schema tool (AgentScope's own overflow estimate), `as_sent`
  counts what the API received (the structured-output instruction appended, the schema tool, no
  thinking).
- Messages are ctxlab `Message`s converted from agentscope's, so a trace compares directly with the
  lab's own records; ids are the agentscope ids (counters in a parity run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from ctxlab.core.messages.blocks import ToolCallBlock, ToolResultBlock, block_kind
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import CallKind
from ctxlab.core.wire.views import to_openai
from ctxlab.engine.trace import Convention

OffloadKind = Literal["context", "tool_result", "data"]


class Tokens(NamedTuple):
    """Input tokens of one call under the three counting conventions (docs/architecture.md,
    Counting conventions)."""

    messages: int
    preflight: int
    as_sent: int


class BlockShape(NamedTuple):
    """A block's kind, and the tool call id when it is a call or a result."""

    kind: str
    tool_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageShape:
    """A context message reduced to its role, id and block shapes."""

    role: str
    id: str
    blocks: tuple[BlockShape, ...]


def shape(message: Message) -> MessageShape:
    """The shape of `message`.

    >>> from ctxlab.core.messages.blocks import TextBlock
    >>> shape(Message(role="assistant", id="r1", blocks=(TextBlock(text="hi"),)))
    MessageShape(role='assistant', id='r1', blocks=(BlockShape(kind='text', tool_id=None),))
    """
    blocks = tuple(
        BlockShape(block_kind(b), b.id if isinstance(b, ToolCallBlock | ToolResultBlock) else None)
        for b in message.blocks
    )
    return MessageShape(role=message.role, id=message.id, blocks=blocks)


def shapes(messages: Sequence[Message]) -> tuple[MessageShape, ...]:
    """The shape of every message, in order."""
    return tuple(shape(m) for m in messages)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCall:
    """One `_call_api` call: its kind, tokens, tool names and the request as received."""

    kind: CallKind
    tokens: Tokens
    tools: tuple[str, ...]
    request: tuple[Message, ...]
    turn: int
    iteration: int  # the reasoning call of the turn it is (or, for a summary, precedes), from 0
    invocation: int | None = None  # summarizer invocation number, from 1
    tool_choice: str | None = None
    sent: tuple[dict[str, Any], ...] = ()  # the messages as the model's OpenAI formatter sends them

    def openai(self) -> list[dict[str, Any]]:
        """The request in the OpenAI chat format, for reading a failing test."""
        return to_openai(self.request)


@dataclass(frozen=True, slots=True, kw_only=True)
class Compression:
    """The context right after one compression was applied."""

    before_call: int  # index in `calls` of the next model call
    trigger: Literal["auto", "tool"]
    context: tuple[MessageShape, ...]
    messages: tuple[Message, ...]
    summary: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Offload:
    """One thing the offloader was given: where it went and the text pieces it held, in order."""

    kind: OffloadKind
    path: str
    texts: tuple[str, ...]
    data_blocks: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    """One task of the agent's task list at the end of the run."""

    id: str
    subject: str
    description: str
    state: str
    owner: str | None
    blocks: tuple[str, ...]
    blocked_by: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ParityTrace:
    """Everything the real agent did on one script."""

    calls: tuple[ModelCall, ...]
    compressions: tuple[Compression, ...]
    final_context: tuple[MessageShape, ...]
    final_messages: tuple[Message, ...]
    final_summary: str
    offloads: tuple[Offload, ...]
    tasks: tuple[TaskRecord, ...]
    replies: tuple[str, ...]
    error: str | None = None

    def input_tokens(self, convention: Convention = "as_sent") -> tuple[int, ...]:
        """Input tokens of every call in order, summary calls counted under `convention`."""
        return tuple(getattr(c.tokens, convention) for c in self.calls)

    def of_kind(self, kind: CallKind) -> tuple[ModelCall, ...]:
        """The calls of one kind, in order."""
        return tuple(c for c in self.calls if c.kind == kind)
