"""Regressions for the failures users report in public issues, each shown failing under the naive
strategy and passing under the right one:

- a split parallel batch (agentscope #2090, QwenPaw #5986): a cut inside `[A, B, resA, resB]`;
- an orphan after trimming (langchain #33245, openai-agents-python #4322);
- a pending call kept (google/adk-python #4740, letta #2605): compaction must not take away a
  call whose result has not arrived yet;
- a compaction loop with a large fixed floor (kimi-code #2498, pipecat #5505, OpenHands #8630);
- evict → read → re-evict (deepagentsjs #82, fixed by a character cap on reads, PR #172).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import ClassVar

from ctxlab.core.agentscope.compress import ReplyMark, fixed_messages
from ctxlab.core.agentscope.inject import InjectionParams
from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.core.compaction.microcompact import parse_arguments
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.units import split_at_unit, view_units
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import DEFAULT_START, ScriptedRound
from ctxlab.engine.clock import VirtualClock
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import BuiltinOutcome, Frame, RunSettings, Strategy
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.state import EpisodeState, append_to_reply, with_context
from ctxlab.engine.tools import ReadOffloaded
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.presets.deepagents import preset as deepagents
from ctxlab.presets.freetext import FreeTextSummaryParams, SummarizeOldest
from ctxlab.presets.langchain import preset as langchain
from ctxlab.presets.langchain.preset import LangChainSummaryParams
from ctxlab.presets.nonoka import preset as nonoka
from ctxlab.presets.sliding_window import preset as sliding_window
from ctxlab.presets.steps import Step, Stepped, StepStrategy
from ctxlab.texts import CTXLAB_TEXTS
from tests.zoo.runs import COUNTER, FIELDS, one_turn, results_of, run, text, tool_call, turns


def batch(k: int, size: int = 2000) -> ScriptedRound:
    """A round of two parallel calls: stored `[A, B, resA, resB]`."""
    return ScriptedRound(
        calls=(
            tool_call("retrieve", f'{{"query": "a{k}"}}', text(size, "a")),
            tool_call("retrieve", f'{{"query": "b{k}"}}', text(size, "b")),
        )
    )


@dataclass(frozen=True, slots=True)
class NaiveKeepLast(Step):
    """Keep the last `keep` view messages, dropping everything before: the cut of LangChain's
    summarization before its safe cutoff (PR #34195 / #34609), blind to call batches."""

    keep: int
    trigger: int
    key: ClassVar[str] = "naive_keep_last"

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        units = view_units(state.context)
        tokens = env.counter.count(
            (*fixed_messages(frame.system_prompt, state.summary), *state.context), frame.tools
        )
        if tokens < self.trigger or len(units) <= self.keep:
            return Stepped(state=state)
        kept = split_at_unit(state.context, units, len(units) - self.keep).tail
        return Stepped(state=with_context(state, kept, env.counter))


def test_a_parallel_batch_split_by_a_naive_cut_orphans_its_results_and_a_protocol_unit_cut_does_not() -> None:
    script = one_turn(*(batch(k) for k in range(6)))
    naive = run(StepStrategy(name="naive", steps=(NaiveKeepLast(keep=2, trigger=3000),)), script)
    assert naive.violations(), "a cut two messages from the end falls inside a batch"
    split = {v.call_id for c in naive.outcome.calls for v in c.violations if v.rule == "openai"}
    assert all(i.startswith("call-") for i in split)
    summary = LangChainSummaryParams(trigger=ContextSize("tokens", 3000), keep=ContextSize("messages", 3))
    safe = run(langchain.build_summary(summary, CTXLAB_TEXTS), script)
    assert safe.violations() == [] and "compressed" in safe.events()  # the cut moves back to the call
    quiet = AgentScopeParams(injection=InjectionParams(inject_runtime_state=False))
    fixed_point = run(AgentScopeStrategy(texts=CTXLAB_TEXTS, params=quiet), script, window=5000)
    assert fixed_point.violations() == [] and fixed_point.outcome.compressions  # PR #2093


def test_trimming_to_the_last_messages_orphans_a_result_unless_it_trims_whole_units() -> None:
    script = one_turn(*(batch(k) for k in range(5)))
    # Each batch adds ~1,000 tokens; at 2,850 the window stops after dropping one of two results.
    blind = run(sliding_window.PRESET.strategy(), script, window=2850)
    orphaned = {v.call_id for c in blind.outcome.calls for v in c.violations if v.rule == "openai"}
    assert orphaned and all(int(i[-4:]) % 2 == 0 for i in orphaned)  # the second result of a batch
    units = run(nonoka.PRESET.strategy(), script, window=2850)
    assert units.violations("nonoka") == [] and "trimmed" in units.events() and max(units.reasoning()) <= 2850


def pending_state() -> EpisodeState:
    """A reply whose last call waits for a human approval (its result has not arrived)."""
    history: list[Message] = [text_message("user", "Deploy the fix.", id="msg-0001")]
    blocks = []
    for k in range(4):
        blocks += [
            ToolCallBlock(id=f"c{k}", name="retrieve", input="{}"),
            ToolResultBlock(id=f"c{k}", name="retrieve", output=text(4000)),
        ]
    blocks.append(ToolCallBlock(id="approve", name="request_approval", input='{"action": "deploy"}'))
    history.append(Message(role="assistant", blocks=tuple(blocks), id="reply-0002"))
    state = EpisodeState(clock=VirtualClock(instant=DEFAULT_START), turn=0)
    reply = ReplyMark(reply_id="reply-0002", has_usage=True, name="agent")
    return replace(with_context(state, tuple(history), COUNTER), reply=reply)


def resume(strategy: Strategy) -> list[str]:
    """Compact before resuming, then let the approval arrive: the next request's violations."""
    env = Env(
        counter=COUNTER,
        model=ScriptModel(one_turn()),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=4000,
    )
    frame = Frame(system_prompt="You deploy.", tools=(), settings=RunSettings())
    state = strategy.compress(pending_state(), env, frame, CompressRequest())
    approved = ToolResultBlock(id="approve", name="request_approval", output=(TextBlock(text="approved"),))
    state = append_to_reply(state, (approved,), COUNTER)
    request = (*fixed_messages(frame.system_prompt, state.summary), *strategy.view(state, env, frame))
    return [str(v) for v in violations(to_openai(request), ("openai", "anthropic"))]


def test_a_pending_call_summarized_away_leaves_its_result_orphaned_and_eviction_keeps_it() -> None:
    keep_none = ContextSize("messages", 0)
    everything = FreeTextSummaryParams(trigger=(ContextSize("tokens", 3000),), keep=keep_none)
    summarizing = StepStrategy(name="summary", steps=(SummarizeOldest(everything),))
    assert resume(summarizing) != []  # ADK #4740's shape
    assert resume(nonoka.PRESET.build(nonoka.NonokaParams(), CTXLAB_TEXTS)) == []
    # LangChain keeps at least the last message (a keep of 0 is refused), so the pending call stays
    tiny = LangChainSummaryParams(trigger=ContextSize("tokens", 3000), keep=ContextSize("tokens", 1))
    assert resume(langchain.build_summary(tiny, CTXLAB_TEXTS)) == []


def test_a_fixed_floor_over_the_trigger_loops_under_agentscope_and_stops_under_the_zoo_breaker() -> None:
    rounds = [ScriptedRound(calls=(tool_call("retrieve", "{}", text(800)),)) for _ in range(8)]
    script = one_turn(*rounds, system="s" * 3300)  # 825 tokens of a 1,000-token window: trigger 800
    quiet = AgentScopeParams(injection=InjectionParams(inject_runtime_state=False))
    looping = run(AgentScopeStrategy(texts=CTXLAB_TEXTS, params=quiet), script, window=1000)
    reasoning = [c for c in looping.outcome.calls if c.kind == "reasoning"]
    assert len(looping.outcome.compressions) == len(reasoning)  # a summary before every call
    assert looping.events().count(EventKind.LOOP_WARNING) == len(reasoning)
    summary = FreeTextSummaryParams(trigger=(ContextSize("fraction", 0.8),), keep=ContextSize("messages", 2))
    stopping = run(StepStrategy(name="summary", steps=(SummarizeOldest(summary),)), script, window=1000)
    assert len([c for c in stopping.outcome.calls if c.kind == "summary"]) == 2
    assert stopping.events().count(EventKind.COMPACTION_STOPPED) == 1


@dataclass(frozen=True, slots=True)
class PagedRead:
    """A reader capped at `max_chars` characters per call, from an `offset` (deepagentsjs PR #172)."""

    max_chars: int = 2000

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        arguments = parse_arguments(call.input)
        assert env.workspace is not None
        data = env.workspace.read(str(arguments.get("file_path"))).decode("utf-8")
        offset = int(str(arguments.get("offset", 0)))
        page = data[offset : offset + self.max_chars]
        return BuiltinOutcome(
            state=state, result=ToolResultBlock(id=call.id, name=call.name, output=(TextBlock(text=page),))
        )


def test_an_evicted_result_read_back_whole_is_evicted_again_unless_reads_are_capped() -> None:
    fact = "The deploy key is K-2027."
    page = "x" * 1500 + fact + "x" * 98_000  # one very long line: a line limit would return all of it
    fetch = ScriptedRound(calls=(tool_call("fetch_page", '{"url": "u"}', (TextBlock(text=page),)),))

    def reading(tool: str) -> ScriptedRound:
        return ScriptedRound(
            calls=(tool_call(tool, json.dumps({"file_path": "offload/tool-result-0001.txt"}), None),)
        )

    read = reading("read_file")
    script = one_turn(fetch, read, read, read)
    naive = run(  # a reader deepagents does not exclude from eviction
        deepagents.PRESET.strategy(),
        one_turn(fetch, *(reading("open_file"),) * 3),
        builtins={"open_file": ReadOffloaded(CTXLAB_TEXTS)},
    )
    assert len(naive.workspace.files) == 4 and naive.events().count("offloaded") == 4  # re-evicted every time
    assert not any(fact in r.text for r in results_of(naive)[1:])  # the fact never comes back
    capped = run(deepagents.PRESET.strategy(), script, builtins={"read_file": PagedRead()})
    assert len(capped.workspace.files) == 1  # read_file is excluded from eviction, and pages are small
    assert all(fact in r.text and len(r.text) == 2000 for r in results_of(capped)[1:])
    assert fact not in results_of(capped)[0].text  # the preview clips the line before the fact


def test_the_sliding_window_that_persists_its_drop_keeps_the_orphan_in_every_later_request() -> None:
    """QwenPaw #5986: an orphan saved into the history breaks every later request."""
    script = turns(tuple(batch(k) for k in range(3)), tuple(batch(k) for k in range(3, 6)))
    params = sliding_window.WindowParams(max_tokens=2850, persist=True)
    ran = run(sliding_window.build(params, CTXLAB_TEXTS), script, window=10_000)
    broken = [c.call_index for c in ran.outcome.calls if c.violations]
    assert broken and broken == list(range(broken[0], len(ran.outcome.calls)))
