"""The `swe-agent` preset: SWE-agent's `last_n_observations` history processor.

Source: SWE-agent (`SWE-agent/SWE-agent@3ea751c`, `sweagent/agent/history_processors.py`,
`LastNObservations` at l.85; `n=5` in the paper and its config). Before every query, every
observation but the last `n` is replaced by a one-line notice of how many lines it had; the first
observation (the task) is never elided. The history itself keeps every observation: the
processor edits the request only, so as the window moves each request differs from the previous
one inside the history, which its docstring notes breaks prompt caching (`polling` moves the
window in steps to break it less often).

`n` has no default, as in the source (the paper and its config use 5); `polling=1`. Under
`texts: swe-agent` an elided observation reads as SWE-agent writes it ("Old environment output:
(N lines omitted)", plus " (K images omitted)"); otherwise the wording is ctxlab's own. The step
itself is shared with `openhands-hybrid` (`ctxlab.presets.observations`).
"""

from __future__ import annotations

from dataclasses import replace

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.presets.observations import LastNObservations
from ctxlab.presets.preset import Preset
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import Texts

SOURCE = "SWE-agent 3ea751c, sweagent/agent/history_processors.py (LastNObservations)"


SWE_AGENT_NOTICE = "Old environment output: ({lines} lines omitted)"
SWE_AGENT_MEDIA_NOTICE = " ({count} images omitted)"
# The two notices above are SWE-agent's (MIT licence: Copyright (c) 2024 John Yang, Carlos E.
# Jimenez, Alexander Wettig, Shunyu Yao, Karthik Narasimhan, Ofir Press), with its two counts
# written as ctxlab's placeholders.


def family_params(params: LastNObservationsParams, texts: Texts) -> LastNObservationsParams:
    """The parameters with SWE-agent's notices under `texts: swe-agent`."""
    if texts.name != "swe-agent":
        return params
    return replace(params, notice=SWE_AGENT_NOTICE, media_notice=SWE_AGENT_MEDIA_NOTICE)


def build(params: LastNObservationsParams, texts: Texts) -> StepStrategy:
    """The `swe-agent` strategy."""
    params = family_params(params, texts)
    return StepStrategy(name="swe-agent", steps=(LastNObservations(params),), config=params, source=SOURCE)


PRESET = Preset(
    name="swe-agent",
    summary="SWE-agent last_n_observations: all but the last n tool results elided from each request "
    "(n required, the paper's 5)",
    source=SOURCE,
    params=LastNObservationsParams,
    build=build,
)
