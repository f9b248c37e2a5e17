"""Text sets: same fields and placeholders; AgentScope's loaded from the installed package."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ctxlab.core.messages.tools import ToolSchema, tools_json
from ctxlab.texts import (
    CTXLAB_TEXTS,
    SUMMARY_FIELDS,
    Texts,
    agentscope_texts,
    fill,
    load_texts,
    text_names,
    texts_as_json,
    texts_from_json,
)
from ctxlab.texts import cache as text_cache
from ctxlab.texts.base import PLACEHOLDERS


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
    import asyncio

    from agentscope.tool import TaskCreate, TaskGet, TaskList, TaskUpdate, Toolkit

    texts = agentscope_texts()
    toolkit = Toolkit()
    asyncio.run(toolkit.add_tool([TaskCreate(), TaskGet(), TaskList(), TaskUpdate()]))
    sent = asyncio.run(toolkit.get_tool_schemas())
    assert json.dumps(sent, ensure_ascii=False) == tools_json(task_tools(texts))


def test_agentscope_texts_differ_from_ours() -> None:
    theirs = agentscope_texts()
    for name in text_names():
        if name not in {"summary_schema"}:
            assert getattr(theirs, name) != getattr(CTXLAB_TEXTS, name), name


def test_fill_leaves_other_braces() -> None:
    assert fill('{"a": {x}}', x=1) == '{"a": 1}'


def test_our_summary_schema_is_the_config_model_s_json_schema() -> None:
    from ctxlab.presets.agentscope.config import SummarySchema

    assert CTXLAB_TEXTS.summary_schema == json.dumps(SummarySchema.model_json_schema(), ensure_ascii=False)


def test_a_text_set_reads_back_from_json_unchanged() -> None:
    for texts in (CTXLAB_TEXTS, agentscope_texts()):
        data = json.loads(json.dumps(texts_as_json(texts), ensure_ascii=False))
        assert texts_from_json(data) == texts
    with pytest.raises(KeyError):
        texts_from_json({})
    with pytest.raises(TypeError):
        texts_from_json({**texts_as_json(CTXLAB_TEXTS), "tasks_hint": 3})


def test_agentscope_texts_from_the_cache_are_the_package_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxlab.texts.agentscope import package_root, read_agentscope_texts

    monkeypatch.setenv("CTXLAB_CACHE_DIR", str(tmp_path))
    agentscope_texts.cache_clear()
    try:
        first = agentscope_texts()  # read from the package, then stored
        assert len(list(tmp_path.glob("agentscope-texts-*.json"))) == 1
        agentscope_texts.cache_clear()
        assert agentscope_texts() == first == read_agentscope_texts(package_root())
        for entry in tmp_path.glob("agentscope-texts-*.json"):
            entry.write_text('{"broken', encoding="utf-8")  # a torn write reads as no entry
        agentscope_texts.cache_clear()
        assert agentscope_texts() == first
    finally:
        agentscope_texts.cache_clear()


def test_the_cache_key_follows_the_package_files_and_the_reader(tmp_path: Path) -> None:
    package, reader = tmp_path / "pkg", tmp_path / "reader.py"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "a.py").write_text("A = 1\n")
    reader.write_text("# reader\n")
    key = text_cache.fingerprint(package, [reader])
    assert text_cache.fingerprint(package, [reader]) == key
    (package / "sub" / "a.py").write_text("A = 22\n")
    changed = text_cache.fingerprint(package, [reader])
    assert changed != key
    reader.write_text("# reader, changed\n")
    assert text_cache.fingerprint(package, [reader]) not in {key, changed}


def test_the_cache_key_is_the_one_of_the_files_rglob_finds_in_order_of_their_parts(tmp_path: Path) -> None:
    """Entries written before the walk became `os.walk` keep their keys: the same files (no
    folder reached through a link), in the same order ("a/x.py" before "a-b/x.py")."""
    package, elsewhere = tmp_path / "pkg", tmp_path / "elsewhere"
    for relative in ("a/x.py", "a-b/x.py", "a/b/c.py", "z.py", "notes.txt", "a/.hidden.py"):
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(relative)
    elsewhere.mkdir()
    (elsewhere / "linked.py").write_text("B = 2\n")
    (package / "link").symlink_to(elsewhere, target_is_directory=True)
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    assert text_cache.fingerprint(package, []) == digest.hexdigest()[:32]


def test_the_cache_stores_and_loads_and_shrugs_at_an_unwritable_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXLAB_CACHE_DIR", str(tmp_path / "cache"))
    assert text_cache.load("x", "k") is None
    text_cache.store("x", "k", {"a": "中"})
    assert text_cache.load("x", "k") == {"a": "中"}
    assert not list((tmp_path / "cache").glob("*.tmp"))
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("CTXLAB_CACHE_DIR", str(blocked / "cache"))  # a file where a folder should be
    text_cache.store("x", "k", {"a": "b"})
    assert text_cache.load("x", "k") is None
