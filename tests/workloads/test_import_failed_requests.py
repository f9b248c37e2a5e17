"""Failed calls in request logs (OpenAI Chat Completions, Anthropic Messages, OpenAI Responses):
a request answered by an error, in each shape providers and loggers write one, is counted as a
failed request and its retry replayed as the conversation; an error that answers no request is
refused at its line. Everything goes through `ctxlab import` and `ctxlab replay`."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import DETECT_ENTRIES
from tests.workloads.importing import lines, run_cli

SYSTEM = "Be brief."
RATE_LIMITED = {
    "error": {
        "message": "Rate limit reached",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
"""The OpenAI API's error body."""
OVERLOADED = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
    "request_id": "req_1",
}
"""The Anthropic API's error body."""
FAILED_RESPONSE = {
    "id": "resp_failed",
    "object": "response",
    "status": "failed",
    "error": {"code": "server_error", "message": "The server had an error."},
    "output": [],
}
"""An OpenAI Responses response that failed."""


def _turns(upto: int) -> list[dict[str, str]]:
    """The conversation's messages before turn `upto`'s answer: questions and answers, then its
    question."""
    said = [m for k in range(1, upto) for m in (_asked(k), {"role": "assistant", "content": f"Answer {k}."})]
    return [*said, _asked(upto)]


def _asked(turn: int) -> dict[str, str]:
    return {"role": "user", "content": f"Question {turn}."}


def _chat_request(turn: int) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "system", "content": SYSTEM}, *_turns(turn)]}


def _chat_answer(turn: int) -> dict[str, Any]:
    message = {"role": "assistant", "content": f"Answer {turn}."}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {"id": f"chatcmpl-{turn}", "object": "chat.completion", "model": "gpt-4o", "choices": [choice]}


def _messages_request(turn: int) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": SYSTEM, "messages": _turns(turn)}


def _messages_answer(turn: int) -> dict[str, Any]:
    content = [{"type": "text", "text": f"Answer {turn}."}]
    return {
        "id": f"msg_{turn}",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": "end_turn",
    }


def _responses_request(turn: int) -> dict[str, Any]:
    return {"model": "gpt-5", "instructions": SYSTEM, "input": _turns(turn)}


def _responses_answer(turn: int) -> dict[str, Any]:
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": f"Answer {turn}."}],
    }
    return {
        "id": f"resp_{turn}",
        "object": "response",
        "status": "completed",
        "error": None,
        "output": [said],
    }


@dataclass(frozen=True, kw_only=True)
class Log:
    """A request-log format: its name, its requests and answers by turn, the error its provider
    answers a failed call with and that error's name, and what a log of failed calls lacks."""

    format: str
    request: Callable[[int], dict[str, Any]]
    answer: Callable[[int], dict[str, Any]]
    error: dict[str, Any]
    name: str
    unreplayable: str

    def exchange(self, turn: int, response: Any, shape: str) -> list[Any]:
        """Turn `turn`'s request and `response`: wrapped together, wrapped with the response as
        an `error`, or the response as the entry after the request."""
        request = self.request(turn)
        if shape == "wrapped":
            return [{"request": request, "response": response}]
        if shape == "wrapped error":
            return [{"request": request, "error": response["error"]}]
        return [request, response]


CHAT = Log(
    format="openai-chat",
    request=_chat_request,
    answer=_chat_answer,
    error=RATE_LIMITED,
    name="rate_limit_exceeded",
    unreplayable="Chat Completions request",
)
MESSAGES = Log(
    format="anthropic-messages",
    request=_messages_request,
    answer=_messages_answer,
    error=OVERLOADED,
    name="overloaded_error",
    unreplayable="Messages request with a response",
)
RESPONSES = Log(
    format="openai-responses",
    request=_responses_request,
    answer=_responses_answer,
    error=RATE_LIMITED,
    name="rate_limit_exceeded",
    unreplayable="Responses request",
)
LOGS = [CHAT, MESSAGES, RESPONSES]


def _log(log: Log, *, failed_at: int, answered: int, shape: str = "after", error: Any = None) -> list[Any]:
    """A log of turns 1..`answered`, each answered, turn `failed_at` first asked once and failed
    with `error` (the format's own error when None); each call logged in `shape`."""
    entries: list[Any] = []
    for turn in range(1, answered + 1):
        if turn == failed_at:
            entries += log.exchange(turn, log.error if error is None else error, shape)
        entries += log.exchange(turn, log.answer(turn), "wrapped" if shape != "after" else "after")
    if failed_at > answered:
        entries += log.exchange(failed_at, log.error if error is None else error, shape)
    return entries


def _conversation(answered: int) -> list[dict[str, str]]:
    """The messages replayed for a conversation of turns 1..`answered`."""
    said = [
        m
        for k in range(1, answered + 1)
        for m in (_asked(k), {"role": "assistant", "content": f"Answer {k}."})
    ]
    return [{"role": "system", "content": SYSTEM}, *said]


def _import(tmp_path: Path, entries: list[Any], *args: str) -> tuple[int, str, list[str], list[Any]]:
    """`ctxlab import` of a log: the exit code, stdout, the warnings on stderr and the messages
    written."""
    source, out = tmp_path / "log.jsonl", tmp_path / "out" / "session.jsonl"
    source.write_text("\n".join(lines(*entries)) + "\n", encoding="utf-8")
    code, said, err = run_cli("import", str(source), "--out", str(out), *args)
    warned = [line.removeprefix(f"{source}: warning: ") for line in err.splitlines()]
    written = (
        [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    )
    return code, said.replace(str(tmp_path) + "/", ""), warned, written


def _counted(*kinds: str) -> list[str]:
    return [f"skipped 1 × {kind} (not replayed)" for kind in kinds]


# ---------------------------------------------------------------------------------------------
# A failed request, and its retry


def test_the_chat_log_that_was_refused_imports_with_its_failed_request_counted(tmp_path: Path) -> None:
    """The log was "not recognised" at line 1, and, forced, refused at line 4 as "not an OpenAI
    Chat Completions request"."""
    entries = [
        CHAT.request(1),
        CHAT.answer(1),
        CHAT.request(2),
        RATE_LIMITED,
        CHAT.request(2),
        CHAT.answer(2),
    ]
    for forced in ((), ("--format", "openai-chat")):
        code, said, warned, written = _import(tmp_path, entries, *forced)
        assert (code, said) == (0, "out/session.jsonl: 5 messages from log.jsonl (openai-chat)\n"), warned
        assert written == _conversation(2)
        assert warned == _counted("earlier request", "failed request (rate_limit_exceeded)")


@pytest.mark.parametrize("log", LOGS, ids=lambda log: log.format)
@pytest.mark.parametrize("shape", ["after", "wrapped", "wrapped error"])
def test_a_failed_request_is_counted_as_one_and_its_retry_is_the_conversation(
    tmp_path: Path, log: Log, shape: str
) -> None:
    code, said, warned, written = _import(tmp_path, _log(log, failed_at=2, answered=3, shape=shape))
    assert code == 0 and f"({log.format})" in said, warned
    assert written == _conversation(3)
    assert warned == ["skipped 2 × earlier request (not replayed)", *_counted(f"failed request ({log.name})")]


@pytest.mark.parametrize(
    ("log", "error", "name"),
    [
        (RESPONSES, FAILED_RESPONSE, "server_error"),
        (CHAT, OVERLOADED, "overloaded_error"),
        (MESSAGES, RATE_LIMITED, "rate_limit_exceeded"),
        (
            CHAT,
            {"error": {"message": "The server had an error.", "type": "server_error", "code": None}},
            "server_error",
        ),
        (MESSAGES, {"error": {"message": "Connection reset by peer"}}, "untyped error"),
        (RESPONSES, {"error": OVERLOADED}, "overloaded_error"),
    ],
    ids=["failed-response", "anthropic-body", "openai-body", "null-code", "no-type", "nested-body"],
)
@pytest.mark.parametrize("shape", ["after", "wrapped"])
def test_every_error_shape_names_the_failed_request(
    tmp_path: Path, log: Log, error: dict[str, Any], name: str, shape: str
) -> None:
    """A Responses response that failed, either provider's error body in either log (a proxy in
    front of the other provider), an error naming no code, or none at all, or nested whole."""
    code, _, warned, written = _import(tmp_path, _log(log, failed_at=2, answered=2, shape=shape, error=error))
    assert code == 0, warned
    assert written == _conversation(2)
    assert warned == _counted("earlier request", f"failed request ({name})")


def test_an_anthropic_logs_failed_request_is_not_a_side_request(tmp_path: Path) -> None:
    """A wrapped error response was counted as a request outside the conversation, with a note
    naming the line taken as if a side request had been left out."""
    entries = [
        {"request": MESSAGES.request(1), "response": MESSAGES.answer(1)},
        {"request": MESSAGES.request(2), "response": OVERLOADED},
        {"request": MESSAGES.request(2), "response": MESSAGES.answer(2)},
    ]
    code, _, warned, written = _import(tmp_path, entries)
    assert code == 0 and written == _conversation(2)
    assert warned == _counted("earlier request", "failed request (overloaded_error)")


def test_a_responses_retry_continuing_by_previous_response_id_is_the_conversation(tmp_path: Path) -> None:
    later = {"model": "gpt-5", "instructions": SYSTEM, "previous_response_id": "resp_1", "input": [_asked(2)]}
    entries = [RESPONSES.request(1), RESPONSES.answer(1), later, FAILED_RESPONSE, later, RESPONSES.answer(2)]
    code, _, warned, written = _import(tmp_path, entries)
    assert code == 0 and written == _conversation(2)
    assert warned == [
        *_counted("failed request (server_error)"),
        "the last request continues 1 earlier request(s) by previous_response_id",
    ]


def test_a_request_continuing_a_failed_response_is_told_so_at_its_line(tmp_path: Path) -> None:
    """It named no logged response, the message said, as if the log had lost a line."""
    later = {"model": "gpt-5", "instructions": SYSTEM, "previous_response_id": "resp_1", "input": [_asked(2)]}
    after_failure = {**later, "previous_response_id": "resp_failed"}
    entries = [
        RESPONSES.request(1),
        RESPONSES.answer(1),
        later,
        FAILED_RESPONSE,
        after_failure,
        RESPONSES.answer(2),
    ]
    code, said, err = run_cli("import", str(_written(tmp_path, entries)), "--out", str(tmp_path / "o.jsonl"))
    assert code == 2 and said == "" and not (tmp_path / "o.jsonl").exists()
    assert "log.jsonl:5: previous_response_id 'resp_failed' names a response whose call failed" in err


def _written(tmp_path: Path, entries: list[Any]) -> Path:
    source = tmp_path / "log.jsonl"
    source.write_text("\n".join(lines(*entries)) + "\n", encoding="utf-8")
    return source


# ---------------------------------------------------------------------------------------------
# A failed last request, and a log of failed requests only


@pytest.mark.parametrize("log", LOGS, ids=lambda log: log.format)
@pytest.mark.parametrize("shape", ["after", "wrapped"])
def test_a_failed_last_request_leaves_the_conversation_as_last_answered(
    tmp_path: Path, log: Log, shape: str
) -> None:
    code, _, warned, written = _import(tmp_path, _log(log, failed_at=3, answered=2, shape=shape))
    assert code == 0 and written == _conversation(2)
    assert warned == _counted("earlier request", f"failed request ({log.name})")


@pytest.mark.parametrize("log", LOGS, ids=lambda log: log.format)
def test_a_log_of_failed_requests_only_is_refused_at_its_last_line(tmp_path: Path, log: Log) -> None:
    code, _, warned, written = _import(tmp_path, _log(log, failed_at=1, answered=0))
    assert code == 2 and not written
    assert warned == [
        f"{tmp_path / 'log.jsonl'}:2: the log holds no {log.unreplayable} to replay "
        f"(1 × failed request ({log.name}))"
    ]


# ---------------------------------------------------------------------------------------------
# An error answering no request


def _unawaited(name: str) -> str:
    return (
        f"an error response ({name}) that follows no request awaiting one (the entry before it is no "
        'request, or has its response): log each response right after its request, or as {"request": ..., '
        '"response": ...}'
    )


@pytest.mark.parametrize("log", LOGS, ids=lambda log: log.format)
@pytest.mark.parametrize(("where", "line"), [("first", 1), ("after an answer", 3), ("after an error", 5)])
def test_an_error_that_answers_no_request_is_refused_at_its_line(
    tmp_path: Path, log: Log, where: str, line: int
) -> None:
    entries = {
        "first": [log.error, *log.exchange(1, log.answer(1), "after")],
        "after an answer": [*log.exchange(1, log.answer(1), "after"), log.error],
        "after an error": [*log.exchange(1, log.answer(1), "after"), log.request(2), log.error, log.error],
    }[where]
    code, _, warned, written = _import(tmp_path, entries)
    source = tmp_path / "log.jsonl"
    assert code == 2 and not written
    assert warned == [f"{source}:{line}: {_unawaited(log.name)}"]
    replayed, _, refused = run_cli("replay", str(source), "--out", str(tmp_path / "runs"), "--quiet")
    assert replayed == 2 and f"{source}:{line}: {_unawaited(log.name)}\n" in refused
    assert not (tmp_path / "runs").exists()


def test_a_failed_response_that_answers_no_request_is_refused_at_its_line(tmp_path: Path) -> None:
    entries = [RESPONSES.request(1), {"request": RESPONSES.request(1), "response": RESPONSES.answer(1)}]
    code, _, warned, _ = _import(tmp_path, [*entries, FAILED_RESPONSE])
    assert code == 2 and warned == [f"{tmp_path / 'log.jsonl'}:3: {_unawaited('server_error')}"]


# ---------------------------------------------------------------------------------------------
# Detection, and replay


@pytest.mark.parametrize("log", LOGS, ids=lambda log: log.format)
def test_a_log_whose_first_lines_end_on_an_error_is_detected(tmp_path: Path, log: Log) -> None:
    """Detection reads the first entries; the last of them an error was read as a request."""
    answered = DETECT_ENTRIES // 2
    entries = _log(log, failed_at=answered, answered=answered)
    assert entries[DETECT_ENTRIES - 1] == log.error
    code, said, warned, written = _import(tmp_path, entries)
    assert (code, said) == (
        0,
        f"out/session.jsonl: {2 * answered + 1} messages from log.jsonl ({log.format})\n",
    )
    assert written == _conversation(answered), warned


@pytest.mark.parametrize("log", LOGS, ids=lambda log: log.format)
def test_a_log_with_a_failed_request_replays(tmp_path: Path, log: Log) -> None:
    source, results = tmp_path / "log.jsonl", tmp_path / "runs"
    source.write_text("\n".join(lines(*_log(log, failed_at=2, answered=3))) + "\n", encoding="utf-8")
    code, _, err = run_cli(
        "replay", str(source), "--preset", "none", "--out", str(results), "--quiet", "--no-plots"
    )
    assert code == 0, err
    with (results / "log" / "runs.csv").open(encoding="utf-8") as table:
        rows = list(csv.DictReader(table))
    assert [(row["status"], row["calls"]) for row in rows] == [("ok", "3")]
    manifest = json.loads((results / "log" / "manifest.json").read_text(encoding="utf-8"))
    counted = (
        f"ctxlab replay: workload.trace.path: warning: skipped 1 × failed request ({log.name}) (not replayed)"
    )
    assert counted in manifest["warnings"]


@pytest.mark.parametrize("log", LOGS, ids=lambda log: log.format)
@pytest.mark.parametrize(
    ("status", "response", "name"),
    [
        ({"status_code": 429}, None, "HTTP 429"),
        ({"status": 503}, "Service Unavailable", "HTTP 503"),
        ({"status_code": 529}, OVERLOADED, "overloaded_error"),  # the body names the error
    ],
    ids=["no-body", "gateway-text", "error-body"],
)
def test_a_wrapper_s_failed_http_status_makes_its_request_failed(
    tmp_path: Path, log: Log, status: dict[str, int], response: Any, name: str
) -> None:
    """A logger that wraps each call with its HTTP status: a status outside 2xx is a failed call,
    named by the error body where one was logged, else by the status."""
    entries = [
        {"request": log.request(1), "response": log.answer(1), "status_code": 200},
        {"request": log.request(2), "response": response, **status},
        {"request": log.request(2), "response": log.answer(2), "status": 200},
    ]
    code, _, warned, written = _import(tmp_path, entries)
    assert code == 0, warned
    assert written == _conversation(2)
    assert warned == _counted("earlier request", f"failed request ({name})")


def test_an_empty_messages_log_is_refused_saying_so_with_nothing_counted(tmp_path: Path) -> None:
    source, out = tmp_path / "log.json", tmp_path / "out.jsonl"
    source.write_text("[]\n", encoding="utf-8")
    code, _, err = run_cli("import", str(source), "--format", MESSAGES.format, "--out", str(out))
    assert code == 2 and not out.exists()
    assert err.strip() == f"{source}:1: the log holds no {MESSAGES.unreplayable} to replay"
