"""Generated SWE-agent parity cases: one task, single-call steps, the processor's settings.

Long sessions (up to 40 steps, well past `n`), `n` from 1 to 8 and `polling` from 1 to 4,
empty observations (SWE-agent's no-output template), multi-line, huge and CJK ones, images in
observations, tools whose observations carry keep/remove tags, and demonstrations of both forms.
SWE-agent's function calling takes one call per step, so every step has one call.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from tests.parity.swe_agent_side import Workload


def _tool(name: str, description: str, **params: str) -> ToolSchema:
    properties = {k: {"type": "string", "description": v} for k, v in params.items()}
    return ToolSchema.of(
        name, description, {"type": "object", "properties": properties, "required": list(params)}
    )


TOOLS = (
    _tool("bash", "Run a shell command.", command="The command line."),
    _tool("str_replace_editor", "View or edit a file.", command="view or edit", path="The file's path."),
    _tool("submit", "Submit the change.", message="What was changed."),
)
NAMES = tuple(t.name for t in TOOLS)

words = st.sampled_from(
    ["alpha", "beta", "config", "parser", "test_io", "ÄÖ", "数据", "err", "42", "\n", "\r\n"]
)


@st.composite
def texts(draw: st.DrawFn, low: int = 1, high: int = 12) -> str:
    """A short text of words and line breaks."""
    return " ".join(draw(st.lists(words, min_size=low, max_size=high)))


@st.composite
def observations(draw: st.DrawFn, step: int) -> tuple[Part, ...]:
    """What a command printed: nothing, a few lines, many lines; sometimes with images."""
    match draw(st.integers(0, 9)):
        case 0:
            text = draw(st.sampled_from(["", "  ", "\n"]))
        case 1:
            text = "\n".join(f"{k}: line {draw(texts(1, 3))}" for k in range(draw(st.integers(30, 120))))
        case _:
            text = draw(texts(0, 12))
    images = draw(st.integers(0, 2)) if draw(st.integers(0, 5)) == 0 else 0
    return (
        TextBlock(text=text),
        *(
            DataBlock(media_type="image/png", source=f"https://example.com/s{step}-{k}.png")
            for k in range(images)
        ),
    )


@st.composite
def steps(draw: st.DrawFn, count: int) -> tuple[ScriptedRound, ...]:
    """`count` steps of one call each."""
    out = []
    for index in range(count):
        tool = draw(st.sampled_from(TOOLS))
        args = {key: draw(texts(1, 3)) for key in json.loads(tool.parameters)["properties"]}
        call = ScriptedCall(
            tool=tool.name,
            input=json.dumps(args, ensure_ascii=False),
            result=draw(observations(index)),
            id=f"call_{index}",
        )
        text = draw(st.one_of(st.none(), texts()))
        thinking = draw(st.one_of(st.none(), st.none(), texts()))  # as a provider's reasoning_content
        out.append(ScriptedRound(thinking=thinking, text=text, calls=(call,)))
    return tuple(out)


@st.composite
def params(draw: st.DrawFn) -> LastNObservationsParams:
    """The processor's settings; tags on some tools' observations now and then."""
    tagged = st.lists(st.sampled_from(NAMES), max_size=2, unique=True).map(tuple)
    keep, remove = (draw(tagged), draw(tagged)) if draw(st.integers(0, 2)) == 0 else ((), ())
    return LastNObservationsParams(
        n=draw(st.integers(1, 8)), polling=draw(st.integers(1, 4)), keep_tools=keep, remove_tools=remove
    )


@st.composite
def swe_agent_cases(draw: st.DrawFn) -> Workload:
    """One parity case."""
    turn = ScriptedTurn(
        user=(TextBlock(text="<pr_description>\n" + draw(texts()) + "\n</pr_description>"),),
        rounds=draw(steps(draw(st.integers(0, 40)))),
        final="Done: " + draw(texts()),
    )
    script = Script(system_prompt="You are a helpful assistant. " + draw(texts()), tools=TOOLS, turns=(turn,))
    return Workload(script=script, params=draw(params()), demos=draw(st.sampled_from([0, 0, 1, 2])))
