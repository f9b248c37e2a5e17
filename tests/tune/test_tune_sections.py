"""Bad `tune:` sections fail at load time, each problem at its file, line, column and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.problems import ScenarioError
from ctxlab.scenarios.load import load_scenario
from tests.scenarios.files import write
from tests.tune.files import RANGES, TUNED

HEAD = """\
name: bad
workload:
  generator: {name: retrieval, params: {rounds: 4}}
model: {context_size: 4000}
strategies:
  - {preset: agentscope}
"""


def problems(tmp_path: Path, text: str) -> list[str]:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    return [str(p).removeprefix(f"{path}:") for p in raised.value.problems]


@pytest.mark.parametrize(
    ("tune", "expected"),
    [
        (
            "tune:\n  space:\n    - preset: agentscope\n"
            "      params: {context.trigger_rato: {low: 0.5, high: 0.9}}\n",
            "10:16: tune.space[0].params.context.trigger_rato: names no setting of preset 'agentscope': "
            "under context: 'trigger_rato' is not a field here (did you mean 'trigger_ratio'?)",
        ),
        (
            "tune:\n  space:\n    - preset: agentscope\n"
            "      params: {context.trigger_ratio: {low: 0.5, high: 0.95}}\n",
            "10:50: tune.space[0].params.context.trigger_ratio.high: preset 'agentscope' refuses it: "
            "0.95 is above the maximum 0.9",
        ),
        (
            "tune:\n  space:\n    - preset: agentscope\n"
            "      params: {context.trigger_ratio: {low: 0.5, high: 0.9}, context: {choices: [{}]}}\n",
            "10:62: tune.space[0].params.context: overlaps the setting 'context.trigger_ratio': one sets "
            "the other or a field inside it, so the values would overwrite each other; keep one of them",
        ),
        (
            "tune:\n  space:\n    - preset: agentscop\n",
            "9:7: tune.space[0].preset: unknown preset 'agentscop' (did you mean 'agentscope'?)",
        ),
        (
            "tune:\n  space:\n"
            "    - {preset: agentscope, params: {context.trigger_ratio: {low: 0.8, high: 0.6}}}\n",
            "9:71: tune.space[0].params.context.trigger_ratio.high: 0.6 is not above low 0.8",
        ),
        (
            "tune:\n  space:\n"
            "    - {preset: agentscope, params: {context.reserve_ratio: {low: 0, high: 0.3, log: true}}}\n",
            "9:61: tune.space[0].params.context.reserve_ratio.low: 0: a log range needs a low bound above 0",
        ),
        (
            "tune:\n  space:\n"
            "    - {preset: agentscope, params: {context.trigger_ratio: {low: 0.5, high: 0.9, step: 0.3}}}\n",
            "9:82: tune.space[0].params.context.trigger_ratio.step: 0.3 does not divide the range 0.5 to "
            "0.9, so Optuna would search only up to 0.8",
        ),
        (
            "tune:\n  space:\n"
            "    - {preset: agentscope, params: {context.trigger_ratio: "
            "{low: 0.5, high: 0.9, step: 1.0e-320}}}\n",
            "9:82: tune.space[0].params.context.trigger_ratio.step: 1e-320 cuts the range 0.5 to 0.9 into "
            "more than 10^15 steps, more than a decimal setting's search can tell apart; use a larger "
            "step, or no step",
        ),
        (
            "tune:\n  space:\n"
            "    - {preset: agentscope, params: {context.tool_result_limit: "
            "{low: 0, high: 7000000000000000007, step: 7}}}\n",
            "9:73: tune.space[0].params.context.tool_result_limit.high: 7000000000000000007 is beyond "
            "9,007,199,254,740,992 (2^53) either way, where Optuna, which samples whole numbers through "
            "floating point, cannot hold them",
        ),
        (
            "tune:\n  space:\n"
            "    - {preset: agentscope, params: {context.tool_result_limit: "
            "{low: 0, high: 2000000000000000, step: 1}}}\n",
            "9:97: tune.space[0].params.context.tool_result_limit.step: 1 cuts the range 0 to "
            "2000000000000000 into more than 10^15 steps, more than a whole-number setting's search",
        ),
        (
            "tune:\n  space:\n"
            "    - {preset: nonoka, params: {budget.max_tokens: {low: [4000], high: 9000}}}\n",
            "9:53: tune.space[0].params.budget.max_tokens.low: [4000] is not a number; use a number",
        ),
        (
            "tune:\n  space:\n"
            "    - {preset: nonoka, params: {budget.max_tokens: {low: 4000, high: 9000.0}}}\n",
            "9:33: tune.space[0].params.budget.max_tokens: a range with a decimal bound samples decimals "
            "such as 5666.666666666667, and preset 'nonoka' refuses it",
        ),
        (
            "tune:\n  space:\n    - {preset: nonoka, params: {budget.max_tokens: {low: 4000}}}\n",
            "9:33: tune.space[0].params.budget.max_tokens.high: is required for a range",
        ),
        (
            "tune:\n  space:\n    - {preset: nonoka, params: {budget.max_tokens: {choices: [1, 1]}}}\n",
            "9:53: tune.space[0].params.budget.max_tokens.choices: repeats a value",
        ),
        (
            "tune:\n  space:\n    - {preset: nonoka, params: {budget.max_tokens: {choices: [900, 900.]}}}\n",
            "9:53: tune.space[0].params.budget.max_tokens.choices: repeats a value (900.0 equals 900)",
        ),
        (
            "tune:\n  objectiv: cost\n  space: [{preset: none}]\n",
            "8:3: tune.objectiv: unknown key 'objectiv' (did you mean 'objective'?)",
        ),
        (
            "tune:\n  objective: latency\n  space: [{preset: none}]\n",
            "8:3: tune.objective: 'latency' is not allowed; use 'cost', 'total_input_tokens' or "
            "'peak_input_tokens'",
        ),
        (
            "tune:\n  constraints: {providers: [gemini]}\n  space: [{preset: none}]\n",
            "8:29: tune.constraints.providers[0]: 'gemini' is not allowed; use 'openai', 'anthropic' or "
            "'bedrock'",
        ),
        (
            "tune:\n  constraints: {retention: 0.9}\n  space: [{preset: none}]\n",
            "8:17: tune.constraints.retention: needs planted probes to measure",
        ),
        (
            "tune:\n  space: [{preset: none, name: [a]}]\n",
            "8:26: tune.space[0].name: ['a'] is invalid: Input should be a valid string",
        ),
        (
            "tune:\n  space: [{preset: none}, {preset: none}]\n",
            "8:27: tune.space[1].name: candidate 'none' is also tune.space[0]'s",
        ),
        (
            "tune:\n  space: [{preset: none, fixed: {workspace: disk}}]\n",
            "8:34: tune.space[0].fixed.workspace: preset 'none' refuses it",
        ),
        ("tune:\n  space: []\n", "8:3: tune.space: [] has too few items; at least 1 needed"),
        (
            "sweep: {model.context_size: [4000, 8000]}\ntune:\n  space: [{preset: none}]\n",
            "8:1: tune: cannot be combined with a sweep",
        ),
    ],
)
def test_a_bad_tune_section_fails_at_load_with_its_location(tmp_path: Path, tune: str, expected: str) -> None:
    found = problems(tmp_path, HEAD + tune)
    assert any(p.startswith(expected) for p in found), found


def test_a_tune_section_cannot_be_swept(tmp_path: Path) -> None:
    text = HEAD + "sweep: {tune.trials: [2, 3]}\n"
    assert any(
        "'tune' describes the scenario itself and cannot be swept" in p for p in problems(tmp_path, text)
    )


def test_good_tune_sections_load_and_run_leaves_them_alone(tmp_path: Path) -> None:
    for text in (TUNED, RANGES):
        loaded = load_scenario(write(tmp_path, text))
        assert loaded.scenario.tune is not None
        assert "tune" in loaded.scenario.model_dump(mode="json")
    plain = load_scenario(write(tmp_path, HEAD))
    assert "tune" not in plain.scenario.model_dump(mode="json")
