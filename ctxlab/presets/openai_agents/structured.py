"""`ToolOutputTrimmer`'s trimming of a structured tool output (openai-agents 0.24.0,
`agents/extensions/tool_output_trimmer.py`): an output that is a list of `input_text`,
`input_image` and `input_file` parts, as the SDK stores a tool's `ToolOutputText`,
`ToolOutputImage` and `ToolOutputFileContent` results.

`api_parts` gives a ctxlab result's output in that form: a text is an `input_text` part, an image
an `input_image` part of its URL (a data URL when it is base64), any other data an `input_file`
part (`file_data` a data URL, or `file_url`; `filename` its name when it has one). The lab's data
carry no `detail`.

Invariants:
- `payload_of` refuses (None) what the SDK does not trim: no part, a part that is not a mapping,
  of another type, with a field its type does not have or a value that is not a string, an image
  without `image_url` or `file_id` or with a `detail` not `low`, `high` or `auto`, a file without
  `file_data`, `file_url` or `file_id`.
- The payload's length is the characters (code points) of every field but `type`, of every part;
  its text is the texts joined with newlines; each image and file is a dropped part.
- `structured_notice` trims when the payload is longer than `max_output_chars`, always to at most
  `max_output_chars` characters: the most detailed header (`StructuredNotices`, in order; the
  dropped-part headers only when parts are dropped) that fits with the body, the body being the
  separator and at most `preview_chars` characters of text as the budget after the minimal header
  and separator allows, and the ellipsis when the preview is cut short and it fits after the
  minimal header; when even the minimal header is longer, its first `max_output_chars`
  characters. It never keeps an output because the notice would not be shorter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.texts.agents_structured import FILE, IMAGE, StructuredNotices

TEXT = "input_text"
FIELDS: Mapping[str, frozenset[str]] = {
    TEXT: frozenset({"type", "text"}),
    IMAGE: frozenset({"type", "image_url", "file_id", "detail"}),
    FILE: frozenset({"type", "file_data", "file_url", "file_id", "filename"}),
}
"""The fields each part type may have in an output the SDK trims."""

DETAILS = frozenset({"low", "high", "auto"})
SOURCES: Mapping[str, tuple[str, ...]] = {
    TEXT: ("text",),
    IMAGE: ("image_url", "file_id"),
    FILE: ("file_data", "file_url", "file_id"),
}
"""The fields of which a part must have one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Payload:
    """What the SDK reads of a structured output it may trim.

    Attributes:
        chars: the characters of its fields' values (`type` left out).
        text: its texts joined with newlines.
        dropped: (part type, count) of its images and files, sorted by type.
    """

    chars: int
    text: str
    dropped: tuple[tuple[str, int], ...]


def _refused(part: object) -> bool:
    if not isinstance(part, Mapping):
        return True
    kind = part.get("type")
    if not isinstance(kind, str) or kind not in FIELDS or not set(part) <= FIELDS[kind]:
        return True
    if any(key != "type" and not isinstance(value, str) for key, value in part.items()):
        return True
    if not any(isinstance(part.get(field), str) for field in SOURCES[kind]):
        return True
    return kind == IMAGE and "detail" in part and part["detail"] not in DETAILS


def payload_of(parts: Sequence[object]) -> Payload | None:
    """The payload of a structured output, None when the SDK does not trim it (module invariants).

    >>> payload_of([{"type": "input_text", "text": "ab"}, {"type": "input_image", "image_url": "xyz"}])
    Payload(chars=5, text='ab', dropped=(('input_image', 1),))
    >>> payload_of([{"type": "input_image", "image_url": "x", "detail": "max"}]) is None
    True
    """
    if not parts or any(_refused(part) for part in parts):
        return None
    mappings = [part for part in parts if isinstance(part, Mapping)]
    texts = [str(part["text"]) for part in mappings if part["type"] == TEXT]
    dropped: dict[str, int] = {}
    for part in mappings:
        if part["type"] != TEXT:
            dropped[part["type"]] = dropped.get(part["type"], 0) + 1
    chars = sum(len(value) for part in mappings for key, value in part.items() if key != "type")
    return Payload(chars=chars, text="\n".join(texts), dropped=tuple(sorted(dropped.items())))


def _headers(payload: Payload, name: str, shown: int, notices: StructuredNotices) -> list[str]:
    """The headers tried in order, for a preview of `shown` characters."""
    dropped = notices.dropped_note.format(
        parts=notices.part_sep.join(
            notices.dropped_part.format(count=count, kind=notices.kind_name(kind))
            for kind, count in payload.dropped
        )
    )
    preview = notices.preview_note.format(count=shown) if payload.text else ""
    headers = [
        notices.full.format(
            name=name, chars=payload.chars, preview=preview, dropped=dropped if payload.dropped else ""
        )
    ]
    if payload.dropped:
        kinds = notices.part_sep.join(notices.kind_name(kind) for kind, _ in payload.dropped)
        headers += [
            notices.named_dropped.format(name=name, dropped=dropped),
            notices.bare_dropped.format(dropped=dropped),
            notices.kinds.format(kinds=kinds),
            notices.opaque.format(count=sum(count for _, count in payload.dropped)),
        ]
    return [
        *headers,
        notices.payload.format(chars=payload.chars),
        notices.named.format(name=name),
        notices.minimal,
    ]


def structured_notice(
    parts: Sequence[object],
    name: str,
    *,
    max_output_chars: int,
    preview_chars: int,
    notices: StructuredNotices,
) -> str | None:
    """The text that replaces a structured output, or None when it stays (refused, or not longer
    than `max_output_chars`). `name` is the tool's name as shown (the unknown tool's already).

    >>> from ctxlab.texts.agents_structured import CTXLAB_STRUCTURED_NOTICES as lab
    >>> shot = [{"type": "input_text", "text": "Screenshot of the page"}]
    >>> shot.append({"type": "input_image", "image_url": "u" * 100})
    >>> print(structured_notice(shot, "look", max_output_chars=100, preview_chars=10, notices=lab))
    [look returned 122 characters, 10 kept, left out 1 image]
    Screenshot...
    >>> print(structured_notice(shot, "look", max_output_chars=50, preview_chars=10, notices=lab))
    [look output cut, left out 1 image]
    Screenshot...
    >>> structured_notice(shot, "look", max_output_chars=5, preview_chars=10, notices=lab)
    '[outp'
    """
    payload = payload_of(parts)
    if payload is None or payload.chars <= max_output_chars:
        return None
    minimal = notices.minimal
    if max_output_chars < len(minimal):
        return minimal[:max_output_chars]
    budget = max_output_chars - len(minimal) - len(notices.separator)
    shown = min(len(payload.text), preview_chars, max(0, budget))
    body = f"{notices.separator}{payload.text[:shown]}" if shown else ""
    if shown < len(payload.text) and len(minimal) + len(body) + len(notices.ellipsis) <= max_output_chars:
        body += notices.ellipsis
    header = next(
        h for h in _headers(payload, name, shown, notices) if len(h) + len(body) <= max_output_chars
    )
    return header + body


def _url(block: DataBlock) -> str:
    return block.source if block.kind == "url" else f"data:{block.media_type};base64,{block.source}"


def _api_part(part: Part) -> dict[str, str]:
    if isinstance(part, TextBlock):
        return {"type": TEXT, "text": part.text}
    if part.is_image:
        return {"type": IMAGE, "image_url": _url(part)}
    source = {"file_url": part.source} if part.kind == "url" else {"file_data": _url(part)}
    return {"type": FILE, **source, **({"filename": part.name} if part.name is not None else {})}


def api_parts(output: Sequence[Part]) -> tuple[dict[str, str], ...]:
    """A result's output as the SDK's structured output holds it (see the module docstring).

    >>> image = DataBlock(media_type="image/png", source="AA==", kind="base64")
    >>> for part in api_parts((TextBlock(text="Shot:"), image)):
    ...     print(part)
    {'type': 'input_text', 'text': 'Shot:'}
    {'type': 'input_image', 'image_url': 'data:image/png;base64,AA=='}
    """
    return tuple(_api_part(part) for part in output)
