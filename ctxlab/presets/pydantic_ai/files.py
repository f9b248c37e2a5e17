"""Files a tool returned, as pydantic-ai-slim 2.62.0 sends them to an OpenAI chat model
(`ToolReturnPart.model_response_str_and_user_content`, `OpenAIChatModel._map_user_message`) and as
the harness counts them (`pydantic_ai_harness._message_text.tool_return_text`).

A chat `tool` message takes text only, so pydantic-ai names each file of a return by its content
and sends the name in the file's place (`returns`: the return's text, the identifier, the
frame). The files follow the request's returns in one user message, each between `file_open`
and `file_close`, a file given in base64 as its bytes encoded anew.

Seen on ctxlab's messages: every data block of a result is a file (pydantic-ai's multimodal
content); a round's returns are a run of results in a reply, so their files follow the run, as a
hint of parts (a user message where the OpenAI view sends it). A user's image is sent as pydantic-ai maps an
`ImageUrl` or a `BinaryContent` of its prompt (`_map_user_prompt`): a URL as given, base64 as its
bytes encoded anew. pydantic-ai would put them after a
user prompt merged into the request after the returns (a reply that ends on results, the next
turn's message then joining their request): the lab keeps them after the run.

Invariants:
- A message holding no data sent otherwise is the same object, and so is a request without one; a
  context whose tally counts no data (nearly every one) is sent as it is at no cost.
- A sent message is the same copy for the same stored message and texts (`IdentityMemo`), and a
  request's sent messages are kept along it (`MappedAlong`).
- `stored_of(sent_files(m, t))` is `m`: the harness counts the history it holds, not the form it
  sends (the last request sent in each thread is remembered; any other is its own).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import Block, DataBlock, HintBlock, Part, ToolResultBlock
from ctxlab.core.messages.mapped import MappedAlong
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.resumable import register
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.pydantic_ai.returns import FileTexts, sent_file, sent_return
from ctxlab.presets.steps import Edit, Step


def _holds_files(block: Block) -> bool:
    return isinstance(block, ToolResultBlock) and block.tally.ndata > 0


def _sent_message_of(message: Message, texts: FileTexts) -> Message:
    if not message.tally.ndata:
        return message
    blocks: list[Block] = []
    files: list[Part] = []  # the files of the run of results being read
    changed = False
    for block in message.blocks:
        if files and not isinstance(block, ToolResultBlock):
            blocks.append(HintBlock(hint=tuple(files)))
            files = []
        sent: Block = block
        if isinstance(block, ToolResultBlock) and _holds_files(block):
            sent, framed = sent_return(block, texts)
            files += framed
        elif isinstance(block, DataBlock):  # a user's image, as `_map_user_prompt` sends it
            sent = sent_file(block)
        changed = changed or sent is not block
        blocks.append(sent)
    if files:
        blocks.append(HintBlock(hint=tuple(files)))
    return message.with_blocks(tuple(blocks)) if changed else message


_sent_messages = MappedAlong[Message](_sent_message_of)


class _LastSent(threading.local):
    """The last request `sent_files` changed, and the stored messages it was made of: one per
    thread, so that runs sharing a process on a worker of several threads never read each other's
    (a request is counted in the thread that sent it, right after)."""

    last: tuple[tuple[Message, ...], tuple[Message, ...]] | None = None

    def clear(self) -> None:
        """Forget it (this thread's)."""
        self.last = None


_LAST = _LastSent()
register(_LAST)


def sent_files(messages: tuple[Message, ...], texts: FileTexts) -> tuple[Message, ...]:
    """`messages` with every return holding files as pydantic-ai sends it; `messages` itself
    when none holds any."""
    sent = _sent_messages(messages, texts)
    if sent is messages:
        return messages
    _LAST.last = (sent, messages)
    return sent


def stored_of(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The stored messages the last request `sent_files` changed was made of, when `messages` is
    that request; `messages` otherwise."""
    last = _LAST.last
    return last[1] if last is not None and last[0] is messages else messages


@dataclass(frozen=True, slots=True)
class SentFiles(Step):
    """Returned files as pydantic-ai sends them, the last edit of every request (request-only:
    the history keeps each return's files)."""

    texts: FileTexts
    key: ClassVar[str] = "sent_files"
    event: ClassVar[EventKind] = EventKind.CLEARED
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request with its returned files sent as pydantic-ai sends them; the request itself
        when the context holds no data (the state's tally, at no cost)."""
        if not state.context_tally.ndata:
            return Edit(messages=messages)
        return Edit(messages=sent_files(messages, self.texts))
