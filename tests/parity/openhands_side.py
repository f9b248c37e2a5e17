"""Both sides of an OpenHands parity run: the SDK through its driver process, and ctxlab's engine.

The driver (`tests/parity/openhands_driver.py`) runs in the OpenHands environment as one server
process per test session (its import takes many seconds); `OpenHandsDriver.run` sends it a
workload and reads back the trace. `run_lab` plays the same script through ctxlab's loop with
the `openhands` preset (`lab_run` also gives the lab's events after its last call). Both traces
are lists of calls in one normal form (`Call`): the kind, the messages as (role, text, calls,
tool call id), the `reasoning_content` each message is sent with (None when it has none) and the
tools, so the two compare with `==`. An image part is in the text as `<image URL>`, so a
request that sends an image differs from one that does not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.views import REASONING_FIELD, to_openai
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.loop import Loop
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FailMode, FixedSummarizer, failed_answer
from ctxlab.presets.openhands.params import OpenHandsParams
from ctxlab.presets.openhands.preset import build
from ctxlab.presets.openhands.tokens import sdk_token_count
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.texts.openhands import ENVIRONMENT
from tests.parity.server import DriverServer

DRIVER = Path(__file__).with_name("openhands_driver.py")
SUMMARY_TEXT = "SUMMARY: the agent listed files and read their contents."
HUGE_WINDOW = 10**9
BLANK_TEXTS: dict[str, str | None] = {"no_tool_call": " ", "empty": None}
"""What the SDK's model answers for the fake's blank answers: a blank text, or no content."""

Normal = tuple[str, str, tuple[tuple[str, str, str], ...], str]


@dataclass(frozen=True, slots=True)
class Call:
    """One model call in the normal form both sides are compared in."""

    kind: str
    messages: tuple[Normal, ...]
    tools: tuple[str, ...]
    tokens: int = 0  # a reasoning request's size by the SDK's counter (what its trigger compares)
    reasoning: tuple[str | None, ...] = ()  # each message's `reasoning_content` field, if sent
    wire: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_part(p) for p in content)
    return ""


def _part(part: dict[str, Any]) -> str:
    if part.get("type") == "image_url":
        return f"<image {part['image_url']['url']}>"
    return str(part.get("text", "")) if part.get("type") == "text" else f"<{part.get('type')}>"


def normal(wire: dict[str, Any]) -> Normal:
    """A chat-completions message as (role, text, calls, tool call id)."""
    calls = tuple(
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in wire.get("tool_calls") or ()
    )
    return (wire["role"], _text(wire.get("content")), calls, wire.get("tool_call_id") or "")


def sent_reasoning(messages: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> tuple[str | None, ...]:
    """Each message's `reasoning_content` field as sent (None when the message has none)."""
    return tuple(m.get(REASONING_FIELD) for m in messages)


def normal_tool(tool: dict[str, Any]) -> str:
    """A tool as canonical JSON of its function."""
    return json.dumps(tool["function"], sort_keys=True)


class OpenHandsDriver(DriverServer):
    """The SDK driver as a server process; `close` ends it."""

    def __init__(self) -> None:
        super().__init__(ENVIRONMENT, DRIVER)


def sdk_calls(trace: dict[str, Any]) -> list[Call]:
    """The driver's calls in normal form."""
    return [
        Call(
            kind=c["kind"],
            messages=tuple(normal(m) for m in c["messages"]),
            tools=tuple(normal_tool(t) for t in c["tools"]),
            tokens=c.get("tokens", 0),
            reasoning=sent_reasoning(c["messages"]),
            wire=tuple(c["messages"]),
        )
        for c in trace["calls"]
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """A parity case: the script, the preset's parameters, which summaries fail, the window, the
    summary text both summarizers answer."""

    script: Script
    params: OpenHandsParams
    fail_on: frozenset[int] = frozenset()
    context_size: int = HUGE_WINDOW
    blank_on: frozenset[int] = frozenset()
    blank_mode: FailMode = "no_tool_call"  # how a call of `blank_on` answers: " ", or `empty`
    model: str = "test-model"  # the SDK's model name: whether it sends reasoning back depends on it
    summary: str = SUMMARY_TEXT


def driver_workload(case: Workload) -> dict[str, Any]:
    """The JSON workload the driver plays."""
    script = case.script
    results: dict[str, dict[str, Any]] = {}
    for call in script.calls():
        assert call.id is not None and call.result is not None
        text = "".join(p.text for p in call.result if isinstance(p, TextBlock))
        results[call.id] = {"text": text, "error": call.error} | _parts(call.result, "parts")
    settings = case.params.condenser
    return {
        "system_prompt": script.system_prompt,
        "tools": [_tool_spec(t.name, t.description, t.parameters) for t in script.tools],
        "turns": [
            {
                "user": "".join(p.text for p in turn.user if isinstance(p, TextBlock)),
                **_parts(turn.user, "user_parts"),
                "rounds": [
                    {
                        "text": r.text or "",
                        "thinking": r.thinking,
                        "calls": [{"id": c.id, "name": c.tool, "arguments": c.input} for c in r.calls],
                    }
                    for r in turn.rounds
                ],
                "final": turn.final,
            }
            for turn in script.turns
        ],
        "results": results,
        "condenser": {
            "max_size": settings.size,
            "keep_first": settings.first,
            "max_tokens": settings.max_tokens,
            "minimum_progress": settings.minimum_progress,
            "hard_context_reset_max_retries": settings.hard_reset_retries,
            "hard_context_reset_context_scaling": settings.hard_reset_scaling,
        },
        "model": case.model,
        "max_input_tokens": case.context_size,
        "summary": case.summary,
        "failing_summaries": sorted(case.fail_on),
        "blank_summaries": sorted(case.blank_on),
        "blank": BLANK_TEXTS[case.blank_mode],
        "max_iterations": case.params.max_iterations,
    }


def _parts(parts: tuple[Part, ...], key: str) -> dict[str, Any]:
    """`{key: parts}` in the driver's form when `parts` are several or hold an image (texts and
    image URLs in order), else nothing: the driver then takes the text."""
    if len(parts) < 2 and not any(isinstance(p, DataBlock) for p in parts):
        return {}
    assert all(isinstance(p, TextBlock) or p.is_image for p in parts)
    return {key: [{"text": p.text} if isinstance(p, TextBlock) else {"image": _url(p)} for p in parts]}


def _url(image: DataBlock) -> str:
    """An image's URL: its own, or the data URL of its base64 bytes."""
    return image.source if image.kind == "url" else f"data:{image.media_type};base64,{image.source}"


def _tool_spec(name: str, description: str, parameters: str) -> dict[str, Any]:
    properties = json.loads(parameters).get("properties", {})
    return {
        "name": name,
        "description": description,
        "params": {k: v["description"] for k, v in properties.items()},
    }


@dataclass
class RecordingModel:
    """The script's model, keeping every reasoning request."""

    inner: ScriptModel
    requests: list[ModelRequest]

    def respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.inner.respond(request)


@dataclass
class ScheduledSummarizer:
    """The fixed summarizer, failing as scheduled per call (a model error, no content, blank text)."""

    inner: FixedSummarizer
    modes: dict[int, FailMode]
    requests: list[ModelRequest] = field(default_factory=list)

    def respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        mode = self.modes.get(request.invocation)
        return self.inner.respond(request) if mode is None else failed_answer(mode, request)


@dataclass(frozen=True, slots=True)
class LabRun:
    """ctxlab's run of a case: every call in normal form, the error that ended it, and the kinds
    of the events recorded after its last call (`iteration_limit` when the limit ended a reply),
    and what the run warned of."""

    calls: list[Call]
    error: str | None
    trailing: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def run_lab(case: Workload, texts_name: str = "openhands") -> tuple[list[Call], str | None]:
    """ctxlab's run of the case: every call in normal form, and the error that ended it."""
    run = lab_run(case, texts_name)
    return run.calls, run.error


def lab_run(case: Workload, texts_name: str = "openhands") -> LabRun:
    """ctxlab's run of the case (`LabRun`)."""
    from dataclasses import replace

    texts = replace(CTXLAB_TEXTS, name=texts_name)
    model = RecordingModel(ScriptModel(case.script), [])
    summarizer = ScheduledSummarizer(
        FixedSummarizer(fields={}, text=case.summary, requests=None),
        {k: "raise" for k in case.fail_on} | dict.fromkeys(case.blank_on, case.blank_mode),
    )
    env = Env(
        counter=AgentScopeEstimator(),
        model=model,
        summarizer=summarizer,
        texts=texts,
        context_size=case.context_size,
    )
    strategy = build(case.params, texts)
    loop = Loop(script=case.script, strategy=strategy, env=env)
    error = None
    try:
        loop.run()
    except Exception as failure:  # the driver records the SDK's failure the same way
        error = type(failure).__name__
    order = iter(model.requests)
    summaries = iter(summarizer.requests)
    calls = []
    for record in env.recorder.calls:
        request = next(order) if record.kind == "reasoning" else next(summaries)
        wire = to_openai(request.messages)
        calls.append(
            Call(
                kind=record.kind,
                messages=tuple(normal(m) for m in wire),
                tools=tuple(
                    json.dumps(
                        {
                            "name": t.name,
                            "description": t.description,
                            "parameters": json.loads(t.parameters),
                        },
                        sort_keys=True,
                    )
                    for t in request.tools
                ),
                tokens=sdk_token_count(wire, request.tools) if record.kind == "reasoning" else 0,
                reasoning=sent_reasoning(wire),
                wire=tuple(wire),
            )
        )
    trailing = tuple(e.kind.value for e in env.recorder.pending_events)
    return LabRun(calls, error, trailing, tuple(env.recorder.warnings))
