"""Run a real pydantic-ai `Agent` (pydantic-ai-slim 2.62.0) with one compaction capability of
pydantic-ai-harness 0.62.0 on a ctxlab script, and record every request at the model boundary.

`run_pydantic_ai(script, config)` builds the agent on a `FunctionModel` that plays the script, with
the script's tools (their results come from the script, as the lab's world gives them) and the
configured capability (`ClearToolResults`, `SlidingWindowCompaction` or `SummarizingCompaction`),
runs it once per turn on the previous turn's history plus the new user prompt (`prompt`: the user
message's text, or the list of its texts and images), and returns a `PATrace`. A tool returns its
result's text, or with images a list of its texts and images (`BinaryContent`, `ImageUrl`), as a
pydantic-ai tool returns them.

Invariants:
- The scripted model decides each answer from its own position in the script (turn, round),
  never from the request, so compaction does not change what the agent does. A summary call is
  recognised by the summarizer's instructions and answered with the configured text, or raises
  when its invocation is listed in `fail_on`.
- Each request is recorded as pydantic-ai's own OpenAI chat mapping sends it
  (`OpenAIChatModel._map_messages`: the instructions as the system message, a stored summary as
  framed user text), with the tools sent and the harness's estimate of the history.
- The model reports no usage (`unmeasured_requests`), as the lab's scripted models do, so the
  harness estimates from characters alone.
- Nothing nondeterministic reaches a request: timestamps and run ids never do; call ids are the
  script's.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import RequestUsage, UsageLimits
from pydantic_ai_harness.compaction import (
    ClearToolResults,
    SlidingWindowCompaction,
    SummarizingCompaction,
    estimate_token_count,
)

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.texts.pydantic_ai import pydantic_ai_texts

CAPABILITIES = {
    "clear": ClearToolResults,
    "window": SlidingWindowCompaction,
    "summary": SummarizingCompaction,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class PAConfig:
    """One pydantic-ai parity configuration.

    Attributes:
        capability: "clear", "window" or "summary".
        window: the model's context window (what a fraction trigger applies to).
        settings: the capability's keyword arguments (the lab's parameters have the same names).
        summary_text: what the summarizer answers.
        answers: what the first summary calls answer, call by call (retries included), before
            `summary_text`.
        fail_on: summary invocations (1-based) that raise.
        request_limit: each run's `UsageLimits.request_limit` (50, pydantic-ai's default; None:
            no limit), the lab's `request_limit`.
    """

    capability: str = "window"
    window: int = 16_000
    settings: dict[str, Any] = field(default_factory=dict)
    summary_text: str = "## Intent\nCollect the passages.\n\n## Current state\nThree were retrieved."
    answers: tuple[str, ...] = ()
    fail_on: frozenset[int] = frozenset()
    request_limit: int | None = 50

    def answer(self, call: int) -> str:
        """What the summary call numbered `call` (0-based) answers."""
        return self.answers[call] if call < len(self.answers) else self.summary_text


@dataclass(frozen=True, slots=True, kw_only=True)
class PACall:
    """One request: its kind, messages and tools (canonical JSON) and the harness's estimate."""

    kind: str
    messages: tuple[str, ...]
    tools: tuple[str, ...]
    counted: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PATrace:
    """A whole run: every request and whether an error ended it."""

    calls: tuple[PACall, ...]
    error: str | None


def canonical_message(message: dict[str, Any]) -> str:
    """An OpenAI chat message as canonical JSON: role, content (a list of parts as its texts
    joined, or as the parts themselves when it holds any other, such as a returned file), calls,
    the call answered."""
    content = message.get("content")
    if isinstance(content, list) and all(p.get("type") == "text" for p in content):
        content = "".join(str(p.get("text", "")) for p in content)
    elif isinstance(content, list):
        content = [dict(p) for p in content]
    out: dict[str, Any] = {"role": message["role"], "content": content or ""}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            [c["id"], c["function"]["name"], c["function"]["arguments"]] for c in message["tool_calls"]
        ]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("reasoning_content"):  # an empty one (pydantic-ai's backfill) is left out: PA23
        out["reasoning_content"] = message["reasoning_content"]
    return json.dumps(out, ensure_ascii=False, sort_keys=True)


def canonical_tool(name: str, description: str | None, parameters: Any) -> str:
    """A tool as canonical JSON."""
    return json.dumps(
        {"name": name, "description": description or "", "parameters": parameters}, sort_keys=True
    )


class ScriptedPlayer:
    """The `FunctionModel` function: plays the script and records each request."""

    def __init__(self, script: Script, config: PAConfig) -> None:
        self.script, self.config = script, config
        self.calls: list[PACall] = []
        self.turn = self.round = self.summaries = self.summary_calls = 0
        self.openai = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="unused"))
        self.instructions = pydantic_ai_texts().instructions

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        wire = await self.openai._map_messages(messages, info.model_request_parameters)
        summary = info.instructions == self.instructions
        self.calls.append(
            PACall(
                kind="summary" if summary else "reasoning",
                messages=tuple(canonical_message(dict(m)) for m in wire),
                tools=tuple(
                    canonical_tool(t.name, t.description, t.parameters_json_schema)
                    for t in info.function_tools
                ),
                counted=estimate_token_count(messages),
            )
        )
        if summary:
            if not _is_retry(messages):
                self.summaries += 1
            if self.summaries in self.config.fail_on:
                raise RuntimeError(f"summarizer unavailable (invocation {self.summaries})")
            self.summary_calls += 1
            return _response([TextPart(self.config.answer(self.summary_calls - 1))])
        return _response(self._next_parts())

    def _next_parts(self) -> list[Any]:
        turn = self.script.turns[self.turn]
        if self.round < len(turn.rounds):
            scripted = turn.rounds[self.round]
            self.round += 1
            texts = [TextPart(scripted.text)] if scripted.text else []
            # reasoning as `OpenAIChatModel._process_thinking` keeps a message's `reasoning_content`
            thinking = (
                [ThinkingPart(scripted.thinking, id="reasoning_content", provider_name=self.openai.system)]
                if scripted.thinking
                else []
            )
            return [
                *thinking,
                *texts,
                *(ToolCallPart(c.tool, c.input, tool_call_id=c.id) for c in scripted.calls),
            ]
        self.turn, self.round = self.turn + 1, 0
        return [TextPart(turn.final)]


def _is_retry(messages: list[ModelMessage]) -> bool:
    """Whether a summary request asks again after an answer (the summary agent's retry)."""
    return any(isinstance(m, ModelResponse) for m in messages)


def _response(parts: list[Any]) -> ModelResponse:
    return ModelResponse(parts=parts, usage=RequestUsage(unmeasured_requests=1))


def _output(parts: tuple[Part, ...]) -> str | list[Any]:
    """A tool's return: its text, or with images its texts and images (`BinaryContent`, `ImageUrl`)."""
    if not any(isinstance(p, DataBlock) and p.is_image for p in parts):
        return "".join(p.text for p in parts if isinstance(p, TextBlock))
    return [returned(p) for p in parts if isinstance(p, TextBlock) or p.is_image]


def prompt(parts: tuple[Part, ...]) -> str | list[Any]:
    """A user message as the agent's prompt: a lone text as it is, several parts as the list of its
    texts and images in order (`ImageUrl`, `BinaryContent`), as pydantic-ai takes a multimodal
    prompt. Other media are not given."""
    given = [p for p in parts if isinstance(p, TextBlock) or p.is_image]
    if len(given) == 1 and isinstance(given[0], TextBlock):
        return given[0].text
    return [returned(p) for p in given] if given else ""


def returned(part: Part) -> Any:
    """A part as a pydantic-ai tool returns it: a text, an `ImageUrl` or a `BinaryContent`."""
    if isinstance(part, TextBlock):
        return part.text
    if part.kind == "url":
        return ImageUrl(url=part.source)
    return BinaryContent(data=base64.b64decode(part.source), media_type=part.media_type)


def _tool(schema: Any, results: dict[str, ScriptedCall]) -> Tool[Any]:
    def answer(ctx: Any, **kwargs: Any) -> str | list[Any]:
        return _output(results[ctx.tool_call_id].result or ())

    return Tool.from_schema(
        answer, schema.name, schema.description, json.loads(schema.parameters), takes_ctx=True
    )


def run_pydantic_ai(script: Script, config: PAConfig) -> PATrace:
    """Run the real agent on `script` (call ids assigned) under `config`."""
    player = ScriptedPlayer(script, config)
    results = {c.id: c for c in script.calls() if c.id is not None}
    settings = {k: frozenset(v) if k == "exclude_tools" else v for k, v in config.settings.items()}
    capability = CAPABILITIES[config.capability](**settings)
    agent = Agent(
        FunctionModel(player, profile={"context_window": config.window}),
        instructions=script.system_prompt or None,
        tools=[_tool(t, results) for t in script.tools],
        capabilities=[capability],
    )
    history: list[ModelMessage] = []
    error = None
    for turn in script.turns:
        try:
            limits = UsageLimits(request_limit=config.request_limit)
            run = agent.run_sync(prompt(turn.user), message_history=history, usage_limits=limits)
            history = run.all_messages()
        except Exception as failure:  # the run ends; the trace keeps what happened
            error = type(failure).__name__
            break
    return PATrace(calls=tuple(player.calls), error=error)


def dump(trace: PATrace) -> str:
    """The trace as one JSON line (for the two-process check)."""
    return json.dumps(
        {"calls": [[c.kind, c.messages, c.tools, c.counted] for c in trace.calls], "error": trace.error},
        sort_keys=True,
        ensure_ascii=False,
    )
