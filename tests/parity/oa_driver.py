"""Run a real `agents.Agent` (openai-agents 0.24.0) through `Runner` on a ctxlab script and record
every request at the model boundary.

`run_openai_agents(script, config)` builds the agent with the SDK's own `agents.testing.
ScriptedModel` (one step per scripted round and one per final answer), one `FunctionTool` per
script tool (its result comes from the script, as the lab's world gives it), an in-memory
`SQLiteSession` with the configured `SessionSettings`, and, for the trimmer, a `ToolOutputTrimmer`
as `RunConfig.call_model_input_filter`. It runs once per turn with the turn's user text and
returns an `OATrace`.

Invariants:
- The scripted model's answers are fixed before the run from the script alone, so trimming or
  limiting the history does not change what the agent does.
- Each request is recorded in the OpenAI chat view: the instructions as the system message, then
  the input items as the SDK's own `Converter.items_to_messages` turns them into chat messages,
  each as canonical JSON (an image's `detail` of `auto`, which the converter writes where none is
  given and the API assumes, left out: CHECKLIST OA21); tools as (name, description, parameters)
  JSON.
- A tool's output is its parts with each run of texts merged, as the lab's world gives a result
  (`merge_text_parts`): one text (or nothing) is that text; any other (data among the texts) is
  the SDK's structured output, a list of `ToolOutputText`, `ToolOutputImage` (an image's URL, a
  data URL when base64) and `ToolOutputFileContent` (other data: a data URL as `file_data`, or
  `file_url`, and its name as `filename`) in order, as `structured.api_parts` gives it.
- A user message of one text is the run's input string; one of several parts, or with an image,
  is a user input item of `input_text` and `input_image` parts, in order.
- An empty final answer is a step with no output items, as `OpenAIChatCompletionsModel` makes of
  a message with no content (`Converter.message_to_output_items`): the run ends with an empty
  output and stores no message.
- A round's thinking reaches the SDK as `OpenAIChatCompletionsModel` delivers a message with
  `reasoning_content`: a reasoning item before the round's message and calls, made by the SDK's
  own converter; requests are converted for the model name `MODEL` unless a test names another.
- Nothing nondeterministic reaches a request: tracing is off, item ids are the script's call ids
  and the scripted model's fixed message id; `max_turns` is above any workload (the lab's loop
  limit is its own, CHECKLIST OA9).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    Runner,
    SQLiteSession,
    ToolOutputFileContent,
    ToolOutputImage,
    ToolOutputText,
)
from agents.extensions import ToolOutputTrimmer
from agents.memory import SessionSettings
from agents.models.chatcmpl_converter import Converter
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext
from openai.types.chat import ChatCompletionMessage

from ctxlab.core.agentscope.toolresult import merge_text_parts
from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.world.script import Script, ScriptedCall

MAX_TURNS = 100_000
MODEL = "scripted"
"""The model name the driver's requests are converted for, as `OpenAIChatCompletionsModel` passes
its own: not a DeepSeek model, so a reasoning item is not replayed as `reasoning_content`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OAConfig:
    """One parity configuration.

    Attributes:
        trimmer: `ToolOutputTrimmer` keyword arguments, or None for no filter.
        limit: the session's `SessionSettings.limit`.
    """

    trimmer: dict[str, Any] | None = field(default_factory=dict)
    limit: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OACall:
    """One request: its messages (OpenAI chat view, canonical JSON) and tools."""

    messages: tuple[str, ...]
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class OATrace:
    """A whole run: every request, and the error that ended it (if any)."""

    calls: tuple[OACall, ...]
    error: str | None = None


def canonical(message: Any) -> str:
    """A chat message or tool as canonical JSON."""
    return json.dumps(message, sort_keys=True, ensure_ascii=False)


def tool_json(name: str, description: str, parameters: Any) -> str:
    """A tool as both sides record it."""
    return canonical({"name": name, "description": description, "parameters": parameters})


def _text(parts: Any) -> str:
    return "".join(p.text for p in parts or () if isinstance(p, TextBlock))


def reasoning_items(thinking: str | None, model_name: str = MODEL) -> list[Any]:
    """The reasoning item `OpenAIChatCompletionsModel` makes of an answer whose message carries
    `reasoning_content` (DeepSeek, Kimi), through the SDK's own converter; none without thinking."""
    message = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": None, "reasoning_content": thinking or ""}
    )
    items = Converter.message_to_output_items(message, provider_data={"model": model_name})
    return [i for i in items if i.type == "reasoning"]


def _steps(script: Script, model_name: str) -> list[Any]:
    steps: list[Any] = []
    for turn in script.turns:
        for scripted in turn.rounds:
            output: list[Any] = reasoning_items(scripted.thinking, model_name)
            output += [assistant_message(scripted.text)] if scripted.text else []
            output += [function_call(c.tool, c.input or "{}", call_id=c.id or "") for c in scripted.calls]
            steps.append(output)
        steps.append([assistant_message(turn.final)] if turn.final else [])
    return steps


def user_input(parts: tuple[Part, ...]) -> str | list[Any]:
    """A user message as the run's input: a lone text as a string, anything else as one user item
    of `input_text` and `input_image` parts (media other than images are left out)."""
    if len(parts) == 1 and isinstance(parts[0], TextBlock):
        return parts[0].text
    content: list[dict[str, str]] = []
    for part in parts:
        if isinstance(part, TextBlock):
            content.append({"type": "input_text", "text": part.text})
        elif isinstance(part, DataBlock) and part.is_image:
            content.append({"type": "input_image", "image_url": _url(part)})
    return [{"role": "user", "content": content}]


def _without_auto_detail(message: Any) -> Any:
    """`message` with each image part's `detail` of `auto` left out (OA21)."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    parts = [
        {**p, "image_url": {k: v for k, v in p["image_url"].items() if (k, v) != ("detail", "auto")}}
        if isinstance(p, dict) and p.get("type") == "image_url"
        else p
        for p in content
    ]
    return {**message, "content": parts}


def _output_part(part: Part) -> ToolOutputText | ToolOutputImage | ToolOutputFileContent:
    if isinstance(part, TextBlock):
        return ToolOutputText(text=part.text)
    if part.is_image:
        return ToolOutputImage(image_url=_url(part))
    if part.kind == "url":
        return ToolOutputFileContent(file_url=part.source, filename=part.name)
    return ToolOutputFileContent(file_data=_url(part), filename=part.name)


def _output(parts: tuple[Part, ...] | None) -> str | list[Any]:
    """A tool's output: one text (or nothing) as a string, anything else as a structured output."""
    merged = merge_text_parts(parts or ())
    if len(merged) <= 1 and all(isinstance(p, TextBlock) for p in merged):
        return _text(merged)
    return [_output_part(p) for p in merged]


def _url(block: DataBlock) -> str:
    return block.source if block.kind == "url" else f"data:{block.media_type};base64,{block.source}"


def _tool(schema: Any, results: dict[str, ScriptedCall]) -> FunctionTool:
    async def answer(ctx: ToolContext[Any], arguments: str) -> str | list[Any]:
        return _output(results[ctx.tool_call_id].result)

    return FunctionTool(
        name=schema.name,
        description=schema.description,
        params_json_schema=json.loads(schema.parameters),
        on_invoke_tool=answer,
        strict_json_schema=False,
    )


def _record(model: ScriptedModel, model_name: str) -> tuple[OACall, ...]:
    calls = []
    for call in model.calls:
        # the chat-completions model writes a system message only for non-empty instructions
        system = [{"role": "system", "content": call.system_instructions}] if call.system_instructions else []
        messages = [*system, *Converter.items_to_messages(call.input, model=model_name)]
        tools = tuple(
            tool_json(t.name, t.description, t.params_json_schema)
            for t in call.tools
            if isinstance(t, FunctionTool)
        )
        calls.append(
            OACall(messages=tuple(canonical(_without_auto_detail(m)) for m in messages), tools=tools)
        )
    return tuple(calls)


async def _run(script: Script, config: OAConfig, model: ScriptedModel) -> str | None:
    results = {c.id: c for c in script.calls() if c.id is not None}
    agent = Agent(
        name="agent",
        instructions=script.system_prompt or None,
        model=model,
        tools=[_tool(t, results) for t in script.tools],
    )
    session = SQLiteSession("parity", ":memory:", session_settings=SessionSettings(limit=config.limit))
    trimmer = None if config.trimmer is None else ToolOutputTrimmer(**config.trimmer)
    run_config = RunConfig(call_model_input_filter=trimmer, tracing_disabled=True)
    try:
        for turn in script.turns:
            await Runner.run(
                agent, user_input(turn.user), session=session, run_config=run_config, max_turns=MAX_TURNS
            )
    except Exception as failure:  # the run ends; the trace keeps what happened
        return type(failure).__name__
    finally:
        session.close()
    return None


def run_openai_agents(script: Script, config: OAConfig, *, model_name: str = MODEL) -> OATrace:
    """Run the real agent on `script` (call ids assigned) under `config`, its requests converted
    for `model_name` as the chat-completions model of that name converts them."""
    model = ScriptedModel(_steps(script, model_name))
    error = asyncio.run(_run(script, config, model))
    return OATrace(calls=_record(model, model_name), error=error)
