"""Tool outputs as the chat-completions model of openai-agents 0.24.0 sends them
(`models/chatcmpl_converter.py::Converter.items_to_messages`, `preserve_tool_output_all_content`
off, as `OpenAIChatCompletionsModel` converts its input).

A structured tool output (texts and images in order) reaches the API as a `tool` message of its
text parts alone, a list of text parts whatever their number; an output with no text part is a
`tool` message of one text the SDK writes in its place (`texts.omitted_output`; the SDK also logs
a warning). None of its images is sent, in that message or any other.

Seen on ctxlab's messages: a result holding data is the SDK's structured output (the lab's view
would send its texts, then its images in a user message of their own); every other result is sent
as stored, which is already the SDK's form (a lone text as a string).

Invariants:
- A result holding data is sent as its texts, `listed` (data left out), or as the omitted-output
  text alone when it holds no text; id, name and state are kept. Nothing else changes.
- A message holding no such result is the same object, and so is a request without one; a
  context whose tally counts no data (nearly every one) is sent as it is at no cost.
- A sent message is the same copy for the same stored message and text (`IdentityMemo`), and a
  request's sent messages are kept along it (`LeadingConcat`): a step costs what changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import Block, TextBlock, ToolResultBlock
from ctxlab.core.messages.mapped import MappedAlong
from ctxlab.core.messages.message import Message
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.steps import Edit, Step


def sent_result(result: ToolResultBlock, omitted: str) -> ToolResultBlock:
    """`result` as the chat-completions model sends it (the module invariants).

    >>> from ctxlab.core.messages.blocks import DataBlock
    >>> image = DataBlock(media_type="image/png", source="AA==", kind="base64")
    >>> shot = ToolResultBlock(id="c1", name="look", output=(TextBlock(text="Shot:"), image))
    >>> sent = sent_result(shot, "[none]")
    >>> sent.output, sent.listed
    ((TextBlock(text='Shot:'),), True)
    >>> sent_result(ToolResultBlock(id="c2", name="look", output=(image,)), "[none]").output
    (TextBlock(text='[none]'),)
    """
    if not result.tally.ndata:
        return result
    texts = tuple(part for part in result.output if isinstance(part, TextBlock))
    if not texts:
        return ToolResultBlock(
            id=result.id, name=result.name, output=(TextBlock(text=omitted),), state=result.state
        )
    return ToolResultBlock(id=result.id, name=result.name, output=texts, state=result.state, listed=True)


def _sent_block(block: Block, omitted: str) -> Block:
    return sent_result(block, omitted) if isinstance(block, ToolResultBlock) else block


def _sent_message_of(message: Message, omitted: str) -> Message:
    if not message.tally.ndata or not any(
        isinstance(block, ToolResultBlock) and block.tally.ndata for block in message.blocks
    ):
        return message  # data only outside results (a user's images) is sent as stored
    return message.with_blocks(tuple(_sent_block(block, omitted) for block in message.blocks))


sent_outputs = MappedAlong[Message](_sent_message_of)
"""`sent_outputs(messages, omitted)`: `messages` with every result holding data as the
chat-completions model sends it; `messages` itself when none holds any."""


@dataclass(frozen=True, slots=True)
class ChatCompletionsOutputs(Step):
    """The chat-completions model's form of tool outputs, the last edit of every request
    (request-only: the session stores every output whole, images included)."""

    omitted: str
    key: ClassVar[str] = "chat_completions_outputs"
    event: ClassVar[EventKind] = EventKind.CLEARED
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request with its structured outputs sent as text; the request itself when the
        context holds no data (the state's tally, at no cost)."""
        if not state.context_tally.ndata:
            return Edit(messages=messages)
        return Edit(messages=sent_outputs(messages, self.omitted))
