"""A `tune:` section's space as Optuna parameters, and the scenario document of one trial.

Invariants:
- A candidate's Optuna parameters are named `<candidate>.<path>`; with more than one candidate a
  categorical `candidate` parameter picks one first, so each candidate's parameters are its own.
- Choices Optuna cannot hold (lists, mappings) are offered as their canonical JSON text and
  turned back into the value; every other choice is offered as written. A sampled range value is
  a plain Python `int` or `float`, whatever type Optuna returns.
- A trial's document is the scenario file's own with one strategy, the candidate, in place of
  its strategies, and without `sweep` and `tune`: the file's workload, model, prices and seed.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.experiments.grid import canonical_json
from ctxlab.scenarios.schema import Scenario, entry_model
from ctxlab.scenarios.tune import ParamSpec, SpaceEntry, candidate_entry

CANDIDATE = "candidate"
"""The Optuna parameter that picks the candidate when the space has several."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One setting to try: a candidate of the space and a value for each of its parameters."""

    label: str
    preset: str
    values: tuple[tuple[str, Any], ...]

    def params(self) -> dict[str, Any]:
        """The values by Optuna parameter name (`<candidate>.<path>`)."""
        return {f"{self.label}.{path}": value for path, value in self.values}

    def key(self) -> str:
        """Equal for equal settings."""
        return canonical_json([self.label, [list(pair) for pair in self.values]])


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def offered(spec: ParamSpec) -> list[Any]:
    """The choices as Optuna is offered them (canonical JSON for lists and mappings)."""
    return [c if _scalar(c) else canonical_json(c) for c in spec.choices or ()]


def _suggest(trial: Any, name: str, spec: ParamSpec) -> Any:
    if spec.choices is not None:
        picked = trial.suggest_categorical(name, offered(spec))
        return spec.choices[offered(spec).index(picked)]
    assert spec.low is not None and spec.high is not None
    if spec.integer:
        step = int(spec.step) if spec.step is not None else 1
        return int(trial.suggest_int(name, int(spec.low), int(spec.high), step=step, log=spec.log))
    # Optuna's TPE answers a numpy float for some ranges (a very narrow one), which no scenario
    # file can hold: best.yaml could not be written
    return float(trial.suggest_float(name, float(spec.low), float(spec.high), step=spec.step, log=spec.log))


def suggest(trial: Any, space: Sequence[SpaceEntry]) -> Candidate:
    """The candidate an Optuna trial (from `study.ask()`) picks."""
    labels = [entry.label for entry in space]
    label = trial.suggest_categorical(CANDIDATE, labels) if len(labels) > 1 else labels[0]
    entry = space[labels.index(label)]
    values = tuple((path, _suggest(trial, f"{label}.{path}", spec)) for path, spec in entry.params.items())
    return Candidate(label=label, preset=entry.preset, values=values)


def space_size(space: Sequence[SpaceEntry]) -> int | None:
    """How many distinct settings the space holds (None: a float range without a step)."""
    total = 0
    for entry in space:
        size = 1
        for spec in entry.params.values():
            count = _count(spec)
            if count is None:
                return None
            size *= count
        total += size
    return total


def _count(spec: ParamSpec) -> int | None:
    if spec.choices is not None:
        return len(spec.choices)
    assert spec.low is not None and spec.high is not None
    if spec.log and not spec.integer:
        return None
    if spec.integer and spec.log:
        return int(spec.high) - int(spec.low) + 1
    if spec.step is None:
        return int(spec.high) - int(spec.low) + 1 if spec.integer else None
    return math.floor((spec.high - spec.low) / spec.step + 1e-9) + 1


def strategy_entry(entry: SpaceEntry, candidate: Candidate) -> dict[str, Any]:
    """The scenario entry of a candidate: its name and preset, the fixed settings, the values."""
    return candidate_entry(entry, candidate.label, candidate.values, Scenario, entry_model)


def trial_document(base: dict[str, Any], space: Sequence[SpaceEntry], candidate: Candidate) -> dict[str, Any]:
    """The scenario document that runs `candidate` on the file's workload and model."""
    entry = next(e for e in space if e.label == candidate.label)
    own = [strategy_entry(entry, candidate)]
    return {
        key: own if key == "strategies" else copy.deepcopy(value)
        for key, value in base.items()
        if key not in ("sweep", "tune")
    }
