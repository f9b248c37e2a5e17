"""Real transcripts through `google-adk-window` and `google-adk-tokens` against the real
`google-adk==2.13.0`: every sample of `tests/data/importers` (and each trace of
`tests/data/traces`: `samples`) the lab imports, replayed at one of four settings (picked by a
digest of the transcript's path, `shapes.choice`: the window every turn without overlap and every
two turns with one; a token threshold at half of the largest request ending a turn before the
last, keeping 1 event, and at 0.8 of it keeping none; one token for a single turn), the same
requests call for call. ADK summarises before a later request on every sample with more turns
than the window's interval, or with two turns or more at a threshold
(`test_adk_summarises_on_every_transcript_it_can_summarise`).

Each transcript is first put in the form the driver plays (`driver_form`): a tool the transcript
calls but does not declare (a provider's server tool, such as Anthropic's `web_search`) is
declared, with no parameters, as the driver answers only calls of the agent's own tools (ADK
answers any other with an error of its own); a call whose arguments ADK's adapter cannot read as
an object even after its repairs, which ADK discards and either preset refuses (the declared
GA19), is given them as `{"input": <the text>}`; a call the transcript leaves unanswered is
answered empty, as the replay answers it. Images and other media, a user's or a result's, go to
ADK as they are (a result's as the media of the mapping its tool returns, beside `result`).
Both sides play the same script.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.presets.google_adk.arguments import parsed_arguments
from ctxlab.presets.google_adk.params import AdkParams, EventsCompactionConfig
from ctxlab.workloads.importers import read_any
from tests.parity import shapes
from tests.parity.adk_side import AdkDriver, Workload, run_lab
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.shapes import Guard, choice, choice_index
from tests.parity.test_adk_parity import compare

EVERY_TURN = EventsCompactionConfig(compaction_interval=1, overlap_size=0)
SETTINGS: tuple[EventsCompactionConfig | tuple[float, int], ...] = (
    EVERY_TURN,
    (0.5, 1),
    EventsCompactionConfig(compaction_interval=2, overlap_size=1),
    (0.8, 0),
)
"""A window, or a token threshold as the share of `largest_earlier_end` it is and the events it keeps."""
NEVER = EventsCompactionConfig(token_threshold=10**9, event_retention_size=0)
AT_LEAST = 25
"""The eligible samples ADK must summarise on, at the least."""


@pytest.fixture(scope="module")
def adk() -> Iterator[AdkDriver]:
    server = AdkDriver()
    yield server
    server.close()


def driver_form(script: Script) -> Script:
    """`script` as the driver plays it (see the module docstring)."""
    declared = {t.name for t in script.tools}
    called = dict.fromkeys(c.tool for c in script.calls() if c.tool not in declared)
    tools = (
        *script.tools,
        *(ToolSchema.of(name, f"The {name} tool.", {"type": "object", "properties": {}}) for name in called),
    )

    def call_form(call: ScriptedCall) -> ScriptedCall:
        arguments = (
            call.input if parsed_arguments(call.input) is not None else json.dumps({"input": call.input})
        )
        result = call.result if call.result is not None else (TextBlock(text=""),)
        return replace(call, input=arguments, result=result)

    turns = tuple(
        replace(turn, rounds=tuple(replace(r, calls=tuple(map(call_form, r.calls))) for r in turn.rounds))
        for turn in script.turns
    )
    return replace(script, tools=tools, turns=turns)


def setting(script: Script, transcript: str) -> AdkParams:
    """The transcript's setting: its window, or its token threshold sized to `script`."""
    chosen = choice(SETTINGS, transcript)
    if isinstance(chosen, EventsCompactionConfig):
        return AdkParams(events_compaction_config=chosen)
    share, kept = chosen
    threshold = shapes.share_of(largest_earlier_end(script), share)
    return AdkParams(
        events_compaction_config=EventsCompactionConfig(token_threshold=threshold, event_retention_size=kept)
    )


def largest_earlier_end(script: Script) -> int:
    """The lab's count of the largest request ending a turn before the last (0 for one turn), in a
    run that never summarises: a threshold at or below it summarises after that turn."""
    calls = run_lab(Workload(script=script, params=AdkParams(events_compaction_config=NEVER)))
    ends = itertools.accumulate(len(turn.rounds) + 1 for turn in script.turns[:-1])
    return max((calls[end - 1].tokens for end in ends), default=0)


def _script(transcript: str) -> Script:
    return driver_form(read_any(DATA / transcript).script)


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_google_adk_matches_adk(adk: AdkDriver, transcript: str) -> None:
    script = _script(transcript)
    compare(adk, Workload(script=script, params=setting(script, transcript)))


def summarises_before_a_request(script: Script, params: AdkParams) -> bool:
    """Whether the lab's run (which the test above holds to ADK's) summarises before a later request."""
    kinds = [call.kind for call in run_lab(Workload(script=script, params=params))]
    last = max((i for i, kind in enumerate(kinds) if kind == "reasoning"), default=0)
    return "summary" in kinds[:last]


def can_summarise(script: Script, chosen: EventsCompactionConfig | tuple[float, int]) -> bool:
    """Whether ADK can summarise before a later request, read from the script alone: a window
    summarises after every `compaction_interval` turns, so it needs more turns than that; a
    threshold at or below a turn's last request summarises after that turn, so it needs a turn
    after one (every turn leaves two events or more: the user's message and the answer, more than
    the one kept)."""
    interval = chosen.compaction_interval if isinstance(chosen, EventsCompactionConfig) else 1
    return len(script.turns) > (interval or 1)


def test_adk_summarises_on_every_transcript_it_can_summarise() -> None:
    """On every sample `can_summarise` admits, on `AT_LEAST` of them, and under each of the four
    settings on one at least: of the 78 samples, ADK summarises before a later request on 61, every
    one of the 46 eligible, and 15 single turns at a threshold of one token (with no turn before the
    last, the threshold is the least there is: ADK then summarises within the turn). A single turn
    under a window is summarised only after it (GA15)."""
    guard = Guard("google-adk")
    for transcript in TRANSCRIPTS:
        script = _script(transcript)
        acts = summarises_before_a_request(script, setting(script, transcript))
        eligible = can_summarise(script, choice(SETTINGS, transcript))
        guard.note(transcript, choice_index(len(SETTINGS), transcript), eligible=eligible, acts=acts)
    guard.check(at_least=AT_LEAST, settings=range(len(SETTINGS)))


def test_a_transcript_call_adk_discards_fails_the_lab_naming_it() -> None:
    """GA19 on real data: LangGraph's checkpoint sample holds a call whose arguments are no JSON
    (`{"path": notes.txt}`), which ADK's adapter discards; unadapted, the preset fails there."""
    script = read_any(DATA / "importers/langgraph/checkpoint.json").script
    with pytest.raises(ValueError, match="call 'call_bad'"):
        run_lab(Workload(script=script, params=AdkParams(events_compaction_config=EVERY_TURN)))


def test_an_empty_answer_is_an_event_whose_usage_adk_reads(adk: AdkDriver) -> None:
    """GA25: claude-code's session ends its first turn on an empty answer, whose call (314 tokens)
    is over a threshold of 300 that the call before it (275) is not: ADK reads the empty answer's
    usage and summarises after the turn, and so does the lab."""
    script = driver_form(read_any(DATA / "importers/claude-code/session.jsonl").script)
    config = EventsCompactionConfig(token_threshold=300, event_retention_size=1)
    kinds, _ = compare(adk, Workload(script=script, params=AdkParams(events_compaction_config=config)))
    assert kinds == ["reasoning", "reasoning", "summary", "reasoning", "reasoning", "summary", "reasoning"]
