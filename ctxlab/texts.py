"""Prompt, template and hint texts: the lab's own, or AgentScope's loaded at run time.

Token counts depend on the exact bytes of every prompt and hint, so a strategy names its texts:
`ctxlab` (written for this project, below) or `agentscope` (read from the installed `agentscope`
package, the `peers` extra, when asked for; never stored in this project).

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

import ast
import functools
import importlib.util
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab.core.templates import fill as fill  # noqa: PLC0414 (an explicit re-export)
from ctxlab.core.tools import ToolSchema
from ctxlab.tool_schemas import CTXLAB_COMPRESS_TOOL, CTXLAB_TASK_TOOLS, agentscope_tool_schemas

if TYPE_CHECKING:
    from ctxlab.core.inject import HintTexts
    from ctxlab.core.tasks import TaskTexts
from ctxlab.scenarios.config import SummarySchema, TextsName


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

CTXLAB_TEXTS = Texts(
    compression_prompt=_CTXLAB_COMPRESSION_PROMPT,
    summary_template=_CTXLAB_SUMMARY_TEMPLATE,
    summary_schema=json.dumps(SummarySchema.model_json_schema(), ensure_ascii=False),
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
)


@dataclass(frozen=True, slots=True)
class _Literal:
    """Where to find one string literal in AgentScope's source, and how to rename its fields."""

    module: str  # path inside the package
    marker: str  # a substring only that literal contains
    renames: tuple[tuple[str, str], ...] = ()  # (expression source, our placeholder)
    fstring: bool = True


_AGENT = "agent/_agent.py"
_READ = "tool/_builtin/_read.py"
_INLINE: dict[str, _Literal] = {
    "truncated_summary": _Literal(_AGENT, "Some earlier messages were truncated", fstring=False),
    "context_offload_reminder": _Literal(_AGENT, "The compressed context", (("path", "path"),)),
    "tool_result_truncated": _Literal(_AGENT, "<<<TRUNCATED>>>", fstring=False),
    "tool_result_offload": _Literal(_AGENT, "You can refer to the file in", (("path", "path"),)),
    "image_name": _Literal(_AGENT, "named '", (("block.name", "name"),)),
    "image_offloaded": _Literal(_AGENT, "is offloaded into", (("name", "name"), ("url", "url"))),
    "image_removed": _Literal(_AGENT, "is removed to free", (("name", "name"),)),
    "tasks_hint": _Literal(
        _AGENT,
        "in-progress tasks ",
        (("task_status['in_progress']", "in_progress"), ("task_status['pending']", "pending")),
    ),
    "context_length_hint": _Literal(
        _AGENT,
        "Your current context contains",
        (("input_tokens", "count"), ("trigger_tokens", "trigger")),
    ),
    "context_length_compress_suffix": _Literal(
        _AGENT, "No task is in progress", (("_COMPRESSION_TOOL_NAME", "tool"),)
    ),
    "max_iters_hint": _Literal(_AGENT, "reasoning-acting ", (("self.react_config.max_iters", "max_iters"),)),
    "max_iters_source": _Literal(_AGENT, '"Max Iterations Reached"', fstring=False),
    "structured_output_instruction": _Literal(
        "model/_base.py", "**MUST** call the tool", (("func_name", "func_name"),)
    ),
    "summary_tool_description": _Literal("model/_base.py", "Call this function to generate", fstring=False),
    "compress_succeeded": _Literal(_AGENT, "Context compressed successfully", fstring=False),
    "compress_unchanged": _Literal(_AGENT, "not long enough to compress,", fstring=False),
    "compress_failed": _Literal(_AGENT, "Context compression failed: ", (("e", "error"),)),
    # The Read tool: AgentScope's own `Read` texts (its description without the image and PDF
    # bullets, which our offload reader does not serve); its "must be an absolute path" error is
    # the closest it has to refusing a path outside the workspace.
    "read_tool_description": _Literal(_READ, "Reads a file from the local filesystem", fstring=False),
    "read_tool_path_description": _Literal(_READ, "The absolute path to the file to read", fstring=False),
    "read_tool_missing": _Literal(_READ, "File does not exist", (("file_path", "path"),)),
    "read_tool_refused": _Literal(_READ, "must be an absolute path, got", (("file_path", "path"),)),
}

_TASK = "tool/_task/"
_CREATE, _LIST, _GET, _UPDATE = (_TASK + f"_{verb}_task.py" for verb in ("create", "list", "get", "update"))
_INLINE_TASKS: dict[str, _Literal] = {
    "task_created": _Literal(
        _CREATE, "created successfully", (("next_id", "id"), ("task.subject", "subject"))
    ),
    "task_list_empty": _Literal(_LIST, "No tasks available", fstring=False),
    "task_list_line": _Literal(
        _LIST,
        "] {task.subject}",
        (
            ("task.id", "id"),
            ("task.state", "state"),
            ("task.subject", "subject"),
            ("owner", "owner"),
            ("blocked", "blocked_by"),
        ),
    ),
    "task_list_owner": _Literal(_LIST, "({task.owner})", (("task.owner", "owner"),)),
    "task_list_blocked_by": _Literal(_LIST, "[blocked by ", (("', '.join(task.blocked_by)", "ids"),)),
    "task_get_not_found": _Literal(_GET, "Task not found", fstring=False),
    "task_get_header": _Literal(_GET, "Task (id=", (("task.id", "id"), ("task.subject", "subject"))),
    "task_get_status": _Literal(_GET, "Status: ", (("task.state", "state"),)),
    "task_get_description": _Literal(_GET, "Description: ", (("task.description", "description"),)),
    "task_get_owner": _Literal(_GET, "Owner: ", (("task.owner", "owner"),)),
    "task_get_blocked_by": _Literal(_GET, "Blocked by: ", (("blocked_by_str", "ids"),)),
    "task_get_blocks": _Literal(_GET, "Blocks: ", (("blocks_str", "ids"),)),
    "task_get_metadata": _Literal(_GET, "Metadata: ", (("task.metadata", "metadata"),)),
    "task_update_not_found": _Literal(_UPDATE, "does not exist.", (("task_id", "id"),)),
    "task_deleted": _Literal(_UPDATE, "has been deleted.", (("task_id", "id"),)),
    "task_updated": _Literal(
        _UPDATE, "Update task (id=", (("task_id", "id"), ("', '.join(updated_fields)", "fields"))
    ),
    "task_not_updated": _Literal(_UPDATE, "No updates were made", (("task_id", "id"),)),
    "task_completed_suffix": _Literal(_UPDATE, "Task completed. Call TaskList", fstring=False),
}


def _template_of(node: ast.expr) -> str | None:
    """A literal string, or an f-string with each field written as `{expression source}`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    pieces = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            pieces.append(str(value.value))
        elif isinstance(value, ast.FormattedValue):
            pieces.append("{" + ast.unparse(value.value) + "}")
    return "".join(pieces)


@functools.cache
def _literals(path: Path) -> tuple[tuple[str, bool], ...]:
    """Every string literal of a module: (template, is_fstring), in source order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    found = []
    for node in ast.walk(tree):
        if id(node) in inner:
            continue
        if isinstance(node, ast.JoinedStr):
            template = _template_of(node)
            if template is not None:
                found.append((template, True))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.value, False))
    return tuple(found)


def _find(root: Path, spec: _Literal) -> str:
    matches = sorted(
        {
            template
            for template, is_fstring in _literals(root / spec.module)
            if spec.marker in template and is_fstring == spec.fstring
        }
    )
    if len(matches) != 1:
        raise LookupError(
            f"expected one distinct literal containing {spec.marker!r} in agentscope/{spec.module}, found "
            f"{len(matches)}; the installed agentscope is not the 2.0.11 the texts were mapped on"
        )
    template = matches[0]
    for expression, placeholder in spec.renames:
        template = template.replace("{" + expression + "}", "{" + placeholder + "}")
    return template


def _agentscope_root() -> Path:
    spec = importlib.util.find_spec("agentscope")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "texts: agentscope needs the agentscope package; install the 'peers' extra "
            "(pip install 'ctxlab[peers]')"
        )
    return Path(spec.origin).parent


@functools.cache
def agentscope_texts() -> Texts:
    """AgentScope 2.0.11's default texts, read from the installed package.

    Config defaults come from `ContextConfig()` and `InjectionConfig()`; tool schemas from the
    task tools and the agent's CompressContext method as agentscope's toolkit renders them; texts
    written inline in the agent, model and task-tool code are located in their source by a marker
    substring.

    Raises:
        ModuleNotFoundError: agentscope is not installed.
        LookupError: a text cannot be located (another agentscope version).
    """
    root = _agentscope_root()
    from agentscope.agent import ContextConfig, InjectionConfig

    context, injection = ContextConfig(), InjectionConfig()
    inline: dict[str, Any] = {name: _find(root, spec) for name, spec in (_INLINE | _INLINE_TASKS).items()}
    inline["structured_output_instruction"] = fill(
        inline["structured_output_instruction"], func_name="generate_structured_output"
    )
    return Texts(
        compression_prompt=context.compression_prompt,
        summary_template=context.summary_template,
        summary_schema=json.dumps(context.summary_schema, ensure_ascii=False),
        injection_template=injection.template,
        tool_retries_hint=injection.tool_retries_hint,
        **inline,
        **agentscope_tool_schemas(),
    )


def load_texts(name: TextsName) -> Texts:
    """The named text set."""
    return CTXLAB_TEXTS if name == "ctxlab" else agentscope_texts()


def text_names() -> tuple[str, ...]:
    """The field names of `Texts`."""
    return tuple(f.name for f in fields(Texts))


if TYPE_CHECKING:  # Texts is what the core's task tools and runtime hints read.
    _TASK_TEXTS: TaskTexts = CTXLAB_TEXTS
    _HINT_TEXTS: HintTexts = CTXLAB_TEXTS
