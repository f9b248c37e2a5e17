"""Middleware hooks: order, onion wrapping, short-circuits, and costs nothing when unused."""

from __future__ import annotations

from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.world.script import ScriptedRound
from ctxlab.engine.examples import TokenBudget, Tracer
from ctxlab.engine.middleware import (
    Acted,
    ActingNext,
    CompressNext,
    CompressRequest,
    Middleware,
    ModelNext,
    bucket,
    chain,
)
from ctxlab.engine.state import EpisodeState
from tests.engine.test_loop import FIELDS, big_script, run, script, scripted_call

TWO_ROUNDS = script(ScriptedRound(calls=(scripted_call(10),)), ScriptedRound(calls=(scripted_call(10),)))


def test_tracer_sees_every_hook_in_loop_order() -> None:
    tracer = Tracer()
    loop = run(TWO_ROUNDS, middlewares=(tracer,))
    loop.run()
    hooks = [(hook, phase) for hook, phase, _ in tracer.events]
    assert hooks[:2] == [("on_system_prompt", "before"), ("on_reply", "before")]
    assert hooks[2:7] == [
        ("on_compress_context", "before"),
        ("on_compress_context", "after"),
        ("on_reasoning", "before"),
        ("on_model_call", "before"),
        ("on_reasoning", "after"),
    ]
    assert ("on_acting", "before") in hooks
    assert hooks[-1] == ("on_reply", "after")
    assert hooks.count(("on_model_call", "before")) == 3


def test_model_call_hook_skips_summary_calls() -> None:
    tracer = Tracer()
    loop = run(big_script(), window=1000, middlewares=(tracer,))
    outcome = loop.run()
    reasoning = sum(1 for c in outcome.calls if c.kind == "reasoning")
    assert sum(1 for e in tracer.events if e[0] == "on_model_call") == reasoning
    assert any(c.kind == "summary" for c in outcome.calls)


class Rewrite(Middleware):
    """Changes inputs before `next` and outputs after it."""

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        response = next(request)
        return ModelResponse(
            blocks=tuple(
                TextBlock(text=b.text.upper()) if isinstance(b, TextBlock) else b for b in response.blocks
            )
        )

    def on_acting(self, state: EpisodeState, call: ToolCallBlock, next: ActingNext) -> Acted:
        acted = next(state, call)
        result = ToolResultBlock(
            id=acted.result.id, name=acted.result.name, output=(TextBlock(text="redacted"),)
        )
        return Acted(state=acted.state, result=result)

    def on_system_prompt(self, prompt: str) -> str:
        return prompt + " Be brief."


def test_onion_hooks_change_inputs_and_outputs() -> None:
    loop = run(TWO_ROUNDS, middlewares=(Rewrite(),))
    outcome = loop.run()
    reply = outcome.state.context[-1]
    assert reply.blocks[-1] == TextBlock(text="ANSWER")
    assert all(b.text == "redacted" for b in reply.blocks if isinstance(b, ToolResultBlock))
    assert loop.frame.system_prompt.endswith("Be brief.")


class Outer(Middleware):
    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def on_compress_context(
        self, state: EpisodeState, request: CompressRequest, next: CompressNext
    ) -> EpisodeState:
        self.log.append(f"{self.name}>")
        out = next(state, request)
        self.log.append(f"<{self.name}")
        return out


def test_first_middleware_is_the_outermost_layer() -> None:
    log: list[str] = []
    layers = bucket([Outer(log, "a"), Tracer(), Outer(log, "b")], "on_compress_context")
    wrapped = chain(layers[::2], "on_compress_context", lambda state, request: log.append("core") or state)
    wrapped(None, CompressRequest())  # type: ignore[arg-type]
    assert log == ["a>", "b>", "core", "<b", "<a"]


def test_unused_hooks_cost_nothing() -> None:
    def inner(request: ModelRequest) -> ModelResponse:
        return ModelResponse()

    assert chain((), "on_model_call", inner) is inner
    assert bucket([Tracer(), Middleware()], "on_acting") == bucket([Tracer()], "on_acting")


def test_token_budget_stops_the_reply_without_another_model_call() -> None:
    s = script(*[ScriptedRound(calls=(scripted_call(400),))] * 6)
    budget = TokenBudget(budget=250)
    loop = run(s, middlewares=(budget,))
    outcome = loop.run()
    assert budget.stopped_replies == 1
    assert outcome.state.context[-1].blocks[-1] == TextBlock(text=budget.message)
    assert len(outcome.calls) < 7
    assert FIELDS
