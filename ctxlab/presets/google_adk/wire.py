"""Google ADK 2.13.0's requests in the OpenAI chat form, as its LiteLLM adapter writes them
(`models/lite_llm.py`), and a model's answer as its session keeps it.

Invariants:
- A call's arguments are the object ADK reads (strict JSON, else its repairs) written back with
  `json.dumps(..., ensure_ascii=False)` (`sent_arguments`); a call ADK discards fails the run;
  a reply's reasoning is sent back as `reasoning_content` (`adk_answer`).
- A tool's text result goes out as its function response's JSON, `{"result": ...}`
  (`sent_response`); a model turn's texts are joined with a newline; a request whose contents end
  with a model turn gets the adapter's continuation user message (`sent_request`).
- The media results carry go after a run of results as one user message of what the adapter
  sends of them (`media`): a URL's not at all.
- Each edit is kept by identity (memos), so a request that grew costs what it gained, and a
  message that needs no edit is sent as the same object.
"""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Sequence
from typing import NamedTuple

from ctxlab.core.messages.blocks import (
    ZERO,
    Block,
    HintBlock,
    Part,
    Tally,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    with_arguments,
    with_thinking_sent,
)
from ctxlab.core.messages.memo import (
    RESUMED_BLOCKS,
    Closing,
    IdentityMemo,
    LeadingConcat,
    LeadingFold,
    LeadingScan,
)
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.wire.views import REASONING_FIELD
from ctxlab.presets.google_adk.arguments import parsed_arguments
from ctxlab.presets.google_adk.media import MEDIA_SOURCE, media_hint, result_media
from ctxlab.presets.google_adk.session import arguments

CONTINUATION_ID = "adk-continuation"
"""The id of the user message ADK's model adapters add to a request that ends with a model turn
(not among the contents ADK estimates)."""


def sent_arguments(raw: str) -> str:
    """A call's arguments as ADK sends them in every later request: it keeps the model's call as
    a `FunctionCall` whose `args` is the object it read (`parsed_arguments`: strict JSON, else
    its repairs), and its LiteLLM adapter writes it back with `json.dumps(args,
    ensure_ascii=False)`: non-ASCII as written, `", "` and `": "` as separators.

    >>> sent_arguments('{"q":"北京","k":[1,2.50]}'), sent_arguments(""), sent_arguments("{'q': True}")
    ('{"q": "北京", "k": [1, 2.5]}', '{}', '{"q": true}')

    Raises:
        ValueError: ADK discards a call whose arguments it cannot read as an object, so no ADK
            session holds one (`session.arguments` names the call).
    """
    parsed = parsed_arguments(raw)
    if parsed is None:
        raise ValueError(f"arguments {raw[:80]!r}: not a JSON object, even after ADK's repairs")
    return json.dumps(parsed, ensure_ascii=False)


NO_PARTS = ThinkingBlock(thinking="", wire_field=REASONING_FIELD)
"""The stored form of an empty answer: an event of ADK's session whose content has no parts."""


def adk_answer(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """A model's answer as ADK's session keeps it: each call's arguments as `sent_arguments`
    writes them, its reasoning as a thought part, which ADK's LiteLLM adapter sends back in the
    assistant message's `reasoning_content`; a block ADK would send unchanged is the same object.
    An empty answer is still an event of ADK's session (the adapter makes a content of no parts,
    which ADK keeps with the call's usage): an empty thought stands for it (`NO_PARTS`), which no
    request, summary line or estimate shows, so the latest usage and the retained events are
    ADK's.

    Raises:
        ValueError: a call ADK's adapter discards (`session.arguments`, which names it).
    """
    if not blocks:
        return (NO_PARTS,)
    for block in blocks:
        if isinstance(block, ToolCallBlock):
            arguments(block)
    return with_thinking_sent(with_arguments(blocks, sent_arguments), REASONING_FIELD)


def sent_response(text: str) -> str:
    r"""A tool's text result as ADK sends it in the OpenAI form: its session keeps a result that
    is not a mapping as the function response `{"result": ...}`, and its LiteLLM adapter writes
    the response into the `tool` message with `json.dumps(response, ensure_ascii=False)`.

    >>> print(sent_response('ls: 数据\n"ok"'))
    {"result": "ls: 数据\n\"ok\""}
    """
    return json.dumps({"result": text}, ensure_ascii=False)


def escaped_length(sent: str) -> int:
    r"""The length of the JSON text `sent` (written with non-ASCII as is) written again with
    non-ASCII escaped, as `json.dumps` does by default: each character past ASCII becomes one
    `\uXXXX` escape, or two (a surrogate pair) past the Basic Multilingual Plane, and so does
    DEL (U+007F), the one ASCII character only the default escapes; every other character is
    written alike either way.

    >>> escaped_length(sent_response("é😀\x7f")) == len(json.dumps({"result": "é😀\x7f"}))
    True
    """
    if sent.isascii() and "\x7f" not in sent:
        return len(sent)
    # counted by C-speed encodings, not character by character: a result can be megabytes
    beyond_ascii = len(sent) - len(sent.encode("ascii", "ignore"))
    astral = len(sent.encode("utf-16-le", "surrogatepass")) // 2 - len(sent)
    return len(sent) + 5 * (beyond_ascii + sent.count("\x7f")) + 6 * astral


def sent_request(messages: tuple[Message, ...], then: Message) -> tuple[Message, ...]:
    """The request's messages as ADK's LiteLLM adapter sends them: each result's text as its
    function response written in JSON (`sent_response`), and `then` after a request whose
    contents end with a model turn (a summary or a model response: what `as_message` makes of
    them is an assistant message that does not end with a result)."""
    sent = _sent_messages(messages)
    last = sent[-1] if sent else None
    if last is not None and last.role == "assistant" and not _answered(last):
        return (*sent, then)
    return sent


def _answered(message: Message) -> bool:
    """Whether the message ends with a result, or the media of results (whose content ADK gives
    the user role)."""
    last = message.blocks[-1] if message.blocks else None
    return isinstance(last, ToolResultBlock) or (isinstance(last, HintBlock) and last.source == MEDIA_SOURCE)


def _sent_message_of(message: Message) -> Message:
    """The message as sent: results written as their responses (`_sent_block`), a run of results
    followed by what the adapter sends of their media (`media`), if anything; in an assistant
    message, each model turn's texts (a run of blocks between results) as one, which ADK's adapter
    joins with a newline, leaving empty ones out. A message that needs neither is itself. A long
    message (a reply that grows by a round at every call) resumes the blocks sent for the blocks
    it begins with (`LeadingScan`), and their running tally.

    >>> texts = (TextBlock(text="a"), TextBlock(text=""), TextBlock(text="b"))
    >>> _sent_message_of(Message(role="assistant", blocks=texts)).blocks
    (TextBlock(text='a\\nb'),)
    >>> plain = Message(role="user", blocks=texts)
    >>> _sent_message_of(plain) is plain
    True
    """
    blocks = _sent_scan.finished(message.blocks, _NO_SENT, _open_sent, message.role == "assistant")
    if len(blocks) == len(message.blocks) and all(map(operator.is_, blocks, message.blocks)):
        return message
    if len(blocks) < RESUMED_BLOCKS:
        return message.with_blocks(blocks)
    return message.with_blocks(blocks, _sent_tally(blocks, ZERO))


class _SentRun(NamedTuple):
    """The blocks a message's sent form holds open: those since its last result, with its texts
    joined at the first one's place (`text_at`, -1 before a text) where texts are joined; or,
    after a result, the sent media of the run of results it ends (`media`)."""

    blocks: tuple[Block, ...]
    text_at: int
    media: tuple[Part, ...] = ()


_NO_SENT = _SentRun((), -1)


def _sent_step(run: _SentRun, block: Block, _before: int, joins: bool) -> tuple[tuple[Block, ...], _SentRun]:
    """The sent blocks `block` completes (the open run and its result, or the media of the run of
    results before it), and the run left open."""
    if isinstance(block, ToolResultBlock):
        return (*run.blocks, _sent_results(block)), _SentRun((), -1, (*run.media, *result_media(block)))
    media: tuple[Block, ...] = (media_hint(run.media),) if run.media else ()
    if not isinstance(block, TextBlock) or not joins:
        return media, _SentRun((*run.blocks, block), run.text_at)
    if run.text_at < 0:
        return media, _SentRun((*run.blocks, block), len(run.blocks))
    held = run.blocks[run.text_at]
    assert isinstance(held, TextBlock)
    joined = TextBlock(text="\n".join(t for t in (held.text, block.text) if t))
    return (), _SentRun((*run.blocks[: run.text_at], joined, *run.blocks[run.text_at + 1 :]), run.text_at)


def _open_sent(run: _SentRun, done: Sequence[Block]) -> Closing[Block]:
    return len(done), (media_hint(run.media),) if run.media else run.blocks


_sent_scan = LeadingScan[Block, _SentRun, Block](_sent_step)
_sent_tally = LeadingFold[Block, Tally](lambda total, block: total + block.tally)


def _sent_result(block: ToolResultBlock) -> ToolResultBlock:
    """The result as its `tool` message: its response's JSON (its media go after the run of
    results it is in: `media`)."""
    sent = TextBlock(text=sent_response(block.text))
    return ToolResultBlock(id=block.id, name=block.name, output=(sent,), state=block.state)


def _sent_block(block: Block) -> Block:
    return _sent_results(block) if isinstance(block, ToolResultBlock) else block


_sent_results = IdentityMemo[ToolResultBlock, ToolResultBlock](_sent_result)
_sent_message = IdentityMemo[Message, Message](_sent_message_of)
_sent_messages = LeadingConcat[Message, Message](lambda message, _at, _before: (_sent_message(message),))


@functools.cache
def continuation(text: str) -> Message:
    """The user message ADK's model adapters add after a model turn, one object per text."""
    return text_message("user", text, id=CONTINUATION_ID)
