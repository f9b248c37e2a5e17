"""The task board and the four task tools: every AgentScope rule, named, and board invariants."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.task_args import (
    TASK_TOOL_NAMES,
    ArgumentError,
    TaskCreateArgs,
    TaskGetArgs,
    TaskListArgs,
    TaskUpdateArgs,
    metadata_of,
    parse_task_args,
)
from ctxlab.core.agentscope.tasks import (
    Board,
    Task,
    TaskOutcome,
    next_task_id,
    run_task_tool,
    task_counts,
    task_create,
    task_get,
    task_list,
    task_update,
)
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.texts.base import PLACEHOLDERS


@dataclass(frozen=True, slots=True)
class Plain:
    """Texts that show every placeholder, to check formats apart from any wording."""

    task_created: str = "created {id} {subject}"
    task_list_empty: str = "empty"
    task_list_line: str = "{id}|{state}|{subject}|{owner}|{blocked_by}"
    task_list_owner: str = "o={owner}"
    task_list_blocked_by: str = "b={ids}"
    task_get_not_found: str = "not found"
    task_get_header: str = "H {id} {subject}"
    task_get_status: str = "S {state}"
    task_get_description: str = "D {description}"
    task_get_owner: str = "O {owner}"
    task_get_blocked_by: str = "BB {ids}"
    task_get_blocks: str = "B {ids}"
    task_get_metadata: str = "M {metadata}"
    task_update_not_found: str = "no {id}"
    task_deleted: str = "deleted {id}"
    task_updated: str = "updated {id}: {fields}"
    task_not_updated: str = "unchanged {id}"
    task_completed_suffix: str = " +done"


T = Plain()


def test_plain_texts_cover_every_task_placeholder() -> None:
    for name, placeholders in PLACEHOLDERS.items():
        if name.startswith("task_"):
            assert all("{" + p + "}" in getattr(T, name) for p in placeholders), name


def board_of(*ids: str) -> Board:
    return tuple(Task(id=i, subject=f"s{i}", description=f"d{i}") for i in ids)


def create(board: Board, subject: str = "x", **kw: object) -> TaskOutcome:
    return task_create(board, TaskCreateArgs(subject=subject, description="d", **kw), T)


def update(board: Board, task_id: str, **kw: object) -> TaskOutcome:
    return task_update(board, TaskUpdateArgs(task_id=task_id, **kw), T)


def by_id(board: Board, task_id: str) -> Task:
    return next(t for t in board if t.id == task_id)


# --- TaskCreate -------------------------------------------------------------------------------


def test_create_numbers_tasks_from_one() -> None:
    first = create((), "write")
    second = create(first.board, "test")
    assert [t.id for t in second.board] == ["1", "2"]
    assert first.text == "created 1 write" and first.state == "success"
    assert second.board[0].state == "pending" and second.board[0].metadata == ()


def test_quirk_create_ignores_non_numeric_ids() -> None:
    assert next_task_id(board_of("abc", "7", "1.5", "x9")) == "8"
    assert next_task_id(board_of("abc")) == "1"


def test_quirk_create_reads_ids_with_int() -> None:
    # int() accepts spaces, signs, leading zeros and underscores; a negative id counts as below 1.
    assert next_task_id(board_of(" 4 ")) == "5"
    assert next_task_id(board_of("0_9")) == "10"
    assert next_task_id(board_of("-5")) == "1"


def test_quirk_deleting_the_highest_id_lets_the_next_create_reuse_it() -> None:
    board = create(create((), "a").board, "b").board
    board = update(board, "2", status="deleted").board
    assert create(board, "c").board[-1].id == "2"


def test_create_keeps_metadata_including_null_values() -> None:
    outcome = create((), metadata=metadata_of({"k": None, "n": [1, "é"]}))
    assert outcome.board[0].metadata == (("k", "null"), ("n", '[1, "é"]'))


# --- TaskList and TaskGet ---------------------------------------------------------------------


def test_list_empty_and_lines() -> None:
    assert task_list((), TaskListArgs(), T).text == "empty"
    board = (
        Task(id="1", subject="a", description="", owner="bob", blocked_by=("2", "3")),
        Task(id="2", subject="b", description="", owner="", state="in_progress"),
    )
    assert task_list(board, TaskListArgs(), T).text == "1|pending|a|o=bob|b=2, 3\n2|in_progress|b||"


def test_get_shows_only_the_lines_that_are_set() -> None:
    bare = Task(id="1", subject="a", description="")
    assert task_get((bare,), TaskGetArgs(task_id="1"), T).text == "H 1 a\nS pending\nD "
    full = Task(
        id="1",
        subject="a",
        description="d",
        owner="bob",
        blocks=("3",),
        blocked_by=("2", "4"),
        metadata=metadata_of({"k": [1, None], "é": "x"}),
    )
    text = task_get((full,), TaskGetArgs(task_id="1"), T).text
    assert text == "H 1 a\nS pending\nD d\nO bob\nBB #2, #4\nB #3\nM {'k': [1, None], 'é': 'x'}"


def test_get_missing_is_an_error() -> None:
    outcome = task_get(board_of("1"), TaskGetArgs(task_id="2"), T)
    assert (outcome.text, outcome.state) == ("not found", "error")


def test_quirk_get_reads_the_first_duplicate_and_update_the_last() -> None:
    board = (Task(id="1", subject="first", description=""), Task(id="1", subject="last", description=""))
    assert task_get(board, TaskGetArgs(task_id="1"), T).text.startswith("H 1 first")
    updated = update(board, "1", owner="bob").board
    assert (updated[0].owner, updated[1].owner) == (None, "bob")


def test_values_with_placeholders_are_shown_as_they_are() -> None:
    board = (Task(id="1", subject="{state} {owner}", description="{id}", owner="{blocked_by}"),)
    assert task_list(board, TaskListArgs(), T).text == "1|pending|{state} {owner}|o={blocked_by}|"
    assert create((), "{id}").text == "created 1 {id}"


# --- TaskUpdate -------------------------------------------------------------------------------


def test_update_missing_id_is_an_error_and_keeps_the_board() -> None:
    board = board_of("1")
    outcome = update(board, "9", subject="x")
    assert (outcome.text, outcome.state, outcome.board) == ("no 9", "error", board)


def test_update_reports_fields_in_application_order() -> None:
    board = board_of("1", "2", "3")
    outcome = update(
        board,
        "1",
        metadata=metadata_of({"k": 1}),
        owner="bob",
        status="in_progress",
        add_blocked_by=("3",),
        add_blocks=("2",),
        description="new",
        subject="S",
    )
    assert (
        outcome.text == "updated 1: subject, description, add_blocks, add_blocked_by, status, owner, metadata"
    )
    task = by_id(outcome.board, "1")
    assert (task.subject, task.description, task.state, task.owner) == ("S", "new", "in_progress", "bob")
    assert task.metadata == (("k", "1"),)


def test_quirk_subject_by_truthiness_description_and_owner_by_not_none() -> None:
    outcome = update(board_of("1"), "1", subject="", description="", owner="")
    assert outcome.text == "updated 1: description, owner"
    task = outcome.board[0]
    assert (task.subject, task.description, task.owner) == ("s1", "", "")


def test_nothing_given_is_reported_as_no_update() -> None:
    assert update(board_of("1"), "1").text == "unchanged 1"
    assert update(board_of("1"), "1", add_blocks=(), add_blocked_by=(), metadata=()).text == "unchanged 1"


def test_relations_are_kept_on_both_sides_and_only_for_existing_ids() -> None:
    board = update(board_of("1", "2", "3"), "1", add_blocks=("2", "9", "2")).board
    assert by_id(board, "1").blocks == ("2",) and by_id(board, "2").blocked_by == ("1",)
    outcome = update(board, "3", add_blocked_by=("1", "8"))
    assert outcome.text == "updated 3: add_blocked_by"
    assert by_id(outcome.board, "1").blocks == ("2", "3") and by_id(outcome.board, "3").blocked_by == ("1",)


def test_adding_a_known_relation_again_changes_nothing() -> None:
    board = update(board_of("1", "2"), "1", add_blocks=("2",)).board
    assert update(board, "1", add_blocks=("2",)).text == "unchanged 1"
    assert update(board, "2", add_blocked_by=("1",)).text == "unchanged 2"


def test_quirk_a_task_may_block_itself() -> None:
    board = update(board_of("1"), "1", add_blocks=("1",)).board
    assert board[0].blocks == ("1",) and board[0].blocked_by == ("1",)


def test_quirk_deleted_returns_early_keeping_earlier_updates_unreported() -> None:
    board = update(board_of("1", "2", "3"), "2", add_blocks=("3",)).board
    board = update(board, "1", add_blocks=("2",)).board
    outcome = update(board, "2", subject="renamed", owner="bob", status="deleted")
    assert outcome.text == "deleted 2" and outcome.state == "success"
    assert [t.id for t in outcome.board] == ["1", "3"]
    assert by_id(outcome.board, "1").blocks == () and by_id(outcome.board, "3").blocked_by == ()


def test_quirk_deleting_one_duplicate_strips_the_id_from_the_other() -> None:
    board = (
        Task(id="1", subject="a", description="", blocks=("1",)),
        Task(id="1", subject="b", description="", blocked_by=("1",)),
    )
    outcome = update(board, "1", status="deleted")
    assert outcome.board == (Task(id="1", subject="a", description=""),)


def test_quirk_completing_unblocks_dependents_but_keeps_its_own_blocks() -> None:
    board = update(board_of("1", "2", "3"), "1", add_blocks=("2", "3")).board
    outcome = update(board, "1", status="completed")
    assert outcome.text == "updated 1: status +done"
    assert by_id(outcome.board, "1").blocks == ("2", "3")
    assert by_id(outcome.board, "2").blocked_by == () and by_id(outcome.board, "3").blocked_by == ()


def test_quirk_completed_suffix_whenever_the_task_is_completed() -> None:
    board = update(board_of("1"), "1", status="completed").board
    assert update(board, "1").text == "unchanged 1 +done"
    assert update(board, "1", owner="bob").text == "updated 1: owner +done"
    assert update(board, "1", status="pending").text == "updated 1: status"


def test_setting_the_same_status_is_reported() -> None:
    assert update(board_of("1"), "1", status="pending").text == "updated 1: status"


def test_quirk_completing_a_self_blocked_task_clears_its_own_blocked_by_only() -> None:
    board = update(board_of("1"), "1", add_blocks=("1",)).board
    task = update(board, "1", status="completed").board[0]
    assert task.blocks == ("1",) and task.blocked_by == ()


def test_metadata_merge_overwrites_in_place_appends_and_null_deletes() -> None:
    board = (Task(id="1", subject="", description="", metadata=metadata_of({"a": 1, "b": 2, "c": 3})),)
    outcome = update(board, "1", metadata=metadata_of({"b": "x", "a": None, "d": [1], "zz": None}))
    assert outcome.text == "updated 1: metadata"
    assert outcome.board[0].metadata == (("b", '"x"'), ("c", "3"), ("d", "[1]"))


def test_update_of_a_relation_reaches_every_duplicate() -> None:
    board = (
        Task(id="1", subject="", description=""),
        Task(id="2", subject="", description=""),
        Task(id="2", subject="", description=""),
    )
    after = update(board, "1", add_blocks=("2",)).board
    assert after[1].blocked_by == ("1",) and after[2].blocked_by == ("1",)


# --- argument parsing and the dispatcher ------------------------------------------------------


def test_parse_reads_each_tool() -> None:
    assert parse_task_args("TaskList", "") == TaskListArgs()
    assert parse_task_args("TaskList", "  {} ") == TaskListArgs()
    assert parse_task_args("TaskGet", '{"task_id": "3"}') == TaskGetArgs(task_id="3")
    created = parse_task_args("TaskCreate", '{"subject": "a", "description": "b", "metadata": {"k": null}}')
    assert created == TaskCreateArgs(subject="a", description="b", metadata=(("k", "null"),))
    updated = parse_task_args(
        "TaskUpdate", '{"task_id": 1, "add_blocks": [2, "3"], "add_blocked_by": 4, "status": "completed"}'
    )
    assert updated == TaskUpdateArgs(
        task_id="1", add_blocks=("2", "3"), add_blocked_by=("4",), status="completed"
    )


def test_parse_reads_null_as_not_given() -> None:
    args = parse_task_args(
        "TaskUpdate", '{"task_id": "1", "subject": null, "status": null, "metadata": null}'
    )
    assert args == TaskUpdateArgs(task_id="1")


@pytest.mark.parametrize(
    ("name", "raw", "problem"),
    [
        ("TaskGet", "{", "the input is not valid JSON (Expecting property name enclosed in double quotes"),
        ("TaskGet", "[1]", "the input must be a JSON object, got [1]"),
        ("TaskGet", "{}", "the required field 'task_id' is missing or null"),
        ("TaskGet", '{"task_id": null}', "the required field 'task_id' is missing or null"),
        ("TaskGet", '{"task_id": true}', "'task_id' must be a task id (a string), got true"),
        ("TaskList", '{"x": 1}', "unknown field 'x' (the fields are: none)"),
        ("TaskCreate", '{"subject": 1, "description": "d"}', "'subject' must be a string, got 1"),
        ("TaskCreate", '{"subject": "s"}', "the required field 'description' is missing or null"),
        ("TaskCreate", '{"subject": "s", "description": "d", "metadata": [1]}', "'metadata' must be a JSON"),
        ("TaskUpdate", '{"task_id": "1", "status": "done"}', "'status' must be one of pending, in_progress,"),
        ("TaskUpdate", '{"task_id": "1", "status": ""}', "'status' must be one of"),
        ("TaskUpdate", '{"task_id": "1", "add_blocks": [1.5]}', "'add_blocks[0]' must be a task id"),
        ("TaskUpdate", '{"task_id": "1", "owner": NaN}', "NaN is not a valid JSON number"),
        ("TaskUpdate", '{"task_id": "1", "subjet": "x"}', "unknown field 'subjet' (the fields are: task_id,"),
    ],
)
def test_bad_arguments_are_an_error_that_names_the_problem(name: str, raw: str, problem: str) -> None:
    with pytest.raises(ArgumentError) as raised:
        parse_task_args(name, raw)
    assert str(raised.value).startswith(problem)
    board = board_of("1")
    outcome = run_task_tool(board, name, raw, CTXLAB_TEXTS)
    assert outcome.state == "error" and outcome.board == board
    assert outcome.text.startswith(f"Error: {name} was not run because its arguments are invalid: {problem}")


def test_run_task_tool_dispatches_by_name() -> None:
    outcome = run_task_tool((), "TaskCreate", '{"subject": "a", "description": "b"}', T)
    assert outcome.text == "created 1 a"
    assert run_task_tool(outcome.board, "TaskList", "{}", T).text == "1|pending|a||"
    assert run_task_tool(outcome.board, "TaskGet", '{"task_id": 1}', T).text == "H 1 a\nS pending\nD b"
    assert run_task_tool(outcome.board, "TaskUpdate", '{"task_id": "1"}', T).text == "unchanged 1"


def test_unknown_tool_name_raises() -> None:
    with pytest.raises(KeyError, match="'Read' is not a task tool"):
        run_task_tool((), "Read", "{}", T)
    assert TASK_TOOL_NAMES == ("TaskCreate", "TaskGet", "TaskList", "TaskUpdate")


def test_ctxlab_wording() -> None:
    outcome = run_task_tool((), "TaskCreate", '{"subject": "Run tests", "description": "all"}', CTXLAB_TEXTS)
    assert outcome.text == "Created task 1: Run tests"
    listed = run_task_tool(outcome.board, "TaskList", "", CTXLAB_TEXTS)
    assert listed.text == "1: Run tests (pending)"


# --- properties -------------------------------------------------------------------------------

ids = st.sampled_from(["1", "2", "3", "4", "x"])
commands = st.one_of(
    st.builds(
        lambda s: ("TaskCreate", {"subject": s, "description": "d"}), st.sampled_from(["a", "", "{id}"])
    ),
    st.builds(lambda i: ("TaskGet", {"task_id": i}), ids),
    st.just(("TaskList", {})),
    st.builds(
        lambda i, blocks, by, status, owner: (
            "TaskUpdate",
            {"task_id": i, "add_blocks": blocks, "add_blocked_by": by, "status": status, "owner": owner},
        ),
        ids,
        st.none() | st.lists(ids, max_size=2),
        st.none() | st.lists(ids, max_size=2),
        st.none() | st.sampled_from(["pending", "in_progress", "completed", "deleted"]),
        st.none() | st.sampled_from(["", "bob"]),
    ),
)


@given(st.lists(commands, max_size=25))
def test_boards_stay_consistent(script: list[tuple[str, dict[str, object]]]) -> None:
    """Through the tools, ids stay unique, relations name existing tasks, are mirrored on both
    sides and never repeat; an error never changes the board."""
    board: Board = ()
    for name, arguments in script:
        outcome = run_task_tool(board, name, json.dumps(arguments), T)
        if outcome.state == "error":
            assert outcome.board == board
        board = outcome.board
        known = [t.id for t in board]
        assert len(known) == len(set(known))
        for task in board:
            assert len(set(task.blocks)) == len(task.blocks) and len(set(task.blocked_by)) == len(
                task.blocked_by
            )
            # Completing keeps `blocks` but clears the other side, so only `blocked_by` is mirrored.
            assert all(i in known for i in task.blocks)
            assert all(i in known and task.id in by_id(board, i).blocks for i in task.blocked_by)
    assert sum(task_counts(board).values()) == len(board)
