"""Schemas of the lab's built-in tools (the four task tools, `CompressContext`, the skill viewer).

`ctxlab` wording is written here; AgentScope's schemas are built at run time by the installed
`agentscope` package (its task tools and the agent's compression method, rendered by its toolkit:
`ctxlab.texts.agentscope`), never stored in this project.

Invariants:
- Both sets use the names the lab dispatches on and the argument names `ctxlab.core.agentscope.task_args`
  reads; only descriptions and schema details differ.
- AgentScope's four task schemas are 8360 bytes of tool JSON and its CompressContext schema 608
  (checked by tests).
"""

from __future__ import annotations

from ctxlab.core.messages.tools import ToolSchema

_ID_LIST = {"type": "array", "items": {"type": "string"}}
CTXLAB_TASK_TOOLS = (
    ToolSchema.of(
        "TaskCreate",
        "Add a task to your task list. Keep a list when the work has three or more steps or the user "
        "asks for several things: it tracks progress across a long session and survives context "
        "compression. New tasks start as `pending`. Call TaskList first to avoid duplicates, and "
        "TaskUpdate afterwards to record dependencies. Skip the list for a single simple step.",
        {
            "type": "object",
            "properties": {
                "subject": {
                    "type": "string",
                    "description": "A short imperative title, e.g. 'Run the tests'.",
                },
                "description": {"type": "string", "description": "What has to be done, in enough detail."},
                "metadata": {"type": "object", "description": "Optional free-form data kept with the task."},
            },
            "required": ["subject", "description"],
        },
    ),
    ToolSchema.of(
        "TaskGet",
        "Show one task in full: subject, state, details, owner, the tasks it waits for and the tasks "
        "waiting for it, and its data. Check that it waits for nothing before you start it.",
        {
            "type": "object",
            "properties": {
                "task_id": {"type": "string", "description": "The task's id, as TaskList shows it."}
            },
            "required": ["task_id"],
        },
    ),
    ToolSchema.of(
        "TaskList",
        "List every task with its id, subject, state, owner and the tasks it still waits for. Call it "
        "when a task is done or after your context was compressed, then take the lowest-numbered "
        "pending task that waits for nothing.",
        {"type": "object", "properties": {}},
    ),
    ToolSchema.of(
        "TaskUpdate",
        "Change a task. `status`: `pending` -> `in_progress` (set it before you start) -> `completed` "
        "(only when fully done; when stuck, keep it in progress and add a task for the blocker), or "
        "`deleted` to remove it for good. Also: subject, description, owner, metadata (merged; a key "
        "set to null is removed), `add_blocks` (tasks that wait for this one) and `add_blocked_by` "
        "(tasks this one waits for).",
        {
            "type": "object",
            "properties": {
                "task_id": {"type": "string", "description": "The task to change."},
                "subject": {"type": "string", "description": "A new title."},
                "description": {"type": "string", "description": "New details."},
                "add_blocks": {**_ID_LIST, "description": "Ids of tasks that wait for this one."},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "deleted"]},
                "add_blocked_by": {**_ID_LIST, "description": "Ids of tasks this one waits for."},
                "owner": {"type": "string", "description": "Who works on the task."},
                "metadata": {"type": "object", "description": "Keys to merge; null removes a key."},
            },
            "required": ["task_id"],
        },
    ),
)
CTXLAB_COMPRESS_TOOL = ToolSchema.of(
    "CompressContext",
    "Replace the older part of this conversation with a summary you write, keeping the recent "
    "messages as they are. Call it between tasks, when the finished work can be summarised without "
    "losing details you still need, not in the middle of one. The context changes only once the "
    "summary exists, and stays as it is when it is too short to be worth compressing.",
    {"type": "object", "properties": {}},
)
CTXLAB_SKILL_TOOL = ToolSchema.of(
    "Skill",
    "Read a skill: the full instructions of one of the skills listed in the system prompt. Read "
    "a skill before you follow it.",
    {
        "type": "object",
        "properties": {"skill": {"type": "string", "description": "The skill's name, as listed."}},
        "required": ["skill"],
    },
)
