"""Run the real `deepagents.create_deep_agent` (deepagents 0.7.32) on a ctxlab script and record
every request at the model boundary.

`run_deepagents(script, config)` builds the deep agent with a scripted chat model (whose profile
gives the window), the script's tools, a `StateBackend`, a checkpointer (so the summarization
event and the history session persist across turns, as in a deep agent's thread), and in place of
the stack's own `FilesystemMiddleware` and `SummarizationMiddleware` the same classes built the
same way with the configuration's settings (`create_summarization_middleware` itself when the
configuration asks for deepagents' defaults). A middleware after them answers every tool call
from the script and records, just before each reasoning call, deepagents' counter over the
request as sent (system prompt, messages and tools, as `SummarizationMiddleware` counts).

Invariants:
- The scripted model decides each answer from its own position in the script, never from the
  request. A summary call is recognised by deepagents' summary prompt and answered with the
  configured text, or raises on every attempt of an invocation listed in `fail_on`.
- The history session's uuid4 and an evicted user message's uuid4 are the only random values
  reaching a request; `normalised` replaces them (and the lab's counter ids of the same shape) by
  placeholders before comparing.
- Retries do not wait (their number is LangChain's). A run that raises ends there; the trace keeps
  every call made and the error's type.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from deepagents import create_deep_agent
from deepagents.backends import StateBackend
from deepagents.middleware.filesystem import FilesystemMiddleware
from deepagents.middleware.summarization import (
    DEEPAGENTS_DEFAULT_SUMMARY_PROMPT,
    SummarizationMiddleware,
    create_summarization_middleware,
)
from langchain.agents.middleware._retry import default_retry_on
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.presets.lc_messages import LCMessage
from tests.parity.lc_bridge import from_langchain
from tests.parity.lc_driver import (
    LCCallRecord,
    LCTrace,
    ScriptedLCModel,
    ScriptedWorld,
    _tool,
    sent_reasoning,
    user_content,
)

SUMMARY_HEAD = DEEPAGENTS_DEFAULT_SUMMARY_PROMPT[:120]
SESSION = re.compile(r"session_[0-9a-f]{32}")
EVICTED_MESSAGE = re.compile(
    r"/conversation_history/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.md"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class DAConfig:
    """One deepagents parity configuration.

    Attributes:
        window: the model profile's `max_input_tokens`.
        defaults: build the summarization with `create_summarization_middleware` (deepagents'
            defaults for a model with a profile); otherwise with the settings below.
        trigger / keep / trim_tokens_to_summarize / truncate_args_settings: the
            `SummarizationMiddleware` settings.
        tool_token_limit_before_evict / human_message_token_limit_before_evict:
            `FilesystemMiddleware`'s eviction limits.
        summary_text: what the summarizer answers.
        fail_on: summary invocations (1-based) whose every attempt raises.
    """

    window: int = 16_000
    defaults: bool = True
    trigger: Any = ("fraction", 0.85)
    keep: tuple[str, float] = ("fraction", 0.10)
    trim_tokens_to_summarize: int | None = None
    truncate_args_settings: dict[str, Any] | None = field(
        default_factory=lambda: {"trigger": ("fraction", 0.85), "keep": ("fraction", 0.10)}
    )
    tool_token_limit_before_evict: int | None = 20_000
    human_message_token_limit_before_evict: int | None = 50_000
    summary_text: str = "The user asked for passages; three were retrieved."
    fail_on: frozenset[int] = frozenset()
    anthropic: bool = False  # read by the shared scripted model


class ScriptedDeepModel(ScriptedLCModel):
    """The LangChain parity model, recognising deepagents' summary prompt and recording the
    count the world middleware took just before each reasoning call."""

    counts: list[int] = []  # noqa: RUF012 (a pydantic field, copied per instance)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        tools = tuple(json.dumps(t, sort_keys=True) for t in kwargs.get("tools") or ())
        view = tuple(from_langchain(m) for m in messages)
        summary = (
            len(messages) == 1
            and isinstance(messages[0], HumanMessage)
            and messages[0].text.startswith(SUMMARY_HEAD)
        )
        counted = 0 if summary else self.counts[-1]
        kind = "summary" if summary else "reasoning"
        self.calls.append(
            LCCallRecord(
                kind=kind, messages=view, tools=tools, counted=counted, reasoning=sent_reasoning(messages)
            )
        )
        if summary:
            return self._summary()
        return ChatResult(generations=[ChatGeneration(message=self._next_answer())])


class CountingWorld(ScriptedWorld):
    """The scripted world, also recording deepagents' count of each reasoning request as sent."""

    def __init__(self, results: dict[str, ScriptedCall], model: ScriptedDeepModel) -> None:
        super().__init__(results)
        self.model = model

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        messages = [request.system_message, *request.messages] if request.system_message else request.messages
        self.model.counts.append(count_tokens_approximately(messages, tools=request.tools))
        return handler(request)


def summarization_of(config: DAConfig, model: ScriptedDeepModel, backend: StateBackend) -> Any:
    """The configured summarization middleware; retries do not wait (their number is unchanged)."""
    if config.defaults:
        middleware = create_summarization_middleware(model, backend)
    else:
        middleware = SummarizationMiddleware(
            model,
            backend=backend,
            trigger=config.trigger,
            keep=config.keep,
            trim_tokens_to_summarize=config.trim_tokens_to_summarize,
            truncate_args_settings=config.truncate_args_settings,  # type: ignore[arg-type]
        )
    middleware._lc_helper._summary_model = model.with_retry(
        retry_if_exception_type=default_retry_on, wait_exponential_jitter=False
    )
    return middleware


def run_deepagents(script: Script, config: DAConfig) -> LCTrace:
    """Run the real deep agent on `script` (call ids assigned) under `config`."""
    model = ScriptedDeepModel(
        script=script, config=config, calls=[], counts=[], profile={"max_input_tokens": config.window}
    )
    backend = StateBackend()
    results = {c.id: c for c in script.calls() if c.id is not None}
    filesystem = FilesystemMiddleware(
        backend=backend,
        tool_token_limit_before_evict=config.tool_token_limit_before_evict,
        human_message_token_limit_before_evict=config.human_message_token_limit_before_evict,
    )
    agent = create_deep_agent(
        model,
        tools=[_tool(t) for t in script.tools],
        system_prompt=script.system_prompt or None,
        middleware=[filesystem, summarization_of(config, model, backend), CountingWorld(results, model)],
        backend=backend,
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "parity"}}
    error = None
    for turn in script.turns:
        try:
            agent.invoke({"messages": [HumanMessage(content=user_content(turn.user))]}, config=thread)
        except Exception as failure:  # the run ends; the trace keeps what happened
            error = type(failure).__name__
            break
    return LCTrace(calls=tuple(model.calls), final=(), error=error)


def normalised(trace: LCTrace) -> LCTrace:
    """The trace with every history session id and evicted message's uuid4 replaced by one
    placeholder each."""

    def text(written: str) -> str:
        if "/conversation_history/" not in written:
            return written
        return EVICTED_MESSAGE.sub("/conversation_history/<id>.md", SESSION.sub("session_<id>", written))

    def clean(message: LCMessage) -> LCMessage:
        if isinstance(message.content, str):
            return replace(message, content=text(message.content))
        blocks = tuple(  # a user message of several parts: its text block
            {**b, "text": text(b["text"])} if b.get("type") == "text" else b for b in message.content
        )
        return replace(message, content=blocks)

    calls = tuple(replace(c, messages=tuple(clean(m) for m in c.messages)) for c in trace.calls)
    return replace(trace, calls=calls)
