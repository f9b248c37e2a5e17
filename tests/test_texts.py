"""Text sets: same fields and placeholders; AgentScope's loaded from the installed package."""

from __future__ import annotations

import json

import pytest

from ctxlab.core.tools import ToolSchema, tools_json
from ctxlab.scenarios.config import SUMMARY_FIELDS
from ctxlab.texts import CTXLAB_TEXTS, PLACEHOLDERS, Texts, agentscope_texts, fill, load_texts, text_names


def task_tools(texts: Texts) -> list[ToolSchema]:
    return [texts.task_create_tool, texts.task_get_tool, texts.task_list_tool, texts.task_update_tool]


def check_placeholders(texts: Texts) -> None:
    for name, placeholders in PLACEHOLDERS.items():
        value = getattr(texts, name)
        for placeholder in placeholders:
            assert "{" + placeholder + "}" in value, (name, placeholder)
    rendered = texts.summary_template.format(**{f: f"<{f}>" for f in SUMMARY_FIELDS})
    assert all(f"<{f}>" in rendered for f in SUMMARY_FIELDS)
    assert set(json.loads(texts.summary_schema)["properties"]) == set(SUMMARY_FIELDS)
    # The lab dispatches on these names and reads these arguments, whatever the wording.
    assert [t.name for t in task_tools(texts)] == ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"]
    assert texts.compress_tool.name == "CompressContext"
    assert json.loads(texts.compress_tool.parameters)["properties"] == {}
    update = json.loads(texts.task_update_tool.parameters)
    assert set(update["properties"]) == {
        "task_id",
        "subject",
        "description",
        "add_blocks",
        "status",
        "add_blocked_by",
        "owner",
        "metadata",
    }
    assert update["required"] == ["task_id"]
    assert json.loads(texts.task_create_tool.parameters)["required"] == ["subject", "description"]


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
    # The four task schemas are 8360 bytes of tool JSON; CompressContext's alone is 608.
    assert len(tools_json(task_tools(texts)).encode()) == 8360
    assert len(tools_json([texts.compress_tool]).encode()) == 608


def test_agentscope_tool_schemas_are_what_its_toolkit_sends() -> None:
    pytest.importorskip("agentscope")
    import asyncio

    from agentscope.tool import TaskCreate, TaskGet, TaskList, TaskUpdate, Toolkit

    texts = agentscope_texts()
    toolkit = Toolkit()
    asyncio.run(toolkit.add_tool([TaskCreate(), TaskGet(), TaskList(), TaskUpdate()]))
    sent = asyncio.run(toolkit.get_tool_schemas())
    assert json.dumps(sent, ensure_ascii=False) == tools_json(task_tools(texts))


def test_agentscope_texts_differ_from_ours() -> None:
    pytest.importorskip("agentscope")
    theirs = agentscope_texts()
    for name in text_names():
        if name not in {"summary_schema"}:
            assert getattr(theirs, name) != getattr(CTXLAB_TEXTS, name), name


def test_fill_leaves_other_braces() -> None:
    assert fill('{"a": {x}}', x=1) == '{"a": 1}'
