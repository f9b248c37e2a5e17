"""Runtime-state hints: every rule of AgentScope's injection, named, with edge cases."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, replace
from typing import Any

import pytest

from ctxlab.core.agentscope.inject import (
    DEFAULT_INJECTION_SOURCE,
    ContextGauge,
    InjectionParams,
    current_time_text,
    needs_input_tokens,
    read_time,
    recorded_time,
    repeated_tool_error,
    resolve_timezone,
    runtime_hint,
    runtime_injection,
)
from ctxlab.core.agentscope.tasks import Board, Task
from ctxlab.core.messages.blocks import Block, HintBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.texts import CTXLAB_TEXTS


@dataclass(frozen=True, slots=True)
class Plain:
    """Hint texts that show their placeholders plainly."""

    injection_template: str = "[{runtime_state}]"
    tool_retries_hint: str = "{tool_name} x{count}"
    tasks_hint: str = "ip={in_progress} p={pending}"
    context_length_hint: str = "n={count} at={trigger}"
    context_length_compress_suffix: str = " call {tool}"
    compress_tool: ToolSchema = CTXLAB_TEXTS.compress_tool


T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
AGENT = "agent"
SOURCE = DEFAULT_INJECTION_SOURCE
GAUGE = ContextGauge(
    input_tokens=0, trigger_ratio=0.8, buffer_ratio=0.2, context_size=4000, compression_tool_enabled=False
)


def inject(
    messages: list[Message] | None = None,
    *,
    board: Board = (),
    now: dt.datetime = T0,
    cur_iter: int = 1,
    params: InjectionParams | None = None,
    gauge: ContextGauge = GAUGE,
    **param_changes: Any,
) -> str | None:
    """The injected hint text, or None."""
    hint = runtime_hint(
        messages=messages if messages is not None else [text_message("user", "hi")],
        board=board,
        now=now,
        params=replace(params or InjectionParams(), **param_changes),
        texts=Plain(),
        agent_name=AGENT,
        cur_iter=cur_iter,
        gauge=gauge,
    )
    return None if hint is None else str(hint.hint)


def reply(*blocks: Block, name: str = AGENT, role: str = "assistant") -> Message:
    return Message(role=role, blocks=blocks, name=name)  # type: ignore[arg-type]


def own(text: str) -> HintBlock:
    return HintBlock(hint=text, source=SOURCE)


def time_hint(stamp: str, zone: str | None = "UTC") -> HintBlock:
    text = f"<current-time>{stamp}</current-time>"
    return own(text + (f"\n<timezone>{zone}</timezone>" if zone else ""))


def after(messages: list[Message], minutes: float) -> str | None:
    return inject(messages, now=T0 + dt.timedelta(minutes=minutes))


HISTORY = [text_message("user", "hi"), reply(time_hint("2026-01-01T00:00:00"))]
TIME_ONLY = "[<current-time>2026-01-01T00:00:00</current-time>\n<timezone>UTC</timezone>]"


# --- time -------------------------------------------------------------------------------------


def test_time_is_injected_when_none_is_recorded() -> None:
    assert inject() == TIME_ONLY
    injection = runtime_injection(
        messages=[],
        board=(),
        now=T0,
        params=InjectionParams(),
        texts=Plain(),
        agent_name=AGENT,
        cur_iter=1,
        gauge=GAUGE,
    )
    assert injection is not None and injection.causes == ("current-time",)
    assert injection.block.source == SOURCE
    assert injection.fields == (("current-time", "2026-01-01T00:00:00"), ("timezone", "UTC"))


def test_interval_boundaries_are_inclusive() -> None:
    assert after(HISTORY, 0) is None
    assert after(HISTORY, 30) is None  # exactly the 0.5 h interval
    assert after(HISTORY, 30 + 1 / 60_000) is not None  # one microsecond more
    assert inject(HISTORY, now=T0 + dt.timedelta(hours=2), time_interval=2.0) is None


def test_quirk_time_interval_zero_injects_unless_the_clock_stood_still() -> None:
    assert inject(HISTORY, time_interval=0.0) is None
    assert inject(HISTORY, now=T0 + dt.timedelta(microseconds=1), time_interval=0.0) is not None


def test_quirk_a_clock_that_went_backwards_reinjects() -> None:
    hint = after(HISTORY, -1)
    assert hint == "[<current-time>2025-12-31T23:59:00</current-time>\n<timezone>UTC</timezone>]"


def test_quirk_seconds_are_truncated_so_elapsed_counts_from_the_written_second() -> None:
    late = dt.datetime(2026, 1, 1, 0, 0, 59, 900000, tzinfo=dt.UTC)
    first = inject(now=late)
    assert first is not None and "<current-time>2026-01-01T00:00:59</current-time>" in first
    history = [text_message("user", "hi"), reply(own(first))]
    assert inject(history, now=late + dt.timedelta(minutes=30)) is not None  # 30 min 0.9 s after the mark


def test_timezone_change_mid_conversation_uses_the_recorded_zone() -> None:
    # 08:00 in Shanghai is 00:00 UTC; ten minutes later, now configured in UTC.
    history = [text_message("user", "hi"), reply(time_hint("2026-01-01T08:00:00", "Asia/Shanghai"))]
    assert inject(history, now=T0 + dt.timedelta(minutes=10)) is None
    # Without the zone next to it the recorded time is read in the configured zone: 8 h ahead.
    bare = [text_message("user", "hi"), reply(time_hint("2026-01-01T08:00:00", None))]
    assert inject(bare, now=T0 + dt.timedelta(minutes=10)) is not None
    assert inject(bare, now=T0 + dt.timedelta(minutes=10), timezone="Asia/Shanghai") is None


def test_now_is_written_in_the_configured_zone() -> None:
    hint = inject(timezone="Asia/Shanghai")
    assert hint == "[<current-time>2026-01-01T08:00:00</current-time>\n<timezone>Asia/Shanghai</timezone>]"


def test_quirk_an_invalid_zone_falls_back_to_utc_but_is_written_as_given() -> None:
    assert inject(timezone="Mars/Base") == (
        "[<current-time>2026-01-01T00:00:00</current-time>\n<timezone>Mars/Base</timezone>]"
    )
    assert resolve_timezone("") is dt.UTC


def test_quirk_a_date_less_format_parses_to_1900_and_reinjects_every_step() -> None:
    history = [text_message("user", "hi"), reply(time_hint("00:00"))]
    assert (
        inject(history, time_format="%H:%M")
        == "[<current-time>00:00</current-time>\n<timezone>UTC</timezone>]"
    )
    recorded = recorded_time("<current-time>00:00</current-time>", InjectionParams(time_format="%H:%M"))
    assert recorded is not None and recorded.year == 1900


def test_quirk_a_time_that_does_not_parse_reinjects() -> None:
    history = [text_message("user", "hi"), reply(time_hint("2026-01-01T00:00:00"))]
    assert inject(history, time_format="%Y/%m/%d %H:%M") is not None
    broken = [text_message("user", "hi"), reply(own("<current-time>2026-01-01T00:00:00"))]
    assert inject(broken) is not None


def test_an_aware_format_keeps_its_own_offset() -> None:
    params = InjectionParams(time_format="%Y-%m-%dT%H:%M:%S%z", timezone="Asia/Shanghai")
    history = [text_message("user", "hi"), reply(time_hint("2026-01-01T00:00:00+0000", "Asia/Shanghai"))]
    assert inject(history, params=params, now=T0 + dt.timedelta(minutes=10)) is None


def test_quirk_dst_fall_back_compares_wall_clocks_and_reinjects_spuriously() -> None:
    # 02:50 CEST (fold 0) is 00:50 UTC; 20 minutes later it is 02:10 CET. Python subtracts two
    # times of the same zone by wall clock: -40 minutes, so the time is injected again.
    history = [text_message("user", "hi"), reply(time_hint("2026-10-25T02:50:00", "Europe/Berlin"))]
    now = dt.datetime(2026, 10, 25, 1, 10, tzinfo=dt.UTC)
    assert inject(history, now=now, timezone="Europe/Berlin") is not None
    assert inject(history, now=now, timezone="UTC") is None  # different zones: true elapsed time


def test_only_own_hints_in_assistant_messages_record_a_time() -> None:
    stamp = "<current-time>2026-01-01T00:00:00</current-time>"
    assert inject([reply(HintBlock(hint=stamp, source="other"))]) is not None
    assert inject([reply(own(stamp), role="user", name="user")]) is not None
    assert inject([reply(TextBlock(text=stamp))]) is not None
    assert inject([reply(own(stamp), name="another-agent")]) is None  # any agent's hint counts


def test_the_newest_hint_that_records_a_time_is_used() -> None:
    history = [
        reply(time_hint("2026-01-01T00:00:00")),
        reply(own("<tasks>...</tasks>")),
        reply(time_hint("2025-12-31T22:00:00")),
    ]
    assert inject(history[:2]) is None
    assert after(history, 0) is not None  # the newest time is two hours old


def test_a_hint_given_as_parts_is_read_as_its_text() -> None:
    parts = (TextBlock(text="<current-time>2026-01-01T00:00:00</current-"), TextBlock(text="time>"))
    assert inject([reply(HintBlock(hint=parts, source=SOURCE))]) is None


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        inject(now=dt.datetime(2026, 1, 1))


def test_current_time_text_for_the_compression_prompt() -> None:
    params = InjectionParams(timezone="Asia/Shanghai")
    assert current_time_text(T0, params) == "2026-01-01T08:00:00 (Asia/Shanghai)"


# --- tasks ------------------------------------------------------------------------------------

OPEN: Board = (
    Task(id="1", subject="a", description="", state="in_progress"),
    Task(id="2", subject="b", description=""),
    Task(id="3", subject="c", description=""),
    Task(id="4", subject="d", description="", state="completed"),
)


def call(name: str, call_id: str = "c1", arguments: str = "{}") -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name=name, input=arguments)


def test_tasks_hint_when_open_tasks_are_not_in_context() -> None:
    assert inject(HISTORY, board=OPEN) == "[<tasks>ip=1 p=2</tasks>]"
    assert inject(HISTORY, board=OPEN[3:]) is None  # only completed tasks


def test_any_task_tool_call_in_an_assistant_message_tells_of_tasks() -> None:
    failed = ToolResultBlock(id="c1", name="TaskList", output=(TextBlock(text="boom"),), state="error")
    assert inject([*HISTORY, reply(call("TaskList"), failed)], board=OPEN) is None
    assert inject([*HISTORY, reply(call("TaskGet"), name="helper")], board=OPEN) is None
    assert inject([*HISTORY, reply(call("Read"))], board=OPEN) == "[<tasks>ip=1 p=2</tasks>]"
    assert inject([*HISTORY, reply(call("Plan"))], board=OPEN, task_tool_names=("Plan",)) is None


def test_tasks_hint_returns_after_the_task_calls_are_compressed_away() -> None:
    with_calls = [text_message("user", "go"), reply(time_hint("2026-01-01T00:00:00"), call("TaskCreate"))]
    assert inject(with_calls, board=OPEN) is None
    compressed = [reply(time_hint("2026-01-01T00:00:00"))]  # the summary replaced the calls
    first = inject(compressed, board=OPEN)
    assert first == "[<tasks>ip=1 p=2</tasks>]"
    assert inject([*compressed, reply(own(first))], board=OPEN) is None  # said once


def test_quirk_an_extra_field_named_tasks_hides_the_tasks_hint() -> None:
    hint = inject(extra_fields=(("tasks", "none"),))
    assert hint is not None and "<tasks>none</tasks>" in hint
    assert inject([reply(own(hint))], board=OPEN) is None


def test_quirk_scan_stops_once_time_and_tasks_are_settled() -> None:
    # A stale time hint older than a newer one is never read.
    history = [reply(own("<current-time>garbage</current-time>")), reply(time_hint("2026-01-01T00:00:00"))]
    assert inject(history) is None


# --- context length ---------------------------------------------------------------------------


def gauge(tokens: int | None, tool: bool = False, **changes: Any) -> ContextGauge:
    return replace(GAUGE, input_tokens=tokens, compression_tool_enabled=tool, **changes)


def test_quirk_context_length_is_strictly_above_the_float_zone_start() -> None:
    # (0.8 - 0.2) * 4000 is 2400.0000000000005 in floating point.
    assert inject(HISTORY, cur_iter=0, gauge=gauge(2400)) is None
    assert (
        inject(HISTORY, cur_iter=0, gauge=gauge(2401)) == "[<context-length>n=2401 at=3200</context-length>]"
    )
    exact = gauge(1000, trigger_ratio=0.5, buffer_ratio=0.25)  # 0.25 * 4000 is exactly 1000.0
    assert inject(HISTORY, cur_iter=0, gauge=exact) is None
    assert inject(HISTORY, cur_iter=0, gauge=replace(exact, input_tokens=1001)) is not None


def test_context_length_is_checked_only_at_the_first_step_of_a_reply() -> None:
    assert inject(HISTORY, cur_iter=1, gauge=gauge(3900)) is None
    assert inject(HISTORY, cur_iter=1, gauge=gauge(None)) is None
    with pytest.raises(ValueError, match="input_tokens is needed"):
        inject(HISTORY, cur_iter=0, gauge=gauge(None))
    assert needs_input_tokens(InjectionParams(inject_runtime_state=False), 0) is False


def test_the_trigger_shown_is_truncated() -> None:
    hint = inject(HISTORY, cur_iter=0, gauge=gauge(3000, trigger_ratio=0.77, context_size=3333))
    assert hint == "[<context-length>n=3000 at=2566</context-length>]"


def test_compress_now_suffix_needs_the_tool_and_no_task_in_progress() -> None:
    aware = [*HISTORY, reply(call("TaskList"))]
    suffix = "[<context-length>n=2500 at=3200 call CompressContext</context-length>]"
    assert inject(aware, cur_iter=0, gauge=gauge(2500, tool=True)) == suffix
    assert inject(aware, cur_iter=0, gauge=gauge(2500, tool=True), board=OPEN[1:]) == suffix  # pending only
    assert inject(aware, cur_iter=0, gauge=gauge(2500, tool=True), board=OPEN) == (
        "[<context-length>n=2500 at=3200</context-length>]"
    )


# --- repeated tool errors ---------------------------------------------------------------------


def failing(*inputs: str, name: str = "flaky", states: str = "") -> Message:
    blocks: list[Block] = []
    for i, raw in enumerate(inputs):
        state = {"s": "success", "e": "error"}[states[i]] if states else "error"
        blocks.append(ToolCallBlock(id=f"c{i}", name=name, input=raw))
        blocks.append(ToolResultBlock(id=f"c{i}", name=name, output=(TextBlock(text="x"),), state=state))  # type: ignore[arg-type]
    return reply(time_hint("2026-01-01T00:00:00"), *blocks)


def streak(message: Message, limit: int = 3) -> tuple[str, int] | None:
    found = repeated_tool_error([text_message("user", "hi"), message], AGENT, limit)
    return None if found is None else (found.tool_name, found.count)


def test_three_identical_failures_give_the_hint_and_the_count_grows() -> None:
    assert streak(failing("{}", "{}")) is None
    assert streak(failing("{}", "{}", "{}")) == ("flaky", 3)
    assert inject([text_message("user", "hi"), failing("{}", "{}", "{}", "{}")]) == (
        "[<tool-error>flaky x4</tool-error>]"
    )
    assert streak(failing("{}", "{}", "{}"), limit=4) is None


def test_arguments_are_compared_after_json_normalisation() -> None:
    assert streak(failing('{"a": 1, "b": [2]}', '{"b":[2],"a":1}', ' {"a": 1, "b": [2]} ')) == ("flaky", 3)
    assert streak(failing('{"a": 1}', '{"a": 1.0}', '{"a": 1}')) is None


def test_quirk_invalid_json_arguments_are_compared_stripped() -> None:
    assert streak(failing('{"a": ', ' {"a": ', '{"a":  \n')) == ("flaky", 3)
    assert streak(failing('{"a":1', '{"a": 1', '{"a": 1')) is None  # only the ends are stripped


def test_only_the_newest_run_of_equal_arguments_counts() -> None:
    assert streak(failing('{"a": 2}', '{"a": 1}', '{"a": 1}', '{"a": 1}')) == ("flaky", 3)
    assert streak(failing('{"a": 1}', '{"a": 1}', '{"a": 2}', '{"a": 1}')) is None


def test_a_success_or_another_tool_breaks_the_streak() -> None:
    assert streak(failing("{}", "{}", "{}", "{}", states="eees")) is None
    assert streak(failing("{}", "{}", "{}", "{}", states="esee")) is None
    mixed = failing("{}", "{}", "{}")
    other = ToolResultBlock(id="z", name="other", output=(), state="error")
    assert streak(mixed.appended(ToolCallBlock(id="z", name="other", input="{}"), other)) is None


def test_quirk_a_result_without_its_call_compares_as_empty_arguments() -> None:
    blocks = [ToolResultBlock(id=f"r{i}", name="flaky", output=(), state="error") for i in range(3)]
    assert streak(reply(*blocks)) == ("flaky", 3)


def test_tool_errors_are_read_only_from_this_agents_last_message() -> None:
    message = failing("{}", "{}", "{}")
    assert streak(replace(message, name="helper")) is None
    assert repeated_tool_error([message, text_message("user", "again")], AGENT, 3) is None


def test_quirk_the_tool_name_is_filled_before_the_count() -> None:
    message = reply(
        *[ToolCallBlock(id=f"c{i}", name="{count}", input="{}") for i in range(3)],
        *[ToolResultBlock(id=f"c{i}", name="{count}", output=(), state="error") for i in range(3)],
    )
    history = [text_message("user", "hi"), reply(time_hint("2026-01-01T00:00:00")), message]
    assert inject(history) == "[<tool-error>3 x3</tool-error>]"
    assert inject(history, tool_retries_hint="<{tool_name}|{count}>") == "[<tool-error><3|3></tool-error>]"


# --- assembly ---------------------------------------------------------------------------------


def test_all_lines_in_order() -> None:
    history = [text_message("user", "hi"), failing("{}", "{}", "{}")]
    hint = inject(history, board=OPEN, cur_iter=0, now=T0 + dt.timedelta(hours=1), gauge=gauge(3000))
    assert hint == (
        "[<current-time>2026-01-01T01:00:00</current-time>\n<timezone>UTC</timezone>\n"
        "<tasks>ip=1 p=2</tasks>\n<context-length>n=3000 at=3200</context-length>\n"
        "<tool-error>flaky x3</tool-error>]"
    )


def test_extra_fields_never_trigger_but_ride_along() -> None:
    extras = (("mode", "plan"), ("timezone", "Asia/Tokyo"))
    assert inject(HISTORY, extra_fields=extras) is None
    assert inject(extra_fields=extras) == (
        "[<current-time>2026-01-01T00:00:00</current-time>\n<timezone>Asia/Tokyo</timezone>\n<mode>plan</mode>]"
    )


def test_the_template_is_filled_with_replace_keeping_other_braces() -> None:
    hint = inject(template='{"x": 1} {runtime_state} {runtime_state}')
    assert hint == '{"x": 1} ' + TIME_ONLY[1:-1] + " " + TIME_ONLY[1:-1]


def test_switched_off_injects_nothing() -> None:
    assert inject(inject_runtime_state=False, cur_iter=0, gauge=gauge(None)) is None


def test_ctxlab_wording_wraps_the_fields() -> None:
    hint = runtime_hint(
        messages=[],
        board=(),
        now=T0,
        params=InjectionParams(),
        texts=CTXLAB_TEXTS,
        agent_name=AGENT,
        cur_iter=1,
        gauge=GAUGE,
    )
    assert hint is not None and CTXLAB_TEXTS.injection_template.split("{runtime_state}")[0] in str(hint.hint)


# --- parameters -------------------------------------------------------------------------------


def test_params_mirror_the_injection_config() -> None:
    from dataclasses import fields

    from ctxlab.presets.agentscope.config import DEFAULT_INJECTION_SOURCE as CONFIG_SOURCE
    from ctxlab.presets.agentscope.config import DEFAULT_TASK_TOOL_NAMES, InjectionConfig

    config = InjectionConfig()
    params = InjectionParams()
    names = {f.name for f in fields(InjectionParams)}
    assert names == set(InjectionConfig.model_fields) - {"context_buffer_ratio"}  # passed in force
    for name in names - {"task_tool_names", "extra_fields"}:
        assert getattr(params, name) == getattr(config, name), name
    assert params.task_tool_names == tuple(config.task_tool_names) == DEFAULT_TASK_TOOL_NAMES
    assert params.extra_fields == tuple(config.extra_fields.items())
    assert DEFAULT_INJECTION_SOURCE == CONFIG_SOURCE


def test_params_defaults_are_agentscopes() -> None:
    from agentscope.agent import InjectionConfig as AsInjectionConfig

    theirs = AsInjectionConfig()
    params = InjectionParams()
    for name in ("inject_runtime_state", "timezone", "time_format", "time_interval", "tool_retries_limit"):
        assert getattr(params, name) == getattr(theirs, name), name
    assert params.injection_source == theirs.injection_source
    assert list(params.task_tool_names) == theirs.task_tool_names
    assert dict(params.extra_fields) == theirs.extra_fields


# --- the scan as a fold, and resumed ----------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import ctxlab.core.agentscope.inject as inject_module  # noqa: E402
from ctxlab.core.agentscope.inject import HintScan, HintScanner, scan_hints  # noqa: E402
from ctxlab.core.messages.memo import LeadingFold  # noqa: E402

_HINT_TEXTS = st.sampled_from(
    [
        "<current-time>2026-01-01T00:00:00</current-time>",
        "<tasks>ip=1 p=0</tasks>",
        "plain",
        "<current-time>x",
    ]
)
_SCAN_BLOCKS = st.one_of(
    st.builds(HintBlock, hint=_HINT_TEXTS, source=st.sampled_from([SOURCE, "other", None])),
    st.builds(
        ToolCallBlock, id=st.just("c"), name=st.sampled_from(["TaskList", "Read"]), input=st.just("{}")
    ),
    st.builds(TextBlock, text=_HINT_TEXTS),
)
_SCAN_MESSAGES = st.builds(
    Message, role=st.sampled_from(["user", "assistant"]), blocks=st.lists(_SCAN_BLOCKS, max_size=4).map(tuple)
)


def newest_first_scan(messages: list[Message], params: InjectionParams) -> HintScan:
    """The scan as AgentScope writes it: newest message and block first, stopping once settled."""
    last: str | None = None
    told = False
    for message in reversed(messages):
        if last is not None and told:
            break
        if message.role != "assistant":
            continue
        for block in reversed(message.blocks):
            if isinstance(block, HintBlock) and block.source == params.injection_source:
                if last is None and "<current-time>" in block.text:
                    last = block.text
                told = told or "<tasks>" in block.text
            elif isinstance(block, ToolCallBlock) and block.name in params.task_tool_names:
                told = True
    return HintScan(last, told)


@given(
    st.lists(_SCAN_MESSAGES, max_size=6), st.lists(st.tuples(st.integers(0, 3), _SCAN_MESSAGES), max_size=6)
)
def test_the_fold_equals_the_newest_first_scan_and_resumes_after_any_edit(
    history: list[Message], edits: list[tuple[int, Message]]
) -> None:
    params = InjectionParams()
    scanner = HintScanner(params)
    request = list(history)
    for op, message in [(0, history[0] if history else text_message("user", "x")), *edits]:
        if op == 0:
            request.append(message)
        elif op == 1 and request:
            request.pop(0)
        elif op == 2 and request:
            request[-1] = request[-1].appended(*message.blocks)
        elif op == 3 and request:
            request[-1] = message
        assert scan_hints(request, params) == newest_first_scan(request, params)
        assert scanner.scan(request) == scan_hints(request, params)


_SPARSE_BLOCKS = st.sampled_from(
    [
        HintBlock(hint="<current-time>2026-01-01T00:00:00</current-time>", source=SOURCE),
        HintBlock(hint="<current-time>2026-01-02T00:00:00</current-time><tasks>p=1</tasks>", source=SOURCE),
        HintBlock(hint="<current-time>2026-01-03T00:00:00</current-time>", source="other"),
        ToolCallBlock(id="t", name="TaskList", input="{}"),
        *[ToolCallBlock(id=f"r{i}", name="Read", input="{}") for i in range(4)],
        *[TextBlock(text=f"t{i}") for i in range(4)],
    ]
)
"""Blocks of a long reply, few of them telling anything: what a resumed read must not miss is
then often one block far back."""


@given(st.lists(_SPARSE_BLOCKS, min_size=20, max_size=60), st.lists(st.integers(0, 59), max_size=3))
def test_a_long_reply_grown_a_block_at_a_time_scans_as_the_newest_first_scan(
    blocks: list[Block], forks: list[int]
) -> None:
    """A reply past `RESUMED_BLOCKS` is read by resuming the read of the blocks it begins with;
    a copy grown from an earlier version of it (a fork) reads the same as read whole."""
    params = InjectionParams()
    scanner = HintScanner(params)
    first = text_message("user", "go")
    versions = [reply()]
    for block in blocks:
        versions.append(versions[-1].appended(block))
    for at in forks:
        versions.append(versions[min(at, len(versions) - 1)].appended(*reversed(blocks)))
    for message in versions:
        request = [first, message]
        assert scanner.scan(request) == newest_first_scan(request, params)


def test_a_long_reply_costs_the_scan_the_blocks_it_gained(monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[Block] = []

    def counted(scan: HintScan, block: Block, params: InjectionParams) -> HintScan:
        steps.append(block)
        return inject_module.scan_block(scan, block, params)

    monkeypatch.setattr(inject_module, "_SCANNED", LeadingFold(counted))
    params = InjectionParams()
    scanner = HintScanner(params)
    hint = time_hint("2026-01-01T00:00:00")
    message = reply(hint)
    for i in range(2000):
        message = message.appended(ToolCallBlock(id=f"c{i}", name="Read", input="{}"))
        scanner.scan([text_message("user", "go"), message])
    assert len(steps) < 2000 + 2 * 16
    assert scanner.scan([text_message("user", "go"), message]).last_time_text == hint.text
    assert scanner.scan([text_message("user", "go"), message.appended(call("TaskList"))]).told_tasks


_STREAK_BLOCKS = st.sampled_from(
    [
        ToolCallBlock(id="a", name="f", input="{}"),
        ToolCallBlock(id="b", name="g", input="{}"),
        ToolCallBlock(id="c", name="f", input='{"x": 1}'),
        ToolResultBlock(id="a", name="f", output=(), state="error"),
        ToolResultBlock(id="b", name="g", output=(), state="error"),
        ToolResultBlock(id="c", name="f", output=(), state="error"),
        ToolResultBlock(id="z", name="f", output=(), state="error"),
        ToolResultBlock(id="a", name="f", output=(), state="success"),
        TextBlock(text="t"),
    ]
)


def whole_streak(message: Message, limit: int) -> tuple[str, int] | None:
    """The streak as AgentScope reads it: every result of the message listed, then the newest run
    of same-name errors whose arguments equal the newest one's (the arguments drawn here are
    already in normal form, so they are compared as written)."""
    results = [b for b in message.blocks if isinstance(b, ToolResultBlock)]
    if not results or results[-1].state != "error":
        return None
    name = results[-1].name
    run = []
    for result in reversed(results):
        if result.state != "error" or result.name != name:
            break
        run.append(result.id)
    inputs = {b.id: b.input for b in message.blocks if isinstance(b, ToolCallBlock)}
    count = next((i for i, r in enumerate(run) if inputs.get(r, "") != inputs.get(run[0], "")), len(run))
    return (name, count) if len(run) >= limit and count >= limit else None


@given(st.lists(_STREAK_BLOCKS, max_size=12), st.integers(1, 4))
def test_the_streak_read_newest_first_equals_the_streak_of_every_result(
    blocks: list[Block], limit: int
) -> None:
    message = reply(*blocks)
    assert streak(message, limit) == whole_streak(message, limit)


@pytest.fixture
def host_in_new_york(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The process's local zone set to America/New_York, as a developer's laptop may have it."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("host_in_new_york")
def test_a_zone_name_is_read_back_the_same_whatever_the_host_s_zone() -> None:
    """`strptime`'s %Z reads the host's own zone names: on this host it reads `EST`, on a UTC
    server not. A run reads as on the server, so results do not depend on the machine."""
    params = InjectionParams(time_format="%Y-%m-%dT%H:%M:%S %Z", timezone="America/New_York")
    written = "<current-time>2026-01-01T08:00:00 EST</current-time><timezone>America/New_York</timezone>"
    assert dt.datetime.strptime("2026-01-01T08:00:00 EST", params.time_format)  # the host reads it
    assert recorded_time(written, params) is None
    assert recorded_time(written.replace("EST", "UTC"), params) == dt.datetime(
        2026, 1, 1, 8, tzinfo=resolve_timezone("America/New_York")
    )
    assert read_time("2026-01-01 gmt", "%Y-%m-%d %Z") == dt.datetime(2026, 1, 1)
    assert read_time("2026-01-01 UTC %Z", "%Y-%m-%d %Z %%Z") == dt.datetime(2026, 1, 1)
