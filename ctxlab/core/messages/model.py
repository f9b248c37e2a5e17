"""What passes between the agent loop and a model: requests, responses, model failures.

Invariants:
- A request is a value: the messages and tool schemas exactly as the lab would send them, the
  tool choice, its kind (`reasoning` or `summary`) and its 0-based index in the run.
- A response holds only content blocks (thinking, text, tool calls). Token usage is never part of
  it: the lab computes every count with its own counter, so a fake cannot invent one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ctxlab.core.messages.blocks import Block, TextBlock, ThinkingBlock, ToolCallBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema

CallKind = Literal["reasoning", "summary"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """One call to a model.

    `input_tokens` is the lab's own count of this request; `turn` and `iteration` locate it in
    the workload; for summary calls `invocation` numbers the summarizer invocations of the run
    (1-based) and `attempt` the structured-output attempts within one (0-based).
    """

    kind: CallKind
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...]
    tool_choice: str = "auto"
    call_index: int = 0
    context_size: int = 0
    input_tokens: int = 0
    turn: int = 0
    iteration: int = 0
    invocation: int = 0
    attempt: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponse:
    """What a model answers: thinking, text and tool calls, in order."""

    blocks: tuple[Block, ...] = ()

    @property
    def calls(self) -> tuple[ToolCallBlock, ...]:
        """The tool calls of the response."""
        return tuple(b for b in self.blocks if isinstance(b, ToolCallBlock))

    @property
    def text(self) -> str:
        """The response's text blocks joined."""
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    @classmethod
    def of_text(cls, text: str, thinking: str | None = None) -> ModelResponse:
        """A text answer, optionally after thinking."""
        head: tuple[Block, ...] = (ThinkingBlock(thinking=thinking),) if thinking else ()
        return cls(blocks=(*head, TextBlock(text=text)))


class ChatModel(Protocol):
    """Anything that answers requests; the lab's models are all fakes."""

    def respond(self, request: ModelRequest) -> ModelResponse:
        """Answer one request (or raise a `ModelError`)."""
        ...


class ModelError(RuntimeError):
    """A model call failed (a provider error, a timeout): not a structured-output problem."""


class ContextOverflowError(ModelError):
    """The request does not fit the model's window."""
