"""AgentScope 2.0.11's toolkit: tool groups activated on demand, and skills read through a viewer.

Source: agentscope 2.0.11 `tool/_toolkit.py` (`Toolkit`), `tool/_tool_group.py`,
`tool/_builtin/_meta.py` (`ResetTools`) and `tool/_builtin/_skill.py` (`SkillViewer`). The
wording comes from the run's texts (`ctxlab.texts`), read from the installed package for
`texts: agentscope`.

Invariants:
- The tools offered are, in this order: the skill viewer when there is a skill, the activation
  tool when there is a group, the basic tools, then the tools of each active group in the
  groups' declared order (not the activation order). Only these schemas are sent and counted.
- The activation tool's input booleans are the final state: a group not set to true is
  deactivated. A name that is not a group makes the whole call an error that changes nothing.
- Its result names the activated groups in declared order; the instruction section appears when
  one of them has instructions that are not None, and lists only those with non-empty ones.
- A call to a tool of an inactive group is answered with the inactive-group error and never runs.
- The system prompt gains the skill listing (joined with a newline) only when there is a skill.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.toolkit import Skill, ToolGroup, group_of

RESET_TOOLS = "reset_tools"
"""The activation tool's name (AgentScope's `ResetTools.name`)."""
ACTIVE_GROUPS = "activated_groups"
"""The state memo holding the names of the active groups, in the order the call gave them."""


class ToolkitTexts(Protocol):
    """The toolkit's wording (`ctxlab.texts.Texts` provides it)."""

    @property
    def reset_tools_description(self) -> str: ...
    @property
    def tool_groups_none(self) -> str: ...
    @property
    def tool_groups_active(self) -> str: ...  # {names}
    @property
    def tool_groups_separator(self) -> str: ...
    @property
    def tool_groups_instructions(self) -> str: ...  # {groups}
    @property
    def tool_group_instructions(self) -> str: ...  # {name} {instructions}
    @property
    def tool_group_inactive(self) -> str: ...  # {tool} {group} {meta_tool}
    @property
    def tool_groups_invalid(self) -> str: ...  # {names} {available}
    @property
    def skill_tool(self) -> ToolSchema: ...
    @property
    def skill_not_found(self) -> str: ...  # {skill}
    @property
    def skill_instruction(self) -> str: ...  # {viewer} {skills}
    @property
    def skill_entry(self) -> str: ...  # {name} {description} {dir}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolkitAnswer:
    """A toolkit tool's result text, whether it is an error, and the active groups after it
    (None: unchanged)."""

    text: str
    error: bool = False
    active: tuple[str, ...] | None = None


def without_titles(tool: ToolSchema) -> ToolSchema:
    """The tool as AgentScope's toolkit sends and counts it: every `title` keyword of its
    parameters dropped, at the top and in every schema under `properties`, `items`,
    `additionalProperties` and `$defs` (deeper ones too), no other key touched (a property named
    `title` stays); the same object when it has none.

    >>> t = ToolSchema.of("f", "F.", {"title": "A", "properties": {"title": {"title": "T"}}})
    >>> without_titles(t).parameters
    '{"properties": {"title": {}}}'
    """
    parameters = json.loads(tool.parameters)
    if not isinstance(parameters, dict) or not _drop_titles(parameters):
        return tool
    return ToolSchema.of(tool.name, tool.description, parameters)


_NESTED = ("items", "additionalProperties")
_MAPS = ("properties", "$defs")


def _drop_titles(schema: dict[str, object]) -> bool:
    """Drop `schema`'s titles in place (see `without_titles`); whether there was one."""
    found = "title" in schema
    schema.pop("title", None)
    children = [schema[key] for key in _NESTED if key in schema]
    for key in _MAPS:
        mapping = schema.get(key)
        children += list(mapping.values()) if isinstance(mapping, dict) else []
    for child in children:
        if isinstance(child, dict):
            found = _drop_titles(child) or found
    return found


def reset_tools_schema(groups: tuple[ToolGroup, ...], description: str) -> ToolSchema:
    """The activation tool's schema: one boolean per group, defaulting to false, described by the
    group's description (the pydantic model AgentScope builds, titles dropped as its toolkit does).

    >>> g = ToolGroup(name="web", description="Web.")
    >>> reset_tools_schema((g,), "Reset.").parameters
    '{"properties": {"web": {"default": false, "description": "Web.", "type": "boolean"}}, "type": "object"}'
    """
    properties = {g.name: {"default": False, "description": g.description, "type": "boolean"} for g in groups}
    return ToolSchema.of(RESET_TOOLS, description, {"properties": properties, "type": "object"})


def offered_tools(
    basic: tuple[ToolSchema, ...],
    groups: tuple[ToolGroup, ...],
    skills: tuple[Skill, ...],
    active: tuple[str, ...],
    texts: ToolkitTexts,
) -> tuple[ToolSchema, ...]:
    """The schemas sent while the groups `active` are active."""
    head: tuple[ToolSchema, ...] = (texts.skill_tool,) if skills else ()
    if groups:
        head += (reset_tools_schema(groups, texts.reset_tools_description),)
    return (*head, *basic, *(tool for g in groups if g.name in active for tool in g.tools))


def activation_text(activated: tuple[ToolGroup, ...], texts: ToolkitTexts) -> str:
    """The activation tool's answer for the groups now active (in declared order)."""
    if not activated:
        return texts.tool_groups_none
    text = fill(texts.tool_groups_active, names=texts.tool_groups_separator.join(g.name for g in activated))
    if any(g.instructions is not None for g in activated):
        entries = "".join(
            fill(texts.tool_group_instructions, name=g.name, instructions=g.instructions)
            for g in activated
            if g.instructions
        )
        text += fill(texts.tool_groups_instructions, groups=entries)
    return text


def reset_tools(groups: tuple[ToolGroup, ...], raw_input: str, texts: ToolkitTexts) -> ToolkitAnswer:
    """Run the activation tool on a call's JSON input.

    >>> from ctxlab.texts import CTXLAB_TEXTS as t
    >>> web = ToolGroup(name="web", description="d")
    >>> reset_tools((web,), '{"web": true}', t).active, reset_tools((web,), '{"x": true}', t).error
    (('web',), True)
    """
    arguments = _arguments(raw_input)
    names = [g.name for g in groups]
    unknown = [key for key in arguments if key not in names]
    if unknown:
        text = fill(texts.tool_groups_invalid, names=", ".join(unknown), available=", ".join(names))
        return ToolkitAnswer(text=text, error=True)
    active = tuple(key for key, value in arguments.items() if value is True)
    activated = tuple(g for g in groups if g.name in active)
    return ToolkitAnswer(text=activation_text(activated, texts), active=active)


def inactive_refusal(
    groups: tuple[ToolGroup, ...], tool: str, active: tuple[str, ...], texts: ToolkitTexts
) -> str | None:
    """The inactive-group error for a call of `tool`, or None when the tool may run."""
    group = group_of(groups, tool)
    if group is None or group.name in active:
        return None
    return fill(texts.tool_group_inactive, tool=tool, group=group.name, meta_tool=RESET_TOOLS)


def view_skill(skills: tuple[Skill, ...], raw_input: str, texts: ToolkitTexts) -> ToolkitAnswer:
    """The viewer's answer: the skill's markdown, or the not-found error."""
    wanted = _arguments(raw_input).get("skill", "")
    for skill in skills:
        if skill.name == wanted:
            return ToolkitAnswer(text=skill.markdown)
    return ToolkitAnswer(text=fill(texts.skill_not_found, skill=wanted), error=True)


def skill_instructions(skills: tuple[Skill, ...], texts: ToolkitTexts) -> str:
    """The skill listing the system prompt carries."""
    entries = "".join(
        fill(texts.skill_entry, name=s.name, description=s.description, dir=s.dir) for s in skills
    )
    return fill(texts.skill_instruction, viewer=texts.skill_tool.name, skills=entries)


def with_skills(system_prompt: str, skills: tuple[Skill, ...], texts: ToolkitTexts) -> str:
    """The system prompt with the skill listing joined on a new line (unchanged without skills)."""
    if not skills:
        return system_prompt
    return f"{system_prompt}\n{skill_instructions(skills, texts)}"


def _arguments(raw_input: str) -> Mapping[str, object]:
    try:
        value = json.loads(raw_input)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
