"""Run the real `agentscope.agent.Agent` (2.0.11) on a ctxlab script and record what it did.

`run_agentscope(script, config)` builds the agent with the scripted model, tools and offloader of
`tests.parity.fakes`, runs one `reply` per turn under a frozen clock and counter ids
(`tests.parity.frozen`), and returns a `ParityTrace` that the lab's own engine is compared with.

Invariants:
- Everything of the run is a function of the script and the config: the same inputs give an
  equal trace.
- The clock moves only between steps, as in the lab's loop: by a turn's `advance_seconds` before
  its reply, and by round k's `advance_seconds` at the start of iteration k (the one that serves
  round k, or the forced final answer in its place), before the compression check, so the
  injection and the compression prompt both see the new time. A turn with a `timezone` moves the
  agent there for the rest of the run: AgentScope reads the time in its injection timezone, so
  that is what changes.
- A compression is recorded when `state.context` has been replaced (AgentScope replaces it only
  when applying a compression), by an `on_compress_context` middleware, after the change.
- A reply that raises (e.g. a failed summary with `compression_fallback_to_truncation` off) ends
  the run; the trace keeps everything up to it and the error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from agentscope.agent import Agent, ContextConfig, InjectionConfig, ReActConfig
from agentscope.message import Msg, UserMsg
from agentscope.middleware import MiddlewareBase
from agentscope.skill import Skill
from agentscope.tool import TaskCreate, TaskGet, TaskList, TaskUpdate, ToolBase, ToolGroup, Toolkit

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedTurn
from ctxlab.engine.state import AGENT_NAME
from ctxlab.presets.agentscope.config import DEFAULT_TASK_TOOL_NAMES
from tests.parity.bridge import as_part, from_msg
from tests.parity.fakes import CURRENT_CALL, Progress, RecordingOffloader, ScriptedChatModel, ScriptedTool
from tests.parity.frozen import ClockCell, deterministic_agentscope, start_clock
from tests.parity.spec import ParityConfig
from tests.parity.trace import Compression, ParityTrace, TaskRecord, shapes

__all__ = ["ParityConfig", "ParityTrace", "run_agentscope"]

BUILTIN_TOOLS = (*DEFAULT_TASK_TOOL_NAMES, "CompressContext", "reset_tools", "Skill")


def run_agentscope(script: Script, config: ParityConfig) -> ParityTrace:
    """Run the real agent on `script` (call ids assigned) under `config`.

    Raises:
        ValueError: a call has neither a scripted result nor a built-in tool, or lacks an id.
    """
    check_script(script)
    return asyncio.run(_run(script, config))


def check_script(script: Script) -> None:
    """Fail early, with the fix, on scripts the driver cannot play."""
    for call in script.calls():
        if call.id is None:
            raise ValueError(f"a {call.tool} call has no id; pass the script through assign_call_ids first")
        if call.result is None and call.tool not in BUILTIN_TOOLS:
            raise ValueError(
                f"call {call.id} of {call.tool!r} has no result and {call.tool!r} is not a built-in tool "
                f"({', '.join(BUILTIN_TOOLS)}); give it a scripted result"
            )


class ScriptHooks(MiddlewareBase):
    """Ties the agent's loop to the script: the clock per round, and which call a tool answers."""

    def __init__(self, *, script: Script, clock: ClockCell, progress: Progress) -> None:
        self._script = script
        self._clock = clock
        self._progress = progress

    async def on_compress_context(
        self, agent: Any, input_kwargs: dict[str, Any], next_handler: Callable[..., Awaitable[None]]
    ) -> None:
        # The per-iteration check passes no config; the CompressContext tool passes its own.
        if input_kwargs["context_config"] is None:
            self._advance_for(agent.state.cur_iter)
        await next_handler()

    def _advance_for(self, iteration: int) -> None:
        rounds = self._script.turns[self._progress.turn].rounds
        # As the lab's loop does, also when the agent forces a final answer in place of the round.
        if iteration < len(rounds):
            self._clock.advance(rounds[iteration].advance_seconds)

    async def on_acting(
        self, agent: Any, input_kwargs: dict[str, Any], next_handler: Callable[..., AsyncGenerator[Any, None]]
    ) -> AsyncGenerator[Any, None]:
        # Each call of a concurrent batch runs in its own task, so the variable is per call.
        CURRENT_CALL.set(input_kwargs["tool_call"].id)
        async for item in next_handler():
            yield item


class CompressionRecorder(MiddlewareBase):
    """Records the context and summary right after each applied compression."""

    def __init__(self, model: ScriptedChatModel) -> None:
        self._model = model
        self.compressions: list[Compression] = []

    async def on_compress_context(
        self, agent: Any, input_kwargs: dict[str, Any], next_handler: Callable[..., Awaitable[None]]
    ) -> None:
        before = agent.state.context
        await next_handler()
        if agent.state.context is not before:
            messages = tuple(from_msg(m) for m in agent.state.context)
            self.compressions.append(
                Compression(
                    before_call=len(self._model.calls),
                    trigger="auto" if input_kwargs["context_config"] is None else "tool",
                    context=shapes(messages),
                    messages=messages,
                    summary=summary_text(agent.state.summary),
                )
            )


def summary_text(summary: str | list[Any]) -> str:
    """The summary as text: the string, or the texts of a block-list summary joined."""
    if isinstance(summary, str):
        return summary
    return "".join(b.text for b in summary if getattr(b, "type", None) == "text")


def scripted_tools(script: Script) -> list[ToolBase]:
    """One scripted tool per schema, each answering its own calls by id."""
    calls: dict[str, ScriptedCall] = {c.id: c for c in script.calls() if c.id is not None}
    return [ScriptedTool(schema, calls) for schema in script.tools]


def toolkit_of(script: Script, basic: list[ToolBase]) -> Toolkit:
    """AgentScope's toolkit for the script: `basic` in the basic group with the script's skills,
    then one `ToolGroup` per script group (its tools scripted like the basic ones)."""
    calls: dict[str, ScriptedCall] = {c.id: c for c in script.calls() if c.id is not None}
    skills = [
        Skill(name=s.name, description=s.description, dir=s.dir, markdown=s.markdown, updated_at=0.0)
        for s in script.skills
    ]
    groups = [
        ToolGroup(
            name=g.name,
            description=g.description,
            instructions=g.instructions,
            tools=[ScriptedTool(schema, calls) for schema in g.tools],
        )
        for g in script.tool_groups
    ]
    return Toolkit(tools=basic, skills_or_loaders=skills, tool_groups=groups)


def build_agent(
    script: Script,
    config: ParityConfig,
    *,
    model: ScriptedChatModel,
    middlewares: list[MiddlewareBase],
    offloader: RecordingOffloader | None,
) -> Agent:
    """The real agent with the run's model, tools, middlewares and configs."""
    tools = scripted_tools(script)
    if config.task_tools:
        tools += [TaskCreate(), TaskGet(), TaskList(), TaskUpdate()]
    return Agent(
        name=AGENT_NAME,
        system_prompt=script.system_prompt,
        model=model,
        toolkit=toolkit_of(script, tools),
        middlewares=middlewares,
        offloader=offloader,
        # None fields are the texts left to AgentScope's defaults.
        context_config=ContextConfig(**config.context.model_dump(exclude_none=True)),
        injection_config=InjectionConfig(**config.injection.model_dump(exclude_none=True)),
        react_config=ReActConfig(max_iters=config.max_iters),
    )


def user_msg(turn: ScriptedTurn) -> Msg:
    """The turn's user input as an agentscope user message."""
    return UserMsg(name="user", content=[as_part(p) for p in turn.user])


async def _run(script: Script, config: ParityConfig) -> ParityTrace:
    clock = start_clock(script)
    with deterministic_agentscope(clock):
        progress = Progress()
        model = ScriptedChatModel(script=script, config=config, progress=progress)
        recorder = CompressionRecorder(model)
        hooks = ScriptHooks(script=script, clock=clock, progress=progress)
        offloader = RecordingOffloader() if config.workspace == "memory" else None
        # The hooks come first, as the outer layer: the clock moves before the compression check.
        agent = build_agent(script, config, model=model, middlewares=[hooks, recorder], offloader=offloader)
        replies, error = await _play(agent, script, clock, progress)
        return _trace(agent, model, recorder, offloader, replies=replies, error=error)


async def _play(
    agent: Agent, script: Script, clock: ClockCell, progress: Progress
) -> tuple[list[str], str | None]:
    replies: list[str] = []
    for index, turn in enumerate(script.turns):
        clock.advance(turn.advance_seconds)
        if turn.timezone:
            clock.move_to(turn.timezone)
            agent.injection_config.timezone = turn.timezone
        progress.turn, progress.served = index, 0
        try:
            reply = await agent.reply(user_msg(turn))
        except Exception as exc:  # the trace reports it; the lab must fail the same way
            return replies, f"{type(exc).__name__}: {exc}"
        replies.append("".join(b.text for b in from_msg(reply).blocks if isinstance(b, TextBlock)))
    return replies, None


def _tasks(agent: Agent) -> tuple[TaskRecord, ...]:
    return tuple(
        TaskRecord(
            id=t.id,
            subject=t.subject,
            description=t.description,
            state=t.state,
            owner=t.owner,
            blocks=tuple(t.blocks),
            blocked_by=tuple(t.blocked_by),
        )
        for t in agent.state.tasks_context.tasks
    )


def _trace(
    agent: Agent,
    model: ScriptedChatModel,
    recorder: CompressionRecorder,
    offloader: RecordingOffloader | None,
    *,
    replies: list[str],
    error: str | None,
) -> ParityTrace:
    final = tuple(from_msg(m) for m in agent.state.context)
    return ParityTrace(
        calls=tuple(model.calls),
        compressions=tuple(recorder.compressions),
        final_context=shapes(final),
        final_messages=final,
        final_summary=summary_text(agent.state.summary),
        offloads=tuple(offloader.offloads) if offloader is not None else (),
        tasks=_tasks(agent),
        replies=tuple(replies),
        error=error,
    )
