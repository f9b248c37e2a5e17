"""A state machine over the engine's steps: turns, tool rounds, forced compressions, summary
failures and clock jumps in any order, with the invariants checked after every step."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ctxlab.core.agentscope.compress import EmptyContextError, fixed_messages
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.codec import decode_messages
from ctxlab.core.messages.model import ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator, measure_all
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script, ScriptedTurn
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.state import EpisodeState, append_to_reply
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.scripted import FunctionModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS
from tests.engine.test_loop import FIELDS, TOOL

EST = AgentScopeEstimator()
WINDOW = 3000


def engine(summarizer: FixedSummarizer, workspace: InMemoryWorkspace, trigger: float, limit: int) -> Loop:
    """The loop every step drives: AgentScope's strategy over a silent model, in a 3000-token window."""
    env = Env(
        counter=EST,
        model=FunctionModel(lambda r: ModelResponse()),
        summarizer=summarizer,
        texts=CTXLAB_TEXTS,
        context_size=WINDOW,
        workspace=workspace,
    )
    params = AgentScopeParams(trigger_ratio=trigger, tool_result_limit=limit)
    return Loop(
        script=Script(system_prompt="system prompt", tools=(TOOL,)),
        strategy=AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params),
        env=env,
        settings=RunSettings(),
    )


def test_a_forced_compression_of_an_empty_context_is_agentscope_s_error_and_changes_nothing() -> None:
    """The sequence the machine once failed on: summarizer failing, one user turn, two forced
    compressions. The first truncates everything (the summary fails; a split with no room left
    compresses the whole context). The second finds the system prompt, summary and tools alone over
    the trigger: AgentScope 2.0.11 raises its RuntimeError there and keeps its state
    (tests/parity/test_compress_parity.py runs the real agent); the lab does the same, with the
    same words and a note that says where. Under the trigger it is a no-op, as in AgentScope."""
    loop = engine(FixedSummarizer(fields=FIELDS, fail_on=frozenset({1, 2})), InMemoryWorkspace(), 0.6, 300)
    env = loop.env
    turn = ScriptedTurn(user=(TextBlock(text="q"),))
    state = loop.start_turn(EpisodeState(clock=loop.run_clock()), 0, turn)
    forced = CompressRequest(trigger_ratio=0.01)

    emptied = env.compress(state, forced)
    assert emptied.context == () and emptied.context_tally == measure_all(EST, ())
    assert isinstance(emptied.summary, str) and emptied.summary.startswith(CTXLAB_TEXTS.truncated_summary)
    (first,) = env.recorder.compressions
    assert first.fallback and first.compressed_messages == 1 and first.reserved_messages == 0

    invocations = env.summary_invocations
    with pytest.raises(EmptyContextError) as raised:
        env.compress(emptied, forced)
    assert str(raised.value) == (
        "The system prompt and the compression summary exceed(s) the compression threshold "
        "(30.0 tokens), cannot be compressed."
    )
    (note,) = raised.value.__notes__  # calls 0-2: the failed summary's three attempts
    assert note.startswith(
        "before call 3 (turn 0, iteration 0; 0-based, as in calls.csv): the context is empty"
    )
    assert env.recorder.compressions == [first] and env.summary_invocations == invocations

    assert env.compress(emptied, CompressRequest(trigger_ratio=0.2)) == emptied  # 600 tokens: under it


class EngineMachine(RuleBasedStateMachine):
    """Drives a loop step by step; every step must keep the state consistent."""

    @initialize(trigger=st.sampled_from([0.6, 0.8]), limit=st.sampled_from([300, 50000]))
    def start(self, trigger: float, limit: int) -> None:
        self.summarizer = FixedSummarizer(fields=FIELDS)
        self.workspace = InMemoryWorkspace()
        self.loop = engine(self.summarizer, self.workspace, trigger, limit)
        self.env = self.loop.env
        self.state: EpisodeState | None = None
        self.turns = 0
        self.calls = 0

    @rule(size=st.integers(1, 2000))
    def user_turn(self, size: int) -> None:
        base = self.state or EpisodeState(clock=self.loop.run_clock())
        turn = ScriptedTurn(user=(TextBlock(text="q" * size),))
        self.state = self.loop.start_turn(base, self.turns, turn)
        self.turns += 1

    def _before_call(self, state: EpisodeState) -> EpisodeState:
        return self.loop.strategy.prepare(self._compress(state, CompressRequest()), self.env, self.loop.frame)

    def _compress(self, state: EpisodeState, request: CompressRequest) -> EpisodeState:
        """`env.compress`, checking that a span it offloads decodes to exactly what left the context."""
        before = set(self.workspace.files)
        after = self.env.compress(state, request)
        for path in sorted(set(self.workspace.files) - before):
            if path.startswith("offload/context-"):
                span = decode_messages(json.loads(self.workspace.read(path)))
                kept = [b for m in after.context for b in m.blocks]
                assert [b for m in span for b in m.blocks] + kept == [
                    b for m in state.context for b in m.blocks
                ]
        return after

    @precondition(lambda self: self.state is not None)
    @rule(sizes=st.lists(st.integers(1, 3000), min_size=1, max_size=3), error=st.booleans())
    def tool_round(self, sizes: list[int], error: bool) -> None:
        assert self.state is not None
        state = self._before_call(self.state)
        calls = []
        for size in sizes:
            self.calls += 1
            calls.append(ToolCallBlock(id=f"c{self.calls}", name="retrieve", input=json.dumps({"n": size})))
        state = append_to_reply(state, tuple(calls), EST)
        for call, size in zip(calls, sizes, strict=True):
            result = ToolResultBlock(
                id=call.id,
                name=call.name,
                output=(TextBlock(text="r" * size),),
                state="error" if error else "success",
            )
            state = append_to_reply(state, (self.loop.strategy.on_tool_result(state, result, self.env),), EST)
        self.state = replace(state, cur_iter=state.cur_iter + 1, reply=replace(state.reply, has_usage=True))

    @precondition(lambda self: self.state is not None)
    @rule()
    def final_answer(self) -> None:
        assert self.state is not None
        state = self._before_call(self.state)
        self.state = append_to_reply(state, (TextBlock(text="done"),), EST)

    @precondition(lambda self: self.state is not None)
    @rule(ratio=st.sampled_from([0.01, 0.2]))
    def forced_compression(self, ratio: float) -> None:
        assert self.state is not None
        compressions = len(self.env.recorder.compressions)
        try:
            self.state = self._compress(self.state, CompressRequest(trigger_ratio=ratio))
        except EmptyContextError:
            # Nothing to compress: AgentScope raises here too, and the state stays as it was.
            assert not self.state.context and len(self.env.recorder.compressions) == compressions

    @rule(fail=st.booleans())
    def summarizer_health(self, fail: bool) -> None:
        upcoming = self.env.summary_invocations + 1
        self.summarizer.fail_on = frozenset({upcoming, upcoming + 1}) if fail else frozenset()

    @precondition(lambda self: self.state is not None)
    @rule(seconds=st.sampled_from([-7200, -1, 60, 3600, 86400]))
    def clock_jump(self, seconds: int) -> None:
        assert self.state is not None
        self.state = replace(self.state, clock=self.state.clock.advanced(seconds))

    @invariant()
    def tally_matches_the_context(self) -> None:
        if self.state is not None:
            assert self.state.context_tally == measure_all(EST, self.state.context)

    @invariant()
    def request_view_keeps_every_pair(self) -> None:
        if self.state is not None:
            wire = to_openai([*fixed_messages("system prompt", self.state.summary), *self.state.context])
            assert violations(wire, ["openai", "anthropic"]) == []

    @invariant()
    def recorded_requests_are_valid(self) -> None:
        assert all(not c.violations for c in self.env.recorder.calls)

    @invariant()
    def offloads_read_back(self) -> None:
        for path in self.workspace.files:
            if path.startswith("offload/context-"):
                assert decode_messages(json.loads(self.workspace.read(path))) is not None

    @invariant()
    def the_reply_message_is_the_last_if_present(self) -> None:
        if self.state is not None:
            ids = [m.id for m in self.state.context]
            if self.state.reply.reply_id in ids:
                assert ids.index(self.state.reply.reply_id) == len(ids) - 1


EngineMachine.TestCase.settings = settings(stateful_step_count=30, deadline=None)
TestEngineMachine = EngineMachine.TestCase
