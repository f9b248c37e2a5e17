"""Generated Google ADK parity cases: multi-turn scripts, both compaction configs, summaries.

Several user turns (ADK compacts after an invocation), single and parallel calls (arguments
written as ADK writes them back, compact, or with non-ASCII escaped), huge results
(past the summarizer's 2,000-character cap), results with quotes, backslashes, control
characters or non-ASCII (which their JSON form escapes or keeps) and empty ones, CJK text,
intervals and overlaps from 1 to 4, token thresholds from small to never reached, retention
from 0 to past the session, both together, summaries short or long (so ADK's worth check
refuses some ranges), and failing summaries.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.presets.google_adk.params import AdkParams, EventsCompactionConfig
from tests.parity.adk_side import Workload
from tests.parity.openhands_workloads import TOOLS, texts

ESCAPED = ('"quoted"', "back\\slash", "line\nbreak", "tab\tstop", "bell\x07", "del\x7f", "", "数据 😀")
"""Pieces JSON writes escaped, or non-ASCII it keeps (ADK sends a result as `{"result": ...}` JSON)."""


@st.composite
def result(draw: st.DrawFn) -> str:
    """A tool's output: short, or huge (past the 2,000-character cap), some with characters its
    JSON form escapes, or empty."""
    text = draw(texts())
    if draw(st.integers(0, 3)) == 0:
        text = " ".join([text, *draw(st.lists(st.sampled_from(ESCAPED), min_size=1, max_size=3))])
    elif draw(st.integers(0, 12)) == 0:
        text = ""
    if draw(st.integers(0, 5)) == 0:
        text = (text + " ") * draw(st.integers(60, 400))
    return text


@st.composite
def written(draw: st.DrawFn, args: dict[str, str]) -> str:
    """A call's arguments as a model may write them: as ADK writes them back, compact, or with
    non-ASCII escaped (ADK keeps the parsed object and sends it re-serialized)."""
    return draw(
        st.sampled_from(
            [
                json.dumps(args, ensure_ascii=False),
                json.dumps(args, ensure_ascii=False, separators=(",", ":")),
                json.dumps(args),
            ]
        )
    )


@st.composite
def rounds(draw: st.DrawFn, tools: tuple[ToolSchema, ...], turn: int) -> tuple[ScriptedRound, ...]:
    """Zero to six rounds of one to three calls each."""
    out = []
    for index in range(draw(st.integers(0, 6))):
        calls = []
        for k in range(draw(st.sampled_from([1, 1, 2, 3]))):
            tool = draw(st.sampled_from(tools))
            args = {key: draw(texts(1, 3)) for key in json.loads(tool.parameters)["properties"]}
            calls.append(
                ScriptedCall(
                    tool=tool.name,
                    input=draw(written(args)),
                    result=(TextBlock(text=draw(result())),),
                    id=f"t{turn}r{index}c{k}",
                )
            )
        thinking = draw(st.one_of(st.none(), st.none(), texts()))
        out.append(
            ScriptedRound(text=draw(st.one_of(st.none(), texts())), calls=tuple(calls), thinking=thinking)
        )
    return tuple(out)


@st.composite
def window_config(draw: st.DrawFn) -> EventsCompactionConfig:
    """The sliding-window pair, sometimes with the token pair too."""
    both = draw(st.integers(0, 4)) == 0
    return EventsCompactionConfig(
        compaction_interval=draw(st.integers(1, 4)),
        overlap_size=draw(st.integers(0, 3)),
        token_threshold=draw(st.integers(200, 3000)) if both else None,
        event_retention_size=draw(st.integers(0, 8)) if both else None,
    )


@st.composite
def token_config(draw: st.DrawFn) -> EventsCompactionConfig:
    """The token pair: thresholds from a few hundred tokens to never reached."""
    return EventsCompactionConfig(
        token_threshold=draw(st.sampled_from([100, 300, 600, 1200, 2500, 10**6])),
        event_retention_size=draw(st.integers(0, 12)),
    )


@st.composite
def adk_cases(draw: st.DrawFn, config: st.SearchStrategy[EventsCompactionConfig]) -> Workload:
    """One parity case."""
    tools = tuple(t for t in TOOLS if draw(st.booleans())) or TOOLS[:1]
    turns = tuple(
        ScriptedTurn(
            user=(TextBlock(text="Task: " + draw(texts())),),
            rounds=draw(rounds(tools, turn)),
            final="Done: " + draw(texts()),
        )
        for turn in range(draw(st.integers(1, 8)))
    )
    script = Script(system_prompt="You are a careful engineer. " + draw(texts()), tools=tools, turns=turns)
    summary = "SUMMARY: " + draw(texts()) * draw(st.sampled_from([1, 1, 5, 80]))
    return Workload(
        script=script,
        params=AdkParams(events_compaction_config=draw(config)),
        summary=summary,
        fail_on=frozenset(draw(st.lists(st.integers(1, 6), max_size=2))),
    )
