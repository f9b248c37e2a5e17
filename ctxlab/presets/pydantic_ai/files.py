"""Files a tool returned, as pydantic-ai-slim 2.62.0 sends them to an OpenAI chat model
(`ToolReturnPart.model_response_str_and_user_content`, `OpenAIChatModel._map_user_message`) and as
the harness counts them (`pydantic_ai_harness._message_text.tool_return_text`).

A chat `tool` message takes text only, so pydantic-ai names each file of a return by its content
and sends the name in the file's place: the return's text is the JSON array (compact, non-ASCII
as is) of its items, each text as it is and each file as `file_reference` with its identifier.
The files follow the request's returns in one user message, each between `file_open` (naming the
tool, the call and the file, values escaped as HTML attributes) and `file_close`, a file given in
base64 as its bytes encoded anew. The harness counts such a return as its items joined with a
space (`return_text`).

An identifier is the first 6 hex digits of the SHA-1 of the file's bytes, or of the UTF-8 bytes of
its URL for a file given by URL (`file_id`).

Seen on ctxlab's messages: every data block of a result is a file (pydantic-ai's multimodal
content); a round's returns are a run of results in a reply, so their files follow the run, as a
hint of parts (a user message where the OpenAI view sends it). pydantic-ai would put them after a
user prompt merged into the request after the returns (a reply that ends on results, the next
turn's message then joining their request): the lab keeps them after the run.

Invariants:
- A message holding no result with data is the same object, and so is a request without one; a
  context whose tally counts no data (nearly every one) is sent as it is at no cost.
- A sent message is the same copy for the same stored message and texts (`IdentityMemo`), and a
  request's sent messages are kept along it (`LeadingConcat`).
- `stored_of(sent_files(m, t))` is `m`: the harness counts the history it holds, not the form it
  sends (the last request sent is remembered; any other is its own).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import json
import operator
from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import Block, DataBlock, HintBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.resumable import register
from ctxlab.core.messages.templates import fill
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.steps import Edit, Step


@dataclass(frozen=True, slots=True)
class FileTexts:
    """How a returned file is named in its return (`{id}`) and framed after the returns
    (`{tool_name}`, `{tool_call_id}`, `{file_id}`)."""

    reference: str
    open: str
    close: str


def _content(part: DataBlock) -> bytes:
    """The bytes a file's identifier is made of: its data, or its URL's text."""
    if part.kind == "url":
        return part.source.encode("utf-8")
    try:
        return base64.b64decode(part.source)
    except binascii.Error:  # not base64: named by its text, as no package would take it
        return part.source.encode("utf-8")


def file_id(part: DataBlock) -> str:
    """The identifier pydantic-ai names a file by.

    >>> file_id(DataBlock(media_type="image/png", source="https://example.com/a.png"))
    'b86daf'
    >>> file_id(DataBlock(media_type="image/png", source="AA==", kind="base64"))  # the SHA-1 of b"\\x00"
    '5ba93c'
    """
    return hashlib.sha1(_content(part), usedforsecurity=False).hexdigest()[:6]


def _items(result: ToolResultBlock, reference: str) -> list[str]:
    return [p.text if isinstance(p, TextBlock) else fill(reference, id=file_id(p)) for p in result.output]


def return_text(result: ToolResultBlock, reference: str) -> str:
    """What the harness counts of a return holding files: its items joined with a space."""
    return " ".join(_items(result, reference))


def _sent_file(part: DataBlock) -> DataBlock:
    """A file as sent: given in base64, its bytes encoded anew (the same block when unchanged)."""
    if part.kind == "url":
        return part
    encoded = base64.b64encode(_content(part)).decode("ascii")
    return (
        part
        if encoded == part.source
        else DataBlock(media_type=part.media_type, source=encoded, kind="base64")
    )


def sent_return(result: ToolResultBlock, texts: FileTexts) -> tuple[ToolResultBlock, tuple[Part, ...]]:
    """A return holding files as sent, and its framed files for the user message after the run."""
    text = json.dumps(_items(result, texts.reference), ensure_ascii=False, separators=(",", ":"))
    sent = ToolResultBlock(id=result.id, name=result.name, output=(TextBlock(text=text),), state=result.state)
    framed: list[Part] = []
    for part in result.output:
        if isinstance(part, DataBlock):
            attributes = {"tool_name": result.name, "tool_call_id": result.id, "file_id": file_id(part)}
            opening = fill(texts.open, **{k: html.escape(v) for k, v in attributes.items()})
            framed += [TextBlock(text=opening), _sent_file(part), TextBlock(text=texts.close)]
    return sent, tuple(framed)


def _holds_files(block: Block) -> bool:
    return isinstance(block, ToolResultBlock) and block.tally.ndata > 0


def _sent_message_of(message: Message, texts: FileTexts) -> Message:
    if not message.tally.ndata or not any(map(_holds_files, message.blocks)):
        return message  # data only outside results (a user's images) is sent as stored
    blocks: list[Block] = []
    files: list[Part] = []  # the files of the run of results being read
    for block in message.blocks:
        if files and not isinstance(block, ToolResultBlock):
            blocks.append(HintBlock(hint=tuple(files)))
            files = []
        if isinstance(block, ToolResultBlock) and _holds_files(block):
            sent, framed = sent_return(block, texts)
            blocks.append(sent)
            files += framed
        else:
            blocks.append(block)
    if files:
        blocks.append(HintBlock(hint=tuple(files)))
    return message.with_blocks(tuple(blocks))


_sent_message = IdentityMemo[Message, Message](_sent_message_of)
_sent_messages = LeadingConcat[Message, Message](
    lambda message, _at, _before, texts: (_sent_message(message, texts),)
)


class _LastSent:
    """The last request `sent_files` changed, and the stored messages it was made of."""

    __slots__ = ("__weakref__", "last")

    def __init__(self) -> None:
        self.last: tuple[tuple[Message, ...], tuple[Message, ...]] | None = None
        register(self)

    def clear(self) -> None:
        """Forget it."""
        self.last = None


_LAST = _LastSent()


def sent_files(messages: tuple[Message, ...], texts: FileTexts) -> tuple[Message, ...]:
    """`messages` with every return holding files as pydantic-ai sends it; `messages` itself
    when none holds any."""
    sent = _sent_messages(messages, texts)
    if len(sent) == len(messages) and all(map(operator.is_, sent, messages)):
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
