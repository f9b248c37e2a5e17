"""Importers (issue 19): every format's fixture is detected, imports to the messages an
independent conversion gives, follows the mapping rules, replays under every preset without a
strategy-caused protocol violation, and bad files are located errors that write nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.wire.views import blank, to_anthropic
from ctxlab.core.world.script import Script, assign_call_ids
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.registry import PRESETS
from ctxlab.scenarios.load import load_scenario
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.importers import DETECT_ENTRIES, FORMATS, import_file, import_lines, read_any, stream
from ctxlab.workloads.trace import TraceError, TraceWorkload, map_wire, read_trace
from ctxlab.workloads.transcript import script_messages, script_transcript, transcript_form
from tests.workloads.importing import DATA, run_cli
from tests.workloads.independent import CONVERSIONS
from tests.workloads.test_trace import scripts
from tests.workloads.test_trace_presets import replayed_calls
from tests.zoo.runs import strategy_caused
from tests.zoo.test_presets import REQUIRED

FIXTURES: dict[str, str] = {
    "swe-agent/function_calling_simple.traj": "swe-agent",
    "swe-agent/humanevalfix-python-0.traj": "swe-agent",
    "swe-agent/swe-agent__test-repo-i1.traj": "swe-agent",
    "mini-swe-agent/local.traj.json": "mini-swe-agent",
    "mini-swe-agent/github_issue.traj.json": "mini-swe-agent",
    "mini-swe-agent/v2-toolcall.traj.json": "mini-swe-agent",
    "mini-swe-agent/v2-textbased.traj.json": "mini-swe-agent",
    "mini-swe-agent/v2-responses.traj.json": "mini-swe-agent",
    "openhands/basic.json": "openhands",
    "openhands/basic_interactions.json": "openhands",
    "openhands/multi-swe-bench-output.jsonl": "openhands",
    "openhands/sdk-output-meeting-topics.jsonl": "openhands",
    "openhands/sdk-output-risky-code-website.jsonl": "openhands",
    "langgraph/deerflow-b83fbb2a-thread.json": "langgraph",
    "google-adk/api-session.json": "google-adk",
    "google-adk/compacted-session.json": "google-adk",
    "tau-bench/results.json": "tau-bench",
    "tau2/results.json": "tau2",
    "pydantic-ai/weather-two-runs.json": "pydantic-ai",
    "pydantic-ai/plan-output-retries.json": "pydantic-ai",
    "claude-code/session.jsonl": "claude-code",
    "codex/rollout-2025-09-02T09-00-00-0199a1b2.jsonl": "codex",
    "gemini-cli/session-2026-08-20T09-14-3f2a9c1e.jsonl": "gemini-cli",
    "gemini-cli/session-2025-09-30T11-20-5b7e1d42.json": "gemini-cli",
    "gemini-cli/checkpoint-logos.json": "gemini-cli",
    "gemini-cli/generate-content-request.json": "gemini-cli",
    "opencode/session-export.json": "opencode",
    "opencode/compacted-export.json": "opencode",
    "bedrock-converse/strands_session.json": "bedrock-converse",
    "bedrock-converse/converse_request.jsonl": "bedrock-converse",
    "agentscope/state.json": "agentscope",
    "agentscope/compressed_state.json": "agentscope",
    "autogen/assistant-state.json": "autogen",
    "autogen/team-state.json": "autogen",
    "autogen/context-messages.json": "autogen",
    "letta/support-agent.af": "letta",
    "letta/two-agents.af": "letta",
    "letta/thoughts-in-kwargs.af": "letta",
    "llamaindex/chat_store.json": "llamaindex",
    "llamaindex/memory_messages.json": "llamaindex",
    "ai-sdk/ui-messages.json": "ai-sdk",
    "ai-sdk/model-messages.json": "ai-sdk",
    "ai-sdk/v4-use-chat.json": "ai-sdk",
    "ai-sdk/v4-core-messages.json": "ai-sdk",
    "anthropic-messages/requests.jsonl": "anthropic-messages",
    "anthropic-history/cline-task.json": "anthropic-history",
    "anthropic-history/roo-condensed.json": "anthropic-history",
    "anthropic-history/roo-truncated.json": "anthropic-history",
    "openai-responses/requests.jsonl": "openai-responses",
    "openai-agents/to_input_list.json": "openai-agents",
    "openai-agents/session-items.jsonl": "openai-agents",
}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@cache
def workload(name: str) -> TraceWorkload:
    return read_any(DATA / name)


def test_every_format_has_a_fixture_and_an_independent_conversion() -> None:
    assert set(FIXTURES.values()) | {"openai-chat"} == set(FORMATS)
    assert set(CONVERSIONS) == set(FORMATS) - {"openai-chat"}


@pytest.mark.parametrize(("name", "fmt"), FIXTURES.items())
def test_the_format_is_detected_from_the_content(name: str, fmt: str) -> None:
    assert import_file(DATA / name).format == fmt


@pytest.mark.parametrize(("name", "fmt"), FIXTURES.items())
def test_ctxlab_import_gives_the_messages_of_an_independent_conversion(
    tmp_path: Path, name: str, fmt: str
) -> None:
    out = tmp_path / "session.jsonl"
    code, said, err = run_cli("import", str(DATA / name), "--out", str(out))
    assert code == 0, err
    assert f"({fmt})" in said
    written = read_jsonl(out)
    assert map_wire(written).script == map_wire(CONVERSIONS[fmt](DATA / name)).script
    assert len(written) == int(said.split(": ")[1].split()[0])  # the count it reports


@pytest.mark.parametrize("name", FIXTURES)
def test_the_imported_jsonl_replays_as_the_file_itself(tmp_path: Path, name: str) -> None:
    """Round trip: the JSONL `ctxlab import` writes is read back (as the lab's own format) into
    the workload the file gives directly."""
    out = tmp_path / "session.jsonl"
    assert run_cli("import", str(DATA / name), "--out", str(out), "--quiet")[0] == 0
    direct, again = workload(name), read_trace(out, tools=workload(name).script.tools)
    assert again.script == direct.script
    assert again.source_violations == direct.source_violations


# ---------------------------------------------------------------------------------------------
# Golden: the mapping rules, format by format


def _messages(name: str) -> list[dict[str, Any]]:
    return list(import_file(DATA / name).messages)


def test_swe_agent_text_actions_are_one_call_per_step_of_swe_agent_action() -> None:
    messages = _messages("swe-agent/humanevalfix-python-0.traj")
    history = json.loads((DATA / "swe-agent/humanevalfix-python-0.traj").read_text(encoding="utf-8"))[
        "history"
    ]
    first = next(m for m in messages if m["role"] == "assistant")
    action = next(m for m in history if m["role"] == "assistant")
    assert first["content"] == action["thought"]
    assert first["tool_calls"] == [
        {
            "id": "step-2",
            "type": "function",
            "function": {"name": "swe_agent_action", "arguments": json.dumps({"action": action["action"]})},
        }
    ]
    assert messages[messages.index(first) + 1] == {
        "role": "tool",
        "tool_call_id": "step-2",
        "content": history[3]["content"],
    }
    # the last step (submit) has no observation: the run ended there, so no request carried it
    # unanswered, and the source broke nothing; the replay answers it with an empty result
    replayed = workload("swe-agent/humanevalfix-python-0.traj")
    assert replayed.source_violations == ()
    assert any("has no result in the source" in note for note in replayed.notes)


def test_swe_agent_function_calls_keep_their_ids_and_demonstrations_are_user_text() -> None:
    fc = _messages("swe-agent/function_calling_simple.traj")
    assert fc[2]["tool_calls"][0]["id"] == "call_PbWErNIge3YTrli3fiVvmIid"
    assert fc[3] == {
        "role": "tool",
        "tool_call_id": "call_PbWErNIge3YTrli3fiVvmIid",
        "content": fc[3]["content"],
    }
    demo = import_file(DATA / "swe-agent/swe-agent__test-repo-i1.traj")
    assert demo.messages[1]["role"] == "user" and demo.messages[1]["content"].startswith(
        "Here is a demonstration"
    )
    assert any("is_demo" in w for w in demo.warnings)


def test_mini_swe_agent_actions_are_the_last_bash_block() -> None:
    messages = _messages("mini-swe-agent/local.traj.json")
    assert messages[2] == {
        "role": "assistant",
        "content": "Here be some dummy command:",
        "tool_calls": [
            {
                "id": "step-2",
                "type": "function",
                "function": {"name": "swe_agent_action", "arguments": '{"action": "echo \'hello world\'"}'},
            }
        ],
    }
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "step-2",
        "content": "<returncode>0</returncode>\n<output>\nhello world\n</output>",
    }


def test_openhands_first_user_message_is_the_instruction_and_results_are_raw_output() -> None:
    name = "openhands/multi-swe-bench-output.jsonl"
    record = json.loads((DATA / name).read_text(encoding="utf-8"))
    imported = import_file(DATA / name)
    users = [m for m in imported.messages if m["role"] == "user"]
    assert users == [{"role": "user", "content": record["instruction"]}]
    observation = next(e for e in record["history"] if e.get("observation") == "run")
    result = next(
        m
        for m in imported.messages
        if m.get("tool_call_id") == observation["tool_call_metadata"]["tool_call_id"]
    )
    assert result["content"] == observation["content"] and "exit code" not in result["content"]
    assert [t.name for t in imported.tools] == ["execute_bash", "think", "finish", "str_replace_editor"]
    assert "skipped 1 × action:recall (not replayed)" in imported.warnings
    assert workload(name).script.tools == imported.tools  # the file's schemas are the workload's


def test_openhands_sdk_events_match_the_hand_conversion_of_the_same_record(traces_dir: Path) -> None:
    """The shared transcript `openhands_gpt-4o_tac-safety-meeting-topics.jsonl` was converted by
    hand from the same record; it left out the final `finish` call, which has no result."""
    hand = read_trace(traces_dir / "openhands_gpt-4o_tac-safety-meeting-topics.jsonl")
    imported = import_file(DATA / "openhands/sdk-output-meeting-topics.jsonl").messages
    assert imported[-1]["tool_calls"][0]["function"]["name"] == "finish"
    assert transcript_form(map_wire(imported[:-1]).script) == transcript_form(hand.script)
    assert imported[2]["is_error"] is True  # the editor's error, its output (empty) the result


def test_langgraph_reasoning_never_joins_the_text_and_parallel_calls_stay_one_message() -> None:
    messages = _messages("langgraph/deerflow-b83fbb2a-thread.json")
    thread = json.loads((DATA / "langgraph/deerflow-b83fbb2a-thread.json").read_text(encoding="utf-8"))
    reasoning = [m["additional_kwargs"].get("reasoning_content") for m in thread["values"]["messages"]]
    reasoning = [r for r in reasoning if r]
    texts = [m["content"] for m in messages if m["role"] == "assistant"]
    assert not any(r in t for r in reasoning for t in texts if r and t)
    assert max(len(m.get("tool_calls", [])) for m in messages) == 5


def test_langgraph_matches_the_hand_conversion_of_the_same_thread(traces_dir: Path) -> None:
    """The shared transcript `deerflow_kimi-k2.5_caren-landing-page_b83fbb2a.jsonl` was converted by
    hand from the same deer-flow thread."""
    hand = read_trace(traces_dir / "deerflow_kimi-k2.5_caren-landing-page_b83fbb2a.jsonl")
    imported = workload("langgraph/deerflow-b83fbb2a-thread.json").script
    assert transcript_form(imported) == transcript_form(hand.script)  # the hand conversion has no reasoning


def test_claude_code_merges_message_ids_keeps_sidechains_apart_and_skips_summaries() -> None:
    imported = import_file(DATA / "claude-code/session.jsonl")
    roles = [(m["role"], m.get("tool_call_id") or len(m.get("tool_calls", []))) for m in imported.messages]
    assert roles == [
        ("user", 0),
        ("assistant", 2),  # msg_01A: thinking, text and two tool_use lines, a result between them
        ("tool", "toolu_01"),
        ("tool", "toolu_02"),
        ("assistant", 1),
        ("tool", "toolu_03"),  # the sub-agent's report; its own lines are not here
        ("assistant", 1),
        ("tool", "toolu_04"),
        ("user", 0),  # the compaction's summary message, as Claude Code sent it
        ("user", 0),
        ("assistant", 0),
    ]
    first = imported.messages[1]
    assert first["content"] == "I'll run the test and read the parser."
    assert first["reasoning_content"] == "Run the failing test first, then read the parser."
    assert "toolu_S1" not in json.dumps(imported.messages)
    script = workload("claude-code/session.jsonl").script
    assert script.turns[0].rounds[0].thinking == first["reasoning_content"]  # thinking, not text
    assert [(c.id, c.error) for c in script.calls()][:2] == [("toolu_01", True), ("toolu_02", False)]
    assert imported.messages[9]["content"][1]["type"] == "image_url"
    assert imported.warnings == (
        "skipped 1 × file-history-snapshot (not replayed)",
        "skipped 4 × isSidechain sub-agent line (not replayed)",
        "skipped 1 × summary (not replayed)",
        "skipped 1 × system:compact_boundary (not replayed)",
    )


def test_codex_keeps_environment_context_as_user_text_and_ignores_event_copies() -> None:
    imported = import_file(DATA / "codex/rollout-2025-09-02T09-00-00-0199a1b2.jsonl")
    assert imported.messages[1]["role"] == "user"
    assert imported.messages[1]["content"].startswith("<environment_context>")
    calls = imported.messages[3]
    assert [c["id"] for c in calls["tool_calls"]] == ["call_A1", "call_A2"]  # parallel: one message
    assert calls["reasoning_content"].startswith("**Inspecting the CLI**") and calls["content"] == ""
    patch = imported.messages[6]["tool_calls"][0]
    assert patch["function"]["name"] == "apply_patch"
    assert json.loads(patch["function"]["arguments"])["input"].startswith("*** Begin Patch")
    texts = [m["content"] for m in imported.messages if m["role"] == "assistant" and m["content"]]
    assert texts == ["Added `--done`: `todo --done` now lists only finished tasks.", "All 12 tests pass."]
    assert "skipped 6 × event_msg (not replayed)" in imported.warnings


def test_request_logs_give_the_last_request_and_its_response() -> None:
    anthropic = import_file(DATA / "anthropic-messages/requests.jsonl")
    assert [m["role"] for m in anthropic.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    assert anthropic.messages[2]["content"] == "Let me check both cities."
    assert [t.name for t in anthropic.tools] == ["get_weather"]
    assert "skipped 1 × earlier request (not replayed)" in anthropic.warnings
    responses = import_file(DATA / "openai-responses/requests.jsonl")
    assert [m["role"] for m in responses.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert responses.messages[5]["content"][1]["type"] == "image_url"
    assert [t.name for t in responses.tools] == ["search_flights"]


def test_reasoning_and_error_results_reach_the_script() -> None:
    wires = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "reasoning_content": "first look"},
        {
            "role": "assistant",
            "content": "Looking.",
            "reasoning_content": "then call",
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "denied", "is_error": True},
        {"role": "assistant", "content": "Done.", "reasoning_content": "after the last round"},
    ]
    (turn,) = map_wire(wires).script.turns
    (round_,) = turn.rounds
    assert round_.thinking == "first look\n\nthen call" and round_.text == "Looking."
    assert round_.calls[0].error and turn.final == "Done."


def test_the_labs_own_transcript_round_trips_through_the_openai_chat_importer() -> None:
    script = assign_call_ids(
        read_trace(Path(__file__).resolve().parents[2] / "scenarios/data/support-session.jsonl").script
    )
    wires = script_transcript(script)
    lines = [json.dumps(w) for w in wires]
    imported = import_lines(lines, "<script>")
    assert imported.format == "openai-chat" and list(imported.messages) == wires


# ---------------------------------------------------------------------------------------------
# Replays


FIELDS = dict.fromkeys(
    ("task_overview", "current_state", "important_discoveries", "next_steps", "context_to_preserve"),
    "Carry on from the transcript.",
)


def _replay(script: Script, preset: str, window: int) -> list[str]:
    script = assign_call_ids(script)
    calls = replayed_calls(
        script,
        PRESETS[preset].strategy(PRESETS[preset].params(**REQUIRED.get(preset, {}))),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=window,
        workspace=InMemoryWorkspace(),
    )
    return strategy_caused([v for c in calls for v in c.violations], preset)


@pytest.mark.parametrize("preset", [name for name in PRESETS if name != "sliding-window"])
def test_every_fixture_replays_under_every_preset_without_a_strategy_caused_violation(preset: str) -> None:
    for name in FIXTURES:
        assert _replay(workload(name).script, preset, 8_000) == [], (name, preset)


# ---------------------------------------------------------------------------------------------
# Bad files


def _bad(tmp_path: Path, text: str, *args: str) -> tuple[int, str]:
    source, out = tmp_path / "bad.jsonl", tmp_path / "out" / "session.jsonl"
    source.write_text(text, encoding="utf-8")
    code, _, err = run_cli("import", str(source), "--out", str(out), *args)
    assert code == 2 and "Traceback" not in err
    assert not out.exists() and not list((tmp_path / "out").glob("*"))
    return code, err.replace(str(tmp_path) + "/", "")


def _claude(**fields: Any) -> str:
    base = {"type": "user", "isSidechain": False, "sessionId": "s", "uuid": "u"}
    return json.dumps({**base, **fields})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"foo": 1}\n', "bad.jsonl:1: the format is not recognised; known formats: codex, claude-code"),
        (
            _claude(message={"role": "user", "content": "hi"}) + "\n" + '{"type": "user", "mess',
            "bad.jsonl:2: the last line is cut short: not JSON",
        ),
        (
            _claude(message={"role": "user", "content": "hi"}) + "\n" + '{"type": "user", "message": {',
            "bad.jsonl:2: the last line is cut short: not JSON (Expecting property name",
        ),
        (
            _claude(message={"role": "user", "content": "hi"}) + "\n" + "garbage at the end\n",
            "bad.jsonl:2: not JSON (Expecting value at column 1)",
        ),
        (
            _claude(message={"role": "user", "content": "hi"})
            + "\n"
            + _claude(type="hologram", message={"role": "user", "content": "hi"})
            + "\n",
            "bad.jsonl:2: unknown entry type 'hologram' carries a message",
        ),
        (
            _claude(message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9"}]})
            + "\n",
            "bad.jsonl:1: a tool result for 't9' has no call before it",
        ),
        (
            json.dumps(
                {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1"}}
            ),
            "bad.jsonl:1: a tool result for 'c1' has no call before it",
        ),
    ],
)
def test_a_bad_file_is_a_located_error_and_nothing_is_written(
    tmp_path: Path, text: str, expected: str
) -> None:
    _, err = _bad(tmp_path, text)
    assert err.startswith(expected), err


def test_a_forced_format_that_does_not_fit_is_a_located_error(tmp_path: Path) -> None:
    text = (DATA / "codex/rollout-2025-09-02T09-00-00-0199a1b2.jsonl").read_text(encoding="utf-8")
    _, err = _bad(tmp_path, text, "--format", "claude-code")
    assert err.startswith("bad.jsonl:1: unknown entry type 'session_meta'"), err


def test_replay_of_a_bad_file_exits_2_with_its_location(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text('{"foo": 1}\n', encoding="utf-8")
    code, _, err = run_cli("replay", str(source), "--out", str(tmp_path / "o"), "--quiet")
    assert code == 2 and "bad.jsonl:1: the format is not recognised" in err
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------------------------
# Trace workloads and replay


def test_a_trace_workload_of_another_format_names_what_it_skipped_in_its_warnings(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: s\nworkload:\n  trace:\n    path: {DATA / 'claude-code/session.jsonl'}\n"
        "model: {context_size: 8000}\nstrategies: [{preset: none}]\n",
        encoding="utf-8",
    )
    loaded = load_scenario(scenario)
    warnings = [str(w) for w in loaded.warnings]
    expected = f"{scenario}:4:5: workload.trace.path: warning: skipped 4 × isSidechain sub-agent line"
    assert any(w.startswith(expected) for w in warnings), warnings


def test_ctxlab_replay_takes_any_format(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "replay",
        str(DATA / "swe-agent/function_calling_simple.traj"),
        "--preset",
        "none",
        "--context-size",
        "32000",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    assert code == 0, err
    manifest = json.loads(next(tmp_path.glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert manifest["resolved_scenario"]["workload"]["trace"].get("format") is None


def test_import_writes_the_files_tool_schemas_for_replay(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    code, _, _ = run_cli(
        "import",
        str(DATA / "anthropic-messages/requests.jsonl"),
        "--out",
        str(tmp_path / "s.jsonl"),
        "--tools-out",
        str(tools),
    )
    assert code == 0
    assert [t["function"]["name"] for t in json.loads(tools.read_text(encoding="utf-8"))] == ["get_weather"]


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (
            {"role": "assistant", "content": "", "reasoning_content": 3},
            "'reasoning_content' must be a string",
        ),
        (
            {"role": "tool", "tool_call_id": "a", "content": "", "is_error": "yes"},
            "'is_error' must be true or false",
        ),
    ],
)
def test_reasoning_and_error_keys_are_checked(wire: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        map_wire([wire])


def test_importers_stream_a_message_at_a_time() -> None:
    """A message is given as soon as it is complete: reading stops where the consumer stops, so a
    long log never has to be in memory at once."""
    read = 0

    def lines() -> Iterator[str]:
        nonlocal read
        for n in range(10**9):
            read += 1
            yield _claude(uuid=f"u{n}", message={"role": "user", "content": f"message {n}"})
            read += 1
            yield json.dumps(
                {
                    "type": "assistant",
                    "isSidechain": False,
                    "uuid": f"a{n}",
                    "message": {
                        "id": f"m{n}",
                        "role": "assistant",
                        "content": [{"type": "text", "text": "ok"}],
                    },
                }
            )

    name, messages, _ = stream(lines(), "<endless>")
    assert name == "claude-code"
    taken = [next(messages) for _ in range(3)]
    assert [m["role"] for m in taken] == ["user", "assistant", "user"]
    assert read <= DETECT_ENTRIES + 4


def test_replay_writes_the_import_warnings_into_the_manifest(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "replay",
        str(DATA / "claude-code/session.jsonl"),
        "--preset",
        "none",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    assert code == 0, err
    manifest = json.loads(next(tmp_path.glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert any("skipped 4 × isSidechain sub-agent line" in w for w in manifest["warnings"]), manifest[
        "warnings"
    ]


@given(scripts)
def test_an_anthropic_request_of_a_script_imports_to_a_script_that_renders_the_same_request(
    script: Script,
) -> None:
    """Round trip through the lab's own Anthropic rendering: import the request a script's replay
    would send with no management, and the imported script renders that request again."""
    messages = script_messages(script)
    # A blank text has no Anthropic block: a blank prompt or answer leaves the turns around it
    # merged (or the request opening with the reply, or empty), which imports as another script.
    assume(not any(isinstance(b, TextBlock) and blank(b.text) for m in messages for b in m.blocks))
    system, turns = to_anthropic(messages)
    request = {"model": "m", "max_tokens": 1024, "system": system, "messages": turns}
    imported = import_lines([json.dumps(request, ensure_ascii=False)], "<request>", "anthropic-messages")
    back = map_wire(imported.messages).script
    assert to_anthropic(script_messages(back)) == (system, turns)


def _chained_log(tmp_path: Path, *, lose: str | None = None) -> Path:
    """A Responses log of three requests chained by previous_response_id, each sending only
    what is new; `lose` leaves that response's entry out."""
    tool = {"type": "function", "name": "look", "description": "Look.", "parameters": {"type": "object"}}
    call = {"type": "function_call", "call_id": "c1", "name": "look", "arguments": "{}"}
    entries = [
        ({"model": "m", "instructions": "Be brief.", "tools": [tool], "input": "Where am I?"}, "r1", [call]),
        (
            {
                "model": "m",
                "previous_response_id": "r1",
                "tools": [tool],
                "instructions": "Be brief.",
                "input": [{"type": "function_call_output", "call_id": "c1", "output": "a room"}],
            },
            "r2",
            [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "A room."}],
                }
            ],
        ),
        (
            {"model": "m", "previous_response_id": "r2", "instructions": "Be brief.", "input": "And now?"},
            "r3",
            [],
        ),
    ]
    path = tmp_path / "chained.jsonl"
    lines = [
        json.dumps({"request": request, "response": {"id": rid, "output": output}})
        for request, rid, output in entries
        if rid != lose
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_responses_log_chained_by_previous_response_id_gives_the_whole_conversation(tmp_path: Path) -> None:
    imported = import_file(_chained_log(tmp_path), "openai-responses")
    assert [(m["role"], m.get("content")) for m in imported.messages] == [
        ("system", "Be brief."),
        ("user", "Where am I?"),
        ("assistant", ""),
        ("tool", "a room"),
        ("assistant", "A room."),
        ("user", "And now?"),
    ]
    assert imported.messages[2]["tool_calls"][0]["id"] == "c1"
    assert not any(w.startswith("skipped") for w in imported.warnings)
    assert any("continues 2 earlier" in w for w in imported.warnings)


def test_a_chain_onto_a_response_the_log_lacks_is_a_located_error(tmp_path: Path) -> None:
    path = _chained_log(tmp_path, lose="r1")
    with pytest.raises(TraceError, match=r"chained\.jsonl:1: previous_response_id 'r1' names no logged"):
        import_file(path, "openai-responses")


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.sampled_from(["user", "tool", "text"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
MUTABLE = [DATA / name for name in FIXTURES] + sorted(TRACES.glob("*.jsonl"))


def _places(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside `value` (lists cut at 20 items, to keep the draw small)."""
    if at:
        yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:20]):
            yield from _places(item, (*at, index))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.sampled_from(MUTABLE), st.data())
def test_a_transcript_with_any_value_changed_imports_or_fails_at_a_line(
    tmp_path: Path, source: Path, data: st.DataObject
) -> None:
    """Whatever a file holds, reading it gives a workload or a `TraceError` naming the file:
    never another exception (a list where an importer reads an object, a missing field)."""
    jsonl = source.suffix == ".jsonl"
    text = source.read_text(encoding="utf-8")
    entries = (
        [json.loads(line) for line in text.splitlines() if line.strip()] if jsonl else [json.loads(text)]
    )
    index = data.draw(st.integers(0, len(entries) - 1))
    places = list(_places(entries[index]))
    if places:
        path = data.draw(st.sampled_from(places))
        parent = entries[index]
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(JSON_VALUES)
        else:
            del parent[path[-1]]
    changed = tmp_path / source.name
    changed.write_text("\n".join(json.dumps(entry) for entry in entries) + "\n", encoding="utf-8")
    try:
        read_any(changed)
    except TraceError as error:
        assert str(error).startswith(str(changed))
