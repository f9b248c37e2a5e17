"""Real transcripts through the OpenAI Agents presets (against `openai-agents==0.24.0`) and the
pydantic-ai presets (against pydantic-ai-slim 2.62.0 with pydantic-ai-harness 0.62.0): every
sample of `tests/data/importers` (and each trace of `tests/data/traces`: `samples`) the lab
imports, replayed through each preset at one of three settings (rotated over the transcripts,
small enough that outputs are trimmed, histories cut, results cleared and summaries written on
these short transcripts), compared call for call by the family's own `compare`.

Each transcript is first put in the form the driver plays (`driver_form`), both sides playing the
same script. For both families: a call of a tool the transcript does not declare (a server tool,
say) is offered a tool of that name taking any object (each SDK refuses a call of a tool it was
not given, where the lab answers any scripted call); a call the transcript leaves unanswered is
answered empty, as the replay answers it; a user message's or a result's media other than images
are left out (neither driver takes them), so a user's and a result's images are compared. For
pydantic-ai only, what the CHECKLIST declares: the
system prompt is stripped and each call's arguments are compact JSON (pydantic-ai sends them so
whatever the model wrote, PA19), arguments that are no JSON object are the object
`{"input": <the text>}` (pydantic-ai answers them with a retry prompt, running no tool: PA25), and
an empty final answer reads "Done." (pydantic-ai asks the model again after one: PA24). The
drivers carry the rest themselves: a user message of several parts or with images (the pydantic-ai
driver's prompt is then the list of its texts and images, PA28), and for OpenAI Agents an empty
final answer (no output item, as the chat-completions model makes of it).

At these settings, of the 66 samples, the trimmer trims on 18, the session limit cuts a history
on 33, the window cuts on 41, clearing clears on 35 and summaries are written on 29 (CHECKLIST
OA22, PA27; `test_the_settings_act_on_many_transcripts`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.workloads.importers import read_any
from tests.parity import oa_lab, pa_lab
from tests.parity.oa_driver import OAConfig, OATrace
from tests.parity.pa_driver import PAConfig, PATrace
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.test_openai_agents_parity import compare as compare_oa
from tests.parity.test_pydantic_ai_parity import compare as compare_pa

TRIMMERS = (
    OAConfig(trimmer={"recent_turns": 1, "max_output_chars": 40, "preview_chars": 10}),
    OAConfig(trimmer={"recent_turns": 1, "max_output_chars": 20, "preview_chars": 0}, limit=6),
    OAConfig(trimmer={"recent_turns": 1, "max_output_chars": 30, "preview_chars": 5}),
)
LIMITS = (2, 3, 5)
PYDANTIC_AI: dict[str, tuple[dict[str, Any], ...]] = {
    "window": (
        {"max_messages": 4, "keep_messages": 2},
        {"max_tokens": 300, "keep_tokens": 100},
        {"max_messages": 6, "keep_messages": 3, "preserve_first_user_message": False},
    ),
    "clear": (
        {"max_messages": 3, "keep_pairs": 1},
        {"max_tokens": 200, "keep_pairs": 0, "clear_tool_inputs": True},
        {"max_messages": 5, "keep_pairs": 2, "min_clear_tokens": 10},
    ),
    "summary": (
        {"max_messages": 5, "keep_messages": 2},
        {"max_tokens": 400, "keep_tokens": 100, "tool_return_max_chars": 100},
        {"max_messages": 8, "keep_messages": 3, "incremental": False},
    ),
}


def _rotated(options: tuple[Any, ...], transcript: str) -> Any:
    return options[TRANSCRIPTS.index(transcript) % len(options)]


def declared(script: Script) -> Script:
    """`script` with a tool taking any object for each tool its calls name and it does not declare."""
    named = {tool.name for tool in script.tools}
    missing = dict.fromkeys(call.tool for call in script.calls() if call.tool not in named)
    anything = {"type": "object", "properties": {}}
    return replace(
        script, tools=(*script.tools, *(ToolSchema.of(n, f"The {n} tool.", anything) for n in missing))
    )


def _arguments(text: str) -> str:
    """Call arguments as compact JSON (PA19); anything but a JSON object as `{"input": text}` (PA25)."""
    try:
        found = json.loads(text)
    except json.JSONDecodeError:
        found = None
    value = found if isinstance(found, dict) else {"input": text}
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _media_out(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    return tuple(p for p in parts if not isinstance(p, DataBlock) or p.is_image)


def driver_form(script: Script, *, pydantic_ai: bool) -> Script:
    """`script` as the family's driver plays it (see the module docstring)."""

    def call_form(call: ScriptedCall) -> ScriptedCall:
        result = _media_out(call.result) if call.result is not None else (TextBlock(text=""),)
        return replace(call, result=result, input=_arguments(call.input) if pydantic_ai else call.input)

    played = declared(script)
    turns = tuple(
        replace(
            turn,
            user=_media_out(turn.user),
            rounds=tuple(replace(r, calls=tuple(call_form(c) for c in r.calls)) for r in turn.rounds),
            final=turn.final or "Done." if pydantic_ai else turn.final,
        )
        for turn in played.turns
    )
    prompt = played.system_prompt.strip() if pydantic_ai else played.system_prompt
    return replace(played, system_prompt=prompt, turns=turns)


def _script(transcript: str, *, pydantic_ai: bool) -> Script:
    return driver_form(read_any(DATA / transcript).script, pydantic_ai=pydantic_ai)


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_openai_agents_trimmer_matches_the_sdk(transcript: str) -> None:
    compare_oa(_script(transcript, pydantic_ai=False), _rotated(TRIMMERS, transcript))


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_openai_agents_session_matches_the_sdk(transcript: str) -> None:
    limit = _rotated(LIMITS, transcript)
    compare_oa(_script(transcript, pydantic_ai=False), OAConfig(trimmer=None, limit=limit))


@pytest.mark.parametrize("capability", list(PYDANTIC_AI))
@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_pydantic_ai_matches_the_harness(transcript: str, capability: str) -> None:
    settings = _rotated(PYDANTIC_AI[capability], transcript)
    compare_pa(_script(transcript, pydantic_ai=True), PAConfig(capability=capability, settings=settings))


def _requests(trace: OATrace | PATrace) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The messages and tools of a run's requests to the model (summary requests left out)."""
    return [(c.messages, c.tools) for c in trace.calls if getattr(c, "kind", "reasoning") == "reasoning"]


def _acts(transcript: str) -> dict[str, bool]:
    """Whether each strategy, at the transcript's setting, changes a request of the lab's run (the
    runs the tests above hold to the packages'): the trimmer against the session alone at the same
    limit, the session's limit against none, the window and clearing against the same capability
    with no trigger (which never compacts); the summary capability by making a summary request."""
    oa, pa = _script(transcript, pydantic_ai=False), _script(transcript, pydantic_ai=True)
    trimmer = _rotated(TRIMMERS, transcript)
    session = OAConfig(trimmer=None, limit=_rotated(LIMITS, transcript))
    acts = {
        "trimmer": _requests(oa_lab.run_lab(oa, trimmer))
        != _requests(oa_lab.run_lab(oa, OAConfig(trimmer=None, limit=trimmer.limit))),
        "session": _requests(oa_lab.run_lab(oa, session))
        != _requests(oa_lab.run_lab(oa, OAConfig(trimmer=None))),
    }
    for capability in ("window", "clear"):
        config = PAConfig(capability=capability, settings=_rotated(PYDANTIC_AI[capability], transcript))
        untriggered = PAConfig(capability=capability, settings={})
        acts[capability] = _requests(pa_lab.run_lab(pa, config)) != _requests(pa_lab.run_lab(pa, untriggered))
    summary = PAConfig(capability="summary", settings=_rotated(PYDANTIC_AI["summary"], transcript))
    acts["summary"] = any(c.kind == "summary" for c in pa_lab.run_lab(pa, summary).calls)
    return acts


def test_the_settings_act_on_many_transcripts() -> None:
    """The settings are chosen so that each strategy acts (the lab's side, which the tests above
    hold to the packages'): of the 66 samples, the trimmer trims on 18, the session limit cuts a
    history on 33, the window cuts on 41, clearing clears on 35 and summaries are written on 29.
    Held to a quarter of the samples for the trimmer, a third for the others, and each of the
    three settings of each strategy to acting on one sample at least."""
    acted: dict[str, list[int]] = {}
    for index, transcript in enumerate(TRANSCRIPTS):
        for strategy, acts in _acts(transcript).items():
            acted.setdefault(strategy, [])
            if acts:
                acted[strategy].append(index)
    for strategy, indices in acted.items():
        share = 4 if strategy == "trimmer" else 3
        assert len(indices) >= len(TRANSCRIPTS) // share, (strategy, indices)
        assert {i % 3 for i in indices} == {0, 1, 2}, (strategy, indices)
