"""The media of tool results as AgentScope 2.0.11's `OpenAIChatFormatter` sends them, in messages
the lab's OpenAI view renders (`ctxlab.core.wire.views`).

AgentScope's formatter sends a tool result as one string: the texts of its output joined with a
newline, a medium it takes replaced by a reminder that names an identifier, a medium it does not
take (given by URL) by a reminder that names the URL. The media it takes follow the run of
results they came in (before the message's next other block, or at its end), one user message
per result: a header, each medium after an entry naming its identifier, a footer.

`sent_context(messages, texts)` writes the stored messages in that form: a result of several
parts becomes a one-text result and its media list a hint after the run, which the view sends
as a user message at its place (without AgentScope's `name`, which no view message carries).

Invariants:
- A message whose results hold one text at most is the same object, and so is a context of such
  messages.
- An identifier is a function of the call id and the medium's place in the stored output
  (`data_identifier`), as long as AgentScope's own (uuid4 hex); a request repeats it unchanged.
- Every piece added is text, counted wherever the request is; the data blocks are the same ones.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from fnmatch import fnmatch
from typing import Protocol

from ctxlab.core.messages.blocks import Block, DataBlock, HintBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.memo import RESUMED_BLOCKS, IdentityMemo, LeadingConcat, LeadingFold
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.templates import fill

SENT_MEDIA = ("image/*", "audio/*", "application/pdf")
"""The media types the OpenAI chat formatter sends as parts (its `input_types`, less text)."""
LISTED_MEDIA = (*SENT_MEDIA, "text/plain")
"""The media types it lists after the results: it takes `text/plain` too, but has no part for it."""


class HasDataTexts(Protocol):
    """The texts a result's media are sent with (`ctxlab.texts.Texts` has them)."""

    @property
    def data_presented(self) -> str: ...
    @property
    def data_list_header(self) -> str: ...
    @property
    def data_list_entry(self) -> str: ...
    @property
    def data_list_footer(self) -> str: ...
    @property
    def data_at_url(self) -> str: ...


@dataclass(frozen=True, slots=True)
class DataTexts:
    """The five texts, held apart so that a memo keys on them cheaply."""

    presented: str  # {type} {id}
    header: str
    entry: str  # {id} {type}
    footer: str
    at_url: str  # {type} {url}

    @classmethod
    def of(cls, texts: HasDataTexts) -> DataTexts:
        """The media texts of a text set."""
        return cls(
            texts.data_presented,
            texts.data_list_header,
            texts.data_list_entry,
            texts.data_list_footer,
            texts.data_at_url,
        )


def data_identifier(call_id: str, index: int) -> str:
    """The identifier of the medium at `index` of the output of call `call_id`: 32 hex digits,
    as long as AgentScope's uuid4 block ids, and the same in every request.

    >>> data_identifier("call-0001", 1) == data_identifier("call-0001", 1) != data_identifier("call-0001", 2)
    True
    >>> len(data_identifier("call-0001", 1))
    32
    """
    return hashlib.sha256(f"{call_id}\x00{index}".encode()).hexdigest()[:32]


def _matches(block: DataBlock, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch(block.media_type, pattern) for pattern in patterns)


def sent_result(result: ToolResultBlock, texts: DataTexts) -> tuple[ToolResultBlock, HintBlock | None]:
    """A result as sent, and the hint that sends its media (None when it lists none); a result
    of one text or none is returned as it is (so is every result of a run without media: the
    acting step merges a result's texts, only an image's replacement stands beside another).

    A medium the formatter does not list is named by its URL; one given in base64 is listed
    without a part (AgentScope saves it to a temporary file and names that file: not reproduced).
    """
    if not _needs_form(result):
        return result, None
    lines: list[str] = []
    listed: list[Part] = []
    for index, part in enumerate(result.output):
        if isinstance(part, TextBlock):
            lines.append(part.text)
            continue
        kind = part.media_type.split("/")[0]
        if not _matches(part, LISTED_MEDIA) and part.kind == "url":
            lines.append(fill(texts.at_url, type=kind, url=part.source))
            continue
        identifier = data_identifier(result.id, index)
        lines.append(fill(texts.presented, type=kind, id=identifier))
        listed.append(TextBlock(text=fill(texts.entry, id=identifier, type=kind)))
        if _matches(part, SENT_MEDIA):
            listed.append(part)
    sent = replace(result, output=(TextBlock(text="\n".join(lines)),))
    if not listed:
        return sent, None
    return sent, HintBlock(hint=(TextBlock(text=texts.header), *listed, TextBlock(text=texts.footer)))


def _sent_message_of(message: Message, texts: DataTexts) -> Message:
    blocks: list[Block] = []
    pending: list[HintBlock] = []  # the media lists of the run of results being read
    changed = False
    for block in message.blocks:
        if pending and not isinstance(block, ToolResultBlock):
            blocks += pending
            pending = []
        if not isinstance(block, ToolResultBlock):
            blocks.append(block)
            continue
        sent, hint = sent_result(block, texts)
        changed = changed or sent is not block
        blocks.append(sent)
        if hint is not None:
            pending.append(hint)
    if not changed:
        return message
    return message.with_blocks((*blocks, *pending))


_sent_message = IdentityMemo[Message, Message](_sent_message_of)


def _needs_form(block: Block) -> bool:
    """Whether the formatter writes `block` otherwise than the lab's view: a result of several
    parts, or holding a medium (`sent_result` keeps every other block as it is)."""
    if not isinstance(block, ToolResultBlock):
        return False
    output = block.output
    return len(output) > 1 or any(isinstance(part, DataBlock) for part in output)


_blocks_need = LeadingFold[Block, bool](lambda seen, block: seen or _needs_form(block))


def _message_needs(message: Message) -> bool:
    blocks = message.blocks
    if len(blocks) >= RESUMED_BLOCKS:  # a growing reply: read what it gained since the last call
        return _blocks_need(blocks, False)
    return any(_needs_form(block) for block in blocks)


_context_needs = LeadingFold[Message, bool](lambda seen, message: seen or _message_needs(message))


def _any_needs_form(messages: tuple[Message, ...]) -> bool:
    """Whether any result of `messages` is sent otherwise than the lab's view writes it. Kept
    along the context (`LeadingFold`), so a step costs what the context gained, and a context
    without such a result (nearly every one) is sent as it is stored at that cost."""
    return _context_needs(messages, False)


def _sent_parts(message: Message, _at: int, _before: int, texts: DataTexts) -> tuple[Message]:
    return (_sent_message(message, texts),)


_sent_messages = LeadingConcat[Message, Message](_sent_parts)


def sent_context(messages: tuple[Message, ...], texts: DataTexts) -> tuple[Message, ...]:
    """`messages` with every result holding data as the formatter sends it (the module
    docstring); `messages` itself when none does (`_any_needs_form`). Kept along the context, so a
    step writes what the context gained."""
    if not _any_needs_form(messages):
        return messages
    return _sent_messages(messages, texts)
