"""Vercel AI SDK message histories (the `ai` package, TypeScript) as OpenAI chat messages: a JSON
list of `UIMessage`s (what a `useChat` app persists) or of `ModelMessage`s (what `generateText`
and `streamText` take and return in `response.messages`), or such messages one a line, mapped as
an agent on the SDK sends the history to an OpenAI chat model (vercel/ai at
ed857f50f112e23930b0c2dd8d532cc8bebbc911: `ModelMessage` in
`packages/provider-utils/src/types/`, the chat mapping in
`packages/openai/src/chat/convert-to-openai-chat-messages.ts`). A `UIMessage` (`parts`) is first
made the model messages the SDK makes of it (`ctxlab.workloads.importers.ai_sdk_ui`).

Mapping rules:
- Roles: `system` (its text), `user`, `assistant`, and `tool`, whose every `tool-result` part is
  one tool message, in part order.
- A user message is its text, as one string when it is a single text part; its `image` parts and
  `file` parts of an image media type are image parts (a URL as is, base64 data as a `data:`
  URL). Other files (PDF, audio) are counted.
- An assistant message's `text` parts are its text, joined with nothing between; its `reasoning`
  parts its reasoning, joined by a line break (the chat mapping drops them; the replay keeps them
  apart); its `tool-call` parts its calls, the `input` as `JSON.stringify` writes it (`js_json`:
  numbers as JavaScript spells the double it reads; no input: `{}`). Files, custom parts and
  approval requests are counted; so are a provider-executed call and its result (a chat model's
  tools are the agent's own).
- A tool result's text, by its output's `type`: `text` and `error-text` its value; `json`,
  `error-json` and `content` the value's JSON; `execution-denied` its reason (or the SDK's fixed
  text). The `error-*` and `execution-denied` outputs are error results. An approval response is
  counted.
- AI SDK 4 histories (a `useChat` app's `Message`s, `CoreMessage`s) are read by that
  generation's rules: `ai_sdk_v4` makes core messages of its `Message`s, `ai_sdk_core4` sends
  them as its OpenAI provider does (tool results as `JSON.stringify` of their `result`).

Invariants:
- Detection takes a list (or lines) of AI SDK messages only when one holds what only the SDK
  writes: a `UIMessage`'s typed `parts`, a 4.x `Message`'s `toolInvocations` or attachments, or
  a `tool-call`, `tool-result`, approval, `image` or `file` part of its own shape. Plain
  `{role, content}` messages stay OpenAI chat.
- Each message is read by the rules of the SDK generation its shape tells (`ai_sdk_v4.tells`;
  one both write alike, by the history's so far, else 5.x's); a history whose messages tell both
  is refused at the first that contradicts the others.
- A result must answer a call before it, once; a role, part or output of a shape the SDK never writes
  is an error at its line (inside a document, the message's line).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers import ai_sdk_core4 as core4
from ctxlab.workloads.importers import ai_sdk_v4 as v4
from ctxlab.workloads.importers.ai_sdk_ui import DENIED, model_messages
from ctxlab.workloads.importers.ai_sdk_ui import known as ui_part
from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    base64_bytes,
    data_url,
    field_of,
    image_part,
    one_conversation,
    system,
    text_part,
    tool,
)
from ctxlab.workloads.importers.js_json import js_json

ROLES = ("system", "user", "assistant", "tool")
OWN_PARTS = frozenset(
    {"tool-call", "tool-result", "tool-approval-request", "tool-approval-response", "reasoning-file"}
)
"""Content parts only an AI SDK `ModelMessage` holds."""
ASSISTANT_COUNTED = frozenset({"file", "reasoning-file", "custom", "tool-approval-request"})
TEXT_OUTPUTS = frozenset({"text", "error-text"})
JSON_OUTPUTS = frozenset({"json", "error-json", "content"})
ERRORS = frozenset({"error-text", "error-json", "execution-denied"})
DETECT_ITEMS = 32
"""How many messages detection looks at (a history's first calls may follow a few texts)."""
URL_SCHEMES = ("http://", "https://", "data:")
UI_V4 = frozenset({"parts", "toolInvocations", "experimental_attachments"})
"""What makes an AI SDK 4 message one `convertToCoreMessages` converts (a `Message`)."""


# ---------------------------------------------------------------------------------------------
# Detection


def _is_ui(value: Mapping[str, Any]) -> bool:
    parts = value.get("parts")
    return (
        value.get("role") in ROLES[:3]
        and isinstance(parts, list)
        and all(isinstance(p, Mapping) and isinstance(p.get("type"), str) for p in parts)
    )


def _is_model(value: Mapping[str, Any]) -> bool:
    body = value.get("content")
    return (
        value.get("role") in ROLES
        and "parts" not in value
        and not {"tool_calls", "tool_call_id", "function_call"} & value.keys()
        and (isinstance(body, str) or (isinstance(body, list) and all(isinstance(p, Mapping) for p in body)))
    )


def _own(part: Mapping[str, Any]) -> bool:
    kind = part.get("type")
    return (
        kind in OWN_PARTS or (kind == "image" and "image" in part) or (kind == "file" and "mediaType" in part)
    )


def _is_v4(value: Mapping[str, Any]) -> bool:
    """An AI SDK 4 `Message`: its text in `content`, also beside its parts."""
    parts = value.get("parts")
    return (
        value.get("role") in v4.ROLES
        and isinstance(value.get("content"), str)
        and (parts is None or isinstance(parts, list))
    )


def _telling(value: Mapping[str, Any]) -> bool:
    if v4.tells(value) is not None:
        return True
    if "parts" in value:
        return any(ui_part(part["type"]) for part in value["parts"])
    body = value.get("content")
    return isinstance(body, list) and any(_own(part) for part in body)


def is_ai_sdk(values: list[object]) -> bool:
    """A JSON list of AI SDK messages, or JSONL whose first lines are, with one at least that only
    the SDK writes (see the module docstring)."""
    first = values[0] if values else None
    head = first[:DETECT_ITEMS] if isinstance(first, list) else values
    messages = [m for m in head if isinstance(m, Mapping) and (_is_ui(m) or _is_model(m) or _is_v4(m))]
    return bool(head) and len(messages) == len(head) and any(_telling(m) for m in messages)


# ---------------------------------------------------------------------------------------------
# Reading


def read_ai_sdk(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The history's messages, in file order, as one conversation (see the module docstring).

    Raises:
        SessionError: a session past 0 (a file holds one history).
    """
    if report.session:
        raise one_conversation(report.source, "an AI SDK history", report.session)
    read = _History(Calls(report, once=True))
    pending: tuple[Mapping[str, Any], str, int] | None = None
    for number, value in entries:
        if pending is not None:  # another line follows: that message was not the history's last
            yield from read.message(*pending, last=False)
            pending = None
        listed = value if isinstance(value, list) else [value]
        for index, message in report.each(listed):
            where = f"message {index}" if isinstance(value, list) else "the message"
            final = index == len(listed) - 1
            if final and report.document is None and _needs_place(message):
                pending = (message, where, number)
            else:
                yield from read.message(message, where, number, last=final and report.document is not None)
    if pending is not None:
        yield from read.message(*pending, last=True)


def _needs_place(message: object) -> bool:
    """An AI SDK 4 message whose mapping depends on its being the history's last (a JSONL line's
    last message waits for the next line to tell)."""
    return (
        isinstance(message, Mapping)
        and message.get("role") == "assistant"
        and message.get("parts") is None
        and bool(message.get("toolInvocations"))
        and bool(message.get("content"))
    )


class _History:
    """The reading of one history: its calls, and the SDK generation its messages have told
    (`ai_sdk_v4.tells`), so that a history is read by one generation's rules."""

    def __init__(self, calls: Calls) -> None:
        self.calls = calls
        self.generation: tuple[int, str] | None = None

    def message(self, message: object, where: str, number: int, *, last: bool) -> Iterator[Wire]:
        """The chat messages of one message of the history."""
        report = self.calls.report
        if not isinstance(message, Mapping):
            raise report.error(number, f"{where} is no AI SDK message: it is not an object")
        if self._generation(message, where, number) == 4:
            converted = UI_V4 & message.keys() or message.get("role") == "data"
            cores = v4.core_messages(message, where, number, report, last=last) if converted else [message]
            for core in cores:
                yield from core4.chat(core, where, number, self.calls)
            return
        for made in _model(message, where, number, report):
            yield from chat(made, where, number, self.calls)

    def _generation(self, message: Mapping[str, Any], where: str, number: int) -> int:
        """The generation to read `message` by: the one it tells, which must be the history's."""
        told = v4.tells(message)
        if told is not None and self.generation is None:
            self.generation = (told, where)
        elif told is not None and self.generation is not None and told != self.generation[0]:
            was, first = self.generation
            raise self.calls.report.error(
                number,
                f"{where} is written as AI SDK {_versions(told)} write it, but {first} as "
                f"{_versions(was)} do: a history is written by one SDK version",
            )
        return self.generation[0] if self.generation else 5


def _versions(generation: int) -> str:
    return "4.x" if generation == 4 else "5.x and later"


def _model(
    message: Mapping[str, Any], where: str, number: int, report: Report
) -> Iterator[Mapping[str, Any]]:
    """A message as model messages: itself, or those of a `UIMessage`."""
    if message.get("role") not in ROLES:
        role = field_of(message, "role")
        raise report.error(
            number, f"{where} is no AI SDK message: its role is {role!r}; the SDK writes {ROLES}"
        )
    if "parts" in message and message["role"] != "tool":
        yield from model_messages(message, where, number, report)
    elif isinstance(message.get("content"), str | list):
        yield message
    else:
        raise report.error(
            number, f"{where} has neither 'parts' (a UIMessage) nor 'content' (a ModelMessage)"
        )


def chat(message: Mapping[str, Any], where: str, number: int, calls: Calls) -> Iterator[Wire]:
    """The chat messages of one model message (a reader on the SDK gives it its `ModelMessage`s)."""
    report, role, body = calls.report, message["role"], message["content"]
    if role == "system":
        if not isinstance(body, str):
            raise report.error(number, f"{where}: a system message's content is not text")
        yield system(body)
        return
    parts = [{"type": "text", "text": body}] if isinstance(body, str) else body
    core4.typed_parts(parts, where, number, report)
    if role == "user":
        yield from core4.user_parts(parts, where, number, report, _user_part)
    elif role == "assistant":
        yield from core4.assistant_parts(
            parts, where, number, calls, counted=_counted, arguments="input", writer="the SDK"
        )
    else:
        for k, part in enumerate(parts):
            yield from _result(part, f"{where}.content[{k}]", number, calls)


def _user_part(part: Mapping[str, Any], where: str, number: int, report: Report) -> list[Wire]:
    kind = part["type"]
    if kind == "text":
        return [text_part(core4.part_text(part, where, number, report))]
    if kind == "image":
        media = part.get("mediaType")
        if media is not None and not isinstance(media, str):
            raise report.error(number, f"{where}: an image part's 'mediaType' is not text")
        return _image(part.get("image"), media or "image/*", where, number, report)
    if kind == "file":
        media = part.get("mediaType")
        if isinstance(media, str) and media.startswith("image"):
            return _image(part.get("data"), media, where, number, report)
        report.skip(f"file part of media type {media!r} in a user message")
        return []
    raise report.error(number, f"{where}: a {kind} part in a user message; the SDK writes text, image, file")


def _image(data: object, media: str, where: str, number: int, report: Report) -> list[Wire]:
    """An image part of a URL, or of base64 data (also the SDK's tagged `{type, data|url}`)."""
    tag = field_of(data, "type")
    if tag in ("data", "url"):
        data = field_of(data, tag)
    if isinstance(data, str) and data.startswith(URL_SCHEMES):
        return [image_part(data)]
    if base64_bytes(data) is None:
        report.skip("image part whose data is no URL or base64 text (a provider reference, bytes)")
        return []
    if media in ("image", "image/*"):
        report.skip("image part of base64 data without its media type")
        return []
    return [image_part(data_url(media, str(data)))]


def _counted(part: Mapping[str, Any]) -> str | None:
    """What a later SDK's assistant part is counted as, when it is not sent."""
    kind = part["type"]
    if kind in ASSISTANT_COUNTED:
        return f"{kind} part in an assistant message"
    if kind == "tool-result" or (kind == "tool-call" and part.get("providerExecuted") is True):
        return f"provider-executed {kind} part"
    return None


def _result(part: Mapping[str, Any], where: str, number: int, calls: Calls) -> Iterator[Wire]:
    report, kind = calls.report, part["type"]
    if kind == "tool-approval-response":
        report.skip("tool-approval-response part")
        return
    if kind != "tool-result":
        raise report.error(
            number, f"{where}: a {kind} part in a tool message; the SDK writes tool-result there"
        )
    answered = calls.answer(part.get("toolCallId"), number, key="toolCallId")
    output = part.get("output")
    made = field_of(output, "type")
    if made == "execution-denied":
        reason = field_of(output, "reason")
        yield tool(answered, reason if isinstance(reason, str) else DENIED, error=True)
    elif made in TEXT_OUTPUTS | JSON_OUTPUTS and isinstance(output, Mapping) and "value" in output:
        value = output["value"]
        if made in TEXT_OUTPUTS and not isinstance(value, str):
            raise report.error(number, f"{where}: a {made} output's value is not text")
        yield tool(answered, value if made in TEXT_OUTPUTS else js_json(value), error=made in ERRORS)
    else:
        raise report.error(
            number, f"{where}: a tool-result's output is not one the SDK writes ({{type, value}})"
        )
