"""The `agentscope` preset: AgentScope 2.0.11's context engineering, step for step.

Source: agentscope 2.0.11, `agentscope/agent/_agent.py` and `_config.py` (see
`reference/agentscope-algorithms.md`). Defaults are AgentScope's: trigger 0.8, reserve 0.1,
buffer 0.2, tool_result_limit 50000, max_image_num 5, fallback to truncation on.

Steps, in AgentScope's order: at each tool result, truncation and offload of an oversized result;
before each reasoning call, the image cap, then compression when the request reaches the trigger
(structured summary, protocol-aware split, fallbacks), then runtime-state injection.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from ctxlab.core.blocks import ToolResultBlock
from ctxlab.core.tools import ToolSchema
from ctxlab.engine.compression import CompressionSettings, compress_if_triggered
from ctxlab.engine.content import cap_images, truncate_result
from ctxlab.engine.env import Env
from ctxlab.engine.loop import Frame
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.state import EpisodeState
from ctxlab.texts import Texts


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentScopeParams:
    """AgentScope's `ContextConfig` knobs (text fields None: the strategy's texts)."""

    trigger_ratio: float = 0.8
    reserve_ratio: float = 0.1
    context_buffer_ratio: float = 0.2
    tool_result_limit: int = 50000
    max_image_num: int = 5
    compression_fallback_to_truncation: bool = True
    compression_tool_enabled: bool = False
    compression_prompt: str | None = None
    summary_template: str | None = None
    summary_schema: str | None = None
    time_format: str = "%Y-%m-%dT%H:%M:%S"
    timezone: str = "UTC"


@dataclass(frozen=True, slots=True)
class AgentScopeStrategy:
    """The `agentscope` preset."""

    texts: Texts
    params: AgentScopeParams = field(default_factory=AgentScopeParams)
    name: str = "agentscope"

    def settings(self) -> CompressionSettings:
        """The compression settings, texts filled in."""
        p = self.params
        return CompressionSettings(
            trigger_ratio=p.trigger_ratio,
            reserve_ratio=p.reserve_ratio,
            fallback_to_truncation=p.compression_fallback_to_truncation,
            compression_prompt=p.compression_prompt or self.texts.compression_prompt,
            summary_template=p.summary_template or self.texts.summary_template,
            summary_schema=p.summary_schema or self.texts.summary_schema,
            time_format=p.time_format,
            timezone=p.timezone,
        )

    def tools(self, script_tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The script's tools."""
        return script_tools

    def system_prompt(self, base: str) -> str:
        """The base prompt (no skills or workspace instructions)."""
        return base

    def compress(self, state: EpisodeState, env: Env, frame: Frame, request: CompressRequest) -> EpisodeState:
        """The image cap, then compression when triggered."""
        state = cap_images(state, self.params.max_image_num, env, self.texts)
        settings = self.settings()
        if request.trigger_ratio is not None:
            settings = replace(settings, trigger_ratio=request.trigger_ratio)
        return compress_if_triggered(
            state,
            env,
            settings,
            system_prompt=frame.system_prompt,
            tools=frame.tools,
            instructions=request.instructions,
        )

    def prepare(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """Runtime-state injection."""
        return state

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """An oversized result cut at `tool_result_limit`, the rest offloaded, a reminder added."""
        return truncate_result(result, self.params.tool_result_limit, env, self.texts)

    def describe(self) -> dict[str, object]:
        """The parameters, for results."""
        return asdict(self.params)
