"""One wording for every input problem: the same mistake reads the same in whichever layer finds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.problems import (
    HINTS,
    InputError,
    Position,
    Problem,
    ScenarioError,
    WorkloadError,
    as_written,
    explain,
    unknown_key,
)
from ctxlab.scenarios.load import load_scenario
from ctxlab.workloads.format import script_problems
from ctxlab.workloads.generators import generate
from tests.scenarios.files import write

SCENARIO = """\
name: words
workload:
  script:
    tools: [{{name: retrieve, {tool_key}: x}}]
    turns: [{{user: {{bytes: {size}}}}}]
model:
  context_size: {window}
strategies:
  - preset: agentscope
    {strategy_key}: x
"""


def messages(tmp_path: Path, **fields: str) -> dict[str, str]:
    """The loader's message for each field of the scenario above, by field path."""
    values = {"tool_key": "description", "size": "10", "window": "4000", "strategy_key": "texts"}
    path = write(tmp_path, SCENARIO.format(**{**values, **fields}))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    return {p.field: p.message for p in caught.value.problems}


def test_the_same_wrong_key_reads_the_same_in_a_strategy_and_a_script(tmp_path: Path) -> None:
    found = messages(tmp_path, tool_key="nmae", strategy_key="nmae")
    in_script = found["workload.script.tools[0].nmae"]
    in_strategy = found["strategies[0].nmae"]
    words = "unknown key 'nmae' (did you mean 'name'?); remove it or fix its spelling; allowed here: "
    assert in_script.startswith(words) and in_strategy.startswith(words)
    assert in_script == unknown_key("nmae", ["name", "description", "parameters"])
    assert "preset" in in_strategy.removeprefix(words).split(", ")


def test_the_same_wrong_type_gets_the_same_hint_in_a_script_and_the_model(tmp_path: Path) -> None:
    found = messages(tmp_path, size="lots", window="lots")
    in_script = found["workload.script.turns[0].user.bytes"]
    in_model = found["model.context_size"]
    assert in_script == in_model
    assert in_model.startswith("'lots' is invalid: Input should be a valid integer")
    assert in_model.endswith(f"; {HINTS['int_parsing']}")


def test_a_script_reads_the_same_alone_and_inside_a_scenario(tmp_path: Path) -> None:
    found = messages(tmp_path, size="-3")
    (alone,) = script_problems({"turns": [{"user": {"bytes": -3}}]})
    assert (
        alone.message
        == found["workload.script.turns[0].user.bytes"]
        == "-3 is below the minimum 0; use 0 or more"
    )


def test_a_generator_parameter_reads_like_a_strategy_parameter(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError) as caught:
        generate("retrieval", {"rounds": 0})
    (problem,) = caught.value.problems
    assert problem.message == "0 is below the minimum 1; use 1 or more"
    path = write(
        tmp_path,
        "name: b\nworkload: {generator: {name: retrieval}}\nmodel: {context_size: 4000}\n"
        "strategies:\n  - {preset: agentscope, context: {trigger_ratio: 1.0}}\n",
    )
    with pytest.raises(ScenarioError) as located:
        load_scenario(path)
    (bound,) = located.value.problems
    assert bound.message == "1.0 is above the maximum 0.9; use 0.9 or less"


def test_a_problem_reads_with_its_position_once_located() -> None:
    problem = Problem(loc=("turns", 0, "user"), message="expected a string")
    assert str(problem) == "turns[0].user: expected a string"
    at = Problem(loc=problem.loc, message=problem.message, at=Position("s.yaml", 3, 5))
    assert str(at) == "s.yaml:3:5: turns[0].user: expected a string"
    assert str(Problem(loc=(), message="is empty", at=Position("s.yaml"))) == "s.yaml:1:1: is empty"


def test_both_errors_are_input_errors_with_their_problems_one_per_line() -> None:
    problems = [Problem(loc=("a",), message="one"), Problem(loc=("b", 0), message="two")]
    for kind in (ScenarioError, WorkloadError):
        error = kind(problems, source="x.yaml")
        assert isinstance(error, InputError) and isinstance(error, ValueError)
        assert str(error) == "x.yaml: a: one\nx.yaml: b[0]: two"


def test_a_value_is_shown_as_written_in_yaml_not_as_python_prints_it() -> None:
    """null, true and false by their names, also inside lists and mappings; long values shortened."""
    error = {"type": "int_type", "loc": ("a",), "msg": "Input should be a valid integer", "input": None}
    assert explain(error).startswith("null is invalid")  # type: ignore[arg-type]
    nested = {**error, "input": {"keep": [True, None]}}
    assert explain(nested).startswith("{'keep': [true, null]} is invalid")  # type: ignore[arg-type]
    long = {**error, "input": list(range(100))}
    assert explain(long).startswith("[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ...] is invalid")  # type: ignore[arg-type]
    assert as_written([[[[[1]]]]]) == "[[[[...]]]]"
