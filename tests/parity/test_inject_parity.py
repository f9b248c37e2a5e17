"""Parity: `runtime_injection` against agentscope 2.0.11's `Agent._inject_runtime_state`.

A minimal real Agent (a fake model subclassing `ChatModelBase`, never called) gets a generated
context, task board, clock, iteration and configuration; its time source is patched to the
generated `now`. The hint it appends must be byte for byte the one ctxlab computes under
`agentscope_texts()`, or both must inject nothing. The token count the context-length line reads
is the agent's own count of its next request, and the window is placed around that count so the
strict comparison is exercised at its boundary.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from typing import Any
from unittest import mock

from hypothesis import event, given
from hypothesis import strategies as st

from ctxlab.core.agentscope.inject import ContextGauge, InjectionParams, resolve_timezone, runtime_injection
from ctxlab.core.agentscope.tasks import Task
from ctxlab.core.messages.blocks import Block, HintBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.texts import agentscope_texts
from tests.parity.bridge import as_msg

AGENT = "agent"
T0 = dt.datetime(2026, 10, 25, 0, 40, tzinfo=dt.UTC)  # near the Berlin fall-back hour
ZONES = ["UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York", "Mars/Base"]
FORMATS = ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%H:%M", "%Y-%m-%d %H:%M:%S%z", "%d/%m/%Y %H:%M"]
MINUTES = [-10, -1, 0, 0, 5, 15, 15, 29, 30, 31, 45, 60, 120, 60 * 24]
SOURCE = '{"label": "System", "sublabel": "Runtime State"}'
LIKELY = st.sampled_from([True, True, True, False])
RARELY = st.sampled_from([False, False, False, False, False, True])  # the first value is drawn most


def build_agent(injection: dict[str, Any], context: dict[str, Any]) -> Any:
    from agentscope.agent import Agent, ContextConfig, InjectionConfig
    from agentscope.credential import CredentialBase
    from agentscope.model import ChatModelBase
    from pydantic import BaseModel

    class Silent(ChatModelBase):
        async def _call_api(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the injection never calls the model")

    class NoParameters(BaseModel):
        pass

    model = Silent(credential=CredentialBase(), model="fake", parameters=NoParameters(), context_size=10_000)
    return Agent(
        name=AGENT,
        system_prompt="You are a careful agent.",
        model=model,
        context_config=ContextConfig(**context),
        injection_config=InjectionConfig(**injection),
    )


@st.composite
def time_hints(draw: st.DrawFn, now: dt.datetime, config: dict[str, Any]) -> HintBlock:
    """An injection as an earlier step would have written it (mostly with the configured zone and
    format, sometimes with others)."""
    texts = agentscope_texts()
    lines = []
    if draw(st.sampled_from([True] * 7 + [False])):
        zone = draw(st.sampled_from([config["timezone"]] * 3 + ZONES))
        fmt = draw(st.sampled_from([config["time_format"]] * 6 + FORMATS))
        when = (now - dt.timedelta(minutes=draw(st.sampled_from(MINUTES)))).astimezone(resolve_timezone(zone))
        lines.append(f"<current-time>{when.strftime(fmt)}</current-time>")
        if draw(LIKELY):
            lines.append(f"<timezone>{zone}</timezone>")
    if draw(RARELY):
        lines.append("<tasks>You have tasks.</tasks>")
    hint = texts.injection_template.replace("{runtime_state}", "\n".join(lines))
    source = draw(st.sampled_from([SOURCE] * 5 + ["other"]))
    if draw(RARELY):
        return HintBlock(hint=(TextBlock(text=hint),), source=source)
    return HintBlock(hint=hint, source=source)


ARGUMENTS = ['{"a": 1, "b": [2]}', '{"b":[2],"a":1}', '{"a": 1', ' {"a": 1 ', "{}", ""]


@st.composite
def rounds(draw: st.DrawFn, first_id: int) -> list[Block]:
    """One model response's calls, then their results (some results lack their call)."""
    calls, results = [], []
    for i in range(draw(st.integers(1, 2))):
        call_id = f"c{first_id}-{i}"
        name = draw(st.sampled_from(["flaky", "flaky", "other", "TaskList", "TaskCreate"]))
        if draw(st.sampled_from([True] * 9 + [False])):
            calls.append(ToolCallBlock(id=call_id, name=name, input=draw(st.sampled_from(ARGUMENTS))))
        state = draw(st.sampled_from(["error", "error", "success"]))
        results.append(ToolResultBlock(id=call_id, name=name, output=(TextBlock(text="x"),), state=state))
    return [*calls, *results]


@st.composite
def streaks(draw: st.DrawFn) -> list[Block]:
    """The same call failing a few times in a row, as separate rounds."""
    name = draw(st.sampled_from(["flaky", "TaskList"]))
    blocks: list[Block] = []
    for i in range(draw(st.sampled_from([3, 4, 5, 2]))):
        call_id = f"s{i}"
        arguments = draw(st.sampled_from(ARGUMENTS[:2] if draw(LIKELY) else ARGUMENTS))
        blocks.append(ToolCallBlock(id=call_id, name=name, input=arguments))
        blocks.append(ToolResultBlock(id=call_id, name=name, output=(TextBlock(text="x"),), state="error"))
    return blocks


@st.composite
def contexts(draw: st.DrawFn, now: dt.datetime, config: dict[str, Any]) -> list[Message]:
    """User turns and replies; the context ends with a user message (a reply starts), this agent's
    reply, or this agent's reply ending in a run of failures."""
    if draw(RARELY):
        return [text_message("user", "first", name="user")]
    ending = draw(st.sampled_from(["streak", "agent", "user"]))
    turns = draw(st.integers(1, 3))
    messages: list[Message] = []
    for turn in range(turns):
        last = turn == turns - 1
        messages.append(text_message("user", f"request {turn}", name="user"))
        blocks: list[Block] = []
        if draw(LIKELY):
            blocks.append(draw(time_hints(now, config)))
        for step in range(draw(st.integers(0, 3))):
            blocks.extend(draw(rounds(turn * 10 + step)))
            if draw(RARELY):
                blocks.append(draw(time_hints(now, config)))
        if last and ending == "streak":
            blocks.extend(draw(streaks()))
        if blocks:
            name = AGENT if last and ending != "user" else draw(st.sampled_from([AGENT, AGENT, "helper"]))
            messages.append(Message(role="assistant", blocks=tuple(blocks), name=name, id=f"r{turn}"))
    if ending == "user":
        messages.append(text_message("user", "next", name="user"))
    return messages


tasks = st.lists(
    st.builds(
        Task,
        id=st.sampled_from(["1", "2", "3"]),
        subject=st.just("s"),
        description=st.just("d"),
        state=st.sampled_from(["pending", "in_progress", "completed"]),
    ),
    max_size=3,
)


@st.composite
def situations(draw: st.DrawFn) -> dict[str, Any]:
    now = T0 + dt.timedelta(minutes=draw(st.sampled_from([0, 20, 30, 90])))
    injection = {
        "timezone": draw(st.sampled_from(ZONES)),
        "time_format": draw(st.sampled_from(FORMATS)),
        "time_interval": draw(st.sampled_from([0.0, 0.25, 0.5, 0.5, 2.0])),
        "tool_retries_limit": draw(st.sampled_from([3, 4])),
        "task_tool_names": draw(
            st.sampled_from([["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"], ["Plan"]])
        ),
        "extra_fields": draw(
            st.dictionaries(
                st.sampled_from(["mode", "timezone", "tasks"]), st.sampled_from(["x", "{y}"]), max_size=2
            )
        ),
    }
    trigger = draw(st.sampled_from([0.8, 0.7, 0.5]))
    context = {
        "trigger_ratio": trigger,
        "reserve_ratio": 0.1,
        "context_buffer_ratio": draw(st.sampled_from([0.0, 0.2, 0.25, 0.3])),
        "compression_tool_enabled": draw(st.booleans()),
    }
    return {
        "now": now,
        "injection": injection,
        "context": context,
        "messages": draw(contexts(now, injection)),
        "tasks": draw(tasks),
        "cur_iter": draw(st.sampled_from([0, 0, 1, 2])),
        "window_shift": draw(st.integers(-2, 2)),
    }


def agentscope_hint(agent: Any, now: dt.datetime) -> str | None:
    from agentscope.agent import _agent

    class Clock(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> dt.datetime:  # type: ignore[override]
            return now.astimezone(tz)

    async def run() -> list[Any]:
        return [event async for event in agent._inject_runtime_state()]

    with mock.patch.object(_agent, "datetime", Clock):
        events = asyncio.run(run())
    assert len(events) <= 1
    return events[0].hint if events else None


def request_tokens(agent: Any) -> int:
    async def count() -> int:
        return int(await agent.model.count_tokens(**await agent._prepare_model_input()))

    return asyncio.run(count())


def check(situation: dict[str, Any]) -> tuple[str, ...]:
    """Compare both hints for `situation`; the causes of ours (empty when nothing is injected)."""
    from agentscope.state import Task as AsTask

    agent = build_agent(situation["injection"], situation["context"])
    agent.state.context = [as_msg(m) for m in situation["messages"]]
    agent.state.tasks_context.tasks = [
        AsTask(id=t.id, subject=t.subject, description=t.description, state=t.state, metadata={})
        for t in situation["tasks"]
    ]
    agent.state.cur_iter = situation["cur_iter"]
    tokens = request_tokens(agent)
    context = agent.context_config
    zone_ratio = context.trigger_ratio - context.context_buffer_ratio
    agent.model.context_size = max(1, round(tokens / zone_ratio) + situation["window_shift"])

    config = agent.injection_config
    params = InjectionParams(
        timezone=config.timezone,
        time_format=config.time_format,
        time_interval=config.time_interval,
        tool_retries_limit=config.tool_retries_limit,
        injection_source=config.injection_source,
        task_tool_names=tuple(config.task_tool_names),
        extra_fields=tuple(config.extra_fields.items()),
    )
    ours = runtime_injection(
        messages=situation["messages"],
        board=tuple(situation["tasks"]),
        now=situation["now"],
        params=params,
        texts=agentscope_texts(),
        agent_name=AGENT,
        cur_iter=situation["cur_iter"],
        gauge=ContextGauge(
            input_tokens=tokens,
            trigger_ratio=context.trigger_ratio,
            buffer_ratio=context.context_buffer_ratio,
            context_size=agent.model.context_size,
            compression_tool_enabled=context.compression_tool_enabled,
        ),
    )
    theirs = agentscope_hint(agent, situation["now"])
    assert (None if ours is None else ours.block.hint) == theirs
    if ours is None:
        return ()
    assert ours.block.source == SOURCE
    return ours.causes


@given(situations())
def test_runtime_injection_matches_agentscope(situation: dict[str, Any]) -> None:
    for cause in check(situation) or ("nothing",):
        event(f"injected: {cause}")


def base_situation(**changes: Any) -> dict[str, Any]:
    situation: dict[str, Any] = {
        "now": T0,
        "injection": {},
        "context": {"trigger_ratio": 0.8, "reserve_ratio": 0.1, "context_buffer_ratio": 0.2},
        "messages": [text_message("user", "hi", name="user")],
        "tasks": [],
        "cur_iter": 0,
        "window_shift": 0,
    }
    situation.update(changes)
    return situation


def test_context_length_boundary_matches() -> None:
    context = {**base_situation()["context"], "compression_tool_enabled": True}
    fired = {
        shift: "context-length" in check(base_situation(window_shift=shift, context=context))
        for shift in range(-3, 4)
    }
    assert fired[-3] and not fired[3]


def test_dst_fall_back_matches() -> None:
    texts = agentscope_texts()
    written = texts.injection_template.replace(
        "{runtime_state}",
        "<current-time>2026-10-25T02:50:00</current-time>\n<timezone>Europe/Berlin</timezone>",
    )
    messages = [
        text_message("user", "hi", name="user"),
        Message(role="assistant", blocks=(HintBlock(hint=written, source=SOURCE),), name=AGENT),
    ]
    now = dt.datetime(2026, 10, 25, 1, 10, tzinfo=dt.UTC)
    berlin = check(
        base_situation(now=now, messages=messages, cur_iter=1, injection={"timezone": "Europe/Berlin"})
    )
    utc = check(base_situation(now=now, messages=messages, cur_iter=1, injection={"timezone": "UTC"}))
    assert (berlin, utc) == (("current-time",), ())


def test_repeated_errors_with_reordered_and_invalid_json_match() -> None:
    for arguments in (
        ['{"a": 1, "b": 2}', '{"b": 2, "a": 1}', '{"a":1,"b":2}'],
        ['{"a": ', ' {"a": ', '{"a": '],
    ):
        blocks: list[Block] = []
        for i, raw in enumerate(arguments):
            blocks.append(ToolCallBlock(id=f"c{i}", name="flaky", input=raw))
            blocks.append(
                ToolResultBlock(id=f"c{i}", name="flaky", output=(TextBlock(text="x"),), state="error")
            )
        messages = [
            text_message("user", "hi", name="user"),
            Message(role="assistant", blocks=tuple(blocks), name=AGENT),
        ]
        assert check(base_situation(messages=messages, cur_iter=3)) == ("current-time", "tool-error")


def test_compress_tool_schema_is_the_agents() -> None:
    from agentscope.tool import RegisteredTool

    agent = build_agent({}, {"compression_tool_enabled": True})
    schema = RegisteredTool(tool=agent._compression_tool).get_tool_schema()
    assert json.dumps([schema], ensure_ascii=False) == (
        '[{"type": "function", "function": ' + agentscope_texts().compress_tool.function_json + "}]"
    )
