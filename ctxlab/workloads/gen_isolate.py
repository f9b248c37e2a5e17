"""Generators of the Isolate layer and of tool selection: many tools of which few are needed,
and research whose searches are delegated to sub-agents.

Invariants (see `ctxlab.workloads.generators` for the registry):
- Each generator is a pure function of its validated parameters and a seed, and every item
  draws from the generator derived from the seed and the item's path (`build.py`).
- The two variants of each generator (`grouped` true or false, `delegate` true or false) make
  the same tool calls with the same results; only where the schemas live (groups or the basic
  tools) or where the searches run (a sub-agent or the agent itself) differs.
"""

from __future__ import annotations

from pydantic import Field

from ctxlab.core.agentscope.toolkit import RESET_TOOLS
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.core.world.toolkit import ToolGroup
from ctxlab.workloads.build import (
    GeneratorParams,
    call,
    call_path,
    final_text,
    schemas,
    sized_result,
    sized_text,
    tool_input,
    user_parts,
)
from ctxlab.workloads.filler import item_rng
from ctxlab.workloads.limits import Bytes, Count

GROUP_NAMES = ("browser", "database", "files", "mail", "calendar", "vision")


class ManyToolsParams(GeneratorParams):
    """Many tools, few needed: `tools` tools in `groups` groups; each turn needs one group."""

    grouped: bool = Field(default=True, description="Groups activated on demand; false: every schema sent.")
    tools: Count = Field(default=40, ge=1)
    groups: int = Field(default=6, ge=1, le=len(GROUP_NAMES))
    description_bytes: Bytes = Field(default=240, ge=0, description="Each tool's description.")
    instructions_bytes: Bytes = Field(default=200, ge=0, description="Each group's instructions.")
    turns: Count = Field(default=4, ge=1, description="Each turn uses the next group's tools.")
    rounds: Count = Field(default=3, ge=1, description="Calls of the turn's group per turn.")
    result_bytes: Bytes = Field(default=1200, ge=0)
    system_prompt_bytes: Bytes = Field(default=400, ge=0)
    user_bytes: Bytes = Field(default=200, ge=0)
    final_bytes: Bytes = Field(default=200, ge=0)


def _tool(seed: int, group: str, k: int, nbytes: int) -> ToolSchema:
    parameters = {
        "type": "object",
        "properties": {
            "target": {"type": "string", "description": "What the tool acts on."},
            "options": {"type": "object", "description": "Optional settings."},
        },
        "required": ["target"],
    }
    return ToolSchema.of(f"{group}_{k}", sized_text(seed, f"tools.{group}_{k}", nbytes), parameters)


def tool_groups(p: ManyToolsParams, seed: int) -> tuple[ToolGroup, ...]:
    """The groups, the tools dealt out in turn so that group sizes differ by at most one."""
    names = GROUP_NAMES[: p.groups]
    members: dict[str, list[ToolSchema]] = {name: [] for name in names}
    for n in range(p.tools):
        group = names[n % p.groups]
        members[group].append(_tool(seed, group, len(members[group]), p.description_bytes))
    return tuple(
        ToolGroup(
            name=name,
            description=f"Tools for {name} work.",
            instructions=sized_text(seed, f"tool_groups.{name}.instructions", p.instructions_bytes),
            tools=tuple(members[name]),
        )
        for name in names
        if members[name]
    )


def many_tools(p: ManyToolsParams, seed: int) -> Script:
    """Turns that each need one group's tools; grouped, the turn first activates that group alone."""
    groups = tool_groups(p, seed)
    turns = []
    for t in range(p.turns):
        group = groups[t % len(groups)]
        rounds = []
        if p.grouped:
            activate = {group.name: True}
            rounds.append(ScriptedRound(calls=(call(RESET_TOOLS, activate, None),)))
        offset = len(rounds)
        for r in range(p.rounds):
            tool = group.tools[r % len(group.tools)]
            path = call_path(t, r + offset)
            rounds.append(
                ScriptedRound(
                    calls=(
                        call(
                            tool.name,
                            {"target": f"item {r}"},
                            sized_result(seed, f"{path}.result", p.result_bytes),
                        ),
                    )
                )
            )
        turns.append(
            ScriptedTurn(
                user=user_parts(seed, t, p.user_bytes),
                rounds=tuple(rounds),
                final=final_text(seed, t, p.final_bytes),
            )
        )
    system_prompt = sized_text(seed, "system_prompt", p.system_prompt_bytes)
    if p.grouped:
        return Script(system_prompt=system_prompt, turns=tuple(turns), tool_groups=groups)
    return Script(
        system_prompt=system_prompt, tools=tuple(t for g in groups for t in g.tools), turns=tuple(turns)
    )


DELEGATE_TOOL = ToolSchema.of(
    "task",
    "Hand a self-contained sub-task to a sub-agent with a fresh context; it returns only its final answer.",
    {
        "type": "object",
        "properties": {"description": {"type": "string", "description": "The sub-task, fully specified."}},
        "required": ["description"],
    },
)


class DelegatedResearchParams(GeneratorParams):
    """Research questions, each answered by rounds of searches and page fetches, run by the agent
    itself or delegated to one sub-agent per question."""

    delegate: bool = Field(default=True, description="Each question's searches run in a sub-agent.")
    questions: Count = Field(default=3, ge=1, description="Turns: one research question each.")
    rounds: Count = Field(default=3, ge=1, description="Search rounds per question.")
    fan_out: int = Field(default=2, ge=1, le=12, description="Calls per search round.")
    result_bytes: Bytes = Field(default=8000, ge=0)
    finding_bytes: Bytes = Field(
        default=600, ge=0, description="A question's answer (the sub-agent's final)."
    )
    system_prompt_bytes: Bytes = Field(default=400, ge=0)
    user_bytes: Bytes = Field(default=200, ge=0)
    final_bytes: Bytes = Field(default=300, ge=0)


def _search_rounds(p: DelegatedResearchParams, seed: int, t: int) -> tuple[ScriptedRound, ...]:
    tools = ("web_search", "fetch_page")
    return tuple(
        ScriptedRound(
            calls=tuple(
                call(
                    tool := tools[c % len(tools)],
                    tool_input(tool, item_rng(seed, f"{call_path(t, r, c)}.input")),
                    sized_result(seed, f"{call_path(t, r, c)}.result", p.result_bytes),
                )
                for c in range(p.fan_out)
            )
        )
        for r in range(p.rounds)
    )


def delegated_research(p: DelegatedResearchParams, seed: int) -> Script:
    """Per question, the same searches: inline, or in a sub-agent whose answer is its finding."""
    tools = schemas("web_search", "fetch_page")
    turns = []
    for t in range(p.questions):
        searches = _search_rounds(p, seed, t)
        finding = sized_text(seed, f"turns[{t}].finding", p.finding_bytes)
        if p.delegate:
            sub = Script(
                system_prompt=sized_text(seed, f"turns[{t}].subagent.system_prompt", p.system_prompt_bytes),
                tools=tools,
                turns=(ScriptedTurn(user=user_parts(seed, t, p.user_bytes), rounds=searches, final=finding),),
            )
            task = ScriptedCall(
                tool=DELEGATE_TOOL.name, input=f'{{"description": "question {t}"}}', delegate=sub
            )
            rounds: tuple[ScriptedRound, ...] = (ScriptedRound(calls=(task,)),)
            final = finding + final_text(seed, t, p.final_bytes)
        else:
            rounds, final = searches, finding + final_text(seed, t, p.final_bytes)
        turns.append(ScriptedTurn(user=user_parts(seed, t, p.user_bytes), rounds=rounds, final=final))
    system_prompt = sized_text(seed, "system_prompt", p.system_prompt_bytes)
    return Script(
        system_prompt=system_prompt,
        tools=(*tools, DELEGATE_TOOL) if p.delegate else tools,
        turns=tuple(turns),
    )
