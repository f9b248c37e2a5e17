"""Text sets: same fields and placeholders; AgentScope's loaded from the installed package."""

from __future__ import annotations

import json

import pytest

from ctxlab.scenarios.config import SUMMARY_FIELDS
from ctxlab.texts import CTXLAB_TEXTS, PLACEHOLDERS, Texts, agentscope_texts, fill, load_texts, text_names


def check_placeholders(texts: Texts) -> None:
    for name, placeholders in PLACEHOLDERS.items():
        value = getattr(texts, name)
        for placeholder in placeholders:
            assert "{" + placeholder + "}" in value, (name, placeholder)
    rendered = texts.summary_template.format(**{f: f"<{f}>" for f in SUMMARY_FIELDS})
    assert all(f"<{f}>" in rendered for f in SUMMARY_FIELDS)
    assert set(json.loads(texts.summary_schema)["properties"]) == set(SUMMARY_FIELDS)


def test_ctxlab_texts_are_complete() -> None:
    check_placeholders(CTXLAB_TEXTS)
    assert load_texts("ctxlab") is CTXLAB_TEXTS


def test_agentscope_texts_load_with_the_documented_sizes() -> None:
    pytest.importorskip("agentscope")
    texts = agentscope_texts()
    check_placeholders(texts)
    assert load_texts("agentscope") is texts
    assert len(texts.compression_prompt.encode()) == 1311
    assert len(texts.summary_schema.encode()) == 1349
    assert len(texts.structured_output_instruction.encode()) == 180
    prompt = fill(texts.compression_prompt, current_time="2026-01-01T00:00:00 (UTC)")
    assert len(prompt.encode()) == 1322
    fields = texts.injection_template.replace("{runtime_state}", "")
    assert len(fields.encode()) == 199  # the template without its fields
    # The fixed part of the summary template is 166 ASCII characters.
    assert len(texts.summary_template.format(**{f: "" for f in SUMMARY_FIELDS})) == 166


def test_agentscope_texts_differ_from_ours() -> None:
    pytest.importorskip("agentscope")
    theirs = agentscope_texts()
    for name in text_names():
        if name not in {"summary_schema"}:
            assert getattr(theirs, name) != getattr(CTXLAB_TEXTS, name), name


def test_fill_leaves_other_braces() -> None:
    assert fill('{"a": {x}}', x=1) == '{"a": 1}'
