"""Amazon Bedrock Converse messages, the form strands agents keep their history in, as OpenAI chat
messages.

A Converse message is `{"role": "user" | "assistant", "content": [block, ...]}`, each block an
object keyed by its kind (`text`, `toolUse`, `toolResult`, `reasoningContent`, `image`,
`document`, `cachePoint`, `guardContent`, ...), never by a `type` field (which is how an
Anthropic Messages log is told apart). Three files hold them, one conversation a file:
- messages: a JSON list of messages (a strands agent's `agent.messages` dumped as JSON), or
  JSONL of one message (or one list of them) a line;
- session records: strands' `FileSessionManager` message files (`message_<n>.json`, each
  `{"message", "message_id", "redact_message", "created_at", "updated_at"}`), one file being one
  message, so a conversation is a JSON list of an agent's records (or JSONL of one a line), in
  the order of their `message_id`, which must rise (a list out of order is refused: sort it);
  a record whose `redact_message` is set is replayed as that message, as strands restores it,
  and its original is counted;
- Converse request logs: the request body of `bedrock-runtime` `Converse` (`messages`,
  `system` text blocks, `toolConfig.tools[].toolSpec`), its response (`{"output": {"message"},
  "stopReason", "usage"}`) wrapped with it (`{"request", "response"}`) or as the entry after it.
  Each request repeats its conversation, so the last request, with its response, is the
  conversation; earlier requests are counted. `system` is the system prompt (its text blocks
  joined) and the tool specs are the tool schemas; `modelId`, `inferenceConfig`, `toolChoice`
  and the response's usage are not messages.

Mapping rules: where the lab's shared rules leave a choice, the history is mapped as strands'
OpenAI provider (`OpenAIModel.format_request_messages`) sends it; where they do not, they win,
and the provider's own choice is named:
- A user message's `toolResult` blocks are tool messages, in order, before the message's other
  content (a user message of results alone gives no user message), as the provider sends them;
  a result's `status: "error"` makes it an error result (the provider drops the status; no
  status is success, as a Converse request may omit it). Its content, as the provider writes
  it: `text` blocks, and each `json` block as its JSON text (non-ASCII kept), adjacent texts
  joined with a newline, one string when all are text; with an image, the parts in order, the
  image kept in the tool message by the lab's rule (the provider moves it to a user message
  after the results, with a notice).
- Text, images and text documents are a user message's parts. An `image` is a `data:` URL of
  `image/<format>`, its `source.bytes` base64 text or strands' session marker
  `{"__bytes_encoded__": true, "data": <base64>}`. A document given as text (`source.text`,
  `source.content`) or as the bytes of a text format (txt, md, csv, html) is a text part, its
  name, a blank line, its text. A `guardContent` is its text (or image).
- An assistant message's `text` blocks join its text (a `citationsContent` adds its texts),
  `toolUse` blocks are its calls (`input` JSON-encoded, as the provider sends it), and
  `reasoningContent.reasoningText.text` is reasoning, never text (the provider leaves it out).
- A request's `system` text blocks are one system prompt, joined with nothing between by the
  lab's rule (the provider sends a system message for each).
- Counted, not replayed: `cachePoint` markers, a redacted reasoning block, video and audio, a
  PDF or office document, an image or document given by S3 location, and any part an assistant
  message cannot carry (an image there). Message `metadata` (usage) and `tracking_id` are not
  content and are ignored.
- A located error: a role other than user or assistant, a block of no kind strands writes, a
  call in a user message or a result in an assistant one, an image format or bytes that are no
  image, a result answering no call before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.core.messages.tools import NotJSONError
from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    base64_bytes,
    call,
    content,
    data_url,
    field_of,
    image_part,
    listed,
    object_of,
    schema,
    system,
    text_of,
    text_part,
    tool,
    user,
)

USER_KINDS = frozenset(
    {"text", "image", "document", "guardContent", "toolResult", "cachePoint", "video", "audio"}
)
ASSISTANT_KINDS = frozenset(
    {"text", "toolUse", "reasoningContent", "citationsContent", "cachePoint", "image", "document", "video"}
)
KINDS = USER_KINDS | ASSISTANT_KINDS
IMAGE_FORMATS = frozenset({"png", "jpeg", "gif", "webp"})
TEXT_DOCUMENTS = frozenset({"txt", "md", "csv", "html"})
BYTES_MARK = "__bytes_encoded__"
EARLIER = "earlier Converse request (the last request repeats its conversation)"
NO_PROMPT = (
    "strands keeps the system prompt on the agent, not in its messages: the file holds none, so "
    "none is replayed (a Converse request log carries it)"
)
REDACTED = "redacted message (its redact_message is replayed, as strands restores it)"


# ---------------------------------------------------------------------------------------------
# Detection


def _blocks_of(message: object) -> list[Any] | None:
    """A Converse message's blocks, or None when `message` is not one (a role of user or
    assistant, no block with a `type`). Content that is no list, and items that are no object,
    tell nothing either way: the messages around them tell the format, and reading it says
    what is wrong with them, at their line."""
    if not isinstance(message, Mapping) or message.get("role") not in {"user", "assistant"}:
        return None
    found = message.get("content")
    blocks = [b for b in found if isinstance(b, Mapping)] if isinstance(found, list) else []
    return None if any("type" in block for block in blocks) else blocks


def _messages_in(value: object) -> list[object] | None:
    """The Converse messages an entry holds (a message, a session record, a request or its
    wrapper, or a list of them), or None when it holds none."""
    items = value if isinstance(value, list) else [value]
    found: list[object] = []
    for item in items:
        if not isinstance(item, Mapping):
            return None
        wrapped = item.get("request")
        inner = wrapped if isinstance(wrapped, Mapping) else item
        if isinstance(inner.get("messages"), list) and "input" not in inner:
            found.extend(inner["messages"])
        elif isinstance(item.get("message"), Mapping) and "message_id" in item:
            found.append(item["message"])
        elif "role" in item:
            found.append(item)
        elif not _is_response(item):
            return None
    return found


def is_converse(values: list[object]) -> bool:
    """Converse messages, session records or requests (see the module docstring): every message
    of the first entries is a Converse message and one block at least is of a Converse kind."""
    kinds: set[str] = set()
    for value in values:
        messages = _messages_in(value)
        if messages is None:
            return False
        for message in messages:
            blocks = _blocks_of(message)
            if blocks is None:
                return False
            kinds.update(key for block in blocks for key in block)
    return bool(kinds & KINDS)


def _is_response(value: object) -> bool:
    """A Converse response logged as an entry of its own: `output.message`, no `messages`."""
    return (
        isinstance(value, Mapping)
        and isinstance(field_of(value, "output", "message"), Mapping)
        and "messages" not in value
    )


# ---------------------------------------------------------------------------------------------
# Reading


def read_converse(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of a file of Converse messages, session records or requests."""
    reader = Messages(report)
    pending: tuple[int, Mapping[str, Any], object] | None = None  # the last request and its response
    last_id: int | None = None
    first: str | None = None
    for number, value in entries:
        items = value if isinstance(value, list) else [value]
        for _, item in report.each(items):
            kind = _entry_kind(item)
            first = _same(first, kind, number, report)
            if kind == "request":
                pending = _logged(pending, item, number, report)
            elif kind == "record":
                last_id = _rising(item, last_id, number, report)
                yield from reader.message(_recorded(item, report), number)
            else:
                yield from reader.message(item, number)
    if first in {"record", "message"}:
        report.note_once(NO_PROMPT)
    if pending is not None:
        yield from _request(*pending, reader)


def _entry_kind(value: object) -> str:
    """What an item of the file is: a request (or its response), a session record, a message."""
    if isinstance(field_of(value, "messages"), list) or isinstance(field_of(value, "request"), Mapping):
        return "request"
    if _is_response(value):
        return "request"
    return "record" if isinstance(field_of(value, "message"), Mapping) else "message"


def _same(first: str | None, kind: str, number: int, report: Report) -> str:
    """The kind of the file's items, which its first item sets.

    Raises:
        TraceError: an item of another kind (a message among requests, say).
    """
    if first is not None and kind != first:
        raise report.error(number, f"a Converse {kind} in a file of {first}s: a file holds one kind")
    return kind


def _logged(
    pending: tuple[int, Mapping[str, Any], object] | None, item: object, number: int, report: Report
) -> tuple[int, Mapping[str, Any], object]:
    """The request to keep after reading `item`: a request (the one before it counted), or the
    response answering the request before it.

    Raises:
        TraceError: a response that follows no request awaiting one.
    """
    if _is_response(item):
        if pending is None or pending[2] is not None:
            raise report.error(number, "a Converse response that follows no request awaiting one")
        return pending[0], pending[1], item
    if pending is not None:
        report.skip(EARLIER)
    wrapped = field_of(item, "request")
    if isinstance(wrapped, Mapping):
        return number, wrapped, field_of(item, "response")
    assert isinstance(item, Mapping)
    return number, item, None


def _rising(record: Mapping[str, Any], last: int | None, number: int, report: Report) -> int:
    """A session record's `message_id`, which must rise in file order.

    Raises:
        TraceError: an id that is not a whole number, or not above the one before it.
    """
    found = record.get("message_id")
    if not isinstance(found, int) or isinstance(found, bool):
        raise report.error(number, f"a session record's message_id is {found!r}, not a whole number")
    if last is not None and found <= last:
        raise report.error(
            number,
            f"session record {found} follows record {last}: list an agent's message files in the "
            "order of their message_id",
        )
    return found


def _recorded(record: Mapping[str, Any], report: Report) -> object:
    """The message a session record stands for: its `redact_message` when set."""
    redacted = record.get("redact_message")
    if redacted is None:
        return record["message"]
    report.skip(REDACTED)
    return redacted


def _request(number: int, request: Mapping[str, Any], response: object, reader: Messages) -> Iterator[Wire]:
    """The conversation of the request taken: its system prompt, its messages, its response's."""
    report = reader.report
    _tools(request.get("toolConfig"), number, report)
    prompt = _system(request.get("system"), report)
    if prompt:
        yield system(prompt)
    for _, message in report.each(request["messages"]):
        yield from reader.message(message, number)
    answer = field_of(response, "output", "message")
    if response is not None and not isinstance(answer, Mapping):
        raise report.error(number, "a logged Converse response has no 'output.message'")
    if answer is not None:
        yield from reader.message(answer, number)


def _system(blocks: object, report: Report) -> str:
    """The system prompt: its text blocks (and guarded texts) joined; a cache point counted."""
    texts: list[str] = []
    for block in map(object_of, listed(blocks)):
        if "text" in block:
            texts.append(text_of(block["text"]))
        elif "guardContent" in block:
            texts.append(text_of(field_of(block, "guardContent", "text", "text")))
        else:
            report.skip(f"system block {_kind(block)}")
    return "".join(texts)


def _tools(config: object, number: int, report: Report) -> None:
    """The tool specs of a request's `toolConfig`, as the file's tool schemas."""
    for item in field_of(config, "tools") or []:
        spec = field_of(item, "toolSpec")
        if spec is None:
            report.skip(f"tool entry {_kind(item)}")
            continue
        try:
            found = schema(spec["name"], spec.get("description"), field_of(spec, "inputSchema", "json"))
        except NotJSONError as error:
            raise report.error(number, str(error)) from None
        if found is not None:
            report.tools.append(found)


def _kind(block: object) -> str:
    """How a block is named: its first key."""
    return repr(next(iter(block), None)) if isinstance(block, Mapping) else repr(type(block).__name__)


# ---------------------------------------------------------------------------------------------
# Messages


@dataclass(slots=True)
class Messages:
    """Converse messages read one at a time, the calls declared so far kept to check results."""

    report: Report
    calls: Calls = field(init=False)

    def __post_init__(self) -> None:
        self.calls = Calls(self.report)

    def message(self, message: object, number: int) -> Iterator[Wire]:
        """The OpenAI chat messages of one Converse message.

        Raises:
            TraceError: a message that is none, or a block strands never writes there.
        """
        report = self.report
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
            raise report.error(number, "not a Converse message: expected {'role', 'content': [blocks]}")
        role, blocks = message.get("role"), message["content"]
        for block in blocks:
            if not isinstance(block, Mapping) or _block_kind(block) not in KINDS:
                raise report.error(
                    number, f"a {role} message holds a block of no Converse kind ({_kind(block)})"
                )
        if role == "user":
            yield from self._user(blocks, number)
        elif role == "assistant":
            yield self._assistant(blocks, number)
        else:
            raise report.error(number, f"a Converse message's role is {role!r}; expected user or assistant")

    def _user(self, blocks: list[Mapping[str, Any]], number: int) -> Iterator[Wire]:
        parts: list[Wire] = []
        results = 0
        for block in blocks:
            kind = _block_kind(block)
            if kind == "toolResult":
                results += 1
                yield self._result(block[kind], number)
            elif kind not in USER_KINDS:
                raise self.report.error(
                    number, f"a user message holds a {kind!r} block, which strands never writes there"
                )
            else:
                parts.extend(self._part(block, "user message", number))
        if parts or not results:
            yield user(content(parts))

    def _result(self, result: Mapping[str, Any], number: int) -> Wire:
        call_id = self.calls.answer(result.get("toolUseId"), number, key="toolResult.toolUseId")
        parts: list[Wire] = []
        for block in result["content"]:
            as_text = {"text": json.dumps(block["json"], ensure_ascii=False)} if "json" in block else block
            for part in self._part(as_text, "tool result", number):
                if part["type"] == "text" and parts and parts[-1]["type"] == "text":
                    parts[-1] = text_part(f"{parts[-1]['text']}\n{part['text']}")
                else:
                    parts.append(part)
        return tool(call_id, content(parts), error=result.get("status") == "error")

    def _part(self, block: Mapping[str, Any], where: str, number: int) -> list[Wire]:
        """The content part of a user or result block (none when it is counted)."""
        kind = _block_kind(block)
        if kind == "text":
            return [text_part(text_of(block["text"]))]
        if kind == "guardContent":
            guarded = block[kind]
            return self._part(
                guarded if "image" in guarded else {"text": guarded["text"]["text"]}, where, number
            )
        if kind == "image":
            return self._image(block[kind], where, number)
        if kind == "document":
            found = _document(block[kind])
            if found is not None:
                return [text_part(found)]
            self.report.skip(f"{where} document ({_source(block[kind])})")
            return []
        if kind not in KINDS:
            raise self.report.error(number, f"a {where} holds a block of no Converse kind ({kind!r})")
        self.report.skip(f"{where} block {kind!r}")
        return []

    def _image(self, image: Mapping[str, Any], where: str, number: int) -> list[Wire]:
        fmt, data = image.get("format"), field_of(image, "source", "bytes")
        if fmt not in IMAGE_FORMATS:
            raise self.report.error(
                number, f"an image's format is {fmt!r}; Converse takes png, jpeg, gif or webp"
            )
        if data is None:
            self.report.skip(f"{where} image ({_source(image)})")
            return []
        return [image_part(data_url(f"image/{fmt}", _base64(data, number, self.report)))]

    def _assistant(self, blocks: list[Mapping[str, Any]], number: int) -> Wire:
        texts: list[str] = []
        calls: list[Wire] = []
        reasoning: list[str] = []
        for block in blocks:
            kind = _block_kind(block)
            if kind == "text":
                texts.append(text_of(block["text"]))
            elif kind == "toolUse":
                use = block[kind]
                calls.append(
                    call(self.calls.declare(_call_id(use, number, self.report)), use["name"], use["input"])
                )
            elif kind == "reasoningContent":
                reasoning.extend(self._reasoning(block[kind]))
            elif kind == "citationsContent":
                texts.extend(text_of(field_of(item, "text")) for item in block[kind]["content"])
            elif kind in ASSISTANT_KINDS:
                self.report.skip(f"assistant message block {kind!r}")
            else:
                raise self.report.error(
                    number, f"an assistant message holds a {kind!r} block, which strands never writes there"
                )
        return assistant("".join(texts), calls, "\n\n".join(r for r in reasoning if r))

    def _reasoning(self, block: Mapping[str, Any]) -> list[str]:
        if "reasoningText" in block:
            return [text_of(block["reasoningText"]["text"])]
        self.report.skip("redacted reasoning (opaque)")
        return []


def _block_kind(block: Mapping[str, Any]) -> str:
    """A block's kind: the one key of those Converse blocks have (the first otherwise)."""
    known = [key for key in block if key in KINDS]
    return known[0] if known else str(next(iter(block), ""))


def _call_id(use: Mapping[str, Any], number: int, report: Report) -> str:
    found = use.get("toolUseId")
    if not isinstance(found, str) or not isinstance(use.get("name"), str):
        raise report.error(number, "a toolUse block needs a string 'toolUseId' and 'name'")
    return found


def _base64(data: object, number: int, report: Report) -> str:
    """An image's bytes as base64 text: a string as written, strands' session marker's `data`.

    Raises:
        TraceError: bytes that are neither, or not base64.
    """
    data = _unmarked(data)
    if base64_bytes(data) is None:
        raise report.error(
            number, "an image's bytes are not base64 text (nor strands' {'__bytes_encoded__': true, 'data'})"
        )
    return str(data)


def _unmarked(data: object) -> object:
    """Bytes as written: strands' session marker's `data`, anything else as it is."""
    return data.get("data") if isinstance(data, Mapping) and data.get(BYTES_MARK) is True else data


def _document(document: Mapping[str, Any]) -> str | None:
    """A document's name and text, a blank line between; None when it carries no text."""
    source = document.get("source")
    text = field_of(source, "text")
    listed = field_of(source, "content")
    if isinstance(listed, list):
        text = "".join(text_of(field_of(item, "text")) for item in listed)
    data = field_of(source, "bytes")
    if text is None and data is not None and document.get("format") in TEXT_DOCUMENTS:
        raw = base64_bytes(_unmarked(data))
        try:
            text = None if raw is None else raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(text, str):
        return None
    return "\n\n".join(t for t in (text_of(document.get("name")), text) if t)


def _source(value: Mapping[str, Any]) -> str:
    """How an image or document not replayed is counted: its format, or its source's kind."""
    source = value.get("source")
    if isinstance(source, Mapping) and "bytes" not in source:
        return f"{next(iter(source), 'no')} source"
    return str(value.get("format"))
