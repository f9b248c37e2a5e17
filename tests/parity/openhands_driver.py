"""Run the real OpenHands SDK (1.58.2) on workloads and record every request at the model boundary.

This file runs in the OpenHands environment (Python >= 3.12, `openhands-sdk` installed, see
`make openhands-env`), not in the lab's: it imports nothing from ctxlab. It is a small server:
each line of standard input is one workload as JSON, each line of standard output the trace of
that workload as JSON. (The lab reads the SDK's texts itself: `ctxlab.texts.openhands`.)

A workload: the system prompt, the tools (name, description, string parameters), the turns (a
user text, or its parts in order, texts and image URLs, and the agent's responses, each a thought,
the model's reasoning if any, and tool calls, then a final text), the agent's model name (the
SDK's `test-model` unless given), the result of every call (a text, or its parts in order, texts
and image URLs), the condenser settings, the agent's window, the summary text, which summary
calls fail and which answer blank (counted from 1), and the conversation's iteration limit.

The trace: every model call in order, each with its kind (`reasoning` or `summary`), its
messages as the SDK formats them for a chat-completions endpoint, and its tools; then the
condensations (before which reasoning call, how many events forgotten, the summary offset) and
the error that ended a turn, if any.

Invariants:
- The agent's model is the SDK's own `TestLLM`, scripted per turn in order; it never reads the
  request, so condensation does not change what the agent does. A response with reasoning is
  made as the SDK's LLM makes one from an OpenAI-compatible provider's message: a LiteLLM
  message with `reasoning_content`, through `Message.from_llm_chat_message`. The condenser has its own
  `TestLLM` whose answers are scripted in order too.
- Any window runs: `ALLOW_SHORT_CONTEXT_WINDOWS` is set, so the SDK takes a window under its
  16,384-token minimum (the lab's tiny windows) instead of refusing it.
- Nothing in a request depends on the clock, the host or a random draw: `uuid.uuid4` is replaced
  by a counter before the SDK is imported, stuck detection is off, and the workspace is a fixed
  folder; two runs in two processes give the same bytes.
- No saved LLM profile is visible (`OH_PERSISTENCE_DIR` is a fixed folder of the driver's own):
  the SDK offers its image inspection tool to a model without vision only when a saved profile
  has vision, so the host's profiles would change what an image in a user message does.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import uuid
from collections.abc import Sequence
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
# The SDK refuses an agent window under 16,384 tokens (`LLM._validate_context_window_size`, the only
# reader of this variable) unless it is set; the lab runs any window, as the SDK does with it set.
# Set for every workload: for a window of 16,384 tokens or more, or none, it changes nothing.
os.environ["ALLOW_SHORT_CONTEXT_WINDOWS"] = "true"
# Read when the SDK is imported: the profile store of this folder holds no profile, so no vision
# profile is ever available, whatever the host has saved.
os.environ["OH_PERSISTENCE_DIR"] = "/tmp/ctxlab-openhands-parity-home"

_COUNTER = itertools.count(1)


def _counted_uuid4() -> uuid.UUID:
    return uuid.UUID(int=next(_COUNTER), version=4)


# Replaced, not called: before the SDK is imported, since its modules take uuid4 by name.
uuid.uuid4 = _counted_uuid4  # noqa: TID251

import logging  # noqa: E402

from litellm.types.utils import Message as LiteLLMMessage  # noqa: E402
from openhands.sdk import Agent, Conversation  # noqa: E402
from openhands.sdk.context.condenser import LLMSummarizingCondenser  # noqa: E402
from openhands.sdk.event import Condensation  # noqa: E402
from openhands.sdk.llm import ImageContent, Message, MessageToolCall, TextContent  # noqa: E402
from openhands.sdk.testing import TestLLM  # noqa: E402
from openhands.sdk.tool import (  # noqa: E402
    Action,
    Observation,
    Tool,
    ToolDefinition,
    ToolExecutor,
    register_tool,
)
from pydantic import Field, create_model  # noqa: E402

logging.disable(logging.CRITICAL)

WORKSPACE = "/tmp/ctxlab-openhands-parity"


class Recorder:
    """Every request of a run, in order, with what the SDK did between them."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.condensations: list[dict[str, Any]] = []


class RecordingLLM(TestLLM):
    """The SDK's TestLLM, recording each request as the provider would receive it."""

    recorder: Any = None
    kind: str = "reasoning"

    def completion(  # type: ignore[override]
        self,
        messages: list[Message],
        tools: Sequence[Any] | None = None,
        add_security_risk_prediction: bool = False,
        **kwargs: Any,
    ) -> Any:
        formatted = self.format_messages_for_llm(messages)
        wire_tools = [
            t.to_openai_tool(add_security_risk_prediction=add_security_risk_prediction) for t in tools or []
        ]
        call: dict[str, Any] = {"kind": self.kind, "messages": formatted, "tools": wire_tools}
        if self.kind == "reasoning":  # what the condenser's token trigger counts for this view
            call["tokens"] = self.get_token_count(
                messages, tools=tools, add_security_risk_prediction=add_security_risk_prediction
            )
        self.recorder.calls.append(call)
        return super().completion(
            messages, tools=tools, add_security_risk_prediction=add_security_risk_prediction, **kwargs
        )


class FailingSummary(Exception):
    """The scripted failure of a summary call."""


def camel(name: str) -> str:
    """`read_file` -> `ReadFile`: the class names the SDK's own tools use."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


class ScriptedObservation(Observation):
    """A tool's scripted result."""


class ScriptedExecutor(ToolExecutor):
    """Answers each call with its scripted result, by the call's id."""

    def __init__(self, results: dict[str, Any], pending: list[str]) -> None:
        self.results = results
        self.pending = pending

    def __call__(self, action: Any, conversation: Any = None) -> ScriptedObservation:
        call_id = self.pending.pop(0)
        result = self.results[call_id]
        if "parts" in result:
            return ScriptedObservation(content=contents(result["parts"]), is_error=bool(result.get("error")))
        return ScriptedObservation.from_text(text=result["text"], is_error=bool(result.get("error")))


def contents(parts: list[dict[str, str]]) -> list[TextContent | ImageContent]:
    """Parts in order: `{"text": ...}` a text, `{"image": url}` an image of one URL."""
    return [
        TextContent(text=p["text"]) if "text" in p else ImageContent(image_urls=[p["image"]]) for p in parts
    ]


def user_message(turn: dict[str, Any]) -> str | Message:
    """The turn's user message: its text, or a message of its parts."""
    if "user_parts" in turn:
        return Message(role="user", content=contents(turn["user_parts"]))
    return str(turn["user"])


def tool_class(spec: dict[str, Any], results: dict[str, Any], pending: list[str]) -> type[ToolDefinition]:
    """A ToolDefinition subclass for one scripted tool (string parameters)."""
    fields: dict[str, Any] = {
        name: (str, Field(description=description)) for name, description in spec["params"].items()
    }
    action = create_model(f"{camel(spec['name'])}Action", __base__=Action, **fields)

    def create(cls: type[ToolDefinition], conv_state: Any = None, **params: Any) -> Sequence[ToolDefinition]:
        return [
            cls(
                description=spec["description"],
                action_type=action,
                observation_type=ScriptedObservation,
                executor=ScriptedExecutor(results, pending),
            )
        ]

    # named explicitly: the SDK's name from the class name is its snake case (`Bash` -> `bash`)
    body = {"create": classmethod(create), "name": spec["name"]}
    return type(f"{camel(spec['name'])}Tool", (ToolDefinition,), body)


def response(turn_round: dict[str, Any]) -> Message:
    """The agent's scripted response for one round; with `thinking`, as the provider's message
    with `reasoning_content` would reach the SDK."""
    if turn_round.get("thinking") is not None:
        wire: dict[str, Any] = {
            "role": "assistant",
            "content": turn_round.get("text", ""),
            "reasoning_content": turn_round["thinking"],
        }
        if turn_round.get("calls"):
            wire["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in turn_round["calls"]
            ]
        return Message.from_llm_chat_message(LiteLLMMessage(**wire))
    calls = [
        MessageToolCall(id=c["id"], name=c["name"], arguments=c["arguments"], origin="completion")
        for c in turn_round.get("calls", [])
    ]
    return Message(
        role="assistant", content=[TextContent(text=turn_round.get("text", ""))], tool_calls=calls or None
    )


def summary_answers(workload: dict[str, Any]) -> list[Message | Exception]:
    """The condenser model's answers: the summary text, a failing call or a blank answer (a
    blank text, or no content when `blank` is null) where scripted (counted from 1). As many as a
    run can ask for: a summary call at most per attempt (a soft one and the hard reset's retries)
    of every iteration of every turn, so the list never runs out first."""
    failing = set(workload["failing_summaries"])
    blank = set(workload.get("blank_summaries", ()))
    attempts = 1 + workload["condenser"].get("hard_context_reset_max_retries", 5)
    count = len(workload["turns"]) * workload["max_iterations"] * attempts

    def answer(k: int) -> Message | Exception:
        if k in failing:
            return FailingSummary("scripted summary failure")
        text = workload.get("blank") if k in blank else workload["summary"]
        # No text at all is the provider's empty content: `from_llm_chat_message` gives `[]`.
        return Message(role="assistant", content=[] if text is None else [TextContent(text=text)])

    return [answer(k) for k in range(1, count + 1)]


def run(workload: dict[str, Any]) -> dict[str, Any]:
    """One workload through Agent + Conversation + LLMSummarizingCondenser."""
    recorder = Recorder()
    results = workload["results"]
    pending: list[str] = []
    for spec in workload["tools"]:
        register_tool(spec["name"], tool_class(spec, results, pending))
    agent_llm = RecordingLLM.from_messages(
        [],
        usage_id="agent",
        model=workload.get("model", "test-model"),
        max_input_tokens=workload.get("max_input_tokens"),
    )
    agent_llm.recorder = recorder
    summarizer = RecordingLLM.from_messages(summary_answers(workload), usage_id="condenser")
    summarizer.recorder, summarizer.kind = recorder, "summary"
    settings = workload["condenser"]
    condenser = LLMSummarizingCondenser(
        llm=summarizer, **{k: v for k, v in settings.items() if v is not None}
    )
    agent = Agent(
        llm=agent_llm,
        tools=[Tool(name=spec["name"]) for spec in workload["tools"]],
        include_default_tools=[],
        system_prompt=workload["system_prompt"],
        condenser=condenser,
    )

    def on_event(event: Any) -> None:
        if isinstance(event, Condensation):
            recorder.condensations.append(
                {
                    "before_call": sum(1 for c in recorder.calls if c["kind"] == "reasoning"),
                    "forgotten": len(event.forgotten_event_ids),
                    "offset": event.summary_offset,
                    "summary": event.summary,
                }
            )

    conversation = Conversation(
        agent=agent,
        workspace=WORKSPACE,
        stuck_detection=False,
        visualizer=None,
        callbacks=[on_event],
        max_iteration_per_run=workload["max_iterations"],
    )
    errors: list[str | None] = []
    for turn in workload["turns"]:
        rounds = [*turn["rounds"], {"text": turn["final"]}]
        agent_llm._scripted_responses.clear()  # each turn plays its own responses
        agent_llm._scripted_responses.extend(response(r) for r in rounds)
        pending[:] = [c["id"] for r in turn["rounds"] for c in r.get("calls", [])]
        conversation.send_message(user_message(turn))
        try:
            conversation.run()
            errors.append(_run_error(conversation))
        except Exception as failure:  # the trace reports it; the lab must end the same way
            errors.append(type(failure).__name__)
            break
    return {"calls": recorder.calls, "condensations": recorder.condensations, "errors": errors}


def _run_error(conversation: Any) -> str | None:
    status = str(conversation.state.execution_status.value)
    return None if status == "finished" else status


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            trace = run(json.loads(line))
        except Exception as failure:  # a driver bug: report it, keep serving
            trace = {"driver_error": f"{type(failure).__name__}: {failure}"}
        sys.stdout.write(json.dumps(trace) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
