"""The parity driver runs the real agentscope 2.0.11 agent and records what the lab is compared with.

The ch08 book numbers are reproduced exactly; the other runs show that the trace captures each
behaviour the lab must mirror (parallel batches, error results, images, truncation with offload,
failing summarizers, the clock, task tools, the forced final answer, the compression tool).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from ctxlab.core.agentscope.formatter import DataTexts, sent_context
from ctxlab.core.messages.blocks import DataBlock, HintBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.presets.agentscope.config import ContextConfig
from ctxlab.texts import agentscope_texts
from tests.parity.ch08 import RETRIEVE, WINDOWS, ch08_workload
from tests.parity.driver import check_script, run_agentscope
from tests.parity.spec import ParityConfig, WorkspaceKind
from tests.parity.trace import BlockShape, MessageShape, ModelCall, Offload, ParityTrace, TaskRecord

ESTIMATOR = AgentScopeEstimator()
TRUNCATED_SUMMARY = "<system-info>Some earlier messages were truncated for limited context.</system-info>"


def retrieve(query: str, *parts: Part, error: bool = False) -> ScriptedCall:
    """A `retrieve` call returning `parts` (a text echo of the query when none are given)."""
    result = parts or (TextBlock(text=f"passages for {query}"),)
    return ScriptedCall(tool="retrieve", input=json.dumps({"query": query}), result=result, error=error)


def one_turn(*rounds: ScriptedRound, final: str = "done") -> Script:
    turn = ScriptedTurn(user=(TextBlock(text="hi"),), rounds=rounds, final=final)
    return assign_call_ids(Script(system_prompt="sys", tools=(RETRIEVE,), turns=(turn,)))


def hints(trace: ParityTrace) -> list[str]:
    return [b.text for m in trace.final_messages for b in m.blocks if isinstance(b, HintBlock)]


def lab_count(call: ModelCall, script: Script) -> int:
    """The lab's estimator on the recorded request, for calls sent with the script's tools."""
    assert call.tools == tuple(t.name for t in script.tools)
    return ESTIMATOR.count(call.request, script.tools)


@pytest.fixture(scope="module")
def book() -> dict[int, ParityTrace]:
    return {window: run_agentscope(*ch08_workload(window)) for window in WINDOWS}


# --- ch08: the book's numbers -------------------------------------------------------------------


def test_ch08_large_window_grows_by_one_round_per_call(book: dict[int, ParityTrace]) -> None:
    trace = book[1_000_000]
    assert trace.input_tokens("messages") == (144, 1652, 3160, 4668, 6176, 7684, 9192)
    assert {c.kind for c in trace.calls} == {"reasoning"}
    assert (len(trace.final_context), len(trace.final_summary), trace.compressions) == (2, 0, ())
    script, _ = ch08_workload(1_000_000)
    assert [lab_count(c, script) for c in trace.calls] == list(trace.input_tokens())


def test_ch08_small_window_reproduces_the_book(book: dict[int, ParityTrace]) -> None:
    trace = book[4_000]
    series = trace.input_tokens("messages")
    assert series == (144, 1652, 3160, 4936, 258, 1766, 3542, 258, 1766)
    assert [c.kind for c in trace.calls].count("summary") == 2
    assert (trace.calls[3].kind, trace.calls[6].kind) == ("summary", "summary")
    assert (max(series), series[-1]) == (4936, 1766)
    assert (len(trace.final_context), len(trace.final_summary)) == (1, 293)
    assert [c.tokens.as_sent for c in trace.of_kind("summary")] == [5363, 3969]
    assert [c.tokens.preflight for c in trace.of_kind("summary")] == [5318, 3924]
    assert [c.tokens.messages for c in trace.of_kind("reasoning")] == [144, 1652, 3160, 258, 1766, 258, 1766]


def test_ch08_compression_leaves_only_the_empty_usage_carrier(book: dict[int, ParityTrace]) -> None:
    """AgentScope quirk: when the whole reply is compressed, an empty assistant message with the
    reply id carries its usage; later blocks of the reply go into it (1 context message)."""
    trace = book[4_000]
    reply_id = trace.final_context[0].id
    carrier = MessageShape(role="assistant", id=reply_id, blocks=())
    assert [(c.before_call, c.trigger, c.context) for c in trace.compressions] == [
        (4, "auto", (carrier,)),
        (7, "auto", (carrier,)),
    ]
    assert trace.final_context[0].blocks == (
        BlockShape("hint"),
        BlockShape("tool_call", "call-0006"),
        BlockShape("tool_result", "call-0006"),
        BlockShape("text"),
    )
    assert all(c.summary == trace.final_summary for c in trace.compressions)


def test_ch08_summary_request_has_no_agent_tools_and_the_frozen_time(book: dict[int, ParityTrace]) -> None:
    summary = book[4_000].of_kind("summary")[0]
    assert summary.tools == ("generate_structured_output",)
    assert (summary.invocation, summary.tool_choice) == (1, "generate_structured_output")
    prompt = summary.request[-1]
    assert prompt.role == "user"
    prompt_text, instruction = (b.text for b in prompt.blocks if isinstance(b, TextBlock))
    assert "2026-01-01T00:00:00 (UTC)" in prompt_text
    assert "**MUST** call the tool named 'generate_structured_output'" in instruction


def test_runs_are_deterministic_with_counter_ids(book: dict[int, ParityTrace]) -> None:
    again = run_agentscope(*ch08_workload(4_000))
    assert again == book[4_000]
    assert all(m.id.startswith("as-") for m in again.final_context)


# --- what the trace captures --------------------------------------------------------------------


def test_parallel_batch_is_stored_calls_first() -> None:
    script = one_turn(
        ScriptedRound(text="three at once", calls=(retrieve("a"), retrieve("b"), retrieve("c")))
    )
    trace = run_agentscope(script, ParityConfig(context_size=100_000))
    ids = ("call-0001", "call-0002", "call-0003")
    assert trace.final_context[1].blocks == (
        BlockShape("hint"),
        BlockShape("text"),
        *(BlockShape("tool_call", i) for i in ids),
        *(BlockShape("tool_result", i) for i in ids),
        BlockShape("text"),
    )
    wire = trace.calls[1].openai()
    assert [c["id"] for c in wire[3]["tool_calls"]] == list(ids)
    assert [(w["role"], w["tool_call_id"], w["content"]) for w in wire[4:]] == [
        ("tool", i, f"passages for {q}") for i, q in zip(ids, "abc", strict=True)
    ]
    assert [lab_count(c, script) for c in trace.calls] == list(trace.input_tokens())


def test_error_results_keep_their_state_and_repeats_bring_the_tool_error_hint() -> None:
    """AgentScope quirk: after 3 identical failures the hint appears, and again on every step
    with the growing count."""
    failing = retrieve("x", TextBlock(text="ConnectionError: timeout"), error=True)
    script = one_turn(*(ScriptedRound(calls=(dataclasses.replace(failing, id=None),)) for _ in range(4)))
    trace = run_agentscope(script, ParityConfig(context_size=100_000))
    results = [b for b in trace.final_messages[1].blocks if isinstance(b, ToolResultBlock)]
    assert [r.state for r in results] == ["error"] * 4
    errors = [h for h in hints(trace) if "<tool-error>" in h]
    assert ["The last 3 calls" in errors[0], "The last 4 calls" in errors[1]] == [True, True]


def test_image_in_a_result_counts_2000_tokens() -> None:
    figure = retrieve(
        "fig", TextBlock(text="figure 1"), DataBlock(media_type="image/png", source="https://x.org/f.png")
    )
    script = one_turn(ScriptedRound(calls=(figure,)))
    trace = run_agentscope(script, ParityConfig(context_size=100_000))
    result = trace.final_messages[1].blocks[2]
    assert isinstance(result, ToolResultBlock) and result.output == figure.result
    # counted as sent: the result's text names the image, which follows in a reminder
    texts = DataTexts.of(agentscope_texts())
    sent = [ESTIMATOR.count(sent_context(c.request, texts), script.tools) for c in trace.calls]
    assert sent == list(trace.input_tokens())
    assert trace.input_tokens()[1] - trace.input_tokens()[0] >= 2000


@pytest.mark.parametrize(("media_type", "path"), [("image/png", ".png"), ("image/jpeg", ".jpg")])
def test_images_over_the_cap_are_offloaded_to_workspace_paths(media_type: str, path: str) -> None:
    figure = retrieve(
        "fig", TextBlock(text="figure 1"), DataBlock(media_type=media_type, source="aGVsbG8=", kind="base64")
    )
    config = ParityConfig(context_size=100_000, context=ContextConfig(max_image_num=0), workspace="memory")
    trace = run_agentscope(one_turn(ScriptedRound(calls=(figure,))), config)
    url = f"workspace://offload/image-0001{path}"
    assert trace.offloads == (Offload(kind="data", path=url, texts=(), data_blocks=1),)
    result = trace.final_messages[1].blocks[2]
    assert isinstance(result, ToolResultBlock) and url in result.text


@pytest.mark.parametrize("workspace", ["memory", "none"])
def test_huge_result_is_truncated_and_its_rest_offloaded(workspace: WorkspaceKind) -> None:
    text = "".join(f"line {n:05d} of the report\n" for n in range(500))[:12_000]
    config = ParityConfig(
        context_size=100_000, context=ContextConfig(tool_result_limit=1000), workspace=workspace
    )
    trace = run_agentscope(one_turn(ScriptedRound(calls=(retrieve("big", TextBlock(text=text)),))), config)
    result = trace.final_messages[1].blocks[2]
    assert isinstance(result, ToolResultBlock)
    pointer = (
        " You can refer to the file in 'offload/tool-result-0001.txt' for the truncated content if needed."
    )
    reminder = (
        "\n<<<TRUNCATED>>>\n<system-reminder>The remaining content has been omitted for limited context."
        f"{pointer if workspace == 'memory' else ''}</system-reminder>"
    )
    assert result.text == text[:4000] + reminder
    expected = (Offload(kind="tool_result", path="offload/tool-result-0001.txt", texts=(text[4000:],)),)
    assert trace.offloads == (expected if workspace == "memory" else ())


def test_failing_summarizer_makes_three_calls_per_invocation() -> None:
    """AgentScope quirks: the structured-output ladder is forced, auto, none; the overflow retry
    (pre-flight 5318 > 4000) drops whole messages, so it summarizes nothing but the prompt."""
    script, config = ch08_workload(4_000)
    trace = run_agentscope(script, dataclasses.replace(config, fail_on=frozenset({1, 2})))
    summaries = [(c.invocation, c.tool_choice, c.tokens.messages) for c in trace.calls[3:9]]
    ladder = ["generate_structured_output", "auto", None]
    assert summaries == [(1, t, 4936) for t in ladder] + [(2, t, 337) for t in ladder]
    assert [m.role for m in trace.calls[6].request] == ["system", "user"]
    assert trace.compressions[0].summary == TRUNCATED_SUMMARY
    assert trace.calls[9].kind == "reasoning"


def test_raising_summarizer_makes_one_call_per_invocation() -> None:
    script, config = ch08_workload(4_000)
    trace = run_agentscope(script, dataclasses.replace(config, fail_on=frozenset({1, 2}), fail_mode="raise"))
    assert [(c.kind, c.invocation) for c in trace.calls[3:6]] == [
        ("summary", 1),
        ("summary", 2),
        ("reasoning", None),
    ]
    assert trace.compressions[0].summary == TRUNCATED_SUMMARY


def test_failing_summary_without_fallback_ends_the_run_with_the_context_kept() -> None:
    script, config = ch08_workload(4_000)
    strict = ContextConfig(compression_fallback_to_truncation=False)
    trace = run_agentscope(
        script, dataclasses.replace(config, context=strict, fail_on=frozenset({1, 2}), fail_mode="raise")
    )
    assert trace.error == "ScriptedSummaryFailure: the script fails summarizer invocation 2"
    assert (trace.compressions, trace.replies, len(trace.final_context)) == ((), (), 2)
    assert trace.final_context[1].blocks[-1] == BlockShape("tool_result", "call-0003")


def test_clock_moves_per_turn_and_per_round() -> None:
    """A round's advance applies before that iteration's injection; 20 minutes per turn re-inject
    the time every second turn (interval 0.5 h)."""
    turns = (
        ScriptedTurn(
            user=(TextBlock(text="go"),),
            rounds=(ScriptedRound(calls=(retrieve("a"),), advance_seconds=3600),),
        ),
        ScriptedTurn(user=(TextBlock(text="more"),), advance_seconds=1200),
        ScriptedTurn(user=(TextBlock(text="more"),), advance_seconds=1200),
    )
    trace = run_agentscope(
        assign_call_ids(Script(system_prompt="sys", tools=(RETRIEVE,), turns=turns)),
        ParityConfig(context_size=100_000),
    )
    times = [h.split("<current-time>")[1][:19] for h in hints(trace)]
    assert times == ["2026-01-01T01:00:00", "2026-01-01T01:40:00"]


def test_turn_timezone_moves_the_injected_time() -> None:
    turns = (
        ScriptedTurn(user=(TextBlock(text="hi"),)),
        ScriptedTurn(user=(TextBlock(text="landed"),), advance_seconds=3600, timezone="Asia/Shanghai"),
    )
    trace = run_agentscope(
        assign_call_ids(Script(system_prompt="sys", turns=turns)), ParityConfig(context_size=100_000)
    )
    assert (
        "<current-time>2026-01-01T09:00:00</current-time>\n<timezone>Asia/Shanghai</timezone>"
        in hints(trace)[1]
    )


def test_task_tools_run_for_real() -> None:
    create = ScriptedCall(tool="TaskCreate", input=json.dumps({"subject": "A", "description": "do A"}))
    start = ScriptedCall(tool="TaskUpdate", input=json.dumps({"task_id": "1", "status": "in_progress"}))
    script = one_turn(
        ScriptedRound(calls=(create,)), ScriptedRound(calls=(start, ScriptedCall(tool="TaskList")))
    )
    trace = run_agentscope(script, ParityConfig(context_size=100_000, task_tools=True))
    task = TaskRecord(
        id="1", subject="A", description="do A", state="in_progress", owner=None, blocks=(), blocked_by=()
    )
    assert trace.tasks == (task,)
    assert trace.calls[0].tools == ("retrieve", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate")
    results = [b.text for b in trace.final_messages[1].blocks if isinstance(b, ToolResultBlock)]
    assert results == [
        "Task (id=1) created successfully: A",
        "Update task (id=1) status.",
        "1 [in_progress] A",
    ]


def test_max_iters_forces_the_final_answer() -> None:
    script = one_turn(*(ScriptedRound(calls=(retrieve(str(n)),)) for n in range(5)), final="forced")
    trace = run_agentscope(script, ParityConfig(context_size=100_000, max_iters=2))
    assert [(c.iteration, c.tool_choice) for c in trace.calls] == [(0, None), (1, None), (2, "none")]
    assert trace.replies == ("forced",)
    assert "maximum of 2 reasoning-acting iterations" in hints(trace)[-1]


def test_compression_tool_keeps_its_unfinished_call() -> None:
    """AgentScope quirk: the running CompressContext call and everything after it are reserved."""
    script, config = ch08_workload(5_000)
    turn = script.turns[0]
    compress = ScriptedRound(calls=(ScriptedCall(tool="CompressContext"),))
    rounds = (*turn.rounds[:2], compress, turn.rounds[2])
    script = assign_call_ids(dataclasses.replace(script, turns=(dataclasses.replace(turn, rounds=rounds),)))
    tool_on = ContextConfig(compression_tool_enabled=True)
    trace = run_agentscope(script, dataclasses.replace(config, context=tool_on))
    (compression,) = trace.compressions
    assert compression.trigger == "tool"
    assert compression.context[0].blocks == (BlockShape("tool_call", "call-0004"),)
    assert "Context compressed successfully." in [
        b.text for b in trace.final_messages[0].blocks if isinstance(b, ToolResultBlock)
    ]


def test_workspace_memory_offloads_the_compressed_context() -> None:
    """Why ch08 runs without a workspace: the offload reminder lengthens the summary (258 -> 292)."""
    script, config = ch08_workload(4_000)
    trace = run_agentscope(script, dataclasses.replace(config, workspace="memory"))
    assert trace.input_tokens("messages")[4] == 292
    assert [(o.kind, o.path, len(o.texts)) for o in trace.offloads] == [
        ("context", "offload/context-0001.json", 8),
        ("context", "offload/context-0002.json", 5),
    ]
    assert trace.offloads[0].texts[0] == "分六批检索并汇总。"
    assert trace.final_summary.endswith(
        "<system-reminder>The compressed context is offloaded to 'offload/context-0002.json', "
        "you can refer to it when needed.</system-reminder>"
    )


def test_tool_schema_titles_are_dropped_before_counting() -> None:
    """AgentScope quirk: the toolkit strips every `title` from a tool's parameters (top level,
    properties, items, $defs) before sending and counting the schema."""
    titled = ToolSchema.of(
        "retrieve",
        "Retrieve.",
        {"title": "Args", "type": "object", "properties": {"query": {"title": "Query", "type": "string"}}},
    )
    bare = ToolSchema.of(
        "retrieve", "Retrieve.", {"type": "object", "properties": {"query": {"type": "string"}}}
    )
    script = dataclasses.replace(one_turn(), tools=(titled,))
    trace = run_agentscope(script, ParityConfig(context_size=100_000))
    assert trace.input_tokens() == (ESTIMATOR.count(trace.calls[0].request, (bare,)),)
    assert ESTIMATOR.count(trace.calls[0].request, (titled,)) > trace.input_tokens()[0]


def test_scripts_the_driver_cannot_play_are_refused() -> None:
    no_result = assign_call_ids(one_turn(ScriptedRound(calls=(ScriptedCall(tool="retrieve"),))))
    with pytest.raises(ValueError, match="has no result and 'retrieve' is not a built-in tool"):
        check_script(no_result)
    turn = ScriptedTurn(user=(), rounds=(ScriptedRound(calls=(retrieve("a"),)),))
    with pytest.raises(ValueError, match="assign_call_ids"):
        check_script(Script(system_prompt="", turns=(turn,)))
