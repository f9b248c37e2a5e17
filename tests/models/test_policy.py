"""PolicyModel: follows the script like ScriptModel, re-lists tasks after a compression, and
re-reads an offloaded file when a needed probe is not visible, deterministically."""

from __future__ import annotations

import json

import pytest

from ctxlab.core.agentscope.compress import fixed_messages
from ctxlab.core.events import Event, EventKind
from ctxlab.core.messages.blocks import TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.model import ModelRequest
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.engine.loop import RunOutcome
from ctxlab.engine.session import run_script
from ctxlab.engine.tools import READ_TOOL, ReadOffloaded, with_read_tool
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.extractive import ExtractiveSummarizer
from ctxlab.models.policy import Need, PolicyEvent, PolicyModel
from ctxlab.models.scripted import ScriptModel
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS, fill
from ctxlab.workloads.filler import filler_at
from ctxlab.workloads.probes import plant
from tests.engine.test_retention import FACT, PROBES, workload

TEXTS = CTXLAB_TEXTS
NEED = Need(key="db-port", turn=2, round=0)


def req(messages: tuple[Message, ...], turn: int = 0, choice: str = "auto", index: int = 0) -> ModelRequest:
    return ModelRequest(
        kind="reasoning", messages=messages, tools=(), tool_choice=choice, turn=turn, call_index=index
    )


def simple_script(*rounds: ScriptedRound) -> Script:
    turn = ScriptedTurn(user=(TextBlock(text="go"),), rounds=rounds, final="done")
    return assign_call_ids(Script(system_prompt="s", turns=(turn,)))


def task_call(tool: str, **args: str) -> ScriptedCall:
    return ScriptedCall(tool=tool, input=json.dumps(args), result=(TextBlock(text="ok"),))


# Unit behaviour on hand-made requests ---------------------------------------------------------


def test_without_reactions_it_answers_like_script_model() -> None:
    script = with_read_tool(workload(), TEXTS)
    runs = []
    for model in (ScriptModel(script), PolicyModel(script=script, probes=PROBES)):
        runs.append(
            run_script(
                script,
                AgentScopeStrategy(texts=TEXTS),
                model=model,
                summarizer=ExtractiveSummarizer(probes=PROBES),
                texts=TEXTS,
                context_size=4000,
                workspace=InMemoryWorkspace(),
            )
        )
    assert runs[0] == runs[1]


def test_a_compression_is_a_changed_summary() -> None:
    script = simple_script(*[ScriptedRound(calls=(task_call("TaskCreate", subject="a"),))] * 3)
    model = PolicyModel(script=script)
    user = (text_message("user", "go", id="m1"),)
    assert model.respond(req((*fixed_messages("s", ""), *user))).calls[0].name == "TaskCreate"
    assert model.respond(req((*fixed_messages("s", ""), *user))).calls[0].name == "TaskCreate"
    relist = model.respond(req((*fixed_messages("s", "S1"), *user), index=5))
    assert [(c.id, c.name, c.input) for c in relist.calls] == [("policy-0001", "TaskList", "{}")]
    assert model.respond(req((*fixed_messages("s", "S1"), *user))).calls[0].name == "TaskCreate"
    assert model.events == [PolicyEvent(call_index=5, turn=0, kind="task_list")]
    assert model.round_index == 3  # the extra round did not use up a scripted one


def test_no_relist_without_open_tasks_or_when_switched_off() -> None:
    rounds = (
        ScriptedRound(calls=(task_call("TaskCreate", subject="a"), task_call("TaskCreate", subject="b"))),
        ScriptedRound(calls=(task_call("TaskUpdate", task_id="1", status="completed"),)),
        ScriptedRound(calls=(task_call("TaskUpdate", task_id="2", status="deleted"),)),
        ScriptedRound(),
    )
    for switch, expected in ((True, ["task_list"]), (False, [])):
        model = PolicyModel(script=simple_script(*rounds), relist_after_compression=switch)
        # Two tasks, one completed; a compression (S1) while one is open; the other deleted;
        # a compression (S2) with none open.
        for summary in ("", "", "S1", "S1", "S2"):
            model.respond(req(fixed_messages("s", summary)))
        assert model.open_tasks == 0
        assert [e.kind for e in model.events] == expected


def test_the_forced_last_step_gets_the_final_answer_without_reacting() -> None:
    model = PolicyModel(script=simple_script(ScriptedRound(calls=(task_call("TaskCreate", subject="a"),))))
    model.respond(req(fixed_messages("s", "")))
    answer = model.respond(req(fixed_messages("s", "S1"), choice="none"))
    assert answer.calls == () and answer.text == "done" and model.events == []


def reminder(path: str) -> str:
    return fill(TEXTS.context_offload_reminder, path=path)


def truncated(path: str) -> str:
    return fill(TEXTS.tool_result_truncated, offload_reminder=fill(TEXTS.tool_result_offload, path=path))


def test_offload_paths_summary_first_then_context_newest_first() -> None:
    summary = f"S\n{reminder('offload/context-0001.json')}\n{reminder('offload/context-0002.json')}"
    older = Message(
        role="assistant", id="r1", blocks=(TextBlock(text="x" + truncated("offload/tool-result-0001.txt")),)
    )
    newer = Message(
        role="assistant", id="r2", blocks=(TextBlock(text="y" + truncated("offload/tool-result-0002.txt")),)
    )
    model = PolicyModel(script=simple_script())
    assert model.offload_paths(req((*fixed_messages("s", summary), older, newer))) == [
        "offload/context-0002.json",
        "offload/context-0001.json",
        "offload/tool-result-0002.txt",
        "offload/tool-result-0001.txt",
    ]


def test_a_need_must_name_a_probe() -> None:
    with pytest.raises(ValueError, match="need 'db-port' names no probe"):
        PolicyModel(script=simple_script(), needs=(NEED,))


def test_extra_call_ids_skip_the_scripts() -> None:
    rounds = (
        ScriptedRound(
            calls=(ScriptedCall(tool="TaskCreate", id="policy-0001", result=(TextBlock(text="ok"),)),)
        ),
    )
    model = PolicyModel(script=simple_script(*rounds))
    model.respond(req(fixed_messages("s", "")))
    assert model.respond(req(fixed_messages("s", "S"))).calls[0].id == "policy-0002"


def test_params() -> None:
    model = PolicyModel(script=simple_script(), probes=(FACT,), needs=(NEED,), max_rereads=2)
    assert model.params() == {
        "kind": "policy",
        "needs": [{"key": "db-port", "turn": 2, "round": 0}],
        "read_tool": "Read",
        "task_list_tool": "TaskList",
        "relist_after_compression": True,
        "max_rereads": 2,
    }


# Runs through the agentscope preset -----------------------------------------------------------


def read_call(path: str, size: int = 2400) -> ScriptedCall:
    text = filler_at(0, path, "code", size)
    return ScriptedCall(tool="Read", input=f'{{"file_path": "{path}"}}', result=(TextBlock(text=text),))


def builtin_call(tool: str, **args: str) -> ScriptedCall:
    """A call the lab's own task tools answer."""
    return ScriptedCall(tool=tool, input=json.dumps(args))


def task_workload(closed: bool) -> Script:
    rounds = [ScriptedRound(calls=(builtin_call("TaskCreate", subject="Ship the release", description="d"),))]
    if closed:
        rounds.append(ScriptedRound(calls=(builtin_call("TaskUpdate", task_id="1", status="completed"),)))
    rounds += [ScriptedRound(calls=(read_call(f"src/m{i}.py"),)) for i in range(6)]
    turn = ScriptedTurn(user=(TextBlock(text="Release it."),), rounds=tuple(rounds), final="Released.")
    tools = (ToolSchema.of("Read", "Read.", {"type": "object"}),)
    return assign_call_ids(Script(system_prompt="s", tools=tools, turns=(turn,)))


def run_tasks(closed: bool) -> tuple[RunOutcome, PolicyModel]:
    script = task_workload(closed)
    model = PolicyModel(script=script)
    outcome = run_script(
        script,
        AgentScopeStrategy(texts=TEXTS, params=AgentScopeParams(task_tools=True)),
        model=model,
        summarizer=ExtractiveSummarizer(),
        texts=TEXTS,
        context_size=5000,
    )
    return outcome, model


def test_after_a_compression_it_lists_its_open_tasks_first() -> None:
    outcome, model = run_tasks(closed=False)
    assert outcome.compressions
    relists = [e for e in model.events if e.kind == "task_list"]
    assert len(relists) == len(outcome.compressions)
    for event in relists:
        assert Event(EventKind.COMPRESSED) in outcome.calls[event.call_index].events
    reasoning = [c for c in outcome.calls if c.kind == "reasoning"]
    assert len(reasoning) == 7 + 1 + len(relists)  # scripted rounds, the final answer, the extras
    listed = [
        b
        for m in outcome.state.context
        for b in m.blocks
        if isinstance(b, ToolResultBlock) and b.name == "TaskList"
    ]
    assert listed and listed[-1].text == fill(
        TEXTS.task_list_line, id="1", subject="Ship the release", state="pending", owner="", blocked_by=""
    )
    assert "- Ship the release" in str(outcome.compressions[0].summary)  # the summary's next steps


def test_no_relist_once_its_tasks_are_done() -> None:
    outcome, model = run_tasks(closed=True)
    assert outcome.compressions and model.events == []


def reread_run(
    *, limit: int = 1000, recall: float = 0.0, workspace: bool = True
) -> tuple[RunOutcome, PolicyModel]:
    script = with_read_tool(workload(), TEXTS)
    model = PolicyModel(script=script, probes=PROBES, needs=(NEED,))
    outcome = run_script(
        script,
        AgentScopeStrategy(texts=TEXTS, params=AgentScopeParams(tool_result_limit=limit)),
        model=model,
        summarizer=ExtractiveSummarizer(probes=PROBES, fact_recall=recall),
        texts=TEXTS,
        context_size=4000,
        workspace=InMemoryWorkspace() if workspace else None,
        probes=PROBES,
        builtins={READ_TOOL: ReadOffloaded(TEXTS)},
    )
    return outcome, model


def reasoning_count(outcome: RunOutcome) -> int:
    return sum(1 for c in outcome.calls if c.kind == "reasoning")


def test_a_needed_fact_that_was_offloaded_is_read_back() -> None:
    outcome, model = reread_run()
    baseline, _ = reread_run(recall=1.0)
    path = outcome.compressions[0].offload_path
    read, found = model.events
    assert (read.kind, read.key, read.path, read.turn) == ("reread", "db-port", path, 2)
    assert (found.kind, found.path, found.call_index) == ("found", path, read.call_index + 1)
    assert reasoning_count(outcome) == reasoning_count(baseline) + 1  # one extra round
    # The extra request carries the read result: its growth is the re-read's tokens, cut at the
    # tool-result limit (1,000) with the rest offloaded again.
    before, after = outcome.calls[read.call_index], outcome.calls[found.call_index]
    assert 1000 < after.tokens["as_sent"] - before.tokens["as_sent"] < 1100
    assert after.events == (Event(EventKind.TRUNCATED), Event(EventKind.OFFLOADED))
    per_task = sum(c.tokens["as_sent"] for c in outcome.calls)
    assert per_task > sum(c.tokens["as_sent"] for c in baseline.calls) + 1000
    assert outcome.retention[-1].state_of("db-port").status == "context"


def test_reading_a_whole_context_file_back_recompresses_until_it_gives_up() -> None:
    outcome, model = reread_run(limit=50_000)
    kinds = [e.kind for e in model.events]
    assert kinds == ["reread", "reread", "reread", "lost"]
    assert [e.path for e in model.events[:3]] == [f"offload/context-000{i}.json" for i in (1, 2, 3)]
    assert len(outcome.compressions) == 4  # each read result pushed the request over the trigger


def test_without_a_workspace_the_need_is_lost_at_once() -> None:
    outcome, model = reread_run(workspace=False)
    baseline, _ = reread_run(recall=1.0, workspace=False)
    assert [(e.kind, e.key) for e in model.events] == [("lost", "db-port")]
    assert reasoning_count(outcome) == reasoning_count(baseline)


def test_a_remembered_fact_needs_no_read() -> None:
    _outcome, model = reread_run(recall=1.0)
    assert [(e.kind, e.path) for e in model.events] == [("found", "")]


def test_a_fact_cut_off_a_tool_result_is_read_from_its_file() -> None:
    big = ScriptedCall(tool="Read", input='{"file_path": "big.log"}', result=(TextBlock(text="x\n" * 3200),))
    turns = (
        ScriptedTurn(
            user=(TextBlock(text="Read the log."),), rounds=(ScriptedRound(calls=(big,)),), final="ok"
        ),
        ScriptedTurn(user=(TextBlock(text="Which port?"),), final="5432"),
    )
    script = plant(Script(system_prompt="s", turns=turns), (FACT,)).script
    script = assign_call_ids(with_read_tool(script, TEXTS))
    model = PolicyModel(script=script, probes=(FACT,), needs=(Need(key="db-port", turn=1, round=0),))
    run_script(
        script,
        AgentScopeStrategy(texts=TEXTS, params=AgentScopeParams(tool_result_limit=500)),
        model=model,
        summarizer=ExtractiveSummarizer(),
        texts=TEXTS,
        context_size=100_000,
        workspace=InMemoryWorkspace(),
        builtins={READ_TOOL: ReadOffloaded(TEXTS)},
    )
    assert [(e.kind, e.path) for e in model.events] == [
        ("reread", "offload/tool-result-0001.txt"),
        ("found", "offload/tool-result-0001.txt"),
    ]


def test_runs_are_deterministic() -> None:
    first, second = reread_run(), reread_run()
    assert first[0] == second[0]
    assert first[1].events == second[1].events and first[1].requests == second[1].requests
