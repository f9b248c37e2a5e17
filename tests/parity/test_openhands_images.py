"""Images under the OpenHands presets against the real `openhands-sdk==1.58.2` (CHECKLIST OpenHands
24): the model the presets stand for (`test-model`) has no vision, so the SDK sends every message
without its images and counts it so, previews an image in the summary request as
`[Image: 1 URLs]`, and answers a user message holding an image itself, without calling the model.

The driver feeds the SDK `ImageContent` (a user's, a tool result's); both sides are compared in
the normal form, where an image sent would show as `<image URL>`.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.presets.openhands.params import CondenserSettings, HybridParams, OpenHandsParams
from ctxlab.texts.openhands import openhands_texts
from tests.parity.openhands_side import (
    SUMMARY_TEXT,
    OpenHandsDriver,
    Workload,
    driver_workload,
    lab_run,
    run_lab,
    sdk_calls,
)
from tests.parity.openhands_workloads import TOOLS, image_cases
from tests.parity.test_openhands_parity import compare, compare_hybrid, summary_positions

URL = "https://img.test/screen.png"


def image(url: str = URL) -> DataBlock:
    return DataBlock(media_type="image/png", source=url)


def rounds(count: int, result: tuple[Part, ...], prefix: str = "c") -> tuple[ScriptedRound, ...]:
    """`count` single-call rounds (ids `prefix` and the round), each result `result`, its
    images' URLs numbered by round."""
    return tuple(
        ScriptedRound(
            text=f"step {i}",
            calls=(
                ScriptedCall(
                    tool="run",
                    input=json.dumps({"command": f"shot {i}"}),
                    result=tuple(image(f"{p.source}?{i}") if isinstance(p, DataBlock) else p for p in result),
                    id=f"{prefix}{i}",
                ),
            ),
        )
        for i in range(count)
    )


def script(*turns: ScriptedTurn) -> Script:
    return Script(system_prompt="You are a test.", tools=TOOLS[:1], turns=turns)


def texts_of(result: tuple[Part, ...]) -> tuple[Part, ...]:
    return tuple(p for p in result if isinstance(p, TextBlock))


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(image_cases())
def test_openhands_with_images_matches_the_sdk_call_for_call(driver: OpenHandsDriver, case: Workload) -> None:
    compare(driver, case)


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(image_cases(hybrid=True), st.integers(1, 8), st.integers(1, 3))
def test_openhands_hybrid_with_images_matches_the_sdk_masked_by_swe_agent_call_for_call(
    driver: OpenHandsDriver, case: Workload, n: int, polling: int
) -> None:
    masking = LastNObservationsParams(n=n, polling=polling)
    params = HybridParams(
        masking=masking, condenser=case.params.condenser, max_iterations=case.params.max_iterations
    )
    compare_hybrid(driver, case.script, params, case.fail_on)


def test_a_user_image_is_answered_in_the_models_place_and_never_sent(driver: OpenHandsDriver) -> None:
    """The SDK calls no model for a turn whose user message holds an image: the agent answers
    that the model does not support images and the turn ends. The next turn's request holds
    the user's text without the image, and that answer."""
    first = ScriptedTurn(
        user=(TextBlock(text="What is this?"), image()), rounds=rounds(2, (), "u"), final="never"
    )
    second = ScriptedTurn(
        user=(TextBlock(text="List the files."),), rounds=rounds(1, (TextBlock(text="a"),)), final="done"
    )
    case = Workload(script=script(first, second), params=OpenHandsParams())
    assert compare(driver, case) == ["reasoning", "reasoning"]
    ours, _ = run_lab(case)
    roles = [(m[0], m[1]) for m in ours[0].messages]
    refusal = openhands_texts().image_refusal
    assert "(test-model) does not support image understanding" in refusal
    assert roles[1:] == [("user", "What is this?"), ("assistant", refusal), ("user", "List the files.")]
    (warning,) = lab_run(case).warnings  # the calls table shows no call for the first turn: told
    assert warning.startswith("turn 0: openhands answered in the model's place before call 0")
    assert refusal[:100] in warning


def test_a_result_of_images_alone_keeps_its_tool_message_with_no_content(driver: OpenHandsDriver) -> None:
    """Dropping a result's images never drops its tool message: the call keeps its result (OpenAI
    and Anthropic refuse one without the other), sent with no text and counted so."""
    case = Workload(
        script=script(
            ScriptedTurn(user=(TextBlock(text="Look."),), rounds=rounds(3, (image(),)), final="ok")
        ),
        params=OpenHandsParams(),
    )
    compare(driver, case)
    ours, _ = run_lab(case)
    last = ours[-1].wire
    tools = [m for m in last if m["role"] == "tool"]
    called = [c["id"] for m in last for c in m.get("tool_calls") or ()]
    assert [m["tool_call_id"] for m in tools] == called == ["c0", "c1", "c2"]
    assert all(m["content"] == "" for m in tools) and not any(m["role"] == "user" for m in last[2:])
    trace = driver.run(driver_workload(case))
    assert [m["content"] for m in sdk_calls(trace)[-1].wire if m["role"] == "tool"] == [[], [], []]


def test_images_are_neither_sent_nor_counted_so_the_token_trigger_fires_as_without_them(
    driver: OpenHandsDriver,
) -> None:
    """With images beside every result's text, the reasoning requests, the SDK's counts and the
    condensations (by the token trigger) are those of the same workload without the images (the
    summary requests differ only by the images' previews)."""
    shot = (TextBlock(text="screen captured " * 30), image())
    params = OpenHandsParams(condenser=CondenserSettings(max_size=200, keep_first=2, max_tokens=1500))

    def case(result: tuple[Part, ...]) -> Workload:
        turn = ScriptedTurn(user=(TextBlock(text="Watch."),), rounds=rounds(30, result), final="ok")
        return Workload(script=script(turn), params=params)

    kinds = compare(driver, case(shot))
    assert len(summary_positions(kinds)) >= 2
    with_images, _ = run_lab(case(shot))
    without, _ = run_lab(case(texts_of(shot)))
    assert [c.kind for c in with_images] == [c.kind for c in without] == kinds
    assert [c for c in with_images if c.kind == "reasoning"] == [c for c in without if c.kind == "reasoning"]


def test_the_summary_request_previews_an_image_as_the_sdk_writes_it(driver: OpenHandsDriver) -> None:
    """Forgotten events show each image as `[Image: 1 URLs]`: a result's parts joined, after a
    failed result's error header too."""
    result = (TextBlock(text="before "), image(), TextBlock(text=" after"), image(URL + "#b"))
    turn = ScriptedTurn(user=(TextBlock(text="Shoot."),), rounds=rounds(12, result), final="ok")
    failing = replace_error(turn, 3)
    params = OpenHandsParams(condenser=CondenserSettings(max_size=10, keep_first=2))
    calls = run_lab(Workload(script=script(failing), params=params))[0]
    compare(driver, Workload(script=script(failing), params=params))
    summary = next(c for c in calls if c.kind == "summary").messages[1][1]
    assert "Result: before [Image: 1 URLs] after[Image: 1 URLs]" in summary
    assert "error occurred during execution.]\nbefore [Image: 1 URLs]" in summary


def replace_error(turn: ScriptedTurn, index: int) -> ScriptedTurn:
    """`turn` with round `index`'s call failed."""
    from dataclasses import replace

    failed = replace(turn.rounds[index], calls=(replace(turn.rounds[index].calls[0], error=True),))
    return replace(turn, rounds=(*turn.rounds[:index], failed, *turn.rounds[index + 1 :]))


def test_a_summary_merged_with_a_user_message_of_images_alone_is_sent_as_the_summary(
    driver: OpenHandsDriver,
) -> None:
    """A user message of an image alone is sent empty. The summary put after it (the first events
    kept) is merged with it, so the request's last user message holds the image again: the agent
    answers in the model's place and the turn ends; the next turn's requests send the merged
    message as the summary's text alone."""
    first = ScriptedTurn(user=(image(),), final="never")
    second = ScriptedTurn(
        user=(TextBlock(text="Go on."),), rounds=rounds(12, (TextBlock(text="x"),)), final="ok"
    )
    third = ScriptedTurn(user=(TextBlock(text="Again."),), final="ok")
    params = OpenHandsParams(condenser=CondenserSettings(max_size=10, keep_first=2))
    case = Workload(script=script(first, second, third), params=params)
    kinds = compare(driver, case)
    assert kinds == ["reasoning"] * 4 + ["summary", "reasoning"]
    ours, _ = run_lab(case)
    assert ours[0].messages[1] == ("user", "", (), "")
    refusal = openhands_texts().image_refusal
    last = [m[:2] for m in ours[-1].messages]
    assert last[1] == ("user", SUMMARY_TEXT)
    assert last[-2:] == [("assistant", refusal), ("user", "Again.")]
