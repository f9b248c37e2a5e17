"""AutoGen saved state (an agent's or a team's `save_state()`, a model context's messages): read
without AutoGen, each agent's model context a conversation chosen by `--session`, a call
message's thought its text and a text message's thought reasoning, the system prompt AutoGen
does not save noted as missing, and shapes AutoGen never writes refused at their line."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.scenarios.load import load_scenario
from ctxlab.workloads.importers import import_file, import_lines
from ctxlab.workloads.importers.autogen import NO_PROMPT
from ctxlab.workloads.importers.base import SessionError
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, assert_paired, imported, lines, replayed_requests

AGENT = DATA / "autogen/assistant-state.json"
TEAM = DATA / "autogen/team-state.json"
CONTEXT = DATA / "autogen/context-messages.json"
PNG = json.loads(AGENT.read_text(encoding="utf-8"))["llm_context"]["messages"][0]["content"][1]["data"]
MEMORY = "\nRelevant memory content (in chronological order):\n1. The user prefers short answers.\n"


def _calls(*called: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in called]


def _ask(content: Any = "Look.") -> dict[str, Any]:
    return {"content": content, "source": "user", "type": "UserMessage"}


def _said(content: Any, thought: str | None = None) -> dict[str, Any]:
    return {"content": content, "thought": thought, "source": "assistant", "type": "AssistantMessage"}


def _call(call_id: str = "c1", arguments: Any = '{"q": 1}') -> dict[str, Any]:
    return {"id": call_id, "name": "look", "arguments": arguments}


def _results(*results: dict[str, Any]) -> dict[str, Any]:
    return {"content": list(results), "type": "FunctionExecutionResultMessage"}


def _result(call_id: str = "c1", content: Any = "seen", is_error: bool = False) -> dict[str, Any]:
    return {"content": content, "name": "look", "call_id": call_id, "is_error": is_error}


def _agent(*messages: Any) -> dict[str, Any]:
    return {"type": "AssistantAgentState", "version": "1.0.0", "llm_context": {"messages": list(messages)}}


def _member(state: Any, *buffered: Any) -> dict[str, Any]:
    return {"type": "ChatAgentContainerState", "agent_state": state, "message_buffer": list(buffered)}


def _team(**members: Any) -> dict[str, Any]:
    return {"type": "TeamState", "version": "1.0.0", "agent_states": members}


def _imported(*entries: Any, session: int = 0) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(lines(*entries), "state.json", session=session)
    return got.format, list(got.messages), got.warnings


def _refusal(value: Any) -> str:
    with pytest.raises(TraceError) as caught:
        import_lines(json.dumps(value, indent=2).splitlines(), "state.json")
    return str(caught.value)


def test_an_agent_state_reads_as_autogen_sends_it() -> None:
    imported = import_file(AGENT)
    weather = ("call-1", "get_weather", '{"city": "Paris"}')
    notes = ("call-2", "read_file", '{"path": "notes.txt"}')
    image = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    question = [{"type": "text", "text": "What is in this picture, and the weather in Paris?"}, image]
    assert imported.format == "autogen"
    assert list(imported.messages) == [
        {"role": "user", "content": question},
        {"role": "system", "content": MEMORY},
        {
            "role": "assistant",
            "content": "I will check the weather and read the notes.",
            "tool_calls": _calls(weather, notes),
        },
        {"role": "tool", "tool_call_id": "call-1", "content": "Paris: sunny, 24 C"},
        {"role": "tool", "tool_call_id": "call-2", "content": "no such file: notes.txt", "is_error": True},
        {
            "role": "assistant",
            "content": "The picture is a red square; Paris is sunny, and notes.txt does not exist.",
        },
        {"role": "user", "content": "Then read todo.txt."},
        {"role": "system", "content": MEMORY},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": _calls(("call-3", "read_file", '{"path": "todo.txt"}')),
        },
        {"role": "tool", "tool_call_id": "call-3", "content": "no such file: todo.txt", "is_error": True},
        {
            "role": "assistant",
            "content": "todo.txt does not exist either.",
            "reasoning_content": "Both files are missing; say so briefly.",
        },
    ]
    assert imported.warnings == (NO_PROMPT,)


def test_a_team_holds_one_conversation_per_agent_in_the_file_order() -> None:
    forecaster, planner = import_file(TEAM), import_file(TEAM, session=1)
    assert [m["role"] for m in forecaster.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert forecaster.messages[4] == {"role": "user", "content": "A fine day for a walk by the river."}
    assert list(planner.messages) == [
        {"role": "user", "content": "Plan my afternoon in Lyon."},
        {"role": "user", "content": "Lyon is sunny, 24 C."},
        {"role": "assistant", "content": "A fine day for a walk by the river."},
    ]
    said = "context 1 of the file's 2 ('forecaster', 'planner'; counted from 0)"
    assert any(said in w and "agent 'planner'" in w for w in planner.warnings), planner.warnings
    for counted in (
        "skipped 1 × model context of another agent (not replayed)",
        "skipped 1 × team message in an agent's buffer (not yet in its model context) (not replayed)",
        "skipped 1 × team manager's message thread (RoundRobinManagerState, not a model context)"
        " (not replayed)",
    ):
        assert counted in forecaster.warnings
    with pytest.raises(SessionError, match="session 2 is beyond the file's 2 agent contexts"):
        import_file(TEAM, session=2)


def test_a_model_contexts_messages_keep_their_system_message() -> None:
    imported = import_file(CONTEXT)
    assert imported.messages[0] == {"role": "system", "content": "Answer in one line."}
    assert imported.warnings == ()
    assert_paired(imported.messages)
    with pytest.raises(SessionError, match="beyond the file's 1 agent contexts"):
        import_file(CONTEXT, session=1)
    with pytest.raises(SessionError, match="beyond the file's 1 agent contexts"):
        import_file(AGENT, session=1)


def test_messages_one_a_line_and_a_context_state_are_read_alike() -> None:
    conversation = [_ask(), _said([_call()], thought="Looking."), _results(_result()), _said("Seen.")]
    fmt, listed, _ = _imported(conversation)
    assert fmt == "autogen"
    assert listed[1] == {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": _calls(("c1", "look", '{"q": 1}')),
    }
    assert _imported(*conversation)[1] == listed
    assert _imported({"messages": conversation})[1] == listed
    assert _imported(_agent(*conversation))[1] == listed


def test_an_inner_team_is_read_depth_first_and_named_by_its_path() -> None:
    inner = _team(writer=_member(_agent(_ask("Write."), _said("Written."))))
    society = {"type": "SocietyOfMindAgentState", "inner_team_state": inner}
    proxy = {"type": "BaseState", "version": "1.0.0"}
    team = _team(society=_member(society), user=_member(proxy), critic=_member(_agent(_ask("Judge."))))
    _, messages, warnings = _imported(team, session=1)
    assert messages == [{"role": "user", "content": "Judge."}]
    assert any("agent 'critic'" in w and "('society/writer', 'critic'" in w for w in warnings), warnings
    assert "skipped 1 × BaseState agent state (no model context) (not replayed)" in warnings
    assert _imported(team)[1][1] == {"role": "assistant", "content": "Written."}


def test_images_are_typed_by_their_bytes_and_others_counted() -> None:
    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0rest").decode()
    webp = base64.b64encode(b"RIFF\x00\x00\x00\x00WEBPVP8 ").decode()
    odd = base64.b64encode(b"BM not kept").decode()
    _, messages, warnings = _imported(_agent(_ask(["See:", {"data": jpeg}, {"data": webp}, {"data": odd}])))
    urls = [p["image_url"]["url"] for p in messages[0]["content"] if p["type"] == "image_url"]
    assert urls == [f"data:image/jpeg;base64,{jpeg}", f"data:image/webp;base64,{webp}"]
    assert any("user image of no PNG, JPEG, GIF or WebP bytes" in w for w in warnings)


def test_other_formats_are_not_taken_for_autogen() -> None:
    chat = [{"role": "user", "content": "Hi.", "type": "message"}, {"role": "assistant", "content": "Hello."}]
    assert import_lines(lines(chat), "chat.json").format != "autogen"
    assert import_lines(lines({"messages": chat}), "chat.json").format != "autogen"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (
            _agent(_ask(), _said([_call()]), _results(_result("nope"))),
            "a tool result for 'nope' has no call before it",
        ),
        (_agent(_ask(), _results(_result(None))), "a tool result names no call id"),  # type: ignore[arg-type]
        (
            _agent(_ask(), _said([_call(arguments={"q": 1})])),
            "message 1.content[0].arguments is dict, not text",
        ),
        (_agent(_ask(), _said(["look"])), "message 1.content[0] is not a call {id, name, arguments}"),
        (_agent(_ask(), _said(5)), "message 1: an assistant message's content is not text"),
        (_agent(_ask(), _said("Hi.", thought=5)), "message 1.thought is int, not text or null"),  # type: ignore[arg-type]
        (_agent(_ask(5)), "message 0: a user message's content is not text or a list"),
        (_agent(_ask(["Hi.", {"url": "x"}])), "message 0.content[1] is neither text nor an image"),
        (
            _agent(_ask([{"data": "not base64!"}])),
            "message 0.content[0]: an image's 'data' is not base64 text",
        ),
        (_agent({"content": 5, "type": "SystemMessage"}), "message 0.content is int, not text"),
        (
            _agent(_ask(), _said([_call()]), _results(_result(content=[1]))),
            "message 2.content[0].content is list",
        ),
        (
            _agent(_ask(), {"content": "Hi.", "type": "ToolCallSummaryMessage"}),
            "its type is 'ToolCallSummaryMessage'",
        ),
        (_agent(_ask(), "Hi."), "message 1 is not an autogen-core LLM message: it is str"),
        (
            {"type": "AssistantAgentState", "llm_context": {}},
            "'llm_context' is not an object with a 'messages' list",
        ),
        (_team(a=_member(_team(b=5))), "the state of 'a/b' is int, not an object"),
        ({"type": "TeamState", "agent_states": []}, "the team: 'agent_states' is not an object"),
        ({"type": "AssistantAgentState"}, "the agent: 'llm_context' is not an object with a 'messages' list"),
        ([_ask(), {"content": "Hi.", "type": "TextMessage"}], "message 1 is not an autogen-core LLM message"),
    ],
)
def test_shapes_autogen_never_writes_are_refused_at_their_line(value: Any, said: str) -> None:
    refusal = _refusal(value)
    assert said in refusal and "state.json:" in refusal, refusal


def test_a_message_is_refused_at_its_own_line_in_the_document() -> None:
    state = _agent(_ask(), _said([_call()]), _results(_result("nope")))
    text = json.dumps(state, indent=2).splitlines()
    openings = [n for n, line in enumerate(text, start=1) if line == "      {"]  # where each message opens
    with pytest.raises(TraceError) as caught:
        import_lines(text, "state.json")
    assert str(caught.value).startswith(f"state.json:{openings[2]}: a tool result for 'nope'"), caught.value


def test_anything_after_a_state_is_refused() -> None:
    with pytest.raises(TraceError, match="holds one saved state, and nothing after it"):
        import_lines(lines(_agent(_ask()), _ask()), "state.jsonl")
    with pytest.raises(TraceError, match="not AutoGen saved state"):
        import_lines(lines(_ask(), {"role": "user"}), "messages.jsonl")


def test_ctxlab_import_and_replay_read_a_teams_agent(tmp_path: Path) -> None:
    said, _, written = imported(TEAM, tmp_path / "planner.jsonl", "--session", "1")
    assert "(autogen)" in said
    assert written == list(import_file(TEAM, session=1).messages)
    last = replayed_requests(AGENT, tmp_path / "results")[-1]["messages"]
    assert {"role": "tool", "tool_call_id": "call-2", "content": "no such file: notes.txt"} in [
        {k: m[k] for k in ("role", "tool_call_id", "content") if k in m} for m in last
    ]


def test_a_scenario_trace_reads_a_teams_agent(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"name: s\nworkload:\n  trace: {{path: {TEAM}, session: 1}}\n"
        "model: {context_size: 32000}\nstrategies: [{preset: none}]\n",
        encoding="utf-8",
    )
    loaded = load_scenario(path)
    assert any("agent 'planner'" in str(w) for w in loaded.warnings), loaded.warnings
