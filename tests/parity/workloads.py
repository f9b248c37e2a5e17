"""Hypothesis strategies for parity workloads: scripts and configurations that stress the
AgentScope pipeline (parallel calls, huge and error results, images, CJK, several replies,
small windows, varied trigger/reserve/limits, summary failures)."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from ctxlab.core.blocks import DataBlock, Part, TextBlock
from ctxlab.core.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.core.tools import ToolSchema
from ctxlab.scenarios.config import ContextConfig, InjectionConfig
from tests.parity.spec import ParityConfig

TOOLS = (
    ToolSchema.of(
        "retrieve", "Retrieve passages.", {"type": "object", "properties": {"query": {"type": "string"}}}
    ),
    ToolSchema.of("figure", "Return a figure.", {"type": "object", "properties": {"n": {"type": "integer"}}}),
)
PROSE = "The context window is finite; compress the old, keep the new. "
CJK = "上下文工程让智能体在长任务中不迷路。"


@st.composite
def texts(draw: st.DrawFn, max_bytes: int) -> str:
    size = draw(st.integers(max(1, max_bytes // 2), max_bytes))
    base = CJK if draw(st.booleans()) and size > 60 else PROSE
    return (base * (size // len(base) + 1))[:size]


@st.composite
def results(draw: st.DrawFn, window: int) -> tuple[Part, ...]:
    share = draw(st.sampled_from([0.01, 0.05, 0.15, 0.3, 0.6]))  # of the window, in tokens
    size = max(1, int(window * 4 * share * draw(st.floats(0.5, 1.0))))
    parts: list[Part] = [TextBlock(text=draw(texts(max_bytes=size)))]
    if draw(st.integers(0, 5)) == 0:
        parts.append(DataBlock(media_type="image/png", source="https://example.com/a.png"))
        if draw(st.booleans()):
            parts.append(TextBlock(text=draw(texts(max_bytes=400))))
    return tuple(parts)


@st.composite
def rounds(draw: st.DrawFn, window: int) -> ScriptedRound:
    calls = []
    for n in range(draw(st.integers(1, 3))):
        tool = draw(st.sampled_from(["retrieve", "figure"]))
        calls.append(
            ScriptedCall(
                tool=tool,
                input=json.dumps({"query": f"q{n}"}),
                result=draw(results(window)),
                error=draw(st.integers(0, 6)) == 0,
            )
        )
    text = draw(st.one_of(st.none(), texts(max_bytes=200)))
    return ScriptedRound(text=text, calls=tuple(calls))


@st.composite
def parity_cases(draw: st.DrawFn, injection: bool = False) -> tuple[Script, ParityConfig]:
    window = draw(st.integers(1500, 20000))
    turns = []
    for _ in range(draw(st.integers(1, 3))):
        user = TextBlock(text=draw(texts(max_bytes=300)))
        turn_rounds = tuple(draw(rounds(window)) for _ in range(draw(st.integers(0, 5))))
        turns.append(
            ScriptedTurn(
                user=(user,),
                rounds=turn_rounds,
                final=draw(texts(max_bytes=100)),
                advance_seconds=draw(st.sampled_from([0, 600, 3600])),
            )
        )
    script = assign_call_ids(
        Script(system_prompt=draw(texts(max_bytes=600)), tools=TOOLS, turns=tuple(turns))
    )
    trigger = draw(st.sampled_from([0.5, 0.6, 0.7, 0.8, 0.9]))
    reserve = draw(st.sampled_from([r for r in (0.05, 0.1, 0.2, 0.3, 0.45) if r < trigger]))
    context = ContextConfig(
        trigger_ratio=trigger,
        reserve_ratio=reserve,
        tool_result_limit=draw(st.sampled_from([50000, 2000, 500, 100])),
        max_image_num=draw(st.sampled_from([5, 1, 0])),
        compression_fallback_to_truncation=draw(st.integers(0, 3)) > 0,
    )
    config = ParityConfig(
        context_size=window,
        context=context,
        injection=InjectionConfig(inject_runtime_state=injection),
        max_iters=draw(st.sampled_from([50, 2])),
        fail_on=frozenset(draw(st.lists(st.integers(1, 4), max_size=2))),
        fail_mode=draw(st.sampled_from(["no_tool_call", "raise"])),
        workspace=draw(st.sampled_from(["memory", "none"])),
    )
    return script, config
