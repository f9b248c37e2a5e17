"""What a model said or ran without the client: a refusal, and a tool the provider's server ran
within the response (web search, file search, MCP), in LangGraph threads and Responses logs. Each
is replayed as the readers of the providers' own logs replay it: a refusal as the assistant's
text, a server tool as a call answered by its result at its place, never a result without its
call nor a call without its result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_file, import_lines, read_any
from ctxlab.workloads.trace import TraceError, read_trace
from tests.workloads.importing import DATA, assert_paired, lines, run_cli

Wire = dict[str, Any]


# ---------------------------------------------------------------------------------------------
# LangGraph


def test_langgraph_server_tools_and_refusals_as_langchain_core_serialises_them() -> None:
    """A web search Anthropic's server ran, a file search and an MCP call in LangChain's standard
    blocks, and refusals were each counted as `content part ...` and dropped: the search results
    the model read were lost and a refusal gave an empty assistant message."""
    imported = import_file(DATA / "langgraph/server-tools.json")
    assert imported.format == "langgraph"
    assert_paired(imported.messages)
    said = [(m["role"], m["content"]) for m in imported.messages]
    assert said[2:7] == [
        ("assistant", "I'll look it up."),
        (
            "tool",
            "Release notes 4.2\n\nhttps://example.org/notes/4.2\n\nChangelog\n\nhttps://example.org/changelog",
        ),
        ("assistant", "4.2 adds streaming exports."),
        ("tool", "saved as note 12"),
        ("assistant", "Saved."),
    ]
    assert imported.messages[2]["tool_calls"][0]["function"] == {
        "name": "web_search",
        "arguments": '{"query": "release 4.2 notes"}',
    }
    assert [c["id"] for c in imported.messages[4]["tool_calls"]] == ["toolu_01"]
    assert imported.messages[8] == {"role": "assistant", "content": "I can't share private keys."}
    searched, found, mcp, failed, last = imported.messages[10:]
    assert searched["reasoning_content"] == "The vector store holds the design docs."
    assert searched["tool_calls"][0]["function"]["arguments"] == '{"queries": ["export format"]}'
    assert found["content"] == 'exports.md\n\n{"team": "data", "year": 2025}\n\nExports stream as JSON lines.'
    assert mcp["tool_calls"][0]["id"] == "mcptoolu_01"
    assert failed == {
        "role": "tool",
        "tool_call_id": "mcptoolu_01",
        "content": "tracker timed out",
        "is_error": True,
    }
    assert last == {
        "role": "assistant",
        "content": "I can't open the tracker, but exports stream as JSON lines.",
    }
    assert not any("content part" in w for w in imported.warnings)


def test_langgraph_server_tools_replay_as_the_thread_itself_without_protocol_breaks(tmp_path: Path) -> None:
    """The JSONL `ctxlab import` writes reads back into the workload the thread gives, and the
    replay finds no call without its result in it."""
    out = tmp_path / "session.jsonl"
    assert run_cli("import", str(DATA / "langgraph/server-tools.json"), "--out", str(out), "--quiet")[0] == 0
    direct = read_any(DATA / "langgraph/server-tools.json")
    again = read_trace(out, tools=direct.script.tools)
    assert again.script == direct.script
    assert again.source_violations == direct.source_violations == ()


def _lc(kind: str, **fields: Any) -> dict[str, Any]:
    """A message as `langchain_core.load.dumpd` writes it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": fields}


def _import(*messages: dict[str, Any]) -> Any:
    return import_lines(lines({"values": {"messages": list(messages)}}), "thread.json")


ASK = _lc("HumanMessage", content="Find it.", type="human")
REFUSAL = {"type": "refusal", "refusal": "I can't help with that."}


def _ai(content: object, **fields: Any) -> dict[str, Any]:
    return _lc("AIMessage", content=content, type="ai", tool_calls=[], invalid_tool_calls=[], **fields)


def test_langgraph_a_refusal_part_of_an_ai_message_is_its_text() -> None:
    refused = _ai([{"type": "reasoning", "summary": [{"type": "summary_text", "text": "No."}]}, REFUSAL])
    imported = _import(ASK, refused)
    assert imported.messages[1] == {
        "role": "assistant",
        "content": "I can't help with that.",
        "reasoning_content": "No.",
    }


def test_langgraph_a_refusal_in_additional_kwargs_follows_the_text_once() -> None:
    """Chat Completions' refusal, which LangChain keeps in `additional_kwargs`, is the text after
    the content; when the content has the refusal part too it is not said twice."""
    kept = _ai("", additional_kwargs={"refusal": "I can't help with that."})
    both = _ai([REFUSAL], additional_kwargs={"refusal": "I can't help with that."})
    assert [m["content"] for m in _import(ASK, kept, ASK, both).messages] == [
        "Find it.",
        "I can't help with that.",
        "Find it.",
        "I can't help with that.",
    ]


SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}


def test_langgraph_a_server_tool_only_message_ends_at_its_result() -> None:
    """An AI message holding only a server tool's call and result is that call and result (no
    empty assistant message after them); `additional_kwargs.reasoning_content` stays on its
    first assistant message."""
    result = {"type": "mcp_tool_result", "tool_use_id": "srvtoolu_1", "is_error": True, "content": "down"}
    ran = _ai([SEARCH, result], additional_kwargs={"reasoning_content": "Search first."})
    imported = _import(ASK, ran, ASK)
    assert_paired(imported.messages)
    assert [m["role"] for m in imported.messages] == ["user", "assistant", "tool", "user"]
    assert imported.messages[1]["reasoning_content"] == "Search first."
    assert imported.messages[2] == {
        "role": "tool",
        "tool_call_id": "srvtoolu_1",
        "content": "down",
        "is_error": True,
    }


def test_langgraph_server_results_of_parallel_calls_follow_their_message() -> None:
    """Two server calls, then both results: one assistant message holding both calls, then the
    results in order; a standard result with no `output` is empty, and a client call part ahead
    of a result is still the message's call, on its last assistant message."""
    other = {"type": "server_tool_call", "id": "ws_2", "name": "web_search", "args": {"query": "r"}}
    client = {"type": "tool_use", "id": "toolu_1", "name": "save", "input": {}}
    first = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    second = {"type": "server_tool_result", "tool_call_id": "ws_2", "status": "success"}
    ran = _ai([SEARCH, other, client, first, second, {"type": "text", "text": "Saving."}])
    done = _lc("ToolMessage", content="ok", type="tool", tool_call_id="toolu_1", status="success")
    imported = _import(ASK, ran, done)
    assert_paired(imported.messages)
    assert [(m["role"], m["content"]) for m in imported.messages[1:]] == [
        ("assistant", ""),
        ("tool", ""),
        ("tool", ""),
        ("assistant", "Saving."),
        ("tool", "ok"),
    ]
    assert [c["id"] for c in imported.messages[1]["tool_calls"]] == ["srvtoolu_1", "ws_2"]
    assert [c["id"] for c in imported.messages[4]["tool_calls"]] == ["toolu_1"]


def test_langgraph_a_server_result_without_its_call_is_refused() -> None:
    lost = _ai([{"type": "server_tool_result", "tool_call_id": "ws_9", "status": "success", "output": "x"}])
    with pytest.raises(TraceError, match=r"a tool result for 'ws_9' has no call before it"):
        _import(ASK, lost)


def test_langgraph_server_parts_outside_an_ai_message_are_counted() -> None:
    imported = _import(_lc("HumanMessage", content=[{"type": "text", "text": "hi"}, SEARCH], type="human"))
    assert list(imported.messages) == [{"role": "user", "content": "hi"}]
    assert "skipped 1 × content part 'server_tool_use' (not replayed)" in imported.warnings


# ---------------------------------------------------------------------------------------------
# OpenAI Responses: a file search carries its results when the request included them


def _log(output: list[dict[str, Any]]) -> list[str]:
    """One request with its response, whose output is `output` then the answer."""
    request = {
        "model": "gpt-5",
        "tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}],
        "include": ["file_search_call.results"],
        "input": [{"role": "user", "content": "What format do exports use?"}],
    }
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "JSON lines."}],
    }
    return lines({"request": request, "response": {"id": "resp_1", "output": [*output, answer]}})


RESULTS = [
    {
        "file_id": "file-1",
        "filename": "exports.md",
        "score": 0.9,
        "attributes": {"year": 2025, "team": "données"},
        "text": "Exports stream as JSON lines.",
    },
    {"file_id": "file-2", "filename": None, "score": 0.4, "attributes": {}, "text": "Older: CSV."},
]


def _search(results: object, status: str = "completed") -> dict[str, Any]:
    return {
        "type": "file_search_call",
        "id": "fs_1",
        "queries": ["export format"],
        "status": status,
        "results": results,
    }


def test_responses_a_file_search_with_its_results_is_a_call_and_its_result() -> None:
    """A file search's results, which the model read, were counted as a web search "whose
    results the API does not return" and dropped."""
    imported = import_lines(_log([_search(RESULTS)]), "log.jsonl")
    assert_paired(imported.messages)
    asked, found, answer = imported.messages[1:]
    assert asked["tool_calls"] == [
        {
            "id": "fs_1",
            "type": "function",
            "function": {"name": "file_search", "arguments": '{"queries": ["export format"]}'},
        }
    ]
    assert found == {
        "role": "tool",
        "tool_call_id": "fs_1",
        "content": [
            {
                "type": "text",
                "text": 'exports.md\n\n{"team": "données", "year": 2025}\n\nExports stream as JSON lines.',
            },
            {"type": "text", "text": "file-2\n\nOlder: CSV."},
        ],
    }
    assert answer == {"role": "assistant", "content": "JSON lines."}
    assert not any("file_search_call" in w for w in imported.warnings)


def test_responses_a_file_search_that_found_nothing_or_failed_keeps_its_result() -> None:
    empty = import_lines(_log([_search([])]), "log.jsonl")
    assert empty.messages[2] == {"role": "tool", "tool_call_id": "fs_1", "content": ""}
    failed = import_lines(_log([_search([], "failed")]), "log.jsonl")
    assert failed.messages[2]["is_error"] is True
    assert_paired(failed.messages)


def test_responses_a_file_search_without_its_results_is_counted_as_such() -> None:
    """Without `include: ["file_search_call.results"]` the API gives no results: the search is
    counted, under a label that says why, and no call is left without its result."""
    for search in (_search(None), {k: v for k, v in _search(None).items() if k != "results"}):
        imported = import_lines(_log([search]), "log.jsonl")
        assert [m["role"] for m in imported.messages] == ["user", "assistant"]
        assert (
            "skipped 1 × item 'file_search_call' without its results "
            "(not asked for: include file_search_call.results) (not replayed)"
        ) in imported.warnings
