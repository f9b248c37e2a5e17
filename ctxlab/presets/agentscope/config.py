"""Configuration models of the AgentScope-style strategy, with AgentScope 2.0.11's defaults.

Field names, defaults and per-field limits follow `agentscope.agent.ContextConfig` and
`InjectionConfig` (2.0.11). Where ctxlab is stricter or earlier, the docstring says so:

- `reserve_ratio < trigger_ratio` is checked when the config is loaded. AgentScope checks it only
  when the agent is constructed.
- `tool_result_limit >= 0`. AgentScope takes a negative limit, which offloads every result as 0
  does and raises an IndexError on a result with no output.
- `context_buffer_ratio < trigger_ratio` (when injection or the compression tool is on) is checked
  by `check_agent_configs` at load time. AgentScope checks it in the agent's constructor.
- Text fields left as `None` take the strategy's texts (`texts: ctxlab` or `texts: agentscope`),
  so the lab never embeds another project's prompts.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from ctxlab.core.agentscope.inject import InjectionParams, read_time, resolve_timezone
from ctxlab.inputs import InputModel
from ctxlab.texts import SUMMARY_FIELD_DESCRIPTIONS

RUNTIME_STATE_PLACEHOLDER = "{runtime_state}"
DEFAULT_TASK_TOOL_NAMES = ("TaskCreate", "TaskGet", "TaskList", "TaskUpdate")
DEFAULT_INJECTION_SOURCE = '{"label": "System", "sublabel": "Runtime State"}'


class SummarySchema(InputModel):
    """The five fields of a structured summary: a hand-over note for the agent's future self."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    task_overview: str = Field(description=SUMMARY_FIELD_DESCRIPTIONS["task_overview"])
    current_state: str = Field(description=SUMMARY_FIELD_DESCRIPTIONS["current_state"])
    important_discoveries: str = Field(description=SUMMARY_FIELD_DESCRIPTIONS["important_discoveries"])
    next_steps: str = Field(description=SUMMARY_FIELD_DESCRIPTIONS["next_steps"])
    context_to_preserve: str = Field(description=SUMMARY_FIELD_DESCRIPTIONS["context_to_preserve"])


class ContextConfig(InputModel):
    """When and how the context is compressed; AgentScope 2.0.11's fields and defaults.

    Stricter than AgentScope: `reserve_ratio < trigger_ratio` is checked here, at load time,
    instead of when an agent is built, and `tool_result_limit` is at least 0 (AgentScope has no
    lower limit).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    trigger_ratio: float = Field(
        default=0.8,
        gt=0,
        le=0.9,
        description="Compress when the request's tokens reach this share of the window. At most "
        "0.9: the compression call itself needs room.",
    )
    reserve_ratio: float = Field(
        default=0.1,
        gt=0,
        lt=0.9,
        description="Share of the window kept verbatim after a compression (system prompt, old "
        "summary and tool schemas use it up first).",
    )
    context_buffer_ratio: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="Width of the 'compression is near' zone below the trigger; also lowers the "
        "trigger of the CompressContext tool.",
    )
    compression_prompt: str | None = Field(
        default=None,
        description="Instruction appended to the summary request; '{current_time}' is replaced. "
        "None: the strategy's texts.",
    )
    summary_template: str | None = Field(
        default=None,
        description="str.format template rendering the summary fields. None: the strategy's texts.",
    )
    summary_schema: dict[str, Any] | None = Field(
        default=None,
        description="JSON schema of the structured summary. None: the strategy's texts.",
    )
    tool_result_limit: int = Field(
        default=50000,
        description="Per-result token cap applied when a tool returns; 0 offloads every result but "
        "its reminder. Stricter than AgentScope, which takes a negative limit too: it offloads "
        "every result as 0 does and fails on a result with no output, so ctxlab refuses it.",
    )
    compression_fallback_to_truncation: bool = Field(
        default=True,
        description="On summary failure, drop the compressible region anyway (true) or raise and "
        "keep the context (false).",
    )
    compression_tool_enabled: bool = Field(
        default=False, description="Give the agent the CompressContext tool."
    )
    max_image_num: int = Field(default=5, ge=0, description="Keep only the newest N images in the context.")

    @field_validator("tool_result_limit")
    @classmethod
    def _limit_not_negative(cls, value: int) -> int:
        """A limit is at least 0: a negative one only repeats 0 and breaks on an empty result."""
        if value < 0:
            raise ValueError(
                f"tool_result_limit {value} is negative: AgentScope takes it, offloads every result "
                "as a limit of 0 does, and fails on a result with no output; use 0 to offload "
                "every result, or a positive token count"
            )
        return value

    @model_validator(mode="after")
    def _reserve_below_trigger(self) -> ContextConfig:
        if self.reserve_ratio >= self.trigger_ratio:
            raise ValueError(
                f"reserve_ratio {self.reserve_ratio} must be below trigger_ratio "
                f"{self.trigger_ratio} (what is kept after a compression must fit under the "
                "trigger); lower reserve_ratio or raise trigger_ratio"
            )
        return self


class InjectionConfig(InputModel):
    """Runtime-state hints (time, tasks, context usage, repeated tool errors).

    AgentScope 2.0.11's fields and defaults. Text fields left as None take the strategy's texts.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    inject_runtime_state: bool = Field(default=True, description="Master switch.")
    timezone: str = Field(default="UTC", description="IANA zone of the injected time.")
    time_format: str = Field(
        default="%Y-%m-%dT%H:%M:%S",
        description="strftime format used to write and to parse back the injected time. It must "
        "carry a full date, or the time is re-injected every step.",
    )
    time_interval: float = Field(
        default=0.5, ge=0, description="Hours that must pass before the time is injected again."
    )
    context_buffer_ratio: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Deprecated: overrides context.context_buffer_ratio when set.",
    )
    tool_retries_limit: int = Field(
        default=3, ge=3, description="Identical failures in a row before the tool-error hint."
    )
    tool_retries_hint: str | None = Field(
        default=None,
        description="Tool-error hint; '{tool_name}' and '{count}' are replaced. None: the strategy's texts.",
    )
    template: str | None = Field(
        default=None,
        description="Wrapper of the injected fields; must contain '{runtime_state}'. None: the "
        "strategy's texts.",
    )
    injection_source: str = Field(
        default=DEFAULT_INJECTION_SOURCE,
        description="Source tag of injected hints; identifies earlier injections.",
    )
    task_tool_names: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TASK_TOOL_NAMES),
        description="A call to any of these in context means the agent knows its tasks.",
    )
    extra_fields: dict[str, str] = Field(
        default_factory=dict, description="Extra <key>value</key> lines; never trigger a hint."
    )

    @field_validator("template")
    @classmethod
    def _template_has_placeholder(cls, value: str | None) -> str | None:
        if value is not None and RUNTIME_STATE_PLACEHOLDER not in value:
            raise ValueError(
                f"template {value!r} lacks the '{RUNTIME_STATE_PLACEHOLDER}' placeholder, so "
                "every injected field would be dropped; add '{runtime_state}' where the fields go"
            )
        return value


def effective_buffer_ratio(context: ContextConfig, injection: InjectionConfig) -> float:
    """The buffer in force: the deprecated injection override wins when set (as in AgentScope)."""
    if injection.context_buffer_ratio is not None:
        return injection.context_buffer_ratio
    return context.context_buffer_ratio


def check_agent_configs(context: ContextConfig, injection: InjectionConfig) -> None:
    """Cross-config rules AgentScope checks when building an agent; ctxlab checks them at load.

    Raises:
        ValueError: the buffer is not below the trigger while injection or the compression tool
            is on.
    """
    buffer = effective_buffer_ratio(context, injection)
    if (injection.inject_runtime_state or context.compression_tool_enabled) and not (
        buffer < context.trigger_ratio
    ):
        raise ValueError(
            f"context_buffer_ratio {buffer} must be below trigger_ratio {context.trigger_ratio} "
            "when runtime-state injection or the compression tool is on; lower the buffer"
        )


def time_format_problem(time_format: str, timezone: str) -> str | None:
    """Why a time written with `time_format` in `timezone` makes AgentScope inject it again at
    every step, or None when it reads back as written.

    A format without year, month and day parses back to 1900-01-01; a time that does not parse
    back at all (a `%Z` that names a zone other than UTC: `read_time`) is never recorded. Both
    a winter and a summer time are tried: a zone may write GMT half the year.

    >>> time_format_problem("%Y-%m-%dT%H:%M:%S", "Asia/Shanghai") is None
    True
    >>> time_format_problem("%H:%M", "UTC")[:17], time_format_problem("%Y-%m-%d %Z", "UTC") is None
    ('has no full date:', True)
    >>> time_format_problem("%Y-%m-%d %H:%M %Z", "Europe/London")[:48]
    'does not parse back in July (%Z writes BST for E'
    >>> time_format_problem("%Y-%m-%d %H:%M %Z", "Asia/Shanghai")[:40]
    'does not parse back (%Z writes CST for A'
    """
    zone = resolve_timezone(timezone)
    probes = [dt.datetime(2031, month, 15, 13, 45, 30, tzinfo=zone) for month in (1, 7)]
    read = [_read_back(probe, time_format) for probe in probes]
    failed = [probe for probe, parsed in zip(probes, read, strict=True) if parsed is None]
    if failed:
        season = "" if len(failed) == len(probes) else f" in {failed[0]:%B}"
        why = (
            f" (%Z writes {failed[0].strftime('%Z')} for {timezone}, and reads UTC and GMT alone, as "
            "on a host whose zone is UTC; write the offset with %z)"
            if "%Z" in time_format.replace("%%", "")
            else ""
        )
        return f"does not parse back{season}{why}: AgentScope injects the time again at every step"
    if any(
        parsed is not None and parsed.date() != probe.date()
        for probe, parsed in zip(probes, read, strict=True)
    ):
        return (
            "has no full date: the injected time parses back to 1900-01-01, so AgentScope "
            "re-injects it at every step; add %Y-%m-%d"
        )
    return None


def _read_back(probe: dt.datetime, time_format: str) -> dt.datetime | None:
    """`probe` written with `time_format` and read back (`read_time`), or None when it does not parse."""
    try:
        return read_time(probe.strftime(time_format), time_format)
    except ValueError:
        return None


def injection_params(config: InjectionConfig) -> InjectionParams:
    """The core values of an `InjectionConfig` (the deprecated buffer is resolved elsewhere)."""
    return InjectionParams(
        inject_runtime_state=config.inject_runtime_state,
        timezone=config.timezone,
        time_format=config.time_format,
        time_interval=config.time_interval,
        tool_retries_limit=config.tool_retries_limit,
        tool_retries_hint=config.tool_retries_hint,
        template=config.template,
        injection_source=config.injection_source,
        task_tool_names=tuple(config.task_tool_names),
        extra_fields=tuple(config.extra_fields.items()),
    )
