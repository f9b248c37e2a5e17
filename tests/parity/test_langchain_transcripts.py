"""Real transcripts through `langchain-summary`, `langchain-clear` and `deepagents` against the
real `create_agent` (langchain 1.5.0) and `create_deep_agent` (deepagents 0.7.32): every sample
of `tests/data/importers` (and each trace of `tests/data/traces`: `samples`) the lab imports,
replayed at one of three settings per preset (picked by a digest of the transcript's path,
`shapes.choice`; chosen so that these small transcripts are summarized, cleared, evicted and
truncated), the same requests call for call with each family's own comparison.

Each transcript is first put in the form the driver plays (`driver_form`), both sides playing the
same script: a tool's description is given without surrounding whitespace (the driver builds the
user's tools with `StructuredTool.from_function`, which strips it: L29, D20); a call's arguments
that are not JSON, or JSON other than an object, are given as the object `{"input": <the text>}`
(LangChain keeps the first as an invalid tool call it does not run and fails on the second, where
the lab fails the run: L28, D22); a tool result keeps its texts, its media left out (the lab sends
a batch's images as a user message of their own, where LangChain keeps them in the tool message:
L20, D15). A user message of several parts, images among them, is carried part by part (the
driver's `user_content`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.presets.lc_messages import lc_arguments
from ctxlab.workloads.importers import read_any
from tests.parity.da_driver import DAConfig
from tests.parity.lc_driver import LCConfig
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.shapes import choice
from tests.parity.test_deepagents_parity import compare as compare_deepagents
from tests.parity.test_langchain_parity import compare as compare_langchain

SUMMARY = (
    LCConfig(trigger=("tokens", 300), keep=("messages", 3)),
    LCConfig(trigger=("messages", 4), keep=("tokens", 200), trim_tokens_to_summarize=400),
    LCConfig(
        trigger=[("fraction", 0.05), {"messages": 3, "tokens": 200}], keep=("fraction", 0.01), anthropic=True
    ),
)
CLEAR = (
    LCConfig(middleware="clear", clear={"trigger": 200, "keep": 1}),
    LCConfig(middleware="clear", clear={"trigger": 100, "keep": 0, "clear_tool_inputs": True}),
    LCConfig(middleware="clear", clear={"trigger": 500, "keep": 1, "clear_at_least": 100}),
)
DEEPAGENTS = (  # deepagents counts its eight built-in tools too: about 2,700 tokens
    DAConfig(window=6000, tool_token_limit_before_evict=25, human_message_token_limit_before_evict=25),
    DAConfig(
        window=16_000,
        defaults=False,
        trigger=("messages", 5),
        keep=("messages", 2),
        truncate_args_settings={"trigger": ("messages", 4), "keep": ("messages", 2), "max_length": 20},
        tool_token_limit_before_evict=50,
    ),
    DAConfig(
        window=12_000,
        defaults=False,
        trigger=("tokens", 3200),
        keep=("tokens", 300),
        trim_tokens_to_summarize=400,
        truncate_args_settings=None,
        tool_token_limit_before_evict=None,
        human_message_token_limit_before_evict=None,
    ),
)


def _arguments(call: ScriptedCall) -> str:
    try:
        lc_arguments(ToolCallBlock(id=call.id or "", name=call.tool, input=call.input))
    except ValueError:
        return json.dumps({"input": call.input}, ensure_ascii=False)
    return call.input


def _call_form(call: ScriptedCall) -> ScriptedCall:
    texts = tuple(p for p in call.result or () if isinstance(p, TextBlock))
    return replace(call, input=_arguments(call), result=texts or (TextBlock(text=""),))


def driver_form(script: Script) -> Script:
    """`script` as the drivers play it (see the module docstring)."""
    tools = tuple(replace(t, description=t.description.strip()) for t in script.tools)
    turns = tuple(
        replace(
            turn,
            rounds=tuple(replace(r, calls=tuple(_call_form(c) for c in r.calls)) for r in turn.rounds),
        )
        for turn in script.turns
    )
    return replace(script, tools=tools, turns=turns)


def _setting(transcript: str, settings: tuple[Any, ...]) -> Any:
    return choice(settings, transcript)


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_langchain_summary_matches_summarization_middleware(
    transcript: str,
) -> None:
    compare_langchain(driver_form(read_any(DATA / transcript).script), _setting(transcript, SUMMARY))


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_langchain_clear_matches_clear_tool_uses_edit(transcript: str) -> None:
    compare_langchain(driver_form(read_any(DATA / transcript).script), _setting(transcript, CLEAR))


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_deepagents_matches_create_deep_agent(transcript: str) -> None:
    compare_deepagents(driver_form(read_any(DATA / transcript).script), _setting(transcript, DEEPAGENTS))
