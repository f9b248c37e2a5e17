"""The `google-adk-*` presets against the real `google-adk==2.13.0` on generated workloads: the
same requests call for call (messages in the OpenAI view, tools, the token count ADK's trigger
reads, where the summary calls come and what they say).

ADK runs in its own environment (`make adk-env`, which `make test` builds); without it these
tests fail, naming the fix.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.views import from_openai
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.presets.google_adk.params import AdkParams, EventsCompactionConfig
from ctxlab.texts.google_adk import adk_texts
from tests.parity.adk_side import AdkDriver, Workload, adk_calls, driver_workload, run_lab
from tests.parity.adk_workloads import adk_cases, token_config, window_config
from tests.parity.openhands_side import Call
from tests.parity.openhands_workloads import TOOLS


@pytest.fixture(scope="session")
def driver() -> Iterator[AdkDriver]:
    server = AdkDriver()
    yield server
    server.close()


def compare(driver: AdkDriver, case: Workload) -> tuple[list[str], int]:
    """Run both sides; assert the same calls; ADK's call kinds and its summaries after the last call."""
    workload = driver_workload(case)
    trace = driver.run(workload)
    try:
        assert trace["error"] is None, trace["error"]
        theirs, trailing = adk_calls(trace)
        ours = run_lab(case)
        for index, (mine, real) in enumerate(zip(ours, theirs, strict=False)):
            assert mine == real, f"call {index} differs: {first_difference(mine, real)}"
            assert as_compared(mine.wire) == as_compared(real.wire), f"call {index}'s wire differs"
        assert len(ours) == len(theirs)
    except AssertionError:
        dump = os.environ.get("CTXLAB_PARITY_DUMP")
        if dump:  # the failing case, to replay by hand
            Path(dump).write_text(json.dumps({"workload": workload, "trace": trace}))
        raise
    return [c.kind for c in theirs], trailing


def as_compared(wire: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """The messages of a request, exactly as sent but for two forms that carry the same: ADK's
    adapter writes an assistant message's absent `tool_calls` and `reasoning_content` as None
    (the lab leaves them out), and an empty summary text as `content: []` (the lab's is `""`,
    declared in GA22)."""
    out = []
    for message in wire:
        kept = {key: value for key, value in message.items() if value is not None or key == "content"}
        if kept["role"] == "assistant" and kept["content"] == []:
            kept["content"] = ""
        out.append(kept)
    return out


def first_difference(mine: Call, real: Call) -> str:
    """Where two calls first differ, readably."""
    if (mine.kind, mine.tools) != (real.kind, real.tools):
        return f"kind/tools {mine.kind} vs {real.kind}"
    for k, (a, b) in enumerate(zip(mine.messages, real.messages, strict=False)):
        if a != b:
            return f"message {k}:\n  ours   {a!r}\n  theirs {b!r}"
    if len(mine.messages) != len(real.messages):
        return f"{len(mine.messages)} vs {len(real.messages)} messages"
    return f"tokens {mine.tokens} vs {real.tokens}"


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(adk_cases(window_config()))
def test_the_sliding_window_matches_adk_call_for_call(driver: AdkDriver, case: Workload) -> None:
    compare(driver, case)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(adk_cases(token_config()))
def test_the_token_threshold_matches_adk_call_for_call(driver: AdkDriver, case: Workload) -> None:
    compare(driver, case)


def turns(count: int, rounds: int = 1, size: int = 20) -> Script:
    """`count` user turns of `rounds` single-call rounds with results of `size` words."""
    return Script(
        system_prompt="You are a test.",
        tools=TOOLS[:1],
        turns=tuple(
            ScriptedTurn(
                user=(TextBlock(text=f"Task {t}"),),
                rounds=tuple(
                    ScriptedRound(
                        text=None,
                        calls=(
                            ScriptedCall(
                                tool="run",
                                input=json.dumps({"command": f"ls {t}.{i}"}),
                                result=(TextBlock(text=f"out {t}.{i} " * size),),
                                id=f"c{t}.{i}",
                            ),
                        ),
                    )
                    for i in range(rounds)
                ),
                final=f"done {t}",
            )
            for t in range(count)
        ),
    )


def window(interval: int, overlap: int) -> AdkParams:
    return AdkParams(
        events_compaction_config=EventsCompactionConfig(compaction_interval=interval, overlap_size=overlap)
    )


def summaries_before_turns(kinds: list[str], script: Script) -> list[int]:
    """Before which user turn (0-based) each summary came, counting reasoning calls per turn."""
    per_turn = [len(t.rounds) + 1 for t in script.turns]
    starts = [sum(per_turn[:k]) for k in range(len(per_turn))]
    out, reasoning = [], 0
    for kind in kinds:
        if kind == "summary":
            out.append(max(k for k, s in enumerate(starts) if s <= reasoning))
        else:
            reasoning += 1
    return out


def test_interval_two_overlap_one_summarises_after_turns_2_4_and_6(driver: AdkDriver) -> None:
    script = turns(7)
    kinds, trailing = compare(driver, Workload(script=script, params=window(2, 1)))
    assert summaries_before_turns(kinds, script) == [2, 4, 6]
    assert trailing == 0  # the seventh turn alone triggers nothing


def test_the_compaction_after_the_last_turn_is_the_declared_deviation(driver: AdkDriver) -> None:
    kinds, trailing = compare(driver, Workload(script=turns(6), params=window(3, 0)))
    assert kinds.count("summary") == 1 and trailing == 1  # after turn 3 (shown); after turn 6 (not)


def test_a_huge_result_is_cut_to_2000_characters_in_the_summary_request(driver: AdkDriver) -> None:
    kinds, _ = compare(driver, Workload(script=turns(2, size=600), params=window(1, 0)))
    assert "summary" in kinds
    lab = run_lab(Workload(script=turns(2, size=600), params=window(1, 0)))
    prompt = next(c for c in lab if c.kind == "summary").messages[0][1]
    assert "... [truncated " in prompt


def test_a_long_summary_makes_adk_refuse_the_next_range(driver: AdkDriver) -> None:
    case = Workload(script=turns(6, size=2), params=window(1, 0), summary="S" * 5000)
    kinds, _ = compare(driver, case)
    assert kinds.count("summary") == 1  # every later range is smaller than the summary


def test_a_blank_summary_is_a_summary(driver: AdkDriver) -> None:
    """GA12: an answer with content is the summary even when its text is blank; the history is
    compacted as with any other summary."""
    script = turns(7)
    for blank in (" ", ""):
        case = Workload(script=script, params=window(2, 1), summary=blank)
        kinds, _ = compare(driver, case)
        assert summaries_before_turns(kinds, script) == [2, 4, 6]
    # declared (GA22): ADK's adapter writes an empty summary text as `content: []`, the lab as ""
    theirs = driver.run(driver_workload(case))["calls"]
    summary = {"role": "assistant", "content": [], "tool_calls": None, "reasoning_content": None}
    assert summary in theirs[-1]["messages"]
    assert {"role": "assistant", "content": ""} in run_lab(case)[-1].wire


def test_a_summary_without_content_or_raising_leaves_the_history(driver: AdkDriver) -> None:
    """GA12: no content, or an exception from the model (ADK logs it), and nothing is compacted:
    the range is tried again after the next turn (3), which moves the later ones (5)."""
    script = turns(7)
    for case in (
        Workload(script=script, params=window(2, 1), fail_on=frozenset({1})),
        Workload(script=script, params=window(2, 1), raise_on=frozenset({1})),
    ):
        kinds, _ = compare(driver, case)
        assert summaries_before_turns(kinds, script) == [2, 3, 5]


def test_the_token_threshold_summarises_before_calls_inside_a_turn(driver: AdkDriver) -> None:
    params = AdkParams(
        events_compaction_config=EventsCompactionConfig(token_threshold=300, event_retention_size=2)
    )
    kinds, _ = compare(driver, Workload(script=turns(1, rounds=12), params=params))
    # the 6th and 11th requests counted 302 and 318 tokens: at or over 300, so a summary follows each
    assert "".join("S" if k == "summary" else "r" for k in kinds) == "rrrrrrSrrrrrSrr"


def one_round_then(calls: tuple[ScriptedCall, ...], *later: str) -> Script:
    """A turn that makes `calls` in one round, then a turn per later user text, each answered "ok"."""
    first = ScriptedTurn(user=(TextBlock(text="Go"),), rounds=(ScriptedRound(calls=calls),), final="ok")
    rest = tuple(ScriptedTurn(user=(TextBlock(text=text),), rounds=(), final="ok") for text in later)
    return Script(system_prompt="You are a test.", tools=TOOLS[:1], turns=(first, *rest))


def _sent_arguments(driver: AdkDriver, calls: tuple[ScriptedCall, ...]) -> list[str]:
    """The arguments of `calls` as the window preset sends them after a compaction, once every
    request has matched ADK's own, call for call."""
    script = one_round_then(calls, "Again")
    params = AdkParams(
        events_compaction_config=EventsCompactionConfig(token_threshold=60, event_retention_size=1)
    )
    kinds, _ = compare(driver, Workload(script=script, params=params))
    assert "summary" in kinds
    lab = run_lab(Workload(script=script, params=params))
    sent = next(m["tool_calls"] for c in lab if c.kind == "reasoning" for m in c.wire if m.get("tool_calls"))
    return [c["function"]["arguments"] for c in sent]


def test_call_arguments_are_sent_as_adk_writes_them_back_and_counted_so(driver: AdkDriver) -> None:
    calls = (
        ScriptedCall(
            tool="run", input='{"command":"cat 数据.txt","n":2.50}', result=(TextBlock(text="x"),), id="a"
        ),
        ScriptedCall(tool="run", input='{"command": "ls \\u00e9"}', result=(TextBlock(text="y"),), id="b"),
        ScriptedCall(tool="run", input="", result=(TextBlock(text="z"),), id="c"),
    )
    # ADK keeps the parsed object and its LiteLLM adapter writes it back with json.dumps
    assert _sent_arguments(driver, calls) == [
        '{"command": "cat 数据.txt", "n": 2.5}',
        '{"command": "ls é"}',
        "{}",
    ]


def test_arguments_adk_repairs_are_kept_as_the_object_it_reads(driver: AdkDriver) -> None:
    """GA19: ADK's adapter reads a Python literal, unquoted keys and a fenced object as objects
    and sends them re-serialized; before, the lab sent them as written (window) or failed the run
    (tokens). Found by replaying transcripts with such arguments."""
    written = ["{'command': 'ls', 'all': True}", '{command: "ls", n: 2}', '```json\n{"command": "ls"}\n```']
    calls = tuple(
        ScriptedCall(tool="run", input=raw, result=(TextBlock(text=f"r{k}"),), id=f"a{k}")
        for k, raw in enumerate(written)
    )
    assert _sent_arguments(driver, calls) == [
        '{"command": "ls", "all": true}',
        '{"command": "ls", "n": 2}',
        '{"command": "ls"}',
    ]


def test_a_result_is_sent_as_adk_s_function_response_json_and_counted_so(driver: AdkDriver) -> None:
    """GA22: ADK keeps a tool's text as the function response `{"result": text}` and its LiteLLM
    adapter writes it with `json.dumps(..., ensure_ascii=False)`; the lab sends and counts that."""
    outputs = ['数据 "quoted" \\ back\nslash\ttab', "", "plain " * 700, "emoji 😀 é"]
    calls = tuple(
        ScriptedCall(
            tool="run", input=json.dumps({"command": f"c{k}"}), result=(TextBlock(text=t),), id=f"r{k}"
        )
        for k, t in enumerate(outputs)
    )
    script = one_round_then(calls, "Again", "More")
    params = AdkParams(
        events_compaction_config=EventsCompactionConfig(token_threshold=900, event_retention_size=2)
    )
    case = Workload(script=script, params=params)
    kinds, _ = compare(driver, case)  # the same messages, wire and counts, call for call
    assert "summary" in kinds
    trace = driver.run(driver_workload(case))
    sent = [m["content"] for m in trace["calls"][1]["messages"] if m["role"] == "tool"]
    assert sent == [json.dumps({"result": t}, ensure_ascii=False) for t in outputs]
    lab = run_lab(case)
    assert [m["content"] for m in lab[1].wire if m["role"] == "tool"] == sent
    bare = AgentScopeEstimator().count(
        from_openai(
            [{**m, "content": t} if m["role"] == "tool" else m for m, t in zip_tools(lab[1].wire, outputs)]
        ),
        (TOOLS[0],),
    )
    assert lab[1].tokens > bare  # the wrapping is counted


def zip_tools(wire: tuple[dict[str, Any], ...], outputs: list[str]) -> list[tuple[dict[str, Any], str]]:
    """Each message with the output of its result (tool messages in order), "" for the others."""
    texts = iter(outputs)
    return [(m, next(texts) if m["role"] == "tool" else "") for m in wire]


def test_a_result_s_media_follow_as_adk_s_adapter_sends_them_and_a_url_s_not_at_all(
    driver: AdkDriver,
) -> None:
    """GA21: ADK keeps a tool's media as the function response's parts; its LiteLLM adapter sends
    the inline ones alone, in one user message after the `tool` messages of a content (a text type
    decoded, an image as a `data:` URL of its bytes encoded anew, the type in lower case), and
    nothing of a medium given by URL, an image's or a document's."""

    def call(k: int, *output: Part) -> ScriptedCall:
        return ScriptedCall(tool="run", input=json.dumps({"command": f"c{k}"}), result=output, id=f"m{k}")

    url = DataBlock(media_type="image/png", source="https://example.com/a.png")
    text = DataBlock(media_type="text/plain", source="bm90ZXM6IOaVsOaNrg==", kind="base64")
    image = DataBlock(media_type="IMAGE/PNG", source="iVBO\nRw==", kind="base64")
    calls = (
        call(0, TextBlock(text="see"), url, DataBlock(media_type="application/pdf", source="gs://b/d.pdf")),
        call(1, TextBlock(text="read"), text, image),
        call(2, url),
    )
    first = ScriptedTurn(
        user=(TextBlock(text="Go"),),
        rounds=(ScriptedRound(calls=calls), ScriptedRound(calls=(call(3, text),))),
        final="ok",
    )
    script = one_round_then((), "Again", "More")
    script = replace(script, turns=(first, *script.turns[1:]))
    case = Workload(script=script, params=window(1, 0))
    kinds, _ = compare(driver, case)  # the same messages, wire and counts, call for call
    assert "summary" in kinds
    lab = run_lab(case)
    assert "example.com" not in str(lab[1].wire) and "gs://" not in str(lab[1].wire)
    assert [m["role"] for m in lab[1].wire[-4:]] == ["tool", "tool", "tool", "user"]
    assert lab[1].wire[-1]["content"] == [
        {"type": "text", "text": "notes: 数据"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
    ]
    assert lab[2].wire[-2:] == (  # a lone text: the message's string
        {"role": "tool", "tool_call_id": "m3", "content": '{"result": ""}'},
        {"role": "user", "content": "notes: 数据"},
    )


def test_a_result_s_medium_of_a_type_adk_s_adapter_refuses_fails_the_run(driver: AdkDriver) -> None:
    zipped = DataBlock(media_type="application/zip", source="UEsFBg==", kind="base64")
    calls = (ScriptedCall(tool="run", input="{}", result=(TextBlock(text="z"), zipped), id="z"),)
    case = Workload(script=one_round_then(calls), params=window(1, 0))
    assert driver.run(driver_workload(case))["error"] == "ValueError"
    with pytest.raises(ValueError, match="application/zip"):
        run_lab(case)


def test_a_request_ending_with_a_model_turn_gets_the_adapter_s_continuation(driver: AdkDriver) -> None:
    """GA22: retention 0 summarises every event before a call, so the request's contents end with
    the summary, a model turn; ADK's model adapters then add a user message asking to go on."""
    params = AdkParams(
        events_compaction_config=EventsCompactionConfig(token_threshold=60, event_retention_size=0)
    )
    case = Workload(script=turns(2, rounds=3, size=3), params=params)
    compare(driver, case)
    going_on = {"role": "user", "content": adk_texts().continuation}
    reasoning = [c for c in run_lab(case) if c.kind == "reasoning"]
    ended = [c for c in reasoning if c.wire[-1] == going_on]
    assert ended and all(c.wire[-2]["role"] == "assistant" for c in ended)
    assert all(c.wire[-1]["role"] in ("user", "tool") for c in reasoning)


def test_a_system_prompt_is_sent_as_written_where_a_string_instruction_is_a_template(
    driver: AdkDriver,
) -> None:
    script = turns(2)
    script = replace(script, system_prompt="Fill {WINDOW} and {user:name?}; keep {not a name}.")
    case = Workload(script=script, params=window(1, 0))
    compare(driver, case)  # the driver gives the prompt as an instruction provider: sent as written
    assert run_lab(case)[0].wire[0]["content"].startswith("Fill {WINDOW} and {user:name?};")
    # declared: a string instruction is a template ADK fills from session state; `{WINDOW}` is
    # not in the state, so ADK raises before the first model call
    templated = driver.run({**driver_workload(case), "template_instruction": True})
    assert templated["error"] == "KeyError" and templated["calls"] == []


def test_a_user_message_of_several_text_parts_is_one_line_per_part_in_the_summary_request(
    driver: AdkDriver,
) -> None:
    script = turns(3)
    first = replace(
        script.turns[0], user=(TextBlock(text="<context>cwd</context>"), TextBlock(text="Task 0"))
    )
    script = replace(script, turns=(first, *script.turns[1:]))
    case = Workload(script=script, params=window(1, 0))
    compare(driver, case)  # the driver sends the parts apart, as the lab does
    prompt = next(c for c in run_lab(case) if c.kind == "summary").messages[0][1]
    assert "user: <context>cwd</context>\nuser: Task 0\n" in prompt


def test_two_driver_processes_write_the_same_bytes(driver: AdkDriver) -> None:
    params = AdkParams(
        events_compaction_config=EventsCompactionConfig(token_threshold=300, event_retention_size=3)
    )
    workload = driver_workload(Workload(script=turns(4, rounds=3), params=params, fail_on=frozenset({2})))
    other = AdkDriver()
    try:
        assert other.run_raw(workload) == driver.run_raw(workload)
    finally:
        other.close()


def test_the_package_s_texts_load_with_their_placeholders() -> None:
    texts = adk_texts()
    assert texts.tool_content_chars == 2000
    assert texts.prompt_template.endswith("{conversation_history}")
    assert "{dropped}" in texts.truncated_notice and "{name}" in texts.identity
    assert "{args}" in texts.call_line and "{response}" in texts.response_line


def test_ctxlab_s_wording_keeps_adk_s_mechanics(driver: AdkDriver) -> None:
    case = Workload(script=turns(5, size=600), params=window(2, 1))
    ours = run_lab(case, texts_name="ctxlab")
    theirs, _ = compare(driver, case)
    assert [c.kind for c in ours] == theirs  # the same calls, worded by ctxlab
    prompt = next(c for c in ours if c.kind == "summary").messages[0][1]
    assert "more characters]" in prompt and prompt.startswith("Below is the start")


def test_an_agent_without_an_instruction_sends_its_identity_alone(driver: AdkDriver) -> None:
    """With no instruction ADK's system instruction is the identity instruction alone; the lab's
    requests carry the same one."""
    script = dataclasses.replace(turns(7), system_prompt="")
    kinds, _ = compare(driver, Workload(script=script, params=window(2, 1)))
    assert summaries_before_turns(kinds, script) == [2, 4, 6]
    theirs, _ = adk_calls(driver.run(driver_workload(Workload(script=script, params=window(2, 1)))))
    firsts = {c.messages[0][:2] for c in theirs if c.kind == "reasoning"}
    assert len(firsts) == 1 and all(role == "system" and 'name is "agent"' in text for role, text in firsts)


def test_reasoning_is_kept_as_a_thought_sent_as_reasoning_content_and_counted(driver: AdkDriver) -> None:
    """GA24: a model's reasoning (an OpenAI-compatible model's `reasoning_content`, which ADK's
    LiteLLM adapter turns into a thought part) is kept in the session, sent back in the assistant
    message's `reasoning_content`, counted by ADK's estimate and written into the summary request
    as a thought line."""
    base = turns(4, rounds=2)
    script = replace(
        base,
        turns=tuple(
            replace(
                turn,
                rounds=tuple(
                    replace(r, thinking=f"think {t}.{i} 数据" * 9) for i, r in enumerate(turn.rounds)
                ),
            )
            for t, turn in enumerate(base.turns)
        ),
    )
    params = AdkParams(
        events_compaction_config=EventsCompactionConfig(
            compaction_interval=2, overlap_size=1, token_threshold=200, event_retention_size=3
        )
    )
    kinds, _ = compare(driver, Workload(script=script, params=params))
    assert "summary" in kinds
    lab = run_lab(Workload(script=script, params=params))
    sent = [m for call in lab if call.kind == "reasoning" for m in call.wire if m.get("reasoning_content")]
    assert sent and all(
        m["role"] == "assistant" and m["reasoning_content"].startswith("think ") for m in sent
    )
    summaries = [call for call in lab if call.kind == "summary"]
    assert any("(thought): think " in str(call.wire) for call in summaries)
