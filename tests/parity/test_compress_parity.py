"""A forced compression of an empty context, on the real agentscope 2.0.11 agent and in the lab.

The summary fails and one user message is compressed away; compressing again finds nothing to
compress. AgentScope raises its RuntimeError then (over the trigger) and returns (under it),
keeping its state either way; the lab does the same, in the same words.
"""

from __future__ import annotations

import pytest

from ctxlab.core.agentscope.compress import EmptyContextError
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.model import ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.world.script import Script, ScriptedTurn
from ctxlab.engine.env import Env
from ctxlab.engine.loop import Loop
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.state import EpisodeState
from ctxlab.models.scripted import FunctionModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.texts import agentscope_texts
from tests.parity.agent import minimal_agent, run

SYSTEM = "s" * 200  # 50 tokens: over a forced trigger of 0.01 x 3000 = 30 without any context
WINDOW = 3000
FORCED, UNDER = 0.01, 0.2


def theirs() -> tuple[list[str], str, str]:
    """The real agent (its model refuses every call, so the summary fails): the context and summary
    after the first compression, and the error of the second."""
    from agentscope.message import UserMsg

    agent = minimal_agent(system_prompt=SYSTEM, context_size=WINDOW)
    agent.state.context = [UserMsg("user", "q")]
    forced = agent.context_config.model_copy(update={"trigger_ratio": FORCED})
    run(agent.compress_context(context_config=forced))
    context, summary = [m.id for m in agent.state.context], agent.state.summary
    with pytest.raises(RuntimeError) as raised:
        run(agent.compress_context(context_config=forced))
    assert (agent.state.context, agent.state.summary) == ([], summary)  # the error changed nothing
    under = agent.context_config.model_copy(update={"trigger_ratio": UNDER})
    run(agent.compress_context(context_config=under))
    assert (agent.state.context, agent.state.summary) == ([], summary)  # under the trigger: a no-op
    return context, summary, str(raised.value)


def ours() -> tuple[list[str], str, str]:
    """The lab, the same way: AgentScope's texts, no tools, no workspace, a failing summarizer."""
    texts = agentscope_texts()
    env = Env(
        counter=AgentScopeEstimator(),
        model=FunctionModel(lambda r: ModelResponse()),
        summarizer=FixedSummarizer(fields={}, fail_on=frozenset({1, 2})),
        texts=texts,
        context_size=WINDOW,
    )
    loop = Loop(
        script=Script(system_prompt=SYSTEM),
        strategy=AgentScopeStrategy(texts=texts, params=AgentScopeParams()),
        env=env,
    )
    state = loop.start_turn(
        EpisodeState(clock=loop.run_clock()), 0, ScriptedTurn(user=(TextBlock(text="q"),))
    )
    emptied = env.compress(state, CompressRequest(trigger_ratio=FORCED))
    assert isinstance(emptied.summary, str)
    with pytest.raises(EmptyContextError) as raised:
        env.compress(emptied, CompressRequest(trigger_ratio=FORCED))
    assert env.compress(emptied, CompressRequest(trigger_ratio=UNDER)) == emptied
    return [m.id for m in emptied.context], emptied.summary, str(raised.value)


def test_an_empty_context_over_the_trigger_raises_the_same_error_and_under_it_is_a_no_op() -> None:
    context, summary, error = theirs()
    assert (context, summary) == ([], agentscope_texts().truncated_summary)
    assert error == (
        "The system prompt and the compression summary exceed(s) the compression threshold "
        "(30.0 tokens), cannot be compressed."
    )
    assert ours() == (context, summary, error)
