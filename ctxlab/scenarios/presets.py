"""The `strategies:` entries of a scenario: the settings every strategy has, and each preset's own.

A preset is a pydantic model (its parameters, with the source's defaults) and a `build` function
from a validated entry and the text set to an engine `Strategy`. The registry
(`ctxlab.scenarios.registry`) lists them; the scenario schema is generated from that list.

Invariants:
- Every entry forbids unknown keys; `preset` selects the model; `name` (default: the preset)
  names the strategy in sweep paths, run ids and results, so it is a plain word.
- Cross-field rules AgentScope checks only when an agent is built are checked here, at load
  time (ctxlab is earlier and stricter): `reserve_ratio < trigger_ratio` (in `ContextConfig`),
  the buffer below the trigger (`check_agent_configs`), and a summary template that renders
  the summary schema's fields.
- `warnings(entry)` lists legal but suspicious settings with the field path they sit at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxlab.scenarios.config import (
    SUMMARY_FIELDS,
    ContextConfig,
    InjectionConfig,
    ReActConfig,
    TextsName,
    check_agent_configs,
    effective_buffer_ratio,
    injection_params,
    time_format_has_date,
)
from ctxlab.strategies.agentscope import AgentScopeParams, AgentScopeStrategy
from ctxlab.strategies.none import NoStrategy
from ctxlab.texts import CTXLAB_TEXTS, Texts
from ctxlab.workloads.format import check_timezone
from ctxlab.workloads.problems import Loc, located_error

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
"""Strategy and scenario names: a word that is safe in a path, a run id and a sweep path."""

WorkspaceKind = Literal["memory", "directory", "none"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryWarning:
    """A legal but suspicious setting, at its path inside the entry."""

    loc: Loc
    message: str


class StrategyEntry(BaseModel):
    """What every strategy entry has, whatever its preset."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(
        default="",
        pattern=r"^$|" + NAME_PATTERN,
        description="The strategy's name in sweep paths (`strategies.<name>.…`), run ids and results. "
        "Default: the preset's name.",
    )
    preset: str = Field(description="Which preset (see `ctxlab presets`).")
    texts: TextsName = Field(
        default="ctxlab",
        description="Prompt and hint texts: `ctxlab` (the lab's own) or `agentscope` (AgentScope's exact "
        "strings, read from the installed package).",
    )
    workspace: WorkspaceKind = Field(
        default="memory",
        description="Where offloads go: `memory`, `directory` (files in a temporary folder per run) or "
        "`none` (truncate without saving).",
    )
    react: ReActConfig = Field(default_factory=ReActConfig, description="Loop limits.")
    summary_breaker: int = Field(
        default=0,
        ge=0,
        description="Summary circuit breaker: after this many summaries in a row fail, stop calling the "
        "summarizer and use the strategy's fallback for the rest of the run; a success resets the count. "
        "0: no breaker (AgentScope has none); nonoka and Claude Code use 3.",
    )

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("name") and isinstance(data.get("preset"), str):
            return {**data, "name": data["preset"]}
        return data

    def warnings(self) -> tuple[EntryWarning, ...]:
        """Legal but suspicious settings of this entry."""
        return ()


class AgentScopeEntry(StrategyEntry):
    """AgentScope 2.0.11's context engineering (`ctxlab.strategies.agentscope`)."""

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

    def warnings(self) -> tuple[EntryWarning, ...]:
        """A time format without a date while injection is on (AgentScope then re-injects the
        time at every step)."""
        out: list[EntryWarning] = []
        if self.injection.inject_runtime_state and not time_format_has_date(self.injection.time_format):
            out.append(
                EntryWarning(
                    loc=("injection", "time_format"),
                    message=f"{self.injection.time_format!r} has no full date: the injected time parses "
                    "back to 1900-01-01, so AgentScope re-injects it at every step; add %Y-%m-%d",
                )
            )
        return tuple(out)


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


def build_agentscope(entry: AgentScopeEntry, texts: Texts) -> AgentScopeStrategy:
    """The `agentscope` strategy of an entry (the deprecated injection buffer resolved here)."""
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
    return AgentScopeStrategy(texts=texts, params=params, name=entry.name)


class NoneEntry(StrategyEntry):
    """No context management: the baseline."""

    preset: Literal["none"]


def build_none(entry: NoneEntry, texts: Texts) -> NoStrategy:
    """The `none` strategy of an entry."""
    return NoStrategy(name=entry.name)
