"""Run the real `langchain.agents.create_agent` (langchain 1.5.0) on a ctxlab script and record
every request at the model boundary.

`run_langchain(script, config)` builds the agent with a scripted chat model, the script's tools
(their results come from the script, as the lab's world gives them) and the configured
middleware (`SummarizationMiddleware` or `ContextEditingMiddleware` with `ClearToolUsesEdit`),
invokes it once per turn on the previous turn's messages plus the new user message, and returns
an `LCTrace`.

Invariants:
- The scripted model decides each answer from its own position in the script (turn, round),
  never from the request, so compression does not change what the agent does. A summary call is
  recognised by the summary prompt and answered with the configured text, or raises when its
  invocation is listed in `fail_on` (every attempt of it fails).
- Each request is recorded in the OpenAI view (`LCMessage`s, the system prompt first) with the
  tools sent, what LangChain's counter gives for its messages without the system prompt, and
  the reasoning the request carries in langchain-core's OpenAI form
  (`convert_to_openai_messages`, read by `reasoning_fields`).
- A scripted round's thinking comes back as an OpenAI-compatible chat model's integration
  delivers a `reasoning_content` (DeepSeek, Qwen, Kimi through LangChain): an AI message whose
  `additional_kwargs` holds it, its content the round's text.
- A scripted call's arguments are the text the model wrote, read as those integrations read it
  (langchain-openai's `_convert_dict_to_message`): langchain-core's own `parse_tool_call`, an
  invalid tool call (`make_invalid_tool_call`) when it raises; the AI message is built from
  what it gives, so arguments it cannot hold fail the model call as they would there.
- Nothing nondeterministic reaches a request: message ids are the only random values and no
  request carries them; retries do not wait (the retry count is LangChain's).
- A run that raises (a summary failing on every attempt) ends there; the trace keeps every call
  made and the error's type.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain.agents.middleware._retry import default_retry_on
from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import convert_to_openai_messages, count_tokens_approximately
from langchain_core.output_parsers.openai_tools import make_invalid_tool_call, parse_tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.presets.lc_messages import LCMessage
from tests.parity.lc_bridge import from_langchain
from tests.parity.reasoning import reasoning_fields

SUMMARY_HEAD = DEFAULT_SUMMARY_PROMPT.split("{messages}")[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class LCConfig:
    """One LangChain parity configuration.

    Attributes:
        middleware: "summary" or "clear".
        window: the model profile's `max_input_tokens` (fraction triggers and keeps).
        trigger: the summarization trigger as LangChain takes it (tuple, dict or list of them).
        keep: the summarization `keep` tuple.
        trim_tokens_to_summarize: LangChain's trim limit (None: no trim).
        summary_text: what the summarizer answers.
        fail_on: summary invocations (1-based) whose every attempt raises.
        clear: `ClearToolUsesEdit` keyword arguments.
        anthropic: the model says it is an Anthropic chat model (3.3 characters per token).
    """

    middleware: str = "summary"
    window: int = 16_000
    trigger: Any = ("tokens", 4000)
    keep: tuple[str, float] = ("messages", 20)
    trim_tokens_to_summarize: int | None = 4000
    summary_text: str = "The user asked for passages; three were retrieved."
    fail_on: frozenset[int] = frozenset()
    clear: dict[str, Any] = field(default_factory=dict)
    anthropic: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LCCallRecord:
    """One request: its kind, messages (OpenAI view), tools sent, LangChain's count, and the
    reasoning it sends back (the `reasoning_content` fields of its OpenAI form)."""

    kind: str
    messages: tuple[LCMessage, ...]
    tools: tuple[str, ...]
    counted: int
    reasoning: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LCTrace:
    """A whole run: every request, the final messages, and the error that ended it (if any)."""

    calls: tuple[LCCallRecord, ...]
    final: tuple[LCMessage, ...]
    error: str | None


class ScriptedLCModel(BaseChatModel):
    """A chat model that plays a ctxlab script and records what it is sent."""

    script: Any
    config: Any
    calls: list[LCCallRecord] = []  # noqa: RUF012 (a pydantic field, copied per instance)
    turn: int = 0
    round: int = 0
    summaries: int = 0
    failed: bool = False

    @property
    def _llm_type(self) -> str:
        return "anthropic-chat-scripted" if self.config.anthropic else "ctxlab-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = tuple(json.dumps(t, sort_keys=True) for t in kwargs.get("tools") or ())
        view = tuple(from_langchain(m) for m in messages)
        counted = count_tokens_approximately([m for m in messages if m.type != "system"])
        summary = (
            len(messages) == 1
            and isinstance(messages[0], HumanMessage)
            and messages[0].text.startswith(SUMMARY_HEAD)
        )
        self.calls.append(
            LCCallRecord(
                kind="summary" if summary else "reasoning",
                messages=view,
                tools=tools,
                counted=counted,
                reasoning=sent_reasoning(messages),
            )
        )
        if summary:
            return self._summary()
        return ChatResult(generations=[ChatGeneration(message=self._next_answer())])

    def _summary(self) -> ChatResult:
        """The summary text, or a failure on every attempt of an invocation listed in `fail_on`
        (a retried attempt repeats the failed request right after it: the same invocation)."""
        retried = self.failed and len(self.calls) > 1 and self.calls[-2].messages == self.calls[-1].messages
        if not retried:
            self.summaries += 1
        self.failed = self.summaries in self.config.fail_on
        if self.failed:
            raise RuntimeError(f"summarizer unavailable (invocation {self.summaries})")
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.config.summary_text))])

    def _next_answer(self) -> AIMessage:
        turn = self.script.turns[self.turn]
        if self.round < len(turn.rounds):
            scripted = turn.rounds[self.round]
            self.round += 1
            if not scripted.calls:  # an answer without calls ends the turn, as in the lab's loop
                self.turn, self.round = self.turn + 1, 0
            return reasoning_answer(scripted.text or "", scripted.calls, scripted.thinking)
        self.turn, self.round = self.turn + 1, 0
        return AIMessage(content=turn.final)


def reasoning_answer(text: str, calls: Sequence[ScriptedCall], thinking: str | None) -> AIMessage:
    """An answer as LangChain's OpenAI-compatible integrations keep it: a `reasoning_content` in
    the AI message's `additional_kwargs`, its content the text alone, the calls as `read_calls`
    reads them."""
    extra = {"reasoning_content": thinking} if thinking else {}
    valid, invalid = read_calls(calls)
    return AIMessage(content=text, tool_calls=valid, invalid_tool_calls=invalid, additional_kwargs=extra)


def read_calls(calls: Sequence[ScriptedCall]) -> tuple[list[Any], list[Any]]:
    """The calls and invalid calls an OpenAI-compatible integration reads from the model's
    `tool_calls` (the arguments as the model wrote them)."""
    valid, invalid = [], []
    for call in calls:
        raw = {"id": call.id, "type": "function", "function": {"name": call.tool, "arguments": call.input}}
        try:
            valid.append(parse_tool_call(raw, return_id=True))
        except Exception as failure:  # as the integration catches it
            invalid.append(make_invalid_tool_call(raw, str(failure)))
    return valid, invalid


def sent_reasoning(messages: Sequence[BaseMessage]) -> tuple[str, ...]:
    """The reasoning the request carries in langchain-core's OpenAI form."""
    return reasoning_fields(convert_to_openai_messages(messages))


class ScriptedWorld(AgentMiddleware):  # type: ignore[type-arg]
    """Answers every tool call with the script's result (an error result when scripted so)."""

    def __init__(self, results: dict[str, ScriptedCall]) -> None:
        super().__init__()
        self.results = results

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> ToolMessage:
        call = request.tool_call
        scripted = self.results[call["id"]]
        text = "".join(p.text for p in scripted.result or () if isinstance(p, TextBlock))
        status = "error" if scripted.error else "success"
        return ToolMessage(content=text, name=call["name"], tool_call_id=call["id"], status=status)


def user_content(parts: Sequence[Part]) -> str | list[str | dict[str, Any]]:
    """A user message's content as a LangChain caller gives it: a lone text as a string, else
    the parts in order as OpenAI content blocks (a text, an image's URL or data URL)."""
    if len(parts) == 1 and isinstance(parts[0], TextBlock):
        return parts[0].text
    return [_block(p) for p in parts]


def _block(part: Part) -> dict[str, Any]:
    if isinstance(part, TextBlock):
        return {"type": "text", "text": part.text}
    assert isinstance(part, DataBlock) and part.is_image, "the driver carries texts and images"
    url = part.source if part.kind == "url" else f"data:{part.media_type};base64,{part.source}"
    return {"type": "image_url", "image_url": {"url": url}}


def _tool(schema: Any) -> StructuredTool:
    def unused(**kwargs: Any) -> str:
        raise AssertionError("the scripted world answers every call")

    return StructuredTool.from_function(
        func=unused,
        name=schema.name,
        description=schema.description,
        args_schema=json.loads(schema.parameters),
    )


def middleware_of(config: LCConfig, model: ScriptedLCModel) -> AgentMiddleware:  # type: ignore[type-arg]
    """The configured LangChain middleware; retries do not wait (their number is unchanged)."""
    if config.middleware == "clear":
        return ContextEditingMiddleware(edits=[ClearToolUsesEdit(**config.clear)])
    summarizing = SummarizationMiddleware(
        model,
        trigger=config.trigger,
        keep=config.keep,
        trim_tokens_to_summarize=config.trim_tokens_to_summarize,
    )
    summarizing._summary_model = model.with_retry(
        retry_if_exception_type=default_retry_on, wait_exponential_jitter=False
    )
    return summarizing


def run_langchain(script: Script, config: LCConfig) -> LCTrace:
    """Run the real agent on `script` (call ids assigned) under `config`."""
    model = ScriptedLCModel(
        script=script, config=config, calls=[], profile={"max_input_tokens": config.window}
    )
    results = {c.id: c for c in script.calls() if c.id is not None}
    agent = create_agent(
        model,
        tools=[_tool(t) for t in script.tools],
        system_prompt=script.system_prompt or None,  # an empty "" would send an empty system message
        middleware=[middleware_of(config, model), ScriptedWorld(results)],
    )
    messages: list[BaseMessage] = []
    error = None
    for turn in script.turns:
        try:
            out = agent.invoke({"messages": [*messages, HumanMessage(content=user_content(turn.user))]})
        except Exception as failure:  # the run ends; the trace keeps what happened
            error = type(failure).__name__
            break
        messages = out["messages"]
    return LCTrace(calls=tuple(model.calls), final=tuple(from_langchain(m) for m in messages), error=error)
