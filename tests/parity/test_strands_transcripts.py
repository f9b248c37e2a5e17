"""Real transcripts through `strands-sliding-window` and `strands-summarizing` against a real
strands `Agent` (strands-agents 1.62.0): every sample of `tests/data/importers` (and each trace
of `tests/data/traces`: `samples`) the lab imports, replayed at one of four settings, the same
requests call for call (kinds, messages in the OpenAI view with each result's status, tools,
counts, failures).

The settings are sized to each transcript, as its provider's window is: `window` is the lab's count
of its first request and a share of the rest of the whole transcript in one request (`whole`), so
on these small transcripts results are cut and messages trimmed, or summarized. Sliding window: 3 messages
before every call (`per_turn`); 4 messages with the window at half the rest. Summarizing:
the window at 0.6 of the rest keeping the newest message, and at 0.75 with a ratio
of 0.5 keeping 2.

Each transcript is first put in the form the driver plays (`driver_form`): a tool the transcript
calls but does not declare (a provider's server tool, such as Anthropic's `web_search`) is
declared, with no parameters, as the driver answers only calls of the agent's own tools (strands
answers any other with an error of its own); media strands does not take as an image (a URL, a
format other than PNG, JPEG and GIF, audio, a document: `takes`) are left out, so a user's and a
result's base64 images reach the agent as its image blocks (ST29); a call the transcript leaves
unanswered is answered empty, as the replay answers it. A user message of several parts goes to
the agent part by part. Both sides play the same script.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctxlab.core.messages.blocks import Part, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.workloads.importers import read_any
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.strands_driver import StrandsConfig, takes
from tests.parity.strands_lab import COUNTER, run_lab
from tests.parity.test_strands_parity import compare, kinds

SETTINGS = (
    (StrandsConfig(window_size=3, per_turn=True), None),
    (StrandsConfig(manager="summary", preserve_recent_messages=1), 0.6),
    (StrandsConfig(window_size=4), 0.5),
    (StrandsConfig(manager="summary", summary_ratio=0.5, preserve_recent_messages=2), 0.75),
)
"""Each with the share of `whole` its window is (None: the default window, never reached)."""


def driver_form(script: Script) -> Script:
    """`script` as the driver plays it (see the module docstring)."""
    declared = {t.name for t in script.tools}
    called = dict.fromkeys(c.tool for c in script.calls() if c.tool not in declared)
    tools = (
        *script.tools,
        *(ToolSchema.of(name, f"The {name} tool.", {"type": "object", "properties": {}}) for name in called),
    )

    def call_form(call: ScriptedCall) -> ScriptedCall:
        return replace(call, result=_taken(call.result) if call.result is not None else (TextBlock(text=""),))

    turns = tuple(
        replace(
            turn,
            user=_taken(turn.user),
            rounds=tuple(replace(r, calls=tuple(map(call_form, r.calls))) for r in turn.rounds),
        )
        for turn in script.turns
    )
    return replace(script, tools=tools, turns=turns)


def _taken(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    return tuple(filter(takes, parts))


def whole(script: Script) -> tuple[int, int]:
    """The lab's count of the transcript's first request, and of the whole transcript as one."""
    messages: list[Message] = [text_message("system", script.system_prompt)]
    first = COUNTER.count([*messages, Message(role="user", blocks=script.turns[0].user)], script.tools)
    for turn in script.turns:
        messages.append(Message(role="user", blocks=turn.user))
        for r in turn.rounds:
            calls = tuple(ToolCallBlock(id=c.id or "", name=c.tool, input=c.input) for c in r.calls)
            messages.append(
                Message(role="assistant", blocks=(*((TextBlock(text=r.text),) if r.text else ()), *calls))
            )
            results = tuple(
                ToolResultBlock(id=c.id or "", name=c.tool, output=c.result or ()) for c in r.calls
            )
            messages.append(Message(role="user", blocks=results))
        messages.append(text_message("assistant", turn.final or "-"))
    return first, COUNTER.count(messages, script.tools)


def case(transcript: str) -> tuple[Script, StrandsConfig]:
    script = driver_form(read_any(DATA / transcript).script)
    config, share = SETTINGS[TRANSCRIPTS.index(transcript) % len(SETTINGS)]
    if share is None:
        return script, config
    first, total = whole(script)
    return script, replace(config, window=first + int((total - first) * share))


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_strands_matches_the_agent(transcript: str) -> None:
    compare(*case(transcript), strands_may_stop_first=True)


def test_the_settings_act_on_most_transcripts() -> None:
    """The settings are chosen so that strands acts: a refusal (then a cut, a trim or a summary)
    or a per-call trim in most samples (53 of 66; the lab's calls, which the test above holds to
    strands')."""
    acted = []
    for transcript in TRANSCRIPTS:
        script, config = case(transcript)
        if "f" in kinds(run_lab(script, config)) or (config.per_turn and len(script.turns[0].rounds) > 1):
            acted.append(transcript)
    assert len(acted) >= len(TRANSCRIPTS) // 2, acted
