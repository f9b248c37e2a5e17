"""Real transcripts through `google-adk-window` and `google-adk-tokens` against the real
`google-adk==2.13.0`: every sample of `tests/data/importers` (and each trace of
`tests/data/traces`: `samples`) the lab imports, replayed at one of four settings (the window
every turn without overlap and every two turns with one; 300 tokens keeping 1 event and 600
keeping none), the same requests call for call.

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
from tests.parity.adk_side import AdkDriver, Workload, run_lab
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.test_adk_parity import compare

SETTINGS = (
    EventsCompactionConfig(compaction_interval=1, overlap_size=0),
    EventsCompactionConfig(token_threshold=300, event_retention_size=1),
    EventsCompactionConfig(compaction_interval=2, overlap_size=1),
    EventsCompactionConfig(token_threshold=600, event_retention_size=0),
)


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


def setting(transcript: str) -> AdkParams:
    return AdkParams(events_compaction_config=SETTINGS[TRANSCRIPTS.index(transcript) % len(SETTINGS)])


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_google_adk_matches_adk(adk: AdkDriver, transcript: str) -> None:
    script = driver_form(read_any(DATA / transcript).script)
    compare(adk, Workload(script=script, params=setting(transcript)))


def test_the_settings_compact_most_transcripts(adk: AdkDriver) -> None:
    """The settings are chosen so that ADK summarises before a later request: in a third of the
    samples or more (35 of 66; many are a single short turn, summarised only after it, GA15)."""
    compacted = [
        t
        for t in TRANSCRIPTS
        if "summary"
        in compare(adk, Workload(script=driver_form(read_any(DATA / t).script), params=setting(t)))[0]
    ]
    assert len(compacted) >= len(TRANSCRIPTS) // 3, compacted


def test_a_transcript_call_adk_discards_fails_the_lab_naming_it() -> None:
    """GA19 on real data: LangGraph's checkpoint sample holds a call whose arguments are no JSON
    (`{"path": notes.txt}`), which ADK's adapter discards; unadapted, the preset fails there."""
    script = read_any(DATA / "importers/langgraph/checkpoint.json").script
    with pytest.raises(ValueError, match="call 'call_bad'"):
        run_lab(Workload(script=script, params=setting("importers/langgraph/checkpoint.json")))


def test_an_empty_answer_is_an_event_whose_usage_adk_reads(adk: AdkDriver) -> None:
    """GA25: claude-code's session ends its first turn on an empty answer, whose call (314 tokens)
    is over a threshold of 300 that the call before it (275) is not: ADK reads the empty answer's
    usage and summarises after the turn, and so does the lab."""
    script = driver_form(read_any(DATA / "importers/claude-code/session.jsonl").script)
    config = EventsCompactionConfig(token_threshold=300, event_retention_size=1)
    kinds, _ = compare(adk, Workload(script=script, params=AdkParams(events_compaction_config=config)))
    assert kinds == ["reasoning", "reasoning", "summary", "reasoning", "reasoning", "summary", "reasoning"]
