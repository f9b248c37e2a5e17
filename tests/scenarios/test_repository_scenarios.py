"""Every scenario file in the repository loads, is named after its file, reads only files inside
the repository, explains itself, and meets the JSON Schema editors use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ctxlab.experiments.grid import expand
from ctxlab.scenarios.load import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.yaml"))
NAMES = [str(p.relative_to(ROOT / "scenarios")) for p in SCENARIOS]
WARNED = {
    "replayed-transcript.yaml": (
        "warning: line 12 (message 11): result for 'call_4' answers no unanswered call; dropped",
    )
}
"""The warnings a shipped file shows on purpose: its transcript logs one result twice."""


def test_there_are_scenarios_and_extended_ones() -> None:
    assert len([p for p in SCENARIOS if p.parent.name == "scenarios"]) >= 10
    assert any(p.parent.name == "extended" for p in SCENARIOS)


@pytest.mark.parametrize("path", SCENARIOS, ids=NAMES)
def test_scenario_file_loads_and_is_self_contained(path: Path) -> None:
    loaded = load_scenario(path)
    assert loaded.name == path.stem
    assert loaded.scenario.description
    assert tuple(w.message for w in loaded.warnings) == WARNED.get(path.name, ())
    for written in loaded.files:
        assert (path.parent / written).resolve().is_relative_to(ROOT), written
    assert expand(loaded)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=")
    assert sum(line.lstrip().startswith("#") for line in text.splitlines()) >= 3  # it explains its choices


@pytest.mark.parametrize("path", SCENARIOS, ids=NAMES)
def test_scenario_file_meets_the_json_schema(path: Path) -> None:
    import jsonschema

    schema = json.loads((ROOT / "scenarios" / "scenario.schema.json").read_text(encoding="utf-8"))
    errors = list(
        jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(path.read_text(encoding="utf-8")))
    )
    assert errors == []


def test_main_scenarios_stay_small_enough_for_make_experiments() -> None:
    runs = sum(len(expand(load_scenario(p))) for p in SCENARIOS if p.parent.name == "scenarios")
    assert runs <= 144  # with the heaviest runs, make experiments stays at a few minutes on 2 cores


MAIN = [p for p in SCENARIOS if p.parent.name == "scenarios"]


@pytest.mark.parametrize("path", MAIN, ids=[p.stem for p in MAIN])
def test_scenario_runs_are_deterministic(path: Path) -> None:
    from ctxlab.experiments.execute import execute

    first = expand(load_scenario(path))[0]
    once, again = execute(first), execute(first)
    assert once.status == again.status == "ok", once.error
    assert once.calls == again.calls
    assert once.measures == again.measures
