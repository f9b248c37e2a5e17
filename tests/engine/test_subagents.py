"""Sub-agents: a delegated sub-task runs in a context of its own and only its final answer
returns to the parent, as the result of the delegating call."""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, text_pieces
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.engine.loop import Loop, all_subagents
from ctxlab.engine.middleware import Acted, ActingNext, Middleware, ModelNext
from ctxlab.engine.session import SubagentSetup, assemble
from ctxlab.engine.state import EpisodeState
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.format import parse_script
from tests.parity.workloads import TOOLS, rounds, texts

MARK = "«sub-agent only»"
TASK = ToolSchema.of(
    "task",
    "Delegate a sub-task to a sub-agent.",
    {"type": "object", "properties": {"description": {"type": "string"}}},
)


@dataclass
class Requests(Middleware):
    """Every reasoning request's text pieces, and every call's result text."""

    seen: list[str] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)

    def on_acting(self, state: EpisodeState, call: ToolCallBlock, next: ActingNext) -> Acted:
        acted = next(state, call)
        self.results[call.id] = "".join(text_pieces(acted.result))
        return acted

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        self.seen.append("".join(p for m in request.messages for b in m.blocks for p in text_pieces(b)))
        return next(request)


def marked(round_: ScriptedRound) -> ScriptedRound:
    """The round with the mark at the start of every result."""
    calls = tuple(replace(c, result=(TextBlock(text=MARK), *(c.result or ()))) for c in round_.calls)
    return replace(round_, calls=calls)


@st.composite
def delegating_scripts(draw: st.DrawFn) -> tuple[Script, int]:
    """A parent whose rounds mix its own calls with delegations (sometimes two in one batch) to
    sub-agents whose every result is marked; small windows, so both sides compress."""
    window = draw(st.integers(1500, 12000))
    turns = []
    for _ in range(draw(st.integers(1, 2))):
        parent_rounds = []
        for _ in range(draw(st.integers(1, 4))):
            if draw(st.booleans()):
                parent_rounds.append(draw(rounds(window)))
                continue
            calls = []
            for n in range(draw(st.integers(1, 2))):
                sub_turn = ScriptedTurn(
                    user=(TextBlock(text=draw(texts(max_bytes=200))),),
                    rounds=tuple(marked(draw(rounds(window))) for _ in range(draw(st.integers(1, 4)))),
                    final=f"Answer {n}: " + draw(texts(max_bytes=150)),
                )
                sub = Script(system_prompt="You research one question.", tools=TOOLS, turns=(sub_turn,))
                calls.append(
                    ScriptedCall(tool="task", input=json.dumps({"description": f"q{n}"}), delegate=sub)
                )
            parent_rounds.append(ScriptedRound(calls=tuple(calls)))
        turns.append(
            ScriptedTurn(
                user=(TextBlock(text=draw(texts(max_bytes=200))),),
                rounds=tuple(parent_rounds),
                final=draw(texts(max_bytes=80)),
            )
        )
    script = Script(system_prompt="You lead the research.", tools=(*TOOLS, TASK), turns=tuple(turns))
    return assign_call_ids(script), window


def run(script: Script, window: int, subagent: SubagentSetup | None = None) -> tuple[Loop, Requests]:
    requests = Requests()
    session = assemble(
        script,
        AgentScopeStrategy(texts=CTXLAB_TEXTS, params=AgentScopeParams(tool_result_limit=2000)),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields={"task_overview": "The task."}),
        texts=CTXLAB_TEXTS,
        context_size=window,
        counter=AgentScopeEstimator(),
        middlewares=(requests,),
        subagent_model=ScriptModel,
        subagent=subagent,
    )
    session.run()
    return session.loop, requests


def own_setup(window: int) -> SubagentSetup:
    """Sub-agents with their own AgentScope settings, window and summarizer."""
    return SubagentSetup(
        strategy=AgentScopeStrategy(texts=CTXLAB_TEXTS, params=AgentScopeParams(tool_result_limit=1000)),
        context_size=window,
        summarizer=lambda _sub: FixedSummarizer(fields={"task_overview": "The sub-task."}),
    )


@given(delegating_scripts(), st.none() | st.integers(1500, 12000))
def test_sub_agents_stay_in_their_own_context_and_every_request_passes_the_protocol_checks(
    case: tuple[Script, int], own_window: int | None
) -> None:
    script, window = case
    loop, requests = run(script, window, None if own_window is None else own_setup(own_window))
    assert all(MARK not in text for text in requests.seen)
    delegated = [c for c in script.calls() if c.delegate is not None]
    children = all_subagents(loop)
    assert len(children) == len(delegated)
    for loop_ in (loop, *children):
        assert all(not record.violations for record in loop_.env.recorder.calls)
    assert all(c.env.context_size == (own_window or window) for c in children)
    for call in delegated:
        assert call.delegate is not None
        assert requests.results[call.id or ""] == call.delegate.turns[-1].final


DELEGATING: dict[str, Any] = {
    "system_prompt": "You lead.",
    "tools": [{"name": "task"}, {"name": "search"}],
    "turns": [
        {
            "user": "Find the port.",
            "rounds": [
                {
                    "calls": [
                        {
                            "tool": "task",
                            "input": {"description": "find the port"},
                            "delegate": {
                                "system_prompt": "You search.",
                                "tools": [{"name": "search"}],
                                "turns": [
                                    {
                                        "user": "find the port",
                                        "rounds": [
                                            {"calls": [{"tool": "search", "result": {"bytes": 4000}}]}
                                        ],
                                        "final": "The port is 5432.",
                                    }
                                ],
                            },
                        }
                    ]
                }
            ],
            "final": "5432.",
        }
    ],
}
"""One reply whose one call delegates a 4,000-byte search to a sub-agent."""


def test_the_delegating_call_returns_the_final_answer_and_the_parent_counts_only_its_own() -> None:
    script = assign_call_ids(parse_script(DELEGATING).to_script(seed=0))
    loop, requests = run(script, 100_000)
    parent = loop.env.recorder.calls
    child = loop.subagents[0].env.recorder.calls
    assert len(parent) == 2 and len(child) == 2
    assert "The port is 5432." in requests.seen[1]
    assert max(c.tokens["as_sent"] for c in parent) < 1000 < max(c.tokens["as_sent"] for c in child)


def test_a_released_run_is_freed_without_the_garbage_collector() -> None:
    """The loop's hooks refer back to it; once released, nothing the run made is left in a
    reference cycle, so a process that collects less frees a run as soon as it is done."""
    script = assign_call_ids(parse_script(DELEGATING).to_script(seed=0))
    gc.collect()
    gc.disable()
    try:
        loop, _ = run(script, 100_000)
        assert loop.subagents and loop.env.recorder.calls
        loop.release()
        del loop
        assert gc.collect() == 0
    finally:
        gc.enable()
