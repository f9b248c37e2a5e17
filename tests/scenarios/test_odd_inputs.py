"""Odd scenario files found by sweeping the shipped scenarios with odd values and structures: each
exits 2 through the CLI with a located message, no traceback, and writes nothing
(the corpus of `test_bad_inputs` continued)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.scenarios.files import TINY, write
from tests.scenarios.test_bad_inputs import refused_at_load

GENERATOR = "generator: {name: retrieval, params: {rounds: 4}}"


def _text(text: str) -> Callable[[Path], Path]:
    return lambda folder: write(folder, text)


def _tiny(old: str, new: str) -> Callable[[Path], Path]:
    assert old in TINY
    return _text(TINY.replace(old, new))


ODD: dict[str, tuple[Callable[[Path], Path], str]] = {
    "a control character in the file": (
        _tiny("Four", "Fo\x07ur"),
        ":2:16: invalid YAML: U+0007 is a control character or a non-character, which YAML does not "
        'allow; delete it, or write it as an escape inside a double-quoted string ("\\x07" for U+0007)',
    ),
    "a DEL character after a line of CJK text, in a file with CR line breaks": (
        _text(TINY.replace("\n", "\r").replace("Four", "名字\r\x7f")),
        ":3:1: invalid YAML: U+007F is a control character",
    ),
    "a line separator inside a comment": (
        _tiny("Four", "Four  # one\u2028two: three"),
        ":2:25: invalid YAML: U+2028 (LINE SEPARATOR) is a line break to YAML but not to editors; "
        'delete it, or write it as an escape inside a double-quoted string ("\\u2028")',
    ),
    "a next-line character in a quoted text": (
        _tiny("Four", '"Fo\x85ur"'),
        ":2:17: invalid YAML: U+0085 (NEXT LINE) is a line break to YAML but not to editors",
    ),
    "a control character after a paragraph separator, told at the line an editor shows": (
        _tiny("Four", "Four\u2029\x07"),
        ":2:19: invalid YAML: U+0007 is a control character",
    ),
    "a clock timezone that names a folder of zones": (
        _tiny("workload:\n", "workload:\n  clock: {timezone: America}\n"),
        ":4:11: workload.clock.timezone: unknown timezone 'America' (did you mean 'America/",
    ),
    "a clock timezone longer than a file name": (
        _tiny("workload:\n", "workload:\n  clock: {timezone: " + "a" * 300 + "}\n"),
        ":4:11: workload.clock.timezone: unknown timezone '" + "a" * 60 + "...'",
    ),
    "a turn's timezone that names a folder of zones": (
        _tiny(GENERATOR, "script: {turns: [{user: hi, timezone: Europe}]}"),
        ":4:31: workload.script.turns[0].timezone: unknown timezone 'Europe'",
    ),
    "an AgentScope injection timezone that names a folder of zones": (
        _tiny("  - preset: agentscope\n", "  - preset: agentscope\n    injection: {timezone: Asia}\n"),
        ":9:17: strategies[0].injection.timezone: unknown timezone 'Asia'",
    ),
    "a transcript path longer than a file name may be": (
        _tiny(GENERATOR, "trace: {path: " + "t" * 5000 + "}"),
        "characters) cannot be looked up: ",
    ),
    "a tools path longer than a file name may be": (
        _tiny(GENERATOR, "trace: {path: scenario.yaml, tools: " + "t" * 5000 + "}"),
        "characters) cannot be looked up: ",
    ),
    "a transcript path in the home folder": (
        _tiny(GENERATOR, "trace: {path: ~/session.jsonl}"),
        "session.jsonl'; give the path of an existing file, relative to the scenario's folder or "
        "absolute (~ is not expanded: write the path from the scenario's folder)",
    ),
    "a need of a probe, beside a probe key with a line break": (
        _text(
            TINY.replace(
                "workload:\n", 'workload:\n  probes: [{kind: fact, key: "a\\nb", value: v, where: turn 0}]\n'
            ).replace("4000\n", "4000\n  agent: {kind: policy, needs: [{key: c, turn: 0}]}\n")
        ),
        "model.agent.needs[0].key: names no planted probe; plant it in workload.probes (planted: 'a\\nb')",
    ),
    "a sweep of a strategy beside a strategy name with a line break": (
        _text(
            TINY.replace("  - preset: agentscope", '  - {preset: agentscope, name: "a\\nb"}')
            + "sweep:\n  strategies.b.summary_breaker: [1, 2]\n"
        ),
        "no strategy is named 'b'; strategies are addressed by name ('a\\nb')",
    ),
    "a clock start written as a year": (
        _tiny("workload:\n", "workload:\n  clock: {start: 2026}\n"),
        ":4:11: workload.clock.start: 2026 is a number, not a date and time; write an ISO date and time "
        "such as 2026-01-01T09:00:00",
    ),
    "a clock start written as a quoted number": (
        _tiny("workload:\n", "workload:\n  clock: {start: '1767225600'}\n"),
        ":4:11: workload.clock.start: '1767225600' is a number, not a date and time",
    ),
    "a clock start written as yes": (
        _tiny("workload:\n", "workload:\n  clock: {start: yes}\n"),
        ":4:11: workload.clock.start: True is a yes/no value, not a date and time",
    ),
    "a top-level key YAML reads as yes": (
        _text(TINY + "yes: 1\n"),
        ":9:1: the key 'yes' reads as a yes/no value in YAML, and keys are names; quote it ('yes': ...)",
    ),
    "a tool argument named on": (
        _tiny(
            GENERATOR,
            "script: {turns: [{user: hi, rounds: [{calls: [{tool: t, input: {on: 1}, result: ok}]}]}]}",
        ),
        ":4:67: workload.script.turns[0].rounds[0].calls[0].input: the key 'on' reads as a yes/no value",
    ),
    "a generator parameter written as a number": (
        _tiny("params: {rounds: 4}", "params: {rounds: 4, 3: 4}"),
        ":4:52: workload.generator.params: the key '3' reads as a number in YAML",
    ),
    "a null key": (_text(TINY + "~: 1\n"), ":9:1: the key '~' reads as null in YAML"),
    "a list as a key": (
        _text(TINY + "? [a]\n: 1\n"),
        ":9:3: a mapping key must be a plain value; write a name, not a list or mapping",
    ),
    "a swept null a setting refuses": (
        _text(
            TINY.replace("- preset: agentscope", "- {name: a, preset: agentscope}")
            + "sweep:\n  strategies.a.context.compression_fallback_to_truncation: [true, null]\n"
        ),
        "with strategies.a.context.compression_fallback_to_truncation = null: strategies[0].context.",
    ),
    "a swept window written once as a number and once as text": (
        _text(TINY + "sweep:\n  model.context_size: [4000, '4000']\n"),
        ":10:30: sweep.model.context_size[1]: reads as the same setting as model.context_size[0] (4000), "
        "so its runs would repeat that value's and be dropped; list each setting once",
    ),
    "a swept section written once empty and once with its defaults": (
        _text(
            TINY.replace("- preset: agentscope", "- {name: a, preset: agentscope}")
            + "sweep:\n  strategies.a.context: [{}, {trigger_ratio: 0.8}]\n"
        ),
        ":10:30: sweep.strategies.a.context[1]: reads as the same setting as strategies.a.context[0] ({})",
    ),
    "a swept generator parameter written once as text": (
        _text(TINY + "sweep:\n  workload.generator.params.rounds: [2, '4', 4]\n"),
        ":10:46: sweep.workload.generator.params.rounds[2]: reads as the same setting as "
        "workload.generator.params.rounds[1] ('4')",
    ),
    "a strategy name written as 0": (
        _tiny("- preset: agentscope", "- {preset: agentscope, name: 0}"),
        ":8:26: strategies[0].name: 0 is invalid: Input should be a valid string",
    ),
    "a strategy name written as no": (
        _tiny("- preset: agentscope", "- {preset: agentscope, name: no}"),
        ":8:26: strategies[0].name: false is invalid: Input should be a valid string",
    ),
    "a tab that indents": (
        _tiny("  - preset: agentscope", "\t- preset: agentscope"),
        ":8:1: invalid YAML: found character '\\t' that cannot start any token; indent with spaces: "
        "YAML does not allow tabs there",
    ),
    "a second document": (
        _text(TINY + "---\n" + TINY),
        ":9:1: invalid YAML: but found another document; a scenario file holds one YAML document; "
        "remove the second '---' and what follows",
    ),
    "a bracket left open": (
        _tiny("params: {rounds: 4}}", "params: {rounds: 4}"),
        ":5:1: invalid YAML: expected ',' or '}', but got '<scalar>'; add the missing comma, or close the "
        "bracket opened before",
    ),
    "an empty probe key": (
        _tiny("workload:\n", "workload:\n  probes: [{kind: fact, key: '', value: v, where: turn 0}]\n"),
        ":4:25: workload.probes[0].key: '' is too short; write at least 1 character(s)",
    ),
    "a clock start that is no date": (
        _tiny("workload:\n", "workload:\n  clock: {start: now}\n"),
        ":4:11: workload.clock.start: 'now' is invalid: Input should be a valid datetime or date, input is "
        "too short; write an ISO date and time such as 2026-01-01T09:00:00",
    ),
    "a LangChain keep that is no list": (
        _tiny("- preset: agentscope", "- {preset: langchain-summary, keep: 20}"),
        ":8:33: strategies[0].keep: 20 is invalid: Input should be a tuple, list, dictionary or an instance "
        "of ContextSize; use a list ([...] or '- item' lines)",
    ),
    "a scenario that is a sentence": (
        _text("Run agentscope on retrieval.\n"),
        ":1:1: is a str, not a mapping of scenario keys; write `key: value` lines (name:, workload:, "
        "model:, strategies:) as the files in scenarios/ do",
    ),
}


@pytest.mark.parametrize("case", sorted(ODD))
@pytest.mark.parametrize("command", ["validate", "run"])
def test_odd_input_exits_2_located_and_writes_nothing(tmp_path: Path, case: str, command: str) -> None:
    make, needle = ODD[case]
    path, err = refused_at_load(tmp_path, make, command, needle)
    assert all(line.startswith(str(path) + ":") for line in err.splitlines()), err  # one line each


def test_a_lone_surrogate_in_a_set_value_is_a_located_problem() -> None:
    """An argument that is not UTF-8 reaches `parse_yaml` holding lone surrogates (Python decodes
    arguments with surrogateescape), which libyaml cannot encode."""
    from ctxlab.problems import ScenarioError
    from ctxlab.scenarios.located import parse_yaml

    with pytest.raises(ScenarioError) as refused:
        parse_yaml("caf\udce9", "--set x=caf\udce9")
    (problem,) = refused.value.problems
    assert str(problem).startswith("--set x=caf\udce9:1:4: invalid YAML: U+DCE9 is half of a UTF-16 pair")
