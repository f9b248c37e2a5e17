"""The four-level document reader (the Select layer's just-in-time retrieval): catalog, resolve,
section, search."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.world.documents import (
    MAX_DIRECT_CHARS,
    MAX_HEADINGS,
    Document,
    answer_text,
    catalog,
    headings,
    is_error,
    read,
    reader_schema,
    resolve,
    search,
    section,
    section_text,
)
from ctxlab.core.world.library import builtin_library

GUIDE = Document(
    id="guide",
    text="# Guide\nintro\n## API\n### Errors\n401 expired\n### Auth\nrefresh\n## Ops\n### Errors\npager\n",
)


def test_catalog_lists_ids_titles_and_byte_sizes_without_text() -> None:
    doc = Document(id="zh", text="# 指南\n正文")
    assert catalog([GUIDE, doc]) == [
        {"id": "guide", "title": "Guide", "size": len(GUIDE.text)},
        {"id": "zh", "title": "指南", "size": len(doc.text.encode("utf-8"))},
    ]
    assert Document(id="plain", text="no heading").title == "plain"


def test_resolve_returns_short_documents_whole_and_lists_sections_of_long_ones() -> None:
    short = resolve([GUIDE], "guide")
    assert short["content"] == GUIDE.text and short["requires_section"] is False
    assert short["sections"][:2] == [{"level": 1, "title": "Guide"}, {"level": 2, "title": "API"}]
    long = Document(id="long", text="# Long\n" + "x" * MAX_DIRECT_CHARS)
    answer = resolve([long], "long")
    assert answer["requires_section"] is True and "content" not in answer
    assert str(MAX_DIRECT_CHARS) in answer["hint"] and "section" in answer["hint"]
    exact = Document(id="edge", text="y" * MAX_DIRECT_CHARS)  # the limit itself is still read whole
    assert resolve([exact], "edge")["requires_section"] is False


def test_resolve_lists_at_most_80_headings() -> None:
    many = Document(id="many", text="\n".join(f"## H{k}\nbody" for k in range(100)))
    assert len(resolve([many], "many")["sections"]) == MAX_HEADINGS


def test_section_by_path_by_title_and_by_a_unique_keyword() -> None:
    assert section_text(GUIDE.text, "Guide > API > Errors") == "### Errors\n401 expired"
    assert section_text(GUIDE.text, "Guide > Ops > Errors") == "### Errors\npager"
    assert section_text(GUIDE.text, "Errors") == "### Errors\n401 expired"  # an exact title: the first
    assert section_text(GUIDE.text, "aut") == "### Auth\nrefresh"  # a keyword matching one heading
    assert section_text(GUIDE.text, "rr") is None  # a keyword matching two headings is ambiguous
    assert section_text(GUIDE.text, "API") == "## API\n### Errors\n401 expired\n### Auth\nrefresh"
    assert section_text(GUIDE.text, "Nope > API") is None


def test_errors_are_answers_not_exceptions() -> None:
    assert (
        is_error(resolve([GUIDE], "missing")) and resolve([GUIDE], "missing")["error"] == "DOCUMENT_NOT_FOUND"
    )
    assert section([GUIDE], "guide", "zzz")["error"] == "SECTION_NOT_FOUND"
    assert read([GUIDE], {"action": "delete"})["error"] == "UNKNOWN_ACTION"
    assert not is_error(catalog([GUIDE]))


def test_search_gives_document_section_and_line_and_stops_at_the_limit() -> None:
    hits = search([GUIDE], "ERRORS")
    assert hits == [
        {"doc_id": "guide", "section": "Errors", "line": 4, "excerpt": "### Errors"},
        {"doc_id": "guide", "section": "Errors", "line": 9, "excerpt": "### Errors"},
    ]
    assert len(search([GUIDE], "e", limit=3)) == 3
    assert search([GUIDE], "") == []


def test_read_dispatches_each_action_and_answers_as_json_text() -> None:
    answer = read([GUIDE], {"action": "section", "doc_id": "guide", "selector": "Auth"})
    assert json.loads(answer_text(answer)) == {
        "id": "guide",
        "section": "Auth",
        "content": "### Auth\nrefresh",
    }
    assert read([GUIDE], {"action": "search", "query": "pager", "limit": "x"})[0]["line"] == 10
    assert reader_schema().name == "read_document"


def test_the_builtin_library_has_long_and_short_documents_with_their_facts() -> None:
    library = builtin_library()
    assert library is builtin_library()
    sizes = {d.id: len(d.text) for d in library}
    assert sizes["api-ref"] > MAX_DIRECT_CHARS and sizes["changelog"] > MAX_DIRECT_CHARS
    assert sizes["onboarding"] <= MAX_DIRECT_CHARS and sizes["runbook"] <= MAX_DIRECT_CHARS
    assert "/auth/refresh" in section([*library], "api-ref", "Authentication")["content"]
    assert "retry storm" in section([*library], "changelog", "2.4.0")["content"]
    assert search([*library], "port 5432")[0]["section"] == "Database failover"


@given(st.lists(st.sampled_from(["# A", "## B", "### C", "text", "## B", "#nospace"]), max_size=12))
def test_every_listed_heading_selects_a_section_starting_with_it(lines: list[str]) -> None:
    text = "\n".join(lines)
    for heading in headings(text):
        found = section_text(text, heading.title)
        assert found is not None and found.lstrip("#").strip().startswith(heading.title)
