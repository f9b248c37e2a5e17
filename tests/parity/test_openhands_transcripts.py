"""Real transcripts through `openhands` and `openhands-hybrid` against the real
`openhands-sdk==1.58.2` (the hybrid masked by SWE-agent): every sample of `tests/data/importers`
(and each trace of `tests/data/traces`: `samples`) the lab imports, replayed at one of four
settings (picked by a digest of the transcript's path, `shapes.choice`: `max_size` 10, 16, 40 with
masking `n` 2, 3, 5, and the token trigger), the same requests call for call.

Each transcript is first put in the form the driver plays (`driver_form`): the driver's tools
take required string fields, so every tool takes the fields its calls use, as strings (a value
that is no string is its JSON text, a field a call leaves out is empty); a round of several
calls becomes rounds of one for the hybrid (SWE-agent's function calling takes one call a step:
S11); an
empty final answer reads "Done." (the SDK asks again after one: row 17); a call the transcript
leaves unanswered is answered empty, as the replay answers it; a medium other than an image
(audio, a PDF: the SDK has no content for one) is left out. Both sides play the same script.
"""

from __future__ import annotations

import json
import keyword
from dataclasses import replace
from typing import Any

import pytest

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.presets.openhands.params import CondenserSettings, HybridParams, OpenHandsParams
from ctxlab.workloads.importers import read_any
from tests.parity.openhands_side import OpenHandsDriver, Workload
from tests.parity.openhands_workloads import one_call_per_round
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.shapes import choice
from tests.parity.test_openhands_parity import compare, compare_hybrid

SETTINGS = (
    (2, CondenserSettings(max_size=10, keep_first=1)),
    (3, CondenserSettings(max_size=16, keep_first=2)),
    (5, CondenserSettings(max_size=40, keep_first=4)),
    (3, CondenserSettings(max_tokens=4_000)),
)
RESERVED = frozenset({"kind", "model_config", "model_fields", "visualize"})
"""Field names an SDK action has of its own (or pydantic reserves): renamed by place."""


def _field(name: str, place: int) -> str:
    usable = name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")
    return name if usable and name not in RESERVED else f"field_{place}"


def _arguments(call: ScriptedCall) -> dict[str, Any]:
    try:
        found = json.loads(call.input) if call.input else {}
    except json.JSONDecodeError:
        found = {"input": call.input}
    return found if isinstance(found, dict) else {"input": found}


def _as_string(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def driver_form(script: Script, *, single_calls: bool) -> Script:
    """`script` as the driver plays it (see the module docstring), its rounds of one call each
    when `single_calls`."""
    fields: dict[str, dict[str, None]] = {t.name: {} for t in script.tools}
    for tool in script.tools:
        fields[tool.name].update(dict.fromkeys(json.loads(tool.parameters).get("properties", {})))
    for call in script.calls():
        fields.setdefault(call.tool, {}).update(dict.fromkeys(_arguments(call)))
    names = {tool: {k: _field(k, i) for i, k in enumerate(keys)} for tool, keys in fields.items()}
    described = {t.name: t.description for t in script.tools}
    tools = tuple(
        ToolSchema.of(
            tool,
            described.get(tool) or f"The {tool} tool.",
            {
                "type": "object",
                "properties": {n: {"type": "string", "description": f"The {n}."} for n in named.values()},
                "required": list(named.values()),
            },
        )
        for tool, named in names.items()
    )

    def call_form(call: ScriptedCall) -> ScriptedCall:
        given = _arguments(call)
        named = names[call.tool]
        arguments = {named[k]: _as_string(given[k]) if k in given else "" for k in named}
        result = _imaged(call.result) if call.result is not None else (TextBlock(text=""),)
        return replace(call, input=json.dumps(arguments, ensure_ascii=False), result=result)

    turns = tuple(
        replace(
            turn,
            user=_imaged(turn.user),
            rounds=tuple(replace(r, calls=tuple(call_form(c) for c in r.calls)) for r in turn.rounds),
            final=turn.final or "Done.",
        )
        for turn in script.turns
    )
    played = replace(script, tools=tools, turns=turns)
    return one_call_per_round(played) if single_calls else played


def _imaged(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """`parts` without their media other than images."""
    return tuple(p for p in parts if not isinstance(p, DataBlock) or p.is_image)


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_openhands_matches_the_sdk(
    driver: OpenHandsDriver, transcript: str
) -> None:
    _, condenser = choice(SETTINGS, transcript)
    script = driver_form(read_any(DATA / transcript).script, single_calls=False)
    compare(driver, Workload(script=script, params=OpenHandsParams(condenser=condenser)))


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_openhands_hybrid_matches_the_sdk(
    driver: OpenHandsDriver, transcript: str
) -> None:
    n, condenser = choice(SETTINGS, transcript)
    script = driver_form(read_any(DATA / transcript).script, single_calls=True)
    params = HybridParams(masking=LastNObservationsParams(n=n), condenser=condenser)
    compare_hybrid(driver, script, params)  # no call at all where a user image is answered (row 24)
