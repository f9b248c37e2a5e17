"""The task board and the four task tools as pure state transitions (AgentScope 2.0.11 rules).

A board is a tuple of `Task`s in creation order. Each tool maps `(board, arguments, texts)` to a
`TaskOutcome`: the new board, the reply text the model reads, and the result state.

Invariants:
- A transition never mutates its input; an error outcome returns the board unchanged.
- Ids are `str(max numeric id + 1)`: ids that `int()` cannot read are ignored, so deleting the
  highest id lets the next `TaskCreate` reuse it.
- `TaskGet` reads the first task with the id, `TaskUpdate` the last (AgentScope's loops differ).
- `TaskUpdate` applies, in order: subject (if truthy), description (if not None), add_blocks (if
  truthy; existing ids not yet blocked), add_blocked_by (if not None), status, owner (if not
  None), metadata (if truthy; a null value deletes the key). Status `deleted` removes the task and
  its id from every other task's relations and returns at once, so the earlier updates are kept
  but not reported and owner and metadata are skipped. `completed` removes the id from every
  task's `blocked_by` but keeps the task's own `blocks`. A task may block itself.
- The completed suffix is appended whenever the updated task's state is `completed`, even if this
  call did not change it.
- Tasks carry no creation time: no reply of the four tools shows it.
- Every sentence comes from the `TaskTexts` passed in; only the list mechanics (`", "` between ids,
  `#` before an id in `TaskGet`, `"\\n"` between lines, `repr` of the metadata dict) are fixed.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, assert_never

from ctxlab.core.agentscope.task_args import (
    ArgumentError,
    Metadata,
    TaskArgs,
    TaskCreateArgs,
    TaskGetArgs,
    TaskListArgs,
    TaskState,
    TaskUpdateArgs,
    metadata_dict,
    parse_task_args,
)
from ctxlab.core.messages.templates import fill

OutcomeState = Literal["success", "error"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One task. `blocks`: ids this task blocks; `blocked_by`: ids that block it."""

    id: str
    subject: str
    description: str
    state: TaskState = "pending"
    owner: str | None = None
    blocks: tuple[str, ...] = ()
    blocked_by: tuple[str, ...] = ()
    metadata: Metadata = ()


Board = tuple[Task, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskOutcome:
    """What a task tool call leaves behind: the board, the reply text, and the result state."""

    board: Board
    text: str
    state: OutcomeState = "success"


class TaskTexts(Protocol):
    """The replies and formats of the task tools (`ctxlab.texts.Texts` provides them)."""

    @property
    def task_created(self) -> str: ...  # {id} {subject}
    @property
    def task_list_empty(self) -> str: ...
    @property
    def task_list_line(self) -> str: ...  # {id} {state} {subject} {owner} {blocked_by}
    @property
    def task_list_owner(self) -> str: ...  # {owner}
    @property
    def task_list_blocked_by(self) -> str: ...  # {ids}
    @property
    def task_get_not_found(self) -> str: ...
    @property
    def task_get_header(self) -> str: ...  # {id} {subject}
    @property
    def task_get_status(self) -> str: ...  # {state}
    @property
    def task_get_description(self) -> str: ...  # {description}
    @property
    def task_get_owner(self) -> str: ...  # {owner}
    @property
    def task_get_blocked_by(self) -> str: ...  # {ids}
    @property
    def task_get_blocks(self) -> str: ...  # {ids}
    @property
    def task_get_metadata(self) -> str: ...  # {metadata}
    @property
    def task_update_not_found(self) -> str: ...  # {id}
    @property
    def task_deleted(self) -> str: ...  # {id}
    @property
    def task_updated(self) -> str: ...  # {id} {fields}
    @property
    def task_not_updated(self) -> str: ...  # {id}
    @property
    def task_completed_suffix(self) -> str: ...


def next_task_id(board: Board) -> str:
    """`str(max + 1)` over the ids `int()` reads (0 when there are none).

    >>> next_task_id((Task(id="2", subject="", description=""), Task(id="x", subject="", description="")))
    '3'
    """
    highest = 0
    for task in board:
        with contextlib.suppress(ValueError):
            highest = max(highest, int(task.id))
    return str(highest + 1)


def task_counts(board: Board) -> dict[TaskState, int]:
    """How many tasks are in each state.

    >>> task_counts((Task(id="1", subject="", description="", state="completed"),))
    {'pending': 0, 'in_progress': 0, 'completed': 1}
    """
    counts: dict[TaskState, int] = {"pending": 0, "in_progress": 0, "completed": 0}
    for task in board:
        counts[task.state] += 1
    return counts


def task_create(board: Board, args: TaskCreateArgs, texts: TaskTexts) -> TaskOutcome:
    """`TaskCreate`: append a pending task with the next id."""
    task = Task(
        id=next_task_id(board),
        subject=args.subject,
        description=args.description,
        metadata=args.metadata or (),
    )
    return TaskOutcome(board=(*board, task), text=fill(texts.task_created, id=task.id, subject=task.subject))


def task_list(board: Board, args: TaskListArgs, texts: TaskTexts) -> TaskOutcome:
    """`TaskList`: one line per task, or the empty-board text."""
    if not board:
        return TaskOutcome(board=board, text=texts.task_list_empty)
    return TaskOutcome(board=board, text="\n".join(_list_line(task, texts) for task in board))


def _list_line(task: Task, texts: TaskTexts) -> str:
    owner = fill(texts.task_list_owner, owner=task.owner) if task.owner else ""
    blocked = fill(texts.task_list_blocked_by, ids=", ".join(task.blocked_by)) if task.blocked_by else ""
    return fill(
        texts.task_list_line,
        id=task.id,
        state=task.state,
        subject=task.subject,
        owner=owner,
        blocked_by=blocked,
    )


def task_get(board: Board, args: TaskGetArgs, texts: TaskTexts) -> TaskOutcome:
    """`TaskGet`: the first task with the id, in full; an error if there is none."""
    task = next((t for t in board if t.id == args.task_id), None)
    if task is None:
        return TaskOutcome(board=board, text=texts.task_get_not_found, state="error")
    return TaskOutcome(board=board, text="\n".join(_detail_lines(task, texts)))


def _detail_lines(task: Task, texts: TaskTexts) -> list[str]:
    lines = [
        fill(texts.task_get_header, id=task.id, subject=task.subject),
        fill(texts.task_get_status, state=task.state),
        fill(texts.task_get_description, description=task.description),
    ]
    if task.owner:
        lines.append(fill(texts.task_get_owner, owner=task.owner))
    if task.blocked_by:
        lines.append(fill(texts.task_get_blocked_by, ids=_refs(task.blocked_by)))
    if task.blocks:
        lines.append(fill(texts.task_get_blocks, ids=_refs(task.blocks)))
    if task.metadata:
        lines.append(fill(texts.task_get_metadata, metadata=metadata_dict(task.metadata)))
    return lines


def _refs(ids: tuple[str, ...]) -> str:
    return ", ".join(f"#{task_id}" for task_id in ids)


def task_update(board: Board, args: TaskUpdateArgs, texts: TaskTexts) -> TaskOutcome:
    """`TaskUpdate`: apply the given changes to the last task with the id (rules: module docstring)."""
    index = _last_index(board, args.task_id)
    if index is None:
        return TaskOutcome(
            board=board, text=fill(texts.task_update_not_found, id=args.task_id), state="error"
        )
    tasks, changed = _update_fields(board, index, args)
    if args.status == "deleted":
        return TaskOutcome(board=_deleted(tasks, index), text=fill(texts.task_deleted, id=args.task_id))
    if args.status:
        tasks = _with_status(tasks, index, args.status)
        changed.append("status")
    if args.owner is not None:
        tasks = _changed(tasks, index, owner=args.owner)
        changed.append("owner")
    if args.metadata:
        tasks = _changed(tasks, index, metadata=_merged(tasks[index].metadata, args.metadata))
        changed.append("metadata")
    if changed:
        text = fill(texts.task_updated, id=args.task_id, fields=", ".join(changed))
    else:
        text = fill(texts.task_not_updated, id=args.task_id)
    if tasks[index].state == "completed":
        text += texts.task_completed_suffix
    return TaskOutcome(board=tasks, text=text)


def _last_index(board: Board, task_id: str) -> int | None:
    found = None
    for i, task in enumerate(board):
        if task.id == task_id:
            found = i
    return found


def _update_fields(board: Board, index: int, args: TaskUpdateArgs) -> tuple[Board, list[str]]:
    """Subject, description and the two relations, with the names of the fields that changed."""
    tasks, changed = board, []
    if args.subject:
        tasks = _changed(tasks, index, subject=args.subject)
        changed.append("subject")
    if args.description is not None:
        tasks = _changed(tasks, index, description=args.description)
        changed.append("description")
    existing = {task.id for task in tasks}
    if args.add_blocks:
        fresh = [i for i in args.add_blocks if i not in tasks[index].blocks and i in existing]
        if fresh:
            changed.append("add_blocks")
        for blocked in fresh:
            tasks = _related(tasks, args.task_id, blocked)
    if args.add_blocked_by is not None:
        fresh = [i for i in args.add_blocked_by if i not in tasks[index].blocked_by and i in existing]
        if fresh:
            changed.append("add_blocked_by")
        for blocker in fresh:
            tasks = _related(tasks, blocker, args.task_id)
    return tasks, changed


def _changed(board: Board, index: int, **changes: Any) -> Board:
    return (*board[:index], replace(board[index], **changes), *board[index + 1 :])


def _related(board: Board, blocker: str, blocked: str) -> Board:
    """Every task with id `blocker` blocks `blocked`; every task with id `blocked` records it."""
    return tuple(_relate(task, blocker, blocked) for task in board)


def _relate(task: Task, blocker: str, blocked: str) -> Task:
    if task.id == blocker and blocked not in task.blocks:
        task = replace(task, blocks=(*task.blocks, blocked))
    if task.id == blocked and blocker not in task.blocked_by:
        task = replace(task, blocked_by=(*task.blocked_by, blocker))
    return task


def _without(ids: tuple[str, ...], task_id: str) -> tuple[str, ...]:
    """`ids` without the first occurrence of `task_id` (what `list.remove` does)."""
    if task_id not in ids:
        return ids
    at = ids.index(task_id)
    return ids[:at] + ids[at + 1 :]


def _deleted(board: Board, index: int) -> Board:
    gone = board[index].id
    rest = board[:index] + board[index + 1 :]
    return tuple(
        replace(t, blocks=_without(t.blocks, gone), blocked_by=_without(t.blocked_by, gone)) for t in rest
    )


def _with_status(board: Board, index: int, status: TaskState) -> Board:
    tasks = _changed(board, index, state=status)
    if status != "completed":
        return tasks
    done = tasks[index].id
    return tuple(replace(t, blocked_by=_without(t.blocked_by, done)) for t in tasks)


def _merged(metadata: Metadata, updates: Metadata) -> Metadata:
    merged = dict(metadata)
    for key, value in updates:
        if value == "null":
            merged.pop(key, None)
        else:
            merged[key] = value
    return tuple(merged.items())


def apply_task_args(board: Board, args: TaskArgs, texts: TaskTexts) -> TaskOutcome:
    """Run the tool that `args` belong to."""
    match args:
        case TaskCreateArgs():
            return task_create(board, args, texts)
        case TaskGetArgs():
            return task_get(board, args, texts)
        case TaskListArgs():
            return task_list(board, args, texts)
        case TaskUpdateArgs():
            return task_update(board, args, texts)
        case _:
            assert_never(args)


ARGUMENT_ERROR = (
    "Error: {tool} was not run because its arguments are invalid: {problem}. Fix them and call {tool} again."
)
"""ctxlab's reply to unusable arguments (AgentScope's repair-and-validate wording is not reproduced)."""


def run_task_tool(board: Board, name: str, input_json: str, texts: TaskTexts) -> TaskOutcome:
    """Parse the raw JSON input of a call to task tool `name` and run it.

    Unusable arguments give an error outcome (board unchanged) that says what to fix.

    Raises:
        KeyError: `name` is not one of `TASK_TOOL_NAMES`.
    """
    try:
        args = parse_task_args(name, input_json)
    except ArgumentError as error:
        return TaskOutcome(board=board, text=fill(ARGUMENT_ERROR, tool=name, problem=error), state="error")
    return apply_task_args(board, args, texts)
