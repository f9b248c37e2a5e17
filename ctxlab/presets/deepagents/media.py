"""deepagents 0.7.32's media offload before a summary: the inline media of the summarized span
saved under `/conversation_history/media/` and named in the span by path.

Before the span is archived and summarized (`SummarizationMiddleware._offload_inline_media`,
`_rewrite_data_url_blocks`, `_decode_data_url`, `_media_reference_block`), each inline `data:`
media block of its messages is decoded and stored once per content at
`/conversation_history/media/<first 16 hex digits of the bytes' SHA-256>.<extension>`, and the
block becomes a reference to that path; the summary prompt's transcript then shows
`<image url="/conversation_history/media/….png" />` where LangChain's renderer drops the inline
data. The kept messages and every count keep the media inline; only the summary request (and
its trim) sees the references.

Invariants (on the LangChain view, the lab's OpenAI parts as langchain-core reads them into
standard blocks, `content_blocks`):
- Inline: an `image_url` part whose URL is a `data:` URL; a `file` part whose `file_data` is a
  base64 `data:` URL (langchain-core reads such a file as a PDF, whatever its type). Nothing else
  (a URL, a text, a `file` part of a plain `data:` URL) is offloaded.
- A message with no inline block is unchanged; one with any is rewritten block by block, an AI
  message (of no named provider) with its calls appended as `tool_call` blocks.
- The extension is the block's type's in deepagents' naming (`extensions.extension`: a fixed
  table where deepagents asks the machine's, `bin` for a type it lacks), taken from the first
  block of that content; the reference is an `image`, `audio` or `video`
  block by the type's major part, else a text naming the file (`texts.media_file`).
- A block whose payload does not decode becomes `texts.media_failed` (the lab's backend never
  refuses a file, so no other block fails).
- The lab keeps no media files: the span it saves holds the media whole (row D13).
"""

from __future__ import annotations

import base64
import hashlib
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import replace

from ctxlab.core.wire.views import Wire
from ctxlab.presets.deepagents.extensions import extension
from ctxlab.presets.lc_messages import LCMessage
from ctxlab.texts.deepagents import DeepAgentsTexts

MEDIA_DIR = "/conversation_history/media"
KEY_DIGITS = 16
"""Hex digits of the SHA-256 that name a media file."""
_BASE64_URI = re.compile(r"^data:(?P<mime_type>[^;]+);base64,(?P<data>.+)$")
"""A base64 `data:` URI as langchain-core parses one into a standard block."""


def inline_url(block: Wire) -> str | None:
    """The `data:` URL of an inline-media part, as deepagents reads it from the standard block
    langchain-core makes of the part (module invariants), or None."""
    kind = block.get("type")
    if kind == "image_url":
        url = (block.get("image_url") or {}).get("url")
        return url if isinstance(url, str) and url.startswith("data:") else None
    if kind == "file":
        data = (block.get("file") or {}).get("file_data")
        found = _BASE64_URI.match(data) if isinstance(data, str) else None
        return None if found is None else f"data:application/pdf;base64,{found['data']}"
    return None


def decoded(url: str) -> tuple[bytes, str, str] | None:
    """A `data:` URL's bytes, file extension and media type, or None when it does not decode."""
    try:
        header, payload = url.split(",", 1)
        mime = header.split(":")[1].split(";")[0] if ":" in header else "application/octet-stream"
        ext = extension(mime)
        encoded = "base64" in header.lower().split(";")
        raw = base64.b64decode(payload) if encoded else urllib.parse.unquote_to_bytes(payload)
    except Exception:  # deepagents turns any failure into a placeholder
        return None
    return raw, ext, mime


def media_key(raw: bytes) -> str:
    """The content digest naming a media file."""
    return hashlib.sha256(raw).hexdigest()[:KEY_DIGITS]


def reference(path: str, mime: str, texts: DeepAgentsTexts) -> Wire:
    """The block standing for media saved at `path`."""
    major = mime.split("/", 1)[0]
    if major in {"image", "audio", "video"}:
        return {"type": major, "url": path}
    return {"type": "text", "text": texts.media_file.format(path=path)}


def offloaded_media(span: Sequence[LCMessage], texts: DeepAgentsTexts) -> tuple[LCMessage, ...]:
    """The span as deepagents summarizes it: inline media replaced by references to the files it
    saves (module invariants)."""
    paths: dict[str, str] = {}
    return tuple(_offloaded(message, paths, texts) for message in span)


def _offloaded(message: LCMessage, paths: dict[str, str], texts: DeepAgentsTexts) -> LCMessage:
    if isinstance(message.content, str) or (message.kind == "ai" and message.provider is not None):
        return message
    urls = [inline_url(block) for block in message.content]
    if all(url is None for url in urls):
        return message
    blocks: list[Wire] = []
    for block, url in zip(message.content, urls, strict=True):
        if url is None:
            blocks.append(block)
            continue
        media = decoded(url)
        if media is None:
            blocks.append({"type": "text", "text": texts.media_failed})
            continue
        raw, ext, mime = media
        key = media_key(raw)
        path = paths.setdefault(key, f"{MEDIA_DIR}/{key}.{ext}")
        blocks.append(reference(path, mime, texts))
    if message.kind == "ai":
        blocks += [
            {"type": "tool_call", "id": c.id, "name": c.name, "args": c.arguments()}
            for c in message.tool_calls
        ]
    return replace(message, content=tuple(blocks))
