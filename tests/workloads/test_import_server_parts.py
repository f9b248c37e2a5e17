"""What a model ran without the client: a tool the provider's server ran within the response
(file search) in Responses logs, replayed as a call answered by its result at its place, never
a result without its call nor a call without its result."""

from __future__ import annotations

from typing import Any

from ctxlab.workloads.importers import import_lines
from tests.workloads.importing import lines

Wire = dict[str, Any]


def _paired(messages: list[Wire]) -> None:
    """Every tool result answers a call made before it, and every call gets its result."""
    waiting: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in waiting, message
            waiting.remove(message["tool_call_id"])
        waiting += [c["id"] for c in message.get("tool_calls", [])]
    assert not waiting


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
    _paired(imported.messages)
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
    _paired(failed.messages)


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
