"""Reasoning and summary requests holding media, message for message as agentscope 2.0.11's
`OpenAIChatFormatter` sends them: a result's texts joined into one string, each medium it takes
named by an identifier there and listed after the run of results, a medium it does not take
named by its URL; images kept or replaced by the image cap, successful and failed results."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.presets.agentscope.config import ContextConfig, InjectionConfig
from tests.parity.lab import run_lab
from tests.parity.spec import ParityConfig
from tests.parity.workloads import TOOLS

PNG = DataBlock(media_type="image/png", source="https://example.com/a.png")
JPEG = DataBlock(media_type="image/jpeg", source="aGVsbG8=", kind="base64", name="fig")
VIDEO = DataBlock(media_type="video/mp4", source="https://example.com/v.mp4")  # not a part it sends


def _text(text: str) -> TextBlock:
    return TextBlock(text=text)


RESULTS: dict[str, tuple[Part, ...]] = {
    "text and image": (_text("Passage one."), PNG),
    "image alone": (PNG,),
    "several images": (PNG, JPEG, _text("Two figures.")),
    "mixed parts": (_text("Intro."), _text(" more"), JPEG, _text("Between."), PNG, VIDEO),
}


def _call(result: tuple[Part, ...], error: bool, query: str) -> ScriptedCall:
    return ScriptedCall(tool="retrieve", input=f'{{"query": "{query}"}}', error=error, result=result)


def _script(result: tuple[Part, ...], error: bool) -> Script:
    """Two rounds: one call, then two in one batch (a run of results, each with its media), and a
    user turn with an image of its own."""
    rounds = (
        ScriptedRound(calls=(_call(result, error, "q0"),)),
        ScriptedRound(calls=(_call(result, False, "q1"), _call((_text("Plain."), PNG), error, "q2"))),
    )
    turns = (
        ScriptedTurn(user=(_text("Find it."), PNG), rounds=rounds, final="Done."),
        ScriptedTurn(
            user=(_text("And again."),), rounds=(ScriptedRound(calls=(_call(result, error, "q3"),)),)
        ),
    )
    return assign_call_ids(Script(system_prompt="You research.", tools=TOOLS, turns=turns))


def sent_form(wire: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[tuple[object, ...]]:
    """Each sent message in full but for two forms the lab's view does not keep: the `name` of a
    message (no view message carries one), and a user, assistant or system message's lone text sent
    as a string (AgentScope sends a list of one text part). A tool message's content is kept as sent."""
    out: list[tuple[object, ...]] = []
    for w in wire:
        content = w.get("content")
        if w["role"] != "tool" and isinstance(content, str):
            content = [{"type": "text", "text": content}]
        calls = tuple(
            (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in w.get("tool_calls") or ()
        )
        shown = content if isinstance(content, str) or content is None else [dict(p) for p in content]
        out.append((w["role"], shown, calls, w.get("tool_call_id")))
    return out


@pytest.mark.parametrize("images", [0, 1, 5])
@pytest.mark.parametrize("error", [False, True])
@pytest.mark.parametrize("kind", sorted(RESULTS))
def test_reasoning_requests_with_media_are_sent_as_agentscope_sends_them(
    kind: str, error: bool, images: int
) -> None:
    from tests.parity.driver import run_agentscope

    script = _script(RESULTS[kind], error)
    config = ParityConfig(
        context_size=200_000,
        context=ContextConfig(max_image_num=images),
        injection=InjectionConfig(inject_runtime_state=False),
        workspace="memory",
    )
    theirs, ours = run_agentscope(script, config), run_lab(script, config)
    assert [c.kind for c in ours.calls] == [c.kind for c in theirs.calls]
    for mine, real in zip(ours.calls, theirs.calls, strict=True):
        if mine.kind == "reasoning":
            assert sent_form(to_openai(mine.request)) == sent_form(real.sent)
    for convention in ("messages", "preflight", "as_sent"):
        assert ours.input_tokens(convention) == theirs.input_tokens(convention), convention  # type: ignore[arg-type]


@pytest.mark.parametrize("error", [False, True])
@pytest.mark.parametrize("kind", sorted(RESULTS))
def test_summary_requests_with_media_are_sent_as_agentscope_sends_them(kind: str, error: bool) -> None:
    """A context small enough to compress the results with their media: each summary request
    (the compressed span, the prompt and the structured-output instruction) is sent as the
    formatter sends it, media promoted after their run of results, and counted so."""
    from tests.parity.driver import run_agentscope

    script = _script(RESULTS[kind], error)
    config = ParityConfig(
        context_size=2_800,
        context=ContextConfig(max_image_num=1, reserve_ratio=0.3),
        injection=InjectionConfig(inject_runtime_state=False),
        workspace="memory",
    )
    theirs, ours = run_agentscope(script, config), run_lab(script, config)
    assert [c.kind for c in ours.calls] == [c.kind for c in theirs.calls]
    summaries = [
        (mine, real) for mine, real in zip(ours.calls, theirs.calls, strict=True) if mine.kind == "summary"
    ]
    for mine, real in summaries:
        assert sent_form(mine.sent) == sent_form(real.sent)
    for convention in ("messages", "preflight", "as_sent"):
        assert ours.input_tokens(convention) == theirs.input_tokens(convention), convention  # type: ignore[arg-type]
    if kind != "image alone":  # a lone image is one part: nothing to compress it for at this size
        assert summaries
        assert any(
            m["role"] == "user" and isinstance(m["content"], list) and len(m["content"]) > 1
            for mine, _ in summaries
            for m in mine.sent
        )  # media promoted in a summary request
