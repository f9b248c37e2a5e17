"""What a workload's toolkit offers beyond its basic tools: tool groups and skills.

A tool group is a named set of tool schemas the agent activates on demand; a skill is an
instruction text the agent reads through a viewer tool before it follows it. Both are plain
values here; how a framework offers them (which schemas are sent when, what the activation tool
answers) is `ctxlab.core.agentscope.toolkit`.

Invariants:
- Group names are unique, none is `basic` (the group that is always active), and a tool belongs
  to at most one group; a group's tools are not among the script's basic tools.
- `instructions` None and `""` differ: a group with `""` still opens the activation result's
  instruction section, one with None does not (as in AgentScope).
- Skill names are unique; every skill belongs to the basic group, so the viewer is always offered
  when there is a skill.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlab.core.messages.tools import ToolSchema

BASIC_GROUP = "basic"
SKILL_VIEWER = "Skill"
"""The skill viewer's name (AgentScope's `SkillViewer.name`), in every text set."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolGroup:
    """A group of tools activated together: its name, what it is for, what the agent is told
    when it activates it, and its tools' schemas."""

    name: str
    description: str
    instructions: str | None = None
    tools: tuple[ToolSchema, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """A skill: its name and description (listed in the system prompt), the folder it names, and
    the markdown the viewer returns."""

    name: str
    description: str
    markdown: str
    dir: str = ""


def group_of(groups: tuple[ToolGroup, ...], tool: str) -> ToolGroup | None:
    """The group holding `tool`, or None for a basic or unknown tool.

    >>> g = ToolGroup(name="web", description="d", tools=(ToolSchema(name="search", description=""),))
    >>> group_of((g,), "search").name, group_of((g,), "other")
    ('web', None)
    """
    for group in groups:
        if any(schema.name == tool for schema in group.tools):
            return group
    return None
