"""The four-level document reader of the Select layer: catalog, resolve, section, search.

The idea is the Select layer's just-in-time retrieval: instead of putting a document library into
the context, the agent gets a reader tool and pulls in only what it needs. Level 1 lists the
documents (`catalog`); level 2 returns a document's metadata and section list, with its text only
when it is at most `MAX_DIRECT_CHARS` characters long (`resolve`); level 3 returns one section,
chosen by its title, a `Parent > Child` path, or a keyword that matches exactly one heading
(`section`); level 4 returns matching lines with where they are (`search`).

Invariants:
- Every answer is a JSON-able mapping (or list); errors are mappings with an `error` code and a
  message, never exceptions, so a tool can return them as they are.
- Headings are Markdown ATX headings (`#` to `######` then a space); a section runs from its
  heading to the next heading of the same or a higher level. At most `MAX_HEADINGS` are listed.
- Sizes are UTF-8 bytes; the direct-read limit counts characters, as the seed does.
- Pure: the library is a value; the same library and arguments give the same answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ctxlab.core.messages.blocks import utf8_len
from ctxlab.core.messages.tools import ToolSchema

MAX_DIRECT_CHARS = 12_000
"""A document longer than this is never returned whole: `resolve` lists its sections instead."""

MAX_HEADINGS = 80
"""At most this many headings are listed, so the list itself stays short."""

READ_DOCUMENT = "read_document"
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    """One Markdown document of the library."""

    id: str
    text: str

    @property
    def title(self) -> str:
        """The first line without its `#` marks when it is a heading, else the id."""
        first = self.text.split("\n", 1)[0]
        return first.lstrip("#").strip() if first.startswith("#") else self.id


class Heading(NamedTuple):
    """A heading: its level, title and where it starts in the text."""

    level: int
    title: str
    start: int


def headings(text: str) -> tuple[Heading, ...]:
    """Every heading of `text`, in order.

    >>> headings("# A\\ntext\\n## B\\n")
    (Heading(level=1, title='A', start=0), Heading(level=2, title='B', start=9))
    """
    return tuple(Heading(len(m.group(1)), m.group(2).strip(), m.start()) for m in HEADING.finditer(text))


def _find(library: Sequence[Document], doc_id: str) -> Document | None:
    return next((d for d in library if d.id == doc_id), None)


def _missing(doc_id: str) -> dict[str, Any]:
    return {"id": doc_id, "error": "DOCUMENT_NOT_FOUND", "message": f"No document has the id {doc_id!r}."}


def catalog(library: Sequence[Document]) -> list[dict[str, Any]]:
    """Level 1: every document's id, title and size, no text."""
    return [{"id": d.id, "title": d.title, "size": utf8_len(d.text)} for d in library]


def resolve(
    library: Sequence[Document], doc_id: str, max_direct_chars: int = MAX_DIRECT_CHARS
) -> dict[str, Any]:
    """Level 2: metadata and sections; the text too when it is short enough."""
    doc = _find(library, doc_id)
    if doc is None:
        return _missing(doc_id)
    found = headings(doc.text)[:MAX_HEADINGS]
    answer: dict[str, Any] = {
        "id": doc.id,
        "title": doc.title,
        "sections": [{"level": h.level, "title": h.title} for h in found],
    }
    if len(doc.text) <= max_direct_chars:
        answer.update(content=doc.text, requires_section=False)
        return answer
    answer.update(
        requires_section=True,
        hint=(
            f"The document has {len(doc.text)} characters, over the {max_direct_chars}-character limit "
            "for reading it whole. Ask for one section: action='section' with a heading title or a "
            "path such as 'Parent > Child'."
        ),
    )
    return answer


def _section_end(found: Sequence[Heading], index: int, length: int) -> int:
    level = found[index].level
    return next((h.start for h in found[index + 1 :] if h.level <= level), length)


def section_text(text: str, selector: str) -> str | None:
    """The section `selector` names: an exact title or `A > B` path first, then a keyword that
    matches exactly one heading (case-insensitive); None when nothing or several match.

    >>> section_text("# Guide\\n## Errors\\n401: expired\\n## Auth\\nrefresh", "Guide > Errors")
    '## Errors\\n401: expired'
    >>> section_text("# Guide\\n## Errors\\nx\\n## Auth\\ny", "auth"), section_text("# G\\n## A", "zz")
    ('## Auth\\ny', None)
    """
    wanted = [part.strip() for part in selector.split(">") if part.strip()]
    found = headings(text)
    path: list[str] = []
    for index, heading in enumerate(found):
        path = [*path[: heading.level - 1], heading.title]
        if path == wanted or heading.title == selector.strip():
            return text[heading.start : _section_end(found, index, len(text))].strip()
    key = selector.strip().casefold()
    if not key or ">" in selector:
        return None
    matches = [i for i, h in enumerate(found) if key in h.title.casefold()]
    if len(matches) != 1:
        return None
    return text[found[matches[0]].start : _section_end(found, matches[0], len(text))].strip()


def section(library: Sequence[Document], doc_id: str, selector: str) -> dict[str, Any]:
    """Level 3: one section of a document."""
    doc = _find(library, doc_id)
    if doc is None:
        return _missing(doc_id)
    found = section_text(doc.text, selector)
    if found is None:
        return {"id": doc_id, "error": "SECTION_NOT_FOUND", "message": f"No section matches {selector!r}."}
    return {"id": doc_id, "section": selector, "content": found}


def search(library: Sequence[Document], query: str, limit: int = 5) -> list[dict[str, Any]]:
    """Level 4: lines containing `query` (case-insensitive), with document, section and line."""
    hits: list[dict[str, Any]] = []
    needle = query.lower()
    for doc in library:
        current = ""
        for number, line in enumerate(doc.text.splitlines(), start=1):
            if line.startswith("#"):
                current = line.lstrip("#").strip()
            if needle and needle in line.lower():
                hits.append(
                    {"doc_id": doc.id, "section": current, "line": number, "excerpt": line.strip()[:200]}
                )
                if len(hits) >= limit:
                    return hits
    return hits


def read(
    library: Sequence[Document], arguments: dict[str, Any], max_direct_chars: int = MAX_DIRECT_CHARS
) -> Any:
    """The reader's answer to a call's arguments (`action` and its fields)."""
    action = arguments.get("action")
    doc_id = str(arguments.get("doc_id", ""))
    match action:
        case "catalog":
            return catalog(library)
        case "resolve":
            return resolve(library, doc_id, max_direct_chars)
        case "section":
            return section(library, doc_id, str(arguments.get("selector", "")))
        case "search":
            limit = arguments.get("limit", 5)
            return search(library, str(arguments.get("query", "")), limit if isinstance(limit, int) else 5)
        case _:
            return {
                "error": "UNKNOWN_ACTION",
                "message": f"action must be one of catalog, resolve, section, search; got {action!r}.",
            }


def answer_text(answer: Any) -> str:
    """An answer as the tool result's text (compact JSON, non-ASCII kept)."""
    return json.dumps(answer, ensure_ascii=False)


def is_error(answer: Any) -> bool:
    """Whether an answer is an error mapping."""
    return isinstance(answer, dict) and "error" in answer


def reader_schema() -> ToolSchema:
    """The `read_document` tool's schema (ctxlab's wording)."""
    return ToolSchema.of(
        READ_DOCUMENT,
        "Read from the document library a level at a time: `catalog` lists the documents; "
        "`resolve` gives a document's sections (and its text when it is short); `section` reads "
        "one section by title or 'Parent > Child' path; `search` finds lines with their place.",
        {
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {"enum": ["catalog", "resolve", "section", "search"]},
                "doc_id": {"type": "string"},
                "selector": {"type": "string"},
                "query": {"type": "string"},
                "limit": {"type": "integer", "default": 5},
            },
        },
    )
