"""Real transcripts through the OpenAI Agents presets (against `openai-agents==0.24.0`) and the
pydantic-ai presets (against pydantic-ai-slim 2.62.0 with pydantic-ai-harness 0.62.0): every
sample of `tests/data/importers` (and each trace of `tests/data/traces`: `samples`) the lab
imports, replayed through each preset at one of three settings (picked by a digest of the
transcript's path, `shapes.choice`), each sized to the transcript so that its strategy acts on
every transcript on which it can act at all (trims outputs, cuts histories, clears results,
writes summaries), compared call for call by the family's own `compare`.

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

The trimmer trims outputs longer than a share (a quarter to three quarters) of the transcript's
longest result of one text before its last turn; the session's limit is a share of the items its
turns before the last leave; each capability triggers on a share (half, 0.7) of the messages of
its last request or on half of its estimated tokens. Each strategy acts on every sample it is
eligible for (`_eligible`, read from the script alone): of the 78 samples, the trimmer trims on 24
(18 eligible), the session limit cuts a history on 50 (50), the window cuts on 68 (62), clearing
clears on 51 (51) and summaries are written on 70 (62) (CHECKLIST OA22, PA27;
`test_each_strategy_acts_on_every_transcript_it_can_act_on`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall
from ctxlab.presets.pydantic_ai.view import CHARS_PER_TOKEN
from ctxlab.workloads.importers import read_any
from tests.parity import oa_lab, pa_lab, shapes
from tests.parity.oa_driver import OAConfig, OATrace
from tests.parity.pa_driver import PAConfig, PATrace
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.shapes import Guard, choice, choice_index
from tests.parity.test_openai_agents_parity import compare as compare_oa
from tests.parity.test_pydantic_ai_parity import compare as compare_pa

TRIMMERS = ((0.5, 10), (0.25, 0), (0.75, 5))
"""The trimmer's settings: the share of the transcript's longest earlier result text that is its
`max_output_chars` (`recent_turns` 1), and its `preview_chars`."""
UNTRIMMED_LIMIT = 40
"""`max_output_chars` where no turn but the last has a result of one text."""
LIMIT_SHARES = (0.5, 0.25, 0.75)
"""The session limit's share of the items the turns before the last leave (`shapes.earlier_items`)."""
NOTICE_ROOM = 60
"""The characters of the SDK's trim notice beside the tool's name and the preview (its fixed text
and two counts), with room to spare: an output longer than that is always trimmed."""
VARIANTS = 3
"""The settings of each pydantic-ai capability (`pydantic_ai_settings`), picked by number."""
CAPABILITIES = ("window", "clear", "summary")
SETTINGS = {"trimmer": len(TRIMMERS), "session": len(LIMIT_SHARES)} | dict.fromkeys(CAPABILITIES, VARIANTS)
"""How many settings each strategy has."""
AT_LEAST = {"trimmer": 10, "session": 30, "window": 40, "clear": 32, "summary": 40}
"""The eligible samples each strategy must act on, at the least."""
PLACEHOLDER = len("[result cleared]")
"""The characters of the harness's placeholder for a cleared result."""


def trimmer(script: Script, transcript: str) -> OAConfig:
    """The trimmer's setting for `script`: outputs over a share of its longest earlier result are trimmed."""
    share, preview = choice(TRIMMERS, transcript)
    longest = _longest_earlier(script)
    limit = shapes.share_of(len(longest[1]), share) if longest else UNTRIMMED_LIMIT
    return OAConfig(trimmer={"recent_turns": 1, "max_output_chars": limit, "preview_chars": preview})


def session(script: Script, transcript: str) -> OAConfig:
    """The session's setting for `script`: a share of the items its earlier turns leave."""
    return OAConfig(
        trimmer=None, limit=shapes.share_of(shapes.earlier_items(script), choice(LIMIT_SHARES, transcript))
    )


def pydantic_ai_settings(capability: str, script: Script, transcript: str) -> dict[str, Any]:
    """The capability's settings for `script`: its trigger a share of the messages (or of the
    estimated tokens, 4 characters each) of its last request, so that request is over it; a token
    window keeps half of the last message's tokens."""
    messages = shapes.exchange_messages(script)
    tokens = shapes.request_chars(script) // CHARS_PER_TOKEN
    last = shapes.share_of(shapes.last_message_chars(script) // CHARS_PER_TOKEN, 0.5)
    half, most = shapes.share_of(messages, 0.5), shapes.share_of(messages, 0.7)
    by_tokens = {"max_tokens": shapes.share_of(tokens, 0.5)}
    options: dict[str, tuple[dict[str, Any], ...]] = {
        "window": (
            {"max_messages": half, "keep_messages": 2},
            {**by_tokens, "keep_tokens": last},
            {"max_messages": most, "keep_messages": 3, "preserve_first_user_message": False},
        ),
        "clear": (
            {"max_messages": half, "keep_pairs": 1},
            {**by_tokens, "keep_pairs": 0, "clear_tool_inputs": True},
            {"max_messages": most, "keep_pairs": 2, "min_clear_tokens": 10},
        ),
        "summary": (
            {"max_messages": half, "keep_messages": 2},
            {**by_tokens, "keep_tokens": last, "tool_return_max_chars": 100},
            {"max_messages": most, "keep_messages": 3, "incremental": False},
        ),
    }
    return options[capability][choice_index(VARIANTS, transcript)]


def _longest_earlier(script: Script) -> tuple[str, str] | None:
    """The tool and text of the longest result of one text in a turn before the last."""
    texts = [
        (c.tool, text) for c in shapes.earlier_calls(script) if (text := shapes.only_text(c)) is not None
    ]
    return max(texts, key=lambda found: len(found[1]), default=None)


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
    script = _script(transcript, pydantic_ai=False)
    compare_oa(script, trimmer(script, transcript))


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_openai_agents_session_matches_the_sdk(transcript: str) -> None:
    script = _script(transcript, pydantic_ai=False)
    compare_oa(script, session(script, transcript))


@pytest.mark.parametrize("capability", CAPABILITIES)
@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_pydantic_ai_matches_the_harness(transcript: str, capability: str) -> None:
    script = _script(transcript, pydantic_ai=True)
    settings = pydantic_ai_settings(capability, script, transcript)
    compare_pa(script, PAConfig(capability=capability, settings=settings))


def _requests(trace: OATrace | PATrace) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The messages and tools of a run's requests to the model (summary requests left out)."""
    return [(c.messages, c.tools) for c in trace.calls if getattr(c, "kind", "reasoning") == "reasoning"]


def _acts(transcript: str) -> dict[str, bool]:
    """Whether each strategy, at the transcript's setting, changes a request of the lab's run (the
    runs the tests above hold to the packages'): the trimmer against no filter, the session's limit
    against none, the window and clearing against the same capability with no trigger (which never
    compacts); the summary capability by making a summary request."""
    oa, pa = _script(transcript, pydantic_ai=False), _script(transcript, pydantic_ai=True)
    whole = _requests(oa_lab.run_lab(oa, OAConfig(trimmer=None)))
    acts = {
        "trimmer": _requests(oa_lab.run_lab(oa, trimmer(oa, transcript))) != whole,
        "session": _requests(oa_lab.run_lab(oa, session(oa, transcript))) != whole,
    }
    for capability in ("window", "clear"):
        config = PAConfig(capability=capability, settings=pydantic_ai_settings(capability, pa, transcript))
        untriggered = PAConfig(capability=capability, settings={})
        acts[capability] = _requests(pa_lab.run_lab(pa, config)) != _requests(pa_lab.run_lab(pa, untriggered))
    summary = PAConfig(capability="summary", settings=pydantic_ai_settings("summary", pa, transcript))
    acts["summary"] = any(c.kind == "summary" for c in pa_lab.run_lab(pa, summary).calls)
    return acts


def _eligible(transcript: str) -> dict[str, bool]:
    """Whether each strategy can act on the transcript at its setting, read from the script alone:

    - the trimmer: a turn before the last has a result of one text longer than the notice would
      be (`NOTICE_ROOM`, the tool's name and the preview);
    - the session: the turns before the last leave two items or more (its limit is below that);
    - the window and the summaries: the last request holds five messages or more (with three, the
      kept tail reaches back to the first user message, which the window keeps, or to a call
      whose return it keeps), and by tokens, its last message holds a token (four characters);
    - clearing: more calls than the pairs it keeps, and with `min_clear_tokens` the results it
      clears hold 10 tokens (48 characters, for rounding) more than the placeholders they become.
    """
    oa, pa = _script(transcript, pydantic_ai=False), _script(transcript, pydantic_ai=True)
    window = _windowable(pa, pydantic_ai_settings("window", pa, transcript))
    return {
        "trimmer": _trimmable(oa, preview=choice(TRIMMERS, transcript)[1]),
        "session": shapes.earlier_items(oa) >= 2,
        "window": window,
        "clear": _clearable(pa, pydantic_ai_settings("clear", pa, transcript)),
        "summary": window,
    }


def _trimmable(script: Script, *, preview: int) -> bool:
    longest = _longest_earlier(script)
    return longest is not None and len(longest[1]) > NOTICE_ROOM + len(longest[0]) + preview


def _windowable(script: Script, settings: dict[str, Any]) -> bool:
    by_tokens = "keep_tokens" in settings
    last_holds_a_token = shapes.last_message_chars(script) >= CHARS_PER_TOKEN
    return shapes.exchange_messages(script) >= 5 and (last_holds_a_token or not by_tokens)


def _clearable(script: Script, settings: dict[str, Any]) -> bool:
    calls = list(script.calls())
    cleared = calls[: max(len(calls) - settings["keep_pairs"], 0)]
    reclaimed = sum(len(shapes.only_text(c) or "") for c in cleared) - PLACEHOLDER * len(cleared)
    return bool(cleared) and ("min_clear_tokens" not in settings or reclaimed >= 48)


def test_each_strategy_acts_on_every_transcript_it_can_act_on() -> None:
    """Each strategy acts (the lab's side, which the tests above hold to the packages') on every
    sample its eligibility (`_eligible`) admits, on at least `AT_LEAST` samples, and under each of
    its three settings on one at least. Of the 78 samples, the trimmer trims on 24 (18 eligible),
    the session limit cuts a history on 50 (50), the window cuts on 68 (62), clearing clears on 51
    (51) and summaries are written on 70 (62)."""
    guards = {strategy: Guard(strategy) for strategy in AT_LEAST}
    for transcript in TRANSCRIPTS:
        eligible = _eligible(transcript)
        for strategy, acts in _acts(transcript).items():
            setting = choice_index(SETTINGS[strategy], transcript)
            guards[strategy].note(transcript, setting, eligible=eligible[strategy], acts=acts)
    for strategy, guard in guards.items():
        guard.check(at_least=AT_LEAST[strategy], settings=range(SETTINGS[strategy]))
