"""Importers on further variants of what real writers produce today: Anthropic Messages request
logs with server and MCP tools, documents and search results; LangChain threads; OpenHands
events; SWE-agent trajectories. Each test failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.workloads.importers import import_file, import_lines, read_any
from tests.workloads.importing import DATA, lines, run_cli

# ---------------------------------------------------------------------------------------------
# Anthropic Messages request logs


def test_anthropic_server_and_mcp_tools_are_calls_answered_where_their_results_stand() -> None:
    """A server tool (web search) and an MCP connector tool run within one response: the
    `server_tool_use` / `mcp_tool_use` block is a call and its `*_tool_result` block its result,
    so the text after the result is a message of its own, not glued to the text before."""
    imported = import_file(DATA / "anthropic-messages/server-tools.json")
    assert imported.format == "anthropic-messages"
    roles = [m["role"] for m in imported.messages]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    search, found, sunny = imported.messages[2:5]
    assert search["content"] == "Searching the forecast."
    assert search["tool_calls"][0]["function"]["name"] == "web_search"
    assert found == {
        "role": "tool",
        "tool_call_id": "srvtoolu_01",
        "content": "Tuesday forecast\n\nhttps://weather.example.org/tue",
    }
    assert sunny["content"] == "Sunny on Tuesday." and sunny["tool_calls"][0]["id"] == "toolu_02"
    assert imported.messages[8] == {
        "role": "tool",
        "tool_call_id": "mcptoolu_03",
        "content": "dice server unavailable",
        "is_error": True,
    }
    assert imported.messages[9]["content"] == "The dice failed; pick 10:00."
    assert any("encrypted_content" in w for w in imported.warnings)
    turns = read_any(DATA / "anthropic-messages/server-tools.json").script.turns
    assert [len(r.calls) for t in turns for r in t.rounds] == [1, 1, 1]


def test_anthropic_text_documents_and_search_results_keep_their_text_and_a_pdf_is_counted() -> None:
    imported = import_file(DATA / "anthropic-messages/server-tools.json")
    memo, question = imported.messages[1]["content"]
    assert memo["text"] == "Memo\n\nFrom the team lead\n\nLaunch is on Tuesday."
    assert question["text"] == "Is the weather good for the launch?"
    assert imported.messages[5]["content"] == "Launch checklist\n\nwiki/launch\n\nCheck the weather."
    assert "skipped 1 × user block 'document' (base64 source) (not replayed)" in imported.warnings


def test_anthropic_server_tool_errors_and_structured_results() -> None:
    """A code execution result is its JSON; a `*_error` result is an error result."""
    request = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "run it"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": "s1",
                        "name": "bash_code_execution",
                        "input": {"command": "ls"},
                    },
                    {
                        "type": "bash_code_execution_tool_result",
                        "tool_use_id": "s1",
                        "content": {
                            "type": "bash_code_execution_result",
                            "stdout": "a\n",
                            "stderr": "",
                            "return_code": 0,
                        },
                    },
                    {
                        "type": "server_tool_use",
                        "id": "s2",
                        "name": "web_fetch",
                        "input": {"url": "https://x.example"},
                    },
                    {
                        "type": "web_fetch_tool_result",
                        "tool_use_id": "s2",
                        "content": {
                            "type": "web_fetch_tool_result_error",
                            "error_code": "url_not_accessible",
                        },
                    },
                ],
            },
        ],
    }
    messages = import_lines(lines(request), "r.json").messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert json.loads(messages[2]["content"])["stdout"] == "a\n" and "is_error" not in messages[2]
    assert messages[4]["is_error"] is True and "url_not_accessible" in messages[4]["content"]


def test_anthropic_server_tool_log_replays_from_the_cli(tmp_path: Path) -> None:
    source = DATA / "anthropic-messages/server-tools.json"
    code, _, err = run_cli("import", str(source), "--out", str(tmp_path / "s.jsonl"), "--quiet")
    assert code == 0 and "base64 source" in err
    written = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    calls = {c["id"] for m in written for c in m.get("tool_calls", [])}
    assert calls == {m["tool_call_id"] for m in written if m["role"] == "tool"}


def test_anthropic_a_server_result_continuing_a_paused_turn_follows_its_call() -> None:
    """After `pause_turn` the caller sends the paused message back and the next response may
    open with the server tool's result: the result answers the call of the message before."""
    paused = [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}]
    request = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": paused}],
    }
    response = {
        "content": [
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
            {"type": "text", "text": "nothing found"},
        ]
    }
    messages = import_lines(lines({"request": request, "response": response}), "r.json").messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[3]["content"] == "nothing found"


# ---------------------------------------------------------------------------------------------
# LangGraph / LangChain


def test_langgraph_checkpoint_with_legacy_invalid_calls_and_responses_reasoning() -> None:
    """A checkpoint (`channel_values`) in LangChain's serialised form: calls kept only in
    `additional_kwargs.tool_calls` (no "result without its call" error), an invalid call that a
    tool message answers, and a Responses-API reasoning part's summary kept as reasoning."""
    imported = import_file(DATA / "langgraph/checkpoint.json")
    assert imported.format == "langgraph"
    messages = imported.messages
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["function"] == {"name": "ls", "arguments": '{"path": "."}'}
    assert messages[3]["tool_calls"][0]["function"]["arguments"] == '{"path": notes.txt}'
    assert messages[4]["is_error"] is True
    assert messages[5]["reasoning_content"] == "Quote the path this time."
    assert imported.warnings == ()
    turns = read_any(DATA / "langgraph/checkpoint.json").script.turns
    assert [len(r.calls) for t in turns for r in t.rounds] == [1, 1, 1]


def test_langgraph_an_unanswered_invalid_call_is_counted_and_its_raw_copy_not_read() -> None:
    message = {
        "type": "ai",
        "content": "",
        "tool_calls": [],
        "invalid_tool_calls": [{"id": "c1", "name": "f", "args": "{", "error": "bad"}],
        "additional_kwargs": {"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{"}}]},
    }
    imported = import_lines(
        lines({"values": {"messages": [{"type": "human", "content": "hi"}, message]}}), "t"
    )
    assert "tool_calls" not in imported.messages[1]
    assert "skipped 1 × invalid_tool_calls (not replayed)" in imported.warnings


def test_langgraph_thread_history_chat_messages_and_values_as_a_list() -> None:
    """A thread's history (a list of states, newest first) is read from its newest state; a
    `chat` message takes its role's kind; `values` may be the message list itself."""
    newest = {
        "values": {
            "messages": [
                {"type": "human", "content": "q"},
                {"type": "chat", "role": "assistant", "content": "a"},
            ]
        }
    }
    older = {"values": {"messages": [{"type": "human", "content": "q"}]}}
    imported = import_lines(lines([newest, older]), "history.json")
    assert imported.format == "langgraph"
    assert [m["role"] for m in imported.messages] == ["user", "assistant"]
    assert "skipped 1 × earlier thread state (not replayed)" in imported.warnings
    bare = {"values": [{"type": "human", "content": "q"}, {"type": "ai", "content": "a"}]}
    assert len(import_lines(lines(bare), "t.json").messages) == 2


def test_langgraph_an_image_block_in_anthropic_form_is_an_image() -> None:
    """LangChain passes an Anthropic image block (`source` with base64 `data` or a `url`) to the
    model; its image was dropped without a word, and so was an image block with neither."""
    content = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "image", "id": "file-only"},
        {"type": "text", "text": "What is shown?"},
    ]
    thread = {
        "values": {"messages": [{"type": "human", "content": content}, {"type": "ai", "content": "A cat."}]}
    }
    imported = import_lines(lines(thread), "thread.json")
    assert imported.messages[0]["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "text", "text": "What is shown?"},
    ]
    assert "skipped 1 × content part 'image' without its data or URL (not replayed)" in imported.warnings


# ---------------------------------------------------------------------------------------------
# OpenHands


def test_openhands_sdk_context_images_and_thinking_reach_the_messages() -> None:
    """The agent SDK sends a system prompt's `dynamic_context` as its second block and a
    message's `extended_content` after its content; an Anthropic model's `thinking_blocks` and
    a Responses reasoning item are its reasoning. None of them was read before."""
    imported = import_file(DATA / "openhands/sdk-events-context.json")
    assert imported.format == "openhands"
    prompt, question, action, _, answer = imported.messages
    assert prompt["content"].endswith("Working directory: /workspace/app")
    assert [p["type"] for p in question["content"]] == ["text", "image_url", "text"]
    assert question["content"][2]["text"].startswith("<EXTRA_INFO>")
    assert action["reasoning_content"] == "The screenshot shows a lockfile error."
    assert answer["reasoning_content"] == "Explain the fix."
    assert imported.warnings == ()


def test_openhands_a_users_terminal_command_and_an_error_without_a_call_are_user_text() -> None:
    """A command the user ran in the session's terminal was refused as 'an agent without
    function calling'; an error observation without a call was dropped, though OpenHands sends
    both to the model as user messages."""
    imported = import_file(DATA / "openhands/user-terminal.json")
    users = [m["content"] for m in imported.messages if m["role"] == "user"]
    assert users == [
        "Is the tree clean?",
        "git status --short",
        " M src/app.py",
        "Show its diff.",
        "Missing required parameters for function 'execute_bash': {'command'}",
    ]
    assert imported.warnings == ()
    assert len(read_any(DATA / "openhands/user-terminal.json").script.turns) == 2


# ---------------------------------------------------------------------------------------------
# SWE-agent and mini-swe-agent


def test_swe_agent_thinking_blocks_are_the_steps_reasoning() -> None:
    """SWE-agent keeps an Anthropic model's thinking in `thinking_blocks` (no
    `reasoning_content`); it was dropped without a count."""
    imported = import_file(DATA / "swe-agent/thinking-blocks.traj")
    assert imported.format == "swe-agent"
    assert imported.messages[2]["reasoning_content"] == "Search for the test first."
    assert "reasoning_content" not in imported.messages[4]
    assert imported.messages[3]["content"] == "tests/test_dates.py:4:def test_date():"


def test_mini_swe_agent_a_response_with_two_commands_is_a_format_error_not_a_call() -> None:
    """mini-swe-agent runs a response only when it holds exactly one command block and answers
    any other with a format error: the response is text, not a call of its last block that the
    error message would answer as if the command had run."""
    imported = import_file(DATA / "mini-swe-agent/format-error.traj.json")
    roles = [m["role"] for m in imported.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "tool", "assistant"]
    assert "tool_calls" not in imported.messages[2]
    assert imported.messages[3]["content"].startswith("Please always provide EXACTLY ONE action")
    assert json.loads(imported.messages[4]["tool_calls"][0]["function"]["arguments"]) == {"action": "pwd"}
