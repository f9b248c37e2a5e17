"""The `swe-agent` preset against SWE-agent's own `LastNObservations` (3ea751c, run from the
vendored file; see `tests/parity/swe_agent_side.py`): the same requests call for call, in the
OpenAI view, on generated workloads and on the cases that pin each rule.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.blocks import DataBlock, TextBlock
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from tests.parity.swe_agent_side import (
    PROCESSORS,
    Workload,
    lab_requests,
    normal,
    render,
    swe_history,
    swe_requests,
)
from tests.parity.swe_agent_workloads import TOOLS, swe_agent_cases

SENT_KEYS = {"role", "content", "tool_calls", "tool_call_id"}
"""What a message of either side holds: no reasoning, no thinking blocks."""


def same_requests(case: Workload) -> list[list[dict[str, object]]]:
    """Assert that ctxlab sends SWE-agent's requests; SWE-agent's requests."""
    theirs = swe_requests(case)
    ours = lab_requests(case)
    assert len(ours) == len(theirs)
    for index, (mine, real) in enumerate(zip(ours, theirs, strict=True)):
        assert normal(mine) == normal(real), f"request {index} differs"
        assert all(set(m) <= SENT_KEYS for m in (*mine, *real)), f"request {index} sends more"
    return theirs


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(swe_agent_cases())
def test_swe_agent_matches_its_history_processor_call_for_call(case: Workload) -> None:
    same_requests(case)


def session(
    outputs: list[str], *, tools: tuple[str, ...] = (), images: dict[int, int] | None = None
) -> Script:
    """One task, one `bash` (or the given tool) call per step, printing `outputs`."""
    rounds = tuple(
        ScriptedRound(
            text=f"step {k}",
            calls=(
                ScriptedCall(
                    tool=tools[k] if tools else "bash",
                    input=json.dumps({"command": f"cat f{k}"}),
                    result=(
                        TextBlock(text=out),
                        *(
                            DataBlock(media_type="image/png", source=f"https://example.com/{k}-{i}.png")
                            for i in range((images or {}).get(k, 0))
                        ),
                    ),
                    id=f"call_{k}",
                ),
            ),
        )
        for k, out in enumerate(outputs)
    )
    turn = ScriptedTurn(user=(TextBlock(text="Fix the bug."),), rounds=rounds, final="done")
    return Script(system_prompt="You are a helpful assistant.", tools=TOOLS, turns=(turn,))


def contents(request: list[dict[str, object]]) -> list[object]:
    return [m["content"] for m in request if m["role"] == "tool"]


def test_the_notice_counts_the_lines_of_the_templated_observation() -> None:
    outputs = ["a\nb\nc", "", "x", "y", "z"]
    last = same_requests(Workload(script=session(outputs), params=LastNObservationsParams(n=2)))[-1]
    # "OBSERVATION:\n" adds a line; an empty output is the one-line no-output template
    assert contents(last)[:3] == [
        "Old environment output: (4 lines omitted)",
        "Old environment output: (1 lines omitted)",
        "Old environment output: (2 lines omitted)",
    ]
    assert render("") == "Your command ran successfully and did not produce any output."


def test_the_task_is_never_elided_and_demonstrations_do_not_count() -> None:
    for demos in (0, 1, 2):
        case = Workload(script=session(["o"] * 6), params=LastNObservationsParams(n=1), demos=demos)
        last = same_requests(case)[-1]
        assert last[1] == {"role": "user", "content": "Fix the bug."}
        assert sum("omitted" in str(c) for c in contents(last)) == 5
    history = swe_history(Workload(script=session([]), params=LastNObservationsParams(n=1), demos=2))[0]
    assert [h.get("is_demo", False) for h in history] == [False, True, True, True, True, True, False]


def test_images_are_counted_and_dropped_with_the_observation() -> None:
    case = Workload(
        script=session(["one", "two", "three"], images={0: 2}), params=LastNObservationsParams(n=1)
    )
    requests = same_requests(case)
    assert contents(requests[-1])[0] == "Old environment output: (2 lines omitted) (2 images omitted)"
    assert contents(requests[1])[0] == [
        {"type": "text", "text": "OBSERVATION:\none"},
        *({"type": "image_url", "image_url": {"url": f"https://example.com/0-{i}.png"}} for i in range(2)),
    ]


def test_polling_keeps_between_n_and_n_plus_polling() -> None:
    case = Workload(script=session(["o"] * 12), params=LastNObservationsParams(n=3, polling=4))
    kept = [sum("omitted" not in str(c) for c in contents(r)) for r in same_requests(case)]
    assert kept == [0, 1, 2, 3, 4, 5, 6, 3, 4, 5, 6, 3, 4]


def test_keep_and_remove_tags_on_observations_and_removal_wins() -> None:
    tools = ("bash", "submit", "str_replace_editor") * 3
    keep = LastNObservationsParams(n=2, keep_tools=("submit",))
    last = same_requests(Workload(script=session(["o"] * 9, tools=tools), params=keep))[-1]
    assert ["omitted" in str(c) for c in contents(last)] == [
        True,
        False,
        True,
        True,
        False,
        True,
        True,
        False,
        False,
    ]
    both = LastNObservationsParams(n=2, keep_tools=("submit",), remove_tools=("submit", "bash"))
    last = same_requests(Workload(script=session(["o"] * 9, tools=tools), params=both))[-1]
    assert ["omitted" in str(c) for c in contents(last)] == [
        True,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
        False,
    ]


def test_tagging_actions_does_not_keep_their_observations() -> None:
    # SWE-agent's TagToolCallObservations tags the action, not the observation: LastNObservations
    # never elides an action, so the default `keep_output` tag changes nothing
    case = Workload(
        script=session(["o"] * 6),
        params=LastNObservationsParams(n=2),
        action_tags=("keep_output",),
        tagged_tools=("bash",),
    )
    assert swe_requests(case) == swe_requests(Workload(script=case.script, params=case.params))
    same_requests(case)


def test_a_remove_tag_on_an_action_fails_swe_agent_s_own_assertion() -> None:
    case = Workload(
        script=session(["o"] * 3),
        params=LastNObservationsParams(n=2),
        action_tags=("remove_output",),
        tagged_tools=("bash",),
    )
    with pytest.raises(AssertionError, match="Expected observation for dropped entry, got: action"):
        swe_requests(case)


def test_n_is_required_and_positive_on_both_sides() -> None:
    for n in (0, -1):
        with pytest.raises(ValueError, match="n must be a positive integer"):
            PROCESSORS.LastNObservations(n=n)
        with pytest.raises(ValueError, match="give n: 5 as in the paper"):
            LastNObservationsParams(n=n)
    with pytest.raises(ValueError, match="Field required"):
        PROCESSORS.LastNObservations()


def test_ctxlab_texts_change_only_the_wording() -> None:
    case = Workload(script=session(["a\nb", "c", "d"]), params=LastNObservationsParams(n=1))
    ours = lab_requests(case, texts_name="ctxlab")
    assert contents(ours[-1])[:2] == [
        "[earlier tool output elided: 3 lines]",
        "[earlier tool output elided: 2 lines]",
    ]


def test_an_empty_system_template_is_still_sent_as_a_system_message() -> None:
    """SWE-agent's history always starts with the rendered system template, so an empty one goes
    out as an empty system message, and the lab sends it too."""
    script = dataclasses.replace(session(["a", "b", "c", "d"]), system_prompt="")
    for request in same_requests(Workload(script=script, params=LastNObservationsParams(n=2))):
        assert request[0] == {"role": "system", "content": ""}


def thinking_session(outputs: list[str]) -> Script:
    """`session` with thinking on every step, as an OpenAI-compatible provider's reasoning."""
    script = session(outputs)
    (turn,) = script.turns
    rounds = tuple(dataclasses.replace(r, thinking=f"Why step {k}? " * 40) for k, r in enumerate(turn.rounds))
    return dataclasses.replace(script, turns=(dataclasses.replace(turn, rounds=rounds),))


def test_reasoning_content_is_never_kept_so_never_sent() -> None:
    """SWE-agent's model keeps of an answer its text, calls and LiteLLM `thinking_blocks`; an
    OpenAI-compatible provider's `reasoning_content` reaches neither the history nor a request,
    and the processor counts observations, not tokens. The lab's requests carry none either."""
    case = Workload(script=thinking_session(["a", "b\nc", "d", "e"]), params=LastNObservationsParams(n=2))
    theirs = same_requests(case)
    actions = [item for item in swe_history(case)[-1] if item["role"] == "assistant"]
    assert all(item["thinking_blocks"] == [] for item in actions)
    assert not any("Why step" in json.dumps(m) for request in theirs for m in request)


def test_deviation_thinking_blocks_are_sent_back_by_swe_agent_only() -> None:
    """Declared: a model whose LiteLLM message carries `thinking_blocks` (Claude) has them kept on
    the action and sent back with it; ctxlab's thinking stands for `reasoning_content`, which
    SWE-agent never reads, so the lab's requests carry no thinking."""
    case = Workload(
        script=thinking_session(["a", "b", "c"]), params=LastNObservationsParams(n=2), thinking_blocks=True
    )
    theirs = swe_requests(case)[-1]
    ours = lab_requests(case)[-1]
    assert normal(ours) == normal(theirs)
    sent = [m["thinking_blocks"][0]["thinking"] for m in theirs if "thinking_blocks" in m]
    assert sent == [f"Why step {k}? " * 40 for k in range(3)]
    assert not any("thinking_blocks" in m for m in ours)
