"""Lists of Anthropic messages (Cline's and Roo Code's `api_conversation_history.json`): detected
from their content, never taken from OpenAI chat when they mean the same, read as the agent sends
them (Roo Code's summary opening the conversation, what it condensed or truncated left out and
counted), and a shape the agents never write refused at its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.scenarios.load import load_scenario
from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.importers.anthropic_history import CLINE_CUTS, NO_PROMPT, TEXT_TOOLS
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, imported, lines, replayed_requests

CLINE = DATA / "anthropic-history/cline-task.json"
CONDENSED = DATA / "anthropic-history/roo-condensed.json"
TRUNCATED = DATA / "anthropic-history/roo-truncated.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
IMAGE = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
ENV = (
    "<environment_details>\n# Current Working Directory (/home/dev/shop) Files\npackage.json\nsrc/\n"
    "</environment_details>"
)


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _roo_env(time: str) -> str:
    return f"<environment_details>\n# Current Time\n{time}\n</environment_details>"


def _imported(value: Any, fmt: str | None = None) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(json.dumps(value, indent=2).splitlines(), "api_conversation_history.json", fmt)
    return got.format, list(got.messages), got.warnings


def _refusal(value: Any) -> str:
    with pytest.raises(TraceError) as caught:
        import_lines(json.dumps(value, indent=2).splitlines(), "h.json", "anthropic-history")
    return str(caught.value)


def _use(call_id: str, name: str = "read_file", **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def _result(call_id: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **extra}


def test_a_cline_task_reads_as_cline_sent_it() -> None:
    got = import_file(CLINE)
    assert got.format == "anthropic-history"
    edit = (
        "------- SEARCH\ns + i.price * i.qty\n=======\ns + (i.price - discountOf(i)) * i.qty\n+++++++ REPLACE"
    )
    task = "<task>\nThe cart total ignores discounts. Fix it; the screenshot shows the wrong total.\n</task>"
    assert list(got.messages) == [
        {"role": "user", "content": [{"type": "text", "text": task}, IMAGE, {"type": "text", "text": ENV}]},
        {
            "role": "assistant",
            "content": "I'll look at how the total is computed.",
            "tool_calls": [_call("toolu_01Read", "read_file", path="src/cart.ts")],
            "reasoning_content": "Start by reading the cart module.",
        },
        {
            "role": "tool",
            "tool_call_id": "toolu_01Read",
            "content": (
                "export function total(items) {\n  return items.reduce((s, i) => s + i.price * i.qty, 0)\n}\n"
            ),
        },
        {"role": "user", "content": ENV},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                _call("toolu_02Search", "search_files", path="src", regex="discount"),
                _call("toolu_03Test", "execute_command", command="npm test -- cart", requires_approval=False),
            ],
            "reasoning_content": "Discounts live elsewhere; search and run the tests at once.",
        },
        {
            "role": "tool",
            "tool_call_id": "toolu_02Search",
            "content": "src/discount.ts\n│export const discountOf = (item) => item.discount ?? 0\n",
        },
        {
            "role": "tool",
            "tool_call_id": "toolu_03Test",
            "content": "Command failed with exit code 1:\nFAIL cart.test.ts\n  expected 90, got 100\n",
            "is_error": True,
        },
        {"role": "user", "content": ENV},
        {
            "role": "assistant",
            "content": "The total never subtracts the discount; I'll apply it per item.",
            "tool_calls": [_call("toolu_04Edit", "replace_in_file", path="src/cart.ts", diff=edit)],
        },
        {
            "role": "tool",
            "tool_call_id": "toolu_04Edit",
            "content": [
                {"type": "text", "text": "The content was successfully saved to src/cart.ts."},
                IMAGE,
            ],
        },
        {"role": "user", "content": ENV},
        {
            "role": "assistant",
            "content": "The cart total now subtracts each item's discount.",
            "tool_calls": [
                _call(
                    "toolu_05Done",
                    "attempt_completion",
                    result="The cart total now subtracts each item's discount; the cart tests pass.",
                )
            ],
        },
    ]
    assert got.warnings == (NO_PROMPT, CLINE_CUTS)


def test_a_roo_code_task_after_condensing_opens_with_its_summary() -> None:
    got = import_file(CONDENSED)
    summary = (
        "## Conversation Summary\n1. Task: rename loadConfig to loadSettings everywhere.\n"
        "2. Done: src/config.ts renamed.\n3. Left: the import and call in src/main.ts."
    )
    diff = "<<<<<<< SEARCH\nloadConfig\n=======\nloadSettings\n>>>>>>> REPLACE"
    done = "loadConfig is now loadSettings in src/config.ts and src/main.ts."
    assert list(got.messages) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": summary},
                {"type": "text", "text": _roo_env("2026-03-02T10:00:10Z")},
            ],
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call("call_A3", "apply_diff", path="src/main.ts", diff=diff)],
            "reasoning_content": "Only main.ts is left.",
        },
        {"role": "tool", "tool_call_id": "call_A3", "content": "Changes applied to src/main.ts."},
        {"role": "user", "content": _roo_env("2026-03-02T10:00:16Z")},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call("call_A4", "attempt_completion", result=done)],
        },
    ]
    assert "skipped 5 × message condensed away (before the last summary) (not replayed)" in got.warnings
    assert "skipped 1 × assistant block 'thoughtSignature' (not replayed)" in got.warnings


def test_a_roo_code_task_after_truncation_leaves_out_what_the_marker_hides() -> None:
    got = import_file(TRUNCATED)
    task = "<user_message>\nWhy does the nightly build fail?\n</user_message>"
    answer = "The nightly job runs `make release`, but the Makefile has no release target, only build."
    assert list(got.messages) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": task},
                {"type": "text", "text": _roo_env("2026-03-03T02:00:00Z")},
            ],
        },
        {"role": "user", "content": "[Sliding window truncation: 2 messages hidden to reduce context]"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call("call_B2", "execute_command", command="make release")],
            "reasoning_content": "The job runs make release; run it here.",
        },
        {
            "role": "tool",
            "tool_call_id": "call_B2",
            "content": "make: *** No rule to make target 'release'.  Stop.",
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call("call_B3", "read_file", args={"file": [{"path": "Makefile"}]})],
        },
        {"role": "tool", "tool_call_id": "call_B3", "content": "build:\n\tgo build ./...\n"},
        {"role": "assistant", "content": answer},
    ]
    assert got.warnings[0] == (
        "skipped 2 × message truncated away (its truncationParent marker is in the history) (not replayed)"
    )


HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "List it."}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Listing."}, _use("t1", path="a")]},
    {"role": "user", "content": [_result("t1", "a.txt")]},
    {"role": "assistant", "content": "Done."},
]


def test_a_list_of_anthropic_messages_is_no_longer_refused_as_openai_chat() -> None:
    fmt, messages, warnings = _imported(HISTORY)
    assert fmt == "anthropic-history"
    assert messages == [
        {"role": "user", "content": "List it."},
        {"role": "assistant", "content": "Listing.", "tool_calls": [_call("t1", "read_file", path="a")]},
        {"role": "tool", "tool_call_id": "t1", "content": "a.txt"},
        {"role": "assistant", "content": "Done."},
    ]
    assert warnings == (NO_PROMPT,)
    jsonl = import_lines(lines(*HISTORY), "messages.jsonl")
    assert jsonl.format == "anthropic-history" and list(jsonl.messages) == messages


def test_a_history_ending_with_the_api_s_response_kept_as_it_came_is_an_anthropic_history() -> None:
    """`messages + [response.model_dump()]`: the response's `type: message` (and `id`,
    `stop_reason`) made the list read as OpenAI Agents items, whose reader lost every call."""
    response = {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}  # fmt: skip
    fmt, messages, _ = _imported([*HISTORY[:-1], response])
    assert fmt == "anthropic-history" and messages == _imported(HISTORY)[1]


def test_text_alone_stays_openai_chat_and_the_agents_fields_tell_the_format() -> None:
    text = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": "hello"},
    ]
    assert _imported(text)[0] == "openai-chat"
    assert _imported([{**text[0], "ts": 1}, {**text[1], "ts": 2}])[0] == "anthropic-history"
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert _imported([{"role": "user", "content": [image]}, text[1]])[0] == "anthropic-history"
    openai = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}
    assert _imported([openai, text[1]])[0] == "openai-chat"
    assert _imported([{**openai, "ts": 1}, {**text[1], "ts": 2}])[0] == "openai-chat"
    with_calls = {"role": "assistant", "content": "", "tool_calls": [_call("c", "ls")]}
    assert (
        _imported([text[0], with_calls, {"role": "tool", "tool_call_id": "c", "content": "x"}])[0]
        == "openai-chat"
    )


def test_text_tools_are_noted_and_a_forced_read_of_text_matches_openai_chat() -> None:
    text = [
        {"role": "user", "content": "Do it."},
        {"role": "assistant", "content": "<read_file><path>a</path></read_file>"},
    ]
    _, messages, warnings = _imported(text, "anthropic-history")
    assert messages == list(import_lines(lines(*text), "chat.jsonl").messages)
    assert TEXT_TOOLS in warnings


def test_an_assistant_summary_follows_the_first_message_as_roo_code_sent_it_before() -> None:
    """Roo Code's earlier condensing wrote the summary as the assistant's, after the tagged
    messages; it sent the first message, then the summary and what followed."""
    history = [
        {"role": "user", "content": "Task.", "ts": 1},
        {"role": "assistant", "content": [_use("t1")], "ts": 2, "condenseParent": "c"},
        {"role": "user", "content": [_result("t1")], "ts": 3, "condenseParent": "c"},
        {"role": "assistant", "content": "Summary so far.", "ts": 4, "isSummary": True, "condenseId": "c"},
        {"role": "user", "content": [_result("t1", "late"), {"type": "text", "text": "Go on."}], "ts": 5},
        {"role": "assistant", "content": "Done.", "ts": 6},
    ]
    _, messages, warnings = _imported(history)
    assert messages == [
        {"role": "user", "content": "Task."},
        {"role": "assistant", "content": "Summary so far."},
        {"role": "user", "content": "Go on."},
        {"role": "assistant", "content": "Done."},
    ]
    assert "skipped 2 × message condensed away (before the last summary) (not replayed)" in warnings
    assert "skipped 1 × tool result of a call condensed away (not replayed)" in warnings


def test_a_truncation_marker_before_the_summary_hides_nothing_after_it() -> None:
    history = [
        {"role": "user", "content": "Old.", "ts": 1, "condenseParent": "c"},
        {"role": "user", "content": "[marker]", "ts": 2, "isTruncationMarker": True, "truncationId": "t"},
        {"role": "user", "content": "Summary.", "ts": 3, "isSummary": True, "condenseId": "c"},
        {"role": "assistant", "content": "Kept.", "ts": 4, "truncationParent": "t"},
        {"role": "assistant", "content": "Orphaned mark.", "ts": 5, "truncationParent": "gone"},
    ]
    assert [m["content"] for m in _imported(history)[1]] == ["Summary.", "Kept.", "Orphaned mark."]


def test_the_agents_reasoning_keys_are_reasoning_and_opaque_reasoning_is_counted() -> None:
    history = [
        {"role": "user", "content": "Q?", "ts": 1},
        {"type": "reasoning", "encrypted_content": "gAAA", "id": "rs_1", "summary": [], "ts": 2},
        {
            "role": "assistant",
            "content": [{"type": "reasoning", "encrypted_content": "gAAA", "summary": []}, _use("t1")],
            "reasoning_details": [
                {"type": "reasoning.text", "text": "Think.", "format": "x", "index": 0},
                {"type": "reasoning.encrypted", "data": "zz", "index": 1},
            ],
            "ts": 3,
        },
        {"role": "user", "content": [_result("t1")], "ts": 4},
        {"role": "assistant", "content": "A.", "reasoning_content": "Because.", "ts": 5},
    ]
    _, messages, warnings = _imported(history)
    assert messages[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [_call("t1", "read_file")],
        "reasoning_content": "Think.",
    }
    assert messages[3] == {"role": "assistant", "content": "A.", "reasoning_content": "Because."}
    for counted in (
        "reasoning item (its encrypted_content is opaque)",
        "reasoning block (its encrypted_content is opaque)",
        "reasoning_details entry 'reasoning.encrypted' (no text)",
    ):
        assert f"skipped 1 × {counted} (not replayed)" in warnings


def test_a_history_read_once_leaves_out_what_a_survey_would() -> None:
    text = CONDENSED.read_text(encoding="utf-8")
    once = import_lines(iter(text.splitlines()), str(CONDENSED))
    assert once.messages == import_file(CONDENSED).messages
    jsonl = lines(*json.loads(text))
    assert import_lines(iter(jsonl), "h.jsonl").messages == import_lines(jsonl, "h.jsonl").messages


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ("text", "a message must be an object, got str"),
        ({"role": "system", "content": "x"}, "a message's role is 'system'; a history has user or assistant"),
        ({"role": "user", "content": 3}, "a message's content must be text or a list of blocks"),
        ({"role": "user", "content": [{"text": "x"}]}, "a content block must be an object with a 'type'"),
        ({"role": "user", "content": [_result("nope")]}, "a tool result for 'nope' has no call before it"),
    ],
)
def test_a_shape_the_agents_never_write_is_refused_at_its_line(item: Any, said: str) -> None:
    refusal = _refusal([HISTORY[0], HISTORY[1], HISTORY[2], item])
    line = 1 + json.dumps(HISTORY[:3], indent=2).count("\n")  # the item's first line, in the document
    assert refusal.startswith(f"h.json:{line}: {said}"), refusal


def test_ctxlab_import_and_replay_read_a_roo_code_task(tmp_path: Path) -> None:
    said, err, written = imported(CONDENSED, tmp_path / "roo.jsonl")
    assert "(anthropic-history)" in said and "condensed away" in err + said
    assert written == list(import_file(CONDENSED).messages)
    last = replayed_requests(CLINE, tmp_path / "results")[-1]["messages"]
    assert [m.get("tool_call_id") for m in last if m["role"] == "tool"] == [
        "toolu_01Read",
        "toolu_02Search",
        "toolu_03Test",
        "toolu_04Edit",
        "toolu_05Done",
    ]


def test_a_scenario_trace_imports_a_cline_task(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"name: s\nworkload:\n  trace: {{path: {CLINE}}}\nmodel: {{context_size: 32000}}\n"
        "strategies: [{preset: none}]\n",
        encoding="utf-8",
    )
    loaded = load_scenario(path)
    assert any("conversationHistoryDeletedRange" in str(w) for w in loaded.warnings), loaded.warnings


def test_a_second_result_of_one_call_is_refused_at_its_line() -> None:
    used = {"role": "assistant", "content": [_use("t1")]}
    answered = {"role": "user", "content": [_result("t1")]}
    refusal = _refusal([{"role": "user", "content": "Read it."}, used, answered, answered])
    assert "h.json:" in refusal and "a second tool result for 't1'" in refusal, refusal
