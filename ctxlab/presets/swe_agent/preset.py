"""The `swe-agent` preset: SWE-agent's `last_n_observations` history processor.

Source: SWE-agent (`SWE-agent/SWE-agent@3ea751c`, `sweagent/agent/history_processors.py`,
`LastNObservations`; `n=5` in the paper and its config). Before every query, every observation
but the last `n` is replaced by a one-line notice of how many lines (and images) it had; the
first observation (the task) is never elided. The history itself keeps every observation: the
processor edits the request only, so as the window moves each request differs from the previous
one inside the history, which its docstring notes breaks prompt caching (`polling` moves the
window in steps to break it less often).

`n` has no default, as in the source (a scenario without it is told to add `n: 5`); `polling=1`.
Observations are counted as SWE-agent counts them, one per step (`ctxlab.core.compaction.
observations`). Under `texts: swe-agent` an elided observation reads as SWE-agent writes it
("Old environment output: (N lines omitted)", plus " (K images omitted)"); otherwise the wording
is ctxlab's own. Proven call for call against SWE-agent's own processor in
`tests/parity/test_swe_agent_parity.py`; what cannot be reproduced is in `NOTES`. The step is
shared with `openhands-hybrid` (`ctxlab.presets.observations`).
"""

from __future__ import annotations

from dataclasses import replace

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.presets.observations import LastNObservations
from ctxlab.presets.preset import EMPTY_SYSTEM_MESSAGE, Preset
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
    return StepStrategy(
        name="swe-agent",
        steps=(LastNObservations(params),),
        config=params,
        source=SOURCE,
        empty_system=True,  # the history always starts with the rendered system template
    )


NOTES = (
    "observations as SWE-agent counts them: the first user message stands for its instance "
    "template; each round of calls is one step (SWE-agent's function calling takes one call per step "
    "and asks again on more; a ctxlab round of parallel calls counts once, its results elided together)",
    "tags: ctxlab's messages carry none; keep_tools / remove_tools stand for SWE-agent's keep_output / "
    "remove_output tags on those tools' observations (removal wins, as there)",
    "demonstrations: ctxlab workloads have none; a replayed trajectory's demonstrations are user text, "
    "and any demonstration steps written as calls count as steps",
    "later user messages are not observations (a SWE-agent run has one task)",
    "images: elided and counted as in SWE-agent; kept ones travel in a user message after the tool "
    "message in the OpenAI view, inside it in SWE-agent's",
    "polling must be 1 or more (SWE-agent divides by it)",
    "thinking stands for an OpenAI-compatible reasoning_content, which SWE-agent's model never keeps "
    "or sends (the lab sends none either); a Claude model's thinking_blocks, which SWE-agent keeps on "
    "the action and sends back with it, are not reproduced",
)


PRESET = Preset(
    name="swe-agent",
    summary="SWE-agent last_n_observations: all but the last n observations (one per step) elided from "
    "each request (n required, the paper's 5)",
    source=SOURCE,
    params=LastNObservationsParams,
    build=build,
    no_system=f"{EMPTY_SYSTEM_MESSAGE} (the history starts with the rendered system template)",
    notes=NOTES,
)
