"""The OpenAI Agents presets in the lab: settings checked as the SDK checks them, the SDK's notice
under `texts: openai-agents`, request-only edits with their events, the session's edge limits, and
the session's and the trimmer's incremental readings held to the plain ones."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from ctxlab.core.messages.blocks import Block, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.world.script import ScriptedRound
from ctxlab.presets.openai_agents.preset import (
    SessionParams,
    TrimmerParams,
    build_session,
    build_trimmer,
    notice_of,
)
from ctxlab.presets.openai_agents.session import SessionSettings, limit_history
from ctxlab.presets.openai_agents.trimmer import (
    ToolOutputTrimmerParams,
    TrimNotice,
    result_notice,
    trim_notice,
    trim_tool_outputs,
)
from ctxlab.presets.registry import ENTRIES
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import CTXLAB_TEXTS, load_texts
from ctxlab.texts.agents import CTXLAB_OPENAI_AGENTS_TEXTS, openai_agents_texts
from ctxlab.texts.agents_structured import CTXLAB_STRUCTURED_NOTICES
from tests.zoo.runs import run, text, tool_call, turns


def session(limit: int | None) -> StepStrategy:
    return build_session(SessionParams(session_settings=SessionSettings(limit=limit)), CTXLAB_TEXTS)


def rounds(*sizes: int) -> tuple[ScriptedRound, ...]:
    return tuple(ScriptedRound(calls=(tool_call("retrieve", '{"q": 1}', text(n)),)) for n in sizes)


@pytest.mark.parametrize(
    ("field", "value"), [("recent_turns", 0), ("max_output_chars", 0), ("preview_chars", -1)]
)
def test_settings_the_sdk_refuses_are_refused_when_the_scenario_loads(field: str, value: int) -> None:
    with pytest.raises(ValidationError, match=field):
        ENTRIES["openai-agents-trimmer"].model_validate({"preset": "openai-agents-trimmer", field: value})


def test_texts_openai_agents_reads_the_package_s_notice() -> None:
    from agents.extensions.tool_output_trimmer import ToolOutputTrimmer

    own = openai_agents_texts()
    assert own != CTXLAB_OPENAI_AGENTS_TEXTS and own.unknown_tool == "unknown_tool"
    assert own.omitted_output == "[tool output omitted]"  # the converter's placeholder (OA21)
    assert CTXLAB_OPENAI_AGENTS_TEXTS.omitted_output != own.omitted_output
    assert notice_of(load_texts("openai-agents")).template == own.trim_notice
    assert notice_of(CTXLAB_TEXTS).template == CTXLAB_OPENAI_AGENTS_TEXTS.trim_notice
    item = {"type": "function_call_output", "call_id": "c", "output": "{x} " * 300}
    theirs, _ = ToolOutputTrimmer()._trim_function_call_output(item, ("look{up}",))
    notice = TrimNotice(template=own.trim_notice, unknown_tool=own.unknown_tool, structured=own.structured)
    assert (
        theirs is not None
        and trim_notice("{x} " * 300, "look{up}", ToolOutputTrimmerParams(), notice) == (theirs["output"])
    )


@settings(max_examples=200, deadline=None)
@given(
    output=st.text(max_size=700),
    name=st.sampled_from(["", "retrieve", "ns.tool"]),
    max_output_chars=st.integers(1, 600),
    preview_chars=st.integers(0, 700),
)
def test_the_notice_and_when_it_applies_equal_the_sdk_s(
    output: str, name: str, max_output_chars: int, preview_chars: int
) -> None:
    from agents.extensions.tool_output_trimmer import ToolOutputTrimmer

    params = ToolOutputTrimmerParams(max_output_chars=max_output_chars, preview_chars=preview_chars)
    sdk = ToolOutputTrimmer(max_output_chars=max_output_chars, preview_chars=preview_chars)
    theirs, _ = sdk._trim_function_call_output({"output": output}, (name,) if name else ())
    ours = trim_notice(output, name, params, notice_of(load_texts("openai-agents")))
    assert ours == (None if theirs is None else theirs["output"])


def test_trimming_is_request_only_and_recorded_once_when_it_first_shows() -> None:
    script = turns(rounds(900), rounds(100), rounds(100), rounds(100))
    ran = run(build_trimmer(TrimmerParams(), CTXLAB_TEXTS), script)
    stored = [b for m in ran.outcome.state.context for b in m.blocks if isinstance(b, ToolResultBlock)]
    assert stored[0].output == text(900)  # the session keeps the whole output
    shown = [
        b.output[0].text
        for b in ran.sent()[-1][2].blocks
        if isinstance(b, ToolResultBlock) and isinstance(b.output[0], TextBlock)
    ]
    assert shown and "returned 900 characters" in shown[0]
    assert ran.events().count("cleared") == 1  # the first request of turn 3, not every later one
    assert ran.violations() == []


def test_each_output_is_recorded_when_it_is_first_trimmed() -> None:
    script = turns(rounds(900), rounds(900), rounds(100), rounds(100), rounds(100))
    ran = run(build_trimmer(TrimmerParams(), CTXLAB_TEXTS), script)
    assert ran.events().count("cleared") == 2  # turn 3 trims the first output, turn 4 the second


def test_a_limit_of_zero_sends_no_history_and_a_negative_one_all_of_it() -> None:
    script = turns(rounds(10, 10), rounds(10))
    nothing = run(
        build_session(SessionParams(session_settings=SessionSettings(limit=0)), CTXLAB_TEXTS), script
    )
    assert [m.role for m in nothing.sent()[-1]] == ["system", "user", "assistant"]
    assert "dropped" in nothing.events()
    everything = run(
        build_session(SessionParams(session_settings=SessionSettings(limit=-1)), CTXLAB_TEXTS), script
    )
    whole = run(build_session(SessionParams(), CTXLAB_TEXTS), script)
    assert everything.sent() == whole.sent() and "dropped" not in whole.events()


# The session and the trimmer read only what changed since the last request; each is held here
# to the plain reading of the SDK, worked out from the whole request at every call.

POOL_IDS = ("a", "b", "a", "")
TOOLS = ("retrieve", "grep", "")
OUTPUTS = (
    (TextBlock(text="é" * 40),),
    (),
    (TextBlock(text="short"),),
    (TextBlock(text="é" * 40),),
    (TextBlock(text="y" * 40), TextBlock(text="z")),
)
IdMode = Literal["engine", "halves", "shared", "loose"]


@st.composite
def stored_blocks(draw: st.DrawFn, mode: IdMode, counter: list[int]) -> tuple[Block, ...]:
    """A reply's blocks. Its calls are answered in the reply under fresh ids ("engine", as the
    engine stores them), now and then a call or a result alone ("halves"), or answered under a
    few ids other replies use too ("shared"); or calls and results come apart, under a few ids,
    in any order ("loose")."""
    blocks: list[Block] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["call", "result", "call", "result", "text", "thinking"]))
        tool, output = draw(st.sampled_from(TOOLS)), draw(st.sampled_from(OUTPUTS))
        if kind in ("text", "thinking"):
            blocks.append(TextBlock(text="ok") if kind == "text" else ThinkingBlock(thinking="plan"))
        elif mode != "loose":
            counter[0] += 1
            call_id = f"c{counter[0]}" if mode != "shared" else draw(st.sampled_from(POOL_IDS))
            alone = draw(st.sampled_from(["", "", "call", "result"])) if mode == "halves" else ""
            blocks += (ToolCallBlock(id=call_id, name=tool, input="{}"),) if alone != "result" else ()
            blocks += (ToolResultBlock(id=call_id, name=tool, output=output),) if alone != "call" else ()
        elif kind == "call":
            blocks.append(ToolCallBlock(id=draw(st.sampled_from(POOL_IDS)), name=tool, input="{}"))
        else:
            blocks.append(ToolResultBlock(id=draw(st.sampled_from(POOL_IDS)), name="r", output=output))
    return tuple(blocks)


@st.composite
def timelines(draw: st.DrawFn) -> list[tuple[Message, ...]]:
    """The stored contexts of a run, request after request: mostly a user message then a reply,
    each reply growing a block at a time (a new message object each time, the earlier messages
    the same objects), and sometimes a request asked for again."""
    mode = draw(st.sampled_from(["engine", "halves", "shared", "loose"]))
    counter = [0]
    stored: list[Message] = []
    requests: list[tuple[Message, ...]] = []
    for k in range(draw(st.integers(1, 12))):
        role = "assistant" if k % 2 else "user"
        role = draw(st.sampled_from([role, role, role, "user", "assistant", "system"]))
        message_id = draw(st.sampled_from(["", f"m{k}"]))
        if role != "assistant":
            stored.append(Message(role=role, blocks=(TextBlock(text="go"),), id=message_id))
            requests.append(tuple(stored))
            continue
        blocks = draw(stored_blocks(mode, counter))
        for end in range(1, len(blocks) + 1):
            requests.append((*stored, Message(role="assistant", blocks=blocks[:end], id=message_id)))
        stored.append(Message(role="assistant", blocks=blocks, id=message_id))
        requests.append(tuple(stored))
        if draw(st.booleans()):
            requests.append(requests[draw(st.integers(0, len(requests) - 1))])
    return requests


def reference_limit(
    messages: tuple[Message, ...], limit: int | None
) -> tuple[tuple[Message, ...], frozenset[str]]:
    """The session's history read plainly: every item listed (thinking a reasoning item), the last
    `limit` kept, partners checked over all of them, thinking dropped with the call it precedes."""
    current = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if current is None:
        return messages, frozenset()
    history = messages[:current]
    items = [
        (m, b)
        for m, message in enumerate(history)
        for b in ([None] if message.role != "assistant" else list(range(len(message.blocks))))
    ]
    start = 0 if limit is None or limit < 0 else max(0, len(items) - limit)

    def block(item: tuple[int, int | None]) -> object:
        return None if item[1] is None else history[item[0]].blocks[item[1]]

    window = items[start:]
    results = {x.id for i in window if isinstance(x := block(i), ToolResultBlock)}
    lone = [isinstance(x := block(i), ToolCallBlock) and x.id not in results for i in window]
    for k in range(len(window)):
        if isinstance(block(window[k]), ThinkingBlock):
            after = [j for j in range(k + 1, len(window)) if not isinstance(block(window[j]), ThinkingBlock)]
            lone[k] = bool(after) and lone[after[0]]
    kept = [i for i, gone in zip(window, lone, strict=True) if not gone]
    if limit is not None:
        calls = {x.id for i in kept if isinstance(x := block(i), ToolCallBlock)}
        kept = [i for i in kept if not (isinstance(x := block(i), ToolResultBlock) and x.id not in calls)]
    if len(kept) == len(items):
        return messages, frozenset()
    out: list[Message] = []
    for m, message in enumerate(history):
        if message.role != "assistant":
            out.extend([message] if (m, None) in kept else [])
            continue
        sent = tuple(x for b, x in enumerate(message.blocks) if (m, b) in kept)
        out.extend(
            [message] if len(sent) == len(message.blocks) else [message.with_blocks(sent)] if sent else []
        )
    dropped = frozenset(
        f"{history[m].id or m}:{'' if b is None else b}" for m, b in items if (m, b) not in kept
    )
    return (*out, *messages[current:]), dropped


@settings(max_examples=300, deadline=None)
@given(requests=timelines(), limit=st.sampled_from([None, -1, 0, 1, 2, 3, 5, 40]))
def test_the_session_s_history_equals_the_plain_reading_at_every_request(
    requests: list[tuple[Message, ...]], limit: int | None
) -> None:
    for messages in requests:
        ours = limit_history(messages, SessionSettings(limit=limit))
        expected, dropped = reference_limit(messages, limit)
        assert ours.messages == expected and ours.dropped == dropped
        assert (ours.messages is messages) == (expected is messages)


def reference_trim(
    messages: tuple[Message, ...], params: ToolOutputTrimmerParams, notice: TrimNotice
) -> tuple[tuple[Message, ...], tuple[str, ...]]:
    """`ToolOutputTrimmer` read plainly: every result before the boundary looked at, named by
    the last call with its id anywhere in the request."""
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    boundary = users[-params.recent_turns] if len(users) >= params.recent_turns else 0
    names = {b.id: b.name for m in messages for b in m.blocks if isinstance(b, ToolCallBlock) and b.id}
    out, trimmed = list(messages), []
    for m, message in enumerate(messages[:boundary]):
        blocks = list(message.blocks)
        for b, block in enumerate(blocks):
            name = names.get(block.id, "") if isinstance(block, ToolResultBlock) else ""
            if not isinstance(block, ToolResultBlock) or not (
                params.trimmable_tools is None or (name and name in params.trimmable_tools)
            ):
                continue
            summary = result_notice(block, name, params, notice)
            if summary is not None:
                blocks[b] = ToolResultBlock(
                    id=block.id, name=block.name, output=(TextBlock(text=summary),), state=block.state
                )
                trimmed.append(block.id)
        out[m] = message if blocks == list(message.blocks) else message.with_blocks(tuple(blocks))
    return (messages if not trimmed else tuple(out)), tuple(trimmed)


@settings(max_examples=300, deadline=None)
@given(
    requests=timelines(),
    recent_turns=st.integers(1, 3),
    max_output_chars=st.sampled_from([1, 4, 20]),
    preview_chars=st.sampled_from([0, 3]),
    trimmable_tools=st.sampled_from([None, ("retrieve",), ("grep", "retrieve")]),
)
def test_trimming_equals_the_plain_reading_at_every_request(
    requests: list[tuple[Message, ...]],
    recent_turns: int,
    max_output_chars: int,
    preview_chars: int,
    trimmable_tools: tuple[str, ...] | None,
) -> None:
    params = ToolOutputTrimmerParams(
        recent_turns=recent_turns,
        max_output_chars=max_output_chars,
        preview_chars=preview_chars,
        trimmable_tools=trimmable_tools,
    )
    notice = TrimNotice(
        template="{name}:{chars}:{preview_chars}:{preview}",
        unknown_tool="?",
        structured=CTXLAB_STRUCTURED_NOTICES,
    )
    for k, messages in enumerate(requests):
        settings_now = (
            params if k % 3 else ToolOutputTrimmerParams(recent_turns=1, max_output_chars=20, preview_chars=2)
        )
        ours = trim_tool_outputs(messages, settings_now, notice)
        expected, trimmed = reference_trim(messages, settings_now, notice)
        assert ours.messages == expected and ours.trimmed == trimmed
        assert [a is b for a, b in zip(ours.messages, messages, strict=True)] == [
            a is b for a, b in zip(expected, messages, strict=True)
        ]
