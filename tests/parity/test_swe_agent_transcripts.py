"""Real transcripts through `swe-agent` against SWE-agent's own `LastNObservations` (3ea751c, the
vendored file; see `tests/parity/swe_agent_side.py`): every sample of `tests/data/importers`
(and each trace of `tests/data/traces`: `samples`) the lab imports, replayed at one of four
settings (picked by a digest of the transcript's path, `shapes.choice`: `n` 1; `n` 2 with
`polling` 2; `n` 1 with the observations of the transcript's first called tool tagged
`keep_output`; `n` 3 with them tagged `remove_output`), the same requests call for call, compared
by the parity's `same_requests`, in the OpenAI view, with `texts: swe-agent`. Each transcript
of more than two calls has observations elided at its setting, unless every call before its last
`n` is of the tool it keeps; one or two calls leave nothing to elide but what a tag removes.

Each transcript is first put in the form SWE-agent plays (`driver_form`): a round of several calls
becomes rounds of one, the thought and the reasoning on the first (SWE-agent's function calling
takes one call a step: S11, declared). SWE-agent's history has one task, so a later turn's user
message (its images too) is a user message that is not an observation, and the previous turn's
final answer, where it has one, an assistant message before it (S13, declared;
`swe_agent_side.swe_history`). Both sides play the same script.
"""

from __future__ import annotations

import pytest

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.world.script import Script
from ctxlab.workloads.importers import read_any
from tests.parity.openhands_workloads import one_call_per_round
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.shapes import choice
from tests.parity.swe_agent_side import Workload
from tests.parity.test_swe_agent_parity import same_requests

SETTINGS = ((1, 1, ""), (2, 2, ""), (1, 1, "keep"), (3, 1, "remove"))
"""`n`, `polling`, and the tag the observations of the transcript's first called tool carry."""


def driver_form(script: Script) -> Script:
    """`script` as SWE-agent plays it: rounds of one call each (see the module docstring)."""
    return one_call_per_round(script)


def params_for(script: Script, setting: tuple[int, int, str]) -> LastNObservationsParams:
    """The processor's settings for `script`: `setting` with its tag on the first called tool."""
    n, polling, tag = setting
    first = tuple(c.tool for c in script.calls())[:1]
    return LastNObservationsParams(
        n=n,
        polling=polling,
        keep_tools=first if tag == "keep" else (),
        remove_tools=first if tag == "remove" else (),
    )


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_swe_agent_matches_its_history_processor(transcript: str) -> None:
    setting = choice(SETTINGS, transcript)
    script = driver_form(read_any(DATA / transcript).script)
    params = params_for(script, setting)
    requests = same_requests(Workload(script=script, params=params))
    calls = [c.tool for c in script.calls()]
    elided = any("omitted" in str(m["content"]) for request in requests for m in request)
    older = calls[: -params.n]  # the observations older than the last n, which the strategy may elide
    assert elided or len(calls) <= 2 or set(older) <= set(params.keep_tools)  # the strategy acts
