"""A workload with no system prompt, in every preset: each request carries what the preset's
`no_system` declares (no system message, an empty one, or ADK's identity instruction), a request
with nothing else to send has no message at all, and the lab's counts and cache follow what is
sent (the parity tests prove each family against its package)."""

from __future__ import annotations

import pytest

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.message import fixed_messages
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.protocol import violations
from ctxlab.core.world.script import ScriptedCall, ScriptedRound
from ctxlab.engine.hooks import Strategy
from ctxlab.presets.preset import EMPTY_SYSTEM_MESSAGE, NO_SYSTEM_MESSAGE
from ctxlab.presets.registry import PRESETS
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.tokenizers import BpeCounter
from tests.zoo.runs import TOOLS, run, turns


def strategy(name: str) -> Strategy:
    preset = PRESETS[name]
    params = preset.params(n=2) if name == "swe-agent" else preset.params()
    return preset.build(params, CTXLAB_TEXTS)


def rounds(count: int) -> tuple[ScriptedRound, ...]:
    return tuple(
        ScriptedRound(
            text=None,
            calls=(
                ScriptedCall(tool="bash", input='{"command": "ls"}', result=(TextBlock(text="x" * 200),)),
            ),
        )
        for _ in range(count)
    )


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_request_with_no_system_prompt_carries_what_the_preset_declares(name: str) -> None:
    declared = PRESETS[name].no_system
    sent = strategy(name).system_prompt("")
    if declared.startswith(NO_SYSTEM_MESSAGE):
        assert sent is None
    elif declared.startswith(EMPTY_SYSTEM_MESSAGE):
        assert sent == ""
    else:
        assert sent  # ADK: the identity instruction
    ran = run(strategy(name), turns(rounds(3), rounds(2), system=""), window=64_000)
    requests = ran.sent()
    assert requests
    for request in requests:
        system = [m for m in request if m.role == "system" and not m.id]
        if sent is None:
            assert not request or request[0].role != "system"
        else:
            assert request[0].role == "system" and request[0].blocks == (TextBlock(text=sent),)
        assert len(system) <= 1 + (name == "nonoka")  # nonoka's ledger is a system message of its own


def test_the_lab_s_count_of_an_empty_system_message_is_nothing() -> None:
    """The lab's yardsticks count no overhead per message, so an empty system message costs no
    input token: leaving it out changes the requests, not their counts (a family's own counter,
    deepagents' and OpenHands', counts it where its package does)."""
    request = fixed_messages(None, "the summary")
    for counter in (AgentScopeEstimator(), BpeCounter("o200k_base"), BpeCounter("cl100k_base")):
        with_empty = counter.count(fixed_messages("", "the summary"), TOOLS)
        assert with_empty == counter.count(request, TOOLS) > 0


def test_nothing_to_send_is_an_empty_request_under_every_rule() -> None:
    """With no system message and no summary, a request with no context has no message at all:
    the OpenAI API refuses it ("[] is too short"), as the Anthropic and Bedrock APIs refuse a
    request of an empty system prompt alone."""
    assert fixed_messages(None, "") == ()
    found = violations([], ["openai", "anthropic", "bedrock"])
    assert {(v.rule, v.kind) for v in found} == {
        ("openai", "empty_request"),
        ("anthropic", "empty_request"),
        ("bedrock", "empty_request"),
    }
    empty_system = violations([{"role": "system", "content": ""}], ["openai", "anthropic"])
    assert {(v.rule, v.kind) for v in empty_system} == {("anthropic", "empty_request")}


def test_the_cache_reads_the_tools_when_no_message_is_shared() -> None:
    """Without a system message two requests may share no leading message; their identical
    tools are still read from the cache."""
    ran = run(strategy("none"), turns(rounds(2), system=""), record_requests=True)
    cached = [u.cached_tokens for u in ran.meter.usages]
    assert cached[0] == 0 and all(c > 0 for c in cached[1:])
