"""Trace replay: the six vendored real transcripts, protocol breaks, bad files, tool files, round trips."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock, utf8_len
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.protocol import RULES, violations
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.workloads.trace import (
    JOIN,
    Replayable,
    TraceError,
    load_tools,
    map_wire,
    offered,
    parse_tools,
    read_trace,
)
from ctxlab.workloads.transcript import script_transcript, transcript_form
from tests.strategies import ALPHABET, tool_inputs, tool_lists

TRACES = [
    "deerflow_deepseek-v3.2_zh-jiangsu-football-site_5aa47db1.jsonl",
    "deerflow_kimi-k2.5_caren-landing-page_b83fbb2a.jsonl",
    "openhands_gpt-4o_tac-safety-meeting-topics.jsonl",
    "swe-agent_fc_marshmallow-1867_replace-from-source.jsonl",
    "tau-bench_gpt-4o_airline_task02_trial1.jsonl",
    "tau2_gpt-4.1_retail_task55.jsonl",
]
KIMI = TRACES[1]
TAU2 = TRACES[5]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def result_text(call: ScriptedCall) -> str:
    return "".join(p.text for p in call.result or () if isinstance(p, TextBlock))


def assistant_texts(script: Script) -> list[str]:
    texts = []
    for turn in script.turns:
        texts += [r.text for r in turn.rounds if r.text]
        texts.append(turn.final)
    return [t for t in texts if t]


def script_bytes(script: Script) -> int:
    total = utf8_len(script.system_prompt)
    for turn in script.turns:
        total += sum(p.tally.nbytes for p in turn.user) + utf8_len(turn.final)
        for round_ in turn.rounds:
            total += utf8_len(round_.text or "")
            total += sum(utf8_len(c.input) + utf8_len(result_text(c)) for c in round_.calls)
    return total


def ended_on_calls(wires: list[dict[str, Any]]) -> list[int]:
    """The turns (one per user message) whose last assistant message makes calls."""
    last: list[dict[str, Any] | None] = []
    for wire in wires:
        if wire["role"] == "user":
            last.append(None)
        elif wire["role"] == "assistant" and last:
            last[-1] = wire
    return [n for n, message in enumerate(last) if message is not None and message.get("tool_calls")]


@pytest.mark.parametrize("name", TRACES)
def test_vendored_transcripts_map_call_for_call_and_text_for_text(traces_dir: Path, name: str) -> None:
    wires = lines(traces_dir / name)
    workload = read_trace(traces_dir / name)
    script = workload.script
    assert workload.name == name.removesuffix(".jsonl")
    assert [note.split(":")[0] for note in workload.notes] == [f"turn {n}" for n in ended_on_calls(wires)]

    file_calls = [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for w in wires
        for c in w.get("tool_calls") or ()
    ]
    assert [(c.id, c.tool, c.input) for c in script.calls()] == file_calls
    results = {w["tool_call_id"]: w["content"] for w in wires if w["role"] == "tool"}
    assert len(results) == sum(w["role"] == "tool" for w in wires)
    assert {c.id: result_text(c) for c in script.calls()} == results

    leading = 0
    while wires[leading]["role"] == "system":
        leading += 1
    assert script.system_prompt == JOIN.join(w["content"] for w in wires[:leading])
    users = [w["content"] for w in wires[leading:] if w["role"] in ("user", "system")]
    assert [p.text for t in script.turns for p in t.user if isinstance(p, TextBlock)] == users
    assert len(script.turns) == sum(w["role"] == "user" for w in wires)
    said = [w["content"] for w in wires if w["role"] == "assistant" and w["content"]]
    assert JOIN.join(assistant_texts(script)) == JOIN.join(said)

    # Nothing is lost or invented: every content and argument byte of the file is in the script.
    file_bytes = sum(utf8_len(w["content"] or "") for w in wires) + sum(utf8_len(c[2]) for c in file_calls)
    assert script_bytes(script) == file_bytes


@pytest.mark.parametrize("name", TRACES)
def test_source_violations_are_the_manifests(traces_dir: Path, name: str) -> None:
    workload = read_trace(traces_dir / name)
    if name == KIMI:
        assert [(v.rule, v.index, v.call_id, v.kind) for v in workload.source_violations] == [
            ("openai", 21, "write_todos:14", "dangling_call"),
            ("openai", 22, "write_todos:14", "orphan_result"),
        ]
    elif name == TAU2:  # the agent greets before the user speaks: Bedrock wants a user message first
        assert [(v.rule, v.index, v.kind) for v in workload.source_violations] == [
            ("bedrock", 1, "assistant_first")
        ]
    else:
        assert workload.source_violations == ()
    # The replay itself is well formed, whatever the source did.
    assert violations(script_transcript(workload.script), RULES) == []


def test_kimi_results_land_on_their_calls_despite_the_source_order(traces_dir: Path) -> None:
    wires = lines(traces_dir / KIMI)
    script = read_trace(traces_dir / KIMI).script
    (turn,) = script.turns
    todo = next(c for c in script.calls() if c.id == "write_todos:14")
    assert result_text(todo) == wires[22]["content"]
    rounds = [[c.id for c in r.calls] for r in turn.rounds]
    assert rounds.index(["write_todos:14"]) + 1 == rounds.index(["present_files:15"])
    assert turn.final == wires[26]["content"]


def test_tau2_leading_assistant_and_trailing_user(traces_dir: Path) -> None:
    wires = lines(traces_dir / "tau2_gpt-4.1_retail_task55.jsonl")
    script = read_trace(traces_dir / "tau2_gpt-4.1_retail_task55.jsonl").script
    first, last = script.turns[0], script.turns[-1]
    assert first.user == (TextBlock(text=wires[2]["content"]),)
    assert first.rounds[0].text == wires[1]["content"]  # the greeting opens the first reply
    assert [c.id for c in first.rounds[0].calls] == [c["id"] for c in wires[3]["tool_calls"]]
    assert last.user == (TextBlock(text=wires[27]["content"]),)
    assert last.rounds == () and last.final == ""  # the replay ends with one final model call


def test_consecutive_text_only_assistant_messages_are_joined(traces_dir: Path) -> None:
    name = "deerflow_deepseek-v3.2_zh-jiangsu-football-site_5aa47db1.jsonl"
    wires = lines(traces_dir / name)
    script = read_trace(traces_dir / name).script
    assert wires[4] == {"role": "assistant", "content": ""}
    assert script.turns[0].final == wires[3]["content"]


def wire_user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def wire_calls(*ids: str, text: str | None = None) -> dict[str, Any]:
    calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": text, "tool_calls": calls}


def wire_result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_protocol_breaks_are_mapped_faithfully_and_reported() -> None:
    wires = [
        wire_user("go"),
        wire_calls("a", "b"),
        wire_result("a", "ra"),
        wire_user("hurry"),  # b is answered only after this
        wire_result("b", "rb"),
        wire_calls("a"),  # a repeated id
        wire_result("a", "ra2"),
        wire_result("zzz", "orphan"),
        wire_calls("c"),  # never answered
        {"role": "assistant", "content": "done"},
    ]
    workload = map_wire(wires, name="broken")
    script = workload.script
    assert [(c.id, result_text(c)) for c in script.calls()] == [
        ("a", "ra"),
        ("b", "rb"),
        ("a_dup2", "ra2"),
        ("c", ""),
    ]
    assert [len(t.rounds) for t in script.turns] == [1, 2]
    assert script.turns[1].final == "done"
    assert workload.notes == (
        "message 5: call id 'a' repeats; replayed as 'a_dup2'",
        "message 7: result for 'zzz' answers no unanswered call; dropped",
        "call 'c' has no result in the source; replayed with an empty one",
        "turn 0: the source's reply ends on its tool calls; the replay asks the model once more, "
        "for an empty final answer (one request the source did not make)",
    )
    kinds = {(v.rule, v.kind, v.call_id) for v in workload.source_violations}
    assert ("openai", "dangling_call", "b") in kinds
    assert ("openai", "orphan_result", "zzz") in kinds
    assert ("openai", "duplicate_id", "a") in kinds
    assert ("openai", "dangling_call", "c") in kinds
    assert violations(script_transcript(script), RULES) == []


def test_calls_that_close_the_transcript_unanswered_are_no_source_violation() -> None:
    # The session stopped after its last calls (a final submit, an interrupted run): no request
    # of the source held them unanswered. The same calls followed by anything but results did.
    ended = [
        wire_user("go"),
        wire_calls("a"),
        wire_result("a", "ra"),
        wire_calls("b", "c"),
        wire_result("b", "rb"),
    ]
    workload = map_wire(ended, name="ended")
    assert workload.source_violations == ()
    assert workload.notes == (
        "call 'c' has no result in the source; replayed with an empty one",
        "turn 0: the source's reply ends on its tool calls; the replay asks the model once more, "
        "for an empty final answer (one request the source did not make)",
    )
    went_on = map_wire([*ended, wire_user("and?")], name="went-on")
    assert {(v.rule, v.kind, v.call_id) for v in went_on.source_violations} == {
        ("openai", "dangling_call", "c"),
        ("anthropic", "dangling_call", "c"),
    }
    reused = [wire_user("go"), wire_calls("c"), wire_user("next"), wire_calls("c")]  # an id used again
    kinds = {(v.rule, v.kind, v.index) for v in map_wire(reused, name="reused").source_violations}
    assert kinds == {  # the first c dangles when the user speaks; the closing one is left out
        ("openai", "dangling_call", 2),
        ("anthropic", "dangling_call", 2),
        *((rule, "duplicate_id", 3) for rule in RULES),
    }


def test_system_messages_user_merging_and_missing_users() -> None:
    wires = [
        {"role": "developer", "content": "sys A"},
        {"role": "system", "content": "sys B"},
        {"role": "assistant", "content": "hello"},
        {"role": "system", "content": "<uploaded_files>x</uploaded_files>"},
        wire_user("hi"),
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "part 1"}, {"type": "text", "text": "+2"}],
        },
        {"role": "system", "content": "late rule"},
        wire_user("again"),
    ]
    script = map_wire(wires).script
    assert script.system_prompt == "sys A\n\nsys B"
    first, second = script.turns
    assert first.user == (TextBlock(text="<uploaded_files>x</uploaded_files>"), TextBlock(text="hi"))
    assert first.final == "hello\n\npart 1+2"
    assert second.user == (TextBlock(text="late rule"), TextBlock(text="again")) and second.final == ""
    only_assistant = map_wire([{"role": "assistant", "content": "alone"}]).script
    assert only_assistant.turns == (ScriptedTurn(user=(), final="alone"),)


def test_images_in_content_become_data_blocks() -> None:
    wires = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "image_url", "image_url": {"url": "https://x.invalid/p.JPG?size=2"}},
                {"type": "image_url", "image_url": "https://x.invalid/raw"},
            ],
        }
    ]
    (turn,) = map_wire(wires).script.turns
    assert turn.user[1:] == (
        DataBlock(media_type="image/png", source="iVBORw0KGgo=", kind="base64"),
        DataBlock(media_type="image/jpeg", source="https://x.invalid/p.JPG?size=2"),
        DataBlock(media_type="image/*", source="https://x.invalid/raw"),
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "{not json",
            "bad.jsonl:2: not JSON (Expecting property name enclosed in double quotes at column 2)",
        ),
        ("[1, 2]", "bad.jsonl:2: not a message: expected a JSON object with a 'role', got list"),
        ('{"content": "x"}', "bad.jsonl:2: not a message: no 'role' field"),
        (
            '{"role": "function", "content": "x"}',
            "bad.jsonl:2: a 'function' message answers no 'function_call' before it",
        ),
        ('{"role": null, "content": "x"}', "bad.jsonl:2: unknown role null; expected one of system"),
        (
            '{"role": "user", "content": 5}',
            "bad.jsonl:2: 'content' must be a string, null or a list of parts, got int",
        ),
        (
            '{"role": "user", "content": [{"type": "audio"}]}',
            'bad.jsonl:2: unsupported content part {"type": "audio"}',
        ),
        ('{"role": "tool", "content": "x"}', "bad.jsonl:2: a tool message needs a 'tool_call_id' string"),
        (
            '{"role": "user", "tool_calls": [{"id": "a"}]}',
            "bad.jsonl:2: 'tool_calls' must be a list, on assistant",
        ),
        (
            '{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}',
            "bad.jsonl:2: tool_calls[0] has no 'id'",
        ),
        (
            '{"role": "assistant", "tool_calls": [{"id": "a", "function": {}}]}',
            "bad.jsonl:2: tool_calls[0].function has no 'name'",
        ),
        (
            '{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": 3}}]}',
            "bad.jsonl:2: tool_calls[0].function.arguments must be a JSON string",
        ),
    ],
)
def test_bad_files_name_file_and_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"role": "user", "content": "ok"}\n' + content + "\n", encoding="utf-8")
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert str(caught.value).startswith(str(tmp_path / expected)), str(caught.value)
    assert caught.value.line == 2


def test_blank_lines_are_skipped_and_empty_files_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '\n{"role": "user", "content": "hi"}\n\n{"role": "assistant", "content": "yo", '
        '"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"路径": 1}}}]}\n',
        encoding="utf-8",
    )
    workload = read_trace(path, name="mine")
    assert workload.name == "mine" and next(workload.script.calls()).input == '{"路径": 1}'
    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(TraceError, match=r"empty\.jsonl: the transcript has no messages"):
        read_trace(tmp_path / "empty.jsonl")
    (tmp_path / "system.jsonl").write_text('\n{"role": "system", "content": "Be terse."}\n', encoding="utf-8")
    with pytest.raises(
        TraceError, match=r"system\.jsonl:2: the transcript has only a system prompt; there is"
    ):
        read_trace(tmp_path / "system.jsonl")
    with pytest.raises(TraceError, match=r"missing\.jsonl: cannot read the transcript"):
        read_trace(tmp_path / "missing.jsonl")


_BY_ROLE: dict[str, dict[str, Any]] = {
    "system": {"role": "system", "content": "Be terse."},
    "developer": {"role": "developer", "content": "Be terse."},
    "user": {"role": "user", "content": "hi"},
    "assistant": {"role": "assistant", "content": "yo"},
    "tool": {"role": "tool", "tool_call_id": "c", "content": "ok"},
}


@given(st.lists(st.sampled_from(sorted(_BY_ROLE)), min_size=1, max_size=6))
def test_replayable_refuses_exactly_what_the_mapping_refuses(roles: list[str]) -> None:
    replayable = Replayable()
    for role in roles:
        replayable.see("system" if role == "developer" else role)
    refusal = replayable.refusal()
    try:
        map_wire([_BY_ROLE[role] for role in roles])
    except ValueError as error:
        assert refusal is not None and str(error) == f"message 0: {refusal}"
    else:
        assert refusal is None


def test_tool_files_take_flat_and_openai_forms(tmp_path: Path) -> None:
    flat = {"name": "Read", "description": "Read a file.", "parameters": {"type": "object"}}
    openai = {
        "type": "function",
        "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}},
    }
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([flat, openai]), encoding="utf-8")
    assert load_tools(path) == (
        ToolSchema.of("Read", "Read a file.", {"type": "object"}),
        ToolSchema.of("bash", "", {"type": "object", "properties": {}}),
    )
    for bad, message in [
        ({"name": "x"}, "expected a JSON list of tool schemas, got dict"),
        ([{"description": "no name"}], "item 0: expected {name, description, parameters} or the OpenAI form"),
        ([{"name": "x", "parameters": []}], "item 0 (x): 'parameters' must be an object"),
    ]:
        with pytest.raises(TraceError, match=message.replace("(", r"\(").replace(")", r"\)")):
            parse_tools(bad)
    (tmp_path / "broken.json").write_text("[", encoding="utf-8")
    with pytest.raises(TraceError, match=r"broken.json:1: not JSON"):
        load_tools(tmp_path / "broken.json")


def test_a_tools_file_of_one_schema_a_line_is_read_as_their_list(tmp_path: Path) -> None:
    flat = {"name": "Read", "description": "Read a file.", "parameters": {"type": "object"}}
    openai = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    path = tmp_path / "tools.jsonl"
    path.write_text(f"{json.dumps(flat)}\n\n{json.dumps(openai)}\n", encoding="utf-8")
    assert [tool.name for tool in load_tools(path)] == ["Read", "bash"]
    path.write_text(f"{json.dumps(flat)}\n{{not json\n", encoding="utf-8")
    with pytest.raises(
        TraceError, match=r"tools.jsonl:2: not JSON .*; a tools file is one JSON list of schemas"
    ):
        load_tools(path)
    path.write_text(f"{json.dumps(flat)}\n[1]\n", encoding="utf-8")  # each line must be a schema
    with pytest.raises(TraceError, match=r"item 1: expected"):
        load_tools(path)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_tools_file_s_lines_end_at_newlines_alone(tmp_path: Path, separator: str) -> None:
    """JSON text may hold U+2028 and its kind raw, which `str.splitlines` would split at: a
    schema whose description holds one is still one line."""
    described = {"name": "search", "description": f"Find{separator}things", "parameters": {"type": "object"}}
    other = {"name": "read", "parameters": {"type": "object"}}
    path = tmp_path / "tools.jsonl"
    path.write_text(f"{json.dumps(described, ensure_ascii=False)}\n{json.dumps(other)}\n", encoding="utf-8")
    assert [(tool.name, tool.description) for tool in load_tools(path)] == [
        ("search", f"Find{separator}things"),
        ("read", ""),
    ]


def test_read_trace_passes_tool_schemas_through(traces_dir: Path) -> None:
    tools = (ToolSchema.of("bash", "Run a command.", {"type": "object"}),)
    workload = read_trace(traces_dir / TRACES[2], tools=tools)
    assert workload.script.tools == tools


# ---------------------------------------------------------------------------------------------
# Round trip: a script's own OpenAI view maps back to the same script.

nonempty = st.text(alphabet=ALPHABET, min_size=1, max_size=30)
image = st.builds(
    DataBlock,
    media_type=st.sampled_from(["image/png", "image/jpeg"]),
    source=st.just("aGVsbG8="),
    kind=st.just("base64"),
)
user_parts: st.SearchStrategy[tuple[Part, ...]] = st.lists(
    st.one_of(st.builds(TextBlock, text=nonempty), image), min_size=1, max_size=3
).map(tuple)
results = st.one_of(
    st.none(),
    st.lists(st.builds(TextBlock, text=st.text(alphabet=ALPHABET, max_size=30)), max_size=3).map(tuple),
)
calls = st.builds(
    ScriptedCall,
    tool=st.sampled_from(["Read", "bash", "TaskList"]),
    input=tool_inputs(),
    result=results,
    error=st.booleans(),
)
rounds = st.builds(
    ScriptedRound,
    text=st.one_of(st.none(), st.text(alphabet=ALPHABET, max_size=30)),
    thinking=st.one_of(st.none(), nonempty),
    calls=st.lists(calls, min_size=1, max_size=3).map(tuple),
)
turns = st.builds(
    ScriptedTurn,
    user=user_parts,
    rounds=st.lists(rounds, max_size=3).map(tuple),
    final=st.text(alphabet=ALPHABET, max_size=30),
)
scripts = st.builds(
    Script,
    system_prompt=st.text(alphabet=ALPHABET, max_size=30),
    tools=tool_lists,
    turns=st.lists(turns, min_size=1, max_size=4).map(tuple),
)


@given(scripts)
def test_a_scripts_own_transcript_maps_back_to_an_equivalent_script(script: Script) -> None:
    wires = script_transcript(script)
    workload = map_wire(wires, tools=script.tools)
    assert workload.source_violations == () and workload.notes == offered(script.tools)[1]
    assert all("OpenAI takes a tool name" in note for note in workload.notes)  # '工具': noted, not repaired
    assert transcript_form(workload.script) == transcript_form(assign_call_ids(script))
    assert script_transcript(workload.script) == wires


def test_a_jsonl_transcript_s_notes_name_the_line_of_the_message(tmp_path: Path) -> None:
    """A note names a JSONL file's message by its line as well as its index (from 0): blank
    lines and a leading system line make the two differ."""
    lines = [wire_user("go"), wire_calls("a"), wire_result("a", "ra"), wire_result("zzz", "orphan")]
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(json.dumps(m) for m in lines[:2]) + "\n\n" + "\n".join(json.dumps(m) for m in lines[2:])
    )
    assert (
        "line 5 (message 3): result for 'zzz' answers no unanswered call; dropped" in read_trace(path).notes
    )


def test_an_anthropic_block_read_as_openai_chat_names_the_format_that_reads_it() -> None:
    block = {"type": "tool_result", "tool_use_id": "t1", "content": "x"}
    with pytest.raises(ValueError, match=r"an Anthropic content block: give --format anthropic-messages"):
        map_wire([{"role": "user", "content": [block]}])
