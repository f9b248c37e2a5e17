"""Parity: ctxlab's task tools against agentscope 2.0.11's own on generated command sequences.

Each step runs the real tool (`TaskCreate().call(_agent_state=state, ...)` etc., its chunk folded
into a `ToolResponse` as the toolkit does) and ours under `agentscope_texts()`, and compares the
reply text, the result state and the whole board. Boards start from generated states that the
tools alone never reach (non-numeric and duplicate ids, repeated relation ids) so every branch of
the id and relation rules is exercised.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.task_args import metadata_dict, metadata_of
from ctxlab.core.agentscope.tasks import Board, Task, run_task_tool
from ctxlab.texts import agentscope_texts

# Hypothesis draws the first values of a sampled list most often: the ids that usually exist first.
IDS = st.sampled_from(["1", "2", "3", "1", "2", "4", "x", " 2", "02", "-1", "5"])
WORDS = st.text(alphabet=st.sampled_from([*"ab {}#[]()", "中", "é"]), max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False) | WORDS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(WORDS, inner, max_size=2),
    max_leaves=4,
)
METADATA = st.dictionaries(st.sampled_from(["a", "b", "é", "{id}"]), st.none() | VALUES, max_size=3)
ID_LISTS = st.lists(IDS, max_size=3)


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value, absent (None here, dropped below), or an explicit null."""
    return st.sampled_from(["value", "absent", "value", "null"]).flatmap(
        lambda kind: strategy if kind == "value" else st.just(None if kind == "absent" else "<null>")
    )


@st.composite
def commands(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(["TaskUpdate", "TaskCreate", "TaskUpdate", "TaskGet", "TaskList"]))
    if name == "TaskCreate":
        fields = {"subject": WORDS, "description": WORDS, "metadata": optional(METADATA)}
    elif name == "TaskGet":
        fields = {"task_id": IDS}
    elif name == "TaskList":
        fields = {}
    else:
        fields = {
            "task_id": IDS,
            "subject": optional(WORDS),
            "description": optional(WORDS),
            "add_blocks": optional(ID_LISTS),
            "status": optional(st.sampled_from(["completed", "in_progress", "deleted", "pending"])),
            "add_blocked_by": optional(ID_LISTS),
            "owner": optional(st.sampled_from(["", "bob", "中"])),
            "metadata": optional(METADATA),
        }
    drawn = {key: draw(strategy) for key, strategy in fields.items()}
    return name, {key: (None if v == "<null>" else v) for key, v in drawn.items() if v is not None}


seeded_tasks = st.builds(
    Task,
    id=IDS,
    subject=WORDS,
    description=WORDS,
    state=st.sampled_from(["pending", "in_progress", "completed"]),
    owner=st.none() | st.sampled_from(["", "bob"]),
    blocks=ID_LISTS.map(tuple),
    blocked_by=ID_LISTS.map(tuple),
    metadata=METADATA.map(metadata_of),
)


def as_agentscope(task: Task) -> Any:
    from agentscope.state import Task as AsTask

    return AsTask(
        id=task.id,
        subject=task.subject,
        description=task.description,
        state=task.state,
        owner=task.owner,
        blocks=list(task.blocks),
        blocked_by=list(task.blocked_by),
        metadata=metadata_dict(task.metadata),
    )


def from_agentscope(task: Any) -> Task:
    return Task(
        id=task.id,
        subject=task.subject,
        description=task.description,
        state=task.state,
        owner=task.owner,
        blocks=tuple(task.blocks),
        blocked_by=tuple(task.blocked_by),
        metadata=metadata_of(task.metadata),
    )


async def run_agentscope(state: Any, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    from agentscope.tool import TaskCreate, TaskGet, TaskList, TaskUpdate, ToolResponse

    tool = {"TaskCreate": TaskCreate, "TaskGet": TaskGet, "TaskList": TaskList, "TaskUpdate": TaskUpdate}[
        name
    ]()
    chunk = await tool.call(_agent_state=state, **arguments)
    response = ToolResponse(id="r").append_chunk(chunk)
    return "".join(block.text for block in response.content), str(response.state)


def check(seed: list[Task], script: list[tuple[str, dict[str, Any]]]) -> None:
    from agentscope.state import AgentState

    texts = agentscope_texts()
    state = AgentState()
    state.tasks_context.tasks = [as_agentscope(task) for task in seed]
    board: Board = tuple(from_agentscope(t) for t in state.tasks_context.tasks)

    async def run() -> None:
        nonlocal board
        for step, (name, arguments) in enumerate(script):
            text, result_state = await run_agentscope(state, name, arguments)
            ours = run_task_tool(board, name, json.dumps(arguments, ensure_ascii=False), texts)
            where = f"step {step}: {name}({arguments})"
            assert ours.text == text, where
            assert ours.state == result_state, where
            assert ours.board == tuple(from_agentscope(t) for t in state.tasks_context.tasks), where
            board = ours.board

    asyncio.run(run())


@given(st.lists(commands(), max_size=30))
def test_task_tools_match_agentscope_from_an_empty_board(script: list[tuple[str, dict[str, Any]]]) -> None:
    check([], script)


@given(st.lists(seeded_tasks, max_size=5), st.lists(commands(), max_size=15))
def test_task_tools_match_agentscope_from_any_board(
    seed: list[Task], script: list[tuple[str, dict[str, Any]]]
) -> None:
    check(seed, script)


def test_the_book_example_replies() -> None:
    """Chapter 8's two creates, then a list, as the book prints them."""
    script = [
        ("TaskCreate", {"subject": "清点沙箱目录", "description": "列出 sandbox 下所有文件"}),
        ("TaskCreate", {"subject": "生成目录摘要", "description": "写一份 notes.md"}),
        ("TaskList", {}),
        ("TaskUpdate", {"task_id": "1", "status": "completed"}),
        ("TaskGet", {"task_id": "1"}),
    ]
    check([], script)
    texts = agentscope_texts()
    first = run_task_tool((), "TaskCreate", json.dumps(script[0][1], ensure_ascii=False), texts)
    assert first.text == "Task (id=1) created successfully: 清点沙箱目录"
