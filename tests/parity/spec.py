"""What a parity run is configured with, as plain values (no agentscope import).

Invariants:
- `context` and `injection` are ctxlab's own config models, whose field names and defaults are
  AgentScope 2.0.11's; a text field left as None takes AgentScope's default text (the parity
  driver always runs with `texts: agentscope`).
- `fail_on` counts summarizer invocations from 1, over the whole run; a failing invocation fails
  every structured-output attempt AgentScope makes inside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from ctxlab.presets.agentscope.config import ContextConfig, InjectionConfig
from ctxlab.texts import SUMMARY_FIELDS

FailMode = Literal["no_tool_call", "raise"]
"""How a failing summarizer invocation fails.

`no_tool_call`: every attempt answers in text without the structured-output tool call, a
StructuredOutputError, so AgentScope's strategy ladder (forced, auto, none) makes 3 API calls.
`raise`: the first attempt raises a plain exception, which ends the invocation after 1 API call.
"""

WorkspaceKind = Literal["memory", "none"]
"""`memory`: an offloader that records what it is given; `none`: no offloader (truncate only)."""

DEFAULT_SUMMARY_FIELDS: Mapping[str, str] = MappingProxyType(
    {name: f"The {name.replace('_', ' ')}." for name in SUMMARY_FIELDS}
)
"""A fixed summary with a short English text in each of the five fields."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ParityConfig:
    """One configuration of the real agent, a fixed summarizer, and the workspace."""

    context_size: int
    context: ContextConfig = field(default_factory=ContextConfig)
    injection: InjectionConfig = field(default_factory=InjectionConfig)
    max_iters: int = 50
    summary_fields: Mapping[str, str] = field(default_factory=lambda: DEFAULT_SUMMARY_FIELDS)
    fail_on: frozenset[int] = frozenset()
    fail_mode: FailMode = "no_tool_call"
    workspace: WorkspaceKind = "none"
    task_tools: bool = False
    record: bool = True
    """Record every request for comparison. Off, the scripted model does what any model must,
    and no more: format the request (as a provider's client does) and answer it, noting only the
    call's kind. `make bench` times the real loop so, not the parity harness's recording."""
