"""AgentScope's texts read from the installed package: its configs, its toolkit, its source.

Config defaults come from `ContextConfig()` and `InjectionConfig()`; tool schemas from the task
tools and the agent's CompressContext method as agentscope's toolkit renders them; texts written
inline in the agent, model and task-tool code are located in their source by a marker substring.
Nothing of them is stored in the project; `ctxlab.texts.agentscope_texts` keeps what this module
reads in the user's cache (`ctxlab.texts.cache`), so `agentscope` is imported once per install.

Invariant: each inline text is the one distinct literal of its module containing its marker;
anything else means another agentscope version, and reading fails with `LookupError`.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.texts.base import Texts, fill


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


def package_root() -> Path:
    """The folder of the installed `agentscope` package (found without importing it).

    Raises:
        ModuleNotFoundError: agentscope is not installed.
    """
    spec = importlib.util.find_spec("agentscope")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "texts: agentscope needs the agentscope package; install the 'peers' extra "
            "(pip install 'ctxlab[peers]')"
        )
    return Path(spec.origin).parent


def read_agentscope_texts(root: Path) -> Texts:
    """AgentScope's default texts read from the package at `root` (importing it).

    Config defaults come from `ContextConfig()` and `InjectionConfig()`; tool schemas from the
    task tools and the agent's CompressContext method as agentscope's toolkit renders them; texts
    written inline in the agent, model and task-tool code are located in their source by a marker
    substring.
    """
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


def _schema_of(registered: Any) -> ToolSchema:
    """Our schema value from what agentscope's toolkit sends for a registered tool."""
    function = registered.get_tool_schema()["function"]
    return ToolSchema(
        name=function["name"],
        description=function["description"],
        parameters=json.dumps(function["parameters"], ensure_ascii=False),
    )


def agentscope_tool_schemas() -> dict[str, Any]:
    """AgentScope's task tool and CompressContext schemas, built by the installed package itself,
    keyed by their `Texts` field names.

    The agent wraps its bound `_compress_context_tool` method; the unbound function gives the same
    schema (agentscope skips `self`).
    """
    from agentscope.agent import Agent
    from agentscope.agent._agent import _COMPRESSION_TOOL_NAME
    from agentscope.tool import FunctionTool, RegisteredTool, TaskCreate, TaskGet, TaskList, TaskUpdate

    tasks = {
        f"task_{verb}_tool": _schema_of(RegisteredTool(tool=tool()))
        for verb, tool in (
            ("create", TaskCreate),
            ("get", TaskGet),
            ("list", TaskList),
            ("update", TaskUpdate),
        )
    }
    compress = FunctionTool(Agent._compress_context_tool, name=_COMPRESSION_TOOL_NAME)
    return {**tasks, "compress_tool": _schema_of(RegisteredTool(tool=compress))}
