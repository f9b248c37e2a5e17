"""The `openhands` preset against the real `openhands-sdk==1.58.2` on generated workloads: the
same requests call for call (messages, tools, the SDK's own token count), so condensation
happens before the same calls with the same summary requests.

The SDK runs in its own environment (`make openhands-env`). Without it these tests fail, naming the
fix, unless the machine has no Python >= 3.12 at all: then they skip, saying so.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.models.summarizers import FailMode, summary_text_of
from ctxlab.presets.openhands.params import CondenserSettings, HybridParams, OpenHandsParams
from ctxlab.presets.openhands.tokens import count_message
from ctxlab.scenarios.summarizers import DEFAULT_FIELDS
from ctxlab.workloads.generators import generate
from tests.parity import hybrid_side as hybrid
from tests.parity.openhands_side import (
    SUMMARY_TEXT,
    Call,
    OpenHandsDriver,
    Workload,
    driver_workload,
    lab_run,
    run_lab,
    sdk_calls,
)
from tests.parity.openhands_workloads import TOOLS, hybrid_cases, openhands_cases


def compare(driver: OpenHandsDriver, case: Workload) -> list[str]:
    """Run both sides; assert the same calls; return the SDK's call kinds."""
    workload = driver_workload(case)
    trace = driver.run(workload)
    try:
        return same_calls(case, trace)
    except AssertionError:
        dump = os.environ.get("CTXLAB_PARITY_DUMP")
        if dump:  # the failing case, to replay by hand
            Path(dump).write_text(json.dumps({"workload": workload, "trace": trace}))
        raise


def same_calls(case: Workload, trace: dict[str, Any]) -> list[str]:
    """Assert that ctxlab makes the driver's calls; the SDK's call kinds."""
    theirs = sdk_calls(trace)
    ours, error = run_lab(case)
    for index, (mine, real) in enumerate(zip(ours, theirs, strict=False)):
        assert mine == real, f"call {index} differs: {first_difference(mine, real)}"
    assert len(ours) == len(theirs)
    failed = any(e not in (None, "error") for e in trace["errors"])
    assert (error is not None) == failed, (error, trace["errors"])
    return [c.kind for c in theirs]


def first_difference(mine: Call, real: Call) -> str:
    """Where two calls first differ, readably."""
    if (mine.kind, mine.tools) != (real.kind, real.tools):
        return f"kind/tools {mine.kind} vs {real.kind}"
    if mine.tokens != real.tokens:
        for a, b in zip(mine.wire, real.wire, strict=False):
            if count_message(a, {}) != count_message(b, {}):
                return f"tokens {mine.tokens} vs {real.tokens}:\n  ours   {a!r}\n  theirs {b!r}"
        return f"tokens {mine.tokens} vs {real.tokens}"
    for k, (a, b) in enumerate(zip(mine.messages, real.messages, strict=False)):
        if a != b:
            return f"message {k}:\n  ours   {a!r}\n  theirs {b!r}"
    if mine.reasoning != real.reasoning:
        return f"reasoning_content sent:\n  ours   {mine.reasoning!r}\n  theirs {real.reasoning!r}"
    return f"{len(mine.messages)} vs {len(real.messages)} messages"


@settings(max_examples=50, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(openhands_cases())
def test_openhands_matches_the_sdk_call_for_call(driver: OpenHandsDriver, case: Workload) -> None:
    compare(driver, case)


def single_turn(rounds: int, batch_every: int = 0) -> Script:
    calls = [
        ScriptedRound(
            text=f"step {i}",
            calls=tuple(
                ScriptedCall(
                    tool="run",
                    input=json.dumps({"command": f"ls {i}"}),
                    result=(TextBlock(text=f"out {i}.{k}"),),
                    id=f"c{i}.{k}",
                )
                for k in range(2 if batch_every and i % batch_every == batch_every - 1 else 1)
            ),
        )
        for i in range(rounds)
    ]
    return Script(
        system_prompt="You are a test.",
        tools=TOOLS[:1],
        turns=(ScriptedTurn(user=(TextBlock(text="Do it"),), rounds=tuple(calls), final="done"),),
    )


def summary_positions(kinds: list[str]) -> list[int]:
    """Before which reasoning call (0-based) each summary request came."""
    reasoning = 0
    out = []
    for kind in kinds:
        if kind == "summary":
            out.append(reasoning)
        else:
            reasoning += 1
    return out


def test_fifty_single_call_rounds_condense_before_calls_20_31_and_42(driver: OpenHandsDriver) -> None:
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    kinds = compare(driver, Workload(script=single_turn(50), params=params))
    assert summary_positions(kinds) == [20, 31, 42]


def test_a_two_call_batch_every_fifth_round_condenses_sooner_at_call_17(driver: OpenHandsDriver) -> None:
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    kinds = compare(driver, Workload(script=single_turn(50, batch_every=5), params=params))
    assert summary_positions(kinds)[0] == 17  # a straddling batch is forgotten: 17 rather than 19


def test_both_default_sets(driver: OpenHandsDriver) -> None:
    for defaults in ("agent", "class"):
        params = OpenHandsParams(condenser=CondenserSettings(defaults=defaults))  # type: ignore[arg-type]
        compare(driver, Workload(script=single_turn(130), params=params))


def test_a_failing_hard_reset_ends_the_run_as_in_the_sdk(driver: OpenHandsDriver) -> None:
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4, max_tokens=300))
    case = Workload(script=single_turn(12), params=params, fail_on=frozenset(range(1, 20)))
    kinds = compare(driver, case)
    assert kinds.count("summary") == 6  # one condensation, then the five reset attempts


def test_a_blank_summary_is_put_in_place_of_the_forgotten_events(driver: OpenHandsDriver) -> None:
    """10: a blank text is no failure; it is the summary, sent where the forgotten range began."""
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    case = Workload(script=single_turn(50), params=params, blank_on=frozenset({1, 2}))
    trace = driver.run(driver_workload(case))
    kinds = same_calls(case, trace)
    assert summary_positions(kinds) == [20, 31, 42]
    assert [c["summary"] for c in trace["condensations"]] == [" ", " ", SUMMARY_TEXT]


def test_an_answer_without_text_forgets_the_events_with_no_summary(driver: OpenHandsDriver) -> None:
    """10: an answer with no content condenses too; the range is forgotten, nothing replaces it."""
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    case = Workload(script=single_turn(50), params=params, blank_on=frozenset({1}), blank_mode="empty")
    trace = driver.run(driver_workload(case))
    kinds = same_calls(case, trace)
    assert [c["summary"] for c in trace["condensations"]][:2] == [None, SUMMARY_TEXT]
    after = sdk_calls(trace)[kinds.index("summary") + 1]
    assert not any(SUMMARY_TEXT in m[1] for m in after.messages) and len(kinds) > 50


def test_a_hard_reset_answered_blank_resets_at_its_first_attempt(driver: OpenHandsDriver) -> None:
    """11: the condensation fails, so the SDK resets; its first attempt, answered blank or with no
    text, is the reset (every event after the system prompt forgotten) and the run goes on."""
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4, max_tokens=300))
    answers: tuple[tuple[FailMode, str | None], ...] = (("no_tool_call", " "), ("empty", None))
    for mode, summary in answers:
        case = Workload(
            script=single_turn(12),
            params=params,
            fail_on=frozenset({1}),
            blank_on=frozenset({2}),
            blank_mode=mode,
        )
        trace = driver.run(driver_workload(case))
        kinds = same_calls(case, trace)
        assert kinds[6:9] == ["summary", "summary", "reasoning"] and trace["errors"] == [None]
        reset = trace["condensations"][0]
        assert (reset["offset"], reset["summary"]) == (1, summary)


def test_the_iteration_limit_stops_a_reply_without_a_forced_answer(driver: OpenHandsDriver) -> None:
    params = OpenHandsParams(condenser=CondenserSettings(max_size=10, keep_first=2), max_iterations=9)
    kinds = compare(driver, Workload(script=single_turn(20), params=params))
    assert len(kinds) == 9


def test_a_request_over_the_limit_by_itself_resets_until_the_iteration_limit(driver: OpenHandsDriver) -> None:
    """A system prompt over `max_tokens` by itself: every hard reset leaves a request still over the
    limit, so the SDK resets again, one summary per iteration, until `max_iteration_per_run` ends
    the reply (status `error`, no exception); the next turn starts over. 2 x 250 summaries: more
    than any fixed list of scripted answers (the driver once had 399, and the SDK then failed)."""
    script = replace(single_turn(2), system_prompt="You are a test. " * 200)
    script = replace(script, turns=script.turns * 2)
    condenser = CondenserSettings(max_size=40, keep_first=4, max_tokens=300)
    params = OpenHandsParams(condenser=condenser, max_iterations=250)
    kinds = compare(driver, Workload(script=script, params=params))
    assert kinds == ["summary"] * 500


def test_a_summary_over_the_token_trigger_by_itself_condenses_at_every_step_until_the_limit(
    driver: OpenHandsDriver,
) -> None:
    """23: a 300-token window, `max_tokens` 192, one retrieval of 1,200 bytes a round, and the
    fixed summarizer's own answer (360 characters): the system prompt, that summary and the tool
    alone count more than 192, so every condensation leaves the view over the trigger and the
    next step condenses again, forgetting the summary for a new one; nothing stops the chain
    before `max_iteration_per_run` (50 here) ends the reply, as status `error` in the SDK and
    `iteration_limit` in the lab. Summaries 1, 2 and 5 answer blank: a blank summary is kept as
    the summary and leaves room for one reasoning call. Summary 12 raises: it condenses nothing,
    and the hard reset's first attempt in the same step does, so 51 calls make 50 steps. The
    window is under the SDK's 16,384-token minimum: the driver sets `ALLOW_SHORT_CONTEXT_WINDOWS`.
    `tests/experiments/test_results.py`'s `openhands-blank-summary` run in small (there 500
    iterations, 496 summaries, and `max_tokens` 100 under the lab's own texts, whose tool lacks
    the ~90 tokens of the SDK's `security_risk` and `summary` parameters)."""
    query = {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to retrieve."}},
        "required": ["query"],
    }
    sizes = {"result_bytes": 1200, "system_prompt_bytes": 0, "user_bytes": 50, "tool_parameters": query}
    script = assign_call_ids(generate("retrieval", sizes, seed=0).script)
    params = OpenHandsParams(condenser=CondenserSettings(max_tokens=192), max_iterations=50)
    case = Workload(
        script=script,
        params=params,
        fail_on=frozenset({12}),
        blank_on=frozenset({1, 2, 5}),
        context_size=300,
        summary=summary_text_of(DEFAULT_FIELDS),
    )
    trace = driver.run(driver_workload(case))
    kinds = same_calls(case, trace)
    assert summary_positions(kinds) == [1, 2, 3, 3, 3] + [4] * 42  # 47 summaries, 42 in a row
    assert kinds[-42:] == ["summary"] * 42 and len(kinds) == 51
    condensed = trace["condensations"]
    assert len(kinds) - len(condensed) == 5  # the 4 reasoning calls, and the summary that raised
    assert kinds.count("reasoning") + len(condensed) == 50  # every step until the limit
    assert trace["errors"] == ["error"] and lab_run(case).trailing[-1] == "iteration_limit"
    blank = [c["before_call"] for c in condensed if c["summary"] == " "]
    assert blank == [1, 2, 3]  # each blank summary let the next reasoning call through
    assert all(c["summary"] == case.summary for c in condensed if c["before_call"] == 4)


def test_two_driver_processes_write_the_same_bytes(driver: OpenHandsDriver) -> None:
    params = OpenHandsParams(condenser=CondenserSettings(max_size=12, keep_first=3, max_tokens=900))
    workload = driver_workload(
        Workload(script=single_turn(30, batch_every=4), params=params, fail_on=frozenset({2}))
    )
    other = OpenHandsDriver()
    try:
        assert other.run_raw(workload) == driver.run_raw(workload)
    finally:
        other.close()


def test_deviation_an_empty_final_answer_does_not_end_the_reply_in_the_sdk(driver: OpenHandsDriver) -> None:
    """17: the SDK takes an empty answer (no text, no call) as no answer: it keeps the empty
    assistant message, adds its corrective nudge and asks the model again; the lab ends the reply
    there (the workload has no further answer to give). Most imported transcripts end so. Pinned:
    the SDK's extra request, which its scripted model cannot answer."""
    script = single_turn(2)
    script = replace(script, turns=(replace(script.turns[0], final=""),))
    case = Workload(
        script=script, params=OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    )
    trace = driver.run(driver_workload(case))
    theirs = sdk_calls(trace)
    ours, error = run_lab(case)
    assert ours == theirs[:-1] and error is None
    assert trace["errors"] == ["ConversationRunError"]  # the scripted model has nothing more to say
    empty, nudge = theirs[-1].messages[-2:]
    assert empty == ("assistant", "", (), "")
    assert nudge[0] == "user" and "did not include a function call or a message" in nudge[1]


FINISH = ToolSchema.of(
    "finish",
    "Signal that the task is done.",
    {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The answer."}},
        "required": ["message"],
    },
)


def _finishing(*calls: ScriptedCall) -> Workload:
    """Two rounds of the single-turn workload, then a round of `calls`; the finish tool offered."""
    script = single_turn(2)
    done = ScriptedRound(text="", calls=calls)
    turn = replace(script.turns[0], rounds=(*script.turns[0].rounds, done))
    script = replace(script, tools=(*script.tools, FINISH), turns=(turn,))
    return Workload(
        script=script, params=OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    )


def _call(tool: str, call_id: str) -> ScriptedCall:
    arguments = '{"message": "done"}' if tool == "finish" else '{"command": "ls"}'
    return ScriptedCall(tool=tool, input=arguments, result=(TextBlock(text="ok"),), id=call_id)


def test_a_call_of_a_tool_named_finish_ends_the_reply(driver: OpenHandsDriver) -> None:
    """18: the SDK takes any call of a tool named `finish` (its `FinishTool`'s name) as the end of
    the reply: the call runs, its result is kept, the conversation is finished and the model is
    not asked again; so does the lab."""
    case = _finishing(_call("finish", "f1"))
    trace = driver.run(driver_workload(case))
    theirs = sdk_calls(trace)
    ours, error = run_lab(case)
    assert ours == theirs and error is None and trace["errors"] == [None]
    assert len(theirs) == 3


def test_deviation_calls_after_finish_in_one_answer_run_in_the_lab_only(driver: OpenHandsDriver) -> None:
    """18: calls after a `finish` call in the same answer are dropped by the SDK, which then
    finishes; the lab runs them and asks once more. Pinned: the lab's one extra request."""
    case = _finishing(_call("finish", "f1"), _call("run", "x1"))
    trace = driver.run(driver_workload(case))
    theirs = sdk_calls(trace)
    ours, _ = run_lab(case)
    assert len(theirs) == 3 and len(ours) == 4 and ours[:2] == theirs[:2]


def test_a_tool_without_parameters_is_sent_without_a_required_list(driver: OpenHandsDriver) -> None:
    """The SDK writes a tool's schema from its action model, and pydantic writes `required` only
    when a field is required: a tool without parameters goes out without the key, even where the
    workload's schema says `"required": []` (as OpenHands' own `finish`-like tools and imported
    transcripts do)."""
    script = single_turn(2)
    status = ToolSchema.of("status", "Show the status.", {"type": "object", "properties": {}, "required": []})
    look = ScriptedRound(
        text="look",
        calls=(ScriptedCall(tool="status", input="{}", result=(TextBlock(text="clean"),), id="s1"),),
    )
    turn = replace(script.turns[0], rounds=(look, *script.turns[0].rounds))
    script = replace(script, tools=(*script.tools, status), turns=(turn,))
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    compare(driver, Workload(script=script, params=params))


def test_a_tool_text_over_50000_characters_is_cut_in_the_middle_in_every_request(
    driver: OpenHandsDriver,
) -> None:
    """The SDK cuts each text part of a tool message longer than 50,000 characters in the middle
    (`maybe_truncate`, its notice between head and tail) whenever it writes a request, and counts
    the cut text; a failed result's header is a part of its own. Found replaying a transcript
    whose `find` printed 52,612 characters."""
    script = single_turn(3)
    rounds = list(script.turns[0].rounds)
    for k, (size, error) in enumerate(((60_001, False), (50_001, True))):
        (call,) = rounds[k].calls
        text = "".join(f"/usr/lib/file_{i}.txt\n" for i in range(size))[:size]
        rounds[k] = replace(rounds[k], calls=(replace(call, result=(TextBlock(text=text),), error=error),))
    script = replace(script, turns=(replace(script.turns[0], rounds=tuple(rounds)),))
    condenser = CondenserSettings(max_size=40, keep_first=4, max_tokens=60_000)
    calls = compare(driver, Workload(script=script, params=OpenHandsParams(condenser=condenser)))
    assert calls == ["reasoning"] * 4


def compare_hybrid(
    driver: OpenHandsDriver, script: Script, params: HybridParams, fail_on: frozenset[int] = frozenset()
) -> list[Call]:
    """Run `openhands-hybrid` and its real parts (`tests/parity/hybrid_side.py`); assert the same
    calls; the real side's calls."""
    params = hybrid.with_swe_agent_notices(params)
    trace = driver.run(driver_workload(hybrid.condenser_workload(script, params, fail_on)))
    theirs = hybrid.real_calls(trace, params.masking)
    ours, error = hybrid.run_lab(script, params, fail_on)
    for index, (mine, real) in enumerate(zip(ours, theirs, strict=False)):
        assert mine == real, f"call {index} differs: {first_difference(mine, real)}"
    assert len(ours) == len(theirs)
    assert (error is not None) == any(e not in (None, "error") for e in trace["errors"])
    return theirs


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hybrid_cases())
def test_openhands_hybrid_matches_the_sdk_masked_by_swe_agent_call_for_call(
    driver: OpenHandsDriver, case: tuple[Workload, HybridParams]
) -> None:
    workload, params = case
    compare_hybrid(driver, workload.script, params, workload.fail_on)


def test_the_hybrid_masks_the_condensed_requests_and_later_users_are_not_observations(
    driver: OpenHandsDriver,
) -> None:
    first = single_turn(14)
    second = replace(first.turns[0], user=(TextBlock(text="Now the rest"),))
    script = replace(first, turns=(first.turns[0], second))
    params = HybridParams(
        masking=LastNObservationsParams(n=3), condenser=CondenserSettings(max_size=16, keep_first=2)
    )
    calls = compare_hybrid(driver, script, params)
    assert [c.kind for c in calls].count("summary") >= 2
    elided = [sum("lines omitted" in str(m.get("content")) for m in c.wire) for c in calls]
    assert max(elided) >= 3


def test_a_tool_keeps_its_name_as_written(driver: OpenHandsDriver) -> None:
    """A tool named `Bash` (as Claude Code's are) is sent as `Bash`: the driver names its tool
    classes explicitly, where the SDK would name a `BashTool` class `bash`."""
    script = single_turn(3)
    bash = ToolSchema.of(
        "Bash",
        "Run a command.",
        {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "It."}},
            "required": ["command"],
        },
    )
    turn = script.turns[0]
    rounds = tuple(replace(r, calls=tuple(replace(c, tool="Bash") for c in r.calls)) for r in turn.rounds)
    script = replace(script, tools=(bash,), turns=(replace(turn, rounds=rounds),))
    calls = compare(driver, Workload(script=script, params=OpenHandsParams()))
    assert calls == ["reasoning"] * 4


def test_an_empty_system_prompt_is_sent_as_an_empty_system_message(driver: OpenHandsDriver) -> None:
    """`Agent(system_prompt="")` (the workload's own prompt, empty) still sends its system prompt
    event, an empty system message counted by LiteLLM's counter, in reasoning requests and in the
    condenser's previews; the lab sends and counts it too."""
    script = dataclasses.replace(single_turn(50), system_prompt="")
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    assert summary_positions(compare(driver, Workload(script=script, params=params))) == [20, 31, 42]
    params = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=0, max_tokens=300))
    script = dataclasses.replace(single_turn(30), system_prompt="")
    assert "summary" in compare(driver, Workload(script=script, params=params))
    trace = driver.run(driver_workload(Workload(script=script, params=params)))
    assert {c.messages[0][:2] for c in sdk_calls(trace) if c.kind == "reasoning"} == {("system", "")}


def thinking_turn(rounds: int, thinking: int = 200, batch_every: int = 0) -> Script:
    """`single_turn` whose every round carries the model's reasoning (`thinking` characters)."""
    script = single_turn(rounds, batch_every)
    turn = script.turns[0]
    thought = tuple(
        replace(r, thinking=(f"Reasoning {i}: which file next? " * thinking)[:thinking])
        for i, r in enumerate(turn.rounds)
    )
    return replace(script, turns=(replace(turn, rounds=thought),))


def test_reasoning_is_neither_sent_nor_counted_for_a_model_outside_the_sdks_list(
    driver: OpenHandsDriver,
) -> None:
    """22: the model answers with `reasoning_content` (as an OpenAI-compatible provider sends it);
    the SDK keeps it on its events, but for `test-model`, not in `SEND_REASONING_CONTENT_MODELS`,
    no later request carries it, its token count leaves it out and the condenser's previews do
    not show it: the lab's requests, counts and condensations are the same, by both triggers."""
    plain = OpenHandsParams(condenser=CondenserSettings(max_size=40, keep_first=4))
    tokens = OpenHandsParams(condenser=CondenserSettings(max_size=400, keep_first=4, max_tokens=1500))
    for params, positions in ((plain, [20, 31, 42]), (tokens, None)):
        case = Workload(script=thinking_turn(50, thinking=2000), params=params)
        trace = driver.run(driver_workload(case))
        kinds = same_calls(case, trace)
        theirs = sdk_calls(trace)
        assert all(r is None for c in theirs for r in c.reasoning)
        assert not any("Reasoning" in m[1] for c in theirs for m in c.messages)
        plain_case = case_without(case)
        assert kinds == same_calls(plain_case, driver.run(driver_workload(plain_case)))  # none moves
        if positions is not None:
            assert summary_positions(kinds) == positions
        else:
            assert summary_positions(kinds)  # the token trigger fired


def case_without(case: Workload) -> Workload:
    """`case` with the reasoning taken off every round."""
    turns = tuple(
        replace(t, rounds=tuple(replace(r, thinking=None) for r in t.rounds)) for t in case.script.turns
    )
    return replace(case, script=replace(case.script, turns=turns))


def test_deviation_a_listed_model_gets_its_reasoning_sent_back_by_the_sdk_only(
    driver: OpenHandsDriver,
) -> None:
    """22: for a model of `SEND_REASONING_CONTENT_MODELS` (here `deepseek/deepseek-reasoner`) the
    SDK sends each call message's `reasoning_content` back in every later request (a batch's
    calls go out as one message, carrying it once) and counts it; the lab does not reproduce that
    list: it sends no reasoning whatever the model. Pinned: the SDK's requests carry the
    reasoning, the lab's do not, and otherwise they are the same messages."""
    params = OpenHandsParams(condenser=CondenserSettings(max_size=400, keep_first=4))
    script = thinking_turn(4, batch_every=2)
    case = Workload(script=script, params=params, model="deepseek/deepseek-reasoner")
    trace = driver.run(driver_workload(case))
    theirs = sdk_calls(trace)
    ours, _ = run_lab(case)
    assert [c.messages for c in ours] == [c.messages for c in theirs]
    assert all(r is None for c in ours for r in c.reasoning)
    sent = [r for r in theirs[-1].reasoning if r is not None]
    assert sent == [r.thinking for r in case.script.turns[0].rounds]
    plain = sdk_calls(driver.run(driver_workload(replace(case, model="test-model"))))
    assert theirs[-1].tokens > plain[-1].tokens  # and counted
