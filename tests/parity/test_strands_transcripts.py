"""Real transcripts through `strands-sliding-window` and `strands-summarizing` against a real
strands `Agent` (strands-agents 1.62.0): every sample of `tests/data/importers` (and each trace
of `tests/data/traces`: `samples`) the lab imports, replayed at one of four settings (picked
by a digest of the transcript's path, `shapes.choice`), the same requests call for call (kinds,
messages in the OpenAI view with each result's status, tools, counts, failures).

The settings are sized to each transcript, as its provider's window is: `window` is the lab's count
of its first request and a share of what its last request adds to that (`whole`), so every
transcript that makes a second request overflows it, and results are cut and messages trimmed, or
summarized. Sliding window: 3 messages before every call (`per_turn`); 4 messages with the window
at half of what the last request adds. Summarizing: the window at 0.6 of it keeping the newest
message, and at 0.75 with a ratio of 0.5 keeping 2. Strands acts on every sample it can act on
(`test_strands_acts_on_every_transcript_it_can_act_on`).

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
from tests.parity import shapes
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.shapes import Guard, choice, choice_index
from tests.parity.strands_driver import StrandsConfig, StrandsTrace, takes
from tests.parity.strands_lab import COUNTER, run_lab
from tests.parity.test_strands_parity import compare

PER_CALL_WINDOW = 3
SETTINGS = (
    (StrandsConfig(window_size=PER_CALL_WINDOW, per_turn=True), None),
    (StrandsConfig(manager="summary", preserve_recent_messages=1), 0.6),
    (StrandsConfig(window_size=4), 0.5),
    (StrandsConfig(manager="summary", summary_ratio=0.5, preserve_recent_messages=2), 0.75),
)
"""Each with the share of what the last request adds to the first (`whole`) that its window adds
(None: the default window, never reached)."""
UNREACHED = 10**9
AT_LEAST = 40
"""The eligible samples strands must act on, at the least."""


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
    """The lab's count of the transcript's first request, and of its last request with nothing
    taken out (the whole transcript but the last final answer, as one request)."""
    messages: list[Message] = [text_message("system", script.system_prompt)]
    first = COUNTER.count([*messages, Message(role="user", blocks=script.turns[0].user)], script.tools)
    for number, turn in enumerate(script.turns, start=1):
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
        if number < len(script.turns):
            messages.append(text_message("assistant", turn.final or "-"))
    return first, COUNTER.count(messages, script.tools)


def case(transcript: str) -> tuple[Script, StrandsConfig]:
    script = driver_form(read_any(DATA / transcript).script)
    config, share = choice(SETTINGS, transcript)
    if share is None:
        return script, config
    first, last = whole(script)
    return script, replace(config, window=first + int((last - first) * share))


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_strands_matches_the_agent(transcript: str) -> None:
    compare(*case(transcript), strands_may_stop_first=True)


def acts(script: Script, config: StrandsConfig) -> bool:
    """Whether the lab's run (which the test above holds to strands') sends other requests than
    with nothing to manage: no window reached, no message trimmed after a turn or before a call."""
    unmanaged = replace(config, window=UNREACHED, window_size=UNREACHED, per_turn=False)
    return _requests(run_lab(script, config)) != _requests(run_lab(script, unmanaged))


def _requests(trace: StrandsTrace) -> list[tuple[str, str]]:
    return [(call.kind, call.messages) for call in trace.calls]


def can_act(script: Script, share: float | None) -> bool:
    """Whether strands can act on `script` at a setting, read from the script alone: trimming to 3
    messages before every call needs a request of more than 3 (`shapes.exchange_messages`); a
    window sized to a share of what the last request adds to the first needs a second request (a
    round, or a second turn), which it refuses."""
    if share is None:
        return shapes.exchange_messages(script) > PER_CALL_WINDOW
    return len(script.turns) > 1 or bool(script.turns[0].rounds)


def test_strands_acts_on_every_transcript_it_can_act_on() -> None:
    """On every sample `can_act` admits, on `AT_LEAST` of them, and under each of the four settings
    on one at least: of the 78 samples, strands acts (refuses a request, then cuts, trims or
    summarizes; or trims before a call or after a turn) on 73, every one eligible (the others: a
    single request, or 3 messages at most under the per-call window)."""
    guard = Guard("strands")
    for transcript in TRANSCRIPTS:
        script, config = case(transcript)
        eligible = can_act(script, choice(SETTINGS, transcript)[1])
        setting = choice_index(len(SETTINGS), transcript)
        guard.note(transcript, setting, eligible=eligible, acts=acts(script, config))
    guard.check(at_least=AT_LEAST, settings=range(len(SETTINGS)))
