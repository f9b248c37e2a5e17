"""Run a real strands `Agent` (strands-agents 1.62.0) on a ctxlab script and record every request at
the model boundary.

`run_strands(script, config)` builds the agent with a scripted model, the script's tools (their
results come from the script, as the lab's world gives them) and the configured conversation
manager, invokes it once per turn, and returns a `StrandsTrace`.

Invariants:
- The scripted model decides each answer from its own position in the script (turn, round),
  never from the request; a refused request and a summary call do not move it.
- The model is the provider too: it counts each request with the lab's counter (the request as
  ctxlab messages, with its tools) and refuses one over the window with strands'
  `ContextWindowOverflowException`. strands' own end of retrying (its RecursionError after about
  `REFUSALS` refusals of one invocation, at Python's default recursion limit) varies by a few with
  how deeply the messages nest, so the driver raises the recursion limit during a run and ends an
  invocation itself at the request that follows its `REFUSALS`-th reduced refusal, as the lab does
  (`run_strands(..., own_end=True)` keeps strands' own end instead).
- A summary call is recognised by having no tools and the summarization system prompt; it is
  answered with the configured text, or raises when its invocation is listed in `fail_on`.
- A scripted round's thinking is streamed as strands' OpenAI provider streams a
  `reasoning_content`: a reasoning content block before the text, which strands keeps in the
  assistant message (`reasoningContent`). The provider's formatting leaves every reasoning block
  out of a request (and a message holding nothing else), so the request the driver records and
  counts leaves it out too; the reasoning fields and parts of the provider's own formatting
  (`OpenAIModel.format_request_messages`) are recorded with each request (`reasoning`).
- Each request is recorded in the OpenAI view with the tool names sent and its count; tools run
  one after another (`SequentialToolExecutor`), so results are stored in call order. Its system
  messages are the ones strands' OpenAI provider writes (`_format_system_messages`): none for an
  agent without a system prompt, which is how a workload with an empty one is run.
- A user's images and a result's images reach strands as its `image` content blocks (`format`
  and `source.bytes`, `strands_image`): the script's images that strands takes (base64 PNG, JPEG,
  GIF) and no other media (`takes`). A request is recorded as the OpenAI provider formats it
  (`format_request_tool_message`, `_split_tool_message_images`): a result's texts as one string,
  or, when it returned images, as a list of its texts and the provider's notice, the images
  following the message's results in a user message per result; every image's bytes base64
  encoded anew.
- Nothing nondeterministic reaches a request: no clock, no random id, no usage estimate.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from strands import Agent
from strands.agent.conversation_manager import (
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from strands.agent.conversation_manager.compression.context_compression import DEFAULT_SUMMARIZATION_PROMPT
from strands.models.model import Model
from strands.models.openai import OpenAIModel
from strands.tools.executors import SequentialToolExecutor
from strands.tools.tools import PythonAgentTool
from strands.types.exceptions import ContextWindowOverflowException

from ctxlab.core.agentscope.toolresult import merge_text_parts
from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    HintBlock,
    Part,
    ResultState,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.presets.strands.preset import REFUSALS
from tests.parity.reasoning import reasoning_fields


@dataclass(frozen=True, slots=True, kw_only=True)
class StrandsConfig:
    """One strands parity configuration.

    Attributes:
        manager: "window" (`SlidingWindowConversationManager`) or "summary".
        window: the provider's window in the lab's tokens.
        window_size, should_truncate_results, per_turn: the sliding window's settings.
        summary_ratio, preserve_recent_messages: the summarizing manager's settings.
        summary_text: what the summarizer answers.
        fail_on: summary invocations (1-based) that raise.
    """

    manager: str = "window"
    window: int = 16_000
    window_size: int = 40
    should_truncate_results: bool = True
    per_turn: bool | int = False
    summary_ratio: float = 0.3
    preserve_recent_messages: int = 10
    summary_text: str = "## Conversation Summary\n* The user asked for passages; several were retrieved."
    fail_on: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class StrandsCall:
    """One request: its kind (reasoning / refused / summary), OpenAI view, tools, count, and the
    reasoning its OpenAI form carries (`reasoning_fields`)."""

    kind: str
    messages: str
    tools: tuple[str, ...]
    tokens: int
    reasoning: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StrandsTrace:
    """A whole run: every request, the type of the error that ended it (if any), and how many
    messages the agent keeps at the end (0: not known)."""

    calls: tuple[StrandsCall, ...]
    error: str | None
    kept: int = 0


STRANDS_FORMATS = ("png", "jpeg", "gif")
"""The image formats strands takes that the OpenAI provider sends as their own media type (it reads
`mimetypes.types_map`, which on Python 3.11 has no `.webp`: a WebP image goes as
`application/octet-stream`)."""


def takes(part: Part) -> bool:
    """Whether the driver gives strands `part`: any text, and a base64 image of a format above."""
    if isinstance(part, TextBlock):
        return True
    return part.kind == "base64" and part.media_type in {f"image/{f}" for f in STRANDS_FORMATS}


def strands_image(part: DataBlock) -> dict[str, Any]:
    """An image as a strands `image` content block (its format and bytes)."""
    fmt = part.media_type.split("/", 1)[1]
    return {"image": {"format": fmt, "source": {"bytes": base64.b64decode(part.source)}}}


def strands_content(parts: tuple[Part, ...]) -> list[dict[str, Any]]:
    """Parts as strands content blocks (texts and images)."""
    return [{"text": p.text} if isinstance(p, TextBlock) else strands_image(p) for p in parts]


def lab_image(content: dict[str, Any]) -> DataBlock:
    """A strands image as the OpenAI provider sends it: its media type and its bytes encoded anew."""
    image = content["image"]
    mime = mimetypes.types_map.get(f".{image['format']}", "application/octet-stream")
    data = base64.b64encode(image["source"]["bytes"]).decode("ascii")
    return DataBlock(media_type=mime, source=data, kind="base64")


def image_part(part: dict[str, Any]) -> DataBlock:
    """An `image_url` part of the provider's formatting as a ctxlab data block."""
    head, data = part["image_url"]["url"].split(",", 1)
    return DataBlock(media_type=head[len("data:") : -len(";base64")], source=data, kind="base64")


def lab_results(results: list[dict[str, Any]]) -> list[Block]:
    """A message's results as the OpenAI provider formats them: each tool message (its content a
    string, or a list of texts), then each result's images in a user message of its own."""
    blocks: list[Block] = []
    moved: list[Block] = []
    for result in results:
        tool = OpenAIModel.format_request_tool_message(result)
        tool, images = OpenAIModel._split_tool_message_images(tool)
        content = tool["content"]
        listed = isinstance(content, list)
        parts = tuple(TextBlock(text=t["text"]) for t in content) if listed else (TextBlock(text=content),)
        state: ResultState = "error" if result["status"] == "error" else "success"
        blocks.append(
            ToolResultBlock(id=result["toolUseId"], name="", output=parts, state=state, listed=listed)
        )
        if images is not None:
            moved.append(HintBlock(hint=tuple(map(image_part, images["content"]))))
    return blocks + moved


def lab_message(message: dict[str, Any]) -> Message:
    """A strands message as ctxlab blocks (what the OpenAI view and the counter read), as strands'
    OpenAI provider formats it: a tool use's parsed input written back, a result's content and
    images as `lab_results` gives them (before the message's other content, as the provider
    sends them), an image's bytes encoded anew."""
    blocks: list[Block] = []
    results: list[dict[str, Any]] = []
    for content in message["content"]:
        if "text" in content:
            blocks.append(TextBlock(text=content["text"]))
        elif "image" in content:
            blocks.append(lab_image(content))
        elif "toolUse" in content:
            use = content["toolUse"]
            arguments = OpenAIModel.format_request_message_tool_call(use)["function"]["arguments"]
            blocks.append(ToolCallBlock(id=use["toolUseId"], name=use["name"], input=arguments))
        elif "reasoningContent" in content:
            continue  # never in a request: the OpenAI provider leaves reasoning out
        elif "toolResult" in content:
            results.append(content["toolResult"])
        else:
            raise AssertionError(f"a block the scripted world never makes: {content}")
    return Message(role=message["role"], blocks=(*lab_results(results), *blocks))


def openai_view(messages: list[Message]) -> str:
    """The request in the OpenAI view, as one JSON text (with each result's status)."""
    statuses = [b.state for m in messages for b in m.blocks if isinstance(b, ToolResultBlock)]
    return json.dumps(
        {"messages": to_openai(messages), "statuses": statuses}, sort_keys=True, ensure_ascii=False
    )


class ScriptedStrandsModel(Model):
    """A strands model that plays a ctxlab script, refuses over-window requests and records each."""

    def __init__(self, script: Script, config: StrandsConfig) -> None:
        self.script, self.setup = script, config
        self.tools = {t.name: t for t in script.tools}
        self.counter = AgentScopeEstimator()
        self.calls: list[StrandsCall] = []
        self.turn = self.round = self.summaries = self.refused = 0
        self.own_end = False

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted world asks for no structured output")

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        summary = tool_specs is None and system_prompt == DEFAULT_SUMMARIZATION_PROMPT
        if not summary and self.refused >= REFUSALS and not self.own_end:
            raise RuntimeError(f"refused {REFUSALS} times in this invocation")
        system = OpenAIModel._format_system_messages(system_prompt, **kwargs)
        sent = [*(text_message("system", s["content"]) for s in system), *(lab_message(m) for m in messages)]
        schemas: tuple[ToolSchema, ...] = tuple(self.tools[s["name"]] for s in tool_specs or ())
        tokens = self.counter.count(sent, schemas)
        reasoning = sent_reasoning(messages, system_prompt)
        over = tokens > self.setup.window
        kind = "summary" if summary else "refused" if over else "reasoning"
        self.calls.append(
            StrandsCall(
                kind=kind,
                messages=openai_view(sent),
                tools=tuple(s.name for s in schemas),
                tokens=tokens,
                reasoning=reasoning,
            )
        )
        if summary:
            async for event in self._summary(over):
                yield event
            return
        if over:
            self.refused += 1
            raise ContextWindowOverflowException(
                f"{tokens} tokens are over the window of {self.setup.window}"
            )
        text, calls, thinking = self._next_answer()
        for event in answer_events(text, calls, thinking):
            yield event

    async def _summary(self, over: bool) -> AsyncIterator[dict[str, Any]]:
        self.summaries += 1
        if over:
            raise ContextWindowOverflowException("the summary request is over the window")
        if self.summaries in self.setup.fail_on:
            raise RuntimeError(f"summarizer unavailable (invocation {self.summaries})")
        for event in answer_events(self.setup.summary_text, ()):
            yield event

    def _next_answer(self) -> tuple[str | None, tuple[ScriptedCall, ...], str | None]:
        turn = self.script.turns[self.turn]
        if self.round < len(turn.rounds):
            scripted = turn.rounds[self.round]
            self.round += 1
            if not scripted.calls:  # an answer without calls ends the turn, as in the lab's loop
                self.turn, self.round = self.turn + 1, 0
            return scripted.text, scripted.calls, scripted.thinking
        self.turn, self.round = self.turn + 1, 0
        return turn.final, (), None


def sent_reasoning(messages: Any, system_prompt: str | None) -> tuple[str, ...]:
    """The reasoning strands' OpenAI provider writes into the request (its own formatting)."""
    return reasoning_fields(OpenAIModel.format_request_messages(messages, system_prompt))


def answer_events(
    text: str | None, calls: tuple[ScriptedCall, ...], thinking: str | None = None
) -> list[dict[str, Any]]:
    """The stream events of one answer: its reasoning, its text, then its tool uses."""
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    if thinking:
        events += [
            {"contentBlockStart": {"start": {}}},
            {"contentBlockDelta": {"delta": {"reasoningContent": {"text": thinking}}}},
            {"contentBlockStop": {}},
        ]
    if text:
        events += [
            {"contentBlockStart": {"start": {}}},
            {"contentBlockDelta": {"delta": {"text": text}}},
            {"contentBlockStop": {}},
        ]
    for call in calls:
        start = {"toolUse": {"name": call.tool, "toolUseId": call.id}}
        events += [
            {"contentBlockStart": {"start": start}},
            {"contentBlockDelta": {"delta": {"toolUse": {"input": call.input}}}},
            {"contentBlockStop": {}},
        ]
    events.append({"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}})
    return events


def scripted_tool(schema: ToolSchema, results: dict[str, ScriptedCall]) -> PythonAgentTool:
    """A strands tool whose result is the script's (an error result when scripted so)."""

    def run(tool_use: dict[str, Any], **_: Any) -> dict[str, Any]:
        scripted = results[tool_use["toolUseId"]]
        content = strands_content(tuple(filter(takes, merge_text_parts(scripted.result or ()))))
        status = "error" if scripted.error else "success"
        return {"toolUseId": tool_use["toolUseId"], "status": status, "content": content}

    spec = {
        "name": schema.name,
        "description": schema.description,
        "inputSchema": {"json": json.loads(schema.parameters)},
    }
    return PythonAgentTool(schema.name, spec, run)  # type: ignore[arg-type]


def manager_of(config: StrandsConfig) -> Any:
    """The configured strands conversation manager."""
    if config.manager == "summary":
        return SummarizingConversationManager(
            summary_ratio=config.summary_ratio, preserve_recent_messages=config.preserve_recent_messages
        )
    return SlidingWindowConversationManager(
        window_size=config.window_size,
        should_truncate_results=config.should_truncate_results,
        per_turn=config.per_turn,
    )


DEEP_ENOUGH = 2_000
"""A recursion limit strands' nesting does not reach before the driver's own end of an invocation."""


def run_strands(script: Script, config: StrandsConfig, *, own_end: bool = False) -> StrandsTrace:
    """Run the real agent on `script` (call ids assigned) under `config`: each invocation ends at
    the driver's `REFUSALS` (a recursion limit strands does not reach first), or with `own_end`
    wherever strands ends it under the recursion limit in force."""
    limit = sys.getrecursionlimit()
    if not own_end:
        sys.setrecursionlimit(max(limit, DEEP_ENOUGH))
    try:
        return _run(script, config, own_end=own_end)
    finally:
        sys.setrecursionlimit(limit)


def _run(script: Script, config: StrandsConfig, *, own_end: bool) -> StrandsTrace:
    model = ScriptedStrandsModel(script, config)
    model.own_end = own_end
    results = {c.id: c for c in script.calls() if c.id is not None}
    agent = Agent(
        model=model,
        tools=[scripted_tool(t, results) for t in script.tools],
        system_prompt=script.system_prompt or None,
        conversation_manager=manager_of(config),
        callback_handler=None,
        tool_executor=SequentialToolExecutor(),
    )
    error = None
    for turn in script.turns:
        parts = tuple(filter(takes, turn.user))
        user: str | list[Any] = (
            parts[0].text if len(parts) == 1 and isinstance(parts[0], TextBlock) else strands_content(parts)
        )
        model.refused = 0  # strands' retries nest within one invocation only
        try:
            agent(user)
        except Exception as failure:  # the run ends; the trace keeps what happened
            error = type(failure).__name__
            break
    return StrandsTrace(calls=tuple(model.calls), error=error, kept=len(agent.messages))
