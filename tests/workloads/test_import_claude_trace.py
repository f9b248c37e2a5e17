"""Request logs with more than one conversation, and claude-trace's logs of Claude Code's API
traffic: which request is the conversation (`importers.chains`), a streamed response put back
together (`importers.anthropic_stream`), and the lines claude-trace writes that are no
conversation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.importers.anthropic_stream import Streamed, StreamError, stream_message
from ctxlab.workloads.importers.chains import Chains, prefix_digests
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, lines, run_cli


def say(*texts: str) -> list[dict[str, Any]]:
    """Messages alternating user and assistant, starting with the user."""
    return [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)]


# ---------------------------------------------------------------------------------------------
# The conversation of a log: the last request of the chain ending latest


def _chosen(*requests: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """The line (1-based order) taken, its chain's length, and the requests skipped outside it
    and the chains they form."""
    chains: Chains[int] = Chains()
    for line, messages in enumerate(requests, start=1):
        chains.add(line, list(messages), line)
    choice = chains.choice()
    assert choice is not None and choice.payload == choice.line
    return choice.line, choice.depth, choice.others, choice.chains


def test_requests_that_continue_none_give_the_last_as_before() -> None:
    assert _chosen(say("a"), say("b"), say("c")) == (3, 1, 2, 2)


def test_a_side_request_after_the_conversation_does_not_replace_it() -> None:
    main_1, main_2 = say("fix it"), say("fix it", "done?", "yes")
    assert _chosen(main_1, say("a title, please"), main_2, say("quota")) == (3, 2, 2, 2)


def test_the_chain_ending_latest_wins_over_a_longer_one() -> None:
    """A client that compacted or cleared its history starts a new chain: the conversation from
    then on is that one, however long the chain before it."""
    longest = [say("a"), say("a", "b", "c"), say("a", "b", "c", "d", "e")]
    later = [say("x"), say("x", "y", "z")]
    assert _chosen(*longest, *later) == (5, 2, 3, 1)
    assert _chosen(*later, *longest) == (5, 3, 2, 1)


def test_a_sub_agent_that_returns_to_the_agent_is_skipped() -> None:
    agent, sub_agent = say("fix it"), say("look for the bug")
    resumed = say("fix it", "found it", "fix it now")
    assert _chosen(agent, sub_agent, say("look for the bug", "x", "more"), resumed) == (4, 2, 2, 1)


def test_a_request_continues_the_one_with_the_most_of_its_messages() -> None:
    """A retry (the same messages again) takes its place; a later request continues it."""
    assert _chosen(say("a"), say("a", "b", "c"), say("a", "b", "c"), say("a", "b", "c", "d", "e"))[:2] == (
        4,
        3,
    )


def test_cache_marks_moved_between_requests_do_not_break_a_chain() -> None:
    marked = {"type": "text", "text": "fix it", "cache_control": {"type": "ephemeral"}}
    first = [{"role": "user", "content": [marked]}]
    plain = [{"role": "user", "content": [{"type": "text", "text": "fix it"}]}]
    assert _chosen(first, say("side"), [*plain, *say("ok", "go")[1:]], say("quota"))[:2] == (3, 2)
    assert prefix_digests(first) == prefix_digests(plain)


def test_message_boundaries_are_part_of_a_digest() -> None:
    assert prefix_digests(["ab"])[-1] != prefix_digests(["a", "b"])[-1]


def test_a_plain_request_log_takes_the_longest_chain_and_says_so() -> None:
    main_1 = {"model": "m", "max_tokens": 9, "system": "Agent.", "messages": say("fix it")}
    main_2 = {**main_1, "messages": say("fix it", "looking", "and?")}
    title = {"model": "s", "max_tokens": 9, "messages": say("title for: fix it")}
    imported = import_lines(
        lines(
            main_1, {"request": main_2, "response": {"content": [{"type": "text", "text": "done"}]}}, title
        ),
        "log.jsonl",
    )
    assert [m["content"] for m in imported.messages] == ["Agent.", "fix it", "looking", "and?", "done"]
    assert "skipped 1 × earlier request (not replayed)" in imported.warnings
    assert "skipped 1 × request outside the conversation (a side request or sub-agent) (not replayed)" in (
        imported.warnings
    )
    assert any("the request at line 2" in w for w in imported.warnings)


def test_an_entry_that_is_no_request_is_an_error_at_its_line() -> None:
    """Before, an entry that was not a request was counted as an earlier request unless it came
    last; now every entry is read, so it is a located error wherever it stands."""
    request = {"model": "m", "max_tokens": 9, "messages": say("hi")}
    with pytest.raises(TraceError, match=r"log\.jsonl:2: not an Anthropic Messages request"):
        import_lines(lines(request, {"model": "m", "max_tokens": 9}, request), "log.jsonl")


# ---------------------------------------------------------------------------------------------
# A streamed response put back together


def sse(*events: dict[str, Any], newline: str = "\n") -> str:
    """A stream's text as the API writes it: an `event:` line and a `data:` line per event."""
    return "".join(f"event: {e['type']}{newline}data: {json.dumps(e)}{newline}{newline}" for e in events)


def _delta(index: int, kind: str, **fields: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def _block(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


STREAM = (
    {"type": "message_start", "message": {"id": "m1", "role": "assistant", "content": [], "model": "x"}},
    _block(0, {"type": "thinking", "thinking": "", "signature": ""}),
    _delta(0, "thinking_delta", thinking="Look "),
    {"type": "ping"},
    _delta(0, "thinking_delta", thinking="first."),
    _delta(0, "signature_delta", signature="c2ln"),
    {"type": "content_block_stop", "index": 0},
    _block(1, {"type": "text", "text": ""}),
    _delta(1, "text_delta", text="Line\u2028one, "),
    _delta(1, "text_delta", text="then a call."),
    {"type": "content_block_stop", "index": 1},
    _block(2, {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}),
    _delta(2, "input_json_delta", partial_json=""),
    _delta(2, "input_json_delta", partial_json='{"pa'),
    _delta(2, "input_json_delta", partial_json='th": "."}'),
    {"type": "content_block_stop", "index": 2},
    _block(3, {"type": "tool_use", "id": "t2", "name": "date", "input": {}}),
    {"type": "content_block_stop", "index": 3},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
    {"type": "message_stop"},
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_stream_gives_back_its_message(newline: str) -> None:
    skipped: list[str] = []
    streamed = stream_message(sse(*STREAM, newline=newline), skipped.append)
    assert streamed.message is not None and not skipped
    assert streamed.message["stop_reason"] == "tool_use" and streamed.message["id"] == "m1"
    assert streamed.message["content"] == [
        {"type": "thinking", "thinking": "Look first.", "signature": "c2ln"},
        {"type": "text", "text": "Line\u2028one, then a call."},
        {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}},
        {"type": "tool_use", "id": "t2", "name": "date", "input": {}},
    ]


def test_a_stream_cut_before_a_block_closes_keeps_what_came() -> None:
    cut = STREAM[:15]  # the call's input is whole, its block never closed
    streamed = stream_message(sse(*cut), [].append)
    assert streamed.message is not None
    assert streamed.message["content"][2]["input"] == {"path": "."}


def test_a_stream_that_ends_on_an_error_gives_no_message() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert stream_message(sse(*STREAM[:3], error), [].append) == Streamed(None, "overloaded_error")


def test_a_delta_of_another_kind_is_counted() -> None:
    skipped: list[str] = []
    stream_message(sse(*STREAM[:2], _delta(0, "future_delta", x="1")), skipped.append)
    assert skipped == ["stream delta 'future_delta'"]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (sse(*STREAM[:2]) + "data: {not json\n\n", "event 3's data is not JSON"),
        (sse(STREAM[0], _delta(0, "text_delta", text="x")), "block 0, which no content_block_start opened"),
        (sse(*STREAM[11:13], _delta(2, "input_json_delta", partial_json="{")), "block 2's streamed input"),
        (sse({"type": "ping"}), "not an Anthropic Messages stream"),
        ("data: [1]\n\n", "event 1's data is not a JSON object"),
        (sse({"type": "message_start", "message": "oops"}), "event 1's message is not a JSON object"),
        (sse(STREAM[0], {"type": "message_delta", "delta": "end_turn"}), "event 2's delta is not a JSON"),
        (
            sse(*STREAM[6:8], _delta(1, "text_delta", text="\ud83c")),
            "event 3's data: delta.text: \\ud83c is a lone",
        ),
        (
            sse(*STREAM[11:13], _delta(2, "input_json_delta", partial_json='{"p": "\\udc00"}')),
            "input: p: \\udc00",
        ),
        ("data: " + "[" * 100_000 + "]" * 100_000 + "\n\n", "event 1's data: the JSON is nested too deep"),
    ],
)
def test_a_stream_that_cannot_be_read_says_where(text: str, why: str) -> None:
    with pytest.raises(StreamError, match=re.escape(why)):
        stream_message(text, [].append)


# ---------------------------------------------------------------------------------------------
# claude-trace logs

TRACE = DATA / "anthropic-messages/claude-trace.jsonl"


def traced(body: Any, response: Any, path: str = "/v1/messages?beta=true") -> dict[str, Any]:
    """A line as claude-trace writes it."""
    request = {"timestamp": 1.0, "method": "POST", "url": "https://api.anthropic.com" + path, "headers": {}}
    return {"request": {**request, "body": body}, "response": response, "logged_at": "2025-09-04T00:00:00Z"}


def answered(message: dict[str, Any], status: int = 200) -> dict[str, Any]:
    return {"timestamp": 2.0, "status_code": status, "headers": {}, "body": message}


def streamed(*events: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": 2.0, "status_code": 200, "headers": {}, "body_raw": sse(*events)}


ASK = {"model": "m", "max_tokens": 9, "messages": say("hi")}
HELLO = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "hello"}]}


def test_a_claude_trace_log_gives_the_main_agents_conversation() -> None:
    """The fixture's last request is a title side request and a sub-agent's conversation and a
    topic request run in between: the main agent's retried third request is taken, its answer
    rebuilt from the stream."""
    imported = import_file(TRACE)
    assert imported.format == "anthropic-messages"
    messages = imported.messages
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert messages[0]["content"].startswith("You are Claude Code") and messages[1]["content"][1]["text"] == (
        "The test test_parse fails; fix it."
    )
    assert messages[2]["reasoning_content"] == "The test fails on parsing. Run it first to see the error."
    assert messages[3]["is_error"] is True
    assert json.loads(messages[4]["tool_calls"][0]["function"]["arguments"])["prompt"].startswith(
        "Find where"
    )
    assert messages[6] == {
        "role": "assistant",
        "content": "Line 12 drops the last field; removing `[:-1]` there fixes test_parse.",
    }
    assert [t.name for t in imported.tools] == ["Bash", "Task"]
    assert set(imported.warnings) >= {
        "skipped 1 × count_tokens call (not replayed)",
        "skipped 1 × call to another endpoint than a model's (not replayed)",
        "skipped 1 × failed request (HTTP 529) (not replayed)",
        "skipped 1 × request without a response (claude-trace's orphaned request) (not replayed)",
        "skipped 2 × earlier request (not replayed)",
        "skipped 5 × request outside the conversation (a side request or sub-agent) (not replayed)",
    }


def test_ctxlab_import_names_the_request_taken_on_stderr_and_replay_runs(tmp_path: Path) -> None:
    code, said, err = run_cli("import", str(TRACE), "--out", str(tmp_path / "s.jsonl"))
    assert code == 0 and "7 messages" in said and "(anthropic-messages)" in said
    assert "the conversation is the request at line 9" in err and "5 requests in 4 other chains" in err
    code, _, err = run_cli("replay", str(TRACE), "--preset", "none", "--out", str(tmp_path / "r"), "--quiet")
    assert code == 0, err
    assert len(list((tmp_path / "r").glob("*/manifest.json"))) == 1


def test_a_claude_trace_log_opening_with_other_calls_is_detected() -> None:
    count = traced(ASK, answered({"input_tokens": 3}), "/v1/messages/count_tokens?beta=true")
    other = traced({"events": []}, answered({}), "/api/event_logging/batch")
    imported = import_lines(lines(count, other, traced(ASK, answered(HELLO))), "t.jsonl")
    assert imported.format == "anthropic-messages"
    assert [m["content"] for m in imported.messages] == ["hi", "hello"]


def _sign_in() -> dict[str, Any]:
    """A call claude-trace logs with --include-all-requests: a GET, so its body is null."""
    line = traced(None, answered({"account": {}}), "/api/oauth/profile")
    return {**line, "request": {**line["request"], "method": "GET"}}


TELEMETRY = traced({"events": []}, answered({}), "/api/event_logging/batch")
OTHER_CALLS = {
    "sign-in and telemetry": [_sign_in(), *[TELEMETRY] * 8],
    "count_tokens": [traced(ASK, answered({"input_tokens": 3}), "/v1/messages/count_tokens")] * 9,
}


@pytest.mark.parametrize("opening", OTHER_CALLS.values(), ids=OTHER_CALLS.keys())
def test_a_log_opening_with_more_other_calls_than_detection_reads_is_detected(
    opening: list[dict[str, Any]],
) -> None:
    """Before, detection needed a /v1/messages line among the first 8 entries."""
    imported = import_lines(lines(*opening, traced(ASK, answered(HELLO))), "t.jsonl")
    assert imported.format == "anthropic-messages"
    assert [m["content"] for m in imported.messages] == ["hi", "hello"]


def test_a_log_of_other_calls_alone_says_so() -> None:
    why = r"t\.jsonl:9: the log holds no Messages request .*9 × call to another"
    with pytest.raises(TraceError, match=why):
        import_lines(lines(*OTHER_CALLS["sign-in and telemetry"]), "t.jsonl")


def test_request_logs_without_claude_traces_line_shape_keep_their_formats() -> None:
    """Wrapped requests of other logs are no claude-trace lines: no `url`, `method`, `logged_at`."""
    responses_log = {"request": {"model": "m", "input": "hi"}, "response": {"output": []}}
    anthropic_log = {"request": ASK, "response": HELLO}
    assert import_lines(lines(responses_log), "r.jsonl").format == "openai-responses"
    assert import_lines(lines(anthropic_log), "a.jsonl").messages[-1]["content"] == "hello"


def test_a_base_path_before_the_endpoint_still_calls_the_messages_api() -> None:
    entry = traced(ASK, answered(HELLO), "/proxy/anthropic/v1/messages")
    assert [m["content"] for m in import_lines(lines(entry), "t.jsonl").messages] == ["hi", "hello"]


def test_failed_and_unanswered_requests_are_counted() -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    failures = [
        traced(ASK, answered(overloaded, status=529)),
        traced(ASK, answered(overloaded)),
        traced(ASK, streamed(STREAM[0], overloaded)),
        traced(ASK, {"timestamp": 2.0, "status_code": 200, "headers": {}}),
        {**traced(ASK, None), "note": "ORPHANED_REQUEST - No matching response received"},
    ]
    imported = import_lines(lines(traced(ASK, answered(HELLO)), *failures), "t.jsonl")
    assert [m["content"] for m in imported.messages] == ["hi", "hello"]
    assert set(imported.warnings) >= {
        "skipped 1 × failed request (HTTP 529) (not replayed)",
        "skipped 1 × failed request (overloaded_error) (not replayed)",
        "skipped 1 × failed request (stream error overloaded_error) (not replayed)",
        "skipped 1 × response without a body (not replayed)",
        "skipped 1 × request without a response (claude-trace's orphaned request) (not replayed)",
    }


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (traced("not json {", answered(HELLO)), "t.jsonl:2: request.body is not a Messages request"),
        (
            traced(ASK, {"status_code": 200, "body_raw": "data: {oops\n\n"}),
            "t.jsonl:2: response.body_raw: event 1",
        ),
        (
            traced(ASK, streamed(STREAM[0], _delta(4, "text_delta", text="x"))),
            "t.jsonl:2: response.body_raw: event 2 adds to block 4",
        ),
    ],
)
def test_a_claude_trace_line_that_cannot_be_read_is_an_error_at_its_line(
    entry: dict[str, Any], why: str
) -> None:
    with pytest.raises(TraceError, match=re.escape(why)):
        import_lines(lines(traced(ASK, answered(HELLO)), entry), "t.jsonl")


def test_a_claude_trace_log_with_no_answered_request_says_what_it_skipped() -> None:
    orphan = traced(ASK, None)
    with pytest.raises(
        TraceError, match=r"t\.jsonl:2: the log holds no Messages request .*2 × request without"
    ):
        import_lines(lines(orphan, orphan), "t.jsonl")
