"""tau-bench and tau2-bench results: detected from their content, the run of a file
`--session` names (the first by default) read (the others counted, the run taken named),
mapped by their modules' rules (tau2's missing system prompt, its user simulator's own tools,
the model's argument text), replayed, and refused at their line where a run is not of the
shape the benchmark writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_file, import_lines, read_any
from ctxlab.workloads.trace import TraceError, map_wire
from tests.workloads.importing import DATA, lines, run_cli

TAU_BENCH = DATA / "tau-bench/results.json"
TAU2 = DATA / "tau2/results.json"


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _run(traj: list[dict[str, Any]], task_id: int = 1, trial: int = 0) -> dict[str, Any]:
    return {"task_id": task_id, "reward": 1.0, "info": {"source": "user"}, "traj": traj, "trial": trial}


def _simulation(messages: list[dict[str, Any]], task_id: str = "3") -> dict[str, Any]:
    return {
        "id": "s",
        "task_id": task_id,
        "trial": 0,
        "termination_reason": "user_stop",
        "messages": messages,
    }


def _results(*simulations: dict[str, Any], policy: str | None = "Be kind.") -> dict[str, Any]:
    environment = {"domain_name": "retail", "policy": policy, "tool_defs": None}
    return {"info": {"environment_info": environment}, "tasks": [], "simulations": list(simulations)}


def _tau2_call(call_id: str, arguments: Any, requestor: str = "assistant") -> dict[str, Any]:
    return {"id": call_id, "name": "find_user", "arguments": arguments, "requestor": requestor}


def _imported(value: Any, fmt: str | None = None) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(lines(value), "results.json", fmt)
    return got.format, list(got.messages), got.warnings


def _refusal(value: Any, fmt: str | None = None) -> str:
    with pytest.raises(TraceError) as caught:
        import_lines(json.dumps(value, indent=2).splitlines(), "results.json", fmt)
    return str(caught.value)


ASK = {"role": "user", "content": "Find me."}
SAID = {"role": "assistant", "content": "Found."}


# ---------------------------------------------------------------------------------------------
# Detection


@pytest.mark.parametrize(
    ("value", "fmt"),
    [
        ([_run([ASK, SAID])], "tau-bench"),
        (_run([ASK, SAID]), "tau-bench"),  # one run alone
        (_results(_simulation([ASK, SAID])), "tau2"),
        (_simulation([ASK, SAID]), "tau2"),  # a results folder's simulations/<id>.json
    ],
)
def test_the_format_is_detected_from_the_content(value: Any, fmt: str) -> None:
    assert _imported(value)[0] == fmt
    assert import_lines(json.dumps(value, indent=2).splitlines(), "results.json").format == fmt


def test_a_list_of_chat_messages_stays_openai_chat() -> None:
    assert _imported([ASK, SAID])[0] == "openai-chat"


# ---------------------------------------------------------------------------------------------
# tau-bench


def test_tau_bench_traj_is_the_conversation_and_a_reused_call_id_is_renamed_by_the_replay() -> None:
    imported = import_file(TAU_BENCH)
    messages = imported.messages
    assert imported.format == "tau-bench" and messages[0]["role"] == "system"
    assert messages[4] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [_call("call_a1", "get_user_details", '{"user_id":"lena_ortiz_1042"}')],
    }
    assert messages[5] == {
        "role": "tool",
        "tool_call_id": "call_a1",
        "content": messages[5]["content"],
    }  # no `name`
    assert messages[10]["tool_calls"][0]["id"] == "call_a1"  # written as the run wrote it
    workload = read_any(TAU_BENCH)
    calls = [c for turn in workload.script.turns for r in turn.rounds for c in r.calls]
    assert [(c.id, c.tool) for c in calls] == [
        ("call_a1", "get_user_details"),
        ("call_b2", "get_reservation_details"),
        ("call_a1_dup2", "cancel_reservation"),
    ]
    assert "cancelled" in calls[2].result[0].text  # type: ignore[union-attr]
    assert any("'call_a1' repeats; replayed as 'call_a1_dup2'" in note for note in workload.notes)
    assert {t.name for t in workload.script.tools} == {
        "get_user_details",
        "get_reservation_details",
        "cancel_reservation",
    }


def test_tau_bench_further_runs_are_counted_and_the_run_taken_is_named(tmp_path: Path) -> None:
    code, said, err = run_cli("import", str(TAU_BENCH), "--out", str(tmp_path / "s.jsonl"))
    assert code == 0 and "13 messages" in said and "(tau-bench)" in said
    assert "warning: skipped 1 × further run (a task run of its own) (not replayed)" in err
    assert "the file holds 2 runs; the first (task_id 7, trial 0) is replayed" in err
    assert "to replay another, give --session N" in err


def test_a_jsonl_file_of_runs_reads_its_first_and_counts_the_others() -> None:
    got = import_lines(
        lines(_run([ASK, SAID]), _run([ASK], task_id=2), _run([SAID], task_id=3)), "runs.jsonl"
    )
    assert got.format == "tau-bench" and list(got.messages) == [ASK, SAID]
    assert "skipped 2 × further run (a task run of its own) (not replayed)" in got.warnings


def test_a_lone_run_names_no_run_taken() -> None:
    _, _, warnings = _imported([_run([ASK, SAID])])
    assert warnings == ()


# ---------------------------------------------------------------------------------------------
# tau2


def test_tau2_maps_the_policy_the_model_text_of_arguments_and_error_results() -> None:
    imported = import_file(TAU2)
    messages = imported.messages
    assert imported.format == "tau2"
    assert messages[0]["role"] == "system" and messages[0]["content"].startswith("# Retail agent policy")
    assert messages[1] == {"role": "assistant", "content": "Hi! How can I help you today?"}
    written = messages[3]["tool_calls"][0]["function"]["arguments"]
    assert (
        written == '{"first_name":"Zoë","last_name":"Park","zip":"94110"}'
    )  # raw_data, as the model wrote it
    parallel = messages[5]["tool_calls"]
    assert [c["function"]["arguments"] for c in parallel] == [
        '{"order_id": "#W1234"}',
        '{"order_id": "#W9999"}',
    ]
    assert messages[7] == {
        "role": "tool",
        "tool_call_id": "call_x3",
        "content": "Error: Order not found",
        "is_error": True,
    }
    assert any("tau2's agent sends it inside instructions of its own" in w for w in imported.warnings)


def test_tau2_declares_the_agents_tool_defs(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    code, _, _ = run_cli("import", str(TAU2), "--out", str(tmp_path / "s.jsonl"), "--tools-out", str(tools))
    assert code == 0
    declared = json.loads(tools.read_text(encoding="utf-8"))
    assert [t["function"]["name"] for t in declared] == [
        "find_user_id_by_name_zip",
        "get_order_details",
        "cancel_pending_order",
    ]
    assert declared[1]["function"]["description"].startswith(  # the signature's `doc`, whole
        'def get_order_details(order_id: str) -> str:\n    """Get the status and details of an order.'
    )
    assert declared[1]["function"]["parameters"]["required"] == ["order_id"]


def test_the_user_simulators_own_calls_and_results_are_counted_not_replayed() -> None:
    imported = import_file(TAU2)
    assert "call_u1" not in json.dumps(imported.messages)
    assert [m["content"] for m in imported.messages if m["role"] == "user"][
        1
    ] == "Yes, cancel it: no longer needed."
    assert (
        "skipped 1 × user simulator's tool call (requestor 'user': never sent to the agent) (not replayed)"
        in imported.warnings
    )
    assert (
        "skipped 1 × user simulator's tool result (requestor 'user': never sent to the agent) (not replayed)"
        in imported.warnings
    )


def test_tau2_further_simulations_are_counted_and_the_one_taken_is_named(tmp_path: Path) -> None:
    code, _, err = run_cli("import", str(TAU2), "--out", str(tmp_path / "s.jsonl"))
    assert code == 0
    assert "skipped 1 × further simulation (a conversation of its own) (not replayed)" in err
    assert "the file holds 2 simulations; the first (task_id '12', trial 0) is replayed" in err


def test_arguments_without_their_model_text_are_their_json_text() -> None:
    called = {"role": "assistant", "content": None, "tool_calls": [_tau2_call("c1", {"name": "Zoë"})]}
    elsewhere = {"message": {"tool_calls": [{"id": "c1", "function": {"arguments": '{"name": "Other"}'}}]}}
    result = {"role": "tool", "id": "c1", "content": "u1", "requestor": "assistant", "error": False}
    for message in (
        called,
        {**called, "raw_data": elsewhere},
    ):  # no model text; model text of other arguments
        _, messages, _ = _imported(_results(_simulation([ASK, message, result, SAID])))
        assert messages[2]["tool_calls"][0]["function"]["arguments"] == '{"name": "Zoë"}'


def test_a_lone_simulation_has_no_system_prompt_and_says_so() -> None:
    fmt, messages, warnings = _imported(_simulation([ASK, SAID]))
    assert fmt == "tau2" and messages == [
        {"role": "user", "content": "Find me."},
        {"role": "assistant", "content": "Found."},
    ]
    assert any("stores no system prompt" in w for w in warnings)
    assert _imported(_results(_simulation([ASK, SAID]), policy=None))[1][0]["role"] == "user"


# ---------------------------------------------------------------------------------------------
# Replay


@pytest.mark.parametrize("source", [TAU_BENCH, TAU2])
def test_ctxlab_replay_reads_both_and_keeps_the_notes_in_the_manifest(tmp_path: Path, source: Path) -> None:
    code, _, err = run_cli("replay", str(source), "--preset", "none", "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    manifest = json.loads(next(tmp_path.glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert any("the first (task_id" in w for w in manifest["warnings"]), manifest["warnings"]


def test_the_imported_jsonl_maps_as_the_file_does(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    assert run_cli("import", str(TAU2), "--out", str(out), "--quiet")[0] == 0
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert map_wire(written).script.turns == read_any(TAU2).script.turns


# ---------------------------------------------------------------------------------------------
# Refused at their place


@pytest.mark.parametrize(
    ("value", "fmt", "expected"),
    [
        ([{"task_id": 1, "traj": "none"}], "tau-bench", "results.json:1: not tau-bench results"),
        (
            [_run([ASK, {"role": "robot", "content": "beep"}])],
            None,
            "results.json:13: traj[1]: unknown role 'robot'",  # the item's line in the document
        ),
        (
            [_run([ASK, {"role": "tool", "tool_call_id": "c9", "content": "x"}])],
            None,
            "a tool result for 'c9' has no call before it",
        ),
        (
            [_run([ASK, {"role": "assistant", "content": None, "tool_calls": [{"id": 3}]}])],
            None,
            "traj[1].tool_calls[0] is not a tool call",
        ),
        (
            [_run([{"role": "user", "content": {"text": "hi"}}])],
            None,
            "traj[0].content is dict, not text or null",
        ),
        ({"info": {}, "tasks": [], "simulations": []}, "tau2", "import one of those files"),
        (
            _results(_simulation([ASK, {"role": "tool", "content": "x", "requestor": "assistant"}])),
            None,
            "messages[1].id' is missing or null",
        ),
        (
            _results(_simulation([ASK, {"role": "assistant", "tool_calls": [{"name": "f"}]}])),
            None,
            "messages[1].tool_calls is not a list of calls",
        ),
        (
            _results(_simulation([ASK, {"role": "critic", "content": "x"}])),
            None,
            "messages[1]: unknown role 'critic'",
        ),
    ],
)
def test_a_run_not_shaped_as_the_benchmark_writes_it_is_refused_at_its_line(
    value: Any, fmt: str | None, expected: str
) -> None:
    assert expected in _refusal(value, fmt)


def test_ctxlab_import_of_a_malformed_run_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    source, out = tmp_path / "results.json", tmp_path / "s.jsonl"
    source.write_text(
        json.dumps([_run([ASK, {"role": "tool", "tool_call_id": "c9", "content": "x"}])]), encoding="utf-8"
    )
    code, _, err = run_cli("import", str(source), "--out", str(out))
    assert code == 2 and "results.json:1: a tool result for 'c9' has no call before it" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("source", "simulator"),
    [(TAU_BENCH, "tau-bench"), (TAU2, "tau2")],
)
def test_the_user_simulators_closing_stop_is_counted_not_replayed(source: Path, simulator: str) -> None:
    """The message that ends the run never reached the agent: replaying it would make a request
    the run never made."""
    imported = import_file(source)
    assert imported.format == simulator
    assert all("###STOP###" not in str(m["content"]) for m in imported.messages)
    assert imported.messages[-1]["role"] == "assistant"
    said = "skipped 1 × user simulator's closing stop message (never sent to the agent) (not replayed)"
    assert said in imported.warnings


def test_a_stop_token_before_the_end_is_the_users_text() -> None:
    """Only the conversation's last message ends it; a user quoting the token earlier is heard."""
    traj = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "What does ###STOP### mean?"},
        {"role": "assistant", "content": "It ends the chat."},
    ]
    imported = import_lines(json.dumps([_run(traj)], indent=2).splitlines(), "results.json")
    assert [m["content"] for m in imported.messages] == [
        "policy",
        "What does ###STOP### mean?",
        "It ends the chat.",
    ]
