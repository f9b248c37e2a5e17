"""Generators: exact sizes per family, determinism for every registered one, the registry."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from pydantic import ValidationError

from ctxlab.core.agentscope.toolkit import RESET_TOOLS
from ctxlab.core.messages.blocks import DataBlock, TextBlock, utf8_len
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.world.script import Script, ScriptedCall, assign_call_ids
from ctxlab.problems import WorkloadError, describe_errors
from ctxlab.workloads.format import BUILTIN_TOOLS
from ctxlab.workloads.gen_agents import split_evenly
from ctxlab.workloads.generators import GENERATORS, GeneratorSpec, generate, get_generator
from ctxlab.workloads.transcript import script_messages

ESTIMATOR = AgentScopeEstimator()
SMALL = {"long_conversation": {"turns": 40}, "huge_read": {"tool_result_limit": 2000, "excess_tokens": 10}}


def result_text(call: ScriptedCall) -> str:
    assert call.result is not None
    return "".join(p.text for p in call.result if isinstance(p, TextBlock))


def script_bytes(script: Script) -> int:
    return sum(m.tally.nbytes for m in script_messages(script))


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_every_generator_is_deterministic_and_seed_sensitive(name: str) -> None:
    params = SMALL.get(name)
    first = generate(name, params, seed=1)
    assert first == generate(name, params, seed=1)
    assert first.script != generate(name, params, seed=2).script
    assert first.probes == ()


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_every_generator_declares_the_tools_it_calls_and_leaves_only_builtins_unscripted(name: str) -> None:
    script = generate(name, SMALL.get(name), seed=0).script
    declared = {t.name for t in script.tools} | {t.name for g in script.tool_groups for t in g.tools}
    builtins = {*BUILTIN_TOOLS, *((RESET_TOOLS,) if script.tool_groups else ())}
    for call in script.calls():
        assert call.tool in declared or call.tool in builtins, (name, call.tool)
        assert (call.result is None) == (call.tool in builtins or call.delegate is not None), (
            name,
            call.tool,
        )
        json.loads(call.input)
    assert len({c.id for c in assign_call_ids(script).calls()}) == len(list(script.calls()))


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_every_generator_has_a_summary_and_documented_defaults(name: str) -> None:
    generator = get_generator(name)
    assert generator.summary and generator.name == name
    assert generator.parse(None) == generator.params()


def test_retrieval_is_ch08s_workload() -> None:
    script = generate("retrieval").script
    (turn,) = script.turns
    assert len(turn.rounds) == 6 and turn.final == "Done."
    assert utf8_len(script.system_prompt) == 26 and utf8_len(turn.user[0].text) == 27  # type: ignore[union-attr]
    for n, round_ in enumerate(turn.rounds, start=1):
        (call,) = round_.calls
        assert call.input == json.dumps({"query": f"batch {n}"})
        assert utf8_len(call.input) + utf8_len(result_text(call)) == 6032
    # Each round adds exactly 1508 estimator tokens to the context.
    system, user, reply = script_messages(script)
    counts = []
    for k in range(7):
        blocks = reply.blocks[: 2 * k]
        counts.append(ESTIMATOR.count([system, user, reply.with_blocks(blocks)], script.tools))
    assert [b - a for a, b in pairwise(counts)] == [1508] * 6


def test_retrieval_sizes_follow_parameters() -> None:
    script = generate("retrieval", {"rounds": 2, "result_bytes": 17, "kind": "zh", "user_bytes": 0}).script
    assert [utf8_len(result_text(c)) for c in script.calls()] == [17, 17]
    assert script.turns[0].user == (TextBlock(text=""),)


def test_repeated_reads_repeat_keys_with_identical_results() -> None:
    script = generate("repeated_reads", {"files": 2, "turns": 3, "reads_per_turn": 4}).script
    calls = list(script.calls())
    assert len(calls) == 12
    by_key: dict[tuple[str, str], set[str]] = {}
    for call in calls:
        by_key.setdefault((call.tool, call.input), set()).add(result_text(call))
        size = 600 if call.tool == "grep" else 3000
        assert utf8_len(result_text(call)) == size
    assert len(by_key) == 6 and all(len(results) == 1 for results in by_key.values())
    reads = [result_text(c) for c in calls if c.tool in ("Read", "bash")]
    assert len(set(reads)) == 2  # `cat` of a file returns what `Read` of it returns


def test_huge_read_is_exactly_above_the_limit() -> None:
    script = generate("huge_read", {"tool_result_limit": 5000, "excess_tokens": 3}).script
    (call,) = script.calls()
    text = result_text(call)
    assert utf8_len(text) == 4 * 5003 and ESTIMATOR.text_tokens(text) == 5003
    default = result_text(next(generate("huge_read").script.calls()))
    assert ESTIMATOR.text_tokens(default) == 60000


def test_parallel_batches_fan_out_up_to_twelve() -> None:
    script = generate("parallel_batches", {"rounds": 2, "fan_out": 12, "result_bytes": 333}).script
    for round_ in script.turns[0].rounds:
        assert len(round_.calls) == 12
        assert [c.tool for c in round_.calls[:4]] == ["web_search", "fetch_page", "Read", "web_search"]
        assert {utf8_len(result_text(c)) for c in round_.calls} == {333}
        assert round_.text is not None and utf8_len(round_.text) == 80
    with pytest.raises(WorkloadError, match=r"params\.fan_out: 13 is above the maximum 12; use 12 or less"):
        generate("parallel_batches", {"fan_out": 13})


def test_failing_retries_repeat_the_identical_failure() -> None:
    script = generate("failing_retries", {"streaks": 2, "failures": 4}).script
    for turn in script.turns:
        calls = [round_.calls[0] for round_ in turn.rounds]
        failing, success = calls[:4], calls[4]
        assert len({(c.tool, c.input, result_text(c)) for c in failing}) == 1
        assert all(c.error for c in failing) and not success.error
        assert success.input == failing[0].input and utf8_len(result_text(success)) == 600
    assert script.turns[0].rounds[0].calls[0].input != script.turns[1].rounds[0].calls[0].input
    fixed = generate("failing_retries", {"error": "Boom", "recover": False}).script
    assert [result_text(r.calls[0]) for r in fixed.turns[0].rounds] == ["Boom"] * 3


def test_chinese_turns_have_exact_token_counts() -> None:
    script = generate("chinese_turns", {"turns": 2, "user_tokens": 999, "result_tokens": 1001}).script
    for turn in script.turns:
        (user,) = turn.user
        assert isinstance(user, TextBlock) and ESTIMATOR.text_tokens(user.text) == 999
        assert utf8_len(user.text) == 4 * 999 and sum(ord(ch) > 0x2E80 for ch in user.text) > 1000
        assert ESTIMATOR.text_tokens(result_text(turn.rounds[0].calls[0])) == 1001
        assert ESTIMATOR.text_tokens(turn.final) == 150
    assert ESTIMATOR.text_tokens(script.system_prompt) == 100


def test_images_exceed_max_image_num_by_default() -> None:
    script = generate("images").script
    user_images = [p for t in script.turns for p in t.user if isinstance(p, DataBlock)]
    result_images = [p for c in script.calls() for p in c.result or () if isinstance(p, DataBlock)]
    assert len(user_images) == 2 and len(result_images) == 6 and len(user_images + result_images) > 5
    assert len({p.source for p in user_images + result_images}) == 8
    inline = generate("images", {"source": "base64", "media_type": "image/jpeg", "caption_bytes": 9}).script
    call = next(inline.calls())
    assert call.result is not None
    caption, image = call.result
    assert isinstance(image, DataBlock) and image.kind == "base64" and image.media_type == "image/jpeg"
    assert isinstance(caption, TextBlock) and utf8_len(caption.text) == 9
    with pytest.raises(WorkloadError, match=r"params\.media_type: 'png' is not a media type"):
        generate("images", {"media_type": "png"})


def test_task_list_drives_the_builtin_task_tools() -> None:
    script = generate("task_list", {"tasks": 5, "tasks_per_turn": 2, "list_every": 2}).script
    assert len(script.turns) == 4
    calls = list(script.calls())
    creates = [c for c in calls if c.tool == "TaskCreate"]
    assert len(creates) == 5 and all(c.result is None for c in creates)
    updates = [json.loads(c.input) for c in calls if c.tool == "TaskUpdate"]
    assert updates == [
        {"task_id": str(k), "status": status} for k in range(1, 6) for status in ("in_progress", "completed")
    ]
    assert sum(c.tool == "TaskList" for c in calls) == 1 + 2
    work = [c for c in calls if c.tool == "Read"]
    assert len(work) == 5 and {utf8_len(result_text(c)) for c in work} == {1500}


@pytest.mark.parametrize("share", [0.84, 0.5, 0.95])
def test_swe_loop_observations_are_the_requested_share_of_each_turn(share: float) -> None:
    script = generate("swe_loop", {"observation_share": share, "turns": 2}).script
    for turn in script.turns:
        calls = [c for r in turn.rounds for c in r.calls]
        observations = sum(utf8_len(result_text(c)) for c in calls)
        actions = (
            sum(p.tally.nbytes for p in turn.user)
            + sum(utf8_len(r.text or "") for r in turn.rounds)
            + sum(utf8_len(c.input) for c in calls)
            + utf8_len(turn.final)
        )
        total = observations + actions
        assert abs(observations / total - share) <= 1 / total
        tokens = ESTIMATOR.text_tokens("x" * observations) / ESTIMATOR.text_tokens("x" * total)
        assert abs(tokens - share) < 0.001
        assert [c.tool for c in calls[:3]] == ["Read", "Edit", "bash"]


def test_split_evenly_keeps_the_total() -> None:
    for total in range(30):
        for parts in range(1, 7):
            sizes = split_evenly(total, parts)
            assert sum(sizes) == total and max(sizes) - min(sizes) <= 1


def test_customer_service_makes_many_short_json_lookups() -> None:
    script = generate("customer_service", {"turns": 5, "calls_per_turn": 4, "result_bytes": 300}).script
    assert utf8_len(script.system_prompt) == 4000
    assert [len(t.rounds) for t in script.turns] == [4] * 5
    for call in script.calls():
        assert utf8_len(result_text(call)) == 300 and result_text(call).startswith("{")
    assert {utf8_len(t.final) for t in script.turns} == {220}


def test_long_conversation_has_a_thousand_turns_by_default() -> None:
    script = generate("long_conversation").script
    assert len(script.turns) == 1000
    assert sum(len(t.rounds) for t in script.turns) == 100
    assert {utf8_len(t.final) for t in script.turns} == {400}
    assert script_bytes(script) == 300 + 1000 * (200 + 400) + sum(
        utf8_len(c.input) + 1500 for c in script.calls()
    )


def test_generators_plant_their_probes() -> None:
    planted = generate(
        "retrieval",
        {"rounds": 2, "probes": [{"key": "db-port", "value": "5432", "where": "turn 0 round 1"}]},
        seed=3,
    )
    (probe,) = planted.probes
    assert probe.kind == "fact" and "db-port: 5432" in result_text(planted.script.turns[0].rounds[1].calls[0])
    plain = generate("retrieval", {"rounds": 2}, seed=3).script
    assert (
        utf8_len(result_text(planted.script.turns[0].rounds[1].calls[0])) == 6012 + len("db-port: 5432") + 1
    )
    assert planted.script.turns[0].rounds[0] == plain.turns[0].rounds[0]


def test_unknown_names_and_bad_parameters_are_located() -> None:
    with pytest.raises(
        WorkloadError, match=r"name: unknown generator 'retreival' \(did you mean 'retrieval'\?\)"
    ):
        generate("retreival")
    with pytest.raises(WorkloadError, match=r"params\.rounds: 0 is below the minimum 1; use 1 or more"):
        generate("retrieval", {"rounds": 0})
    with pytest.raises(
        WorkloadError, match=r"params\.round: unknown key 'round' \(did you mean 'rounds'\?\)"
    ):
        generate("retrieval", {"round": 3})
    with pytest.raises(WorkloadError, match=r"params\.probes\[0\]\.where: cannot read where 'round 1'; use"):
        generate("retrieval", {"probes": [{"key": "k", "value": "v", "where": "round 1"}]})
    with pytest.raises(
        WorkloadError, match=r"params\.probes\[0\]\.where: cannot plant at 'turn 3': turn 3 does"
    ):
        generate("retrieval", {"probes": [{"key": "k", "value": "v", "where": "turn 3"}]})


def test_generator_spec_validates_name_and_params_at_load_time() -> None:
    spec = GeneratorSpec.model_validate({"name": "retrieval", "params": {"rounds": 2}})
    assert spec.generate(0) == generate("retrieval", {"rounds": 2}, seed=0)

    for data, expected in [
        ({"name": "swe-loop"}, "name: unknown generator 'swe-loop' (did you mean 'swe_loop'?)"),
        (
            {"name": "swe_loop", "params": {"cycles": -1}},
            "params.cycles: -1 is below the minimum 1; use 1 or more",
        ),
    ]:
        with pytest.raises(ValidationError) as caught:
            GeneratorSpec.model_validate(data)
        assert str(describe_errors(caught.value)[0]).startswith(expected)
