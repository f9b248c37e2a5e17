"""Both sides of an `openhands-hybrid` parity run: its two real parts, and ctxlab's engine.

The hybrid has no package of its own: it is SWE-agent's `LastNObservations` over the requests of
OpenHands' condenser. So the real side is the SDK through its driver (`openhands_side`), each of
its reasoning requests then passed through SWE-agent's own processor (`swe_agent_side`, the
vendored file) as SWE-agent reads a history: the system prompt, the first user message as the
task (its first observation, never elided), every tool message an observation, later user
messages not observations (a SWE-agent run has one task). The masking notices are SWE-agent's,
so both sides write the same text. ctxlab's side plays the script with the `openhands-hybrid`
preset. Both end in `openhands_side.Call`'s normal form; the token count compared is the SDK's
counter over each request as sent (masked).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.loop import Loop
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.openhands.params import HybridParams, OpenHandsParams
from ctxlab.presets.openhands.preset import build_hybrid
from ctxlab.presets.openhands.tokens import sdk_token_count
from ctxlab.presets.swe_agent.preset import SWE_AGENT_MEDIA_NOTICE, SWE_AGENT_NOTICE
from ctxlab.texts import CTXLAB_TEXTS
from tests.parity.openhands_side import (
    HUGE_WINDOW,
    SUMMARY_TEXT,
    Call,
    RecordingModel,
    Workload,
    normal,
    normal_tool,
    sent_reasoning,
)
from tests.parity.swe_agent_side import PROCESSORS

_TYPES = {"system": "system_prompt", "assistant": "action", "tool": "observation"}


def with_swe_agent_notices(params: HybridParams) -> HybridParams:
    """`params` whose masking writes SWE-agent's own notices."""
    masking = replace(params.masking, notice=SWE_AGENT_NOTICE, media_notice=SWE_AGENT_MEDIA_NOTICE)
    return replace(params, masking=masking)


def condenser_workload(
    script: Script, params: HybridParams, fail_on: frozenset[int] = frozenset()
) -> Workload:
    """The OpenHands workload of the hybrid's condenser."""
    condenser = OpenHandsParams(condenser=params.condenser, max_iterations=params.max_iterations)
    return Workload(script=script, params=condenser, fail_on=fail_on)


def masked(messages: list[dict[str, Any]], masking: LastNObservationsParams) -> list[dict[str, Any]]:
    """SWE-agent's `LastNObservations` over one request (see the module docstring)."""
    history = []
    seen_user = False
    for message in messages:
        kind = _TYPES.get(message["role"], "user" if seen_user else "observation")
        seen_user = seen_user or message["role"] == "user"
        history.append({**message, "message_type": kind})
    processor = PROCESSORS.LastNObservations(n=masking.n, polling=masking.polling)
    return [{k: v for k, v in m.items() if k != "message_type"} for m in processor(history)]


def _call(kind: str, wire: list[dict[str, Any]], tools: tuple[str, ...]) -> Call:
    tokens = sdk_token_count(wire, ()) if kind == "reasoning" else 0
    return Call(
        kind=kind,
        messages=tuple(normal(m) for m in wire),
        tools=tools,
        tokens=tokens,
        reasoning=sent_reasoning(wire),
        wire=tuple(wire),
    )


def real_calls(trace: dict[str, Any], masking: LastNObservationsParams) -> list[Call]:
    """The driver's calls, each reasoning request masked as SWE-agent masks it."""
    return [
        _call(
            c["kind"],
            masked(c["messages"], masking) if c["kind"] == "reasoning" else c["messages"],
            tuple(normal_tool(t) for t in c["tools"]),
        )
        for c in trace["calls"]
    ]


def _tool(tool: ToolSchema) -> str:
    return json.dumps(
        {"name": tool.name, "description": tool.description, "parameters": json.loads(tool.parameters)},
        sort_keys=True,
    )


def run_lab(
    script: Script, params: HybridParams, fail_on: frozenset[int] = frozenset()
) -> tuple[list[Call], str | None]:
    """ctxlab's run with `openhands-hybrid` (`texts: openhands`): its calls, and the error that
    ended it; the summaries numbered in `fail_on` fail (a model error, as the SDK's driver raises)."""
    texts = replace(CTXLAB_TEXTS, name="openhands")
    model = RecordingModel(ScriptModel(script), [])
    summarizer = FixedSummarizer(fields={}, fail_on=fail_on, fail_mode="raise", text=SUMMARY_TEXT)
    counter = AgentScopeEstimator()
    env = Env(counter=counter, model=model, summarizer=summarizer, texts=texts, context_size=HUGE_WINDOW)
    loop = Loop(script=script, strategy=build_hybrid(params, texts), env=env)
    error = None
    try:
        loop.run()
    except Exception as failure:  # the driver records the SDK's failure the same way
        error = type(failure).__name__
    order, summaries = iter(model.requests), iter(summarizer.requests)
    calls = []
    for record in env.recorder.calls:
        request = next(order) if record.kind == "reasoning" else next(summaries)
        calls.append(_call(record.kind, to_openai(request.messages), tuple(_tool(t) for t in request.tools)))
    return calls, error
