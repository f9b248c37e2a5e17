"""Retention measured in real runs of the agentscope preset: where a planted probe is after each
compression, under the extractive summarizer's recall, with and without a workspace."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from ctxlab.core.agentscope.compress import fixed_messages
from ctxlab.core.events import Event, EventKind
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.reading import visible_text
from ctxlab.core.world.retention import Probe, ProbeState, RetentionSnapshot, probe_found
from ctxlab.core.world.script import (
    DEFAULT_START,
    Script,
    ScriptedCall,
    ScriptedRound,
    ScriptedTurn,
    assign_call_ids,
)
from ctxlab.engine.clock import VirtualClock
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.loop import RunOutcome
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.retention import LedgerKeeper, RetentionTracker, ledger_of, reread_tokens
from ctxlab.engine.session import run_script
from ctxlab.engine.state import EpisodeState
from ctxlab.engine.tools import ReadOffloaded
from ctxlab.engine.trace import Recorder
from ctxlab.engine.workspace import InMemoryWorkspace, Workspace
from ctxlab.experiments.workspace import DirectoryWorkspace
from ctxlab.models.extractive import ExtractiveSummarizer
from ctxlab.models.scripted import ScriptModel
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.presets.registry import preset
from ctxlab.texts import CTXLAB_TEXTS, Texts
from ctxlab.workloads.filler import filler_at
from ctxlab.workloads.probes import plant

FACT = Probe(kind="fact", key="db-port", value="5432", where="turn 0 round 0")
RULE = Probe(kind="rule", key="no-coauthor", value="Never add Co-Authored-By.", where="turn 0 user")
ARTIFACT = Probe(kind="artifact", key="crash-log", value="logs/crash-17.txt", where="turn 0 round 1")
LATE = Probe(kind="fact", key="region", value="eu-west-3", where="turn 2 round 0")
PROBES = (FACT, RULE, ARTIFACT, LATE)
READ = ToolSchema.of("Read", "Read a file.", {"type": "object"})


def read(path: str, size: int = 2400) -> ScriptedCall:
    text = filler_at(0, path, "code", size)
    return ScriptedCall(tool="Read", input=f'{{"file_path": "{path}"}}', result=(TextBlock(text=text),))


def workload() -> Script:
    """Three turns of file reads; a 4,000-token window compresses during turn 1, before turn 2."""
    turns = (
        ScriptedTurn(
            user=(TextBlock(text="Set up the service.\nUse the staging cluster."),),
            rounds=tuple(ScriptedRound(calls=(read(f"src/a{i}.py"),)) for i in range(4)),
            final="Set up.",
        ),
        ScriptedTurn(
            user=(TextBlock(text="Now deploy it."),),
            rounds=tuple(ScriptedRound(calls=(read(f"src/b{i}.py"),)) for i in range(3)),
            final="Deployed.",
        ),
        ScriptedTurn(
            user=(TextBlock(text="Check the region."),),
            rounds=(ScriptedRound(calls=(read("conf/region.yaml", 400),)),),
            final="Checked.",
        ),
    )
    script = Script(system_prompt="You are a careful engineer.", tools=(READ,), turns=turns)
    return assign_call_ids(plant(script, PROBES).script)


def run(
    recall: float,
    workspace: Workspace | None,
    texts: Texts = CTXLAB_TEXTS,
    strategy: object = None,
    script: Script | None = None,
) -> RunOutcome:
    script = script or workload()
    summarizer = ExtractiveSummarizer.for_texts(
        texts, probes=PROBES, fact_recall=recall, rule_recall=recall, artifact_recall=recall
    )
    return run_script(
        script,
        strategy or AgentScopeStrategy(texts=texts),  # type: ignore[arg-type]
        model=ScriptModel(script),
        summarizer=summarizer,
        texts=texts,
        context_size=4000,
        workspace=workspace,
        probes=PROBES,
    )


def text_sets() -> list[str]:
    return ["ctxlab", "agentscope"]


def load(name: str) -> Texts:
    if name == "agentscope":
        from ctxlab.texts import agentscope_texts

        return agentscope_texts()
    return CTXLAB_TEXTS


def first_snapshot(outcome: RunOutcome) -> tuple[ProbeState, RetentionSnapshot]:
    assert outcome.compressions, "the workload must compress"
    snap = outcome.retention[0]
    assert not snap.final and snap.compressions == 1
    return snap.state_of("db-port"), snap


@pytest.mark.parametrize("texts_name", text_sets())
def test_at_recall_one_the_fact_survives_in_the_summary(texts_name: str) -> None:
    outcome = run(1.0, InMemoryWorkspace(), load(texts_name))
    fact, snap = first_snapshot(outcome)
    assert fact.status == "summary"
    assert fact.places == ("summary",)
    assert FACT.text in str(outcome.compressions[0].summary)
    assert snap.scores.facts.retention == 1.0 and snap.scores.rules.retention == 1.0
    assert snap.scores.artifacts.retention == 1.0


@pytest.mark.parametrize("texts_name", text_sets())
def test_at_recall_zero_the_fact_is_recoverable_only_from_the_offloaded_context(texts_name: str) -> None:
    texts = load(texts_name)
    workspace = InMemoryWorkspace()
    outcome = run(0.0, workspace, texts)
    fact, snap = first_snapshot(outcome)
    path = outcome.compressions[0].offload_path
    assert path == "offload/context-0001.json"
    assert fact.status == "offload" and fact.places == ()
    assert fact.offloads == (path,)
    assert FACT.text not in str(outcome.compressions[0].summary)
    # The re-read cost is what the Read tool's result costs under the run's counter.
    counter = AgentScopeEstimator()
    idle = ScriptModel(Script(system_prompt=""))
    env = Env(
        counter=counter, model=idle, summarizer=idle, texts=texts, context_size=4000, workspace=workspace
    )
    read_back = ReadOffloaded(texts).result(ToolCallBlock.of("x", "Read", {"file_path": path}), env)
    assert read_back.state == "success" and FACT.text in read_back.text
    assert fact.reread_tokens == counter.total(read_back.tally, ()) == reread_tokens(counter, read_back.text)
    assert fact.reread_tokens > 2000  # most of the window
    scores = snap.scores
    assert (scores.facts.retention, scores.facts.offload_share) == (0.0, 1.0)
    assert scores.facts.reread_tokens == fact.reread_tokens


def test_without_a_workspace_the_fact_is_lost() -> None:
    outcome = run(0.0, None)
    fact, snap = first_snapshot(outcome)
    assert fact.status == "lost" and fact.reread_tokens is None
    assert outcome.compressions[0].offload_path is None
    assert snap.scores.facts.lost == 1 and snap.scores.facts.offload_share == 0.0
    final = outcome.retention[-1]
    assert final.final and final.state_of("db-port").status == "lost"


def test_probes_not_delivered_yet_are_pending_then_counted() -> None:
    outcome = run(0.0, InMemoryWorkspace())
    first, final = outcome.retention[0], outcome.retention[-1]
    assert first.pending == ("region",)
    assert [p.key for p in first.probes] == ["db-port", "no-coauthor", "crash-log"]
    assert final.pending == () and final.state_of("region").status == "context"
    assert final.before_call == len(outcome.calls)


def test_a_snapshot_precedes_the_reasoning_call_after_its_compression() -> None:
    outcome = run(1.0, InMemoryWorkspace())
    compressions = [s for s in outcome.retention if not s.final]
    assert len(compressions) == len(outcome.compressions)
    for snap, record in zip(compressions, outcome.compressions, strict=True):
        call = outcome.calls[snap.before_call]
        assert call.kind == "reasoning" and Event(EventKind.COMPRESSED) in call.events
        assert record.before_call == snap.before_call
        assert outcome.calls[snap.before_call - 1].kind == "summary"


def test_the_directory_workspace_gives_the_same_snapshots(tmp_path: Path) -> None:
    memory = run(0.0, InMemoryWorkspace())
    disk = run(0.0, DirectoryWorkspace(tmp_path / "ws"))
    assert memory.retention == disk.retention


def test_runs_with_probes_are_deterministic() -> None:
    assert run(0.5, InMemoryWorkspace()) == run(0.5, InMemoryWorkspace())


def test_tracking_does_not_change_the_run() -> None:
    script = workload()
    plain = run_script(
        script,
        AgentScopeStrategy(texts=CTXLAB_TEXTS),
        model=ScriptModel(script),
        summarizer=ExtractiveSummarizer(probes=PROBES),
        texts=CTXLAB_TEXTS,
        context_size=4000,
        workspace=InMemoryWorkspace(),
    )
    tracked = run(1.0, InMemoryWorkspace())
    assert plain.retention == ()
    assert (plain.calls, plain.compressions, plain.state) == (
        tracked.calls,
        tracked.compressions,
        tracked.state,
    )


@dataclass(frozen=True)
class LedgerStrategy(AgentScopeStrategy):
    """The agentscope preset with a fixed ledger, to test the ledger hook."""

    ledger: str = ""

    def ledger_text(self, state: EpisodeState) -> str:
        return self.ledger


def test_a_strategy_ledger_is_searched() -> None:
    strategy = LedgerStrategy(texts=CTXLAB_TEXTS, ledger=f'{{"result": "{FACT.text}"}}')
    assert isinstance(strategy, LedgerKeeper) and not isinstance(
        AgentScopeStrategy(texts=CTXLAB_TEXTS), LedgerKeeper
    )
    assert ledger_of(strategy)(None) == strategy.ledger  # type: ignore[arg-type]
    fact, _snap = first_snapshot(run(0.0, InMemoryWorkspace(), strategy=strategy))
    assert fact.places == ("ledger",)


def test_a_fact_cut_off_a_tool_result_is_in_the_tool_result_file() -> None:
    # One result of 1,600 tokens with the fact in its middle, cut at 500 tokens: the fact is in
    # the offloaded remainder and nowhere in the context.
    big = ScriptedCall(tool="Read", input='{"file_path": "big.log"}', result=(TextBlock(text="x\n" * 3200),))
    turn = ScriptedTurn(
        user=(TextBlock(text="Read the log."),), rounds=(ScriptedRound(calls=(big,)),), final="ok"
    )
    script = plant(Script(system_prompt="s", tools=(READ,), turns=(turn,)), (FACT,)).script
    script = assign_call_ids(script)
    params = AgentScopeParams(tool_result_limit=500)
    workspace = InMemoryWorkspace()
    outcome = run_script(
        script,
        AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params),
        model=ScriptModel(script),
        summarizer=ExtractiveSummarizer(),
        texts=CTXLAB_TEXTS,
        context_size=100_000,
        workspace=workspace,
        probes=(FACT,),
    )
    (final,) = outcome.retention
    fact = final.state_of("db-port")
    assert fact.status == "offload" and fact.offloads == ("offload/tool-result-0001.txt",)
    remainder = workspace.read("offload/tool-result-0001.txt").decode()
    assert fact.reread_tokens == reread_tokens(AgentScopeEstimator(), remainder)


def test_under_the_protocol_blind_sliding_window_the_fact_is_lost_for_good() -> None:
    workspace = InMemoryWorkspace()
    window = preset("sliding-window")
    outcome = run(1.0, workspace, strategy=window.strategy(window.params(max_tokens=2000, persist=True)))
    assert outcome.compressions == () and workspace.paths() == ()  # nothing summarised or saved
    statuses = [s.state_of("db-port").status for s in outcome.retention if "db-port" not in s.pending]
    assert statuses and set(statuses) == {"lost"}
    final = outcome.retention[-1]
    assert final.final and final.scores.facts.lost == 1 and final.scores.facts.offload_share == 0.0


@dataclass(frozen=True)
class MaskedResults(AgentScopeStrategy):
    """The agentscope preset sending every tool result as a placeholder (a request-only view)."""

    def view(self, state: EpisodeState, env: Env, frame: Frame) -> tuple[Message, ...]:
        masked = ToolResultBlock(id="", name="", output=(TextBlock(text="[masked]"),))
        return tuple(
            m.with_blocks(
                tuple(
                    ToolResultBlock(id=b.id, name=b.name, output=masked.output)
                    if isinstance(b, ToolResultBlock)
                    else b
                    for b in m.blocks
                )
            )
            for m in state.context
        )


def test_the_visible_context_is_what_the_request_shows() -> None:
    stored = run(0.0, None)
    masked = run(0.0, None, strategy=MaskedResults(texts=CTXLAB_TEXTS))
    assert stored.retention[-1].state_of("region").status == "context"
    assert masked.retention[-1].state_of("region").status == "lost"  # stored, but never sent
    region = next(p for p in PROBES if p.key == "region")
    assert probe_found(region, visible_text(masked.state.context))


def test_a_due_snapshot_reads_the_next_request() -> None:
    tracker = RetentionTracker(probes=(FACT,), counter=AgentScopeEstimator(), recorder=Recorder())
    tracker.start("system")
    tracker.deliver((FACT.text,))
    before = EpisodeState(clock=VirtualClock(instant=DEFAULT_START))
    after = replace(before, summary="S")
    assert tracker.on_compress_context(before, CompressRequest(), lambda s, r: after) is after
    assert tracker.snapshots == [] and tracker.pending is after
    shown = (*fixed_messages("system", "S"), text_message("user", f"hint {FACT.text}", id="m1"))
    request = ModelRequest(kind="reasoning", messages=shown, tools=())
    tracker.on_model_call(request, lambda r: ModelResponse())
    (snap,) = tracker.snapshots
    assert snap.state_of("db-port").places == ("context",)  # from the request, not the state
    assert tracker.on_compress_context(after, CompressRequest(), lambda s, r: s) is after
    assert tracker.pending is None  # an unchanged state is no compression
    final = tracker.finish(after)  # the final snapshot reads the last request, not the state after it
    assert len(final) == 2 and final[-1].final and final[-1].state_of("db-port").places == ("context",)


def test_the_final_snapshot_counts_only_the_probes_the_last_request_could_carry() -> None:
    """A probe written in the final answer reached no request: it is pending, not lost."""
    recorder = Recorder()
    tracker = RetentionTracker(probes=(FACT,), counter=AgentScopeEstimator(), recorder=recorder)
    tracker.start("system")
    request = ModelRequest(kind="reasoning", messages=fixed_messages("system", None), tools=(), call_index=0)
    tracker.on_model_call(request, lambda r: ModelResponse())
    recorder.calls.append(None)  # type: ignore[arg-type]  # the call was made: the next one is 1
    tracker.deliver((FACT.text,))  # in the final answer, after the last request
    (final,) = tracker.finish(EpisodeState(clock=VirtualClock(instant=DEFAULT_START)))
    assert final.final and final.pending == ("db-port",) and final.probes == ()


def test_a_compression_no_request_followed_is_snapshot_from_its_state() -> None:
    tracker = RetentionTracker(probes=(FACT,), counter=AgentScopeEstimator(), recorder=Recorder())
    tracker.deliver((FACT.text,))
    state = EpisodeState(clock=VirtualClock(instant=DEFAULT_START))
    first, second = replace(state, summary=f"S {FACT.text}"), replace(state, summary="T")
    tracker.on_compress_context(state, CompressRequest(), lambda s, r: first)
    tracker.on_compress_context(first, CompressRequest(), lambda s, r: second)
    snaps = tracker.finish(second)
    assert [s.state_of("db-port").status for s in snaps] == ["summary", "lost", "lost"]
    assert [s.final for s in snaps] == [False, False, True]
