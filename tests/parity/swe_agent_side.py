"""Both sides of a SWE-agent parity run: its real history processors, and ctxlab's engine.

SWE-agent is not on the package registry at the version the preset follows (the registry's
`sweagent` is 0.0.1 of April 2024, whose processor has neither tags, polling, images nor the
notice of 1.x), so its processor runs from `tests/data/swe-agent/history_processors.py`: the file
of SWE-agent 3ea751c, unchanged, under its MIT licence (`tests/data/swe-agent/NOTICE.md`). Its
one project import, `sweagent.types`, gives only the type names `History` and `HistoryItem`
(annotations, never evaluated); `load_processors` stands them in and loads the file. pydantic,
its only other dependency, is the lab's. The lab's own code never imports it.

The history is built as SWE-agent's `DefaultAgent` builds it at that commit (`agents.py`):
the system prompt (`message_type` `system_prompt`), demonstrations (`is_demo`), the instance
template as the first observation (a user message), then per step the action (assistant, its
one tool call) and its observation (role `tool`, `tool_call_ids`), rendered with the templates of
its default config. A replayed transcript's later turns add, each, the previous turn's final
answer (an assistant message, where it has one) and its user message, neither an observation
(SWE-agent has one task: checklist S13). Before each query the processors run over the whole
history and the result becomes chat messages as its `LiteLLMModel._history_to_messages` writes
them.

A round's thinking reaches SWE-agent as an OpenAI-compatible provider's `reasoning_content` on
the LiteLLM message: `LiteLLMModel._single_query` keeps of a choice only its content, its tool
calls and, when the message carries them (LiteLLM's Anthropic form), its `thinking_blocks`, so
the action's history item has no reasoning and no request carries it (`model_output`). A case
may deliver thinking as `thinking_blocks` instead, which the action keeps and sends back.

Both sides end in one normal form (`Normal`): role, text, calls, tool call id, images. ctxlab's
OpenAI view sends a result's images as a user message after it (tool messages take no images
there); the normal form folds that message back into the result, where SWE-agent has them.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from unittest import mock

from pydantic import BaseModel

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.blocks import DataBlock, TextBlock
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script, ScriptedRound, ScriptedTurn
from ctxlab.engine.env import Env
from ctxlab.engine.loop import Loop
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.swe_agent.preset import build
from ctxlab.texts import CTXLAB_TEXTS

VENDORED = Path(__file__).parents[1] / "data" / "swe-agent" / "history_processors.py"

# SWE-agent's default config (`config/default.yaml` at 3ea751c, MIT licence, Copyright (c) 2024
# John Yang, Carlos E. Jimenez, Alexander Wettig, Shunyu Yao, Karthik Narasimhan, Ofir Press):
# the observation templates, whose only variable is the observation.
NEXT_STEP_TEMPLATE = "OBSERVATION:\n{{observation}}"
NO_OUTPUT_TEMPLATE = "Your command ran successfully and did not produce any output."

Images = tuple[str, ...]
Normal = tuple[str, str, tuple[tuple[str, str, str], ...], str, Images]


def load_processors() -> types.ModuleType:
    """SWE-agent's `sweagent.agent.history_processors`, from the vendored file."""
    stub = types.ModuleType("sweagent.types")
    stub.History = list  # type: ignore[attr-defined]
    stub.HistoryItem = dict  # type: ignore[attr-defined]
    package = types.ModuleType("sweagent")
    package.__path__ = []
    spec = importlib.util.spec_from_file_location("sweagent.agent.history_processors", VENDORED)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with mock.patch.dict(sys.modules, {"sweagent": package, "sweagent.types": stub}):
        spec.loader.exec_module(module)
    for value in vars(module).values():  # the module is not in sys.modules: name its annotations
        if isinstance(value, type) and issubclass(value, BaseModel) and value is not BaseModel:
            value.model_rebuild(_types_namespace=vars(module))
    return module


PROCESSORS = load_processors()


def render(observation: str) -> str:
    """An observation as SWE-agent's default templates write it into the history."""
    if observation.strip() == "":
        return NO_OUTPUT_TEMPLATE
    return NEXT_STEP_TEMPLATE.replace("{{observation}}", observation)


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """A parity case: a script of single-call rounds (one turn, as a SWE-agent run has; a replayed
    transcript's later turns are read as `swe_history` says), the parameters, the demos.

    Attributes:
        demos: 0 none; 1 one demonstration message (`put_demos_in_history: false`); 2 a
            demonstration's steps in the history (`put_demos_in_history: true`).
        action_tags: tags `TagToolCallObservations` puts on the actions of these tools.
    """

    script: Script
    params: LastNObservationsParams
    demos: int = 0
    action_tags: tuple[str, ...] = ()
    tagged_tools: tuple[str, ...] = field(default=())
    thinking_blocks: bool = False  # thinking delivered as LiteLLM's Anthropic `thinking_blocks`


def _demonstration(kind: int) -> list[dict[str, Any]]:
    if kind == 1:
        text = "Here is a demonstration:\nls\nfile.py\nsubmit"
        return [
            {
                "role": "user",
                "content": text,
                "agent": "main",
                "is_demo": True,
                "message_type": "demonstration",
            }
        ]
    steps: list[dict[str, Any]] = [
        {"role": "user", "content": "Demo task.\nFix it.", "message_type": "observation"},
        {"role": "assistant", "content": "Let me look.", "message_type": "action", "action": "ls"},
        {"role": "user", "content": "OBSERVATION:\nfile.py", "message_type": "observation"},
        {"role": "assistant", "content": "Done.", "message_type": "action", "action": "submit"},
        {"role": "user", "content": "OBSERVATION:\n", "message_type": "observation"},
    ]
    return [{**step, "agent": "main", "is_demo": True} for step in steps]


def _content(parts: tuple[Any, ...], *, rendered: bool = True) -> str | list[dict[str, Any]]:
    """An observation's content (`rendered` by the templates) or a user message's: the text, or
    the text then the images."""
    text = "".join(p.text for p in parts if isinstance(p, TextBlock))
    text = render(text) if rendered else text
    images = [p for p in parts if isinstance(p, DataBlock)]
    if not images:
        return text
    items: list[dict[str, Any]] = [{"type": "text", "text": text}]
    return items + [{"type": "image_url", "image_url": {"url": _url(p)}} for p in images]


def _url(image: DataBlock) -> str:
    """An image's URL as SWE-agent's history holds it: a data URL for inline data."""
    return image.source if image.kind == "url" else f"data:{image.media_type};base64,{image.source}"


def model_output(round_: ScriptedRound, *, thinking_blocks: bool) -> dict[str, Any]:
    """What `LiteLLMModel._single_query` returns for the round's answer (function calling): the
    text, the calls, and `thinking_blocks` only where the LiteLLM message has some; a
    `reasoning_content` is never read."""
    calls = [
        {"id": c.id, "type": "function", "function": {"name": c.tool, "arguments": c.input}}
        for c in round_.calls
    ]
    output: dict[str, Any] = {"message": round_.text or "", "tool_calls": calls}
    if thinking_blocks and round_.thinking:
        output["thinking_blocks"] = [{"type": "thinking", "thinking": round_.thinking, "signature": "sig"}]
    return output


def swe_history(case: Workload) -> list[list[dict[str, Any]]]:
    """The history before each query, as SWE-agent's `DefaultAgent` builds it; a later turn (a
    replayed transcript's) adds the previous turn's final answer, when it has one, and its user
    message, neither an observation (S13)."""
    script = case.script
    history: list[dict[str, Any]] = [
        {"role": "system", "content": script.system_prompt, "agent": "main", "message_type": "system_prompt"}
    ]
    history += _demonstration(case.demos) if case.demos else []
    before: list[list[dict[str, Any]]] = []
    for index, turn in enumerate(script.turns):
        if index and script.turns[index - 1].final:
            final = script.turns[index - 1].final
            history.append({"role": "assistant", "content": final, "agent": "main", "message_type": "answer"})
        kind = "user" if index else "observation"
        history.append(
            {
                "role": "user",
                "content": _content(turn.user, rendered=False),
                "agent": "main",
                "message_type": kind,
            }
        )
        before.append(list(history))
        before += _steps(case, turn, history)
    return before


def _steps(case: Workload, turn: ScriptedTurn, history: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Add the turn's steps to `history`; the history after each."""
    before = []
    for r in turn.rounds:
        (call,) = r.calls
        assert call.result is not None and call.id is not None
        output = model_output(r, thinking_blocks=case.thinking_blocks)
        history.append(
            {
                "role": "assistant",
                "content": output["message"],
                "thought": output["message"],
                "action": call.input,
                "agent": "main",
                "tool_calls": output["tool_calls"],
                "message_type": "action",
                "thinking_blocks": output.get("thinking_blocks", []),  # as `DefaultAgent` sets the step's
            }
        )
        observation: dict[str, Any] = {
            "role": "tool",
            "content": _content(call.result),
            "agent": "main",
            "message_type": "observation",
            "tool_call_ids": [call.id],
        }
        tags = _tags(call.tool, case.params)
        if tags:
            observation["tags"] = tags
        history.append(observation)
        before.append(list(history))
    return before


def _tags(tool: str, params: LastNObservationsParams) -> list[str]:
    """The tags an observation of `tool` carries: ctxlab's `keep_tools`/`remove_tools` stand for them."""
    return [
        t
        for t, tools in (("keep_output", params.keep_tools), ("remove_output", params.remove_tools))
        if tool in tools
    ]


def processors(case: Workload) -> list[Any]:
    """The agent's `history_processors`: `last_n_observations`, after `tag_tool_call_observations`
    when the case tags actions."""
    last_n = PROCESSORS.LastNObservations(n=case.params.n, polling=case.params.polling)
    if not case.action_tags:
        return [last_n]
    tagger = PROCESSORS.TagToolCallObservations(
        tags=set(case.action_tags), function_names=set(case.tagged_tools)
    )
    return [tagger, last_n]


def history_to_messages(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages as SWE-agent's `LiteLLMModel._history_to_messages` writes them (system kept)."""
    messages = []
    for item in history:
        if item["role"] == "tool":
            message = {"role": "tool", "content": item["content"], "tool_call_id": item["tool_call_ids"][0]}
        elif (calls := item.get("tool_calls")) is not None:
            message = {"role": item["role"], "content": item["content"], "tool_calls": calls}
            if item.get("thinking_blocks"):
                message["thinking_blocks"] = item["thinking_blocks"]
        else:
            message = {"role": item["role"], "content": item["content"]}
        messages.append(message)
    return messages


def swe_requests(case: Workload) -> list[list[dict[str, Any]]]:
    """Every query SWE-agent sends for the case, demonstrations left out (ctxlab has none)."""
    out = []
    for history in swe_history(case):
        processed = [dict(item) for item in history]
        for processor in processors(case):
            processed = processor(processed)
        kept = [item for item in processed if not item.get("is_demo", False)]
        out.append(history_to_messages(kept))
    return out


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
    return ""


def _images(content: object) -> Images:
    if not isinstance(content, list):
        return ()
    return tuple(p["image_url"]["url"] for p in content if p.get("type") == "image_url")


def normal(messages: list[dict[str, Any]]) -> tuple[Normal, ...]:
    """Chat messages in normal form; a user message of images alone after a tool message joins it."""
    out: list[Normal] = []
    for wire in messages:
        content = wire.get("content")
        if (
            wire["role"] == "user"
            and out
            and out[-1][0] == "tool"
            and not _text(content)
            and _images(content)
        ):
            role, text, calls, call_id, images = out[-1]
            out[-1] = (role, text, calls, call_id, images + _images(content))
            continue
        calls = tuple(
            (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in wire.get("tool_calls") or ()
        )
        out.append((wire["role"], _text(content), calls, wire.get("tool_call_id") or "", _images(content)))
    return tuple(out)


@dataclass
class RecordingModel:
    """The script's model, keeping every request."""

    inner: ScriptModel
    requests: list[ModelRequest]

    def respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.inner.respond(request)


def lab_script(case: Workload) -> Script:
    """The script ctxlab plays: each result as SWE-agent's templates render it into the history."""
    turns = []
    for turn in case.script.turns:
        rounds = []
        for r in turn.rounds:
            (call,) = r.calls
            assert call.result is not None
            text = render("".join(p.text for p in call.result if isinstance(p, TextBlock)))
            images = tuple(p for p in call.result if isinstance(p, DataBlock))
            rounds.append(replace(r, calls=(replace(call, result=(TextBlock(text=text), *images)),)))
        turns.append(replace(turn, rounds=tuple(rounds)))
    return replace(case.script, turns=tuple(turns))


def lab_requests(case: Workload, texts_name: str = "swe-agent") -> list[list[dict[str, Any]]]:
    """ctxlab's requests for the case with the `swe-agent` preset, in the OpenAI view."""
    texts = replace(CTXLAB_TEXTS, name=texts_name)
    script = lab_script(case)
    model = RecordingModel(ScriptModel(script), [])
    env = Env(
        counter=AgentScopeEstimator(),
        model=model,
        summarizer=FixedSummarizer(fields={}, text="unused"),
        texts=texts,
        context_size=10**9,
    )
    Loop(script=script, strategy=build(case.params, texts), env=env).run()
    return [to_openai(request.messages) for request in model.requests]
