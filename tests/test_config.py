"""Config models: AgentScope 2.0.11's defaults and limits, and ctxlab's earlier checks."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ctxlab.presets.agentscope.config import (
    ContextConfig,
    InjectionConfig,
    SummarySchema,
    check_agent_configs,
    time_format_problem,
)

NON_TEXT = (
    "trigger_ratio",
    "reserve_ratio",
    "context_buffer_ratio",
    "tool_result_limit",
    "compression_fallback_to_truncation",
    "compression_tool_enabled",
    "max_image_num",
)


def test_context_defaults_equal_agentscope() -> None:
    from agentscope import agent

    ours, theirs = ContextConfig(), agent.ContextConfig()
    for name in NON_TEXT:
        assert getattr(ours, name) == getattr(theirs, name), name


def test_injection_defaults_equal_agentscope() -> None:
    from agentscope import agent

    ours, theirs = InjectionConfig(), agent.InjectionConfig()
    for name in (
        "inject_runtime_state",
        "timezone",
        "time_format",
        "time_interval",
        "context_buffer_ratio",
        "tool_retries_limit",
        "injection_source",
        "task_tool_names",
        "extra_fields",
    ):
        assert getattr(ours, name) == getattr(theirs, name), name


def test_summary_fields_equal_agentscope() -> None:
    from agentscope.agent import _config as config

    assert list(SummarySchema.model_fields) == list(config.SummarySchema.model_fields)


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"trigger_ratio": 1.0}, "less than or equal to 0.9"),
        ({"trigger_ratio": 0}, "greater than 0"),
        ({"reserve_ratio": 0.9, "trigger_ratio": 0.9}, "less than 0.9"),
        ({"reserve_ratio": 0.5, "trigger_ratio": 0.5}, "must be below trigger_ratio"),
        ({"max_image_num": -1}, "greater than or equal to 0"),
        ({"context_buffer_ratio": 1.5}, "less than or equal to 1"),
        ({"triger_ratio": 0.5}, "Extra inputs are not permitted"),
    ],
)
def test_context_limits(fields: dict[str, object], needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        ContextConfig.model_validate(fields)


def test_tool_result_limit_is_at_least_zero_where_agentscope_has_no_lower_bound() -> None:
    """A declared deviation: AgentScope takes a negative limit (every result offloaded, as with 0,
    and an IndexError on an empty result); ctxlab refuses it and says why."""
    assert ContextConfig(tool_result_limit=0).tool_result_limit == 0
    with pytest.raises(ValidationError, match="tool_result_limit -5 is negative: AgentScope takes it"):
        ContextConfig(tool_result_limit=-5)


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"tool_retries_limit": 2}, "greater than or equal to 3"),
        ({"time_interval": -1}, "greater than or equal to 0"),
        ({"template": "no placeholder"}, "runtime_state"),
    ],
)
def test_injection_limits(fields: dict[str, object], needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        InjectionConfig.model_validate(fields)


def test_buffer_below_trigger_only_when_injection_or_tool_is_on() -> None:
    wide = ContextConfig(trigger_ratio=0.3, reserve_ratio=0.1, context_buffer_ratio=0.5)
    with pytest.raises(ValueError, match=r"context_buffer_ratio 0\.5 must be below"):
        check_agent_configs(wide, InjectionConfig())
    check_agent_configs(wide, InjectionConfig(inject_runtime_state=False))
    with pytest.raises(ValueError, match="must be below"):
        check_agent_configs(
            wide.model_copy(update={"compression_tool_enabled": True}),
            InjectionConfig(inject_runtime_state=False),
        )


def test_deprecated_injection_buffer_overrides() -> None:
    context = ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1, context_buffer_ratio=0.1)
    with pytest.raises(ValueError, match=r"0\.6 must be below"):
        check_agent_configs(context, InjectionConfig(context_buffer_ratio=0.6))


def test_time_format_needs_a_date() -> None:
    assert time_format_problem("%Y-%m-%d %H:%M", "UTC") is None
    assert str(time_format_problem("%H:%M:%S", "UTC")).startswith("has no full date")
    assert str(time_format_problem("%m-%d %H:%M", "UTC")).startswith("has no full date")  # 1900


def test_a_zone_name_other_than_utc_does_not_parse_back_whatever_the_host_s_zone() -> None:
    """`%Z` writes a zone's abbreviation; `strptime` reads UTC, GMT and the host's own names, so
    AgentScope's reading depends on the machine; the lab reads as on a host whose zone is UTC."""
    assert time_format_problem("%Y-%m-%d %H:%M %Z", "UTC") is None
    assert time_format_problem("%Y-%m-%d %H:%M %z", "America/New_York") is None
    problem = str(time_format_problem("%Y-%m-%d %H:%M %Z", "America/New_York"))
    assert problem.startswith("does not parse back (%Z writes EST for America/New_York")
    assert "has no full date" not in problem
    # GMT in winter, BST in summer: the time is read back half the year, and the warning says which
    london = str(time_format_problem("%Y-%m-%d %H:%M %Z", "Europe/London"))
    assert london.startswith("does not parse back in July (%Z writes BST for Europe/London")
