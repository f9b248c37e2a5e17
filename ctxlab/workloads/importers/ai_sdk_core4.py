"""Vercel AI SDK 4 `CoreMessage`s as the OpenAI chat provider of that generation sends them
(`convertToLanguageModelPrompt` of ai 4.3.19, `convertToOpenAIChatMessages` of @ai-sdk/openai
1.3.24), and a 4.x `Message`'s `experimental_attachments` as the content parts
`convertToCoreMessages` makes of them.

Mapping rules:
- Roles `system` (its text), `user`, `assistant` and `tool`, whose every `tool-result` part is
  one tool message, in part order.
- A user message is its text (one string when it is a single text part; empty text parts are
  dropped) and its images: a URL as it is (the SDK writes it again as a WHATWG URL parser does,
  which changes only a URL not already in that form), base64 data (or a `data:` URL's) as a
  `data:` URL of the media type its first bytes tell (GIF, PNG, JPEG, WebP, BMP, TIFF, AVIF,
  HEIC), else the part's own, else `image/jpeg`, the payload written again as standard base64.
  Files (PDF, audio, and images given as files, which the provider refuses) are counted.
- An assistant message's text parts are its text, joined with nothing between; its reasoning
  parts its reasoning, joined by a line break (the provider drops them; the replay keeps them
  apart); its tool calls its calls, `args` as `JSON.stringify` writes them (none: `{}`).
  Redacted reasoning and files are counted.
- A tool result is `JSON.stringify` of its `result`, a string result quoted too (none: empty,
  counted); `isError` makes it an error result. Its `experimental_content` is counted (the chat
  provider sends the result).
- Attachments: an `http(s)` URL of an `image/*` content type is an image part of that URL; a
  `data:` URL an image part of its bytes (`image/*`), a text part of its UTF-8 text (`text/*`),
  else a file part; one the SDK cannot send (no content type where it needs one, another URL
  scheme, data that is not base64) is counted.

Invariants:
- A role or part AI SDK 4 never writes, or a field of the wrong type, is an error at the
  message's line (`Report.error`), told as `message N.content[k]`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers.base import (
    Calls,
    Report,
    Wire,
    assistant,
    call,
    content,
    data_url,
    field_of,
    image_part,
    system,
    text_part,
    tool,
    user,
)
from ctxlab.workloads.importers.js_json import js_json

ROLES = ("system", "user", "assistant", "tool")
SIGNATURES = (
    (b"GIF", "image/gif"),
    (b"\x89PNG", "image/png"),
    (b"\xff\xd8", "image/jpeg"),
    (b"RIFF", "image/webp"),
    (b"BM", "image/bmp"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"\x00\x00\x00\x20ftypavif", "image/avif"),
    (b"\x00\x00\x00\x20ftypheic", "image/heic"),
)
"""First bytes and the image media type the SDK tells from them, in the order it tries them."""
FALLBACK_IMAGE = "image/jpeg"
"""The provider's media type for image bytes of no known type."""
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
BASE64 = re.compile(r"[A-Za-z0-9+/]*")


def chat(message: Mapping[str, Any], where: str, number: int, calls: Calls) -> Iterator[Wire]:
    """The chat messages of one 4.x core message (see the module docstring)."""
    report, role, body = calls.report, message.get("role"), message.get("content")
    if role not in ROLES:
        raise report.error(
            number, f"{where}: its role is {role!r}; an AI SDK 4 CoreMessage is one of {ROLES}"
        )
    if role == "system" or isinstance(body, str):
        if not isinstance(body, str):
            raise report.error(number, f"{where}: a system message's content is not text")
        yield from _plain(role, body, where, number, report)
        return
    if not isinstance(body, list):
        raise report.error(number, f"{where}: its 'content' is neither text nor a list of parts")
    typed_parts(body, where, number, report)
    if role == "user":
        yield from user_parts(body, where, number, report, _user_part)
    elif role == "assistant":
        yield from assistant_parts(
            body, where, number, calls, counted=_counted_v4, arguments="args", writer="AI SDK 4"
        )
    else:
        for k, part in enumerate(body):
            yield _result(part, f"{where}.content[{k}]", number, calls)


def _plain(role: str, text: str, where: str, number: int, report: Report) -> Iterator[Wire]:
    if role == "system":
        yield system(text)
    elif role == "user":
        yield user(text)
    elif role == "assistant":
        if text:
            yield assistant(text)
        else:
            report.skip("empty assistant message")
    else:
        raise report.error(number, f"{where}: a tool message's content is not a list of tool-result parts")


def part_text(part: Mapping[str, Any], where: str, number: int, report: Report, key: str = "text") -> str:
    """A part's text under `key`, refused at its line when not text."""
    value = part.get(key)
    if not isinstance(value, str):
        raise report.error(number, f"{where}: a {part['type']} part's {key!r} is not text")
    return value


def _user_part(part: Mapping[str, Any], where: str, number: int, report: Report) -> list[Wire]:
    kind = part["type"]
    if kind == "text":
        text = part_text(part, where, number, report)
        return [text_part(text)] if text else []
    if kind == "image":
        media = part.get("mimeType")
        if media is not None and not isinstance(media, str):
            raise report.error(number, f"{where}: an image part's 'mimeType' is not text")
        return image(part.get("image"), media, report)
    if kind == "file":
        report.skip(f"file part of media type {part.get('mimeType')!r} in a user message")
        return []
    raise report.error(number, f"{where}: a {kind} part in a user message; AI SDK 4 writes text, image, file")


def image(data: object, media: str | None, report: Report) -> list[Wire]:
    """An image part of a URL, of a `data:` URL or of base64 data (module docstring)."""
    if not isinstance(data, str):
        report.skip("image part whose data is no URL or base64 text (bytes)")
        return []
    scheme = SCHEME.match(data)
    if scheme and scheme.group(1).lower() != "data":
        return [image_part(data)]
    if scheme:
        pieces = data.split(",")
        if len(pieces) < 2:
            report.skip("image part of a data URL without its data")
            return []
        media, data = pieces[0].split(";")[0].split(":")[1], pieces[1]
    raw = atob(data)
    if raw is None:
        report.skip("image part whose data is not base64")
        return []
    told = next((kind for first, kind in SIGNATURES if raw.startswith(first)), None)
    made = told or (FALLBACK_IMAGE if media is None else media)
    return [image_part(data_url(made, base64.b64encode(raw).decode("ascii")))]


def atob(text: str) -> bytes | None:
    """The bytes of base64 text as the SDK reads it (URL-safe letters too, ASCII whitespace and
    missing padding allowed); None for text it refuses."""
    text = re.sub(r"[\t\n\f\r ]", "", text.replace("-", "+").replace("_", "/"))
    if len(text) % 4 == 0:
        text = text.removesuffix("=").removesuffix("=") if text.endswith("=") else text
    if len(text) % 4 == 1 or not BASE64.fullmatch(text):
        return None
    return base64.b64decode(text + "=" * (-len(text) % 4))


def typed_parts(parts: list[Any], where: str, number: int, report: Report) -> None:
    """Refuse, at its line, a message content holding anything but typed parts."""
    for k, part in enumerate(parts):
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            raise report.error(number, f"{where}.content[{k}] is not a typed part")


def user_parts(
    parts: list[Mapping[str, Any]],
    where: str,
    number: int,
    report: Report,
    read: Callable[[Mapping[str, Any], str, int, Report], list[Wire]],
) -> Iterator[Wire]:
    """A user message of the parts `read` makes of its parts (none sent: counted as empty)."""
    sent = [p for k, part in enumerate(parts) for p in read(part, f"{where}.content[{k}]", number, report)]
    if sent:
        yield user(content(sent))
    else:
        report.skip("empty user message")


def assistant_parts(
    parts: list[Mapping[str, Any]],
    where: str,
    number: int,
    calls: Calls,
    *,
    counted: Callable[[Mapping[str, Any]], str | None],
    arguments: str,
    writer: str,
) -> Iterator[Wire]:
    """An assistant model message's parts as one message: its texts joined, its reasoning apart,
    its calls (their arguments under `arguments`, written as `JSON.stringify` writes them); a
    part `counted` names is counted under that name; any other kind is one `writer` never
    writes, refused at its line. A message of none of them is counted as empty."""
    report = calls.report
    texts: list[str] = []
    thoughts: list[str] = []
    made: list[Wire] = []
    for k, part in enumerate(parts):
        at, kind = f"{where}.content[{k}]", part["type"]
        if (skipped := counted(part)) is not None:
            report.skip(skipped)
        elif kind == "text":
            texts.append(part_text(part, at, number, report))
        elif kind == "reasoning":
            thoughts.append(part_text(part, at, number, report))
        elif kind == "tool-call":
            made.append(_call(part, at, number, calls, arguments))
        else:
            raise report.error(
                number, f"{at}: a {kind} part in an assistant message is not one {writer} writes"
            )
    text, reasoning = "".join(texts), "\n".join(thoughts)
    if text or made or reasoning:
        yield assistant(text, made, reasoning)
    else:
        report.skip("empty assistant message")


def _call(part: Mapping[str, Any], where: str, number: int, calls: Calls, arguments: str) -> Wire:
    call_id = part.get("toolCallId")
    if not isinstance(call_id, str) or not call_id:
        raise calls.report.error(
            number, f"{where}: a tool-call part has no 'toolCallId'; a result could not answer it"
        )
    name = part_text(part, where, number, calls.report, "toolName")
    return call(calls.declare(call_id), name, js_json(part.get(arguments, {})))


def _counted_v4(part: Mapping[str, Any]) -> str | None:
    kind = part["type"]
    return f"{kind} part in an assistant message" if kind in ("redacted-reasoning", "file") else None


def _result(part: Mapping[str, Any], where: str, number: int, calls: Calls) -> Wire:
    report, kind = calls.report, part["type"]
    if kind != "tool-result":
        raise report.error(
            number, f"{where}: a {kind} part in a tool message; AI SDK 4 writes tool-result there"
        )
    answered = calls.answer(part.get("toolCallId"), number, key="toolCallId")
    if "experimental_content" in part:
        report.skip("tool result's experimental_content (the chat provider sends its result)")
    if "result" not in part:
        report.skip("tool result without its result (sent without content)")
    body = js_json(part["result"]) if "result" in part else ""
    return tool(answered, body, error=part.get("isError") is True)


# ---------------------------------------------------------------------------------------------
# experimental_attachments


def attachments(listed: list[object], where: str, number: int, report: Report) -> list[Wire]:
    """The core content parts of a message's attachments (module docstring)."""
    made: list[Wire] = []
    for k, attachment in enumerate(listed):
        url, kind = field_of(attachment, "url"), field_of(attachment, "contentType")
        if not isinstance(url, str) or (kind is not None and not isinstance(kind, str)):
            raise report.error(
                number, f"{where}[{k}]: an attachment's 'url' is not text (or its 'contentType' is not)"
            )
        part, why = _attachment(url, kind or "")
        if part is None:
            report.skip(f"AI SDK 4 attachment the SDK cannot send ({why})")
        else:
            made.append(part)
    return made


def _attachment(url: str, kind: str) -> tuple[Wire | None, str]:
    """The content part of one attachment, or None and why the SDK cannot send it."""
    scheme = SCHEME.match(url)
    protocol = scheme.group(1).lower() if scheme else ""
    if protocol in ("http", "https"):
        if kind.startswith("image/"):
            return {"type": "image", "image": url}, ""
        return ({"type": "file", "data": url, "mimeType": kind}, "") if kind else (None, "no content type")
    if protocol != "data":
        return None, f"a URL of scheme {protocol!r}" if protocol else "no URL"
    pieces = url.split(",")
    raw = atob(pieces[1]) if len(pieces) > 1 else None
    if raw is None:
        return None, "a data URL without base64 data"
    if kind.startswith("image/"):
        return {"type": "image", "image": base64.b64encode(raw).decode("ascii")}, ""
    if kind.startswith("text/"):
        return {"type": "text", "text": raw.decode("utf-8-sig", "replace")}, ""
    return ({"type": "file", "data": pieces[1], "mimeType": kind}, "") if kind else (None, "no content type")
