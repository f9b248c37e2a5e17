"""Odd but possible input to `ctxlab import` and `ctxlab replay`, whatever the format: each is
read as its writer meant it, or refused at its file and line with exit 2, no `--out` file and
no results folder left behind, never a traceback."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.files import JSON_DEPTH
from ctxlab.workloads.importers import import_lines
from tests.workloads.importing import DATA, lines, run_cli

USER = {"role": "user", "content": "List the files."}
ANSWER = {"role": "assistant", "content": "There are none."}


def _write(tmp_path: Path, text: str | bytes, name: str = "odd.jsonl") -> Path:
    source = tmp_path / name
    if isinstance(text, bytes):
        source.write_bytes(text)
    else:
        source.write_text(text, encoding="utf-8")
    return source


def refused(tmp_path: Path, text: str | bytes, *args: str, name: str = "odd.jsonl") -> tuple[str, str]:
    """The messages `import` and `replay` refuse a file with (exit 2, nothing written), without
    the folder's path."""
    source = _write(tmp_path, text, name)
    out, results = tmp_path / "out" / "session.jsonl", tmp_path / "results"
    code, _, err = run_cli("import", str(source), "--out", str(out), *args)
    assert code == 2 and "Traceback" not in err, err
    assert not out.exists() and not list((tmp_path / "out").glob("*"))
    replay_code, _, replay_err = run_cli("replay", str(source), "--out", str(results), "--quiet", *args)
    assert replay_code == 2 and "Traceback" not in replay_err, replay_err
    assert not results.exists()
    return err.replace(str(tmp_path) + "/", ""), replay_err.replace(str(tmp_path) + "/", "")


def imported(tmp_path: Path, text: str | bytes, *args: str, name: str = "odd.jsonl") -> list[dict[str, Any]]:
    """The messages `import` writes for a file, which `replay` replays too."""
    source = _write(tmp_path, text, name)
    out = tmp_path / "out" / "session.jsonl"
    code, _, err = run_cli("import", str(source), "--out", str(out), "--quiet", *args)
    assert code == 0, err
    replay_code, _, replay_err = run_cli(
        "replay", str(source), "--out", str(tmp_path / "results"), "--quiet", "--no-plots", *args
    )
    assert replay_code == 0, replay_err
    return [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]


# ---------------------------------------------------------------------------------------------
# Reading the file


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("\n".join(lines(USER)) + '\n{"role": "assistant", "content": "x", "n": ' + "7" * 5000 + "}\n", 2),
        (json.dumps([USER, ANSWER], indent=1).replace('"There', "1" * 4400 + ', "x": "There'), 8),
    ],
    ids=["jsonl", "one-document"],
)
def test_an_integer_longer_than_python_reads_is_refused_at_its_line(
    tmp_path: Path, text: str, line: int
) -> None:
    err, replay_err = refused(tmp_path, text)
    expected = f"odd.jsonl:{line}: an integer has more digits than Python reads (over 4300)"
    assert err.startswith(expected), err
    assert expected in replay_err


def _nested(levels: int) -> str:
    """A transcript whose second line nests `levels` deep (its object the first level)."""
    inner = "[" * (levels - 1) + "]" * (levels - 1)
    return "\n".join(lines(USER)) + '\n{"role": "assistant", "content": "x", "n": ' + inner + "}\n"


def test_a_line_nested_past_the_limit_is_refused_on_every_python(tmp_path: Path) -> None:
    """Python's parser reads about 1,000 levels on 3.11 and many more from 3.12 on, so a file
    nested between the two loaded on one and not the other; past `JSON_DEPTH` (500) it is refused
    on every version, well within what each reads."""
    err, replay_err = refused(tmp_path, _nested(JSON_DEPTH + 1))
    expected = "odd.jsonl:2: the JSON is nested too deep to read (over 500 levels)"
    assert err.startswith(expected), err
    assert expected in replay_err
    assert imported(tmp_path, _nested(JSON_DEPTH))[1]["role"] == "assistant"


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (
            b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "caf\xe9"}\n',
            "(line 2, byte 71)",
        ),
        ('{"role": "user", "content": "hi"}\n'.encode("utf-16"), "it is UTF-16 text; save it as UTF-8"),
    ],
    ids=["latin-1", "utf-16"],
)
def test_a_file_that_is_not_utf8_says_where_or_what_it_is(tmp_path: Path, raw: bytes, why: str) -> None:
    """Import said only that the file is not UTF-8, where replay named the line and byte; a
    UTF-16 file (what Windows PowerShell's `>` writes) was a byte 0 to look for."""
    err, replay_err = refused(tmp_path, raw)
    assert err.startswith("odd.jsonl: cannot read the transcript: it is ") and why in err, err
    assert why in replay_err


def test_lines_ending_in_a_bare_carriage_return_are_refused_alike_by_import_and_replay(
    tmp_path: Path,
) -> None:
    """Import split such a file into lines (text mode) and wrote it; replay read it as one line
    and refused it: the same file gave two answers. Both refuse it now, saying why."""
    err, replay_err = refused(tmp_path, "\r".join(lines(USER, ANSWER)) + "\r")
    expected = "odd.jsonl:1: not JSON (Extra data at column 48); its lines end in a bare carriage return"
    assert err.startswith(expected), err
    assert expected in replay_err


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (json.dumps(USER, indent=1) + "\n" + json.dumps(ANSWER, indent=1) + "\n", 5),
        ("".join(lines(USER, ANSWER)) + "\n", 1),
    ],
    ids=["pretty-printed", "on-one-line"],
)
def test_a_second_json_value_where_one_ends_says_how_to_write_it(
    tmp_path: Path, text: str, line: int
) -> None:
    """A file of pretty-printed messages, or two on a line, got only Python's "Extra data"."""
    err, _ = refused(tmp_path, text)
    assert err.startswith(f"odd.jsonl:{line}: not JSON (Extra data at column ")
    assert "; a second JSON value starts there: write JSONL, one value a line, or one JSON value" in err


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_a_json_document_with_windows_or_old_mac_line_ends_is_read(tmp_path: Path, end: str) -> None:
    text = json.dumps([USER, ANSWER], indent=1).replace("\n", end)
    assert imported(tmp_path, "\ufeff" + text, name="chat.json") == [USER, ANSWER]


def _called(arguments: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": arguments}}
    result = {"role": "tool", "tool_call_id": "c1", "content": "nothing"}
    return [USER, {"role": "assistant", "content": None, "tool_calls": [call]}, result, ANSWER]


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ("[" * 600 + "]" * 600, "its JSON nests deeper than 500 levels, more than the presets read"),
        ('{"n": ' + "9" * 5000 + "}", "an integer has more digits than Python reads"),
    ],
    ids=["nested", "long-integer"],
)
def test_call_arguments_no_preset_reads_are_refused_at_their_line(
    tmp_path: Path, arguments: str, why: str
) -> None:
    """Every preset parses a call's arguments; ones that nest past what the parser reads from
    within a run, or hold an integer past Python's limit, made the run fail (exit 1)."""
    err, replay_err = refused(tmp_path, "\n".join(lines(*_called(arguments))) + "\n")
    assert err.startswith(f"odd.jsonl:2: tool_calls[0].function.arguments: {why}"), err
    assert f"odd.jsonl:2: tool_calls[0].function.arguments: {why}" in replay_err


def test_arguments_nested_as_deep_as_models_write_them_are_replayed(tmp_path: Path) -> None:
    arguments = json.dumps({"rows": [[{"cell": [i]} for i in range(300)]], "deep": [[[["x"]]]]})
    assert (
        imported(tmp_path, "\n".join(lines(*_called(arguments))) + "\n")[1]["tool_calls"][0]["function"][
            "arguments"
        ]
        == arguments
    )


NOT_FINITE = {"x": float("nan"), "range": [float("inf"), -float("inf")]}
"""Call input as Python's `json.dumps` writes it: `NaN`, `Infinity`, `-Infinity`, which strict
JSON has not."""


def _strict(line: str) -> Any:
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} in {line[:200]}")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_call_input_holding_nan_or_infinity_is_replayed_and_every_request_is_strict_json(
    tmp_path: Path, wire: str
) -> None:
    """A Python agent's log holds them where the model wrote such a number (json.loads reads it
    and json.dumps writes it back); the recorded Anthropic request wrote the input's NaN bare,
    which no JSON reader takes. The arguments stay the text the agent wrote."""
    arguments = json.dumps(NOT_FINITE)
    assert "NaN" in arguments and "-Infinity" in arguments
    text = "\n".join(lines(*_called(arguments))) + "\n"
    assert imported(tmp_path, text)[1]["tool_calls"][0]["function"]["arguments"] == arguments
    results = tmp_path / "results"
    code, _, err = run_cli("replay", str(tmp_path / "odd.jsonl"), "--out", str(results), "--quiet",
                           "--no-plots", "--record-requests", "--wire", wire)  # fmt: skip
    assert code == 0, err
    (recorded,) = (results / "odd" / "requests").iterdir()
    requests = [_strict(line) for line in gzip.decompress(recorded.read_bytes()).decode("utf-8").splitlines()]
    last = requests[-1]["messages"]
    if wire == "anthropic":
        (called,) = [
            b for m in last if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_use"
        ]
        assert called["input"] == {"raw": arguments}
    else:
        (called,) = [c for m in last for c in m.get("tool_calls", [])]
        assert called["function"]["arguments"] == arguments
    for written in (results / "odd").iterdir():
        if written.suffix in {".json", ".csv"}:
            assert "NaN" not in written.read_text(encoding="utf-8"), written.name


def test_a_tool_schema_holding_nan_or_infinity_is_refused_at_its_line(tmp_path: Path) -> None:
    """A declared tool whose schema holds NaN (a Python agent's `default: float("nan")`, written by
    `json.dumps`) went into every recorded request as a bare NaN, which no JSON reader takes, and
    no API accepts: the lab cannot send that request, so the file is refused where it declares it.
    """
    tool = {"name": "weather", "description": "The weather.", "input_schema": NOT_FINITE_SCHEMA}
    asked = {"role": "user", "content": "Weather in Paris?"}
    request = {"model": "claude-sonnet-4", "max_tokens": 1024, "tools": [tool], "messages": [asked]}
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Sunny."}],
    }
    text = "\n".join(lines(request, response)) + "\n"
    assert "Infinity" in text
    errors = refused(tmp_path, text)
    for err in errors:
        assert "odd.jsonl:1: tool 'weather': its parameters hold NaN or Infinity" in err, err


def test_a_tools_file_holding_nan_or_infinity_is_refused(tmp_path: Path) -> None:
    """`--tools FILE` is read by Python's `json`, which takes `Infinity`; the schema reached every
    recorded request as written."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "ls", "parameters": NOT_FINITE_SCHEMA}]), encoding="utf-8")
    source = _write(tmp_path, "\n".join(lines(USER, ANSWER)) + "\n")
    code, _, err = run_cli("replay", str(source), "--tools", str(tools), "--out", str(tmp_path / "results"))
    assert code == 2 and "Traceback" not in err, err
    assert "item 0: tool 'ls': its parameters hold NaN or Infinity" in err
    assert not (tmp_path / "results").exists()


NOT_FINITE_SCHEMA = {"type": "object", "properties": {"n": {"type": "number", "maximum": float("inf")}}}


def test_import_refuses_a_message_replay_would_refuse_at_its_entry(tmp_path: Path) -> None:
    """An OpenHands call whose arguments escape a lone surrogate: import wrote it and exited 0,
    and only replay refused the file."""
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"a": "\\udc00"}'}}
    response = {"id": "r1", "choices": [{"message": {"content": "", "tool_calls": [call]}}]}
    metadata = {"function_name": "ls", "tool_call_id": "c1", "model_response": response}
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "List the files."}},
        {"id": 1, "source": "agent", "action": "run", "args": {}, "tool_call_metadata": metadata},
        {"id": 2, "source": "agent", "observation": "run", "content": "", "tool_call_metadata": metadata},
    ]
    err, replay_err = refused(tmp_path, json.dumps(events, indent=1), name="events.json")
    expected = "events.json:1: message 1: tool_calls[0].function.arguments: its JSON escapes a lone surrogate"
    assert err.startswith(expected), err
    assert expected in replay_err


# ---------------------------------------------------------------------------------------------
# OpenHands


def _sdk_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads((DATA / "openhands/sdk-events-context.json").read_text())
    return events


@pytest.mark.parametrize("kind", ["Condensation", "CondensationRequest"])
def test_an_sdk_event_list_opening_with_a_kind_not_named_event_is_recognised(kind: str) -> None:
    """The SDK names three kinds without `Event`; one among the first five events made a bare
    event list unrecognised (and refused with --format openhands)."""
    events = _sdk_events()
    plain = import_lines([json.dumps(events)], "events.json")
    events.insert(1, {"id": "c0", "source": "environment", "kind": kind, "forgotten_event_ids": []})
    imported = import_lines([json.dumps(events)], "events.json")
    assert imported.format == "openhands" and imported.messages == plain.messages
    assert f"skipped 1 × {kind} (not replayed)" in imported.warnings


def test_an_sdk_event_list_with_a_rejected_call_is_recognised() -> None:
    events = _sdk_events()
    events[3] = {
        "id": "e3",
        "source": "user",
        "kind": "UserRejectObservation",
        "tool_name": "terminal",
        "tool_call_id": "toolu_01",
        "action_id": "e2",
        "rejection_reason": "Not that command.",
    }
    imported = import_lines([json.dumps(events)], "events.json")
    assert imported.format == "openhands"
    rejected = "Action rejected: Not that command."  # the SDK's words
    assert {"role": "tool", "tool_call_id": "toolu_01", "content": rejected, "is_error": True} in (
        imported.messages
    )


# ---------------------------------------------------------------------------------------------
# A JSONL file of several sessions


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("swe-agent/function_calling_simple.traj", "further trajectory"),
        ("mini-swe-agent/v2-toolcall.traj.json", "further trajectory"),
        ("langgraph/checkpoint.json", "further thread"),
    ],
)
def test_a_jsonl_file_of_several_sessions_replays_its_first(name: str, kind: str) -> None:
    """Each line of such a file is a session of its own; they were run together into one
    conversation, the second's system prompt becoming user text and its call ids repeating."""
    session = json.loads((DATA / name).read_text(encoding="utf-8"))
    alone = import_lines(lines(session), "sessions.jsonl")
    imported = import_lines(lines(session, session, session), "sessions.jsonl")
    assert imported.messages == alone.messages
    assert f"skipped 2 × {kind} (not replayed)" in imported.warnings


def test_an_openhands_record_whose_history_lacks_the_users_message_keeps_its_instruction() -> None:
    """The instruction replaced the text of the history's first user message; a history with
    none (trimmed, or written without it) lost the task, the replay opening with the agent."""
    record = json.loads((DATA / "openhands/multi-swe-bench-output.jsonl").read_text().split("\n")[0])
    whole = import_lines(lines(record), "output.jsonl").messages
    del record["history"][1]  # the user's message
    messages = import_lines(lines(record), "output.jsonl").messages
    assert messages[1] == {"role": "user", "content": record["instruction"]}
    assert messages == whole


# ---------------------------------------------------------------------------------------------
# OpenAI Responses request logs


def _request(given: object, **fields: Any) -> dict[str, Any]:
    return {"model": "gpt-5", "instructions": "Be brief.", "input": given, **fields}


def test_a_responses_input_that_is_one_object_says_what_input_must_be(tmp_path: Path) -> None:
    """An `input` written as one item object was read as the list of its keys, refused as "an
    item must be an object, got str"."""
    err, _ = refused(tmp_path, json.dumps(_request({"role": "user", "content": "hi"})))
    assert err.startswith("odd.jsonl:1: 'input' must be a string or a list of items, got dict"), err


@pytest.mark.parametrize(
    ("first", "second", "line"),
    [("r2", "r1", 1), (None, "r2", 2)],
    ids=["two-requests-continue-each-other", "a-request-continues-its-own-response"],
)
def test_a_chain_of_responses_that_loops_says_so(
    tmp_path: Path, first: str | None, second: str, line: int
) -> None:
    """It was refused as naming "no logged response", though the log holds that response."""
    call = {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"}
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    requests = [
        {"request": _request("hi", previous_response_id=first), "response": {"id": "r1", "output": [call]}},
        {
            "request": _request(
                [{"type": "function_call_output", "call_id": "c1", "output": "x"}],
                previous_response_id=second,
            ),
            "response": {"id": "r2", "output": [answer]},
        },
    ]
    err, _ = refused(tmp_path, "\n".join(lines(*requests)) + "\n")
    assert err.startswith(f"odd.jsonl:{line}: previous_response_id "), err
    assert "leads back to a request already in the chain, so the chain loops" in err


def test_a_transcript_of_results_alone_is_not_said_to_hold_a_system_prompt(tmp_path: Path) -> None:
    result = {"role": "tool", "tool_call_id": "c1", "content": "nothing"}
    source = _write(tmp_path, "\n".join(lines({"role": "system", "content": "Act."}, result)) + "\n")
    code, _, err = run_cli("replay", str(source), "--out", str(tmp_path / "results"), "--quiet")
    assert code == 2
    assert "odd.jsonl:1: the transcript has only tool results that answer no call; there is nothing" in err


def _classic_call(event_id: int, response: str, *call_ids: str) -> list[dict[str, Any]]:
    """A classic OpenHands `run` action for each call of one model response."""
    calls = [
        {
            "id": c,
            "type": "function",
            "function": {"name": "execute_bash", "arguments": '{"command": "make"}'},
        }
        for c in call_ids
    ]
    model = {"id": response, "choices": [{"message": {"content": "Running.", "tool_calls": calls}}]}
    return [
        {"id": event_id + k, "source": "agent", "action": "run", "args": {"command": "make"},
         "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": c, "model_response": model}}
        for k, c in enumerate(call_ids)
    ]  # fmt: skip


def _classic_output(event_id: int, call_id: str) -> dict[str, Any]:
    metadata = {"function_name": "execute_bash", "tool_call_id": call_id, "model_response": {}}
    return {"id": event_id, "source": "agent", "observation": "run", "content": f"ran {call_id}",
            "tool_call_metadata": metadata}  # fmt: skip


def _said(event_id: int, source: str, text: str) -> dict[str, Any]:
    return {"id": event_id, "source": source, "action": "message", "args": {"content": text}}


def _calls(*call_ids: str) -> dict[str, Any]:
    arguments = '{"command": "make"}'
    listed = [
        {"id": c, "type": "function", "function": {"name": "execute_bash", "arguments": arguments}}
        for c in call_ids
    ]
    return {"role": "assistant", "content": "Running.", "tool_calls": listed}


def test_an_openhands_message_sent_while_calls_await_their_results_goes_before_them(tmp_path: Path) -> None:
    """A user's message typed while the agent's commands ran is recorded between the calls and
    their observations; it was replayed there, between a call and its result (the protocol
    broken in the imported file, and a request the session never made in the replay). OpenHands
    holds the calls' message until all its results are in, and sends what came meanwhile first."""
    events = [
        _said(0, "user", "Build it."),
        *_classic_call(1, "r1", "call_1", "call_2"),
        _said(3, "user", "Then run the tests."),
        _classic_output(4, "call_2"),
        _classic_output(5, "call_1"),
        _said(6, "agent", "Built; testing next."),
    ]
    source = tmp_path / "in"
    source.mkdir()
    assert imported(source, json.dumps(events), name="events.json") == [
        {"role": "user", "content": "Build it."},
        {"role": "user", "content": "Then run the tests."},
        _calls("call_1", "call_2"),
        {"role": "tool", "tool_call_id": "call_1", "content": "ran call_1"},
        {"role": "tool", "tool_call_id": "call_2", "content": "ran call_2"},
        {"role": "assistant", "content": "Built; testing next."},
    ]
    # A call that never gets its observation (an interrupted command) is not waited for.
    cut = [events[0], *_classic_call(9, "r0", "call_0"), *events[1:]]
    messages = import_lines([json.dumps(cut)], "events.json").messages
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        *["user", "assistant", "tool", "tool", "assistant"],
    ]
    assert messages[1]["tool_calls"][0]["id"] == "call_0"


def test_an_openhands_sdk_message_sent_while_a_call_awaits_its_result_goes_before_it(tmp_path: Path) -> None:
    """The SDK sends its events in order, a user's message between a call and its result, which
    no provider takes; the replay puts it before the call, as the classic agent does."""
    events = _sdk_events()
    (at,) = [k for k, e in enumerate(events) if e.get("kind") == "ObservationEvent"]
    typed = {"role": "user", "content": [{"type": "text", "text": "Also list hidden files."}]}
    events.insert(at, {"id": "u2", "source": "user", "kind": "MessageEvent", "llm_message": typed})
    plain = import_lines([json.dumps(_sdk_events())], "events.json").messages
    (call_at,) = [k for k, m in enumerate(plain) if m.get("tool_calls")]
    expected = [*plain[:call_at], {"role": "user", "content": "Also list hidden files."}, *plain[call_at:]]
    assert imported(tmp_path, json.dumps(events), name="events.json") == expected
    imported_ = import_lines([json.dumps(events)], "events.json")
    assert any("replayed before the calls' message" in w for w in imported_.warnings)


def _request_log(levels: int) -> str:
    """An Anthropic request log of two requests, the second continuing the first, whose call's
    input nests so that the first line is `levels` deep: the first request marks its call for the
    cache at the deepest level, where the second does not."""

    def nest(k: int, mark: bool) -> object:
        value: object = {"cache_control": {"type": "ephemeral"}} if mark else {}
        for _ in range(k):
            value = {"x": value}
        return value

    def request(k: int, mark: bool, answered: bool) -> dict[str, Any]:
        call = {"type": "tool_use", "id": "t1", "name": "f", "input": nest(k, mark)}
        messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [call]}]
        if answered:
            messages.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
            )
        return {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": messages}

    from ctxlab.workloads.files import json_depth

    k = levels - json_depth(request(0, True, False))  # each level of nesting adds one
    first, second = request(k, True, False), request(k, False, True)
    assert json_depth(first) == levels and json_depth(second) == levels - 1
    return json.dumps(first) + "\n" + json.dumps(second) + "\n"


def test_a_request_log_nested_to_the_limit_is_read_and_its_marks_dropped_at_any_depth(tmp_path: Path) -> None:
    """A request log's requests are compared without their cache marks, at any depth: the walk
    that dropped them gave up (RecursionError, a traceback) on a line nested a few hundred deep,
    well within `JSON_DEPTH`. The second request continues the first although only the first
    marks the call's input, so the conversation is the second's, its result answered."""
    messages = imported(tmp_path, _request_log(JSON_DEPTH), "--format", "anthropic-messages")
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            TypeError("unhashable type: 'list'"),
            "a value is a list where codex writes text (a type or a role)",
        ),
        (
            AttributeError("'str' object has no attribute 'get'"),
            "a value is text where codex writes an object",
        ),
        (
            TypeError("'NoneType' object is not subscriptable"),
            "a value is null where codex writes an object or",
        ),
        (TypeError("'bool' object is not iterable"), "a value is true or false where codex writes a list"),
        (
            TypeError("Value after * must be an iterable, not int"),
            "a value is a number where codex writes a list",
        ),
        (
            TypeError("string indices must be integers, not 'str'"),
            "a value is text where codex writes an object",
        ),
        (
            TypeError("argument of type 'int' is not iterable"),
            "a value is a number where codex writes an object or a list",
        ),
        (KeyError("payload"), "an object has no 'payload', which codex writes"),
        (IndexError("list index out of range"), "a list is shorter than codex writes it"),
    ],
)
def test_a_shape_error_is_told_in_the_json_s_terms(error: Exception, said: str) -> None:
    """What an importer met is said as the JSON has it (a list where text goes), not in Python's
    words (`TypeError: unhashable type`), which name nothing in the file."""
    from ctxlab.workloads.importers.guard import what_was_off

    assert what_was_off(error, "codex").startswith(said)


def test_an_entry_of_another_shape_is_refused_in_the_json_s_terms(tmp_path: Path) -> None:
    item = {"type": ["message"], "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    err, replay_err = refused(tmp_path, json.dumps({"input": [item]}) + "\n", "--format", "openai-responses")
    expected = "odd.jsonl:1: an entry is not shaped as openai-responses writes it: a value is a list where"
    assert err.startswith(expected) and "Error" not in err, err
    assert expected in replay_err


# ---------------------------------------------------------------------------------------------
# A field of a kind its format never writes is refused, never read as empty and lost


def _anthropic_log(user_content: object, system: object = "Be brief.", result: object = "hello") -> str:
    request = {
        "model": "claude-sonnet-4-20250514",
        "max_tokens": 100,
        "system": system,
        "messages": [
            {"role": "user", "content": user_content},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}]},
        ],
    }
    response = {
        "id": "m2",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Hi."}],
    }
    return json.dumps({"request": request, "response": response}) + "\n"


def _claude_code(user_content: object) -> str:
    head = {"sessionId": "s1", "version": "1.0.98", "cwd": "/w", "userType": "external", "isSidechain": False}
    lines = [
        {**head, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2025-09-01T10:00:00.000Z",
         "message": {"role": "user", "content": user_content}},
        {**head, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "timestamp": "2025-09-01T10:00:01.000Z",
         "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                     "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}},
    ]  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines)


def _responses_log(instructions: object, output: object = "[]") -> str:
    call = {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{}"}
    request = {
        "model": "gpt-4.1",
        "instructions": instructions,
        "input": [
            {"role": "user", "content": "Find a flight."},
            call,
            {"type": "function_call_output", "call_id": "c1", "output": output},
        ],
    }
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "None."}]}
    return json.dumps(
        {"request": request, "response": {"id": "r1", "object": "response", "output": [answer]}}
    )


def _gemini(text: object) -> str:
    history = [
        {"role": "user", "parts": [{"text": "Hello."}]},
        {"role": "model", "parts": [{"text": "Hi."}]},
        {"role": "user", "parts": [{"text": text}]},
        {"role": "model", "parts": [{"text": "Done."}]},
    ]
    return json.dumps({"history": history}, indent=1)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (_anthropic_log(12345), "odd.jsonl:1: an entry is not shaped as anthropic-messages writes it: "
         "a value is a number where anthropic-messages writes a list"),
        (_anthropic_log({"type": "text", "text": "Hi"}), "a value is an object where"),
        (_anthropic_log("Hi", system=5), "a value is a number where anthropic-messages writes text"),
        (_anthropic_log("Hi", system=["Be brief."]), "a value is text where anthropic-messages "
         "writes an object"),
        (_anthropic_log("Hi", result={"text": "hello"}), "a value is an object where "
         "anthropic-messages writes text"),
        (_claude_code(12345), "odd.jsonl:1: an entry is not shaped as claude-code writes it: "
         "a value is a number where claude-code writes a list"),
        (_responses_log(7), "odd.jsonl:1: 'instructions' is a number, not text or a list of messages"),
        (_responses_log("Help.", output=42), "a value is a number where openai-responses writes text"),
        (_gemini(12345), "odd.jsonl:19: a part's text is a number, not text"),
    ],
)  # fmt: skip
def test_a_text_of_another_kind_is_refused_at_its_line_not_read_as_empty(
    tmp_path: Path, text: str, said: str
) -> None:
    """A user's prompt written as a number, a system prompt as an object, a result as an object:
    each was read as '' and its message dropped or emptied without a word."""
    err, replay_err = refused(tmp_path, text)
    assert said in err and said in replay_err, err


def test_responses_instructions_given_as_messages_are_the_system_prompt(tmp_path: Path) -> None:
    """The Responses API takes `instructions` as text or as input messages; the messages were
    dropped, and the replay had no system prompt."""
    developer = {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "Be brief."}],
    }
    messages = imported(tmp_path, _responses_log([developer, {"role": "system", "content": "Cite sources."}]))
    assert messages[0] == {"role": "system", "content": "Be brief.\n\nCite sources."}


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            {"role": "user", "parts": "Hello."},
            "odd.jsonl:19: history[2]: its parts are text, not a list of parts",
        ),
        (
            {"role": "function", "parts": [{"text": "x"}]},
            "odd.jsonl:19: history[2]: its role is 'function', not",
        ),
    ],
)
def test_a_gemini_checkpoint_with_one_content_of_another_shape_names_it(
    tmp_path: Path, content: dict[str, Any], said: str
) -> None:
    """The file was taken for a SWE-agent trajectory (a `history` of role messages) and refused
    for a valid content's role ('model'); or, named, refused as no checkpoint at all."""
    history = json.loads(_gemini("x"))["history"]
    history[2] = content
    err, replay_err = refused(tmp_path, json.dumps({"history": history}, indent=1))
    assert said in err and said in replay_err, err


def test_a_file_of_streamed_chunks_says_to_log_the_assembled_response(tmp_path: Path) -> None:
    chunk = {"id": "x", "object": "chat.completion.chunk", "choices": [{"delta": {"content": "hi"}}]}
    err, replay_err = refused(tmp_path, json.dumps(chunk) + "\n")
    said = "odd.jsonl:1: a streamed response's chunk (object chat.completion.chunk) is no conversation"
    assert said in err and said in replay_err, err


def test_anthropic_tools_not_listed_are_refused_and_one_without_a_schema_is_counted_as_such(
    tmp_path: Path,
) -> None:
    """Tools given as an object were read key by key, each counted as a 'server tool'; so was a
    tool with no input_schema, which no server tool is."""
    log = json.loads(_anthropic_log("Hi"))
    log["request"]["tools"] = {"read": {"name": "read", "input_schema": {"type": "object"}}}
    err, _ = refused(tmp_path, json.dumps(log) + "\n")
    assert "a value is an object where anthropic-messages writes a list" in err, err
    log["request"]["tools"] = [{"name": "read"}, {"type": "web_search_20250305", "name": "web_search"}]
    source = _write(tmp_path, json.dumps(log) + "\n", "log.jsonl")
    code, _, err = run_cli("import", str(source), "--out", str(tmp_path / "o.jsonl"))
    assert code == 0 and "skipped 1 × tool without an input_schema" in err, err
    assert "skipped 1 × server tool" in err


def _mutated(sample: str, path: tuple[str | int, ...], value: object) -> str:
    """A sample of `tests/data` with the value at `path` replaced."""
    data = json.loads((DATA / sample).read_text(encoding="utf-8"))
    holder = data
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return json.dumps(data, indent=1)


_CALLS = (5, "tool_call_metadata", "model_response", "choices", 0, "message", "tool_calls")


@pytest.mark.parametrize(
    ("sample", "path", "value", "said"),
    [
        ("openhands/sdk-events-context.json", (2, "thought"), {"type": "text", "text": "Run it."},
         "a value is an object where openhands writes text"),
        ("openhands/sdk-events-context.json", (3, "observation", "content"), {"type": "text", "text": "ok"},
         "a value is an object where openhands writes text"),
        ("openhands/sdk-events-context.json", (3, "observation", "output"), 12345,
         "a value is a number where openhands writes text"),
        ("openhands/sdk-events-context.json", (1, "extended_content"), "rules",
         "a value is text where openhands writes a list"),
        ("openhands/sdk-events-context.json", (2, "thinking_blocks"), {"thinking": "x"},
         "a value is an object where openhands writes a list"),
        ("openhands/basic_interactions.json", (*_CALLS, 0, "function"), "finish({})",
         "a value is text where openhands writes an object"),
        ("openhands/basic_interactions.json", _CALLS, {"id": "x"},
         "a value is an object where openhands writes a list"),
    ],
)  # fmt: skip
def test_an_openhands_field_of_another_kind_is_refused_not_blanked(
    tmp_path: Path, sample: str, path: tuple[str | int, ...], value: object, said: str
) -> None:
    """A thought, an observation, an event's extended content or a call's function of another
    kind became '' or vanished (a string's characters read as parts, a call named 'None')."""
    err, replay_err = refused(tmp_path, _mutated(sample, path, value))
    assert said in err and said in replay_err, err


def test_a_sdk_system_prompt_written_as_text_is_kept() -> None:
    """The SDK writes its system prompt as a text part; a plain string was read as ''."""
    text = _mutated("openhands/sdk-events-context.json", (0, "system_prompt"), "You are an agent.")
    first = next(iter(import_lines(text.split("\n"), "events.json").messages))
    assert first["role"] == "system" and str(first["content"]).startswith("You are an agent.")


def _jsonl_mutated(sample: str, key: str, value: object) -> str:
    """The first line of a JSONL sample of `tests/data` with its `key` replaced."""
    first = json.loads((DATA / sample).read_text(encoding="utf-8").split("\n")[0])
    return json.dumps({**first, key: value}) + "\n"


_AI_CONTENT = ("channel_values", "messages", 1, "kwargs", "content")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (_mutated("langgraph/checkpoint.json", _AI_CONTENT, 12345),
         "a value is a number where langgraph writes text"),
        (_mutated("langgraph/checkpoint.json", _AI_CONTENT, {"type": "text", "text": "x"}),
         "a value is an object where langgraph writes text"),
        (_jsonl_mutated("bedrock-converse/converse_request.jsonl", "system", "Be brief."),
         "a value is text where bedrock-converse writes a list"),
        (_mutated("pydantic-ai/weather-two-runs.json", (2, "parts", 0, "outcome"), 1),
         "a tool return's outcome is 1; expected one of success, failed, denied, interrupted, retried"),
    ],
)  # fmt: skip
def test_a_field_of_another_kind_is_refused_in_other_formats_too(
    tmp_path: Path, text: str, said: str
) -> None:
    """An AI message's content, a Converse request's system prompt, a tool return's outcome of a
    kind never written: each was read as empty, dropped or taken for success."""
    err, replay_err = refused(tmp_path, text)
    assert said in err and said in replay_err, err


def test_a_responses_call_output_of_one_content_part_is_its_text(tmp_path: Path) -> None:
    """An output given as one part (an object, not a list of one) was read as ''."""
    messages = imported(
        tmp_path, _responses_log("Help.", output={"type": "input_text", "text": "Two flights."})
    )
    assert {"role": "tool", "tool_call_id": "c1", "content": "Two flights."} in messages


def test_a_langgraph_call_without_a_name_is_refused_not_named_none(tmp_path: Path) -> None:
    calls = ("channel_values", "messages", 1, "kwargs", "tool_calls")
    text = _mutated("langgraph/checkpoint.json", calls, [{"id": "c1", "type": "mystery", "args": {}}])
    err, _ = refused(tmp_path, text)
    assert "an object has no 'name', which langgraph writes" in err, err


def test_opencode_attachments_not_listed_are_refused_and_one_by_url_is_counted(tmp_path: Path) -> None:
    """Attachments given as an object were ignored, and a non-image one given by URL dropped
    without a word."""
    where = ("messages", 3, "parts", 1, "state", "attachments")
    image = {"type": "file", "mime": "image/png", "url": "data:image/png;base64,AAAA"}
    err, _ = refused(tmp_path, _mutated("opencode/session-export.json", where, image))
    assert "a value is an object where opencode writes a list" in err, err
    text = {"type": "file", "mime": "text/plain", "url": "https://example.com/notes.txt"}
    source = _write(tmp_path, _mutated("opencode/session-export.json", where, [text]), "export.json")
    code, _, err = run_cli("import", str(source), "--out", str(tmp_path / "o.jsonl"))
    assert code == 0 and "skipped 1 × tool attachment given by URL, not data" in err, err


def test_ai_sdk_ui_messages_without_ids_are_not_taken_for_a_gemini_checkpoint() -> None:
    """Their keys are a Gemini content's (role and parts); their parts are typed, Gemini's not."""
    ui = [
        {"role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "parts": [{"type": "text", "text": "Sunny."}]},
    ]
    assert import_lines(json.dumps(ui, indent=1).split("\n"), "m.json").format == "ai-sdk"


def test_a_langgraph_call_with_a_null_or_empty_name_is_refused(tmp_path: Path) -> None:
    calls = ("channel_values", "messages", 1, "kwargs", "tool_calls")
    for name in (None, ""):
        text = _mutated("langgraph/checkpoint.json", calls, [{"id": "c1", "name": name, "args": {}}])
        err, _ = refused(tmp_path, text)
        assert "an object has no 'name', which langgraph writes" in err, err
