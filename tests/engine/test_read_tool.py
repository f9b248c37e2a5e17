"""The built-in Read tool for offloaded files, and the workspaces' listing of what they hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import text_message
from ctxlab.core.messages.model import ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.world.script import Script, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.engine.env import Env
from ctxlab.engine.session import run_script
from ctxlab.engine.tools import READ_TOOL, ReadOffloaded, read_tool_schema, requested_path, with_read_tool
from ctxlab.engine.workspace import InMemoryWorkspace, Workspace
from ctxlab.experiments.workspace import DirectoryWorkspace
from ctxlab.models.scripted import ScriptedModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS, fill
from tests.engine.test_workspace import UNSAFE

TEXTS = CTXLAB_TEXTS


def env(workspace: Workspace | None) -> Env:
    idle = ScriptedModel([])
    return Env(
        counter=AgentScopeEstimator(),
        model=idle,
        summarizer=idle,
        texts=TEXTS,
        context_size=1000,
        workspace=workspace,
    )


def read(path: object, workspace: Workspace | None) -> ToolResultBlock:
    call = ToolCallBlock.of("c1", READ_TOOL, {"file_path": path})
    return ReadOffloaded(TEXTS).result(call, env(workspace))


def filled(workspace: Workspace) -> list[str]:
    return [
        workspace.offload_context((text_message("user", "db-port: 5432 — 中文", id="m1"),)),
        workspace.offload_tool_result(ToolResultBlock(id="c", name="t", output=(TextBlock(text="rest é"),))),
        workspace.offload_data(DataBlock(media_type="image/png", source="aGk=", kind="base64")),
    ]


@pytest.fixture(params=["memory", "directory"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    return InMemoryWorkspace() if request.param == "memory" else DirectoryWorkspace(tmp_path / "ws")


def test_the_read_tool_returns_each_offload_as_text(workspace: Workspace) -> None:
    for path in filled(workspace):
        result = read(path, workspace)
        assert result.state == "success" and result.id == "c1" and result.name == READ_TOOL
        assert result.text.encode("utf-8") == workspace.read(path)


def test_a_missing_file_and_a_run_without_workspace_are_errors(workspace: Workspace) -> None:
    filled(workspace)
    for path, ws in (("offload/context-0009.json", workspace), ("offload", workspace), ("a.txt", None)):
        result = read(path, ws)
        assert result.state == "error"
        assert result.text == fill(TEXTS.read_tool_missing, path=path)


@pytest.mark.parametrize("path", UNSAFE)
def test_unsafe_paths_are_refused_before_the_workspace_sees_them(path: str, tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("secret")
    result = read(path, DirectoryWorkspace(tmp_path / "ws"))
    assert result.state == "error"
    assert result.text == fill(TEXTS.read_tool_refused, path=path)


@pytest.mark.parametrize("raw", ["not json", "[]", '{"file_path": 3}', "{}"])
def test_malformed_inputs_are_refused(raw: str) -> None:
    call = ToolCallBlock(id="c", name=READ_TOOL, input=raw)
    result = ReadOffloaded(TEXTS).result(call, env(InMemoryWorkspace()))
    assert requested_path(raw) == ""
    assert result.state == "error" and result.text == fill(TEXTS.read_tool_refused, path="")


def test_undecodable_bytes_are_replaced() -> None:
    workspace = InMemoryWorkspace(files={"offload/x.bin": b"ok \xff\xfe"})
    assert read("offload/x.bin", workspace).text == "ok \ufffd\ufffd"


def test_the_schema_and_adding_it_to_a_script() -> None:
    schema = read_tool_schema(TEXTS)
    assert schema.name == "Read" and schema.description == TEXTS.read_tool_description
    script = Script(system_prompt="s")
    assert with_read_tool(script, TEXTS).tools == (schema,)
    assert with_read_tool(with_read_tool(script, TEXTS), TEXTS).tools == (schema,)


def test_workspaces_list_the_same_paths(tmp_path: Path) -> None:
    memory, disk = InMemoryWorkspace(), DirectoryWorkspace(tmp_path / "ws")
    assert memory.paths() == disk.paths() == ()
    assert filled(memory) == filled(disk)
    assert (
        memory.paths()
        == disk.paths()
        == (
            "offload/context-0001.json",
            "offload/image-0001.png",
            "offload/tool-result-0001.txt",
        )
    )
    (disk.root / "offload" / "half.txt.part").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (disk.root / "link").symlink_to(outside)
    (disk.root / "file-link").symlink_to(outside / "secret.txt")
    assert disk.paths() == memory.paths()  # no partial writes, nothing through links outside


def test_the_loop_runs_the_read_tool_for_unscripted_calls() -> None:
    workspace = InMemoryWorkspace()
    path = workspace.offload_tool_result(ToolResultBlock(id="c", name="t", output=(TextBlock(text="kept"),)))
    turn = ScriptedTurn(user=(TextBlock(text="go"),), rounds=(ScriptedRound(),), final="done")
    script = assign_call_ids(with_read_tool(Script(system_prompt="s", turns=(turn,)), TEXTS))
    call = ToolCallBlock.of("extra-1", READ_TOOL, {"file_path": path})
    model = ScriptedModel([ModelResponse(blocks=(call,)), ModelResponse.of_text("done")])
    outcome = run_script(
        script,
        AgentScopeStrategy(texts=TEXTS),
        model=model,
        summarizer=FixedSummarizer(fields={}),
        texts=TEXTS,
        context_size=10_000,
        workspace=workspace,
        builtins={READ_TOOL: ReadOffloaded(TEXTS)},
    )
    model.assert_complete()
    results = [b for b in outcome.state.context[-1].blocks if isinstance(b, ToolResultBlock)]
    assert [(r.id, r.text, r.state) for r in results] == [("extra-1", "kept", "success")]
    assert model.requests[0].tools == (read_tool_schema(TEXTS),)


def test_agentscope_words_its_read_tool_with_its_own_read_texts() -> None:
    from ctxlab.texts import agentscope_texts

    texts = agentscope_texts()
    assert texts.read_tool_description.startswith("Reads a file from the local filesystem.")
    assert texts.read_tool_path_description == "The absolute path to the file to read."
    assert fill(texts.read_tool_missing, path="a") == "Error: File does not exist: a"
    assert (
        fill(texts.read_tool_refused, path="../a") == "Error: file_path must be an absolute path, got: ../a"
    )
