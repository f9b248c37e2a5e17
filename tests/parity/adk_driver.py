"""Google ADK 2.13.0's driver for the parity tests: runs in ADK's own environment (`make adk-env`).

One JSON workload per stdin line; one JSON trace per stdout line. Each workload runs a real
`LlmAgent` in an `App` with its `EventsCompactionConfig`, through a `Runner` and an
`InMemorySessionService`, one `run_async` per user turn. The agent's model (also the summarizer's,
as ADK defaults it) is a `BaseLlm` subclass that plays the script from its own counter and reports
as usage ctxlab's count of the request (`ctxlab.core`, standard library only); a summary request
(no system instruction) gets the workload's summary text, or no content or an exception to fail.
ADK's clock and id providers are counters, so two processes write the same bytes.

Each request is recorded as ADK's LiteLLM adapter (`google/adk/models/lite_llm.py`) would send it
to an OpenAI chat endpoint: the adapter's own conversion runs on a copy of the `LlmRequest`
(`openai_view`), so the messages compared (each result as `{"result": ...}` JSON, arguments
re-serialized, the user message added after a model turn) are the package's, not the driver's.
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import importlib.machinery
import importlib.util
import itertools
import json
import sys
import warnings
from collections.abc import AsyncGenerator
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
warnings.simplefilter("ignore")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.agents.run_config import RunConfig  # noqa: E402
from google.adk.apps.app import App, EventsCompactionConfig  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.platform import time as adk_time  # noqa: E402
from google.adk.platform import uuid as adk_uuid  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.adk.tools.base_tool import BaseTool  # noqa: E402
from google.genai import types  # noqa: E402

from ctxlab.core.messages.tokens import AgentScopeEstimator  # noqa: E402
from ctxlab.core.messages.tools import ToolSchema  # noqa: E402
from ctxlab.core.wire.views import from_openai  # noqa: E402

LITELLM_MODEL = "openai/gpt-4o"
"""The model name the adapter is asked to write for: an OpenAI chat endpoint."""


def _stand_in_for_litellm() -> ModuleType:
    """`litellm` for ADK's LiteLLM adapter when the package is not installed (ADK's own
    environment installs `google-adk` alone). The adapter's request conversion takes nothing from
    `litellm` but its message types, `TypedDict`s, which build plain dicts: `dict` stands in for
    each, so the adapter's own code writes the messages, offline. The module is registered before
    the adapter is imported (the adapter refuses to load when `litellm` cannot be found)."""
    existing = sys.modules.get("litellm")
    if existing is not None or importlib.util.find_spec("litellm") is not None:
        return existing or importlib.import_module("litellm")
    module = ModuleType("litellm")
    module.__spec__ = importlib.machinery.ModuleSpec("litellm", loader=None)
    sys.modules["litellm"] = module
    return module


_LITELLM = _stand_in_for_litellm()

from google.adk.models import lite_llm  # noqa: E402

if not hasattr(_LITELLM, "ChatCompletionToolMessage"):
    for _symbol in lite_llm._LITELLM_GLOBAL_SYMBOLS:
        setattr(_LITELLM, _symbol, dict)


async def openai_view(model: BaseLlm, request: LlmRequest) -> dict[str, Any]:
    """The request as ADK's LiteLLM adapter sends it to an OpenAI chat endpoint: its own code
    (`LiteLlm.generate_content_async`'s steps before the call) run on a copy of the request, so
    the messages and tools are the package's, call for call."""
    sent = request.model_copy(deep=True)
    model._maybe_append_user_content(sent)
    lite_llm._append_fallback_user_content_if_missing(sent)
    messages, tools, _, _, _ = await lite_llm._get_completion_inputs(sent, LITELLM_MODEL)
    return {"messages": [dict(m) for m in messages], "tools": [t["function"] for t in tools or []]}


class Scripted(BaseLlm):
    """Plays the workload's responses in order; answers summary requests with the workload's text."""

    responses: list[list[dict[str, Any]]]
    summaries: list[str | dict[str, bool] | None]  # the text; None: no content; a mapping: raise
    trace: list[dict[str, Any]]
    schemas: list[ToolSchema]
    next_response: int = 0
    next_summary: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        sent = await openai_view(self, llm_request)
        wire, tools = sent["messages"], sent["tools"]
        summary = not (llm_request.config and llm_request.config.system_instruction)
        tokens = AgentScopeEstimator().count(from_openai(wire), tuple(self.schemas) if tools else ())
        self.trace.append(
            {
                "kind": "summary" if summary else "reasoning",
                "messages": wire,
                "tools": tools,
                "tokens": tokens,
            }
        )
        if summary:
            text = self.summaries[self.next_summary] if self.next_summary < len(self.summaries) else None
            self.next_summary += 1
            if isinstance(text, dict):
                raise RuntimeError("scripted summary failure")
            if text is None:
                yield LlmResponse(error_code="FAILED", error_message="scripted failure")
            else:
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
            return
        parts = [_part(p) for p in self.responses[self.next_response]]
        self.next_response += 1
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=tokens)
        yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)


def _part(spec: dict[str, Any]) -> types.Part:
    if "thought" in spec:  # what the LiteLLM adapter makes of a message's `reasoning_content`
        return types.Part(text=spec["thought"], thought=True)
    if "text" in spec:
        return types.Part(text=spec["text"])
    # the adapter's own reading of a model's arguments (strict JSON, else its repairs)
    args = lite_llm._parse_tool_call_arguments(spec["arguments"], function_name=spec["name"])
    call = types.FunctionCall(id=spec["id"], name=spec["name"], args=args)
    return types.Part(function_call=call)


class ScriptedTool(BaseTool):
    """A tool with the workload's schema, answering each call with its scripted result."""

    def __init__(self, spec: dict[str, Any], results: dict[str, Any]) -> None:
        super().__init__(name=spec["name"], description=spec["description"])
        self.parameters = json.loads(spec["parameters"])
        self.results = results

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self.parameters
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        result = self.results[tool_context.function_call_id]
        if isinstance(result, str):
            return result  # ADK keeps it as {"result": text}
        # media in a returned mapping become the function response's parts, the rest its response
        return {"result": result["result"], "media": [media_part(m) for m in result["media"]]}


def media_part(spec: dict[str, str]) -> types.Part:
    """A medium as a tool or a user hands it to ADK: inline bytes or a file URI."""
    if "data" in spec:
        return types.Part.from_bytes(data=base64.b64decode(spec["data"]), mime_type=spec["mime_type"])
    return types.Part.from_uri(file_uri=spec["uri"], mime_type=spec["mime_type"])


def responses_of(workload: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Every model response of the script, in order."""
    out = []
    for turn in workload["turns"]:
        for r in turn["rounds"]:
            thought = [{"thought": r["thinking"]}] if r.get("thinking") else []
            out.append(thought + ([{"text": r["text"]}] if r["text"] else []) + r["calls"])
        # the adapter makes no part of an empty message: ADK keeps an event with no parts
        out.append([{"text": turn["final"]}] if turn["final"] else [])
    return out


def instruction(workload: dict[str, Any]) -> Any:
    """The agent's instruction: the system prompt as sent, through an instruction provider (a
    string instruction is a template ADK fills from session state, raising on an unknown
    `{name}`); with `template_instruction`, the prompt as a string, to show that."""
    prompt: str = workload["system_prompt"]
    if workload.get("template_instruction"):
        return prompt
    return lambda _context: prompt


async def play(workload: dict[str, Any]) -> dict[str, Any]:
    """Run the workload; the trace of every model call."""
    clock = itertools.count(1)
    ids = itertools.count(1)
    adk_time.set_time_provider(lambda: float(next(clock)))
    adk_uuid.set_id_provider(lambda: f"id-{next(ids)}")
    schemas = [
        ToolSchema.of(t["name"], t["description"], json.loads(t["parameters"])) for t in workload["tools"]
    ]
    model = Scripted(
        model="scripted",
        responses=responses_of(workload),
        summaries=workload["summaries"],
        trace=[],
        schemas=schemas,
    )
    agent = LlmAgent(
        name=workload["agent_name"],
        model=model,
        instruction=instruction(workload),
        tools=[ScriptedTool(t, workload["results"]) for t in workload["tools"]],
    )
    app = App(
        name="parity", root_agent=agent, events_compaction_config=EventsCompactionConfig(**workload["config"])
    )
    sessions = InMemorySessionService()
    runner = Runner(app=app, session_service=sessions)
    await sessions.create_session(app_name="parity", user_id="u", session_id="s")
    config = RunConfig(max_llm_calls=workload["max_llm_calls"])
    error = None
    for turn in workload["turns"]:
        texts = turn["user"] if isinstance(turn["user"], list) else [turn["user"]]
        parts = [types.Part(text=t) if isinstance(t, str) else media_part(t) for t in texts]
        message = types.Content(role="user", parts=parts)
        try:
            async for _ in runner.run_async(
                user_id="u", session_id="s", new_message=message, run_config=config
            ):
                pass
        except Exception as failure:
            error = type(failure).__name__
            break
    return {"calls": model.trace, "error": error}


def main() -> None:
    for line in sys.stdin:
        try:
            out = asyncio.run(play(json.loads(line)))
        except Exception as failure:
            out = {"driver_error": f"{type(failure).__name__}: {failure}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
