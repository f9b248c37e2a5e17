"""Both sides of a Google ADK parity run: ADK through its driver process, and ctxlab's engine.

The driver (`tests/parity/adk_driver.py`) runs in ADK's environment as one server process per
test session; `AdkDriver.run` sends it a workload and reads back the trace. `run_lab` plays the
same script through ctxlab's loop with the `google-adk-*` preset. Both traces are lists of calls
in one normal form (`tests.parity.openhands_side.Call`), compared with `==`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.loop import Loop
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FailMode, FixedSummarizer
from ctxlab.presets.google_adk.params import AdkParams
from ctxlab.presets.google_adk.preset import build
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.texts.google_adk import ENVIRONMENT
from tests.parity.openhands_side import Call, RecordingModel, ScheduledSummarizer, normal, normal_tool
from tests.parity.server import DriverServer
from tests.zoo.runs import strategy_caused

DRIVER = Path(__file__).with_name("adk_driver.py")
HUGE_WINDOW = 10**9


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """A parity case: the script, the preset's parameters, the summary text, which summaries fail."""

    script: Script
    params: AdkParams
    summary: str = "SUMMARY: the user asked for files; the agent read them with its tools."
    fail_on: frozenset[int] = frozenset()  # answered with no content
    raise_on: frozenset[int] = frozenset()  # the model raises


class AdkDriver(DriverServer):
    """The ADK driver as a server process; `close` ends it."""

    def __init__(self) -> None:
        super().__init__(ENVIRONMENT, DRIVER)


def driver_workload(case: Workload) -> dict[str, Any]:
    """The JSON workload the driver plays."""
    script = case.script
    results = {}
    for call in script.calls():
        assert call.id is not None and call.result is not None
        results[call.id] = carried(call.result)
    config = dataclasses.asdict(case.params.events_compaction_config)
    return {
        "system_prompt": script.system_prompt,
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in script.tools
        ],
        "turns": [
            {
                "user": [p.text if isinstance(p, TextBlock) else medium(p) for p in turn.user],
                "rounds": [
                    {
                        "thinking": r.thinking or "",
                        "text": r.text or "",
                        "calls": [{"id": c.id, "name": c.tool, "arguments": c.input} for c in r.calls],
                    }
                    for r in turn.rounds
                ],
                "final": turn.final,
            }
            for turn in script.turns
        ],
        "results": results,
        "config": {k: v for k, v in config.items() if v is not None},
        "agent_name": case.params.agent_name,
        "max_llm_calls": case.params.max_llm_calls,
        "summaries": [
            None if k in case.fail_on else {"raise": True} if k in case.raise_on else case.summary
            for k in range(1, 400)
        ],
    }


def medium(part: DataBlock) -> dict[str, str]:
    """A medium as the driver gives it to ADK: inline bytes (base64) or a URI, with its type."""
    key = "data" if part.kind == "base64" else "uri"
    return {key: part.source, "mime_type": part.media_type}


def carried(result: tuple[Part, ...]) -> str | dict[str, Any]:
    """A result as the driver's tool returns it: its texts joined, with its media (if any) apart."""
    text = "".join(p.text for p in result if isinstance(p, TextBlock))
    media = [medium(p) for p in result if isinstance(p, DataBlock)]
    return {"result": text, "media": media} if media else text


def adk_calls(trace: dict[str, Any]) -> tuple[list[Call], int]:
    """The driver's calls in normal form, less the summaries after the last model call (the
    compaction after the last invocation, which ctxlab does not make), and how many those were."""
    calls = [
        Call(
            kind=c["kind"],
            messages=tuple(normal(m) for m in c["messages"]),
            tools=tuple(json.dumps(t, sort_keys=True) for t in c["tools"]),
            tokens=c["tokens"] if c["kind"] == "reasoning" else 0,
            wire=tuple(c["messages"]),
        )
        for c in trace["calls"]
    ]
    trailing = 0
    while calls and calls[-1].kind == "summary":
        calls.pop()
        trailing += 1
    return calls, trailing


def run_lab(case: Workload, texts_name: str = "google-adk") -> list[Call]:
    """ctxlab's run of the case: every call in normal form.

    Raises:
        AssertionError: a request breaks the OpenAI or Anthropic rules (ADK's ranges never leave
            a call without its response, so none should), or Bedrock's but by starting with the
            summary as a model turn (CHECKLIST GA18).
    """
    texts = dataclasses.replace(CTXLAB_TEXTS, name=texts_name)
    model = RecordingModel(ScriptModel(case.script), [])
    modes: dict[int, FailMode] = dict.fromkeys(case.fail_on, "empty") | dict.fromkeys(case.raise_on, "raise")
    summarizer = ScheduledSummarizer(FixedSummarizer(fields={}, text=case.summary, requests=None), modes)
    counter = AgentScopeEstimator()
    env = Env(counter=counter, model=model, summarizer=summarizer, texts=texts, context_size=HUGE_WINDOW)
    loop = Loop(script=case.script, strategy=build(case.params, texts), env=env)
    loop.run()
    broken = strategy_caused(
        [v for record in env.recorder.calls for v in record.violations], "google-adk-window"
    )
    assert not broken, broken
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
                tools=tuple(normal_tool(t.as_openai()) for t in request.tools),
                tokens=record.tokens["as_sent"] if record.kind == "reasoning" else 0,
                wire=tuple(wire),
            )
        )
    return calls
