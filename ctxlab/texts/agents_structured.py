"""The notices the OpenAI Agents SDK's `ToolOutputTrimmer` writes for a structured tool output (a
list of `input_text`, `input_image` and `input_file` parts), read from the installed package at
run time, and the lab's own wording of them.

`StructuredNotices` holds templates, not the trimmer's rules: which header is tried first, the
preview budget and when the ellipsis is added are the lab's code
(`ctxlab.presets.openai_agents.structured`). The package's templates are read by calling its
trimming method on stand-in outputs (marked names and sizes, parts whose counts are known) at
every `max_output_chars` from large to small, so each header it falls back to shows once, in its
order, and turning the marks back into fields. Nothing of the package is stored in this project.

Invariants:
- Each template is a `str.format` template of the fields its attribute names; every other brace
  is escaped.
- `read_structured_notices` raises LookupError when the package's notices do not have the shape
  this reader expects (another version), never returns a partial set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

IMAGE = "input_image"
FILE = "input_file"
"""The part types whose parts a trimmed structured output drops (the API's names)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredNotices:
    """What replaces a trimmed structured output, header by header, most detailed first.

    Attributes:
        full: `name`, `chars` (the payload's length), `preview` (`preview_note` or "") and
            `dropped` (`dropped_note` or "").
        preview_note: `count`, the characters of text kept.
        dropped_note: `parts`, the `dropped_part`s joined with `part_sep`.
        dropped_part: `count` and `kind` (a name of `kinds_named`).
        part_sep: between dropped parts, and between kinds in `kinds`.
        named_dropped: `name` and `dropped`; bare_dropped: `dropped`.
        kinds: `kinds`, the dropped kinds' names joined with `part_sep`.
        opaque: `count`, the number of parts dropped.
        payload: `chars`; named: `name`.
        minimal: the last header, cut to `max_output_chars` when even it is longer.
        separator: between a header and the preview; ellipsis: after a preview cut short.
        image_kind, file_kind: the names of the dropped kinds (`input_image`, `input_file`).
    """

    full: str
    preview_note: str
    dropped_note: str
    dropped_part: str
    part_sep: str
    named_dropped: str
    bare_dropped: str
    kinds: str
    opaque: str
    payload: str
    named: str
    minimal: str
    separator: str
    ellipsis: str
    image_kind: str
    file_kind: str

    def kind_name(self, part_type: str) -> str:
        """The name a dropped part type is shown by."""
        return self.image_kind if part_type == IMAGE else self.file_kind


CTXLAB_STRUCTURED_NOTICES = StructuredNotices(
    full="[{name} returned {chars} characters{preview}{dropped}]",
    preview_note=", {count} kept",
    dropped_note=", left out {parts}",
    dropped_part="{count} {kind}",
    part_sep=" and ",
    named_dropped="[{name} output cut{dropped}]",
    bare_dropped="[output cut{dropped}]",
    kinds="[output cut: {kinds}]",
    opaque="[output cut: {count} parts]",
    payload="[output cut: {chars} chars]",
    named="[{name} output cut]",
    minimal="[output cut]",
    separator="\n",
    ellipsis="...",
    image_kind="image",
    file_kind="file",
)

_NAME = "\x02"
_TEXT = "\x01"
_CHARS = 98_765
_PREVIEW = 4_321
_FILES, _IMAGES = 2, 3


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _field(text: str, mark: str, field: str) -> str:
    """`text` (escaped) with its one `mark` turned into `{field}`."""
    if text.count(mark) != 1:
        raise LookupError(f"a structured trim notice holds {mark!r} {text.count(mark)} times: {text!r}")
    return text.replace(mark, "{" + field + "}")


def _fields(text: str, marks: Sequence[tuple[str, str]]) -> str:
    escaped = _escape(text)
    for mark, field in marks:
        escaped = _field(escaped, _escape(mark), field)
    return escaped


def _between(longer: str, shorter: str) -> tuple[str, str, str]:
    """`longer` as (head, inserted, tail) where `shorter` is head + tail (suffix matched first)."""
    tail = 0
    while tail < len(shorter) and longer[len(longer) - 1 - tail] == shorter[len(shorter) - 1 - tail]:
        tail += 1
    head = 0
    while head < len(shorter) - tail and longer[head] == shorter[head]:
        head += 1
    if head + tail != len(shorter):
        raise LookupError(f"a structured trim notice is not another with a part added: {longer!r}")
    return longer[:head], longer[head : len(longer) - tail], longer[len(longer) - tail :]


def _parts(*, text: str = "", files: int = 0, images: int = 0) -> list[dict[str, str]]:
    """Parts whose payload is `_CHARS` characters: the text, then files and images."""
    parts = [{"type": "input_text", "text": text}] if text else []
    parts += [{"type": FILE, "file_data": "f"}] * files + [{"type": IMAGE, "image_url": "i"}] * images
    rest = _CHARS - len(text) - files - images + 1
    parts[-1] = {**parts[-1], "image_url": "i" * rest}
    return parts


Trim = Callable[[int, int, list[dict[str, str]], str], str]
"""The package's trimming of a stand-in output: (max_output_chars, preview_chars, parts, tool
name) -> the text that replaces it."""


def _headers(trim: Trim) -> list[str]:
    """The headers the package falls back through for 2 files and 3 images and no text, in order
    (the minimal one last), seen at every `max_output_chars` from large to small."""
    seen: list[str] = []
    for limit in range(400, 0, -1):
        out = trim(limit, 0, _parts(files=_FILES, images=_IMAGES), _NAME)
        if not seen or out != seen[-1]:
            seen.append(out)
    cut = 1
    while cut < len(seen) and len(seen[-cut - 1]) == cut + 1 and seen[-cut - 1].startswith(seen[-cut]):
        cut += 1
    headers = seen[: len(seen) - cut + 1]  # down to the minimal header, its cuts left out
    if len(headers) != 8:
        raise LookupError(f"this openai-agents falls back through {len(headers)} structured headers, not 8")
    return headers


def _dropped(note: str) -> tuple[str, str, str, str]:
    """The dropped-parts note of 2 files and 3 images as (its template, the listed parts, the
    part template, the separator between parts)."""
    kind_at = (note.find(FILE), note.find(IMAGE))
    if min(kind_at) < 0 or note.count(FILE) != 1 or note.count(IMAGE) != 1:
        raise LookupError(f"a structured trim notice names the dropped parts otherwise: {note!r}")
    first_end = kind_at[0] + len(FILE)
    count_at, second = note.rfind(str(_FILES), 0, kind_at[0]), note.find(str(_IMAGES), first_end)
    if count_at < 0 or second < 0:
        raise LookupError(f"a structured trim notice counts the dropped parts otherwise: {note!r}")
    part, part_sep = note[count_at:first_end], note[first_end:second]
    listed = f"{part}{part_sep}{part.replace(str(_FILES), str(_IMAGES)).replace(FILE, IMAGE)}"
    if listed not in note:
        raise LookupError(f"the dropped parts are not listed alike: {note!r}")
    head, _, tail = note.partition(listed)
    template = f"{_escape(head)}{{parts}}{_escape(tail)}"
    return template, listed, _fields(part, ((str(_FILES), "count"), (FILE, "kind"))), part_sep


def read_structured_notices(trim: Trim) -> StructuredNotices:
    """The package's structured notices, read through `trim` (see the module docstring).

    Raises:
        LookupError: the notices do not have the expected marks (another version).
    """
    full, named_dropped, bare_dropped, kinds, opaque, payload, named, minimal = _headers(trim)
    head, note, tail = _between(bare_dropped, minimal)
    dropped_note, listed, dropped_part, part_sep = _dropped(note)
    image_note = note.replace(listed, dropped_part.format(count=1, kind=IMAGE))
    text = _TEXT * (_PREVIEW + 100)
    previewed = trim(50_000, _PREVIEW, _parts(text=text, images=1), _NAME)
    unpreviewed = trim(50_000, 0, _parts(text=text, images=1), _NAME)
    at = previewed.find(_TEXT * _PREVIEW)
    ellipsis = previewed[at + _PREVIEW :]
    if at < 0 or not ellipsis or not unpreviewed.endswith(ellipsis):
        raise LookupError("a structured preview is not followed by an ellipsis")
    marks = ((_NAME, "name"), (str(_CHARS), "chars"), (image_note, "dropped"))
    bare = _fields(trim(50_000, _PREVIEW, _parts(images=1), _NAME), marks)
    with_note = _fields(unpreviewed[: len(unpreviewed) - len(ellipsis)], marks)
    before, zero_note, after = _between(with_note, bare)
    preview_note = _field(zero_note, "0", "count")
    template = f"{before}{{preview}}{after}"
    header = template.format(
        name=_NAME, chars=_CHARS, preview=preview_note.format(count=_PREVIEW), dropped=image_note
    )
    if (
        not previewed.startswith(header)
        or template.format(name=_NAME, chars=_CHARS, preview="", dropped=note) != full
    ):
        raise LookupError("a structured notice's header is not where it was expected")
    return StructuredNotices(
        full=template,
        preview_note=preview_note,
        dropped_note=dropped_note,
        dropped_part=dropped_part,
        part_sep=part_sep,
        named_dropped=_fields(named_dropped, ((_NAME, "name"), (note, "dropped"))),
        bare_dropped=f"{_escape(head)}{{dropped}}{_escape(tail)}",
        kinds=_fields(kinds, ((f"{FILE}{part_sep}{IMAGE}", "kinds"),)),
        opaque=_fields(opaque, ((str(_FILES + _IMAGES), "count"),)),
        payload=_fields(payload, ((str(_CHARS), "chars"),)),
        named=_fields(named, ((_NAME, "name"),)),
        minimal=minimal,
        separator=previewed[len(header) : at],
        ellipsis=ellipsis,
        image_kind=IMAGE,
        file_kind=FILE,
    )
