"""AI SDK 4 histories in the `ai-sdk` format: a `useChat` app's `Message[]` and `CoreMessage[]`
read as ai 4.3.19's `convertToCoreMessages` and @ai-sdk/openai 1.3.24's chat provider send them.
The expected messages are what those packages sent (`tests/data/importers/ai-sdk/v4-wire`, and
for the small histories here, bodies recorded the same way), with the lab's two additions: the
reasoning kept apart and an error result flagged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, assert_paired, lines, run_cli

SAMPLES = ("v4-use-chat", "v4-core-messages")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
ASK = {"role": "user", "content": "Go.", "parts": [{"type": "text", "text": "Go."}]}


def _sent(messages: Any) -> list[dict[str, Any]]:
    """Messages without what the lab adds to what the provider sends."""
    return [{k: v for k, v in m.items() if k not in ("reasoning_content", "is_error")} for m in messages]


def _imported(history: Any, fmt: str | None = None) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(json.dumps(history, indent=2).splitlines(), "history.json", fmt)
    return got.format, list(got.messages), got.warnings


def _refusal(history: Any) -> str:
    with pytest.raises(TraceError) as caught:
        import_lines(json.dumps(history, indent=2).splitlines(), "history.json", "ai-sdk")
    return str(caught.value)


def _invocation(call_id: str, state: str = "result", step: int = 0, result: Any = "ok") -> dict[str, Any]:
    made = {"state": state, "step": step, "toolCallId": call_id, "toolName": "look", "args": {"q": call_id}}
    return {**made, "result": result} if state == "result" else made


def _part(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"type": "tool-invocation", "toolInvocation": _invocation(call_id, **fields)}


def _call(call_id: str) -> dict[str, Any]:
    arguments = json.dumps({"q": call_id})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "look", "arguments": arguments.replace(" ", "")},
    }


def _calling(text: str, *ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "tool_calls": [_call(i) for i in ids]}


def _result(call_id: str, text: str = '"ok"') -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


@pytest.mark.parametrize("name", SAMPLES)
def test_the_samples_import_as_the_real_provider_sent_them(name: str) -> None:
    got = import_file(DATA / f"ai-sdk/{name}.json")
    wire = json.loads((DATA / f"ai-sdk/v4-wire/{name}.openai.json").read_text(encoding="utf-8"))
    assert got.format == "ai-sdk"
    assert _sent(got.messages) == wire
    assert_paired(got.messages)


def test_the_use_chat_sample_keeps_reasoning_apart_and_counts_the_redacted() -> None:
    got = import_file(DATA / "ai-sdk/v4-use-chat.json")
    thoughts = [m["reasoning_content"] for m in got.messages if "reasoning_content" in m]
    assert thoughts == ["Two cities: look both up at once.", "Currency first, then the café search."]
    assert got.warnings == ("skipped 1 × redacted-reasoning part in an assistant message (not replayed)",)


def test_parts_are_cut_where_text_follows_calls_and_where_the_step_changes() -> None:
    reply = {"role": "assistant", "content": "ignored beside parts", "parts": [
        {"type": "step-start"}, {"type": "text", "text": "A"}, _part("c1"),
        {"type": "source", "source": {"sourceType": "url", "id": "s", "url": "https://a.test"}},
        {"type": "text", "text": "B"}, _part("c2", step=1, result={"n": 1}),
        _part("c3", step=2, result=[1, "two"]), {"type": "file", "mimeType": "image/png", "data": PNG},
        {"type": "text", "text": "C"},
    ]}  # fmt: skip
    _, messages, warnings = _imported([ASK, reply])
    assert _sent(messages) == [
        {"role": "user", "content": "Go."},
        _calling("A", "c1"),
        _result("c1"),  # a string result is quoted: the provider writes every result as JSON
        _calling("B", "c2"),
        _result("c2", '{"n":1}'),
        _calling("", "c3"),
        _result("c3", '[1,"two"]'),
        {"role": "assistant", "content": "C"},
    ]
    assert warnings == (
        "skipped 1 × AI SDK 4 source part (not replayed)",
        "skipped 1 × file part in an assistant message (not replayed)",
    )


def test_reasoning_details_are_reasoning_and_an_older_part_its_text() -> None:
    details = [
        {"type": "text", "text": "one"},
        {"type": "redacted", "data": "x"},
        {"type": "text", "text": "two"},
    ]
    reply = {"role": "assistant", "content": "Hi.", "parts": [
        {"type": "reasoning", "reasoning": "onetwo", "details": details}, {"type": "text", "text": "Hi."},
        {"type": "step-start"}, {"type": "reasoning", "reasoning": "three"}, {"type": "text", "text": "!"},
    ]}  # fmt: skip
    _, messages, _ = _imported([ASK, reply])
    assert messages[1] == {"role": "assistant", "content": "Hi.!", "reasoning_content": "one\ntwo\nthree"}


def test_tool_invocations_without_parts_go_step_by_step_and_the_text_after_them() -> None:
    reply = {
        "role": "assistant",
        "content": "Done.",
        "toolInvocations": [_invocation("c1"), _invocation("c2", step=1)],
    }
    steps = [_calling("", "c1"), _result("c1"), _calling("", "c2"), _result("c2")]
    _, messages, _ = _imported([ASK, reply, ASK])
    assert _sent(messages) == [messages[0], *steps, {"role": "assistant", "content": "Done."}, messages[0]]


def test_the_last_message_puts_its_text_in_step_0_as_the_sdk_does() -> None:
    reply = {
        "role": "assistant",
        "content": "Done.",
        "toolInvocations": [_invocation("c1"), _invocation("c2", step=1)],
    }
    expected = [_calling("Done.", "c1"), _result("c1"), _calling("", "c2"), _result("c2")]
    assert _imported([ASK, reply])[1][1:] == expected
    one_a_line = import_lines([json.dumps(ASK), json.dumps(reply)], "history.jsonl", "ai-sdk").messages
    assert list(one_a_line[1:]) == expected  # the line's message waits to know it is the last
    no_step_0 = {**reply, "toolInvocations": [_invocation("c2", step=1)]}
    assert _imported([ASK, no_step_0])[1][1:] == expected[2:]  # the SDK loses the text there


def test_calls_with_no_result_are_dropped_counted_and_noted() -> None:
    reply = {"role": "assistant", "content": "x", "parts": [
        {"type": "text", "text": "A"}, _part("c1", state="call"), _part("c2", state="partial-call"),
        {"type": "text", "text": "B"}, _part("c3"),
    ]}  # fmt: skip
    old = {"role": "assistant", "content": "Later.", "toolInvocations": [_invocation("c4", state="call")]}
    _, messages, warnings = _imported([ASK, reply, old, ASK])
    assert _sent(messages) == [
        messages[0],
        _calling("AB", "c3"),
        _result("c3"),
        {"role": "assistant", "content": "Later."},
        messages[0],
    ]
    assert "skipped 2 × AI SDK 4 tool invocation in state call (no result) (not replayed)" in warnings
    assert "skipped 1 × AI SDK 4 tool invocation in state partial-call (no result) (not replayed)" in warnings
    assert any("MessageConversionError" in w for w in warnings)


def test_attachments_are_images_and_text_as_the_sdk_makes_them() -> None:
    message = {"role": "user", "content": "See.", "experimental_attachments": [
        {"contentType": "image/png", "url": "https://a.test/x.png"},
        {"contentType": "image/webp", "url": f"data:image/webp;base64,{PNG}"},  # its bytes are PNG
        {"contentType": "image/x-unknown", "url": "data:image/x-unknown;base64,AAAA"},
        {"contentType": "text/markdown", "url": "data:text/markdown;base64,IyBOb3Rlcwo="},
        {"contentType": "application/pdf", "url": "data:application/pdf;base64,JVBERi0xLjQK"},
        {"url": "data:;base64,AAAA"}, {"contentType": "image/png", "url": "ftp://a.test/x.png"},
        {"contentType": "image/png", "url": "data:image/png;base64,@@@"},
    ]}  # fmt: skip
    fmt, messages, warnings = _imported([message])
    assert fmt == "ai-sdk"
    assert messages == [{"role": "user", "content": [
        {"type": "text", "text": "See."},
        {"type": "image_url", "image_url": {"url": "https://a.test/x.png"}},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
        {"type": "text", "text": "# Notes\n"},
    ]}]  # fmt: skip
    assert warnings == (
        "skipped 1 × AI SDK 4 attachment the SDK cannot send (a URL of scheme 'ftp') (not replayed)",
        "skipped 1 × AI SDK 4 attachment the SDK cannot send (a data URL without base64 data) (not replayed)",
        "skipped 1 × AI SDK 4 attachment the SDK cannot send (no content type) (not replayed)",
        "skipped 1 × file part of media type 'application/pdf' in a user message (not replayed)",
    )


def test_core_messages_quote_results_flag_errors_and_tell_image_types() -> None:
    look = {"type": "tool-call", "toolCallId": "c1", "toolName": "look", "args": {"q": "é"}}
    answer = {"type": "tool-result", "toolCallId": "c1", "toolName": "look", "result": "plain text"}
    history = [
        {"role": "user", "content": [
            {"type": "text", "text": ""},
            {"type": "image", "image": PNG, "mimeType": "image/jpeg"},  # its bytes tell PNG
            {"type": "image", "image": "AAAA"},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hm."}, look]},
        {"role": "tool", "content": [{**answer, "isError": True, "experimental_content": []}]},
    ]  # fmt: skip
    fmt, messages, warnings = _imported(history)
    assert fmt == "ai-sdk"
    assert messages == [
        {"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
        ]},
        {"role": "assistant", "content": "Hm.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "look", "arguments": '{"q":"é"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '"plain text"', "is_error": True},
    ]  # fmt: skip
    assert (
        "skipped 1 × tool result's experimental_content (the chat provider sends its result) (not replayed)"
        in warnings
    )


def test_a_data_message_is_counted() -> None:
    data = {"role": "data", "content": "", "data": {"progress": 1}}
    _, messages, warnings = _imported([ASK, data])
    assert messages == [{"role": "user", "content": "Go."}]
    assert "skipped 1 × AI SDK 4 data message (not replayed)" in warnings


@pytest.mark.parametrize(
    "history",
    [
        [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Yes.", "toolInvocations": []}],
        [{"role": "user", "content": "Hi.", "experimental_attachments": []}],
        [{"role": "user", "content": "Hi.", "parts": [{"type": "text", "text": "Hi."}]}],
        [
            {
                "role": "assistant",
                "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "t", "args": {}}],
            }
        ],
    ],
)
def test_what_only_ai_sdk_4_writes_is_detected(history: list[Any]) -> None:
    assert _imported(history)[0] == "ai-sdk"


def test_a_tool_invocation_part_is_not_read_as_a_later_tool_part() -> None:
    """`tool-invocation` would be a 5.x tool part of a tool named `invocation`: the 4.x part
    holds its call in `toolInvocation`, and its message its text in `content`."""
    _, messages, _ = _imported([ASK, {"role": "assistant", "content": "", "parts": [_part("c1")]}])
    assert _sent(messages[1:]) == [_calling("", "c1"), _result("c1")]


def test_a_history_of_both_generations_is_refused() -> None:
    part = {"type": "tool-look", "toolCallId": "c9", "state": "output-available", "input": {}, "output": 1}
    later = {"id": "m1", "role": "assistant", "parts": [part]}
    said = _refusal([ASK, later])
    assert "history.json:" in said
    assert "message 1 is written as AI SDK 5.x and later write it, but message 0 as 4.x do" in said


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            {**ASK, "role": "assistant", "parts": [_part("c1", state="done")]},
            "a tool invocation's state is 'done'",
        ),
        (
            {
                **ASK,
                "role": "assistant",
                "parts": [{"type": "tool-invocation", "toolInvocation": {"state": "call"}}],
            },
            "a tool invocation's 'toolCallId' is not a name",
        ),
        (
            {**ASK, "role": "assistant", "parts": [_part("c1", step=-1)]},
            "a tool invocation's 'step' is -1, not a count",
        ),
        (
            {**ASK, "parts": [{"type": "widget"}]},
            "message 1.parts[0] is no AI SDK 4 part (its type is 'widget')",
        ),
        ({**ASK, "parts": {"type": "text"}}, "message 1: its 'parts' are not a list"),
        ({**ASK, "role": "tool"}, "its role is 'tool'; an AI SDK 4 Message is one of"),
        (
            {**ASK, "experimental_attachments": [{"url": 5}]},
            "message 1.experimental_attachments[0]: an attachment's",
        ),
        (
            {"role": "assistant", "content": ["x"], "toolInvocations": [_invocation("c1")]},
            "its 'content' is not text",
        ),
    ],
)
def test_shapes_ai_sdk_4_never_writes_are_refused_at_their_line(
    message: dict[str, Any], expected: str
) -> None:
    said = _refusal([ASK, message])
    assert said.startswith("history.json:")
    assert int(said.split(":")[1]) >= 10  # the message's own line, not the document's first
    assert expected in said


def test_import_and_replay_end_to_end(tmp_path: Path) -> None:
    sample, out = DATA / "ai-sdk/v4-use-chat.json", tmp_path / "chat.jsonl"
    code, said, err = run_cli("import", str(sample), "--out", str(out))
    assert code == 0, err
    assert "(ai-sdk)" in said
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert written == list(import_file(sample).messages)
    code, _, err = run_cli("replay", str(DATA / "ai-sdk/v4-core-messages.json"), "--quiet")
    assert code == 0, err


def test_a_jsonl_history_is_one_conversation() -> None:
    reply = {"role": "assistant", "content": "Seen.", "parts": [{"type": "text", "text": "Seen."}]}
    got = import_lines(lines(ASK, reply), "history.jsonl")
    assert (got.format, list(got.messages)) == (
        "ai-sdk",
        [{"role": "user", "content": "Go."}, {"role": "assistant", "content": "Seen."}],
    )
