"""Generators shaped like whole agents: task lists, SWE edit/test loops, customer service, and
long conversations.

Invariants (see `ctxlab.workloads.generators` for the registry):
- Each generator is a pure function of its validated parameters and a seed, and every item
  draws from the generator derived from the seed and the item's path (`build.py`).
- Every size parameter is exact: `*_bytes` are UTF-8 bytes.
- Task-tool calls have no scripted result, so the lab's built-in task tools run them; task ids
  are numbered "1", "2", ... in creation order, as the built-in `TaskCreate` numbers them in an
  empty task list.
- In `swe_loop`, tool results make up `observation_share` of each turn's bytes (so of its
  estimator tokens), up to one byte of rounding per turn.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from pydantic import Field

from ctxlab.core.messages.blocks import TextBlock, utf8_len
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.workloads.build import (
    BankTool,
    GeneratorParams,
    call,
    call_path,
    final_text,
    schemas,
    sized_result,
    sized_text,
    source_path,
    task_subject,
    tool_input,
    user_parts,
)
from ctxlab.workloads.filler import FillerKind, item_rng
from ctxlab.workloads.limits import Bytes, Count


class TaskListParams(GeneratorParams):
    """A long task list driven through the built-in task tools, with work between updates."""

    tasks: Count = Field(default=6, ge=1)
    tasks_per_turn: Count = Field(
        default=3, ge=1, description="Tasks worked on per turn after the planning turn."
    )
    work_tool: Literal["Read", "bash", "grep"] = "Read"
    work_bytes: Bytes = Field(default=1500, ge=0, description="The result of the work call of each task.")
    list_every: Count = Field(
        default=2, ge=0, description="Call TaskList after every k completed tasks; 0: never."
    )
    system_prompt_bytes: Bytes = Field(default=400, ge=0)
    user_bytes: Bytes = Field(default=200, ge=0)
    final_bytes: Bytes = Field(default=150, ge=0)


def _task_round(tool: str, arguments: dict[str, str]) -> ScriptedRound:
    return ScriptedRound(calls=(call(tool, arguments, None),))


def _planning(p: TaskListParams, seed: int) -> ScriptedTurn:
    rounds = [
        _task_round(
            "TaskCreate",
            {
                "subject": task_subject(item_rng(seed, f"{call_path(0, i)}.input")),
                "description": sized_text(seed, f"{call_path(0, i)}.input.description", 90),
            },
        )
        for i in range(p.tasks)
    ]
    rounds.append(_task_round("TaskList", {}))
    return ScriptedTurn(
        user=user_parts(seed, 0, p.user_bytes), rounds=tuple(rounds), final=final_text(seed, 0, p.final_bytes)
    )


def _task_work(p: TaskListParams, seed: int, t: int, task: int) -> list[ScriptedRound]:
    task_id = str(task + 1)
    at = f"turns[{t}].tasks[{task}]"
    work = call(
        p.work_tool,
        tool_input(p.work_tool, item_rng(seed, f"{at}.input")),
        sized_result(seed, f"{at}.result", p.work_bytes, "code" if p.work_tool == "Read" else "shell"),
    )
    rounds = [
        _task_round("TaskUpdate", {"task_id": task_id, "status": "in_progress"}),
        ScriptedRound(calls=(work,)),
        _task_round("TaskUpdate", {"task_id": task_id, "status": "completed"}),
    ]
    if p.list_every and (task + 1) % p.list_every == 0:
        rounds.append(_task_round("TaskList", {}))
    return rounds


def task_list(p: TaskListParams, seed: int) -> Script:
    """A planning turn creating every task, then turns that start, work on and complete them."""
    turns = [_planning(p, seed)]
    for start in range(0, p.tasks, p.tasks_per_turn):
        t = len(turns)
        rounds = [
            r
            for task in range(start, min(start + p.tasks_per_turn, p.tasks))
            for r in _task_work(p, seed, t, task)
        ]
        turns.append(
            ScriptedTurn(
                user=user_parts(seed, t, p.user_bytes),
                rounds=tuple(rounds),
                final=final_text(seed, t, p.final_bytes),
            )
        )
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=schemas(p.work_tool),
        turns=tuple(turns),
    )


class SweLoopParams(GeneratorParams):
    """SWE-agent-like turns of read → edit → test cycles, observations a fixed share of each turn."""

    turns: Count = Field(default=3, ge=1)
    cycles: Count = Field(default=3, ge=1, description="Read, Edit, test cycles per turn.")
    observation_share: float = Field(
        default=0.84, gt=0, lt=1, description="Tool results' share of a turn's bytes."
    )
    read_weight: float = Field(
        default=0.55, ge=0, le=1, description="Share of the variable observations that are reads."
    )
    user_bytes: Bytes = Field(default=400, ge=0)
    text_bytes: Bytes = Field(default=160, ge=0, description="Assistant text of every round.")
    final_bytes: Bytes = Field(default=240, ge=0)
    system_prompt_bytes: Bytes = Field(default=1500, ge=0)


def split_evenly(total: int, parts: int) -> list[int]:
    """`total` split into `parts` whole sizes that differ by at most one, larger first.

    >>> split_evenly(10, 3)
    [4, 3, 3]
    """
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def _swe_calls(seed: int, t: int, cycles: int) -> list[ScriptedCall]:
    """The calls of a turn, with placeholder results for reads and tests (sized later)."""
    calls = []
    for k in range(cycles):
        rng = item_rng(seed, f"turns[{t}].cycles[{k}]")
        path = source_path(rng)
        test = f"python -m pytest tests/test_{path.rsplit('/', 1)[-1]} -q"
        old = sized_text(seed, f"turns[{t}].cycles[{k}].old", 60, "code")
        new = sized_text(seed, f"turns[{t}].cycles[{k}].new", 72, "code")
        calls += [
            call("Read", {"file_path": path}, ()),
            call(
                "Edit",
                {"file_path": path, "old_string": old, "new_string": new},
                (TextBlock(text=f"The file {path} has been updated."),),
            ),
            call("bash", {"command": test}, ()),
        ]
    return calls


def _swe_turn(p: SweLoopParams, seed: int, t: int) -> ScriptedTurn:
    calls = _swe_calls(seed, t, p.cycles)
    texts = [sized_text(seed, f"turns[{t}].rounds[{r}].text", p.text_bytes) for r in range(len(calls))]
    actions = p.user_bytes + p.final_bytes + sum(map(utf8_len, texts)) + sum(utf8_len(c.input) for c in calls)
    observations = round(actions * p.observation_share / (1 - p.observation_share))
    fixed = sum(utf8_len(c.result[0].text) for c in calls if c.result and isinstance(c.result[0], TextBlock))
    variable = max(0, observations - fixed)
    reads = split_evenly(round(variable * p.read_weight), p.cycles)
    tests = split_evenly(variable - sum(reads), p.cycles)
    rounds = []
    for r, (planned, text) in enumerate(zip(calls, texts, strict=True)):
        sized = planned
        if not planned.result:
            kind: FillerKind = "code" if planned.tool == "Read" else "shell"
            size = reads if planned.tool == "Read" else tests
            result = sized_result(seed, f"{call_path(t, r)}.result", size[r // 3], kind)
            sized = replace(planned, result=result)
        rounds.append(ScriptedRound(text=text, calls=(sized,)))
    return ScriptedTurn(
        user=user_parts(seed, t, p.user_bytes), rounds=tuple(rounds), final=final_text(seed, t, p.final_bytes)
    )


def swe_loop(p: SweLoopParams, seed: int) -> Script:
    """Turns of Read/Edit/test cycles; tool results are `observation_share` of each turn's bytes."""
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=schemas("Read", "Edit", "bash"),
        turns=tuple(_swe_turn(p, seed, t) for t in range(p.turns)),
    )


class CustomerServiceParams(GeneratorParams):
    """A customer-service agent: a long policy prompt, short user turns, many short lookups."""

    turns: Count = Field(default=8, ge=1)
    calls_per_turn: Count = Field(default=3, ge=0, description="One call per round.")
    tools: tuple[BankTool, ...] = Field(
        default=("get_user_details", "get_order_details", "cancel_pending_order", "update_address"),
        min_length=1,
    )
    result_bytes: Bytes = Field(default=500, ge=0)
    text_bytes: Bytes = Field(default=0, ge=0, description="Assistant text of every round; 0: none.")
    user_bytes: Bytes = Field(default=160, ge=0)
    final_bytes: Bytes = Field(default=220, ge=0)
    system_prompt_bytes: Bytes = Field(default=4000, ge=0)


def _service_round(p: CustomerServiceParams, seed: int, t: int, r: int) -> ScriptedRound:
    tool = p.tools[(t + r) % len(p.tools)]
    at = call_path(t, r)
    lookup = call(
        tool,
        tool_input(tool, item_rng(seed, f"{at}.input")),
        sized_result(seed, f"{at}.result", p.result_bytes, "json"),
    )
    text = sized_text(seed, f"turns[{t}].rounds[{r}].text", p.text_bytes) if p.text_bytes else None
    return ScriptedRound(text=text, calls=(lookup,))


def customer_service(p: CustomerServiceParams, seed: int) -> Script:
    """Short user turns, each answered after `calls_per_turn` short JSON lookups."""
    turns = tuple(
        ScriptedTurn(
            user=user_parts(seed, t, p.user_bytes),
            rounds=tuple(_service_round(p, seed, t, r) for r in range(p.calls_per_turn)),
            final=final_text(seed, t, p.final_bytes),
        )
        for t in range(p.turns)
    )
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=schemas(*dict.fromkeys(p.tools)),
        turns=turns,
    )


class LongConversationParams(GeneratorParams):
    """A long chat: many turns, mostly plain answers, a tool call every few turns."""

    turns: Count = Field(default=1000, ge=1)
    user_bytes: Bytes = Field(default=200, ge=0)
    final_bytes: Bytes = Field(default=400, ge=0)
    call_every: Count = Field(default=10, ge=0, description="Every k-th turn makes one call; 0: never.")
    tool: BankTool = "web_search"
    result_bytes: Bytes = Field(default=1500, ge=0)
    system_prompt_bytes: Bytes = Field(default=300, ge=0)


def _chat_turn(p: LongConversationParams, seed: int, t: int) -> ScriptedTurn:
    rounds: tuple[ScriptedRound, ...] = ()
    if p.call_every and t % p.call_every == p.call_every - 1:
        at = call_path(t, 0)
        lookup = call(
            p.tool,
            tool_input(p.tool, item_rng(seed, f"{at}.input")),
            sized_result(seed, f"{at}.result", p.result_bytes),
        )
        rounds = (ScriptedRound(calls=(lookup,)),)
    return ScriptedTurn(
        user=user_parts(seed, t, p.user_bytes), rounds=rounds, final=final_text(seed, t, p.final_bytes)
    )


def long_conversation(p: LongConversationParams, seed: int) -> Script:
    """`turns` turns (1,000 by default) of user text and answers, with an occasional call."""
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=schemas(p.tool) if p.call_every else (),
        turns=tuple(_chat_turn(p, seed, t) for t in range(p.turns)),
    )
