"""Generated OpenHands parity cases: scripts, condenser settings, failing summaries, limits.

Single and parallel calls, long sessions past several condensations (small `max_size`), the
event and the token trigger, failing summaries (soft: sent uncondensed; hard: the reset and its
retries), huge and failed tool results, and the conversation's iteration limit; for
`openhands-hybrid` the same with single-call rounds and SWE-agent's masking settings; and the same
with images in tool results and user messages (`image_cases`).
"""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import strategies as st

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.presets.openhands.params import CondenserSettings, HybridParams, OpenHandsParams
from tests.parity.openhands_side import Workload


def _tool(name: str, description: str, **params: str) -> ToolSchema:
    properties = {k: {"type": "string", "description": v} for k, v in params.items()}
    return ToolSchema.of(
        name, description, {"type": "object", "properties": properties, "required": list(params)}
    )


TOOLS = (
    _tool("run", "Run a shell command.", command="The command line."),
    _tool("read_file", "Read a file of the repository.", path="The file's path."),
    _tool("search", "Search the code.", query="What to look for.", folder="Where to look."),
)

words = st.sampled_from(["alpha", "beta", "config", "parser", "test_io", "ÄÖ", "数据", "err", "42", "\n"])


@st.composite
def texts(draw: st.DrawFn, low: int = 1, high: int = 12) -> str:
    """A short text of words."""
    return " ".join(draw(st.lists(words, min_size=low, max_size=high)))


@st.composite
def results(draw: st.DrawFn) -> tuple[str, bool]:
    """A tool's output: short, or huge (past the 500-character preview); sometimes an error."""
    text = draw(texts())
    if draw(st.integers(0, 6)) == 0:
        text = (text + " ") * draw(st.integers(60, 400))
    return text, draw(st.integers(0, 9)) == 0


@st.composite
def rounds(
    draw: st.DrawFn, tools: tuple[ToolSchema, ...], turn: int, count: int
) -> tuple[ScriptedRound, ...]:
    """`count` rounds of one to three calls each."""
    out = []
    for index in range(count):
        calls = []
        for k in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
            tool = draw(st.sampled_from(tools))
            args = {key: draw(texts(1, 3)) for key in json.loads(tool.parameters)["properties"]}
            text, error = draw(results())
            calls.append(
                ScriptedCall(
                    tool=tool.name,
                    input=json.dumps(args, ensure_ascii=False),
                    result=(TextBlock(text=text),),
                    error=error,
                    id=f"t{turn}r{index}c{k}",
                )
            )
        thought = draw(st.one_of(st.none(), texts()))
        thinking = draw(st.one_of(st.none(), st.none(), texts()))  # the model's reasoning_content
        out.append(ScriptedRound(text=thought, thinking=thinking, calls=tuple(calls)))
    return tuple(out)


@st.composite
def settings(draw: st.DrawFn) -> CondenserSettings:
    """Small windows so that sessions condense several times; the token trigger sometimes; the
    progress floor and the hard reset's retries and scaling sometimes away from the SDK's
    defaults (a floor near 1 refuses most condensations)."""
    max_size = draw(st.integers(6, 40))
    keep_first = draw(st.integers(0, max_size // 2 - 2))
    max_tokens = draw(st.one_of(st.none(), st.none(), st.integers(400, 6000)))
    defaults = CondenserSettings()
    return CondenserSettings(
        max_size=max_size,
        keep_first=keep_first,
        max_tokens=max_tokens,
        minimum_progress=draw(st.sampled_from([defaults.minimum_progress, 0.001, 0.5, 0.999])),
        hard_reset_retries=draw(st.sampled_from([defaults.hard_reset_retries, 1, 2])),
        hard_reset_scaling=draw(st.sampled_from([defaults.hard_reset_scaling, 0.01, 0.5, 0.99])),
    )


@st.composite
def openhands_cases(draw: st.DrawFn) -> Workload:
    """One parity case."""
    tools = tuple(t for t in TOOLS if draw(st.booleans())) or TOOLS[:1]
    turns = []
    for turn in range(draw(st.integers(1, 3))):
        count = draw(st.integers(0, 24))
        turns.append(
            ScriptedTurn(
                user=(TextBlock(text="Task: " + draw(texts())),),
                rounds=draw(rounds(tools, turn, count)),
                final="Done: " + draw(texts()),
            )
        )
    script = Script(
        system_prompt="You are a careful engineer. " + draw(texts()), tools=tools, turns=tuple(turns)
    )
    fail_on = frozenset(draw(st.lists(st.integers(1, 8), max_size=4)))
    limit = draw(st.sampled_from([500, 500, 500, 12, 30]))
    params = OpenHandsParams(condenser=draw(settings()), max_iterations=limit)
    return Workload(script=script, params=params, fail_on=fail_on)


def one_call_per_round(script: Script) -> Script:
    """`script` with each round of several calls made rounds of one (SWE-agent's function calling
    takes one call per step), the thought and the reasoning on the first."""
    turns = []
    for turn in script.turns:
        rounds = tuple(
            ScriptedRound(
                text=r.text if k == 0 else None, thinking=r.thinking if k == 0 else None, calls=(call,)
            )
            for r in turn.rounds
            for k, call in enumerate(r.calls)
        )
        turns.append(replace(turn, rounds=rounds))
    return replace(script, turns=tuple(turns))


@st.composite
def hybrid_cases(draw: st.DrawFn) -> tuple[Workload, HybridParams]:
    """One `openhands-hybrid` case: an OpenHands case of single-call rounds, and the masking."""
    case = draw(openhands_cases())
    masking = LastNObservationsParams(n=draw(st.integers(1, 8)), polling=draw(st.integers(1, 3)))
    params = HybridParams(
        masking=masking, condenser=case.params.condenser, max_iterations=case.params.max_iterations
    )
    return replace(case, script=one_call_per_round(case.script)), params


def _image(url: str) -> DataBlock:
    return DataBlock(media_type="image/png", source=url)


IMAGE_FORMS = ("alone", "before", "after", "between")


@st.composite
def with_images(
    draw: st.DrawFn, parts: tuple[Part, ...], url: str, forms: tuple[str, ...]
) -> tuple[Part, ...]:
    """`parts` with an image, in one of `forms`: alone, before, after or between their texts
    (and another after), or as they are (`none`)."""
    form = draw(st.sampled_from(forms))
    image = _image(url)
    match form:
        case "alone":
            return (image,)
        case "before":
            return (image, *parts)
        case "after":
            return (*parts, image)
        case "between":
            return (*parts, image, TextBlock(text=draw(texts())), _image(url + "?2"))
    return parts


@st.composite
def image_cases(draw: st.DrawFn, hybrid: bool = False) -> Workload:
    """An OpenHands case (`hybrid`: of single-call rounds) whose tool results hold images in half
    of them, and whose user messages do in a sixth (the SDK then answers in the model's place)."""
    case = draw(openhands_cases())
    script = one_call_per_round(case.script) if hybrid else case.script
    turns = []
    for t, turn in enumerate(script.turns):
        rounds = tuple(
            replace(
                r, calls=tuple(_with_result_image(draw, c, f"https://img.test/{c.id}.png") for c in r.calls)
            )
            for r in turn.rounds
        )
        user = turn.user
        if draw(st.integers(0, 5)) == 0:
            user = draw(with_images(user, f"https://img.test/user{t}.png", IMAGE_FORMS))
        turns.append(replace(turn, user=user, rounds=rounds))
    return replace(case, script=replace(script, turns=tuple(turns)))


def _with_result_image(draw: st.DrawFn, call: ScriptedCall, url: str) -> ScriptedCall:
    assert call.result is not None
    return replace(call, result=draw(with_images(call.result, url, ("none", "none", *IMAGE_FORMS))))
