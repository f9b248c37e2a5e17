"""The `agentscope` preset: AgentScope 2.0.11's context engineering, step for step.

Source: agentscope 2.0.11, `agentscope/agent/_agent.py` and `_config.py` (tests/parity/CHECKLIST.md
says where each behaviour is tested). Defaults are AgentScope's: trigger 0.8, reserve 0.1,
buffer 0.2, tool_result_limit 50000, max_image_num 5, fallback to truncation on, runtime-state
injection on (UTC, every 0.5 h), no task tools, no compression tool.

Steps, in AgentScope's order: at each tool result, truncation and offload of an oversized result;
before each reasoning call, the image cap, then compression when the request reaches the trigger
(structured summary, protocol-aware split, fallbacks), then runtime-state injection. The task
tools and the `CompressContext` tool are the lab's built-in tools when enabled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import ClassVar

from ctxlab.core.agentscope.compress import fixed_messages
from ctxlab.core.agentscope.formatter import DataTexts, sent_context
from ctxlab.core.agentscope.inject import ContextGauge, InjectionParams, needs_input_tokens, runtime_injection
from ctxlab.core.agentscope.toolkit import without_titles
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import BuiltinTool, Frame
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.state import AGENT_NAME, EpisodeState, append_to_reply
from ctxlab.presets.agentscope.builtins import CompressTool, task_tools
from ctxlab.presets.agentscope.compression import CompressionSettings, compress_if_triggered
from ctxlab.presets.agentscope.content import cap_images, may_need_form, truncate_result
from ctxlab.texts import Texts


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentScopeParams:
    """AgentScope's `ContextConfig` and `InjectionConfig` knobs (text fields None: the texts')."""

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
    injection: InjectionParams = field(default_factory=InjectionParams)
    task_tools: bool = False


@dataclass(frozen=True, slots=True)
class AgentScopeStrategy:
    """The `agentscope` preset."""

    texts: Texts
    params: AgentScopeParams = field(default_factory=AgentScopeParams)
    name: str = "agentscope"
    keeps_empty_answer: ClassVar[bool] = True
    """An empty answer (no text, no call) still gives the reply its message, with no blocks: the
    agent saves a response with usage (`Agent._save_to_context`), and the formatter sends none of it."""

    def timezone(self, state: EpisodeState) -> str:
        """The zone the time is shown in: a turn's move, else the configured one."""
        return state.timezone or self.params.injection.timezone

    def settings(self, state: EpisodeState) -> CompressionSettings:
        """The compression settings, texts filled in."""
        p = self.params
        return CompressionSettings(
            trigger_ratio=p.trigger_ratio,
            reserve_ratio=p.reserve_ratio,
            fallback_to_truncation=p.compression_fallback_to_truncation,
            compression_prompt=p.compression_prompt or self.texts.compression_prompt,
            summary_template=p.summary_template or self.texts.summary_template,
            summary_schema=p.summary_schema or self.texts.summary_schema,
            time_format=p.injection.time_format,
            timezone=self.timezone(state),
        )

    def tools(self, script_tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The script's tools (their titles dropped, as AgentScope's toolkit sends and counts them),
        then the task tools, then the compression tool (registration order)."""
        tools = tuple(without_titles(tool) for tool in script_tools)
        if self.params.task_tools:
            t = self.texts
            tools += (t.task_create_tool, t.task_get_tool, t.task_list_tool, t.task_update_tool)
        if self.params.compression_tool_enabled:
            tools += (self.texts.compress_tool,)
        return tools

    def system_prompt(self, base: str) -> str | None:
        """The base prompt (no skills or workspace instructions); an empty one is still sent, as
        AgentScope always writes its system message."""
        return base

    def compress(self, state: EpisodeState, env: Env, frame: Frame, request: CompressRequest) -> EpisodeState:
        """The image cap, then compression when triggered."""
        state = cap_images(state, self.params.max_image_num, env, self.texts)
        settings = self.settings(state)
        if request.trigger_ratio is not None:
            settings = replace(settings, trigger_ratio=request.trigger_ratio)
        return compress_if_triggered(
            state,
            env,
            settings,
            system_prompt=frame.system_prompt,
            tools=frame.tools,
            instructions=request.instructions,
            form=self._sent_form if may_need_form(state) else None,
        )

    def _sent_form(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        return sent_context(messages, DataTexts.of(self.texts))

    def view(self, state: EpisodeState, env: Env, frame: Frame) -> tuple[Message, ...]:
        """The stored context as AgentScope's OpenAI chat formatter sends it: a result holding
        media as one text, its media listed after the run of results (`core.agentscope.formatter`);
        the stored context itself when no result holds any."""
        if not may_need_form(state):
            return state.context
        return self._sent_form(state.context)

    def prepare(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """Runtime-state injection, appended to the reply as a hint."""
        params = self.params.injection
        if state.timezone is not None and state.timezone != params.timezone:
            params = replace(params, timezone=state.timezone)
        tokens = None
        if needs_input_tokens(params, state.cur_iter):
            fixed = env.counter.measure_message  # the system prompt and summary, then the context
            size = state.context_tally
            for message in fixed_messages(frame.system_prompt, state.summary):
                size = size + fixed(message)
            tokens = env.counter.total(size, frame.tools)
        gauge = ContextGauge(
            input_tokens=tokens,
            trigger_ratio=self.params.trigger_ratio,
            buffer_ratio=self.params.context_buffer_ratio,
            context_size=env.context_size,
            compression_tool_enabled=self.params.compression_tool_enabled,
        )
        injection = runtime_injection(
            messages=state.context,
            board=state.tasks,
            now=state.clock.now(),
            params=params,
            texts=self.texts,
            agent_name=AGENT_NAME,
            cur_iter=state.cur_iter,
            gauge=gauge,
            scan=env.scan_hints(state.context, params),
        )
        if injection is None:
            return state
        for cause in injection.causes:
            env.recorder.event(EventKind.INJECTED, cause)
        return append_to_reply(state, (injection.block,), env.counter)

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """An oversized result cut at `tool_result_limit`, the rest offloaded, a reminder added."""
        return truncate_result(result, self.params.tool_result_limit, env, self.texts)

    def builtins(self) -> Mapping[str, BuiltinTool]:
        """The task tools and the compression tool, when enabled."""
        tools: dict[str, BuiltinTool] = {}
        if self.params.task_tools:
            tools.update(task_tools(self.texts))
        if self.params.compression_tool_enabled:
            lowered = self.params.trigger_ratio - self.params.context_buffer_ratio
            tools[self.texts.compress_tool.name] = CompressTool(self.texts, lowered)
        return tools

    def describe(self) -> dict[str, object]:
        """The parameters, for results."""
        return asdict(self.params)
