"""A tool's files as pydantic-ai-slim 2.62.0 names them in its return and frames them after the
returns (`ToolReturnPart.model_response_str_and_user_content`), and as the harness counts such a
return (`pydantic_ai_harness._message_text.tool_return_text`); `ctxlab.presets.pydantic_ai.files`
sends them so.

The return's text is the JSON array (compact, non-ASCII as is) of its items, each text as it is
and each file as `reference` with its identifier; the harness counts the items joined with a
space. An identifier is the first 6 hex digits of the SHA-1 of the file's bytes, or of the UTF-8
bytes of its URL for a file given by URL (`file_id`).

Invariants: pure functions of their arguments, using only the standard library and `ctxlab.core`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import json
from dataclasses import dataclass

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.templates import fill


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


def sent_file(part: DataBlock) -> DataBlock:
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
            framed += [TextBlock(text=opening), sent_file(part), TextBlock(text=texts.close)]
    return sent, tuple(framed)
