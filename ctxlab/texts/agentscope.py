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
_FORMATTER = "formatter/_formatter_base.py"
_READ = "tool/_builtin/_read.py"
_INLINE: dict[str, _Literal] = {
    "truncated_summary": _Literal(_AGENT, "Some earlier messages were truncated", fstring=False),
    "context_offload_reminder": _Literal(_AGENT, "The compressed context", (("path", "path"),)),
    "tool_result_truncated": _Literal(_AGENT, "<<<TRUNCATED>>>", fstring=False),
    "tool_result_offload": _Literal(_AGENT, "You can refer to the file in", (("path", "path"),)),
    "image_name": _Literal(_AGENT, "named '", (("block.name", "name"),)),
    "image_offloaded": _Literal(_AGENT, "is offloaded into", (("name", "name"), ("url", "url"))),
    "image_removed": _Literal(_AGENT, "is removed to free", (("name", "name"),)),
    "data_presented": _Literal(
        _FORMATTER, "will be presented to you", (("main_type", "type"), ("identifier", "id"))
    ),
    "data_list_header": _Literal(_FORMATTER, "identifiers are listed as follows", fstring=False),
    "data_list_entry": _Literal(_FORMATTER, " file): ", (("identifier", "id"), ("main_type", "type"))),
    "data_list_footer": _Literal(_FORMATTER, "</system-reminder>", fstring=False),
    "data_at_url": _Literal(
        _FORMATTER, "can be accessed at the URL", (("main_type", "type"), ("block.source.url", "url"))
    ),
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

_TOOLKIT = "tool/_toolkit.py"
_INLINE_TOOLKIT: dict[str, _Literal] = {
    # `check_tool_available`'s wording, the one the agent's acting step returns.
    "tool_group_inactive": _Literal(
        _TOOLKIT,
        "{all_tools[tool_name].group}",
        (
            ("tool_name", "tool"),
            ("all_tools[tool_name].group", "group"),
            ("self.builtin_meta_tool.tool.name", "meta_tool"),
        ),
    ),
    "tool_groups_invalid": _Literal(
        "tool/_builtin/_meta.py",
        "Invalid group name(s)",
        (("', '.join(unexist_groups)", "names"), ("', '.join(cur_groups)", "available")),
    ),
    "skill_not_found": _Literal("tool/_builtin/_skill.py", "SkillNotFoundError", (("skill", "skill"),)),
    "tool_not_found": _Literal(_TOOLKIT, "named '{tool_name}'", (("tool_name", "tool"),)),
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
    literals = _INLINE | _INLINE_TASKS | _INLINE_TOOLKIT
    inline: dict[str, Any] = {name: _find(root, spec) for name, spec in literals.items()}
    inline["structured_output_instruction"] = fill(
        inline["structured_output_instruction"], func_name="generate_structured_output"
    )
    return Texts(
        name="agentscope",
        compression_prompt=context.compression_prompt,
        summary_template=context.summary_template,
        summary_schema=json.dumps(context.summary_schema, ensure_ascii=False),
        injection_template=injection.template,
        tool_retries_hint=injection.tool_retries_hint,
        **inline,
        **agentscope_tool_schemas(),
        **toolkit_templates(),
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


_MARK = "\x00"
"""Marks a value in a rendered template; no text of the package contains it."""


@dataclass(frozen=True, slots=True)
class _Group:
    name: str
    instructions: str | None


@dataclass(frozen=True, slots=True)
class _Skill:
    name: str
    description: str
    dir: str


def _between(text: str, start: str, end: str) -> str:
    head = text.index(start) + len(start)
    return text[head : text.index(end, head)]


def _cut(whole: str, inner: str) -> tuple[str, str]:
    """`whole` split around `inner`, which it must contain once."""
    if whole.count(inner) != 1:
        raise LookupError("agentscope's toolkit templates are not the 2.0.11 the texts were mapped on")
    head, tail = whole.split(inner)
    return head, tail


def toolkit_templates() -> dict[str, Any]:
    """The toolkit's texts: the activation tool's description and answers and the skill listing,
    by rendering the package's own templates with marked values and reading the pieces between
    the marks (so the pieces fill back to exactly what the template renders); the skill viewer's
    schema as the toolkit sends it.

    Raises:
        LookupError: a rendered template does not have the 2.0.11 layout.
    """
    # The toolkit module's own template class (jinja2's), so the package renders its templates.
    from agentscope.tool import RegisteredTool, _toolkit
    from agentscope.tool._builtin import ResetTools, SkillViewer

    template = _toolkit.Template  # type: ignore[attr-defined]
    meta = template(_toolkit.DEFAULT_META_TOOL_RESPONSE_TEMPLATE)
    skill = template(_toolkit.DEFAULT_SKILL_INSTRUCTION)
    a, b, i, j = (_MARK + c + _MARK for c in "abij")
    active_head, active_tail = _cut(meta.render(groups=[_Group(a, None)]), a)
    separator = _between(meta.render(groups=[_Group(a, None), _Group(b, None)]), a, b)
    # Activated groups with empty instructions open the section with no entry in it.
    opened = meta.render(groups=[_Group(a, ""), _Group(b, "")])
    names = active_head + a + separator + b + active_tail
    section = _repeated(opened, meta.render(groups=[_Group(a, i), _Group(b, j)]), names)
    listing = _repeated(
        skill.render(skills=[], skill_viewer=a),
        skill.render(skills=[_Skill(name=i, description=b, dir=j)] * 2, skill_viewer=a),
        "",
    )
    viewer = SkillViewer(get_skills_method=_no_skills)
    return {
        "reset_tools_description": ResetTools.description,
        "tool_groups_none": meta.render(groups=[]),
        "tool_groups_active": active_head + "{names}" + active_tail,
        "tool_groups_separator": separator,
        "tool_groups_instructions": section.head + "{groups}" + section.tail,
        "tool_group_instructions": section.entry.replace(a, "{name}").replace(i, "{instructions}"),
        "skill_tool": _schema_of(RegisteredTool(tool=viewer)),
        "skill_instruction": (listing.head + "{skills}" + listing.tail).replace(a, "{viewer}"),
        "skill_entry": listing.entry.replace(i, "{name}").replace(b, "{description}").replace(j, "{dir}"),
    }


@dataclass(frozen=True, slots=True)
class _Loop:
    """A template's text around a loop, and one pass of the loop (with the marks of its first item)."""

    head: str
    entry: str
    tail: str


def _repeated(none: str, two: str, skip: str) -> _Loop:
    """The loop of a template rendered with no item (`none`) and with two items (`two`) whose
    second item's marks are the first's with the letters moved on (a→b, i→j) or equal; `skip`
    is a prefix both renderings share that lies outside the loop.

    Where the loop's text meets the text after it, the split is not unique (both may end the
    same way); every split fills back to the same rendering, and the one taken keeps the longest
    tail, so an item's text starts where the template's item does.
    """
    if not (none.startswith(skip) and two.startswith(skip)):
        raise LookupError("agentscope's toolkit templates are not the 2.0.11 the texts were mapped on")
    none, two = none[len(skip) :], two[len(skip) :]
    n = 0  # the longest common suffix: the loop's text then starts where the item's own text does
    while n < min(len(none), len(two)) and none[-1 - n] == two[-1 - n]:
        n += 1
    head, tail = none[: len(none) - n], none[len(none) - n :]
    if not two.startswith(head):
        raise LookupError("agentscope's toolkit templates are not the 2.0.11 the texts were mapped on")
    n = len(head)
    entries = two[n : len(two) - len(tail)]
    half = len(entries) // 2
    first, second = entries[:half], entries[half:]
    moved = first.replace(_MARK + "a" + _MARK, _MARK + "b" + _MARK).replace(
        _MARK + "i" + _MARK, _MARK + "j" + _MARK
    )
    if len(entries) % 2 or second not in (first, moved):
        raise LookupError("agentscope's toolkit templates are not the 2.0.11 the texts were mapped on")
    return _Loop(head=head, entry=first, tail=tail)


async def _no_skills(groups: list[str] | None = None) -> dict[str, Any]:
    return {}
