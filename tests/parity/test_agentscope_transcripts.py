"""Real transcripts through `agentscope` against the real `agentscope.agent.Agent` (2.0.11): every
sample of `tests/data/importers` (and each trace of `tests/data/traces`: `samples`) the lab
imports, replayed at one of four settings (picked by a digest of the transcript's path,
`shapes.choice`), compared by the engine parity's `compare` (call kinds, every call's input
tokens under every convention, the context after every compression, the summaries, the final
context), and every request as the OpenAI formatter sends it (role, text, calls, result id).

A setting's window is a share (0.25 to 0.7) of the transcript's own largest request, at least 200
tokens, so every transcript whose largest request passes 200 tokens is compressed at least once
(most several times); the settings also vary the trigger and reserve, truncate results (limits 200
to 1,000 tokens, offloaded or not), cap images (0, 1, 5), inject the runtime state or not, offer
the task and compression tools, and fail a summary (falling back to the previous one).

Each transcript is first put in the form the driver plays (`driver_form`): a tool the transcript
calls without declaring it (a provider's server tool: web search, code execution) is declared,
taking any object, since the agent's toolkit answers a call of an unknown tool with its own error
where the replay has the recorded result; and a tool whose schema the transcript's own calls
break (a call leaving out a required property) requires only what every call gives, since the
agent refuses such an input where the replay has the recorded result. Nothing else is adapted:
parallel calls, failed results, images, thinking, empty answers and the transcripts' other tool
schemas (titles and all) are played as imported, by both sides.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import jsonschema
import pytest

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script
from ctxlab.presets.agentscope.config import ContextConfig, InjectionConfig
from ctxlab.workloads.importers import read_any
from tests.parity.lab import run_lab
from tests.parity.samples import DATA, TRANSCRIPTS
from tests.parity.shapes import Guard, choice, choice_index
from tests.parity.spec import ParityConfig
from tests.parity.test_engine_parity import _plain, compare

NO_INJECTION = InjectionConfig(inject_runtime_state=False)


@dataclass(frozen=True, slots=True)
class Setting:
    """A parity configuration whose window is `share` of the transcript's largest request."""

    share: float
    config: ParityConfig


SETTINGS = (
    Setting(
        0.5,
        ParityConfig(
            context_size=1,
            context=ContextConfig(tool_result_limit=500),
            injection=NO_INJECTION,
            workspace="memory",
        ),
    ),
    Setting(
        0.35,
        ParityConfig(
            context_size=1,
            context=ContextConfig(
                trigger_ratio=0.6,
                reserve_ratio=0.2,
                context_buffer_ratio=0.1,
                tool_result_limit=200,
                max_image_num=0,
            ),
        ),
    ),
    Setting(
        0.7,
        ParityConfig(
            context_size=1,
            context=ContextConfig(max_image_num=1, compression_tool_enabled=True),
            task_tools=True,
            workspace="memory",
        ),
    ),
    Setting(
        0.25,
        ParityConfig(
            context_size=1,
            context=ContextConfig(reserve_ratio=0.3, tool_result_limit=1000),
            injection=NO_INJECTION,
            fail_on=frozenset({2}),
            fail_mode="raise",
        ),
    ),
)
SMALLEST_WINDOW = 200
AT_LEAST = 35
"""The eligible samples the lab must compress, at the least."""


def driver_form(script: Script) -> Script:
    """`script` with a schema for every tool it calls without declaring it, and the schemas its
    own calls break loosened (see the module docstring); the same object when neither is needed."""
    declared = {tool.name for tool in script.tools}
    missing = dict.fromkeys(c.tool for c in script.calls() if c.tool not in declared)
    added = tuple(
        ToolSchema.of(name, f"The {name} tool.", {"type": "object", "properties": {}}) for name in missing
    )
    tools = tuple(_accepting(tool, script) for tool in (*script.tools, *added))
    if not added and all(a is b for a, b in zip(tools, script.tools, strict=True)):
        return script
    return replace(script, tools=tools)


def _accepting(tool: ToolSchema, script: Script) -> ToolSchema:
    """`tool`, or, when the agent would refuse an input the transcript recorded a result for (its
    own call leaving out a property the schema requires, as a Letta agent's `send_message` may),
    the schema requiring only what every call gives, else taking any object."""
    schema = json.loads(tool.parameters)
    inputs = [_parsed(c.input) for c in script.calls() if c.tool == tool.name]
    if all(_valid(given, schema) for given in inputs):
        return tool
    required = schema.get("required") if isinstance(schema, dict) else None
    kept = [name for name in required or () if all(isinstance(g, dict) and name in g for g in inputs)]
    loosened = {**schema, "required": kept} if isinstance(schema, dict) else {}
    if not all(_valid(given, loosened) for given in inputs):
        loosened = {"type": "object", "properties": {}}
    return replace(tool, parameters=json.dumps(loosened))


def _parsed(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return {}  # left to the agent's own repair, which the lab's replay does not judge


def _valid(given: object, schema: object) -> bool:
    try:
        jsonschema.validate(given, schema)  # as the agent checks a call's input
    except jsonschema.ValidationError:
        return False
    return True


def largest_request(script: Script, setting: Setting) -> int:
    """The lab's largest request for `script` at the setting, in a window nothing fills."""
    unbounded = run_lab(script, replace(setting.config, context_size=10**9))
    return max(call.tokens.messages for call in unbounded.calls)


def case(transcript: str) -> tuple[Script, ParityConfig, int]:
    """The transcript's driver form, its setting with the window sized to it, and its largest request."""
    setting = choice(SETTINGS, transcript)
    script = driver_form(read_any(DATA / transcript).script)
    largest = largest_request(script, setting)
    window = max(SMALLEST_WINDOW, int(largest * setting.share))
    return script, replace(setting.config, context_size=window), largest


@pytest.mark.parametrize("transcript", TRANSCRIPTS)
def test_a_real_transcript_through_agentscope_matches_the_agent(transcript: str) -> None:
    script, config, largest = case(transcript)
    ours, theirs = compare(script, config)
    for index, (mine, real) in enumerate(zip(ours.calls, theirs.calls, strict=True)):
        assert _plain(mine.sent) == _plain(real.sent), f"call {index} is sent otherwise"
    assert theirs.compressions or largest <= SMALLEST_WINDOW  # the strategy acts


def test_agentscope_compresses_every_transcript_it_can_compress() -> None:
    """The lab (which the test above holds to the agent) compresses every sample whose largest
    request passes the smallest window, `AT_LEAST` of them, under each of the four settings on one
    at least: of the 78 samples, 66 are compressed, every one of the 59 eligible."""
    guard = Guard("agentscope")
    for transcript in TRANSCRIPTS:
        script, config, largest = case(transcript)
        compressed = bool(run_lab(script, config).compressions)
        setting = choice_index(len(SETTINGS), transcript)
        guard.note(transcript, setting, eligible=largest > SMALLEST_WINDOW, acts=compressed)
    guard.check(at_least=AT_LEAST, settings=range(len(SETTINGS)))
