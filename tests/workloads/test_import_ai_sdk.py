"""Vercel AI SDK histories: UIMessage[] split into steps and ModelMessage[] read as the SDK's OpenAI
chat provider sends them; tool parts by their state (errors flagged, calls with no result
dropped as `ignoreIncompleteToolCalls` drops them); plain chat messages left to OpenAI chat; and
shapes the SDK never writes refused at their line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import SessionError, import_file, import_lines
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, assert_paired, lines, run_cli

UI = DATA / "ai-sdk/ui-messages.json"
MODEL = DATA / "ai-sdk/model-messages.json"
PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/"
    "iZk9HQAAAABJRU5ErkJggg=="
)


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _result(call_id: str, text: str, *, error: bool = False) -> dict[str, Any]:
    wire = {"role": "tool", "tool_call_id": call_id, "content": text}
    return {**wire, "is_error": True} if error else wire


UI_EXPECTED = [
    {"role": "user", "content": "What is the weather in Paris and Oslo? Do I need an umbrella?"},
    {
        "role": "assistant",
        "content": "Let me check both cities.",
        "tool_calls": [
            _call("call_w1", "getWeather", '{"city":"Paris"}'),
            _call("call_w2", "getWeather", '{"city":"Oslo"}'),
        ],
        "reasoning_content": "Two cities: look both up at once.",
    },
    _result("call_w1", '{"city":"Paris","tempC":21,"condition":"sunny"}'),
    _result("call_w2", '{"city":"Oslo","tempC":9,"condition":"rain, 4 mm"}'),
    {
        "role": "assistant",
        "content": "Paris is sunny at 21 °C. Oslo has rain at 9 °C: take an umbrella there.",
    },
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture? Then check my packing notes."},
            {"type": "image_url", "image_url": {"url": PIXEL}},
        ],
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [_call("call_r1", "readFile", '{"path":"notes.txt"}')],
        "reasoning_content": "A 1×1 image; the notes are probably notes.txt.",
    },
    _result("call_r1", "ENOENT: no such file or directory, open 'notes.txt'", error=True),
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [_call("call_s1", "search_files", '{"query":"packing"}')],
    },
    _result("call_s1", "notes/packing.md"),
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [_call("call_r2", "readFile", '{"path":"notes/packing.md"}')],
    },
    _result("call_r2", "- umbrella\n- charger"),
    {
        "role": "assistant",
        "content": "The picture is a single pixel. Your packing notes list an umbrella and a charger.",
    },
]


def _imported(*entries: Any, fmt: str | None = None) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(lines(*entries), "history.json", fmt)
    return got.format, list(got.messages), got.warnings


def _refusal(value: Any, fmt: str | None = None) -> str:
    with pytest.raises(TraceError) as caught:
        import_lines(json.dumps(value, indent=2).splitlines(), "history.json", fmt)
    return str(caught.value)


def _ui(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"m-{role}", "role": role, "parts": list(parts)}


def _tool_part(call_id: str, state: str, **fields: Any) -> dict[str, Any]:
    return {"type": "tool-look", "toolCallId": call_id, "state": state, "input": {"q": 1}, **fields}


ASK = _ui("user", {"type": "text", "text": "Look."})


def test_the_ui_sample_splits_steps_and_keeps_reasoning_apart() -> None:
    got = import_file(UI)
    assert got.format == "ai-sdk"
    assert list(got.messages) == UI_EXPECTED
    assert got.warnings == (
        "skipped 1 × UI part 'data-<name>' in an assistant message (not replayed)",
        "skipped 1 × UI part 'source-url' in an assistant message (not replayed)",
    )
    assert_paired(got.messages)


def test_the_model_sample_encodes_outputs_as_the_chat_provider_does() -> None:
    got = list(import_file(MODEL).messages)
    assert got[0] == {"role": "system", "content": "You are a travel assistant. Use the tools; be brief."}
    assert got[2]["reasoning_content"] == "Find trains first, then check the seat map."
    assert got[2]["tool_calls"][1] == _call("call_t2", "getStationInfo", '{"station":"Paris Gare de Lyon"}')
    assert got[3]["content"].startswith('[{"train":"TGV 6603","departs":"07:00"')  # json: compact JSON
    assert got[4] == _result("call_t2", "Paris Gare de Lyon: halls 1 and 2; TGV trains leave from hall 1.")
    assert got[6] == _result("call_b1", "Payment declined: card expired.", error=True)
    assert got[8]["content"][1] == {"type": "image_url", "image_url": {"url": PIXEL}}
    assert got[-1] == {
        "role": "assistant",
        "content": "Booked: TGV 6603, coach 4, seat 41 (window). Booking reference PNR-Q7X2LM.",
    }
    assert len(got) == 12
    assert_paired(got)


def test_messages_one_a_line_are_one_history_and_hold_one_session() -> None:
    reply = _ui("assistant", {"type": "step-start"}, {"type": "text", "text": "Seen."})
    assert _imported(ASK, reply)[:2] == (
        "ai-sdk",
        [{"role": "user", "content": "Look."}, {"role": "assistant", "content": "Seen."}],
    )
    with pytest.raises(SessionError, match="holds one conversation per file"):
        import_file(UI, session=1)


def test_denied_and_failed_tool_parts_are_error_results() -> None:
    reply = _ui(
        "assistant",
        _tool_part("c1", "output-denied", approval={"id": "a1", "approved": False, "reason": "not now"}),
        _tool_part("c2", "approval-responded", approval={"id": "a2", "approved": False}),
        {"type": "dynamic-tool", "toolName": "mcp_x", "toolCallId": "c3", "state": "output-error",
         "input": None, "rawInput": "{oops", "errorText": "bad input"},
    )  # fmt: skip
    _, messages, _ = _imported([ASK, reply])
    assert messages[1]["tool_calls"] == [
        _call("c1", "look", '{"q":1}'),
        _call("c2", "look", '{"q":1}'),
        _call("c3", "mcp_x", '"{oops"'),
    ]
    assert messages[2:] == [
        _result("c1", "not now", error=True),
        _result("c2", "Tool call execution denied.", error=True),
        _result("c3", "bad input", error=True),
    ]


def test_calls_with_no_result_are_dropped_and_noted() -> None:
    reply = _ui(
        "assistant",
        {"type": "text", "text": "Looking."},
        _tool_part("c1", "output-available", output="seen"),
        _tool_part("c2", "input-available"),
        _tool_part("c3", "input-streaming"),
        _tool_part("c4", "approval-responded", approval={"id": "a4", "approved": True}),
    )
    _, messages, warnings = _imported([ASK, reply])
    assert messages[1:] == [
        {"role": "assistant", "content": "Looking.", "tool_calls": [_call("c1", "look", '{"q":1}')]},
        _result("c1", "seen"),
    ]
    assert "skipped 1 × tool part in state input-available (no result) (not replayed)" in warnings
    assert "skipped 1 × tool part in state input-streaming (no result) (not replayed)" in warnings
    assert any("MissingToolResultsError" in w for w in warnings)


def test_provider_executed_tools_approvals_and_other_media_are_counted() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "Read it."},
                                     {"type": "file", "mediaType": "application/pdf", "data": "JVBERi0="}]},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "w1", "toolName": "web_search", "input": {},
             "providerExecuted": True},
            {"type": "tool-result", "toolCallId": "w1", "toolName": "web_search",
             "output": {"type": "json", "value": []}},
            {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "look", "input": {"q": "ü"}},
        ]},
        {"role": "tool", "content": [
            {"type": "tool-approval-response", "approvalId": "a1", "approved": True},
            {"type": "tool-result", "toolCallId": "c1", "toolName": "look",
             "output": {"type": "content", "value": [{"type": "text", "text": "seen"}]}},
        ]},
    ]  # fmt: skip
    _, messages, warnings = _imported(history)
    assert messages == [
        {"role": "user", "content": "Read it."},
        {"role": "assistant", "content": "", "tool_calls": [_call("c1", "look", '{"q":"ü"}')]},
        _result("c1", '[{"type":"text","text":"seen"}]'),
    ]
    for kind in ("provider-executed tool-call part", "provider-executed tool-result part",
                 "tool-approval-request part in an assistant message", "tool-approval-response part",
                 "file part of media type 'application/pdf' in a user message"):  # fmt: skip
        assert f"skipped 1 × {kind} (not replayed)" in warnings


NUMBERS = {"limit": 1.0, "eps": 1e-7, "big": 12345678901234567890, "huge": 1e21, "ratio": 1e20}
NUMBERS |= {"nudge": -0.0, "tiny": 5e-324, "10": "tenth", "2": "second", "note": "tab\t sep\u2028"}
NUMBERS_JS = (
    '{"2":"second","10":"tenth","limit":1,"eps":1e-7,"big":12345678901234567000,"huge":1e+21,'
    '"ratio":100000000000000000000,"nudge":0,"tiny":5e-324,"note":"tab\\t sep\u2028"}'
)
"""`NUMBERS` as the SDK sends them: Node 20's `JSON.stringify(JSON.parse(json.dumps(NUMBERS)))`."""
STATS = {"mean": 0.1 + 0.2, "n": 2**53 + 1, "share": 1e-6, "rows": [1.0, 25e-7]}
STATS_JS = '{"mean":0.30000000000000004,"n":9007199254740992,"share":0.000001,"rows":[1,0.0000025]}'
ASK_TEXT = {"role": "user", "content": "Go."}


def _called(key: str, **answer: Any) -> list[dict[str, Any]]:
    """A model-message history: one call of `NUMBERS` under `key` and its result."""
    made = {"type": "tool-call", "toolCallId": "c1", "toolName": "look", key: NUMBERS}
    result = {"type": "tool-result", "toolCallId": "c1", "toolName": "look", **answer}
    return [ASK_TEXT, {"role": "assistant", "content": [made]}, {"role": "tool", "content": [result]}]


@pytest.mark.parametrize(
    "history",
    [
        [ASK, _ui("assistant", _tool_part("c1", "output-available", input=NUMBERS, output=STATS))],
        _called("input", output={"type": "json", "value": STATS}),
        _called("args", result=STATS),  # AI SDK 4
    ],
    ids=["ui-message", "model-message", "v4-core-message"],
)
def test_tool_inputs_and_outputs_are_sent_as_javascript_writes_them(history: list[Any]) -> None:
    _, messages, _ = _imported(*history)
    assert messages[1]["tool_calls"] == [_call("c1", "look", NUMBERS_JS)]
    assert messages[2] == _result("c1", STATS_JS)


def test_plain_chat_messages_stay_openai_chat() -> None:
    plain = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."}]
    assert _imported(plain)[0] == "openai-chat"
    texts = [{"role": "user", "content": [{"type": "text", "text": "Hi."}]}]
    assert _imported(texts)[0] == "openai-chat"
    assert _imported(plain, fmt="ai-sdk")[:2] == ("ai-sdk", plain)


def test_a_result_without_its_call_is_refused_at_its_line() -> None:
    orphan = {
        "type": "tool-result",
        "toolCallId": "nope",
        "toolName": "look",
        "output": {"type": "text", "value": "x"},
    }
    said = _refusal([{"role": "user", "content": "Go."}, {"role": "tool", "content": [orphan]}])
    assert "history.json:6:" in said
    assert "a tool result for 'nope' has no call before it" in said


def test_a_second_result_of_one_call_is_refused_and_a_call_made_again_is_answered_again() -> None:
    look = {"type": "tool-call", "toolCallId": "c1", "toolName": "look", "input": {}}
    result = {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "look",
        "output": {"type": "text", "value": "x"},
    }
    ask, made = {"role": "user", "content": "Go."}, {"role": "assistant", "content": [look]}
    said = _refusal([ask, made, {"role": "tool", "content": [result, result]}])
    assert "history.json:" in said and "a second tool result for 'c1'" in said, said
    answered = {"role": "tool", "content": [result]}
    _, messages, _ = _imported(ask, made, answered, made, answered)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            _ui("assistant", {"type": "tool-look", "toolCallId": "c1", "state": "done"}),
            "a tool part's state is 'done'",
        ),
        (
            _ui("assistant", {"type": "tool-look", "state": "output-available", "output": 1}),
            "has no 'toolCallId'",
        ),
        (_ui("assistant", {"type": "widget"}), "message 1.parts[0] is no AI SDK UI part"),
        (
            {
                "role": "tool",
                "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "look", "result": "old"}],
            },
            "is written as AI SDK 4.x write it, but message 1 as 5.x and later do",
        ),
        (
            {"role": "system", "content": [{"type": "text", "text": "x"}]},
            "a system message's content is not text",
        ),
        ({"role": "bot", "content": "x"}, "its role is 'bot'"),
        (
            _ui("system", {"type": "text", "text": None}),
            "message 1.parts[0]: a text part's 'text' is not text",
        ),
        (
            {"role": "user", "content": [{"type": "image", "image": "iVBORw0KGgo=", "mediaType": 5}]},
            "an image part's 'mediaType' is not text",
        ),
    ],
)
def test_shapes_the_sdk_never_writes_are_refused_at_their_line(
    message: dict[str, Any], expected: str
) -> None:
    call = {"type": "tool-call", "toolCallId": "c1", "toolName": "look", "input": {}}
    history = [
        {"role": "user", "content": [{"type": "image", "image": PIXEL}]},
        message if "parts" in message else {"role": "assistant", "content": [call]},
    ]
    if "parts" not in message:
        history.append(message)
    line = 11 if "parts" in message else 22  # the message's own line in the document
    assert _refusal(history, "ai-sdk").startswith(f"history.json:{line}: message ")
    assert expected in _refusal(history, "ai-sdk")


def test_import_and_replay_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "ui.jsonl"
    code, said, err = run_cli("import", str(UI), "--out", str(out))
    assert code == 0, err
    assert "(ai-sdk)" in said
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == UI_EXPECTED
    code, said, err = run_cli("replay", str(MODEL), "--quiet")
    assert code == 0, err


def test_a_part_the_sdk_never_writes_is_told_when_detected() -> None:
    """Detection needs one part only the SDK writes; another part is refused when read."""
    history = [ASK, _ui("assistant", {"type": "widget"})]
    assert "message 1.parts[0] is no AI SDK UI part" in _refusal(history)
