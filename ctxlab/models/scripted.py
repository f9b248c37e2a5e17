"""Scripted reasoning models: a queue of answers, a function, or a workload script to follow.

Invariants:
- Fakes are deterministic and never count tokens: usage is the engine's.
- `ScriptedModel` records every request and fails loudly (`UnexpectedModelCall`) when its queue is
  empty; `assert_complete()` checks that every scripted answer was used.
- `ScriptModel` answers the reasoning calls of a `Script`: the k-th call of turn t gets round k of
  turn t, then the turn's final answer; a call with tool choice `none` (the forced last step)
  gets the final answer at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ctxlab.core.messages.blocks import Block, TextBlock, ThinkingBlock, ToolCallBlock
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.world.script import Script, ScriptedRound

Step = ModelResponse | Callable[[ModelRequest], ModelResponse] | BaseException


class UnexpectedModelCall(AssertionError):
    """A scripted model was called more often than its script allows."""


@dataclass(slots=True)
class ScriptedModel:
    """Answers from a queue: responses, callables of the request, or exceptions to raise."""

    steps: list[Step]
    requests: list[ModelRequest] = field(default_factory=list)
    used: int = 0

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The next scripted answer."""
        self.requests.append(request)
        if self.used >= len(self.steps):
            raise UnexpectedModelCall(
                f"call {request.call_index} ({request.kind}) arrived after all {len(self.steps)} scripted "
                "answers were used; add a step for it"
            )
        step = self.steps[self.used]
        self.used += 1
        if isinstance(step, BaseException):
            raise step
        return step if isinstance(step, ModelResponse) else step(request)

    def assert_complete(self) -> None:
        """Every scripted answer was used."""
        if self.used != len(self.steps):
            raise AssertionError(
                f"{len(self.steps) - self.used} of {len(self.steps)} scripted answers unused"
            )


@dataclass(slots=True)
class FunctionModel:
    """The test is the model: `fn(request)` answers."""

    fn: Callable[[ModelRequest], ModelResponse]
    requests: list[ModelRequest] = field(default_factory=list)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """Whatever `fn` answers."""
        self.requests.append(request)
        return self.fn(request)


def round_response(round_: ScriptedRound) -> ModelResponse:
    """The model response that makes one scripted round: thinking, text, then the calls."""
    blocks: list[Block] = []
    if round_.thinking:
        blocks.append(ThinkingBlock(thinking=round_.thinking))
    if round_.text:
        blocks.append(TextBlock(text=round_.text))
    for call in round_.calls:
        if call.id is None:
            raise ValueError("script calls need ids: pass the script through assign_call_ids first")
        blocks.append(ToolCallBlock(id=call.id, name=call.tool, input=call.input))
    return ModelResponse(blocks=tuple(blocks))


@dataclass(slots=True)
class ScriptModel:
    """Follows a workload script (ids assigned), round by round, turn by turn."""

    script: Script
    turn: int = -1
    round_index: int = 0
    # The requests answered, in order, for inspection; None keeps none, as a run does: each
    # request holds its whole context, so keeping them all costs O(calls x context) memory.
    requests: list[ModelRequest] | None = field(default_factory=list)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The next round of the request's turn, or the turn's final answer."""
        if self.requests is not None:
            self.requests.append(request)
        if request.turn != self.turn:
            self.turn, self.round_index = request.turn, 0
        turn = self.script.turns[request.turn]
        if request.tool_choice == "none" or self.round_index >= len(turn.rounds):
            return ModelResponse(blocks=(TextBlock(text=turn.final),)) if turn.final else ModelResponse()
        self.round_index += 1
        return round_response(turn.rounds[self.round_index - 1])

    def rounds_left(self) -> int:
        """Scripted rounds of the current turn not answered yet."""
        if self.turn < 0:
            return sum(len(t.rounds) for t in self.script.turns)
        return len(self.script.turns[self.turn].rounds) - self.round_index


def text_answers(texts: Sequence[str]) -> list[Step]:
    """A queue of plain text answers."""
    return [ModelResponse.of_text(t) for t in texts]
