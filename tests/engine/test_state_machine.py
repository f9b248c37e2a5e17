"""A state machine over the engine's steps: turns, tool rounds, forced compressions, summary
failures and clock jumps in any order, with the invariants checked after every step."""

from __future__ import annotations

import json
from dataclasses import replace

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


class EngineMachine(RuleBasedStateMachine):
    """Drives a loop step by step; every step must keep the state consistent."""

    @initialize(trigger=st.sampled_from([0.6, 0.8]), limit=st.sampled_from([300, 50000]))
    def start(self, trigger: float, limit: int) -> None:
        self.summarizer = FixedSummarizer(fields=FIELDS)
        self.workspace = InMemoryWorkspace()
        self.env = Env(
            counter=EST,
            model=FunctionModel(lambda r: ModelResponse()),
            summarizer=self.summarizer,
            texts=CTXLAB_TEXTS,
            context_size=WINDOW,
            workspace=self.workspace,
        )
        params = AgentScopeParams(trigger_ratio=trigger, tool_result_limit=limit)
        self.loop = Loop(
            script=Script(system_prompt="system prompt", tools=(TOOL,)),
            strategy=AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params),
            env=self.env,
            settings=RunSettings(),
        )
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
        try:
            self.state = self._compress(self.state, CompressRequest(trigger_ratio=ratio))
        except EmptyContextError:  # AgentScope's own error: over the trigger, nothing to compress
            assert not self.state.context

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


EngineMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
TestEngineMachine = EngineMachine.TestCase
