"""The script file format: the example scenario's script, size forms, conversion, and located errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import DataBlock, TextBlock, utf8_len
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.problems import WorkloadError
from ctxlab.workloads.format import ProbeSpec, ScriptSpec, parse_script, script_problems
from ctxlab.workloads.generators import generate
from ctxlab.workloads.probes import plant

FIXTURE = Path(__file__).parent / "fixtures" / "design_example.yaml"
ESTIMATOR = AgentScopeEstimator()


def example() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    return data


def test_the_design_example_converts_to_the_script_it_describes() -> None:
    script = parse_script(example()).to_script(0)
    assert utf8_len(script.system_prompt) == 26
    assert [t.name for t in script.tools] == ["retrieve", "flaky", "figure"]
    assert script.tools[0].parameters == '{"type": "object"}'
    (turn,) = script.turns
    assert [utf8_len(p.text) for p in turn.user if isinstance(p, TextBlock)] == [27]
    first, batch, tasks = turn.rounds
    (retrieve,) = first.calls
    assert retrieve.input == '{"query": "batch 1"}'
    assert retrieve.result is not None and utf8_len(retrieve.result[0].text) == 6012  # type: ignore[union-attr]
    assert utf8_len(retrieve.input) + 6012 == 6032  # ch08's bytes per round
    assert batch.text == "Checking three sources at once."
    a, flaky, figure = batch.calls
    assert a.result is not None and ESTIMATOR.text_tokens(a.result[0].text) == 120  # type: ignore[union-attr]
    assert flaky.error and flaky.result == (TextBlock(text="ConnectionError: timeout"),)
    assert figure.result is not None
    text, image = figure.result
    assert isinstance(text, TextBlock) and utf8_len(text.text) == 10
    assert isinstance(image, DataBlock) and image.media_type == "image/png" and image.kind == "url"
    (create,) = tasks.calls
    assert create.tool == "TaskCreate" and create.result is None
    assert create.input == '{"subject": "Summarise A", "description": "Write it"}'
    assert turn.final == "Done." and turn.advance_seconds == 0


def test_the_example_round_trips_through_dump_and_yaml() -> None:
    spec = parse_script(example())
    dumped = spec.model_dump(exclude_defaults=True)
    assert parse_script(dumped) == spec
    assert parse_script(yaml.safe_load(yaml.safe_dump(dumped, allow_unicode=True))) == spec
    assert parse_script(dumped).to_script(5) == spec.to_script(5)


def test_conversion_is_deterministic_per_seed() -> None:
    spec = parse_script(example())
    assert spec.to_script(0) == spec.to_script(0)
    assert spec.to_script(0) != spec.to_script(1)


def test_editing_one_item_leaves_the_others_unchanged() -> None:
    data = example()
    before = parse_script(data).to_script(0)
    data["turns"][0]["rounds"][1]["calls"][0]["result"] = {"tokens": 999}
    after = parse_script(data).to_script(0)
    assert after.system_prompt == before.system_prompt
    assert after.turns[0].user == before.turns[0].user
    assert after.turns[0].rounds[0] == before.turns[0].rounds[0]
    assert after.turns[0].rounds[1].calls[2] == before.turns[0].rounds[1].calls[2]


@given(st.integers(0, 5000), st.sampled_from(["bytes", "tokens"]), st.sampled_from(["en", "zh"]))
def test_size_forms_are_exact(n: int, unit: str, lang: str) -> None:
    spec = parse_script({"turns": [{"user": {unit: n, "lang": lang}}]})
    (part,) = spec.to_script(0).turns[0].user
    assert isinstance(part, TextBlock)
    if unit == "bytes":
        assert utf8_len(part.text) == n
    else:
        assert utf8_len(part.text) == 4 * n and ESTIMATOR.text_tokens(part.text) == n


def test_text_forms_everywhere() -> None:
    spec = parse_script(
        {
            "system_prompt": {"tokens": 10, "kind": "code"},
            "turns": [
                {
                    "user": {
                        "blocks": [
                            "hello",
                            {"text": " there"},
                            {"bytes": 5, "kind": "json"},
                            {"image": "image/webp"},
                        ]
                    },
                    "timezone": "Asia/Shanghai",
                    "advance_seconds": -30,
                    "rounds": [
                        {
                            "text": {"bytes": 12},
                            "thinking": {"tokens": 3, "lang": "zh"},
                            "advance_seconds": 60,
                            "calls": [{"tool": "TaskList"}],
                        }
                    ],
                    "final": {"bytes": 7, "kind": "log"},
                }
            ],
        }
    )
    script = spec.to_script(2)
    turn = script.turns[0]
    assert utf8_len(script.system_prompt) == 40
    assert [type(p).__name__ for p in turn.user] == ["TextBlock", "TextBlock", "TextBlock", "DataBlock"]
    assert turn.timezone == "Asia/Shanghai" and turn.advance_seconds == -30
    assert turn.rounds[0].text is not None and utf8_len(turn.rounds[0].text) == 12
    assert turn.rounds[0].thinking is not None and utf8_len(turn.rounds[0].thinking) == 12
    assert turn.rounds[0].advance_seconds == 60 and utf8_len(turn.final) == 7


def test_inputs_keep_their_order_and_unicode() -> None:
    spec = parse_script(
        {
            "turns": [
                {
                    "user": "u",
                    "rounds": [
                        {"calls": [{"tool": "t", "input": {"z": 1, "路径": "文件", "a": [1]}, "result": "r"}]}
                    ],
                }
            ]
        }
    )
    (call,) = spec.to_script(0).calls()
    assert call.input == json.dumps({"z": 1, "路径": "文件", "a": [1]}, ensure_ascii=False)
    assert call.input == '{"z": 1, "路径": "文件", "a": [1]}'


def test_a_generated_script_equals_the_same_script_written_out() -> None:
    """Generators name items by the same paths as files, so equal shapes give equal text."""
    written = {
        "system_prompt": {"bytes": 26},
        "tools": [
            {"name": "retrieve", "description": "Retrieve documents.", "parameters": {"type": "object"}}
        ],
        "turns": [
            {
                "user": {"bytes": 27},
                "rounds": [
                    {
                        "calls": [
                            {"tool": "retrieve", "input": {"query": f"batch {n}"}, "result": {"bytes": 6012}}
                        ]
                    }
                    for n in (1, 2, 3)
                ],
                "final": "Done.",
            }
        ],
    }
    assert parse_script(written).to_script(9) == generate("retrieval", {"rounds": 3}, seed=9).script


def problems(data: Any) -> list[str]:
    return [str(p) for p in script_problems(data)]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"turns": [{"user": {"byts": 3}}]}, "turns[0].user: expected a string, {text: ...}, {bytes: N}"),
        (
            {"turns": [{"user": {"bytes": -3}}]},
            "turns[0].user.bytes: -3 is below the minimum 0; use 0 or more",
        ),
        (
            {"turns": [{"user": {"bytes": "many"}}]},
            "turns[0].user.bytes: 'many' is invalid: Input should be a valid integer",
        ),
        ({"turns": [{"user": 5}]}, "turns[0].user: expected a string"),
        ({"turns": [{"user": "u", "final": 3}]}, "turns[0].final: expected a string"),
        (
            {"turns": [{"user": "u", "rounds": [{"calls": [{"tool": "x", "reslt": "r"}]}]}]},
            "turns[0].rounds[0].calls[0].reslt: unknown key 'reslt' (did you mean 'result'?)",
        ),
        (
            {"turns": [{"user": "u", "rounds": {"calls": []}}]},
            "turns[0].rounds: {'calls': []} is invalid: Input should be a valid list",
        ),
        (
            {"turns": [{"user": "u", "timezone": "Europe/Pariss"}]},
            "turns[0].timezone: unknown timezone 'Europe/Pariss' (did you mean 'Europe/Paris'?)",
        ),
        (
            {"turns": [{"user": {"blocks": [{"image": "png"}]}}]},
            "turns[0].user.blocks[0].image: 'png' is not a media type; write type/subtype",
        ),
        ({"turns": [{"user": {"blocks": [5]}}]}, "turns[0].user.blocks[0]: a block must be a string"),
        (
            {"turns": [{"user": {"tokens": 3, "lang": "zh", "kind": "code"}}]},
            "turns[0].user.kind: lang: zh comes only as prose",
        ),
        ({"turns": []}, "turns: [] has too few items; at least 1 needed"),
        ({}, "turns: is required but missing; add it"),
        (
            {"sytem_prompt": "s", "turns": [{"user": "u"}]},
            "sytem_prompt: unknown key 'sytem_prompt' (did you mean 'system_prompt'?)",
        ),
        (
            {"turns": [{"user": "u", "rounds": [{"calls": [{"tool": "x"}]}]}]},
            "turns[0].rounds[0].calls[0].result: call to 'x' has no result",
        ),
        (
            {"turns": [{"user": "u", "rounds": [{"calls": [{"tool": "x", "error": True}]}]}]},
            "turns[0].rounds[0].calls[0].error: error: true needs a result",
        ),
        (
            {"turns": [{"user": "u", "rounds": [{"text": "thinking aloud"}]}]},
            "turns[0].rounds[0].calls: a round without calls ends the reply",
        ),
        (
            {"turns": [{"user": "u", "advance_seconds": "soon"}]},
            "turns[0].advance_seconds: 'soon' is invalid: Input should be a valid number",
        ),
    ],
)
def test_errors_name_the_field_and_the_fix(data: Any, expected: str) -> None:
    found = problems(data)
    assert any(p.startswith(expected) for p in found), found


def test_cross_field_rules_name_the_offending_call() -> None:
    data = {
        "tools": [{"name": "retrieve"}, {"name": "retrieve"}],
        "turns": [
            {
                "user": "u",
                "rounds": [
                    {
                        "calls": [
                            {"tool": "retreive", "result": "r", "id": "c1"},
                            {"tool": "TaskList", "id": "c1"},
                        ]
                    }
                ],
            }
        ],
    }
    assert problems(data) == [
        "tools[1].name: tool 'retrieve' is declared twice; keep one",
        "turns[0].rounds[0].calls[0].tool: tool 'retreive' is neither declared under `tools` nor built-in "
        "(did you mean 'retrieve'?); declare it or fix the name",
        "turns[0].rounds[0].calls[1].id: call id 'c1' is used twice; ids must be unique in a script",
    ]


def test_undeclared_tools_are_fine_when_no_tools_are_declared() -> None:
    assert (
        problems({"turns": [{"user": "u", "rounds": [{"calls": [{"tool": "anything", "result": "r"}]}]}]})
        == []
    )


def test_parse_script_raises_one_located_problem_per_field() -> None:
    with pytest.raises(WorkloadError) as caught:
        parse_script(
            {"turns": [{"user": {"bytes": -1}}, {"user": "u", "extra": 1}]}, source="scenarios/x.yaml"
        )
    error = caught.value
    assert [p.field for p in error.problems] == ["turns[0].user.bytes", "turns[1].extra"]
    assert str(error).startswith("scenarios/x.yaml: turns[0].user.bytes: ")
    assert error.problems[1].loc == ("turns", 1, "extra")


def test_the_model_is_frozen() -> None:
    spec = parse_script(example())
    with pytest.raises(Exception, match="frozen"):
        spec.turns = []  # type: ignore[misc]
    assert isinstance(spec, ScriptSpec)


def test_the_design_examples_probe_lands_in_the_first_retrieval_result() -> None:
    spec = ProbeSpec.model_validate({"key": "db-port", "value": "5432", "where": "turn 0 round 0"})
    script = parse_script(example()).to_script(0)
    planted = plant(script, [spec.probe()]).script
    text = planted.turns[0].rounds[0].calls[0].result[0].text  # type: ignore[index,union-attr]
    assert "\ndb-port: 5432\n" in text and utf8_len(text) == 6012 + len("db-port: 5432") + 1
