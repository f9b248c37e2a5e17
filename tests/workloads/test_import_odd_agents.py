"""Odd but possible input from the three formats users most often bring (Claude Code session
logs, Codex rollouts, Anthropic Messages request logs): each is read as its writer meant it, or
refused at its file and line with exit 2, nothing written, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_lines
from ctxlab.workloads.importers.claude_branches import COPY
from tests.workloads.importing import claude_line, claude_prompt, lines
from tests.workloads.test_import_odd_inputs import imported, refused

# ---------------------------------------------------------------------------------------------
# Claude Code


def _claude_answer(uuid: str, parent: str, text: str, **fields: Any) -> dict[str, Any]:
    message = {"id": f"msg_{uuid}", "role": "assistant", "content": [{"type": "text", "text": text}]}
    return claude_line("assistant", uuid, parent, message={**message, **fields})


def test_claude_code_local_command_lines_are_the_user_messages_claude_code_sent(tmp_path: Path) -> None:
    """Newer Claude Code writes a slash command run locally (`/cost`, `/context`) and its output as
    `system` lines of subtype `local_command`, and sends their content as user messages so the
    model can refer to the output; they were skipped as notices."""
    command, output = (
        "<command-name>/cost</command-name>",
        "<local-command-stdout>$0.10</local-command-stdout>",
    )
    log = [
        claude_prompt("p1", None, "Hi"),
        _claude_answer("a1", "p1", "Hello."),
        claude_line("system", "s1", "a1", subtype="local_command", content=command),
        claude_line("system", "s2", "s1", subtype="local_command", content=output),
        claude_line("system", "s3", "s2", subtype="informational", content="A hook ran."),
        claude_prompt("p2", "s3", "Is that much?"),
        _claude_answer("a2", "p2", "No."),
    ]
    assert imported(tmp_path, "\n".join(lines(*log)) + "\n") == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": command},
        {"role": "user", "content": output},
        {"role": "user", "content": "Is that much?"},
        {"role": "assistant", "content": "No."},
    ]


def test_claude_code_a_line_without_its_message_is_still_refused_at_its_line(tmp_path: Path) -> None:
    answer = _claude_answer("a1", "p1", "Hello.")
    del answer["message"]
    err, _ = refused(tmp_path, "\n".join(lines(claude_prompt("p1", None, "Hi"), answer)) + "\n")
    assert err.startswith("odd.jsonl:2: an entry of type 'assistant' without a 'message' object"), err


def test_claude_code_notices_it_never_sends_are_not_replayed_as_the_models_turns(tmp_path: Path) -> None:
    """Claude Code writes an API error ("API Error: 529 Overloaded", a usage limit) as an assistant
    line of model `<synthetic>`, and leaves it and display-only (`isVirtual`) lines out of every
    request; they were replayed as answers the model gave."""
    notice = _claude_answer("e1", "p1", "API Error: 529 Overloaded", model="<synthetic>")
    shown = _claude_answer("v1", "e1", "(shown only)")
    log = [
        claude_prompt("p1", None, "Hi"),
        {**notice, "isApiErrorMessage": True},
        {**shown, "isVirtual": True},
        claude_prompt("p2", "v1", "Hi again"),
        _claude_answer("a1", "p2", "Hello."),
    ]
    source = tmp_path / "in"
    source.mkdir()
    assert imported(source, "\n".join(lines(*log)) + "\n") == [
        {"role": "user", "content": "Hi"},
        {"role": "user", "content": "Hi again"},
        {"role": "assistant", "content": "Hello."},
    ]
    # The model's own answer that quotes such a notice is its answer.
    quoted = _claude_answer("e1", "p1", "API Error: 529 Overloaded")
    assert imported(tmp_path, "\n".join(lines(log[0], {**quoted, "isApiErrorMessage": True})) + "\n")[1] == {
        "role": "assistant",
        "content": "API Error: 529 Overloaded",
    }


def _session_with_a_call() -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}
    return [
        claude_prompt("p1", None, "List the files."),
        claude_line("assistant", "a1", "p1", message={"id": "m1", "role": "assistant", "content": [call]}),
        claude_line("user", "r1", "a1", message={"role": "user", "content": [result]}),
        _claude_answer("a2", "r1", "One file."),
    ]


def test_claude_code_lines_written_again_are_read_once(tmp_path: Path) -> None:
    """A session reopened (in an editor, or fed as a stream) re-appends its lines, the same uuid and
    content with another `cwd` or `timestamp`; Claude Code reads lines by uuid, so once. The copies
    were replayed, repeating the conversation and its call ids."""
    session = _session_with_a_call()
    copies = [{**line, "cwd": "/elsewhere", "timestamp": "2025-09-02T10:00:00.000Z"} for line in session]
    later = [claude_prompt("p2", "a2", "And now?"), _claude_answer("a3", "p2", "Done.")]
    text = "\n".join(lines(*session, *copies, *later)) + "\n"
    expected = [
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "Bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py"},
        {"role": "assistant", "content": "One file."},
        {"role": "user", "content": "And now?"},
        {"role": "assistant", "content": "Done."},
    ]
    assert imported(tmp_path, text) == expected
    once = import_lines(iter(text.splitlines()), "session.jsonl")  # read once, as a stream
    assert list(once.messages) == expected
    assert f"skipped 4 × {COPY} (not replayed)" in once.warnings


def test_claude_code_one_uuid_on_two_different_lines_is_still_replayed_as_written() -> None:
    """Only a line repeated whole is a copy: another line under a used uuid is kept."""
    session = _session_with_a_call()
    other = {
        **session[3],
        "message": {**session[3]["message"], "id": "m9", "content": [{"type": "text", "text": "Two."}]},
    }
    imported = import_lines(lines(*session, other), "session.jsonl")
    assert imported.messages[-2:] == (
        {"role": "assistant", "content": "One file."},
        {"role": "assistant", "content": "Two."},
    )


SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "release"}}
FOUND = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {"type": "web_search_result", "title": "1.0", "url": "https://x.test/r", "encrypted_content": "E"}
    ],
}


@pytest.mark.parametrize("streamed", [True, False], ids=["a-line-a-block", "one-line"])
def test_claude_code_a_server_tools_call_is_answered_at_its_place_as_in_request_logs(
    tmp_path: Path, streamed: bool
) -> None:
    """A tool the API ran within the answer (web search) writes its call and its result in the
    assistant message; both were counted and dropped, so the search's text never reached the
    replayed context. As in a request log, the message is split at the result."""
    bash = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    blocks = [
        {"type": "text", "text": "Searching."},
        SEARCH,
        FOUND,
        {"type": "text", "text": "In May."},
        bash,
    ]
    answer = [
        claude_line("assistant", f"a{k}", f"a{k - 1}" if k else "p1",
                    message={"id": "m1", "role": "assistant", "content": [block] if streamed else blocks})
        for k, block in enumerate(blocks if streamed else [None])
    ]  # fmt: skip
    last = answer[-1]["uuid"]
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}
    log = [
        claude_prompt("p1", None, "When was it released?"),
        *answer,
        claude_line("user", "r1", last, message={"role": "user", "content": [result]}),
        _claude_answer("a9", "r1", "Done."),
    ]
    searched = {"id": "srvtoolu_1", "type": "function",
                "function": {"name": "web_search", "arguments": '{"query": "release"}'}}  # fmt: skip
    listed = {
        "id": "toolu_1",
        "type": "function",
        "function": {"name": "Bash", "arguments": '{"command": "ls"}'},
    }
    assert imported(tmp_path, "\n".join(lines(*log)) + "\n") == [
        {"role": "user", "content": "When was it released?"},
        {"role": "assistant", "content": "Searching.", "tool_calls": [searched]},
        {"role": "tool", "tool_call_id": "srvtoolu_1", "content": "1.0\n\nhttps://x.test/r"},
        {"role": "assistant", "content": "In May.", "tool_calls": [listed]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py"},
        {"role": "assistant", "content": "Done."},
    ]


# ---------------------------------------------------------------------------------------------
# Codex


def _rollout(*items: dict[str, Any]) -> str:
    meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": "r1", "cli_version": "0.50.0"}}
    wrapped = [{"timestamp": "t", "type": "response_item", "payload": item} for item in items]
    return "\n".join(lines(meta, *wrapped)) + "\n"


def _said(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _shell(call_id: str, command: str) -> list[dict[str, Any]]:
    arguments = '{"command": ["' + command + '"]}'
    return [
        {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id},
        {"type": "function_call_output", "call_id": call_id, "output": f"ran {command}"},
    ]


def test_codex_a_call_id_used_again_in_a_later_turn_keeps_that_calls_output(tmp_path: Path) -> None:
    """A model that numbers its calls anew each response repeats an id: the later call's output was
    counted as a second output of the first call, and the later call given `aborted`."""
    rollout = _rollout(
        _said("user", "List."), *_shell("call_0", "ls"), _said("assistant", "Listed."),
        _said("user", "Again."), *_shell("call_0", "pwd"), _said("assistant", "Done."),
    )  # fmt: skip
    messages = imported(tmp_path, rollout)
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert results == ["ran ls", "ran pwd"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"] * 2


def test_codex_a_call_id_used_again_after_an_unanswered_call_keeps_its_output_for_the_later_call(
    tmp_path: Path,
) -> None:
    """A call interrupted before its output (Esc, then a new prompt) and a later call reusing its
    id: the first read found "an output of `call_0`" and moved the later call's output up to the
    interrupted call, leaving the call that ran it `aborted`."""
    interrupted = _shell("call_0", "ls")[0]
    rollout = _rollout(
        _said("user", "List."), interrupted, _said("user", "Stop; print the folder instead."),
        *_shell("call_0", "pwd"), _said("assistant", "Done."),
    )  # fmt: skip
    messages = imported(tmp_path, rollout)
    roles = ["user", "assistant", "tool", "user", "assistant", "tool", "assistant"]
    assert [m["role"] for m in messages] == roles
    assert [m["content"] for m in messages if m["role"] == "tool"] == ["aborted", "ran pwd"]
    assert [m["tool_calls"][0]["function"]["arguments"] for m in messages if "tool_calls" in m] == [
        '{"command": ["ls"]}',
        '{"command": ["pwd"]}',
    ]
    # Read once (a stream), the rollout gives the same conversation.
    assert list(import_lines(iter(rollout.splitlines()), "rollout.jsonl").messages) == messages


# ---------------------------------------------------------------------------------------------
# Anthropic Messages request logs

WEATHER = {"name": "weather", "description": "The weather.", "input_schema": {"type": "object"}}
ASKED = {"role": "user", "content": "Weather in Paris?"}
CALLED = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
    ],
}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"}]}


def _anthropic_request(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "claude-sonnet-4", "max_tokens": 1024, "tools": [WEATHER], "messages": list(messages)}


def _response(*content: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": list(content),
        "stop_reason": "end_turn",
    }


def test_a_response_logged_as_the_entry_after_its_request_answers_it(tmp_path: Path) -> None:
    """A log that writes each request and then its response (a line each) was not recognised, or,
    forced, refused at the first response as "not an Anthropic Messages request"."""
    log = [
        _anthropic_request(ASKED),
        _response(*CALLED["content"]),
        _anthropic_request(ASKED, CALLED, RESULT),
        _response({"type": "text", "text": "Sunny in Paris."}),
    ]
    assert imported(tmp_path, "\n".join(lines(*log)) + "\n")[-3:] == [
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "Sunny"},
        {"role": "assistant", "content": "Sunny in Paris."},
    ]


def test_a_response_that_follows_no_request_awaiting_one_is_refused_at_its_line(tmp_path: Path) -> None:
    answer = _response({"type": "text", "text": "Sunny."})
    wrapped = {"request": _anthropic_request(ASKED), "response": answer}
    for log in ([_anthropic_request(ASKED), answer, answer], [wrapped, answer]):
        err, replay_err = refused(tmp_path, "\n".join(lines(*log)) + "\n", "--format", "anthropic-messages")
        expected = f"odd.jsonl:{len(log)}: a Messages response that follows no request awaiting one"
        assert err.startswith(expected), err
        assert expected in replay_err


def test_a_response_to_a_prefilled_request_continues_the_prefill(tmp_path: Path) -> None:
    """The API's answer to a request ending with an assistant message continues that message; they
    were replayed as two assistant messages, the first a fragment the model never ended."""
    prefilled = _anthropic_request(
        {"role": "user", "content": "The weather as JSON."}, {"role": "assistant", "content": "{"}
    )
    log = {"request": prefilled, "response": _response({"type": "text", "text": '"sky": "clear"}'})}
    assert imported(tmp_path, "\n".join(lines(log)) + "\n") == [
        {"role": "user", "content": "The weather as JSON."},
        {"role": "assistant", "content": '{"sky": "clear"}'},
    ]


def test_claude_code_a_tool_output_cut_inside_an_emoji_is_read_with_the_replacement_character(
    tmp_path: Path,
) -> None:
    """Claude Code shortens long tool outputs by UTF-16 units, which can leave the first half of
    an emoji's pair at the end; the log escapes it (`\\ud83d`). Such a half is no character: the
    log is read with U+FFFD in its place (the rest as written), and the import says so."""
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    cut = {"type": "tool_result", "tool_use_id": "t1", "content": "done \ud83d"}
    log = [
        claude_prompt("p1", None, "List"),
        claude_line("assistant", "a1", "p1", message={"id": "m1", "role": "assistant", "content": [call]}),
        claude_line("user", "r1", "a1", message={"role": "user", "content": [cut]}),
        _claude_answer("a2", "r1", "Done."),
    ]
    text = "\n".join(json.dumps(line) for line in log) + "\n"  # a lone half is written escaped
    assert imported(tmp_path, text)[2] == {"role": "tool", "tool_call_id": "t1", "content": "done \ufffd"}
    warnings = import_lines(text.splitlines(), "odd.jsonl").warnings
    assert any("of 1 entry, the first at line 3 as U+FFFD" in w for w in warnings), warnings


def test_claude_code_lines_gathered_in_one_json_list_are_refused_saying_how_to_write_them(
    tmp_path: Path,
) -> None:
    """A session's lines pretty-printed as one JSON list are no session log Claude Code writes;
    forced as one, the refusal says what the file holds and how to write it."""
    log = [claude_prompt("p1", None, "Hi"), _claude_answer("a1", "p1", "Hello.")]
    err, _ = refused(tmp_path, json.dumps(log, indent=2) + "\n", "--format", "claude-code")
    assert err.startswith("odd.jsonl:1: a JSON list, not an entry: a Claude Code session log holds"), err
