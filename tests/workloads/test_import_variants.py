"""Importers on what real tools write beyond the first fixtures: newer versions' records, content
in several parts, images in results, sessions cut short. Each test failed before its fix."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_file, import_lines, read_any
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, lines, run_cli

# ---------------------------------------------------------------------------------------------
# mini-swe-agent 2


def test_mini_swe_agent_2_trajectories_end_with_an_exit_message_that_is_skipped() -> None:
    """mini-swe-agent 2 ends every run with `{"role": "exit"}`; it is not part of what the model
    was sent, and the trajectory imports with its tool calls and results as written."""
    imported = import_file(DATA / "mini-swe-agent/v2-toolcall.traj.json")
    assert imported.format == "mini-swe-agent"
    roles = [m["role"] for m in imported.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [c["id"] for c in imported.messages[2]["tool_calls"]] == ["call_1", "call_2"]
    assert [m["tool_call_id"] for m in imported.messages[3:5]] == ["call_1", "call_2"]
    assert "skipped 1 × exit message (the run's end) (not replayed)" in imported.warnings
    assert "the run ended with exit status 'Submitted'" in imported.warnings


def test_mini_swe_agent_2_on_a_responses_api_model_imports_its_responses_and_outputs() -> None:
    """With a Responses-API model, mini-swe-agent 2 keeps each response whole (`object:
    response`, its output items) and each observation as a `function_call_output` item."""
    imported = import_file(DATA / "mini-swe-agent/v2-responses.traj.json")
    assert imported.format == "mini-swe-agent"
    roles = [m["role"] for m in imported.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert imported.messages[2]["content"] == "Let me look first."
    assert [c["id"] for c in imported.messages[2]["tool_calls"]] == ["call_1", "call_2"]
    assert [m["tool_call_id"] for m in imported.messages[3:5]] == ["call_1", "call_2"]
    assert imported.messages[3]["content"].endswith("<output>\nhello\n</output>")
    assert "the run ended with exit status 'Submitted'" in imported.warnings
    (turn,) = read_any(DATA / "mini-swe-agent/v2-responses.traj.json").script.turns
    assert [len(r.calls) for r in turn.rounds] == [2, 1]


def test_mini_swe_agent_2_text_based_trajectories_replay(tmp_path: Path) -> None:
    source = DATA / "mini-swe-agent/v2-textbased.traj.json"
    workload = read_any(source)
    (turn,) = workload.script.turns
    assert [c.input for r in turn.rounds for c in r.calls] == [
        json.dumps({"action": "echo hi"}),
        json.dumps({"action": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}),
    ]
    code, _, err = run_cli("import", str(source), "--out", str(tmp_path / "s.jsonl"), "--quiet")
    assert code == 0 and "exit status 'Submitted'" in err


def test_mini_swe_agent_2_steps_are_what_the_run_recorded_it_ran() -> None:
    """mini-swe-agent 2 runs only a `mswea_bash_command` block and records each run in
    `extra.actions`: a step without them ran nothing (a `bash` block is a format error there),
    and a step that shows a `bash` snippet beside its action ran the action alone."""
    head = [
        {"role": "system", "content": "You act.", "extra": {}},
        {"role": "user", "content": "Fix it.", "extra": {}},
    ]
    steps = [
        {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```", "extra": {"cost": 1.0}},
        {
            "role": "user",
            "content": "Format error: found 0 actions.",
            "extra": {"interrupt_type": "FormatError"},
        },
        {
            "role": "assistant",
            "content": "THOUGHT: not\n```bash\nrm -rf build\n```\nbut:\n\n```mswea_bash_command\ncat a\n```",
            "extra": {"actions": [{"command": "cat a"}]},
        },
        {
            "role": "user",
            "content": "<returncode>0</returncode>\n<output>\nA\n</output>",
            "extra": {"returncode": 0},
        },
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}},
    ]
    run = {
        **json.loads((DATA / "mini-swe-agent/v2-textbased.traj.json").read_text()),
        "messages": [*head, *steps],
    }
    imported = import_lines(json.dumps(run, indent=2).splitlines(), "run.traj.json")
    assert imported.format == "mini-swe-agent"
    wires = imported.messages
    assert [m["role"] for m in wires] == ["system", "user", "assistant", "user", "assistant", "tool"]
    assert "tool_calls" not in wires[2] and wires[3]["content"].startswith("Format error")  # nothing ran
    assert [c["function"]["arguments"] for c in wires[4]["tool_calls"]] == [json.dumps({"action": "cat a"})]
    assert wires[4]["content"] == "THOUGHT: not\n```bash\nrm -rf build\n```\nbut:"
    assert wires[5]["content"].endswith("<output>\nA\n</output>")


def test_mini_swe_agent_reasoning_is_kept_apart_from_the_text() -> None:
    trajectory = {
        "trajectory_format": "mini-swe-agent-1.1",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {
                "role": "assistant",
                "content": "THOUGHT: x\n\n```mswea_bash_command\nls\n```",
                "reasoning_content": "hmm",
            },
            {"role": "user", "content": "out"},
        ],
    }
    (_, _, reply, _) = import_lines(lines(trajectory), "t.json").messages
    assert reply["reasoning_content"] == "hmm" and reply["content"] == "THOUGHT: x"


# ---------------------------------------------------------------------------------------------
# Claude Code


SESSION = "4f1c2d0e-7a6b-4c1e-9f3a-2b8d5e6a7c10"


def _line(kind: str, message: dict[str, Any], uuid: str, **fields: Any) -> dict[str, Any]:
    envelope = {"type": kind, "isSidechain": False, "sessionId": SESSION, "uuid": uuid, "message": message}
    return {**envelope, **fields}


CONVERSATION = [
    _line("user", {"role": "user", "content": "修复日期解析"}, "u1"),
    _line(
        "assistant",
        {
            "id": "m1",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
        },
        "u2",
    ),
    _line(
        "user",
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        "u3",
    ),
    _line(
        "assistant", {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Fixed."}]}, "u4"
    ),
]


def test_claude_code_title_and_newer_bookkeeping_lines_are_skipped_and_counted() -> None:
    """`/rename` appends `custom-title` and `agent-name` lines, Claude Code writes `ai-title`
    ones, and later versions add kinds of their own: none is conversation."""
    titled = [
        {"type": "custom-title", "customTitle": "date bug", "sessionId": SESSION},
        *CONVERSATION[:2],
        {"type": "ai-title", "aiTitle": "Fix date parsing", "sessionId": SESSION},
        {"type": "agent-name", "agentName": "date bug", "sessionId": SESSION},
        *CONVERSATION[2:],
        {"type": "some-future-kind", "sessionId": SESSION, "anything": [1, 2]},
    ]
    imported = import_lines(lines(*titled), "session.jsonl")
    assert imported.format == "claude-code"
    assert imported.messages == import_lines(lines(*CONVERSATION), "session.jsonl").messages
    assert "skipped 1 × custom-title (not replayed)" in imported.warnings
    assert "skipped 1 × some-future-kind (an entry type not known here) (not replayed)" in imported.warnings


def test_claude_code_an_unknown_line_that_carries_a_message_is_still_an_error() -> None:
    odd = {**CONVERSATION[0], "type": "narration", "uuid": "u9"}
    with pytest.raises(
        TraceError, match=r"session\.jsonl:2: unknown entry type 'narration' carries a message"
    ):
        import_lines(lines(CONVERSATION[0], odd), "session.jsonl", "claude-code")


def test_codex_a_line_of_an_unknown_kind_is_skipped_unless_it_carries_a_conversation_item() -> None:
    """A newer Codex may write rollout kinds this importer does not know; they were an error."""
    conversation = _rollout(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "yes"}]},
    )
    future = json.dumps({"timestamp": "t", "type": "ghost_snapshot", "payload": {"commit": "abc"}})
    imported = import_lines([conversation[0], future, conversation[1]], "rollout.jsonl")
    assert imported.format == "codex"
    assert imported.messages == import_lines(conversation, "rollout.jsonl").messages
    assert "skipped 1 × ghost_snapshot (an entry type not known here) (not replayed)" in imported.warnings
    carrying = json.dumps(
        {"type": "mystery", "payload": {"type": "message", "role": "user", "content": "lost?"}}
    )
    with pytest.raises(TraceError, match=r"rollout\.jsonl:2: unknown entry type 'mystery' carries a"):
        import_lines([conversation[0], carrying], "rollout.jsonl")
    with pytest.raises(TraceError, match=r"rollout\.jsonl:2: unknown entry type None"):
        import_lines([conversation[0], json.dumps({"payload": {}})], "rollout.jsonl")


# ---------------------------------------------------------------------------------------------
# Text in several parts


def _rollout(*payloads: dict[str, Any]) -> list[str]:
    return lines(
        *({"timestamp": "2025-10-01T00:00:00Z", "type": "response_item", "payload": p} for p in payloads)
    )


def test_codex_developer_and_assistant_messages_in_several_parts_keep_their_text() -> None:
    """Codex writes its developer instructions as several `input_text` parts; the Responses API
    may answer with several `output_text` parts. Their text was dropped."""
    imported = import_lines(
        _rollout(
            {
                "type": "message",
                "role": "developer",
                "content": [
                    {"type": "input_text", "text": "<permissions instructions>ro</permissions instructions>"},
                    {"type": "input_text", "text": "<collaboration_mode>default</collaboration_mode>"},
                ],
            },
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "Part one. "},
                    {"type": "output_text", "text": "Two."},
                ],
            },
        ),
        "rollout.jsonl",
    )
    assert imported.messages == (
        {
            "role": "system",
            "content": "<permissions instructions>ro</permissions instructions>"
            "<collaboration_mode>default</collaboration_mode>",
        },
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Part one. Two."},
    )


def test_langgraph_system_and_ai_messages_in_several_parts_keep_their_text() -> None:
    thread = {
        "values": {
            "messages": [
                {
                    "type": "system",
                    "content": [{"type": "text", "text": "Research. "}, {"type": "text", "text": "Cite."}],
                },
                {"type": "human", "content": "量子计算"},
                {
                    "type": "ai",
                    "content": [
                        {"type": "thinking", "thinking": "plan"},
                        {"type": "text", "text": "I search"},
                        {"type": "text", "text": ", then read."},
                        {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}},
                    ],
                },
            ]
        }
    }
    imported = import_lines(lines(thread), "thread.json")
    assert imported.messages == (
        {"role": "system", "content": "Research. Cite."},
        {"role": "user", "content": "量子计算"},
        {"role": "assistant", "content": "I search, then read.", "reasoning_content": "plan"},
    )
    assert "skipped 1 × assistant message part 'image_url' (not replayed)" in imported.warnings


def test_langgraph_tool_use_parts_are_the_calls_tool_calls_lists_or_the_calls_without_it() -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "qubits"}}
    listed = {"name": "search", "args": {"q": "qubits"}, "id": "toolu_1", "type": "tool_call"}
    result = {"type": "tool", "tool_call_id": "toolu_1", "content": "found"}
    both = {"type": "ai", "content": [{"type": "text", "text": "Searching."}, use], "tool_calls": [listed]}
    parts_only = {"type": "ai", "content": [{"type": "text", "text": "Searching."}, use]}
    expected_call = {
        "id": "toolu_1",
        "type": "function",
        "function": {"name": "search", "arguments": '{"q": "qubits"}'},
    }
    for ai in (both, parts_only):
        thread = {"values": {"messages": [{"type": "human", "content": "go"}, ai, result]}}
        imported = import_lines(lines(thread), "thread.json")
        assert imported.messages[1] == {
            "role": "assistant",
            "content": "Searching.",
            "tool_calls": [expected_call],
        }
        assert not any("tool_use" in warning for warning in imported.warnings)


def test_mini_swe_agent_content_as_a_list_of_parts_keeps_its_text() -> None:
    """Content written as parts (`[{"type": "text", "text": ..., "cache_control": ...}]`, as
    prompt caching writes it) lost the system prompt."""
    trajectory = {
        "trajectory_format": "mini-swe-agent-1",
        "messages": [
            {
                "role": "system",
                "content": [{"type": "text", "text": "You act.", "cache_control": {"type": "ephemeral"}}],
            },
            {"role": "user", "content": [{"type": "text", "text": "Solve it"}]},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "THOUGHT: "}, {"type": "text", "text": "done"}],
            },
        ],
    }
    messages = import_lines(lines(trajectory), "t.json").messages
    assert [m["content"] for m in messages] == ["You act.", "Solve it", "THOUGHT: done"]


def test_an_openai_chat_list_showing_a_bash_block_is_not_a_mini_swe_agent_run() -> None:
    """A chat whose assistant suggests a command in a `bash` block was read as mini-swe-agent: the
    block became a call and the user's next message its result."""
    chat = [
        {"role": "user", "content": "How do I list hidden files?"},
        {"role": "assistant", "content": "Run:\n\n```bash\nls -a\n```"},
        {"role": "user", "content": "Thanks, and sorted by size?"},
        {"role": "assistant", "content": "ls -aS"},
    ]
    imported = import_lines([json.dumps(chat)], "chat.json")
    assert imported.format == "openai-chat" and list(imported.messages) == chat


def test_a_bare_list_of_mini_swe_agent_steps_is_still_recognised() -> None:
    """Without `mswea_bash_command`, a `bash` block answered by mini-swe-agent's observation."""
    steps = [
        {"role": "user", "content": "Please solve this issue: x"},
        {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"},
    ]
    imported = import_lines([json.dumps(steps)], "run.json")
    assert imported.format == "mini-swe-agent"
    assert imported.messages[-1] == {"role": "tool", "tool_call_id": "step-1", "content": steps[2]["content"]}


def test_codex_reasoning_without_a_summary_keeps_its_reasoning_text() -> None:
    imported = import_lines(
        _rollout(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "why?"}]},
            {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "think"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "because"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "so?"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "short"}], "content": None},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "so"}]},
        ),
        "rollout.jsonl",
    )
    assert [m.get("reasoning_content") for m in imported.messages[1::2]] == ["think", "short"]


# ---------------------------------------------------------------------------------------------
# Images in results


def test_a_responses_output_of_content_parts_keeps_its_image() -> None:
    """A function call's output may be content parts (Codex's `view_image`, an MCP tool's
    image): the image was dropped without a word, and only the text replayed."""
    image = "data:image/png;base64,iVBORw0KGgo="
    imported = import_lines(
        _rollout(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look"}]},
            {
                "type": "function_call",
                "name": "view_image",
                "arguments": '{"path": "a.png"}',
                "call_id": "c1",
            },
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [
                    {"type": "input_text", "text": "a.png:"},
                    {"type": "input_image", "image_url": image},
                    {"type": "input_file", "file_id": "file-1"},
                ],
            },
        ),
        "rollout.jsonl",
    )
    assert imported.messages[-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": [{"type": "text", "text": "a.png:"}, {"type": "image_url", "image_url": {"url": image}}],
    }
    assert "skipped 1 × content part 'input_file' (not replayed)" in imported.warnings


def _sdk_record() -> dict[str, Any]:
    text = (DATA / "openhands/sdk-output-risky-code-website.jsonl").read_text(encoding="utf-8")
    record: dict[str, Any] = json.loads(text.splitlines()[0])
    return record


def test_openhands_sdk_events_never_sent_to_the_model_are_skipped_and_counted() -> None:
    """The SDK keeps events that are not LLM messages in the history (a conversation error, a
    hook run, token logs); each made the import fail as an unknown event kind. This error event
    is as SDK 1.58.2 serialises it."""
    record = _sdk_record()
    error = {
        "id": "127fd314-9221-49d5-92ba-1f215172e48e",
        "timestamp": "2026-12-03T11:26:54.235899",
        "source": "environment",
        "parent_id": None,
        "code": "LLMError",
        "detail": "rate limited",
        "classification": {"kind": "rate_limit", "retryable": True, "user_action": "retry", "error_id": None},
        "kind": "ConversationErrorEvent",
    }
    plain = import_lines(lines(record), "output.jsonl").messages
    record["history"].insert(3, error)
    imported = import_lines(lines(record), "output.jsonl")
    assert imported.messages == plain
    assert "skipped 1 × ConversationErrorEvent (not replayed)" in imported.warnings


def test_openhands_sdk_observation_content_keeps_its_images() -> None:
    record = _sdk_record()
    observation = record["history"][2]
    observation["observation"] = {
        "kind": "BrowserObservation",
        "content": [
            {"cache_prompt": False, "type": "text", "text": "page shown"},
            {"cache_prompt": False, "type": "image", "image_urls": ["data:image/png;base64,AA"]},
        ],
        "is_error": False,
    }
    imported = import_lines(lines(record), "output.jsonl")
    (result,) = [m for m in imported.messages if m.get("tool_call_id") == observation["tool_call_id"]]
    assert result["content"] == [
        {"type": "text", "text": "page shown"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
    ]


def test_a_claude_code_sub_agent_transcript_is_read_as_its_own_conversation() -> None:
    """Claude Code writes each sub-agent's transcript to `agent-<id>.jsonl`, every line
    `isSidechain: true`; importing one said only "the transcript has no messages"."""
    agent = [{**entry, "isSidechain": True, "agentId": "a1b2"} for entry in CONVERSATION]
    imported = import_lines(lines(*agent), "agent-a1b2.jsonl")
    assert imported.messages == import_lines(lines(*CONVERSATION), "session.jsonl").messages
    assert "the file is a sub-agent's transcript (isSidechain): its conversation is read" in imported.warnings


def test_importing_a_folder_that_is_no_session_directory_says_so(tmp_path: Path) -> None:
    code, _, err = run_cli("import", str(tmp_path), "--out", str(tmp_path / "s.jsonl"))
    assert code == 2 and f"{tmp_path}: the format is not recognised: a folder that is no strands" in err
    assert not (tmp_path / "s.jsonl").exists()


# ---------------------------------------------------------------------------------------------
# Codex: compaction, interrupted turns, the first rollout layout (openai/codex, codex-rs:
# `CompactedItem { message, replacement_history }` in protocol.rs; `build_compacted_history` in
# core/src/compact.rs sends the summary as a user message; the context manager's
# `ensure_call_outputs_present` gives a call with no output the output "aborted")


def test_codex_compaction_summary_is_a_user_message_and_an_interrupted_call_is_answered() -> None:
    """The summary of a `compacted` line was skipped as bookkeeping, and a call a user
    interrupted stayed without a result though Codex sent it `aborted`."""
    imported = import_file(DATA / "codex/rollout-2025-11-20T10-00-00-compacted.jsonl")
    assert imported.format == "codex"
    roles = [m["role"] for m in imported.messages]
    assert roles == [*["user", "assistant", "tool"] * 2, "assistant", "user", "user", "assistant"]
    assert imported.messages[2] == {"role": "tool", "tool_call_id": "call_K1", "content": "aborted"}
    assert imported.messages[7]["content"].startswith("Another language model started")
    assert "call 'call_K1' has no output in the rollout: given 'aborted'" in imported.warnings
    assert not any("compacted" in w for w in imported.warnings)
    (turn, *_) = read_any(DATA / "codex/rollout-2025-11-20T10-00-00-compacted.jsonl").script.turns
    assert [c.id for r in turn.rounds for c in r.calls] == ["call_K1"]


def test_codex_a_compaction_without_summary_text_is_counted() -> None:
    """A remote compaction writes no summary text (it is encrypted in a `compaction` item)."""
    conversation = _rollout(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "yes"}]},
    )
    compacted = json.dumps({"timestamp": "t", "type": "compacted", "payload": {"message": ""}})
    imported = import_lines([*conversation, compacted], "rollout.jsonl")
    assert imported.messages == import_lines(conversation, "rollout.jsonl").messages
    assert "skipped 1 × compacted (no summary text) (not replayed)" in imported.warnings


def test_codex_calls_that_end_the_rollout_stay_unanswered() -> None:
    call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    imported = import_lines(_rollout(user, call), "rollout.jsonl")
    assert [m["role"] for m in imported.messages] == ["user", "assistant"]


def test_a_codex_rollout_of_the_first_layout_is_detected_and_read(tmp_path: Path) -> None:
    """Rollouts written before Codex wrapped each line as `{type, payload}` (a bare session
    header, bare items, `record_type` state lines) were "the format is not recognised"."""
    name = "codex/rollout-2025-06-12T08-30-00-first-layout.jsonl"
    imported = import_file(DATA / name)
    assert imported.format == "codex"
    assert [m["role"] for m in imported.messages] == ["user", "assistant", "tool", "assistant"]
    assert imported.messages[1]["reasoning_content"] == "**Listing tests**"
    assert "skipped 3 × record_type 'state' (not replayed)" in imported.warnings
    code, said, err = run_cli("import", str(DATA / name), "--out", str(tmp_path / "s.jsonl"))
    assert code == 0 and "(codex)" in said, err


# ---------------------------------------------------------------------------------------------
# Responses: built-in tools, refusals, item references (the Responses API reference's input and
# output items: computer_call(_output), mcp_call, code_interpreter_call, refusal, item_reference)


def test_responses_built_in_tool_calls_keep_their_results_and_a_refusal_its_text() -> None:
    """A computer call and its screenshot, an MCP call and a code interpreter run (each carrying
    its output) were counted and dropped, and a refusal gave an empty assistant message; the
    references to the first response's items were "a tool result ... has no call before it"."""
    imported = import_file(DATA / "openai-responses/builtin-tools.jsonl")
    assert imported.format == "openai-responses"
    by_id = {m["tool_call_id"]: m for m in imported.messages if m["role"] == "tool"}
    assert by_id["call_a2"]["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    ]
    assert by_id["mcp_a3"]["content"].startswith('[{"id":7')
    assert by_id["mcp_a4"] == {
        "role": "tool",
        "tool_call_id": "mcp_a4",
        "content": "tracker timed out",
        "is_error": True,
    }
    assert by_id["ci_a5"]["content"] == "7.0\n"
    calls = [c["function"]["name"] for m in imported.messages for c in m.get("tool_calls", [])]
    assert calls == ["computer", "list_issues", "list_labels", "code_interpreter"]
    assert imported.messages[2]["reasoning_content"] == "Open the tracker page first."
    assert imported.messages[-1] == {
        "role": "assistant",
        "content": "I can't close issues without the owner's approval.",
    }
    assert not any("item " in w for w in imported.warnings)


def _request(*items: dict[str, Any]) -> str:
    return json.dumps({"model": "gpt-5", "input": [{"role": "user", "content": "go"}, *items]})


def test_an_item_reference_the_log_cannot_resolve_is_a_located_error() -> None:
    with pytest.raises(TraceError, match=r"log\.jsonl:1: item_reference 'fc_9' names an item that no logged"):
        import_lines([_request({"type": "item_reference", "id": "fc_9"})], "log.jsonl")
    reasoning = import_lines([_request({"type": "item_reference", "id": "rs_9"})], "log.jsonl")
    assert (
        "skipped 1 × item_reference to a reasoning item the log does not hold (not replayed)"
        in reasoning.warnings
    )


def test_codex_tool_search_is_a_call_with_the_tools_it_found_as_its_result() -> None:
    """Codex's `tool_search_call` / `tool_search_output` pair were both dropped (counted)."""
    found = [{"type": "function", "name": "create_issue", "description": "Open an issue.", "parameters": {}}]
    imported = import_lines(
        _rollout(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "file it"}]},
            {
                "type": "tool_search_call",
                "call_id": None,
                "status": "completed",
                "execution": "server",
                "arguments": {"query": "issue"},
            },
            {
                "type": "tool_search_output",
                "call_id": None,
                "status": "completed",
                "execution": "server",
                "tools": found,
            },
        ),
        "rollout.jsonl",
    )
    (_, asked, result) = imported.messages
    assert asked["tool_calls"][0]["function"] == {"name": "tool_search", "arguments": '{"query": "issue"}'}
    assert result["tool_call_id"] == asked["tool_calls"][0]["id"]
    assert json.loads(result["content"]) == found


# ---------------------------------------------------------------------------------------------
# Claude Code: a rewound session (each line's `parentUuid` names the line it continues; an
# edited or rewound prompt is a second child of an earlier line, and Claude Code resumes from
# the last line's branch)


def test_a_claude_code_branch_the_session_left_is_not_replayed() -> None:
    """The branch a rewind left was replayed as if the session had said it; a first read of the
    file now finds it, and the import goes on from the prompt that replaced it."""
    imported = import_file(DATA / "claude-code/rewound.jsonl")
    assert imported.format == "claude-code"
    assert [(m["role"], m["content"]) for m in imported.messages] == [
        ("user", "Rename `load` to `load_tasks` in todo/store.py."),
        ("assistant", "Renamed; the two callers in todo/cli.py are updated too."),
        ("user", "Now update the tests for the new name instead."),
        ("assistant", "Updated tests/test_store.py to call `load_tasks`."),
    ]
    assert "skipped 3 × line of a branch the session left (a prompt edited or rewound) (not replayed)" in (
        imported.warnings
    )
    assert [w for w in imported.warnings if "branches" in w] == [
        "line 6: the session branches (a prompt edited or rewound): this line continues line 2, and "
        "the 3 lines of the branch it left, from line 3, are not replayed"
    ]


def test_a_claude_code_log_read_once_keeps_its_branch_and_says_where_it_is() -> None:
    """Lines handed over as a stream cannot be read twice: the branch is replayed, with a note."""
    text = (DATA / "claude-code/rewound.jsonl").read_text(encoding="utf-8")
    imported = import_lines(iter(text.splitlines()), "s.jsonl")
    assert len(imported.messages) == 7
    assert [w for w in imported.warnings if "branches" in w] == [
        "line 6: the session branches (a prompt edited or rewound): this line continues line 2, so "
        "the lines between them are a branch Claude Code left, replayed here as written"
    ]


def _prompt(uuid: str, parent: str | None, text: str) -> dict[str, Any]:
    return _line("user", {"role": "user", "content": text}, uuid, parentUuid=parent)


def _answer(uuid: str, parent: str, mid: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return _line(
        "assistant", {"id": mid, "role": "assistant", "content": list(blocks)}, uuid, parentUuid=parent
    )


def _result(uuid: str, parent: str, call: str) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": call, "content": f"out {call}"}]
    return _line("user", {"role": "user", "content": content}, uuid, parentUuid=parent)


def _use(call: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": "Bash", "input": {}}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def test_results_of_parallel_calls_off_the_route_stay_and_a_compaction_is_crossed() -> None:
    """Only prompts start a branch: results hanging off the streamed lines of one answer stay
    wherever their links point, and a compaction boundary is followed to what it continues."""
    log = [
        _prompt("p1", None, "first"),
        _answer("a1", "p1", "m1", _use("t1")),
        _answer("a2", "a1", "m1", _use("t2")),
        _result("r1", "a1", "t1"),
        _result("r2", "a2", "t2"),
        _answer("a3", "r2", "m2", _text("both done")),
        _prompt("left", "a3", "abandoned idea"),
        _answer("a4", "left", "m3", _text("on it")),
        _prompt("p2", "a3", "better idea"),
        _answer("a5", "p2", "m4", _text("ok")),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b",
            "parentUuid": None,
            "logicalParentUuid": "a5",
            "isSidechain": False,
            "sessionId": SESSION,
        },
        _line("user", {"role": "user", "content": "summary"}, "s", parentUuid="b", isCompactSummary=True),
        _prompt("p3", "s", "go on"),
        _answer("a6", "p3", "m5", _text("done")),
    ]
    imported = import_lines(lines(*log), "s.jsonl")
    texts = [m["content"] for m in imported.messages if m["role"] != "tool"]
    assert texts == ["first", "", "both done", "better idea", "ok", "summary", "go on", "done"]
    assert [m["tool_call_id"] for m in imported.messages if m["role"] == "tool"] == ["t1", "t2"]
    assert [w for w in imported.warnings if "branches" in w] == [
        "line 9: the session branches (a prompt edited or rewound): this line continues line 6, and "
        "the 2 lines of the branch it left, from line 7, are not replayed"
    ]


def test_a_claude_code_log_whose_links_are_no_history_is_replayed_as_written() -> None:
    """A line id used twice: the first read gives no answer, and the branch is noted instead."""
    log = [
        _prompt("p1", None, "first"),
        _answer("a1", "p1", "m1", _text("one")),
        _prompt("x", "a1", "left"),
        _answer("a2", "x", "m2", _text("two")),
        _prompt("p2", "a1", "instead"),
        _answer("a2", "p2", "m3", _text("three")),
    ]
    imported = import_lines(lines(*log), "s.jsonl")
    assert len(imported.messages) == 6
    assert any("replayed here as written" in w for w in imported.warnings)


def test_claude_code_tool_results_never_count_as_a_branch() -> None:
    """Only a prompt can start a branch: results that name the line of their call are not one."""
    call = _line("assistant", {"id": "m1", "role": "assistant", "content": []}, "u2", parentUuid="u1")
    results = [
        _line(
            "user",
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": t, "content": "ok"}]},
            f"r{t}",
            parentUuid="u2",
        )
        for t in ("t1", "t2")
    ]
    call["message"]["content"] = [
        {"type": "tool_use", "id": t, "name": "Bash", "input": {}} for t in ("t1", "t2")
    ]
    imported = import_lines(
        lines(_line("user", {"role": "user", "content": "go"}, "u1"), call, *results), "s.jsonl"
    )
    assert not [w for w in imported.warnings if "branches" in w]


def test_import_never_replaces_a_device_or_pipe_given_as_out(tmp_path: Path) -> None:
    """`--out /dev/null` (to check a file imports) replaced /dev/null with a regular file when
    run as root: the JSONL is written beside the target and renamed over it."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    code, _, err = run_cli(
        "import", str(DATA / "codex/rollout-2025-09-02T09-00-00-0199a1b2.jsonl"), "--out", str(pipe)
    )
    assert code == 2 and f"--out {pipe}: is not a regular file" in err
    code, _, err = run_cli(
        "import",
        str(DATA / "codex/rollout-2025-09-02T09-00-00-0199a1b2.jsonl"),
        "--out",
        str(tmp_path / "s.jsonl"),
        "--tools-out",
        str(pipe),
    )
    assert code == 2 and f"--tools-out {pipe}: is not a regular file" in err
    assert stat.S_ISFIFO(pipe.stat().st_mode) and not (tmp_path / "s.jsonl").exists()


def test_codex_base_instructions_in_the_session_meta_are_the_system_prompt() -> None:
    """Newer Codex records the instructions it sends in `session_meta.base_instructions`
    (openai/codex codex-rs protocol: `SessionMeta.base_instructions`); they were skipped with
    the line, so a replay ran without the system prompt the session had."""
    conversation = _rollout(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "yes"}]},
    )
    payload = {
        "id": "019b",
        "cwd": "/w",
        "cli_version": "0.77.0",
        "base_instructions": {"text": "You are Codex."},
    }
    meta = json.dumps({"timestamp": "t", "type": "session_meta", "payload": payload})
    imported = import_lines([meta, *conversation, meta], "rollout.jsonl")
    assert imported.messages[0] == {"role": "system", "content": "You are Codex."}
    assert imported.messages[1:] == import_lines(conversation, "rollout.jsonl").messages
    assert "skipped 1 × session_meta (not replayed)" in imported.warnings


def test_a_claude_code_log_that_opens_with_more_bookkeeping_than_detection_reads_is_detected() -> None:
    """Hook progress lines, file snapshots and queued prompts can fill the first lines detection
    reads; such a log was "the format is not recognised"."""
    imported = import_file(DATA / "claude-code/hooks-first.jsonl")
    assert imported.format == "claude-code"
    assert [m["role"] for m in imported.messages] == ["user", "assistant"]
    assert "skipped 5 × progress (not replayed)" in imported.warnings
    with pytest.raises(TraceError, match="the format is not recognised"):
        import_lines(lines({"type": "progress", "data": {}}, {"type": "system"}), "other.jsonl")


def test_a_responses_conversation_is_put_together_from_its_logged_requests() -> None:
    """A request that adds to a `conversation` (the Conversations API) sends only its new
    items; the log's earlier requests of it were counted as repetitions and their turns lost."""
    imported = import_file(DATA / "openai-responses/conversation.jsonl")
    assert [m["content"] for m in imported.messages] == [
        "Answer in one sentence.",
        "Our release branch is release/2.4; remember it.",
        "Noted: the release branch is release/2.4.",
        "Which branch do I cherry-pick the fix onto?",
        "Onto release/2.4.",
    ]
    assert not any(w.startswith("skipped") for w in imported.warnings)
    assert any("1 earlier request(s) of conversation 'conv_68a1b2c3'" in w for w in imported.warnings)


def test_a_responses_request_of_a_stored_prompt_is_detected_and_its_missing_text_noted() -> None:
    """A request may name a stored prompt (`prompt: {id}`) that sets the model and the
    instructions: without `model` it was "the format is not recognised"."""
    request = {"prompt": {"id": "pmpt_123", "variables": {"city": "Oslo"}}, "input": "Weather?"}
    imported = import_lines(lines(request), "log.jsonl")
    assert imported.format == "openai-responses"
    assert imported.messages == ({"role": "user", "content": "Weather?"},)
    assert any("the stored prompt 'pmpt_123'" in w for w in imported.warnings)


def test_codex_agent_messages_are_user_messages_of_their_text() -> None:
    """A sub-agent's `agent_message` to its parent was counted and dropped; Codex sends its
    plain text as a user message to a model that does not take agent messages (openai/codex
    codex-rs: `plaintext_agent_message_content`)."""
    ask = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "split it"}]}
    reply = {
        "type": "agent_message",
        "author": "/root/worker",
        "recipient": "/root",
        "content": [
            {"type": "input_text", "text": "part 1 done"},
            {"type": "input_text", "text": "part 2 done"},
        ],
    }
    sealed = {**reply, "content": [{"type": "encrypted_content", "encrypted_content": "gAAA"}]}
    imported = import_lines(_rollout(ask, reply, sealed), "rollout.jsonl")
    assert imported.messages[1:] == ({"role": "user", "content": "part 1 done\npart 2 done"},)
    assert "skipped 1 × agent_message without plain text (encrypted) (not replayed)" in imported.warnings


def test_a_branch_is_found_through_bookkeeping_lines_of_the_route() -> None:
    """Lines of kinds the import skips (an attachment) still link the history: a fork after one
    is found, and named by its line."""
    attachment = {"type": "attachment", "uuid": "att", "parentUuid": "a1", "isSidechain": False}
    log = [
        _prompt("p1", None, "first"),
        _answer("a1", "p1", "m1", _text("one")),
        {**attachment, "sessionId": SESSION},
        _prompt("x", "att", "left"),
        _answer("a2", "x", "m2", _text("two")),
        _prompt("p2", "att", "instead"),
        _answer("a3", "p2", "m3", _text("three")),
    ]
    imported = import_lines(lines(*log), "s.jsonl")
    assert [m["content"] for m in imported.messages] == ["first", "one", "instead", "three"]
    assert any(
        w.startswith("line 6: the session branches") and "continues line 3," in w for w in imported.warnings
    )
