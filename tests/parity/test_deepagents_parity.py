"""ctxlab's `deepagents` preset against the real `create_deep_agent` (deepagents 0.7.32) on
generated workloads: the same requests call for call (kinds, messages in the OpenAI view, tools
sent), evictions, truncations and summaries at the same calls, deepagents' own count of every
reasoning request, and the same failures. The history session's uuid4 is normalised."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import event, given, settings
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.presets.deepagents.summary import ContextOverflowError
from ctxlab.presets.lc_count import count_tokens
from tests.parity.da_driver import DAConfig, normalised, run_deepagents
from tests.parity.da_lab import run_lab
from tests.parity.lc_driver import LCTrace
from tests.parity.processes import outputs_under_two_hash_seeds
from tests.parity.test_langchain_parity import condition, summary_positions, text, triggers, written
from tests.parity.workloads import PROSE, TOOLS, reasoning_loop
from tests.parity.workloads import retrieval_loop as loop


def compare(script: Script, config: DAConfig) -> tuple[LCTrace, LCTrace]:
    theirs = normalised(run_deepagents(script, config))
    ours = normalised(run_lab(script, config))
    assert ours.error == theirs.error or (ours.error is not None and theirs.error is not None)
    assert [c.kind for c in ours.calls] == [c.kind for c in theirs.calls]
    for index, (mine, real) in enumerate(zip(ours.calls, theirs.calls, strict=True)):
        assert mine.messages == real.messages, index
        assert mine.tools == real.tools, index
        assert mine.counted == real.counted, index
        assert mine.reasoning == real.reasoning, index
    return ours, theirs


def file_call(draw: st.DrawFn, n: int, window: int) -> ScriptedCall:
    """A `write_file` or `edit_file` call whose long arguments deepagents may truncate later."""
    body = draw(text(draw(st.sampled_from([100, 2500, int(window * 0.6)]))))
    if draw(st.booleans()):
        args = {"file_path": f"/notes/{n}.md", "content": body}
        tool = "write_file"
    else:
        args = {"file_path": f"/notes/{n}.md", "old_string": body[:50], "new_string": body}
        tool = "edit_file"
    return ScriptedCall(tool=tool, input=draw(written(args, empty=False)), result=(TextBlock(text="ok"),))


@st.composite
def da_rounds(draw: st.DrawFn, window: int, start: int) -> ScriptedRound:
    calls = []
    for n in range(draw(st.integers(1, 3))):  # parallel calls
        kind = draw(st.integers(0, 9))
        if kind < 2:
            calls.append(file_call(draw, start * 10 + n, window))
            continue
        reads = kind == 2  # a read_file result: never evicted, cut when a request is over budget
        shares = [0.002, 0.02, 0.08, 0.3] if reads else [0.002, 0.02, 0.08, 0.3, 1.2]
        share = draw(st.sampled_from(shares))  # of the window, in characters x 4
        calls.append(
            ScriptedCall(
                tool="read_file" if reads else draw(st.sampled_from(["retrieve", "figure"])),
                input=draw(
                    written({"file_path": f"/notes/{n}.md"}, empty=False)
                    if reads
                    else written({"query": f"q{n}"})
                ),
                result=(TextBlock(text=draw(text(int(window * 4 * share)))),),
                error=draw(st.integers(0, 6)) == 0,
            )
        )
    thinking = draw(st.one_of(st.none(), text(300)))  # a reasoning model's `reasoning_content`
    return ScriptedRound(text=draw(st.one_of(st.none(), text(200))), thinking=thinking, calls=tuple(calls))


@st.composite
def da_scripts(draw: st.DrawFn, window: int) -> Script:
    turns = []
    rounds_so_far = 0
    for _ in range(draw(st.integers(1, 3))):
        long_loop = draw(st.integers(0, 5)) == 0
        count = draw(st.integers(15, 35)) if long_loop else draw(st.integers(0, 6))
        rounds = tuple(draw(da_rounds(window, rounds_so_far + k)) for k in range(count))
        rounds_so_far += count
        user = TextBlock(text=draw(text(300)))
        turns.append(
            ScriptedTurn(user=(user,), rounds=rounds, final=draw(st.sampled_from(["", draw(text(100))])))
        )  # "": an empty answer
    return assign_call_ids(Script(system_prompt=draw(text(600)), tools=TOOLS, turns=tuple(turns)))


@st.composite
def truncation(draw: st.DrawFn, window: int) -> dict[str, object] | None:
    if draw(st.integers(0, 4)) == 0:
        return None
    settings_: dict[str, object] = {"trigger": draw(st.one_of(st.none(), condition(window)))}
    kind = draw(st.sampled_from(["messages", "tokens", "fraction"]))
    settings_["keep"] = {
        "messages": ("messages", draw(st.integers(1, 25))),
        "tokens": ("tokens", draw(st.integers(10, window // 2))),
        "fraction": ("fraction", draw(st.sampled_from([0.05, 0.1, 0.3]))),
    }[kind]
    settings_["max_length"] = draw(st.sampled_from([2000, 100, 5000]))
    if draw(st.booleans()):
        settings_["truncation_text"] = "[cut]"
    return settings_


@st.composite
def cases(draw: st.DrawFn) -> tuple[Script, DAConfig]:
    window = draw(st.sampled_from([3000, 8000, 16000, 64000]))
    limit = draw(st.sampled_from([20_000, 20_000, None, 100, window // 8]))
    human = draw(st.sampled_from([50_000, 50_000, None, 40]))  # 40: user messages over 160 characters
    fail_on = (
        frozenset(draw(st.lists(st.integers(1, 3), max_size=1)))
        if draw(st.integers(0, 3)) == 0
        else frozenset()
    )
    if draw(st.integers(0, 2)) == 0:
        config = DAConfig(
            window=window,
            tool_token_limit_before_evict=limit,
            human_message_token_limit_before_evict=human,
            fail_on=fail_on,
        )
    else:
        kind = draw(st.sampled_from(["messages", "tokens", "fraction"]))
        keep = {
            "messages": ("messages", draw(st.integers(1, 25))),
            "tokens": ("tokens", draw(st.integers(10, window // 2))),
            "fraction": ("fraction", draw(st.sampled_from([0.05, 0.1, 0.3]))),
        }[kind]
        config = DAConfig(
            window=window,
            defaults=False,
            trigger=draw(triggers(window)),
            keep=keep,  # type: ignore[arg-type]
            trim_tokens_to_summarize=draw(st.sampled_from([None, None, 4000, 400, 1])),
            truncate_args_settings=draw(truncation(window)),
            tool_token_limit_before_evict=limit,
            human_message_token_limit_before_evict=human,
            fail_on=fail_on,
        )
    return draw(da_scripts(window)), config


@settings(max_examples=50, deadline=None)
@given(cases())
def test_deepagents_matches_create_deep_agent(case: tuple[Script, DAConfig]) -> None:
    _, theirs = compare(*case)
    summaries = [c for c in theirs.calls if c.kind == "summary"]
    event(f"summary calls: {min(len(summaries), 3)}{'+' if len(summaries) >= 3 else ''}")
    event(f"the run failed: {theirs.error}" if theirs.error else "the run finished")
    shown = [str(m.content) for c in theirs.calls for m in c.messages]
    event("a result evicted" if any("/large_tool_results/" in s for s in shown) else "nothing evicted")
    humans = any(s.startswith("Message content too large") for s in shown)
    event("a user message evicted" if humans else "no user message evicted")
    args = [call.args for c in theirs.calls for m in c.messages for call in m.tool_calls]
    cut = any("(argument truncated)" in a or "[cut]" in a for a in args)
    event("arguments truncated" if cut else "no truncation")


def test_the_built_in_tools_are_counted_so_a_16k_window_summarizes_after_21_calls() -> None:
    ours, _ = compare(loop([2000] * 30), DAConfig(window=16_000))
    tools = [json.loads(t)["function"]["name"] for t in ours.calls[0].tools]
    builtin = ["ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep", "task"]
    assert tools == [*builtin, "retrieve", "figure"]
    first = ours.calls[0]
    overhead = first.counted - count_tokens([m for m in first.messages if m.kind != "system"])
    assert overhead > 2_665  # the eight built-in tools alone are 2,665 of deepagents' tokens
    assert summary_positions(ours) == [21]  # 0.85 x 16,000 = 13,600 reached before call 22
    last, step = ours.calls[20].counted, ours.calls[20].counted - ours.calls[19].counted
    assert last + step >= 13_600 > last + step - overhead  # the messages alone would not trigger


def test_a_failing_summary_is_tried_three_times_and_ends_the_run() -> None:
    """D9: LangChain's retry (three attempts) around the summary call, then the run fails."""
    ours, theirs = compare(loop([2000] * 30), DAConfig(window=16_000, fail_on=frozenset({1})))
    assert theirs.error is not None and ours.error is not None
    assert [c.kind for c in theirs.calls].count("summary") == 3


def test_a_blank_summary_is_stripped_and_kept_as_an_empty_summary() -> None:
    """D9: a blank answer is no failure (LangChain's helper strips it): the summary message names
    the saved history and holds an empty summary, and the run goes on."""
    for blank in ("", " \n "):
        ours, theirs = compare(loop([2000] * 30), DAConfig(window=16_000, summary_text=blank))
        kinds = [c.kind for c in theirs.calls]
        assert theirs.error is None and ours.error is None and kinds.count("summary") == 1
        summary = theirs.calls[kinds.index("summary") + 1].messages[1]
        assert summary.kind == "human" and "/conversation_history/" in str(summary.content)


def test_a_result_over_the_limit_is_saved_and_left_as_a_stub_naming_its_file() -> None:
    ours, _ = compare(loop([200, 100_000, 200]), DAConfig())
    results = [m for m in ours.calls[-1].messages if m.kind == "tool"]
    assert [len(str(m.content)) < 3000 for m in results] == [True, True, True]
    stub = str(results[1].content)
    assert (
        stub.startswith("Tool result too large") and f"/large_tool_results/{results[1].tool_call_id}" in stub
    )


def test_an_over_budget_request_has_its_trailing_results_evicted() -> None:
    ours, _ = compare(loop([50_000, 40_000]), DAConfig(window=8000, tool_token_limit_before_evict=None))
    shown = [str(m.content) for c in ours.calls for m in c.messages if m.kind == "tool"]
    assert any(s.startswith("Tool result too large") for s in shown)  # with no eviction limit set


def test_an_over_budget_read_file_result_is_cut_to_4000_characters_and_names_its_file() -> None:
    read = ScriptedCall(
        tool="read_file",
        input=json.dumps({"file_path": "/notes/a.md"}),
        result=(TextBlock(text=(PROSE + "\n") * 400),),
    )
    script = loop([4000, 16_000, 100])
    first, second, third = script.turns[0].rounds
    script = replace(
        script,
        turns=(
            replace(script.turns[0], rounds=(first, replace(second, calls=(read, *second.calls)), third)),
        ),
    )
    ours, _ = compare(assign_call_ids(script), DAConfig(window=8000, tool_token_limit_before_evict=None))
    shown = [str(m.content) for c in ours.calls for m in c.messages if m.kind == "tool"]
    cut = [s for s in shown if "The full content is at /notes/a.md" in s]
    assert cut and all(len(s.split("\n\n[Output was truncated")[0]) == 4000 for s in cut)


def test_arguments_are_sent_as_langchain_parses_and_writes_them_back_and_truncated_so() -> None:
    """D22: as in LangChain (L28), a call's arguments are the parsed object, written back with
    `json.dumps(args, ensure_ascii=False)` in every later request, and argument truncation cuts
    that object's strings, however the model wrote them."""
    body = "line of the file, 数据\n" * 200
    spaced = '{"file_path" : "/notes/a.md",\n "content" : ' + json.dumps(body) + ', "n": 1e3}'
    writes = ScriptedCall(tool="write_file", input=spaced, result=(TextBlock(text="ok"),))
    script = loop([800] * 8, encode=lambda args: json.dumps(args, separators=(",", ":")) + " ")
    first = script.turns[0].rounds[0]
    script = replace(
        script,
        turns=(replace(script.turns[0], rounds=(replace(first, calls=(writes,)), *script.turns[0].rounds)),),
    )
    truncating = {"trigger": ("messages", 6), "keep": ("messages", 2), "max_length": 100}
    for settings_ in (None, truncating):
        config = DAConfig(
            window=16_000,
            defaults=False,
            trigger=("tokens", 100_000),
            keep=("messages", 3),
            truncate_args_settings=settings_,
        )
        ours, _ = compare(assign_call_ids(script), config)
        sent = [c.args for m in ours.calls[-1].messages for c in m.tool_calls]
        assert sent[1:] == [json.dumps({"query": f"q{k}"}) for k in range(8)]
        written = json.loads(sent[0])
        assert written["n"] == 1000.0 and sent[0].startswith('{"file_path": "/notes/a.md", "content": "line')
        assert (written["content"] == body) == (settings_ is None)


def test_tools_over_the_input_budget_fail_the_run_before_any_call() -> None:
    ours, theirs = compare(loop([100]), DAConfig(window=2500))  # budget 2,375 < the tools' 2,665
    assert theirs.error == ours.error == ContextOverflowError.__name__
    assert not theirs.calls


def test_a_user_tool_named_as_a_built_in_takes_its_place() -> None:
    """`create_agent` keys the tools by name: the user's `read_file` is offered (and counted) where
    the built-in was, and there is one tool of that name (found replaying a DeerFlow transcript)."""
    own = ToolSchema.of("read_file", "Read a file of the sandbox.", {"type": "object", "properties": {}})
    script = replace(loop([3000] * 8, tool="read_file"), tools=(*TOOLS, own))
    ours, _ = compare(script, DAConfig(window=8000))
    tools = [json.loads(t)["function"] for t in ours.calls[0].tools]
    assert [t["name"] for t in tools][:3] == ["ls", "read_file", "write_file"]
    assert len(tools) == 10 and tools[1]["description"] == own.description


DUMP = """
import dataclasses, json
from ctxlab.presets.lc_count import count_tokens
from tests.parity.da_driver import DAConfig, normalised, run_deepagents
from tests.parity.test_deepagents_parity import loop
trace = normalised(run_deepagents(loop([2000, 30000, 500] * 5, turns=2), DAConfig(window=8000)))
print(json.dumps(dataclasses.asdict(trace), sort_keys=True))
"""


def test_the_driver_sends_the_same_bytes_in_two_processes() -> None:
    first, second = outputs_under_two_hash_seeds(DUMP)
    assert first and first == second


def test_an_empty_final_answer_is_an_ai_message_with_empty_content() -> None:
    """D19: as in LangChain (L25), deepagents keeps an empty final answer as an AI message with
    empty content, sent and counted in every later request; so does the lab."""
    script = loop([200, 300], turns=2)
    script = replace(script, turns=(replace(script.turns[0], final=""), script.turns[1]))
    _, theirs = compare(script, DAConfig(window=16_000))
    first = theirs.calls[3]  # the second turn's first request
    assert [m.kind for m in first.messages] == ["system", "human", "ai", "tool", "ai", "tool", "ai", "human"]
    empty = first.messages[6]
    assert empty.content == "" and not empty.tool_calls


def test_reasoning_is_kept_out_of_every_request_and_count() -> None:
    """D15: as in LangChain, a `reasoning_content` kept in the AI message's `additional_kwargs` is
    in no request, neither in deepagents' count (system prompt, messages, tools) nor in a summary
    request; an answer of reasoning alone is an AI message with empty content. The lab stores no
    thinking for deepagents."""
    script = reasoning_loop()
    for config in (
        DAConfig(window=16_000),
        DAConfig(window=16_000, trigger=("messages", 9), keep=("messages", 4)),
    ):
        _, theirs = compare(script, config)
        assert all(not c.reasoning for c in theirs.calls)
        assert all("I should look up" not in json.dumps(c.messages, default=str) for c in theirs.calls)
    first = compare(script, DAConfig(window=16_000))[1].calls[4]  # the second turn's first request
    assert [m.kind for m in first.messages][-3:] == ["tool", "ai", "human"]
    assert first.messages[-2].content == ""


def test_deviation_deepagents_strips_a_tool_description_built_by_structured_tool() -> None:
    """D20: the driver builds the user's tools with `StructuredTool.from_function`, which strips the
    description; the lab sends (and counts) a workload's description as written. Not the family's
    concern (the generated workloads' descriptions have no surrounding whitespace); pinned."""
    padded = replace(TOOLS[0], description=TOOLS[0].description + "\n")
    script = replace(loop([200]), tools=(padded, TOOLS[1]))
    theirs, ours = run_deepagents(script, DAConfig()), run_lab(script, DAConfig())
    sent = {
        side: json.loads(trace.calls[0].tools[8])["function"]["description"]
        for side, trace in (("theirs", theirs), ("ours", ours))
    }
    assert sent == {"theirs": TOOLS[0].description, "ours": TOOLS[0].description + "\n"}
    assert ours.calls[0].counted == theirs.calls[0].counted + 1  # the newline, rounded up


def test_no_system_prompt_still_sends_and_counts_an_empty_system_message() -> None:
    """`create_deep_agent(system_prompt=None)` writes an empty system message, sent and counted
    by its summarization (its overhead and role): the lab keeps it, and summarizes at the same call."""
    script = replace(loop([2000] * 30), system_prompt="")
    ours, theirs = compare(script, DAConfig(window=16_000))
    for trace in (ours, theirs):
        reasoning = [c for c in trace.calls if c.kind == "reasoning"]
        assert all(c.messages[0].kind == "system" and c.messages[0].content == "" for c in reasoning)
    assert summary_positions(ours) == summary_positions(theirs) != []
