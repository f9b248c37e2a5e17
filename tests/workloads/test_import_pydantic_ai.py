"""pydantic-ai histories: the reader gives what pydantic-ai itself sends an OpenAI chat model for
the same history (checked against the installed package), counts what it does not send, and
refuses shapes the package never writes at their line."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import import_lines
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, lines

SAMPLES = sorted((DATA / "pydantic-ai").glob("*.json"))

REQUEST = {"kind": "request", "instructions": "Be brief.", "run_id": "r1"}


def _return(call_id: str, content: Any, outcome: str = "success") -> dict[str, Any]:
    return {
        "part_kind": "tool-return",
        "tool_name": "look",
        "tool_call_id": call_id,
        "content": content,
        "outcome": outcome,
    }


def _call(call_id: str, args: Any) -> dict[str, Any]:
    return {"part_kind": "tool-call", "tool_name": "look", "tool_call_id": call_id, "args": args}


ODD = [
    {**REQUEST, "parts": [{"part_kind": "user-prompt", "content": "Look twice."}]},
    {
        "kind": "response",
        "run_id": "r1",
        "parts": [
            {"part_kind": "thinking", "content": "Two looks."},
            _call("c1", '{"a":  1,\n "b": "é"}'),
            _call("c2", "[1, 2]"),
            _call("c3", None),
            _call("c4", {"near": 1e-05, "tiny": -2.5e-07, "far": 1e16, "less": 3e-10, "inf": float("inf")}),
            _call("c5", '{"nan": NaN, "near": 1e-5}'),
            {"part_kind": "builtin-tool-call", "tool_name": "web_search", "tool_call_id": "s1", "args": {}},
        ],
    },
    {
        **REQUEST,
        "parts": [
            _return("c1", {"seen": [1, 2.5, None]}),
            {"part_kind": "retry-prompt", "tool_name": "look", "tool_call_id": "c2", "content": "No lists."},
            _return("c3", "boom", "failed"),
            _return("c4", {"floats": [1e-05, 2.5e-06, -1.25e-09, 0.5, 1e-10, 1e22, 123.0, float("-inf")]}),
            _return("c5", [2.5e-06, float("nan")], "retried"),
        ],
    },
    {"kind": "response", "run_id": "r1", "parts": [{"part_kind": "text", "content": "Done."}]},
    {"kind": "response", "run_id": "r1", "parts": []},
    {
        **REQUEST,
        "run_id": "r2",
        "parts": [
            {"part_kind": "retry-prompt", "content": "Say it <system>again</system>."},
            {
                "part_kind": "retry-feedback",
                "content": [
                    {"type": "missing", "loc": ["x"], "msg": "Field required", "input": {}, "ctx": {}}
                ],
                "retry": {"cause": "validation_error"},
            },
            {
                "part_kind": "retry-feedback",
                "content": "Please return text.",
                "retry": {"cause": "no_output"},
            },
        ],
    },
    {"kind": "response", "run_id": "r2", "parts": [{"part_kind": "text", "content": "Again."}]},
]
"""A history of shapes the samples lack: arguments as spaced text, a list and none, legacy
retries with and without a tool, a failed return, floats pydantic writes otherwise than Python's
`json` (`1e-9`, `0.00001`), an empty response, feedback of every voice."""


def package_sent(history: list[Any]) -> list[dict[str, Any]]:
    """What pydantic-ai's own OpenAI chat model sends for `history` (reasoning in its field)."""
    messages = pytest.importorskip("pydantic_ai.messages")
    openai = pytest.importorskip("pydantic_ai.models.openai")
    providers = pytest.importorskip("pydantic_ai.providers.openai")
    models = pytest.importorskip("pydantic_ai.models")
    profile = openai.OpenAIModelProfile(
        openai_chat_send_back_thinking_parts="field", openai_chat_thinking_field="reasoning_content"
    )
    model = openai.OpenAIChatModel("gpt-4o", provider=providers.OpenAIProvider(api_key="-"), profile=profile)
    params = models.ModelRequestParameters()
    loaded = messages.ModelMessagesTypeAdapter.validate_python(history)
    sent = asyncio.run(model._map_messages(model.prepare_messages(list(loaded), params), params))
    return [json.loads(json.dumps(m, default=str)) for m in sent]


def normal(message: dict[str, Any]) -> dict[str, Any]:
    """A message as the replay reads it (null content is '', no empty reasoning), without the error
    flag the chat API has no field for (checked on its own)."""
    out = {k: v for k, v in message.items() if k != "is_error" and (k != "reasoning_content" or v)}
    if out.get("content") is None:
        out["content"] = ""
    if isinstance(out["content"], list):
        out["content"] = [{k: part[k] for k in sorted(part)} for part in out["content"]]
    return out


def ours(history: list[Any]) -> list[dict[str, Any]]:
    return [normal(m) for m in import_lines([json.dumps(history)], "h.json").messages]


def test_the_odd_history_is_sent_as_pydantic_ai_sends_it() -> None:
    assert ours(ODD) == [normal(m) for m in package_sent(ODD)]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_each_sample_is_sent_as_pydantic_ai_sends_it(path: Path) -> None:
    """A returned file stays in its result, where the package frames it in a user message after
    the results ('See file <id>.'): the framed image is the result's."""
    history = json.loads(path.read_text(encoding="utf-8"))
    sent = [normal(m) for m in package_sent(history)]
    framed = [m for m in sent if m["role"] == "user" and "<tool_result" in json.dumps(m)]
    mine = ours(history)
    with_files = [m for m in mine if m["role"] == "tool" and isinstance(m["content"], list)]
    assert [[p for p in m["content"] if p["type"] == "image_url"] for m in framed] == [
        m["content"] for m in with_files
    ]
    assert [m for m in mine if m not in with_files] == [
        m for m in sent if m not in framed and not str(m.get("content")).startswith("See file")
    ]


def test_what_is_not_sent_is_counted_and_errors_are_flagged() -> None:
    imported = import_lines([json.dumps(ODD)], "h.json")
    assert imported.format == "pydantic-ai"
    assert "skipped 1 × empty model response (nothing to send) (not replayed)" in imported.warnings
    assert any("builtin-tool-call" in w for w in imported.warnings)
    errors = [m["tool_call_id"] for m in imported.messages if m.get("is_error")]
    assert errors == ["c2", "c3", "c5"]


def test_several_runs_and_one_message_a_line_are_one_conversation() -> None:
    whole = import_lines([json.dumps(ODD)], "h.json").messages
    assert import_lines(lines(*ODD), "h.jsonl").messages == whole
    assert import_lines(lines(ODD[:3], ODD[3:]), "h.jsonl").messages == whole


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda h: h[1]["parts"].append({"part_kind": "mystery"}), "unknown response part_kind 'mystery'"),
        (lambda h: h[2]["parts"].append(_return("nope", "x")), "has no call before it"),
        (lambda h: h[0].update(parts=[{"part_kind": "user-prompt", "content": 3}]), "not text or a list"),
        (lambda h: h[2].update(kind=5), "a message's kind is 5; pydantic-ai writes request or response"),
        (lambda h: h[2].update(parts={"a": 1}), "a message's 'parts' is not a list"),
        (lambda h: h[1]["parts"][1].update(args="[" * 100_000 + "]" * 100_000), "nests deeper than 500"),
        (lambda h: h[1]["parts"][1].update(args='{"a":' * 900 + "1" + "}" * 900), "nests deeper than 500"),
    ],
    ids=[
        "unknown part",
        "return before call",
        "content a number",
        "kind a number",
        "parts an object",
        "args too deep to parse",
        "args too deep",
    ],
)
def test_a_shape_pydantic_ai_never_writes_is_an_error_at_its_line(change: Any, said: str) -> None:
    history = json.loads(json.dumps(ODD))
    change(history)
    with pytest.raises(TraceError, match=said) as raised:
        import_lines(lines(*history), "h.jsonl")
    assert raised.value.line is not None


@pytest.mark.parametrize(
    ("odd", "said"),
    [
        ({**ODD[2], "kind": 5}, "a message's kind is 5"),
        ({**ODD[2], "kind": ["request"]}, "a message's kind is ['request']"),
        ({**ODD[2], "parts": {"a": 1}}, "a message's 'parts' is not a list"),
        ("a request", "a message is str, not an object"),
    ],
    ids=["kind a number", "kind a list", "parts an object", "text"],
)
def test_a_message_of_another_shape_in_a_history_is_told_at_its_line_not_as_another_format(
    odd: Any, said: str
) -> None:
    history = [*ODD[:2], odd, *ODD[3:]]
    with pytest.raises(TraceError, match=re.escape(said)) as raised:
        import_lines(json.dumps(history, indent=1).splitlines(), "h.json")
    assert raised.value.line is not None and raised.value.line > 1
