"""Letta agent files (`.af`): read without Letta, each agent's in-context messages one conversation
chosen by `--session`, in Letta's order, the messages out of context counted, inner thoughts as
text beside the calls (with `put_inner_thoughts_in_kwargs`, a `thinking` argument of each call,
first, and of each tool; with reasoning entirely off, scrubbed) and reasoning apart, failed
returns as error results, and shapes Letta never writes refused at their line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.scenarios.load import load_scenario
from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.importers.base import SessionError
from ctxlab.workloads.importers.letta import is_letta
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, assert_paired, imported, replayed_requests

ONE = DATA / "letta/support-agent.af"
TWO = DATA / "letta/two-agents.af"
FILE = json.loads(ONE.read_text(encoding="utf-8"))
PNG = FILE["agents"][0]["messages"][5]["content"][1]["source"]["data"]


def _packed(status: str, message: str) -> str:
    return json.dumps(
        {"status": status, "message": message, "time": "2026-03-02 10:00:00 AM UTC+0000"}, indent=2
    )


def _calls(*called: tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, n, a in called
    ]


def test_an_agents_context_reads_as_letta_sends_it() -> None:
    imported = import_file(ONE)
    agent = FILE["agents"][0]
    messages = list(imported.messages)
    assert imported.format == "letta"
    assert messages[0] == {"role": "system", "content": agent["messages"][0]["content"][0]["text"]}
    assert messages[1]["role"] == "user" and "have been hidden from view" in messages[1]["content"]
    assert messages[2:] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": agent["messages"][5]["content"][0]["text"]},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
        {
            "role": "assistant",
            "content": "",  # reasoning entirely off: Letta scrubs the thoughts "Look up order 4417."
            "tool_calls": _calls(
                ("call-02", "fetch_order", {"order_id": "4417", "request_heartbeat": True}),
                ("call-03", "conversation_search", {"query": "order 4417", "request_heartbeat": True}),
            ),
            "reasoning_content": "She wants order 4417; look it up and keep the receipt in mind.",
        },
        {
            "role": "tool",
            "tool_call_id": "call-02",
            "content": _packed("Failed", "ConnectionError: orders service unavailable"),
            "is_error": True,
        },
        {
            "role": "tool",
            "tool_call_id": "call-03",
            "content": _packed(
                "OK", "Showing 1 of 1 results:\n[2026-02-27] user: I ordered two atlases, order 4417."
            ),
        },
        {"role": "user", "content": agent["messages"][8]["content"][0]["text"]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": _calls(
                (
                    "call-04",
                    "core_memory_append",
                    {"label": "human", "content": "Order 4417: two atlases.", "request_heartbeat": True},
                )
            ),
        },
        {"role": "tool", "tool_call_id": "call-04", "content": _packed("OK", "None")},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": _calls(
                (
                    "call-05",
                    "send_message",
                    {
                        "message": "Order 4417 holds two atlases; the order service is down, so I can't see "
                        "its status yet.",
                        "request_heartbeat": False,
                    },
                )
            ),
        },
        {"role": "tool", "tool_call_id": "call-05", "content": _packed("OK", "None")},
    ]
    assert_paired(messages)
    assert "skipped 3 × message not in the agent's context (not replayed)" in imported.warnings
    assert any("reasoning alone" in w or "no text and no calls" in w for w in imported.warnings)
    assert any("reasoning entirely off" in w for w in imported.warnings)
    assert (
        "skipped 3 × inner thoughts beside an assistant message's calls (Letta scrubs them, reasoning off) "
        "(not replayed)" in imported.warnings
    ), imported.warnings
    assert [t.name for t in imported.tools] == [
        "send_message",
        "conversation_search",
        "core_memory_append",
        "fetch_order",
    ]


def test_a_file_holds_one_conversation_per_agent_in_file_order() -> None:
    first, second = import_file(TWO), import_file(TWO, session=1)
    assert "agent 'moss' is replayed: agent 0 of the file's 2" in " ".join(first.warnings)
    assert "agent 'moss-sleeptime' is replayed: agent 1 of the file's 2" in " ".join(second.warnings)
    assert "skipped 1 × agent of the file not replayed (not replayed)" in second.warnings
    said = [m for m in second.messages if m["role"] == "tool"]
    assert said[0] == {
        "role": "tool",
        "tool_call_id": "call-11",
        "content": _packed("Failed", "ValueError: line 9 is beyond the block's 1 lines"),
        "is_error": True,
    }  # an older message with no tool_returns: Letta's packed failure is an error
    assert "is_error" not in said[1]
    with pytest.raises(SessionError, match="session 2 is beyond the file's 2 agents"):
        list(import_file(TWO, session=2).messages)


def _file(*messages: dict[str, Any], ids: list[str] | None = None, **agent: Any) -> dict[str, Any]:
    listed = [{"id": f"message-{k}", "type": "message", **m} for k, m in enumerate(messages)]
    held = {
        "name": "a",
        "system": "Be brief.",
        "messages": listed,
        "in_context_message_ids": [m["id"] for m in listed] if ids is None else ids,
        **agent,
    }
    return {
        "agents": [held],
        "groups": [],
        "blocks": [],
        "files": [],
        "sources": [],
        "tools": [],
        "mcp_servers": [],
    }


def _user(text: str = "Hi.") -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _imported(value: dict[str, Any]) -> list[dict[str, Any]]:
    return list(import_lines(json.dumps(value, indent=2).splitlines(), "agent.af").messages)


def test_an_older_result_nested_too_deep_for_json_is_its_text() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    called = {"role": "assistant", "content": [], "tool_calls": _calls(("c1", "f", {}))}
    result = {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": deep}]}
    sent = _imported(_file(_user(), called, result))[-1]
    assert sent == {"role": "tool", "tool_call_id": "c1", "content": deep}


def test_a_context_without_a_system_message_opens_with_the_agents_prompt() -> None:
    got = import_lines(json.dumps(_file(_user())).splitlines(), "agent.af")
    assert list(got.messages) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi."},
    ]
    assert any("its 'system' prompt is replayed" in w for w in got.warnings)


def test_text_parts_join_with_a_blank_line_and_a_summary_is_a_user_message() -> None:
    two = {"role": "summary", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert _imported(_file({"role": "system", "content": [{"type": "text", "text": "S"}]}, two))[1] == {
        "role": "user",
        "content": "a\n\nb",
    }


def test_only_an_object_with_lettas_keys_is_taken_for_letta() -> None:
    """`agents` alone is a common key: a file is Letta's when it has the other keys Letta writes."""
    assert not is_letta([{"agents": [], "messages": []}])
    assert is_letta([_file(_user())])
    assert import_lines([json.dumps(_file(_user()))], "x.json").format == "letta"


def _refusal(value: Any) -> str:
    with pytest.raises(TraceError) as caught:
        list(import_lines(json.dumps(value, indent=2).splitlines(), "agent.af", fmt="letta").messages)
    return str(caught.value)


TOOL = {
    "role": "tool",
    "content": [],
    "tool_call_id": None,
    "tool_returns": [{"tool_call_id": "nope", "status": "success"}],
}


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ({"agent": []}, "not a Letta agent file"),
        (_file(_user(), TOOL), "a tool result for 'nope' has no call before it"),
        (
            _file(_user(), ids=["message-0", "message-9"]),
            "in_context_message_ids[1] ('message-9') names no message",
        ),
        (
            _file(_user(), ids=["message-0", "message-0"]),
            "in_context_message_ids[1] ('message-0') is listed twice",
        ),
        (_file({"role": "robot", "content": []}), "its role is 'robot'"),
        (_file({"role": "user", "content": [{"type": "video"}]}), "not a content part Letta writes"),
        (_file({"role": "assistant", "content": [], "tool_calls": [{"id": 1}]}), "is not a call"),
        (_file(_user(), ids=None, messages=None), "no 'messages' list"),
    ],
)
def test_shapes_letta_never_writes_are_refused_at_their_line(value: Any, said: str) -> None:
    refusal = _refusal(value)
    assert said in refusal and "agent.af:" in refusal, refusal


def test_a_second_result_of_one_call_is_refused_at_its_line() -> None:
    called = {"role": "assistant", "content": [], "tool_calls": _calls(("c1", "f", {}))}
    twice = {"role": "tool", "content": [], "tool_returns": [{"tool_call_id": "c1", "status": "success"}] * 2}
    refusal = _refusal(_file(_user(), called, twice))
    assert "agent.af:" in refusal and "a second tool result for 'c1'" in refusal, refusal


def test_a_result_is_refused_at_its_messages_own_line() -> None:
    text = json.dumps(_file(_user(), TOOL), indent=2).splitlines()
    opening = [n for n, line in enumerate(text, start=1) if line == "        {"]  # where each message opens
    with pytest.raises(TraceError) as caught:
        list(import_lines(text, "agent.af").messages)
    assert str(caught.value).startswith(f"agent.af:{opening[1]}: a tool result for 'nope'"), caught.value


def test_ctxlab_import_and_replay_read_an_agent(tmp_path: Path) -> None:
    said, _, written = imported(TWO, tmp_path / "sleeptime.jsonl", "--session", "1")
    assert "(letta)" in said
    assert written == list(import_file(TWO, session=1).messages)
    last = replayed_requests(ONE, tmp_path / "results")[-1]
    assert {t["function"]["name"] for t in last["tools"]} == {
        "send_message",
        "conversation_search",
        "core_memory_append",
        "fetch_order",
    }
    sent = {m.get("tool_call_id"): m for m in last["messages"] if m["role"] == "tool"}
    assert sent["call-02"]["content"] == _packed("Failed", "ConnectionError: orders service unavailable")


def test_a_scenario_trace_reads_an_agent(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"name: s\nworkload:\n  trace: {{path: {TWO}, session: 1}}\n"
        "model: {context_size: 32000}\nstrategies: [{preset: none}]\n",
        encoding="utf-8",
    )
    loaded = load_scenario(path)
    assert any("agent 'moss-sleeptime'" in str(w) for w in loaded.warnings), loaded.warnings


KWARGS = DATA / "letta/thoughts-in-kwargs.af"
ON = {"model": "gpt-4.1-mini", "model_endpoint_type": "openai", "put_inner_thoughts_in_kwargs": True}


def _indented(thinking: str | None, **arguments: Any) -> str:
    """Arguments as Letta rewrites them: `thinking` first, indented by 2, non-ASCII kept."""
    return json.dumps({"thinking": thinking, **arguments}, indent=2, ensure_ascii=False)


def test_an_agent_with_thoughts_in_kwargs_sends_them_first_of_each_calls_arguments() -> None:
    imported = import_file(KWARGS)
    sent = [m for m in imported.messages if m["role"] == "assistant"]
    assert sent[0] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call-02",
                "type": "function",
                "function": {
                    "name": "fetch_order",
                    "arguments": '{\n  "thinking": "Look up order 4417.",\n  "order_id": "4417",\n'
                    '  "request_heartbeat": true\n}',
                },
            },
            {
                "id": "call-03",
                "type": "function",
                "function": {
                    "name": "conversation_search",
                    "arguments": '{\n  "thinking": "Look up order 4417.",\n  "query": "order 4417",\n'
                    '  "request_heartbeat": true\n}',
                },
            },
        ],
        "reasoning_content": "She wants order 4417; look it up and keep the receipt in mind.",
    }  # both calls carry the thoughts; reasoning is sent apart, as with the setting off
    assert sent[1]["content"] is None
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == (
        '{\n  "thinking": "Service down. Tell her what I know — and note it.",\n  "label": "human",\n'
        '  "content": "Order 4417: two atlases.",\n  "request_heartbeat": true\n}'
    )
    assert sent[-1] == {"role": "assistant", "content": "Glad to help, Ada."}  # a plain answer
    assert any("put_inner_thoughts_in_kwargs on" in w for w in imported.warnings)
    send = json.loads(imported.tools[0].parameters)
    assert list(send["properties"]) == ["thinking", "message", "request_heartbeat"]
    assert send["properties"]["thinking"] == {
        "type": "string",
        "description": "Deep inner monologue private to you only.",
    }
    assert send["required"] == ["thinking", "message", "request_heartbeat"]


def test_with_the_setting_off_the_thoughts_stay_the_text_and_the_tools_as_declared() -> None:
    """The sample's agent has reasoning entirely off: with `enable_reasoner` on, Letta keeps the text."""
    value = json.loads(ONE.read_text(encoding="utf-8"))
    value["agents"][0]["llm_config"]["enable_reasoner"] = True
    imported = import_lines(json.dumps(value, indent=2).splitlines(), "agent.af")
    called = [m for m in imported.messages if m.get("tool_calls")]
    assert [m["content"] for m in called] == [
        "Look up order 4417.",
        "Service down. Tell her what I know and note it.",
        "Answer her.",
    ]
    stored = [
        c["function"]["arguments"] for m in FILE["agents"][0]["messages"] for c in m["tool_calls"] or ()
    ]
    assert [c["function"]["arguments"] for m in called for c in m["tool_calls"]] == stored[1:]
    assert "thinking" not in imported.tools[0].parameters
    assert not any(
        "put_inner_thoughts_in_kwargs" in w or "reasoning entirely off" in w for w in imported.warnings
    )
    assert not any("scrubs" in w for w in imported.warnings)


def _assistant(content: list[dict[str, Any]], *called: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": _calls(*called) if called else None}


def _sent(message: dict[str, Any], **agent: Any) -> dict[str, Any]:
    """The first assistant message of an agent that has the setting on unless `agent` says else."""
    value = _file(_user(), message, **{"llm_config": ON, **agent})
    return next(m for m in _imported(value) if m["role"] == "assistant")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


REASONED = {"type": "reasoning", "is_native": True, "reasoning": "r", "signature": None}
IMAGE = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}


@pytest.mark.parametrize(
    ("content", "thinking"),
    [
        ([_text("One.")], "One."),
        ([_text("One."), _text("Two.")], "One.\n\nTwo."),
        ([REASONED, _text("One.")], "One."),
        ([], None),
        ([REASONED], None),
        ([REASONED, REASONED], ""),
        ([_text("One."), IMAGE], "One. [Image omitted]"),
        ([IMAGE, IMAGE], "[2 images omitted]"),
        ([IMAGE], "[Image Here]"),
    ],
)
def test_the_thoughts_are_the_text_letta_reads_from_the_parts(
    content: list[dict[str, Any]], thinking: str | None
) -> None:
    sent = _sent(_assistant(content, ("c1", "f", {"x": 1})))
    assert sent["tool_calls"][0]["function"]["arguments"] == _indented(thinking, x=1)
    assert sent["content"] is None


def test_every_call_of_a_message_carries_the_thoughts_and_an_argument_of_their_name_keeps_its_place() -> None:
    sent = _sent(
        _assistant([_text("Go\x00.")], ("c1", "f", {"a": "x\x00y"}), ("c2", "g", {"b": 1, "thinking": 2}))
    )
    assert [c["function"]["arguments"] for c in sent["tool_calls"]] == [
        '{\n  "thinking": "Go.",\n  "a": "xy"\n}',  # null bytes removed, as Letta does
        '{\n  "thinking": 2,\n  "b": 1\n}',
    ]


def test_a_plain_answer_keeps_its_text_and_an_approval_request_carries_the_thoughts() -> None:
    assert _sent(_assistant([_text("Hello.")])) == {"role": "assistant", "content": "Hello."}
    approval = {**_assistant([_text("Ask first.")], ("c1", "f", {})), "role": "approval"}
    assert _sent(approval)["tool_calls"][0]["function"]["arguments"] == _indented("Ask first.")


@pytest.mark.parametrize(
    ("agent", "config"),
    [
        ({"agent_type": "letta_v1_agent"}, {}),
        ({}, {"model": "o3-mini"}),
        ({}, {"model": "gpt-5.1"}),
        ({}, {"model_endpoint_type": "deepseek", "model": "deepseek-chat"}),
        ({}, {"model_endpoint_type": "anthropic", "model": "claude-sonnet-4-20250514"}),
        ({}, {"put_inner_thoughts_in_kwargs": False}),
    ],
)
def test_letta_turns_the_setting_off_for_some_agents_and_models(
    agent: dict[str, Any], config: dict[str, Any]
) -> None:
    message = _assistant([_text("Hm.")], ("c1", "f", {"x": 1}))
    sent = _sent(message, **{**agent, "llm_config": {**ON, **config}})
    assert sent["content"] == "Hm." and sent["tool_calls"][0]["function"]["arguments"] == '{"x": 1}'


def test_a_gpt_oss_model_sends_empty_content_and_lm_studio_asks_for_the_thoughts_first() -> None:
    message = _assistant([_text("Hm.")], ("c1", "f", {}))
    assert _sent(message, llm_config={**ON, "model": "gpt-oss-20b"})["content"] == ""
    tools = [{"id": "t", "json_schema": {"name": "f", "parameters": {"type": "object"}}}]
    value = _file(_user(), llm_config={**ON, "model_endpoint": "http://localhost:1234/v1"})
    got = import_lines(json.dumps({**value, "tools": tools}).splitlines(), "agent.af")
    assert json.loads(got.tools[0].parameters) == {
        "type": "object",
        "properties": {
            "thinking": {
                "type": "string",
                "description": "Deep inner monologue private to you only. Think before you act, so always "
                "generate arg 'thinking' first before any other arg.",
            }
        },
        "required": ["thinking"],
    }


def test_arguments_that_are_not_an_object_stay_as_stored_and_an_empty_list_of_calls_is_counted() -> None:
    odd = {
        "role": "assistant",
        "content": [_text("Hm.")],
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "[1]"}}],
    }
    got = import_lines(json.dumps(_file(_user(), odd, llm_config=ON)).splitlines(), "agent.af")
    assert list(got.messages)[-1]["tool_calls"][0]["function"]["arguments"] == "[1]"
    assert any("whose arguments are not a JSON object" in w for w in got.warnings)
    empty = {"role": "assistant", "content": [_text("Hm.")], "tool_calls": []}
    got = import_lines(json.dumps(_file(_user(), empty, llm_config=ON)).splitlines(), "agent.af")
    assert [m["role"] for m in got.messages] == ["system", "user"]
    assert any("empty 'tool_calls' list" in w for w in got.warnings)


def test_the_replay_sends_the_thoughts_in_the_arguments_and_the_tools_with_the_parameter(
    tmp_path: Path,
) -> None:
    last = replayed_requests(KWARGS, tmp_path / "results")[-1]
    called = [m for m in last["messages"] if m.get("tool_calls")]
    assert called[-1]["content"] is None
    assert called[-1]["tool_calls"][0]["function"]["arguments"] == _indented(
        "Answer her.",
        message="Order 4417 holds two atlases; the order service is down, so I can't see its status yet.",
        request_heartbeat=False,
    )
    assert all(next(iter(t["function"]["parameters"]["properties"])) == "thinking" for t in last["tools"])


OFF = {
    "model": "gpt-4.1-mini",
    "model_endpoint_type": "openai",
    "put_inner_thoughts_in_kwargs": False,
    "enable_reasoner": False,
    "max_reasoning_tokens": 0,
}


def test_with_reasoning_entirely_off_letta_scrubs_the_text_beside_calls_alone() -> None:
    """Letta's `scrub_inner_thoughts_from_messages`: an assistant message's text parts go when it
    has calls; its reasoning, its calls, a plain answer and an approval request are kept."""
    value = _file(
        _user(),
        _assistant([REASONED, _text("Thinking."), _text("More.")], ("c1", "f", {"x": 1})),
        {"role": "tool", "content": [], "tool_returns": [{"tool_call_id": "c1", "status": "success"}]},
        {**_assistant([_text("Ask first.")], ("c2", "g", {})), "role": "approval"},
        {"role": "tool", "content": [], "tool_returns": [{"tool_call_id": "c2", "status": "success"}]},
        _assistant([_text("Done.")]),
        llm_config=OFF,
    )
    got = import_lines(json.dumps(value).splitlines(), "agent.af")
    sent = [m for m in got.messages if m["role"] == "assistant"]
    assert sent == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": _calls(("c1", "f", {"x": 1})),
            "reasoning_content": "r",
        },
        {"role": "assistant", "content": "Ask first.", "tool_calls": _calls(("c2", "g", {}))},
        {"role": "assistant", "content": "Done."},
    ]
    assert any("reasoning entirely off" in w for w in got.warnings)
    assert any(w.startswith("skipped 1 × inner thoughts beside") for w in got.warnings), got.warnings


@pytest.mark.parametrize(
    "config",
    [
        {"enable_reasoner": True},
        {"enable_reasoner": None},  # absent: Letta's default is on
        {"max_reasoning_tokens": 1024},
        {"put_inner_thoughts_in_kwargs": True},  # the thoughts go in the calls instead
    ],
)
def test_with_any_reasoning_on_letta_keeps_the_text_beside_calls(config: dict[str, Any]) -> None:
    llm_config = {k: v for k, v in {**OFF, **config}.items() if v is not None}
    sent = _sent(_assistant([_text("Hm.")], ("c1", "f", {"x": 1})), llm_config=llm_config)
    arguments = sent["tool_calls"][0]["function"]["arguments"]
    if config.get("put_inner_thoughts_in_kwargs"):
        assert sent["content"] is None and arguments == _indented("Hm.", x=1)
    else:
        assert sent["content"] == "Hm." and arguments == '{"x": 1}'


def test_an_agent_with_no_llm_config_keeps_the_text_beside_calls() -> None:
    sent = _sent(_assistant([_text("Hm.")], ("c1", "f", {"x": 1})), llm_config=None)
    assert sent["content"] == "Hm."


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"put_inner_thoughts_in_kwargs": None},  # absent: off
        {"put_inner_thoughts_in_kwargs": True, "model": "o3-mini"},  # Letta's validator turns it off
        {
            "put_inner_thoughts_in_kwargs": True,
            "model": "claude-opus-4-1",
            "model_endpoint_type": "anthropic",
        },
        {"max_reasoning_tokens": None},  # absent: 0
    ],
)
def test_reasoning_is_entirely_off_as_letta_validates_the_config(config: dict[str, Any]) -> None:
    llm_config = {k: v for k, v in {**OFF, **config}.items() if v is not None}
    sent = _sent(_assistant([_text("Hm.")], ("c1", "f", {"x": 1})), llm_config=llm_config)
    assert sent == {"role": "assistant", "content": "", "tool_calls": _calls(("c1", "f", {"x": 1}))}


def test_a_letta_v1_agent_with_the_setting_on_keeps_its_thoughts_as_text() -> None:
    """Letta turns the setting off for a `letta_v1_agent` in the request alone, after the scrub."""
    config = {**OFF, "put_inner_thoughts_in_kwargs": True}
    sent = _sent(
        _assistant([_text("Hm.")], ("c1", "f", {"x": 1})), agent_type="letta_v1_agent", llm_config=config
    )
    assert sent["content"] == "Hm." and sent["tool_calls"][0]["function"]["arguments"] == '{"x": 1}'
