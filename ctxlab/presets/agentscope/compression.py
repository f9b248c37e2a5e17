"""Running one AgentScope-style compression: the pure plan, the summarizer call, the apply.

Invariants:
- All or nothing: the new summary, context, reply mark and read cache are computed first and
  replace the old ones in one step. A summary template that raises, or a failed summary with the
  truncation fallback off, leaves the state exactly as it was (nothing is offloaded either).
- The compressed span is offloaded only when a workspace exists, after the summary is rendered.
- Every compression is recorded, with the fallbacks it took, and judged for progress: one that
  reclaims under 1% of the request, or whose result (system prompt, tools, new summary, reserved
  tail: everything it kept) is still at or above the trigger, is flagged with a `loop_warning`.
  It is only flagged: AgentScope compresses again at the next check, and so does this preset.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from ctxlab.core.agentscope.compress import (
    CompressionInput,
    CompressionPlan,
    EmptyContextError,
    TriggerCheck,
    apply_compression,
    check_trigger,
    new_summary,
    overflow_retry_request,
    plan_compression,
    reserved_read_paths,
    unfinished_call_ids,
)
from ctxlab.core.agentscope.summary import (
    Summary,
    SummaryRequest,
    render_summary,
    summary_tool,
    with_offload_reminder,
)
from ctxlab.core.compaction.progress import assess_compaction
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import HintBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.engine.env import Env, SummaryOutcome
from ctxlab.engine.progress import flag_progress
from ctxlab.engine.state import EpisodeState, with_context
from ctxlab.engine.trace import CompressionRecord
from ctxlab.texts import fill

Form = Callable[[tuple[Message, ...]], tuple[Message, ...]]
"""Messages as the provider's client writes them (the same object when it writes them as stored)."""


class SummaryFailedError(RuntimeError):
    """The summary failed and the truncation fallback is off: the context is kept as it was."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompressionSettings:
    """The knobs of one compression (AgentScope's `ContextConfig` and the time format)."""

    trigger_ratio: float = 0.8
    reserve_ratio: float = 0.1
    fallback_to_truncation: bool = True
    compression_prompt: str
    summary_template: str
    summary_schema: str
    time_format: str = "%Y-%m-%dT%H:%M:%S"
    timezone: str = "UTC"


def compression_input(
    state: EpisodeState,
    system_prompt: str | None,
    tools: tuple[ToolSchema, ...],
    env: Env,
    settings: CompressionSettings,
) -> CompressionInput:
    """What the compression reads from the state."""
    return CompressionInput(
        system_prompt=system_prompt,
        summary=state.summary,
        context=state.context,
        tools=tools,
        context_size=env.context_size,
        trigger_ratio=settings.trigger_ratio,
        reserve_ratio=settings.reserve_ratio,
        unfinished=unfinished_call_ids(state.context, state.reply.reply_id),
    )


def compress_if_triggered(
    state: EpisodeState,
    env: Env,
    settings: CompressionSettings,
    *,
    system_prompt: str | None,
    tools: tuple[ToolSchema, ...],
    instructions: tuple[HintBlock, ...] = (),
    form: Form | None = None,
) -> EpisodeState:
    """Compress when the request reaches the trigger; otherwise return the state unchanged.
    A summary request is sent in `form` when given (the count that decides stays the stored one).

    Raises:
        ctxlab.core.agentscope.compress.EmptyContextError: over the trigger with nothing to compress
            (AgentScope's message; a note says where, and what the count was).
        SummaryFailedError: the summary failed and the truncation fallback is off.
    """
    inp = compression_input(state, system_prompt, tools, env, settings)
    check = check_trigger(inp, env.counter, state.context_tally)
    if not check.triggered:
        return state
    prompt = fill(settings.compression_prompt, current_time=_time_text(state, settings))
    schema_tool = summary_tool(settings.summary_schema, env.texts.summary_tool_description)
    try:
        plan = plan_compression(
            inp, env.counter, prompt=prompt, schema_tool=schema_tool, instructions=instructions
        )
    except EmptyContextError as error:
        error.add_note(_empty_context_note(state, env, check))
        raise
    outcome = _summarize(state, plan, inp, env, settings, form=form)
    return _apply(_InFlight(state=state, inp=inp, before=check, plan=plan, outcome=outcome), env, settings)


def _empty_context_note(state: EpisodeState, env: Env, check: TriggerCheck) -> str:
    """Where the compression was refused and why, beside AgentScope's own words (the message)."""
    return (
        f"before call {env.recorder.next_call_index} (turn {state.turn}, iteration "
        f"{state.cur_iter}; 0-based, as in calls.csv): the context is empty, and the system prompt, "
        f"summary and tool schemas alone count {check.tokens} tokens, at or above the trigger "
        f"({check.threshold} tokens); AgentScope raises here too, and leaves its state as it was"
    )


def _time_text(state: EpisodeState, settings: CompressionSettings) -> str:
    now = state.clock.in_zone(settings.timezone).now()
    return f"{now.strftime(settings.time_format)} ({settings.timezone})"


def _summarize(
    state: EpisodeState,
    plan: CompressionPlan,
    inp: CompressionInput,
    env: Env,
    settings: CompressionSettings,
    *,
    form: Form | None,
) -> SummaryOutcome:
    schema = json.loads(settings.summary_schema)
    outcome = env.summarize(state, _formed(plan.request, form), schema)
    if outcome.fields is None and not outcome.skipped and plan.overflow:
        env.recorder.event(EventKind.OVERFLOW_RETRY)
        retry = overflow_retry_request(plan, inp, env.counter)
        outcome = env.summarize(state, _formed(retry, form), schema)
    return outcome


def _formed(request: SummaryRequest, form: Form | None) -> SummaryRequest:
    """`request` with the messages as `form` writes them, where that differs."""
    sent = request.messages if form is None else form(request.messages)
    return request if sent is request.messages else replace(request, sent=sent)


@dataclass(frozen=True, slots=True, kw_only=True)
class _InFlight:
    """One compression in flight: what it read, planned and got from the summarizer."""

    state: EpisodeState
    inp: CompressionInput
    before: TriggerCheck
    plan: CompressionPlan
    outcome: SummaryOutcome


def _apply(step: _InFlight, env: Env, settings: CompressionSettings) -> EpisodeState:
    fields = step.outcome.fields
    if fields is None and not settings.fallback_to_truncation:
        raise SummaryFailedError(
            f"the summary failed and the truncation fallback is off: {step.outcome.error}"
        )
    rendered = render_summary(settings.summary_template, fields) if fields is not None else None
    summary = new_summary(rendered, step.state.summary, env.texts.truncated_summary)
    offloaded = _offload(summary, step.plan, env)
    applied = apply_compression(
        step.plan, offloaded.summary, step.state.reply, summary_succeeded=fields is not None
    )
    read_cache = step.state.read_cache & reserved_read_paths(step.plan.split.reserve)
    new_state = replace(with_context(step.state, applied.context, env.counter), summary=applied.summary)
    new_state = replace(new_state, reply=applied.reply, read_cache=read_cache)
    after = check_trigger(
        replace(step.inp, summary=new_state.summary, context=new_state.context), env.counter
    )
    _record(step, env, offloaded, after)
    return new_state


class Offloaded(NamedTuple):
    """The summary with its offload reminder, and where the span went."""

    summary: Summary
    path: str | None


def _offload(summary: Summary, plan: CompressionPlan, env: Env) -> Offloaded:
    if env.workspace is None:
        return Offloaded(summary, None)
    path = env.workspace.offload_context(plan.split.compress)
    reminder = fill(env.texts.context_offload_reminder, path=path)
    return Offloaded(with_offload_reminder(summary, reminder), path)


def _record(step: _InFlight, env: Env, offloaded: Offloaded, after: TriggerCheck) -> None:
    env.recorder.event(EventKind.COMPRESSED)
    if offloaded.path is not None:
        env.recorder.event(EventKind.OFFLOADED)
    ok = step.outcome.fields is not None
    env.recorder.compressions.append(
        CompressionRecord(
            before_call=env.recorder.next_call_index,
            tokens_before=step.before.tokens,
            threshold=step.before.threshold,
            compressed_messages=len(step.plan.split.compress),
            reserved_messages=len(step.plan.split.reserve),
            zero_reserve_retry=step.plan.zero_reserve_retry,
            overflow=step.plan.overflow,
            summary_ok=ok,
            fallback=not ok,
            offload_path=offloaded.path,
            summary=offloaded.summary,
            tokens_after=after.tokens,
            floor_tokens=after.tokens,
        )
    )
    # Everything the compression kept is its floor: only a new compression can go lower.
    progress = assess_compaction(
        before=step.before.tokens,
        after=after.tokens,
        floor=after.tokens,
        trigger=math.ceil(step.before.threshold),
    )
    flag_progress(env, progress, "agentscope")
