"""The OpenAI Agents presets in the lab: settings checked as the SDK checks them, the SDK's notice
under `texts: openai-agents`, request-only edits with their events, and the session's edge limits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from ctxlab.core.messages.blocks import TextBlock, ToolResultBlock
from ctxlab.core.world.script import ScriptedRound
from ctxlab.presets.openai_agents.preset import (
    SessionParams,
    TrimmerParams,
    build_session,
    build_trimmer,
    notice_of,
)
from ctxlab.presets.openai_agents.session import SessionSettings
from ctxlab.presets.openai_agents.trimmer import ToolOutputTrimmerParams, TrimNotice, trim_notice
from ctxlab.presets.registry import ENTRIES
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import CTXLAB_TEXTS, load_texts
from ctxlab.texts.agents import CTXLAB_OPENAI_AGENTS_TEXTS, openai_agents_texts
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
    assert notice_of(load_texts("openai-agents")).template == own.trim_notice
    assert notice_of(CTXLAB_TEXTS).template == CTXLAB_OPENAI_AGENTS_TEXTS.trim_notice
    item = {"type": "function_call_output", "call_id": "c", "output": "{x} " * 300}
    theirs, _ = ToolOutputTrimmer()._trim_function_call_output(item, ("look{up}",))
    notice = TrimNotice(template=own.trim_notice, unknown_tool=own.unknown_tool)
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
