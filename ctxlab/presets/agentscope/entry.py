"""The `agentscope` entry of a scenario: AgentScope's `ContextConfig` and `InjectionConfig`, as named there.

Invariants:
- The entry forbids unknown keys at every level; its defaults are AgentScope 2.0.11's.
- Cross-field rules AgentScope checks only when an agent is built are checked here, at load
  time (ctxlab is earlier and stricter): `reserve_ratio < trigger_ratio` (in `ContextConfig`),
  the buffer below the trigger (`check_agent_configs`), and a summary template that renders
  the summary schema's fields.
- `warnings(entry)` lists legal but suspicious settings with the field path they sit at.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field, model_validator

from ctxlab.presets.agentscope.config import (
    ContextConfig,
    InjectionConfig,
    check_agent_configs,
    effective_buffer_ratio,
    injection_params,
    time_format_problem,
)
from ctxlab.presets.agentscope.strategy import AgentScopeParams
from ctxlab.presets.entries import StrategyEntry
from ctxlab.problems import Loc, Problem, located_error
from ctxlab.texts import CTXLAB_TEXTS, SUMMARY_FIELDS
from ctxlab.workloads.format import check_timezone


class AgentScopeEntry(StrategyEntry):
    """AgentScope 2.0.11's context engineering (`ctxlab.presets.agentscope.strategy`)."""

    preset: Literal["agentscope"]
    task_tools: bool = Field(
        default=False,
        description="Give the agent the four task tools (TaskCreate, TaskGet, TaskList, TaskUpdate).",
    )
    context: ContextConfig = Field(default_factory=ContextConfig, description="When and how to compress.")
    injection: InjectionConfig = Field(
        default_factory=InjectionConfig, description="Runtime-state hints; time format and zone."
    )

    @model_validator(mode="after")
    def _agent_rules(self) -> AgentScopeEntry:
        problems: list[tuple[Loc, str, object]] = []
        try:
            check_agent_configs(self.context, self.injection)
        except ValueError as broken:
            problems.append(
                (("context", "context_buffer_ratio"), str(broken), self.context.context_buffer_ratio)
            )
        zone = timezone_problem(self.injection.timezone)
        if zone:
            problems.append((("injection", "timezone"), zone, self.injection.timezone))
        template_problem = summary_template_problem(self.context)
        if template_problem:
            problems.append(
                (("context", "summary_template"), template_problem, self.context.summary_template)
            )
        if problems:
            raise located_error("AgentScopeEntry", problems)
        return self

    def warnings(self) -> tuple[Problem, ...]:
        """A time format whose time does not read back as written while injection is on
        (AgentScope then re-injects the time at every step: `time_format_problem`)."""
        injection = self.injection
        problem = injection.inject_runtime_state and time_format_problem(
            injection.time_format, injection.timezone
        )
        if not problem:
            return ()
        return (Problem(loc=("injection", "time_format"), message=f"{injection.time_format!r} {problem}"),)


def timezone_problem(name: str) -> str | None:
    """Why `name` is not a known IANA zone, or None."""
    try:
        check_timezone(name)
    except ValueError as unknown:
        return str(unknown)
    return None


def summary_template_problem(context: ContextConfig) -> str | None:
    """Why the summary template cannot render the summary schema's fields, or None when it can.

    AgentScope finds out only at the first compression; ctxlab checks at load. When neither the
    template nor the schema is set, the text set's own pair is used and is known to fit.
    """
    if context.summary_template is None and context.summary_schema is None:
        return None
    template = context.summary_template or CTXLAB_TEXTS.summary_template
    properties = (context.summary_schema or {}).get("properties") or dict.fromkeys(SUMMARY_FIELDS)
    try:
        template.format(**dict.fromkeys(properties, ""))
    except KeyError as missing:
        return (
            f"the summary template uses {{{missing.args[0]}}}, which the summary schema does not define "
            f"(fields: {', '.join(properties)}); use only those fields, and double literal braces"
        )
    except (ValueError, IndexError) as bad:
        return f"the summary template is not a valid str.format template ({bad}); double literal braces"
    return None


def agentscope_params(entry: AgentScopeEntry) -> AgentScopeParams:
    """The parameters of an entry (the deprecated injection buffer resolved here)."""
    context = entry.context
    schema = (
        None if context.summary_schema is None else json.dumps(context.summary_schema, ensure_ascii=False)
    )
    params = AgentScopeParams(
        trigger_ratio=context.trigger_ratio,
        reserve_ratio=context.reserve_ratio,
        context_buffer_ratio=effective_buffer_ratio(context, entry.injection),
        tool_result_limit=context.tool_result_limit,
        max_image_num=context.max_image_num,
        compression_fallback_to_truncation=context.compression_fallback_to_truncation,
        compression_tool_enabled=context.compression_tool_enabled,
        compression_prompt=context.compression_prompt,
        summary_template=context.summary_template,
        summary_schema=schema,
        injection=injection_params(entry.injection),
        task_tools=entry.task_tools,
    )
    return params
