"""ctxlab's OpenAI Agents presets against a real `agents.Agent` run by `Runner` (openai-agents
0.24.0) with the SDK's own scripted model, on generated workloads: the same requests call for
call (messages in the OpenAI chat view, tools), so trimming and the session limit act at the same
calls on the same items."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from agents.models import chatcmpl_converter
from agents.models.chatcmpl_converter import Converter
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ctxlab.core.agentscope.toolresult import merge_text_parts
from ctxlab.core.messages.blocks import DataBlock, TextBlock
from ctxlab.core.wire.protocol import violations
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.presets.openai_agents.structured import api_parts, payload_of
from tests.parity.oa_driver import MODEL, OAConfig, OATrace, run_openai_agents, user_input
from tests.parity.oa_lab import run_lab
from tests.parity.processes import outputs_under_two_hash_seeds
from tests.parity.workloads import CJK, PROSE, TOOLS

NOTICE_HEAD = "[Trimmed: "


def compare(script: Script, config: OAConfig) -> tuple[OATrace, OATrace]:
    theirs, ours = run_openai_agents(script, config), run_lab(script, config)
    assert theirs.error is None and ours.error is None, (theirs.error, ours.error)
    assert len(ours.calls) == len(theirs.calls)
    for index, (mine, real) in enumerate(zip(ours.calls, theirs.calls, strict=True)):
        assert mine.messages == real.messages, index
        assert mine.tools == real.tools, index
    return ours, theirs


def sized(size: int, cjk: bool) -> str:
    base = CJK if cjk else PROSE
    return (base * (size // len(base) + 1))[:size]


@st.composite
def rounds(draw: st.DrawFn) -> ScriptedRound:
    calls = []
    for n in range(draw(st.integers(1, 3))):  # parallel calls
        size = draw(st.sampled_from([800, 0, 10, 199, 200, 230, 499, 500, 501, 3000]))
        calls.append(
            ScriptedCall(
                tool=draw(st.sampled_from(["retrieve", "figure"])),
                input=json.dumps({"query": f"q{n}"}),
                result=(TextBlock(text=sized(size, draw(st.integers(0, 3)) == 0)),),
                error=draw(st.integers(0, 6)) == 0,
            )
        )
    text = draw(st.one_of(st.none(), st.sampled_from(["Looking.", sized(300, False)])))
    thinking = draw(st.sampled_from([None, None, "", "Which passage first?", sized(600, True)]))
    return ScriptedRound(thinking=thinking, text=text, calls=tuple(calls))


@st.composite
def scripts(draw: st.DrawFn) -> Script:
    turns = []
    for t in range(draw(st.integers(1, 5) if draw(st.integers(0, 5)) == 5 else st.integers(2, 5))):
        long_loop = draw(st.integers(0, 6)) == 6
        count = (
            draw(st.integers(12, 20))
            if long_loop
            else draw(st.integers(0, 5) if draw(st.booleans()) else st.integers(1, 5))
        )
        user = TextBlock(text=draw(st.sampled_from([f"Turn {t}: go on.", sized(400, True)])))
        turns.append(
            ScriptedTurn(user=(user,), rounds=tuple(draw(rounds()) for _ in range(count)), final=f"Done {t}.")
        )
    return assign_call_ids(Script(system_prompt=sized(200, False), tools=TOOLS, turns=tuple(turns)))


LIMITS = st.one_of(st.integers(1, 12), st.integers(13, 40), st.sampled_from([None, 0, -1, 2]))


@st.composite
def trimmer_cases(draw: st.DrawFn) -> tuple[Script, OAConfig]:
    trimmer = {
        "recent_turns": draw(st.sampled_from([1, 2, 1, 2, 3])),
        "max_output_chars": draw(st.sampled_from([500, 1, 50, 500, 2000])),
        "preview_chars": draw(st.sampled_from([200, 0, 20, 200, 1000])),
        "trimmable_tools": draw(st.sampled_from([None, None, ["retrieve"], ["figure", "other"], []])),
    }
    limit = draw(st.one_of(st.none(), st.none(), LIMITS))
    return draw(scripts()), OAConfig(trimmer=trimmer, limit=limit)


@st.composite
def session_cases(draw: st.DrawFn) -> tuple[Script, OAConfig]:
    return draw(scripts()), OAConfig(trimmer=None, limit=draw(LIMITS))


@settings(max_examples=50, deadline=None)
@given(trimmer_cases())
def test_trimmer_matches_tool_output_trimmer(case: tuple[Script, OAConfig]) -> None:
    _, theirs = compare(*case)
    trimmed = any(NOTICE_HEAD in m for c in theirs.calls for m in c.messages)
    event("outputs trimmed" if trimmed else "nothing trimmed")


@settings(max_examples=50, deadline=None)
@given(session_cases())
def test_session_matches_a_limited_sqlite_session(case: tuple[Script, OAConfig]) -> None:
    _, theirs = compare(*case)
    shorter = any(
        len(b.messages) < len(a.messages) for a, b in zip(theirs.calls, theirs.calls[1:], strict=False)
    )
    event("history cut" if shorter else "history whole")


def loop(sizes: list[int], *, turns: int, text: str | None = None, thinking: str | None = None) -> Script:
    """`turns` turns of one call per round, results of the given sizes (characters of prose)."""
    rounds = tuple(
        ScriptedRound(
            thinking=thinking,
            text=text,
            calls=(
                ScriptedCall(
                    tool="retrieve",
                    input=json.dumps({"query": f"q{k}"}),
                    result=(TextBlock(text=sized(n, False)),),
                ),
            ),
        )
        for k, n in enumerate(sizes)
    )
    turn = ScriptedTurn(user=(TextBlock(text="Collect the passages."),), rounds=rounds, final="Done.")
    return assign_call_ids(Script(system_prompt="You research.", tools=TOOLS, turns=(turn,) * turns))


def test_the_default_trimmer_leaves_the_last_two_turns_whole() -> None:
    ours, _ = compare(loop([900, 300], turns=3), OAConfig())
    last = ours.calls[-1].messages
    notices = [m for m in last if NOTICE_HEAD in m]
    assert len(notices) == 1  # turn 1's 900-character output; turns 2 and 3 are recent
    assert "900 chars → 200 char preview" in notices[0]


def test_a_limit_that_cuts_between_a_call_and_its_output_drops_the_orphan_output() -> None:
    script = loop(
        [50, 50], turns=2, text="Looking."
    )  # turn 1 stores 8 items: user, 2 x (text, call, output), final
    ours, _ = compare(script, OAConfig(trimmer=None, limit=5))  # the last 5 start on the first output
    wires = [json.loads(m) for m in ours.calls[3].messages]
    assert [w["role"] for w in wires] == ["system", "assistant", "tool", "assistant", "user"]
    assert wires[1]["tool_calls"][0]["id"] == "call-0002"  # the history starts on an assistant message
    assert violations(wires, ("openai", "anthropic")) == []  # the SDK dropped the orphaned output


DUMP = """
import dataclasses, json
from tests.parity.oa_driver import OAConfig, run_openai_agents
from tests.parity.test_openai_agents_parity import loop
script = loop([300, 5000, 20], turns=3, text="Hm.")
for config in (OAConfig(trimmer={"recent_turns": 1, "max_output_chars": 100}, limit=5),
               OAConfig(trimmer=None, limit=3)):
    print(json.dumps(dataclasses.asdict(run_openai_agents(script, config)), sort_keys=True))
"""


def test_the_driver_sends_the_same_bytes_in_two_processes() -> None:
    first, second = outputs_under_two_hash_seeds(DUMP)
    assert first and first == second


def test_no_instructions_send_no_system_message() -> None:
    """An agent without instructions sends no system message (the chat-completions model writes
    one only for non-empty instructions)."""
    script = dataclasses.replace(loop([900, 300], turns=3), system_prompt="")
    for config in (OAConfig(), OAConfig(trimmer=None, limit=2)):
        ours, theirs = compare(script, config)
        assert all(json.loads(c.messages[0])["role"] != "system" for c in (*ours.calls, *theirs.calls))


def test_thinking_is_a_reasoning_item_the_limit_counts_and_no_request_carries() -> None:
    """The chat-completions model keeps a round's `reasoning_content` as a reasoning item before
    the round's message and calls: the session limit counts it, the orphan pass drops it with a
    dropped call, and a request to a model not named DeepSeek leaves it out."""
    script = loop([50, 50], turns=2, text="Looking.", thinking="Which passage first?")
    # turn 1 stores 10 items: user, 2 x (reasoning, text, call, output), final
    ours, theirs = compare(script, OAConfig(trimmer=None, limit=6))  # starts on the first output
    wires = [json.loads(m) for m in ours.calls[3].messages]
    assert [w["role"] for w in wires] == ["system", "assistant", "tool", "assistant", "user"]
    assert wires[1]["tool_calls"][0]["id"] == "call-0002"  # 6 items back, thinking counted
    assert not any("reasoning" in m for c in theirs.calls for m in c.messages)
    for limit in range(12):  # every cut, thinking among the items
        compare(script, OAConfig(trimmer=None, limit=limit))


def test_deviation_a_deepseek_model_is_sent_its_reasoning_content() -> None:
    """Declared: to a model whose name says DeepSeek (and reasoning from one) the SDK sends each
    reasoning item back as the next assistant message's `reasoning_content`; ctxlab's presets
    follow any other model, whose requests carry no reasoning."""
    script = loop([50], turns=2, thinking="Which passage first?")
    lab = run_lab(script, OAConfig())
    deepseek = run_openai_agents(script, OAConfig(), model_name="deepseek-chat")
    other = run_openai_agents(script, OAConfig(), model_name=MODEL)
    assert [c.messages for c in lab.calls] == [c.messages for c in other.calls]
    sent = [json.loads(m) for m in deepseek.calls[-1].messages]
    first = next(w for w in sent if w["role"] == "assistant")
    assert first.get("reasoning_content") == "Which passage first?"
    assert not any("reasoning" in m for c in lab.calls for m in c.messages)


PIXEL = DataBlock(media_type="image/png", source="iVBORw0KGgo=", kind="base64")


def _looking(config_turns: int = 2) -> Script:
    calls = (
        ScriptedCall(tool="retrieve", input="{}", result=(TextBlock(text="Screenshot:"), PIXEL)),
        ScriptedCall(tool="retrieve", input="{}", result=(PIXEL,)),
        ScriptedCall(tool="figure", input="{}", result=(TextBlock(text="a"), PIXEL, TextBlock(text="b"))),
        ScriptedCall(tool="figure", input="{}", result=(TextBlock(text=sized(100, False)),)),
    )
    turn = ScriptedTurn(
        user=(TextBlock(text="Look."), PIXEL), rounds=(ScriptedRound(calls=calls),), final="Ok."
    )
    return assign_call_ids(Script(system_prompt="You look.", tools=TOOLS, turns=(turn,) * config_turns))


def test_a_result_s_images_are_sent_as_the_chat_completions_model_sends_them() -> None:
    """OA21: the chat-completions model sends a tool output's text parts alone, as a list of text
    parts, and an output of images alone as its placeholder text (read from the package); no
    image of an output is sent. The lab sends the same, and counts no image of an output."""
    _, theirs = compare(_looking(), OAConfig())
    last = [json.loads(m) for m in theirs.calls[1].messages]
    assert [m["role"] for m in last[3:]] == ["tool"] * 4
    assert last[3]["content"] == [{"type": "text", "text": "Screenshot:"}]
    assert last[4]["content"] == chatcmpl_converter._OMITTED_TOOL_OUTPUT_PLACEHOLDER
    assert last[5]["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert last[6]["content"] == sized(100, False)
    assert sum("image_url" in m for m in theirs.calls[1].messages) == 1  # the user's image alone


@pytest.mark.parametrize(
    "config",
    [
        OAConfig(trimmer={"recent_turns": 1, "max_output_chars": 60, "preview_chars": 2}),
        OAConfig(trimmer=None, limit=4),
        OAConfig(trimmer=None, limit=9),
    ],
)
def test_outputs_with_images_are_limited_and_trimmed_as_the_sdk_does(config: OAConfig) -> None:
    """Outputs holding images keep their form whatever the session's limit leaves; beside them a
    long text output is trimmed (no structured output here is over the trimmer's limit)."""
    ours, _ = compare(_looking(3), config)
    assert config.trimmer is None or any(NOTICE_HEAD in m for m in ours.calls[-1].messages)


def test_deviation_a_user_image_is_sent_without_detail() -> None:
    """OA21, the declared half: the chat-completions model writes a user image's `detail` as
    `auto` (the API's default) where none is given; the lab's images carry no detail and are sent
    without one, which the driver's recording drops."""
    turn = _looking(1).turns[0]
    mine = [json.loads(m) for m in run_lab(_looking(1), OAConfig()).calls[0].messages]
    assert mine[1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
    sent = Converter.items_to_messages(user_input(turn.user), model=MODEL)
    assert sent[0]["content"][1]["image_url"] == {
        "url": "data:image/png;base64,iVBORw0KGgo=",
        "detail": "auto",
    }


PDF = DataBlock(media_type="application/pdf", source="JVBERi0xLjQK" * 4, kind="base64", name="report.pdf")
SHOT = DataBlock(media_type="image/png", source="iVBORw0KGgo=" * 10, kind="base64")
STRUCTURED = (
    (TextBlock(text=sized(120, False)), PIXEL),  # text and an image
    (SHOT,),  # an image alone
    (TextBlock(text="first part"), PIXEL, TextBlock(text=sized(90, True))),  # texts around an image
    (TextBlock(text="Report:"), PDF),  # a file with its name
    (SHOT, TextBlock(text="a"), PDF, PIXEL, TextBlock(text=sized(60, False))),  # images and files
    (TextBlock(text="ok"), PIXEL),  # short
    (TextBlock(text=sized(300, False)),),  # a string output beside them
)


def _structured(turns: int = 2) -> Script:
    calls = tuple(ScriptedCall(tool="retrieve", input="{}", result=r) for r in STRUCTURED)
    turn = ScriptedTurn(user=(TextBlock(text="Look."),), rounds=(ScriptedRound(calls=calls),), final="Ok.")
    return assign_call_ids(Script(system_prompt="You look.", tools=TOOLS, turns=(turn,) * turns))


@pytest.mark.parametrize(
    ("max_output_chars", "preview_chars"),
    [(500, 200), (100, 200), (60, 20), (40, 3), (25, 200), (12, 0), (10, 5), (9, 200), (5, 0), (1, 1)],
)
def test_structured_outputs_are_trimmed_as_the_sdk_trims_them(
    max_output_chars: int, preview_chars: int
) -> None:
    """OA6: an output with images or files among its texts is the SDK's structured output, trimmed
    to its own headers within `max_output_chars` (down to the minimal header cut short) once its
    payload is longer; a shorter one is sent as before."""
    trimmer = {"recent_turns": 1, "max_output_chars": max_output_chars, "preview_chars": preview_chars}
    _, theirs = compare(_structured(), OAConfig(trimmer=trimmer))

    def tools(call: int) -> list[Any]:
        return [w["content"] for m in theirs.calls[call].messages if (w := json.loads(m))["role"] == "tool"]

    whole, last = tools(1), tools(-1)  # turn 1's results as sent whole, then after turn 2 began
    for k, result in enumerate(STRUCTURED[:-1]):
        payload = payload_of(api_parts(merge_text_parts(result)))
        assert payload is not None
        if payload.chars > max_output_chars:
            assert isinstance(last[k], str) and len(last[k]) <= max_output_chars and last[k] != whole[k]
        else:
            assert last[k] == whole[k]


@st.composite
def structured_cases(draw: st.DrawFn) -> tuple[Script, OAConfig]:
    parts = st.one_of(
        st.builds(
            lambda n, cjk: TextBlock(text=sized(n, cjk)), st.sampled_from([0, 3, 40, 250]), st.booleans()
        ),
        st.sampled_from([PIXEL, SHOT, PDF]),
    )
    turns = []
    for t in range(draw(st.integers(2, 3))):
        rounds = tuple(
            ScriptedRound(
                calls=tuple(
                    ScriptedCall(
                        tool=draw(st.sampled_from(["retrieve", "figure"])), input="{}", result=tuple(r)
                    )
                    for r in draw(st.lists(st.lists(parts, min_size=1, max_size=4), min_size=1, max_size=3))
                )
            )
            for _ in range(draw(st.integers(1, 2)))
        )
        turns.append(ScriptedTurn(user=(TextBlock(text=f"Turn {t}."),), rounds=rounds, final=f"Done {t}."))
    trimmer = {
        "recent_turns": draw(st.sampled_from([1, 1, 2])),
        "max_output_chars": draw(st.sampled_from([1, 8, 9, 10, 30, 60, 60, 120, 500])),
        "preview_chars": draw(st.sampled_from([0, 4, 200])),
        "trimmable_tools": draw(st.sampled_from([None, ["figure"]])),
    }
    script = assign_call_ids(Script(system_prompt="You look.", tools=TOOLS, turns=tuple(turns)))
    return script, OAConfig(trimmer=trimmer, limit=draw(st.sampled_from([None, None, 5])))


@settings(max_examples=40, deadline=None)
@given(structured_cases())
def test_generated_structured_outputs_match_tool_output_trimmer(case: tuple[Script, OAConfig]) -> None:
    _, theirs = compare(*case)
    notices = ('"content": "[Trimmed]', '"content": "[Trimmed: figure;', '"content": "[Trimmed: retrieve;')
    trimmed = any(n in m for c in theirs.calls for m in c.messages for n in notices)
    event("structured outputs trimmed" if trimmed else "none trimmed")
