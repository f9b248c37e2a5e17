"""The text set: every prompt, template and hint a strategy sends, and the lab's own wording.

Token counts depend on the exact bytes of every prompt and hint, so a strategy names its texts:
`ctxlab` (written for this project, below) or a package's own, read at run time by a reader
beside this module (`ctxlab.texts.agentscope`). This module imports neither a package nor
pydantic.

Invariants:
- Placeholders are `{name}` and are filled with `fill`, which replaces exactly the named
  placeholders and leaves every other brace alone.
- `summary_template` is the exception: it is rendered with `str.format(**fields)`, as AgentScope
  renders it, so literal braces in it must be doubled.
- Both text sets have the same fields and the same placeholders (checked by tests).
- Tool schemas keep the tool names the lab dispatches on (`TaskCreate`, ..., `CompressContext`);
  only their descriptions differ between the text sets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from ctxlab.core.messages.templates import fill as fill  # noqa: PLC0414 (an explicit re-export)
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.texts.tool_schemas import CTXLAB_COMPRESS_TOOL, CTXLAB_SKILL_TOOL, CTXLAB_TASK_TOOLS

if TYPE_CHECKING:
    from ctxlab.core.agentscope.inject import HintTexts
    from ctxlab.core.agentscope.tasks import TaskTexts
    from ctxlab.core.agentscope.toolkit import ToolkitTexts

TextsName = Literal[
    "ctxlab",
    "agentscope",
    "langchain",
    "deepagents",
    "openhands",
    "swe-agent",
    "google-adk",
    "strands",
    "openai-agents",
    "pydantic-ai",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Texts:
    """Every sentence a strategy sends to the model that is not workload content."""

    compression_prompt: str  # {current_time}
    summary_template: str  # str.format with the five summary fields
    summary_schema: str  # JSON text of the structured-summary schema
    summary_tool_description: str
    structured_output_instruction: str  # appended to the summary request as sent
    truncated_summary: str  # the summary when compression failed and there was none before
    context_offload_reminder: str  # {path}
    tool_result_truncated: str  # {offload_reminder}
    tool_result_offload: str  # {path}
    image_name: str  # {name}
    image_offloaded: str  # {name} {url}
    image_removed: str  # {name}
    # How a request carries the media a tool returned (`ctxlab.core.agentscope.formatter`)
    data_presented: str  # {type} {id}; in the result's text, for media sent after the results
    data_list_header: str  # opens the user message that sends a result's media
    data_list_entry: str  # {id} {type}; before each medium in that message
    data_list_footer: str  # closes it
    data_at_url: str  # {type} {url}; in the result's text, for media the request cannot carry
    injection_template: str  # {runtime_state}
    tool_retries_hint: str  # {tool_name} {count}
    tasks_hint: str  # {in_progress} {pending}
    context_length_hint: str  # {count} {trigger}
    context_length_compress_suffix: str  # {tool}
    max_iters_hint: str  # {max_iters}
    max_iters_source: str
    # The task tools: schemas, replies, and the TaskList / TaskGet formats
    task_create_tool: ToolSchema
    task_get_tool: ToolSchema
    task_list_tool: ToolSchema
    task_update_tool: ToolSchema
    task_created: str  # {id} {subject}
    task_list_empty: str
    task_list_line: str  # {id} {state} {subject} {owner} {blocked_by}
    task_list_owner: str  # {owner}; the {owner} piece of a line, only when the task has an owner
    task_list_blocked_by: str  # {ids}; the {blocked_by} piece, only when something blocks the task
    task_get_not_found: str
    task_get_header: str  # {id} {subject}
    task_get_status: str  # {state}
    task_get_description: str  # {description}
    task_get_owner: str  # {owner}
    task_get_blocked_by: str  # {ids}
    task_get_blocks: str  # {ids}
    task_get_metadata: str  # {metadata}
    task_update_not_found: str  # {id}
    task_deleted: str  # {id}
    task_updated: str  # {id} {fields}
    task_not_updated: str  # {id}
    task_completed_suffix: str
    # The CompressContext tool: schema and replies
    compress_tool: ToolSchema
    compress_succeeded: str
    compress_unchanged: str
    compress_failed: str  # {error}
    # The built-in Read tool for offloaded files (ctxlab.engine.tools)
    read_tool_description: str
    read_tool_path_description: str
    read_tool_missing: str  # {path}
    read_tool_refused: str  # {path}
    tool_not_found: str  # {tool}; a call of a tool the run does not have
    # Tool groups and skills (ctxlab.core.agentscope.toolkit)
    reset_tools_description: str
    tool_groups_none: str
    tool_groups_active: str  # {names}
    tool_groups_separator: str
    tool_groups_instructions: str  # {groups}
    tool_group_instructions: str  # {name} {instructions}
    tool_group_inactive: str  # {tool} {group} {meta_tool}
    tool_groups_invalid: str  # {names} {available}
    skill_tool: ToolSchema
    skill_not_found: str  # {skill}
    skill_instruction: str  # {viewer} {skills}
    skill_entry: str  # {name} {description} {dir}
    # Which set this is: a family preset takes its framework's own strings when it names it
    name: str = "ctxlab"

    def schema(self) -> dict[str, Any]:
        """The summary schema as a mapping."""
        loaded: dict[str, Any] = json.loads(self.summary_schema)
        return loaded


PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "compression_prompt": ("current_time",),
    "context_offload_reminder": ("path",),
    "tool_result_truncated": ("offload_reminder",),
    "tool_result_offload": ("path",),
    "image_name": ("name",),
    "image_offloaded": ("name", "url"),
    "image_removed": ("name",),
    "data_presented": ("type", "id"),
    "data_list_entry": ("id", "type"),
    "data_at_url": ("type", "url"),
    "injection_template": ("runtime_state",),
    "tool_retries_hint": ("tool_name", "count"),
    "tasks_hint": ("in_progress", "pending"),
    "context_length_hint": ("count", "trigger"),
    "context_length_compress_suffix": ("tool",),
    "max_iters_hint": ("max_iters",),
    "task_created": ("id", "subject"),
    "task_list_line": ("id", "state", "subject", "owner", "blocked_by"),
    "task_list_owner": ("owner",),
    "task_list_blocked_by": ("ids",),
    "task_get_header": ("id", "subject"),
    "task_get_status": ("state",),
    "task_get_description": ("description",),
    "task_get_owner": ("owner",),
    "task_get_blocked_by": ("ids",),
    "task_get_blocks": ("ids",),
    "task_get_metadata": ("metadata",),
    "task_update_not_found": ("id",),
    "task_deleted": ("id",),
    "task_updated": ("id", "fields"),
    "task_not_updated": ("id",),
    "compress_failed": ("error",),
    "read_tool_missing": ("path",),
    "read_tool_refused": ("path",),
    "tool_not_found": ("tool",),
    "tool_groups_active": ("names",),
    "tool_groups_instructions": ("groups",),
    "tool_group_instructions": ("name", "instructions"),
    "tool_group_inactive": ("tool", "group", "meta_tool"),
    "tool_groups_invalid": ("names", "available"),
    "skill_not_found": ("skill",),
    "skill_instruction": ("viewer", "skills"),
    "skill_entry": ("name", "description", "dir"),
}
"""The placeholders each text must carry."""


_CTXLAB_SUMMARY_TEMPLATE = (
    "<system-info>Summary of the work so far (it replaces the earlier conversation):\n"
    "## Task\n{task_overview}\n"
    "## Done so far\n{current_state}\n"
    "## Learned\n{important_discoveries}\n"
    "## Next\n{next_steps}\n"
    "## Keep in mind\n{context_to_preserve}\n"
    "</system-info>"
)

_CTXLAB_COMPRESSION_PROMPT = (
    "<system-hint>The conversation above is about to be removed from your context. Write the "
    "hand-over summary that replaces it, so that you can carry on the work without it. It is "
    "now {current_time}.\n"
    "Rules: write absolute dates instead of relative ones ('today', 'an hour ago'), even when "
    "you summarise an earlier summary; quote file paths, identifiers, commands and error "
    "messages exactly; keep every rule and constraint the user stated, word for word; list work "
    "still running or pending with its owner and status. This summary may be summarised again "
    "later, when the conversation it describes is gone, so it must stand on its own."
    "</system-hint>"
)

SUMMARY_SCHEMA_DESCRIPTION = (
    "The five fields of a structured summary: a hand-over note for the agent's future self."
)
SUMMARY_FIELD_DESCRIPTIONS = {
    "task_overview": "What the user asked for: the core request, how success is judged, "
    "and every constraint or rule the user stated, word for word.",
    "current_state": "What is done so far: completed steps, and the files, paths and artifacts "
    "created or changed.",
    "important_discoveries": "What was learned: technical constraints, decisions and their reasons, "
    "errors met and how they were fixed, approaches that failed.",
    "next_steps": "What remains: concrete next actions, blockers, and their priority.",
    "context_to_preserve": "What must not be forgotten: user preferences, domain details, promises made, "
    "and work still running (with its id and purpose).",
}
"""The five summary fields in order, and what each holds (`scenarios.config.SummarySchema`'s)."""
SUMMARY_FIELDS = tuple(SUMMARY_FIELD_DESCRIPTIONS)
"""The five summary fields' names, in order."""


def _summary_schema() -> str:
    """The JSON schema of `scenarios.config.SummarySchema` as pydantic writes it (a test holds the
    two together), built here so that reading the texts needs no pydantic."""
    properties = {
        name: {"description": text, "title": name.replace("_", " ").title(), "type": "string"}
        for name, text in SUMMARY_FIELD_DESCRIPTIONS.items()
    }
    schema = {
        "additionalProperties": False,
        "description": SUMMARY_SCHEMA_DESCRIPTION,
        "properties": properties,
        "required": list(SUMMARY_FIELD_DESCRIPTIONS),
        "title": "SummarySchema",
        "type": "object",
    }
    return json.dumps(schema, ensure_ascii=False)


CTXLAB_TEXTS = Texts(
    compression_prompt=_CTXLAB_COMPRESSION_PROMPT,
    summary_template=_CTXLAB_SUMMARY_TEMPLATE,
    summary_schema=_summary_schema(),
    summary_tool_description="Return the structured summary the user asked for.",
    structured_output_instruction=(
        "<system-reminder>Answer only by calling the tool 'generate_structured_output' with "
        "the requested fields.</system-reminder>"
    ),
    truncated_summary=(
        "<system-info>Earlier messages were dropped to fit the context window; no summary of "
        "them is available.</system-info>"
    ),
    context_offload_reminder=(
        "<system-reminder>The earlier conversation is saved at '{path}'; read it when you need "
        "a detail the summary lacks.</system-reminder>"
    ),
    tool_result_truncated=(
        "\n<<<TRUNCATED>>>\n<system-reminder>The rest of this result was cut to fit the "
        "context.{offload_reminder}</system-reminder>"
    ),
    tool_result_offload=" The full remainder is saved at '{path}'.",
    image_name="'{name}' ",
    image_offloaded=(
        "<system-reminder>An image {name}was moved out of the context to {url}; open it there "
        "if you need it.</system-reminder>"
    ),
    image_removed=("<system-reminder>An image {name}was dropped to free context space.</system-reminder>"),
    data_presented=(
        "<system-reminder>The tool returned a {type} file, shown next as [{id}].</system-reminder>"
    ),
    data_list_header="<system-reminder>Files the tools returned, each after its identifier:",
    data_list_entry="- [{id}] ({type}): ",
    data_list_footer="(end of files)</system-reminder>",
    data_at_url="<system-reminder>The tool returned a {type} file; it is at {url}.</system-reminder>",
    injection_template=(
        "<system-reminder>Current runtime state (newer reminders replace older ones):\n"
        "{runtime_state}\n</system-reminder>"
    ),
    tool_retries_hint=(
        "'{tool_name}' has failed {count} times in a row with the same arguments. Do not repeat "
        "the call unchanged: read the error and change the approach."
    ),
    tasks_hint=(
        "{in_progress} task(s) in progress and {pending} pending. Call `TaskList` if you do not "
        "remember them."
    ),
    context_length_hint=("The context now holds {count} tokens; it is compressed at {trigger} tokens."),
    context_length_compress_suffix=(
        " No task is in progress: you may call `{tool}` now to compress at a clean boundary."
    ),
    max_iters_hint=(
        "<system-reminder>This is the last step of the reply ({max_iters} rounds used). Give "
        "the final answer as text, without tool calls.</system-reminder>"
    ),
    max_iters_source='{"label": "System", "sublabel": "Last Step"}',
    task_create_tool=CTXLAB_TASK_TOOLS[0],
    task_get_tool=CTXLAB_TASK_TOOLS[1],
    task_list_tool=CTXLAB_TASK_TOOLS[2],
    task_update_tool=CTXLAB_TASK_TOOLS[3],
    task_created="Created task {id}: {subject}",
    task_list_empty="The task list is empty.",
    task_list_line="{id}: {subject} ({state}){owner}{blocked_by}",
    task_list_owner=", owner {owner}",
    task_list_blocked_by=", waiting for {ids}",
    task_get_not_found="Error: there is no task with this id. Call TaskList to see the ids.",
    task_get_header="Task {id}: {subject}",
    task_get_status="State: {state}",
    task_get_description="Details: {description}",
    task_get_owner="Assigned to: {owner}",
    task_get_blocked_by="Waiting for: {ids}",
    task_get_blocks="Holding up: {ids}",
    task_get_metadata="Data: {metadata}",
    task_update_not_found="Error: there is no task {id}. Call TaskList to see the ids.",
    task_deleted="Deleted task {id}.",
    task_updated="Updated task {id}: {fields}.",
    task_not_updated="Task {id} is unchanged: give at least one field with a new value.",
    task_completed_suffix=(
        "\n\nThe task is done. Call TaskList to pick the next one and to see what it unblocked."
    ),
    compress_tool=CTXLAB_COMPRESS_TOOL,
    compress_succeeded="The context was compressed.",
    compress_unchanged="The context is too short to compress; nothing changed.",
    compress_failed="Error: compressing the context failed: {error}",
    read_tool_description=(
        "Read back a file that was saved out of your context: an earlier part of the conversation "
        "or the rest of a cut tool result. Pass the path a reminder gave you; the whole file is "
        "returned as text."
    ),
    read_tool_path_description="The path exactly as the reminder gave it.",
    read_tool_missing="Error: nothing is saved at '{path}'.",
    read_tool_refused=(
        "Error: '{path}' is not a path inside the workspace; pass the relative path a reminder gave you."
    ),
    tool_not_found="Error: the tool '{tool}' is not available.",
    reset_tools_description=(
        "Choose which tool groups are active. Give every group you need as true; a group you leave "
        "out or set to false is switched off, whatever it was before. Keep only the groups the "
        "current step needs: the tools of an inactive group are not shown to you and cost no "
        "context. The answer lists the active groups and how to use their tools."
    ),
    tool_groups_none="No tool group is active now.",
    tool_groups_active="Active tool groups: {names}.",
    tool_groups_separator="; ",
    tool_groups_instructions="\nHow to use them:{groups}",
    tool_group_instructions="\n- {name}: {instructions}",
    tool_group_inactive=(
        "Error: the tool '{tool}' belongs to the inactive group '{group}'; activate the group with "
        "'{meta_tool}' first."
    ),
    tool_groups_invalid="Error: no tool group is named {names}; the groups are: {available}.",
    skill_tool=CTXLAB_SKILL_TOOL,
    skill_not_found="Error: there is no skill named '{skill}'.",
    skill_instruction=(
        "<skills>\nSkills are instructions for particular kinds of work. Before you follow one, "
        "read it with the `{viewer}` tool; a skill is not a tool you can call.{skills}\n</skills>"
    ),
    skill_entry="\n- {name} (in {dir}): {description}",
)


def texts_as_json(texts: Texts) -> dict[str, Any]:
    """A text set as JSON data (a tool schema as its name, description and parameters text)."""
    out: dict[str, Any] = {}
    for f in fields(Texts):
        value = getattr(texts, f.name)
        if isinstance(value, ToolSchema):
            value = {"name": value.name, "description": value.description, "parameters": value.parameters}
        out[f.name] = value
    return out


def texts_from_json(data: dict[str, Any]) -> Texts:
    """The text set `texts_as_json` wrote.

    Raises:
        KeyError, TypeError, ValueError: `data` is not such a set.
    """
    values: dict[str, Any] = {}
    for f in fields(Texts):
        value = data[f.name]
        if isinstance(value, dict):
            value = ToolSchema(
                name=value["name"], description=value["description"], parameters=value["parameters"]
            )
        elif not isinstance(value, str):
            raise TypeError(f"text {f.name!r} is a {type(value).__name__}, not a string")
        values[f.name] = value
    return Texts(**values)


def text_names() -> tuple[str, ...]:
    """The field names of `Texts` that hold texts (not the set's `name`)."""
    return tuple(f.name for f in fields(Texts) if f.name != "name")


if TYPE_CHECKING:  # Texts is what the core's task tools and runtime hints read.
    _TASK_TEXTS: TaskTexts = CTXLAB_TEXTS
    _HINT_TEXTS: HintTexts = CTXLAB_TEXTS
    _TOOLKIT_TEXTS: ToolkitTexts = CTXLAB_TEXTS
