"""The media a tool attached to its result, as Google ADK 2.13.0 sends them.

ADK takes each medium a tool returns (a part of inline bytes or of a file URI, with a media type)
out of the result into the function response's parts. Its LiteLLM adapter (`models/lite_llm.py`)
writes the function responses of one content as `tool` messages and then, in one user message of
its own, the responses' inline media alone, in order, each as `_get_content` writes a part for an
OpenAI chat endpoint (the media type read without parameters, in lower case):
- a medium given by URI (file data) is not sent at all;
- inline bytes of no length are left out;
- `text/*`: the bytes decoded as text (UTF-8, else Latin-1), a lone one the message's string;
- `image/*`, `video/*`, `audio/*` and the documents the adapter knows (PDF, Word, PowerPoint,
  JSON, shell scripts): the bytes, encoded anew in base64 (an image as a `data:` URL);
- any other type: the adapter refuses the request (`ValueError`), and so does the preset.

Invariants: a medium's sent part is made once per object (`IdentityMemo`); an image already in
that form is sent as itself.
"""

from __future__ import annotations

import base64

from ctxlab.core.messages.blocks import DataBlock, HintBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.memo import IdentityMemo

MEDIA_SOURCE = "adk-result-media"
"""The `source` of the hint a run of results' media become: the user message after their `tool`
messages, which answers the model turn as the results do."""

_BYTES = frozenset({"image", "video", "audio"})
_DOCUMENTS = frozenset(
    {
        "application/pdf",
        "application/msword",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "application/json",
        "application/x-sh",
    }
)
"""The documents ADK's adapter sends as files (uploaded first for an OpenAI endpoint)."""


def media_type(raw: str) -> str:
    """A media type as the adapter compares it: without parameters, in lower case.

    >>> media_type("Text/Plain; charset=utf-8")
    'text/plain'
    """
    return raw.split(";", 1)[0].strip().lower()


def sent_medium(part: DataBlock) -> Part | None:
    """The part ADK's LiteLLM adapter sends for one medium of a result, None for none.

    >>> sent_medium(DataBlock(media_type="image/png", source="https://example.com/a.png")) is None
    True
    >>> sent_medium(DataBlock(media_type="text/plain", source="aGk=", kind="base64"))
    TextBlock(text='hi')
    >>> sent_medium(DataBlock(media_type="IMAGE/PNG", source="iVBO\\nRw==", kind="base64"))
    DataBlock(media_type='image/png', source='iVBORw==', kind='base64', name=None)

    Raises:
        ValueError: a medium with no media type (ADK leaves it in the response itself, which the
            lab does not model), or of a type the adapter refuses.
    """
    if not part.media_type:
        raise ValueError("a result's medium with no media type: ADK keeps it in the response, not modelled")
    if part.kind != "base64":
        return None
    data = base64.b64decode(part.source)
    if not data:
        return None
    kind = media_type(part.media_type)
    if kind.startswith("text/"):
        try:
            return TextBlock(text=data.decode("utf-8"))
        except UnicodeDecodeError:
            return TextBlock(text=data.decode("latin-1"))
    if kind.split("/", 1)[0] not in _BYTES and kind not in _DOCUMENTS:
        raise ValueError(f"a result's medium of type {part.media_type!r}: ADK's LiteLLM adapter refuses it")
    fresh = base64.b64encode(data).decode("ascii")
    if (fresh, kind) == (part.source, part.media_type):
        return part
    return DataBlock(media_type=kind, source=fresh, kind="base64", name=part.name)


def _result_media(result: ToolResultBlock) -> tuple[Part, ...]:
    sent = (sent_medium(p) for p in result.output if isinstance(p, DataBlock))
    return tuple(p for p in sent if p is not None)


result_media = IdentityMemo[ToolResultBlock, tuple[Part, ...]](_result_media)
"""The parts the adapter sends of a result's media, in order, kept by identity."""


def media_hint(media: tuple[Part, ...]) -> HintBlock:
    """The user message a run of results' sent media make."""
    return HintBlock(hint=media, source=MEDIA_SOURCE)
