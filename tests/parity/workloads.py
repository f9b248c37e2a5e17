"""Hypothesis strategies for parity workloads: scripts and configurations that stress the
AgentScope pipeline (parallel calls, huge and error results, images, CJK, several replies,
small windows, varied trigger/reserve/limits, summary failures) and, with `agent=True`, the rest
of the agent: runtime-state injection (zones, formats, intervals, clock jumps and zone moves,
repeated failures), task tools and the CompressContext tool."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from hypothesis import strategies as st

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.core.world.toolkit import Skill, ToolGroup
from ctxlab.presets.agentscope.config import ContextConfig, InjectionConfig
from tests.parity.spec import ParityConfig

TOOLS = (
    ToolSchema.of(
        "retrieve", "Retrieve passages.", {"type": "object", "properties": {"query": {"type": "string"}}}
    ),
    ToolSchema.of("figure", "Return a figure.", {"type": "object", "properties": {"n": {"type": "integer"}}}),
)
PROSE = "The context window is finite; compress the old, keep the new. "
CJK = "上下文工程让智能体在长任务中不迷路。"


def retrieval_loop(
    sizes: list[int], *, turns: int = 1, tool: str = "retrieve", encode: Callable[[object], str] = json.dumps
) -> Script:
    """`turns` turns of one call per round, results of the given sizes (characters of ASCII prose);
    each call's arguments written by `encode`."""
    rounds = tuple(
        ScriptedRound(
            calls=(
                ScriptedCall(
                    tool=tool,
                    input=encode({"query": f"q{k}"}),
                    result=(TextBlock(text=(PROSE * (n // len(PROSE) + 1))[:n]),),
                ),
            )
        )
        for k, n in enumerate(sizes)
    )
    turn = ScriptedTurn(user=(TextBlock(text="Collect the passages."),), rounds=rounds, final="Done.")
    return assign_call_ids(Script(system_prompt="You research.", tools=TOOLS, turns=(turn,) * turns))


def reasoning_loop() -> Script:
    """Two turns of a reasoning model: every round thinks (text or not), the first turn ends on an
    answer of reasoning alone (no text, no call)."""
    base = retrieval_loop([300, 2000, 300], turns=2)
    first = base.turns[0]
    rounds = tuple(
        replace(
            r, thinking=f"I should look up q{k} next; 上下文 {'x' * 40 * k}", text="Looking." if k else None
        )
        for k, r in enumerate(first.rounds)
    )
    thought_only = ScriptedRound(thinking="Enough passages; nothing to add.")
    turns = (replace(first, rounds=(*rounds, thought_only)), base.turns[1])
    return assign_call_ids(replace(base, turns=turns))


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


TASK_CALLS = (
    ("TaskCreate", {"subject": "Collect sources", "description": "Find three papers."}),
    ("TaskCreate", {"subject": "写总结", "description": "汇总结果。"}),
    ("TaskUpdate", {"task_id": "1", "status": "in_progress"}),
    ("TaskUpdate", {"task_id": "1", "status": "completed"}),
    ("TaskUpdate", {"task_id": "2", "add_blocked_by": ["1"], "owner": "me"}),
    ("TaskUpdate", {"task_id": "2", "status": "deleted"}),
    ("TaskList", {}),
    ("TaskGet", {"task_id": "1"}),
)


@st.composite
def agent_round(draw: st.DrawFn, window: int, tasks: bool, compress_tool: bool) -> ScriptedRound:
    """A round of built-in tools: task calls, the compression tool, or a retried failure."""
    options = ["retry"] + (["tasks"] if tasks else []) + (["compress"] if compress_tool else [])
    kind = draw(st.sampled_from(options))
    if kind == "tasks":
        picked = draw(st.lists(st.sampled_from(TASK_CALLS), min_size=1, max_size=3))
        calls = tuple(
            ScriptedCall(tool=name, input=json.dumps(args, ensure_ascii=False)) for name, args in picked
        )
    elif kind == "compress":
        calls = (ScriptedCall(tool="CompressContext", input="{}"),)
    else:
        failure = (TextBlock(text="ConnectionError: timed out"),)
        calls = (ScriptedCall(tool="retrieve", input='{"query": "same"}', result=failure, error=True),)
    return ScriptedRound(calls=calls)


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
    # thinking on some rounds: AgentScope's OpenAI chat model keeps `reasoning_content` as a
    # thinking block first in the answer (counted by its estimator, left out by its formatter)
    thinking = draw(st.one_of(st.none(), st.none(), texts(max_bytes=300)))
    return ScriptedRound(thinking=thinking, text=text, calls=tuple(calls))


ZONES = ("UTC", "Asia/Shanghai", "America/New_York")


@st.composite
def injection_configs(draw: st.DrawFn) -> InjectionConfig:
    return InjectionConfig(
        timezone=draw(st.sampled_from(ZONES)),
        time_format=draw(st.sampled_from(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%H:%M"])),
        time_interval=draw(st.sampled_from([0.0, 0.5, 2.0])),
        tool_retries_limit=draw(st.sampled_from([3, 4])),
        extra_fields=draw(st.sampled_from([{}, {"user": "Ada"}])),
    )


@st.composite
def parity_cases(
    draw: st.DrawFn, injection: bool = False, agent: bool = False
) -> tuple[Script, ParityConfig]:
    window = draw(st.integers(1500, 20000))
    tasks, compress_tool = agent and draw(st.booleans()), agent and draw(st.integers(0, 3)) == 0
    turns = []
    for _ in range(draw(st.integers(1, 3))):
        user = TextBlock(text=draw(texts(max_bytes=300)))
        plain = st.builds(lambda r: r, rounds(window))
        special = agent_round(window, tasks, compress_tool)
        pick = st.one_of(plain, special) if agent else plain
        turn_rounds = tuple(draw(pick) for _ in range(draw(st.integers(0, 5))))
        turns.append(
            ScriptedTurn(
                user=(user,),
                rounds=turn_rounds,
                final=draw(texts(max_bytes=100)),
                advance_seconds=draw(st.sampled_from([0, 600, 3600, -7200] if agent else [0, 600, 3600])),
                timezone=draw(st.sampled_from([None, None, "Europe/Paris"])) if agent else None,
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
        context_buffer_ratio=draw(st.sampled_from([b for b in (0.0, 0.1, 0.2, 0.3) if b < trigger])),
        tool_result_limit=draw(st.sampled_from([50000, 2000, 500, 100])),
        max_image_num=draw(st.sampled_from([5, 1, 0])),
        compression_fallback_to_truncation=compress_tool or draw(st.integers(0, 3)) > 0,
        compression_tool_enabled=compress_tool,
    )
    inject = draw(injection_configs()) if injection or agent else InjectionConfig(inject_runtime_state=False)
    config = ParityConfig(
        context_size=window,
        context=context,
        injection=inject,
        task_tools=tasks,
        max_iters=draw(st.sampled_from([50, 2])),
        fail_on=frozenset(draw(st.lists(st.integers(1, 4), max_size=2))),
        fail_mode=draw(st.sampled_from(["no_tool_call", "raise"])),
        workspace=draw(st.sampled_from(["memory", "none"])),
    )
    return script, config


GROUP_NAMES = ("browser", "database", "files", "mail", "shell", "vision")
INSTRUCTIONS = (None, "", "Open pages one at a time; quote the URL you used.", "只读查询；不要修改数据。")


@st.composite
def tool_groups(draw: st.DrawFn) -> tuple[ToolGroup, ...]:
    """One to four groups of one to three tools each, with absent, empty or real instructions."""
    names = draw(st.lists(st.sampled_from(GROUP_NAMES), min_size=1, max_size=4, unique=True))
    groups = []
    for name in names:
        tools = tuple(
            ToolSchema.of(
                f"{name}_{n}",
                f"Tool {n} of the {name} group.",
                {
                    "type": "object",
                    "properties": {"arg": {"type": "string", "description": "What to act on."}},
                },
            )
            for n in range(draw(st.integers(1, 3)))
        )
        description = draw(st.sampled_from([f"Tools for {name} work.", f"{name} 相关的工具。"]))
        groups.append(
            ToolGroup(
                name=name,
                description=description,
                instructions=draw(st.sampled_from(INSTRUCTIONS)),
                tools=tools,
            )
        )
    return tuple(groups)


@st.composite
def skills(draw: st.DrawFn) -> tuple[Skill, ...]:
    """Zero to two skills with markdown of a few hundred bytes."""
    count = draw(st.integers(0, 2))
    return tuple(
        Skill(
            name=f"skill-{n}",
            description=draw(st.sampled_from(["Write a release note.", "按模板写周报。"])),
            markdown=f"# Skill {n}\n" + draw(texts(max_bytes=800)),
            dir=f"skills/skill-{n}",
        )
        for n in range(count)
    )


@st.composite
def toolkit_round(
    draw: st.DrawFn, window: int, groups: tuple[ToolGroup, ...], skill_set: tuple[Skill, ...]
) -> ScriptedRound:
    """An activation (alone in its batch), a skill view (alone), or calls of group tools that may
    be inactive, next to a basic call."""
    kind = draw(st.sampled_from(["reset", "reset", "group", "group", "skill"]))
    if kind == "reset":
        chosen = draw(st.lists(st.sampled_from([g.name for g in groups]), unique=True))
        arguments: dict[str, bool] = {name: draw(st.booleans()) for name in chosen}
        if draw(st.integers(0, 7)) == 0:
            arguments["no_such_group"] = True
        return ScriptedRound(calls=(ScriptedCall(tool="reset_tools", input=json.dumps(arguments)),))
    if kind == "skill":
        names = [s.name for s in skill_set] + ["missing-skill"]
        wanted = draw(st.sampled_from(names))
        return ScriptedRound(calls=(ScriptedCall(tool="Skill", input=json.dumps({"skill": wanted})),))
    tools = [t.name for g in groups for t in g.tools]
    calls = [
        ScriptedCall(tool=name, input=json.dumps({"arg": f"a{n}"}), result=draw(results(window)))
        for n, name in enumerate(draw(st.lists(st.sampled_from(tools), min_size=1, max_size=2)))
    ]
    if draw(st.booleans()):
        calls.append(ScriptedCall(tool="retrieve", input='{"query": "q"}', result=draw(results(window))))
    return ScriptedRound(text=draw(st.one_of(st.none(), texts(max_bytes=120))), calls=tuple(calls))


@st.composite
def toolkit_cases(draw: st.DrawFn) -> tuple[Script, ParityConfig]:
    """Workloads with tool groups and skills: activations and deactivations, unknown group names,
    calls of inactive tools, skill views (also of unknown skills), under compression, truncation
    and runtime-state injection."""
    window = draw(st.integers(2000, 30000))
    groups, skill_set = draw(tool_groups()), draw(skills())
    turns = []
    for _ in range(draw(st.integers(1, 3))):
        mixed = st.one_of(
            rounds(window), toolkit_round(window, groups, skill_set), toolkit_round(window, groups, skill_set)
        )
        turns.append(
            ScriptedTurn(
                user=(TextBlock(text=draw(texts(max_bytes=300))),),
                rounds=tuple(draw(mixed) for _ in range(draw(st.integers(1, 6)))),
                final=draw(texts(max_bytes=100)),
                advance_seconds=draw(st.sampled_from([0, 600, 3600])),
            )
        )
    script = assign_call_ids(
        Script(
            system_prompt=draw(texts(max_bytes=600)),
            tools=TOOLS,
            turns=tuple(turns),
            tool_groups=groups,
            skills=skill_set,
        )
    )
    trigger = draw(st.sampled_from([0.5, 0.7, 0.8, 0.9]))
    context = ContextConfig(
        trigger_ratio=trigger,
        reserve_ratio=draw(st.sampled_from([r for r in (0.05, 0.1, 0.3) if r < trigger])),
        tool_result_limit=draw(st.sampled_from([50000, 2000, 300])),
        compression_tool_enabled=draw(st.integers(0, 4)) == 0,
    )
    inject = draw(injection_configs()) if draw(st.booleans()) else InjectionConfig(inject_runtime_state=False)
    config = ParityConfig(
        context_size=window,
        context=context,
        injection=inject,
        task_tools=draw(st.booleans()),
        max_iters=draw(st.sampled_from([50, 3])),
        workspace=draw(st.sampled_from(["memory", "none"])),
    )
    return script, config
