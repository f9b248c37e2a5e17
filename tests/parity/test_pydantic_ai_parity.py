"""ctxlab's pydantic-ai presets against a real pydantic-ai `Agent` (pydantic-ai-slim 2.62.0) with
the compaction capabilities of pydantic-ai-harness 0.62.0, on generated workloads: the same
requests call for call (kinds, messages in pydantic-ai's own OpenAI mapping, tools sent), clearing,
trimming and summaries at the same calls, the summarizer's requests, the harness's estimate of
every request, and the same errors."""

from __future__ import annotations

import base64
import dataclasses
import itertools
import json
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import BinaryContent, ImageUrl, ToolReturnPart
from pydantic_ai_harness._message_text import tool_return_text

from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolResultBlock
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.presets.pydantic_ai.returns import FileTexts, return_text, sent_return
from ctxlab.texts.pydantic_ai import pydantic_ai_texts
from tests.parity.pa_driver import PAConfig, PATrace, returned, run_pydantic_ai
from tests.parity.pa_lab import run_lab
from tests.parity.processes import outputs_under_two_hash_seeds
from tests.parity.workloads import CJK, PROSE, TOOLS, retrieval_loop

TAGGED = "See <messages> and </message> in the output. "
"""Text holding the summarizer transcript's own tags, which the harness escapes."""


def compare(script: Script, config: PAConfig) -> tuple[PATrace, PATrace]:
    theirs, ours = run_pydantic_ai(script, config), run_lab(script, config)
    assert (ours.error is None) == (theirs.error is None), (ours.error, theirs.error)
    assert [c.kind for c in ours.calls] == [c.kind for c in theirs.calls]
    for index, (mine, real) in enumerate(zip(ours.calls, theirs.calls, strict=True)):
        assert mine.messages == real.messages, index
        assert mine.tools == real.tools, index
        assert mine.counted == real.counted, index
    return ours, theirs


def compact(payload: dict[str, Any]) -> str:
    """Call arguments as providers send them (pydantic-ai's OpenAI mapping re-serializes them so)."""
    return json.dumps(payload, separators=(",", ":"))


@st.composite
def text(draw: st.DrawFn, max_chars: int) -> str:
    size = draw(st.integers(max(1, max_chars // 3), max(1, max_chars)))
    base = draw(st.sampled_from([PROSE, PROSE, CJK, TAGGED]))
    return (base * (size // len(base) + 1))[:size]


@st.composite
def rounds(draw: st.DrawFn, window: int) -> ScriptedRound:
    calls = []
    for n in range(draw(st.integers(1, 3))):  # parallel calls
        share = draw(st.sampled_from([0.002, 0.02, 0.08, 0.3, 1.2]))  # of the window, in characters x 4
        tool = draw(st.sampled_from(["retrieve", "figure"]))
        calls.append(
            ScriptedCall(
                tool=tool,
                input=compact({"query": f"q{n}"} if tool == "retrieve" else {"n": n}),
                result=(TextBlock(text=draw(text(int(window * 4 * share)))),),
                error=draw(st.integers(0, 6)) == 0,
            )
        )
    thinking = draw(st.one_of(st.none(), st.none(), text(300)))
    return ScriptedRound(text=draw(st.one_of(st.none(), text(200))), calls=tuple(calls), thinking=thinking)


@st.composite
def scripts(draw: st.DrawFn, window: int, max_loop: int) -> Script:
    turns = []
    for _ in range(draw(st.integers(1, 4))):
        long_loop = draw(st.integers(0, 5)) == 0
        count = draw(st.integers(12, max_loop)) if long_loop else draw(st.integers(0, 6))
        user = (TextBlock(text=draw(text(300))), *((PIXEL,) if draw(st.integers(0, 5)) == 0 else ()))
        body = tuple(draw(rounds(window)) for _ in range(count))
        turns.append(ScriptedTurn(user=user, rounds=body, final=draw(text(100))))
    prompt = draw(text(600)).strip() or "You research."  # pydantic-ai strips the instructions it sends
    return assign_call_ids(Script(system_prompt=prompt, tools=TOOLS, turns=tuple(turns)))


@st.composite
def triggers(draw: st.DrawFn, window: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    form = draw(st.sampled_from(["messages", "tokens", "fraction", "messages+tokens", "messages+fraction"]))
    if "messages" in form:
        out["max_messages"] = draw(st.integers(1, 40))
    if "tokens" in form:
        out["max_tokens"] = draw(st.integers(max(1, window // 20), window))
    if "fraction" in form:
        out["max_fraction"] = draw(st.sampled_from([0.05, 0.2, 0.5, 0.85, 1.0]))
        if draw(st.booleans()):
            out["context_window"] = draw(st.sampled_from([2000, window * 2]))
    return out


@st.composite
def keeps(draw: st.DrawFn, window: int, default: int) -> dict[str, Any]:
    if draw(st.integers(0, 2)) == 0:
        return {"keep_tokens": draw(st.sampled_from([0, 10, window // 10, window // 2]))}
    return {"keep_messages": draw(st.sampled_from([default, 0, 1, 2, 5, 12]))}


WINDOWS = st.sampled_from([1500, 4000, 16000, 64000])


@st.composite
def window_cases(draw: st.DrawFn) -> tuple[Script, PAConfig]:
    window = draw(WINDOWS)
    options = {
        **draw(triggers(window)),
        **draw(keeps(window, 40)),
        "preserve_first_user_message": draw(st.booleans()),
    }
    return draw(scripts(window, 40)), PAConfig(capability="window", window=window, settings=options)


@st.composite
def clear_cases(draw: st.DrawFn) -> tuple[Script, PAConfig]:
    window = draw(WINDOWS)
    options = {
        **draw(triggers(window)),
        "keep_pairs": draw(st.sampled_from([3, 0, 1, 5])),
        "exclude_tools": draw(st.sampled_from([(), ("figure",)])),
        "clear_tool_inputs": draw(st.booleans()),
        "min_clear_tokens": draw(st.sampled_from([None, 0, 10, 1000])),
    }
    return draw(scripts(window, 40)), PAConfig(capability="clear", window=window, settings=options)


@st.composite
def summary_cases(draw: st.DrawFn) -> tuple[Script, PAConfig]:
    window = draw(WINDOWS)
    options = {
        **draw(triggers(window)),
        **draw(keeps(window, 20)),
        "preserve_first_user_message": draw(st.booleans()),
        "incremental": draw(st.booleans()),
        "tool_return_max_chars": draw(st.sampled_from([500, None, 40])),
    }
    fail_on = frozenset(draw(st.lists(st.integers(1, 3), max_size=1)))
    good = PAConfig().summary_text
    answers = tuple(draw(st.lists(st.sampled_from([good, good, " ", "", "\n\t"]), max_size=3)))
    config = PAConfig(capability="summary", window=window, settings=options, fail_on=fail_on, answers=answers)
    return draw(scripts(window, 20)), config  # a summary is a request too: 50 a run at most


def actions(trace: PATrace, placeholder: str = "[tool result cleared]") -> str:
    summaries = sum(c.kind == "summary" for c in trace.calls)
    cleared = any(placeholder in m for c in trace.calls for m in c.messages)
    return f"summaries: {min(summaries, 3)}{'+' if summaries > 3 else ''}, cleared: {cleared}"


@settings(max_examples=50, deadline=None)
@given(window_cases())
def test_pydantic_ai_window_matches_sliding_window_compaction(case: tuple[Script, PAConfig]) -> None:
    _, theirs = compare(*case)
    shrank = any(len(b.messages) < len(a.messages) for a, b in itertools.pairwise(theirs.calls))
    event("trimmed" if shrank else "never trimmed")


@settings(max_examples=50, deadline=None)
@given(clear_cases())
def test_pydantic_ai_clear_matches_clear_tool_results(case: tuple[Script, PAConfig]) -> None:
    _, theirs = compare(*case)
    event(actions(theirs))


@settings(max_examples=50, deadline=None)
@given(summary_cases())
def test_pydantic_ai_summary_matches_summarizing_compaction(case: tuple[Script, PAConfig]) -> None:
    _, theirs = compare(*case)
    event(actions(theirs))
    event("the run failed" if theirs.error else "the run finished")
    retried = any(
        a.kind == b.kind == "summary" and b.messages[: len(a.messages)] == a.messages
        for a, b in itertools.pairwise(theirs.calls)
    )
    event("a blank summary asked again" if retried else "no summary asked again")


def loop(sizes: list[int], *, turns: int = 1) -> Script:
    """`retrieval_loop` with compact arguments, as pydantic-ai re-serializes them."""
    return retrieval_loop(sizes, turns=turns, encode=compact)


def test_a_window_keeps_the_first_user_request_and_merges_it_at_the_next_turn() -> None:
    config = PAConfig(capability="window", settings={"max_messages": 6, "keep_messages": 3})
    ours, _ = compare(loop([300, 200, 100], turns=3), config)
    first = ours.calls[-1].messages[1]
    assert '"role": "user"' in first and "Collect the passages." in first


def test_a_summary_is_sent_after_the_first_user_request_and_updated_in_place() -> None:
    config = PAConfig(capability="summary", settings={"max_messages": 8, "keep_messages": 3})
    ours, _ = compare(loop([300, 2000, 200, 900, 100] * 2, turns=2), config)
    summaries = [c for c in ours.calls if c.kind == "summary"]
    assert len(summaries) > 2
    assert "<previous-summary>" in summaries[-1].messages[-1]
    reasoning = [c for c in ours.calls if c.kind == "reasoning"]
    assert "conversation_summary" in reasoning[-1].messages[2]


def test_clearing_waits_for_max_messages_after_the_newest_cleared_result() -> None:
    config = PAConfig(capability="clear", settings={"max_messages": 8, "keep_pairs": 1})
    ours, _ = compare(loop([500] * 12), config)
    cleared = [sum("[tool result cleared]" in m for m in c.messages) for c in ours.calls]
    assert cleared[-1] >= 10 and len(set(cleared)) < len(cleared)  # cleared in batches, not every call


def test_a_failing_summarizer_ends_the_run() -> None:
    config = PAConfig(
        capability="summary", settings={"max_messages": 4, "keep_messages": 2}, fail_on=frozenset({1})
    )
    _, theirs = compare(loop([300] * 6), config)
    assert theirs.error is not None and [c.kind for c in theirs.calls].count("summary") == 1


def blank_case(*answers: str) -> tuple[PATrace, PATrace]:
    """A run whose first summary calls answer `answers`, compared with the real agent."""
    config = PAConfig(capability="summary", settings={"max_messages": 4, "keep_messages": 2}, answers=answers)
    return compare(loop([300] * 6), config)


def test_a_blank_summary_is_asked_again_once_after_the_answer_with_its_feedback() -> None:
    """PA20: whitespace fails the summary agent's output validator and no text fails pydantic-ai's
    own check; either is asked again once, the request extended by the blank answer and the
    feedback for its kind, and a good second answer is the summary."""
    for blank in (" \n ", ""):
        ours, theirs = blank_case(blank, PAConfig().summary_text)
        assert ours.error is None and theirs.error is None
        first, second = [c for c in ours.calls if c.kind == "summary"][:2]
        assert second.messages[: len(first.messages)] == first.messages
        assert len(second.messages) == len(first.messages) + 2
        assert json.loads(second.messages[-2]) == {"content": blank, "role": "assistant"}
        feedback = json.loads(second.messages[-1])["content"]
        assert ("Please return text." in feedback) == (blank == "")
        after = ours.calls[ours.calls.index(second) + 1]
        assert after.kind == "reasoning" and any("Collect the passages." in m for m in after.messages)


def test_a_second_blank_summary_ends_the_run() -> None:
    """PA20: the summary agent allows one retry; a second blank answer of either kind ends the run
    after two summary calls."""
    for answers in ((" ", " "), ("", ""), (" ", ""), ("", "\t")):
        ours, theirs = blank_case(*answers)
        assert ours.error is not None and theirs.error is not None
        assert [c.kind for c in theirs.calls].count("summary") == 2
        assert ours.calls[-1].kind == "summary"


DUMP = """
from tests.parity.pa_driver import PAConfig, dump, run_pydantic_ai
from tests.parity.test_pydantic_ai_parity import loop
sizes = [300, 5000, 200, 9000, 100] * 3
for config in (PAConfig(capability="summary", settings={"max_tokens": 1500, "keep_messages": 4}),
               PAConfig(capability="clear", settings={"max_messages": 6, "clear_tool_inputs": True}),
               PAConfig(capability="window", settings={"max_fraction": 0.2, "keep_tokens": 900})):
    print(dump(run_pydantic_ai(loop(sizes, turns=2), config)))
"""


def test_the_driver_sends_the_same_bytes_in_two_processes() -> None:
    first, second = outputs_under_two_hash_seeds(DUMP)
    assert first and first == second


def test_no_system_prompt_sends_no_system_message() -> None:
    """An agent without instructions sends no system message, and the summarizer's own requests
    keep theirs (the lab sent an empty one before)."""
    script = dataclasses.replace(loop([300, 200, 100], turns=2), system_prompt="")
    for capability in ("window", "summary", "clear"):
        config = PAConfig(capability=capability, settings={"max_messages": 6, "keep_messages": 3})
        if capability == "clear":
            config = PAConfig(capability=capability, settings={"max_messages": 6, "keep_pairs": 1})
        ours, _ = compare(script, config)
        for call in ours.calls:
            assert (json.loads(call.messages[0])["role"] == "system") == (call.kind == "summary"), capability


def with_thinking(script: Script, every: int = 1) -> Script:
    """`script` with reasoning on every `every`-th round of each turn."""
    return dataclasses.replace(
        script,
        turns=tuple(
            dataclasses.replace(
                turn,
                rounds=tuple(
                    dataclasses.replace(r, thinking=f"Reasoning {t}.{i}: " + "weigh the passages " * 20)
                    if i % every == 0
                    else r
                    for i, r in enumerate(turn.rounds)
                ),
            )
            for t, turn in enumerate(script.turns)
        ),
    )


def test_reasoning_is_sent_back_in_reasoning_content_counted_and_left_out_of_the_summary() -> None:
    """PA22: a `ThinkingPart` from the OpenAI chat model's `reasoning_content` is sent back in that
    field of its assistant message, counted by the harness's estimate, and left out of the
    summarizer's transcript."""
    config = PAConfig(capability="summary", settings={"max_messages": 8, "keep_messages": 3})
    ours, _ = compare(with_thinking(loop([300, 2000, 200, 900, 100] * 2, turns=2)), config)
    reasoning = [c for c in ours.calls if c.kind == "reasoning"]
    assert any('"reasoning_content": "Reasoning ' in m for c in reasoning for m in c.messages)
    summaries = [c for c in ours.calls if c.kind == "summary"]
    assert summaries and not any("Reasoning " in m for c in summaries for m in c.messages)


def test_reasoning_on_some_rounds_only_matches_but_for_empty_reasoning_fields() -> None:
    """PA23: with reasoning on every other round, every request matches; pydantic-ai's empty
    `reasoning_content` on this turn's calls without reasoning (no tokens) is left out on both
    sides by `canonical_message`, the declared deviation."""
    config = PAConfig(capability="window", settings={"max_messages": 40, "keep_messages": 3})
    ours, _ = compare(with_thinking(loop([100, 100, 100, 100]), every=2), config)
    assert sum('"reasoning_content"' in m for m in ours.calls[-1].messages) == 2


def test_deviation_an_empty_final_answer_is_asked_again_by_pydantic_ai_only() -> None:
    """PA24: pydantic-ai keeps an answer with no text and no call and asks the model again after
    its retry prompt; the lab ends the reply on it, as the workload has no further answer."""
    script = loop([100], turns=2)
    script = dataclasses.replace(script, turns=tuple(dataclasses.replace(t, final="") for t in script.turns))
    config = PAConfig(capability="window", settings={"max_messages": 40})
    theirs, ours = run_pydantic_ai(script, config), run_lab(script, config)
    asked = [json.loads(m) for m in theirs.calls[2].messages[-2:]]
    assert asked[0] == {"content": "", "role": "assistant"} and asked[1]["role"] == "user"
    assert "Please return text or call a tool." in asked[1]["content"]
    assert ours.error is None and json.loads(ours.calls[2].messages[-1])["role"] == "user"
    assert not any("Please return text" in m for c in ours.calls for m in c.messages)


def test_deviation_arguments_that_are_no_json_object_are_refused_by_pydantic_ai_only() -> None:
    """PA25: pydantic-ai sends arguments that do not parse to an object as `{"INVALID_JSON": …}`
    and answers the call with its validation retry prompt, running no tool; the lab sends them as
    written and answers with the call's scripted result."""
    call = ScriptedCall(
        tool="retrieve", input='{"query": notes}', result=(TextBlock(text="Found."),), id="c1"
    )
    turn = ScriptedTurn(user=(TextBlock(text="Find."),), rounds=(ScriptedRound(calls=(call,)),), final="Ok.")
    script = Script(system_prompt="You research.", tools=TOOLS, turns=(turn,))
    config = PAConfig(capability="window", settings={"max_messages": 40})
    theirs, ours = run_pydantic_ai(script, config), run_lab(script, config)
    sent, mine = (json.loads(t.calls[-1].messages[2]) for t in (theirs, ours))
    assert json.loads(sent["tool_calls"][0][2]) == {"INVALID_JSON": '{"query": notes}'}
    assert mine["tool_calls"][0][2] == '{"query": notes}'
    answered, result = (json.loads(t.calls[-1].messages[3])["content"] for t in (theirs, ours))
    assert "json_invalid" in answered and result == "Found."


PIXEL = DataBlock(media_type="image/png", source="iVBORw0KGgo=", kind="base64")
LINKED = DataBlock(media_type="image/png", source="https://example.com/a&b.png")


def _looking_turn(t: int) -> ScriptedTurn:
    calls = (
        ScriptedCall(
            tool="retrieve", input="{}", result=(TextBlock(text="Shot:"), PIXEL, TextBlock(text='é"'))
        ),
        ScriptedCall(tool="figure", input="{}", result=(LINKED,)),
        ScriptedCall(tool="retrieve", input="{}", result=(TextBlock(text="plain"),)),
    )
    rounds = (ScriptedRound(calls=calls), ScriptedRound(calls=calls[1:2]))
    return ScriptedTurn(user=(TextBlock(text=f"Look {t}."),), rounds=rounds, final="Ok.")


def _looking() -> Script:
    return assign_call_ids(
        Script(system_prompt="You look.", tools=TOOLS, turns=(_looking_turn(0), _looking_turn(1)))
    )


def test_a_result_s_files_are_sent_as_pydantic_ai_names_and_frames_them() -> None:
    """PA26: pydantic-ai sends a returned image as a file named by its content: the tool message is
    the JSON array of the return's items, "See file <id>." for each file, and the files follow
    the round's tool messages in one user message, each between `<tool_result …>` tags naming the
    tool, the call and the file; the harness counts the return's items joined. The lab sends and
    counts the same."""
    ours, theirs = compare(_looking(), PAConfig(capability="window", settings={"max_messages": 40}))
    first = [json.loads(m) for m in theirs.calls[1].messages]
    shot = BinaryContent(data=base64.b64decode(PIXEL.source), media_type="image/png").identifier
    linked = ImageUrl(url=LINKED.source).identifier
    assert [m["role"] for m in first[3:]] == ["tool", "tool", "tool", "user"]
    assert first[3]["content"] == '["Shot:","See file ' + shot + '.","é\\""]'
    assert first[4]["content"] == f'["See file {linked}."]' and first[5]["content"] == "plain"
    files = first[6]["content"]
    assert [p["type"] for p in files] == ["text", "image_url", "text"] * 2
    assert files[0]["text"] == f'<tool_result tool_name="retrieve" tool_call_id="call-0001" file_id="{shot}">'
    assert files[1]["image_url"] == {"url": "data:image/png;base64,iVBORw0KGgo="}
    assert files[3]["text"] == f'<tool_result tool_name="figure" tool_call_id="call-0002" file_id="{linked}">'
    assert files[4]["image_url"] == {"url": LINKED.source} and files[5]["text"] == "</tool_result>"
    assert ours.calls[1].counted == theirs.calls[1].counted


@pytest.mark.parametrize(
    "config",
    [
        PAConfig(capability="window", settings={"max_messages": 4, "keep_messages": 2}),
        PAConfig(capability="clear", settings={"max_messages": 2, "keep_pairs": 0}),
        PAConfig(capability="clear", settings={"max_messages": 3, "keep_pairs": 1}),
        PAConfig(capability="summary", settings={"max_messages": 3, "keep_messages": 2}),
    ],
)
def test_returns_holding_files_are_windowed_cleared_and_summarized_as_the_harness_does(
    config: PAConfig,
) -> None:
    """A return's files belong to it: a window keeps or drops them with it, clearing blanks them,
    a summary's transcript names them, and every count sees the return's items joined."""
    ours, theirs = compare(_looking(), config)
    assert ours.calls[-1].messages == theirs.calls[-1].messages


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=12).map(lambda t: TextBlock(text=t)),
            st.binary(max_size=8).map(
                lambda b: DataBlock(
                    media_type="image/png", source=base64.b64encode(b).decode(), kind="base64"
                )
            ),
            st.text(min_size=1, max_size=12).map(lambda u: DataBlock(media_type="image/png", source=u)),
        ),
        min_size=1,
        max_size=4,
    ).filter(lambda parts: any(isinstance(p, DataBlock) for p in parts)),
    st.text(max_size=8),
    st.text(max_size=8),
)
def test_a_return_s_text_files_and_count_equal_pydantic_ai_s(parts: list[Any], name: str, call: str) -> None:
    """The lab's return text (JSON of the items), framed files and counted text equal what
    pydantic-ai and the harness make of the same return (quotes, escapes and tags included)."""
    result = ToolResultBlock(id=call, name=name, output=tuple(parts))
    content = [returned(p) for p in parts]
    part = ToolReturnPart(tool_name=name, content=content, tool_call_id=call)
    text, framed = part.model_response_str_and_user_content()
    texts = pydantic_ai_texts()
    sent, files = sent_return(result, FileTexts(texts.file_reference, texts.file_open, texts.file_close))
    assert sent.text == text
    assert [p.text if isinstance(p, TextBlock) else None for p in files] == [
        t if isinstance(t, str) else None for t in framed
    ]
    assert return_text(result, texts.file_reference) == tool_return_text(part)
