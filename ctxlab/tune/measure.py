"""A trial's run as its objective, its constraint values and its verdict; the best trial, the
Pareto front, and why nothing was feasible.

Invariants:
- A constraint value is met at 0 or below (Optuna's convention), in the order of `CONSTRAINTS`:
  protocol violations under the named providers, requests over the window beyond those allowed,
  a failed (or invalid) run, the retention floor less the run's retention.
- A trial is feasible when every constraint is met; `why` names every one it is not, with the
  measured value. Nothing is filled in: a measure the run did not take stays None.
- `retention` is the lowest of the retention shares measured (facts, rules, artifacts).
- Ties go to the earlier trial, so the best trial and the front are the same for the same trials.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxlab.experiments.execute import RunResult
from ctxlab.scenarios.tune import PROVIDERS, TuneSpec
from ctxlab.tune.space import Candidate

CONSTRAINTS = ("protocol", "over_window", "failed", "retention")
"""The constraints every trial is judged on, in the order of `TrialRecord.constraints`."""
RETENTION_KINDS = ("retention_facts", "retention_rules", "retention_artifacts")
MEASURED = ("cost", "total_input_tokens", "peak_input_tokens", "over_window_calls")


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialRecord:
    """One trial: the setting, what its run measured, and the verdict."""

    trial: int
    candidate: str
    preset: str
    params: dict[str, Any]
    status: str
    run_id: str | None = None
    error: str = ""
    objective: float | None = None
    measures: dict[str, Any] = field(default_factory=dict)
    retention: float | None = None
    constraints: tuple[float, ...] = ()
    why: tuple[str, ...] = ()

    @property
    def feasible(self) -> bool:
        """Every constraint met."""
        return not self.why

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (Optuna keeps it with the trial, so a resumed study needs no rerun)."""
        data = asdict(self)
        data["constraints"], data["why"] = list(self.constraints), list(self.why)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrialRecord:
        """The record `to_json` gave."""
        return cls(**{**data, "constraints": tuple(data["constraints"]), "why": tuple(data["why"])})


def lowest_retention(measures: Mapping[str, Any]) -> float | None:
    """The lowest retention share measured, or None when no probe was measured.

    >>> lowest_retention({"retention_facts": 1.0, "retention_rules": 0.5, "retention_artifacts": None})
    0.5
    """
    shares = [float(measures[k]) for k in RETENTION_KINDS if measures.get(k) is not None]
    return min(shares) if shares else None


def judge(
    tune: TuneSpec, measures: Mapping[str, Any], status: str, error: str
) -> tuple[tuple[float, ...], tuple[str, ...]]:
    """The constraint values (met at 0 or below) and the reasons a run is not feasible."""
    rules = tune.constraints
    violations = sum(int(measures.get(f"violations_{p}") or 0) for p in rules.providers)
    over = int(measures.get("over_window_calls") or 0)
    retention = lowest_retention(measures)
    failed = status != "ok"
    floor_gap = (
        0.0 if rules.retention is None else rules.retention - (retention if retention is not None else 0.0)
    )
    values = (float(violations), float(over - rules.over_window), 1.0 if failed else 0.0, floor_gap)
    why: list[str] = []
    if violations:
        by = ", ".join(f"{measures.get(f'violations_{p}') or 0} {p}" for p in rules.providers)
        why.append(f"protocol: {by} violations")
    if over > rules.over_window:
        why.append(f"over_window: {over} requests over the window (allowed {rules.over_window})")
    if failed:
        why.append(f"failed: {error}" if status == "failed" else f"invalid: {error}")
    if floor_gap > 0:
        shown = "not measured" if retention is None else f"{retention:.4g}"
        why.append(f"retention: {shown} below the floor {rules.retention}")
    return values, tuple(why)


def objective_of(tune: TuneSpec, measures: Mapping[str, Any]) -> float | None:
    """The objective's value for a run's measures (None: not measured)."""
    value = measures.get(tune.objective)
    return None if value is None else float(value)


def run_record(trial: int, candidate: Candidate, result: RunResult, tune: TuneSpec) -> TrialRecord:
    """The record of a trial that ran."""
    measures = {k: result.measures.get(k) for k in (*MEASURED, *(f"violations_{p}" for p in PROVIDERS))}
    constraints, why = judge(tune, result.measures, result.status, result.error)
    return TrialRecord(
        trial=trial,
        candidate=candidate.label,
        preset=candidate.preset,
        params=candidate.params(),
        status=result.status,
        run_id=result.run_id,
        error=result.error,
        objective=objective_of(tune, result.measures),
        measures=measures,
        retention=lowest_retention(result.measures),
        constraints=constraints,
        why=why,
    )


def invalid_record(trial: int, candidate: Candidate, message: str, tune: TuneSpec) -> TrialRecord:
    """The record of a trial whose setting breaks a rule across fields, so it never ran."""
    constraints, why = judge(tune, {}, "invalid", message)
    return TrialRecord(
        trial=trial,
        candidate=candidate.label,
        preset=candidate.preset,
        params=candidate.params(),
        status="invalid",
        error=message,
        constraints=constraints,
        why=why,
    )


def best(records: Sequence[TrialRecord]) -> TrialRecord | None:
    """The feasible trial with the lowest objective (the earliest among equals), or None."""
    feasible = [r for r in records if r.feasible and r.objective is not None]
    return min(feasible, key=lambda r: (r.objective, r.trial), default=None)


def pareto_front(records: Sequence[TrialRecord]) -> list[TrialRecord]:
    """Feasible trials no other feasible trial beats on both cost (lower) and retention (higher),
    by cost; one trial per run (the earliest)."""
    feasible = [r for r in records if r.feasible and r.measures.get("cost") is not None]
    unique = {r.run_id: r for r in sorted(feasible, key=lambda r: -r.trial)}
    ordered = sorted(unique.values(), key=lambda r: (r.measures["cost"], -(r.retention or 0.0), r.trial))
    front: list[TrialRecord] = []
    for record in ordered:
        if not front or (record.retention or 0.0) > (front[-1].retention or 0.0):
            front.append(record)
    return front


@dataclass(frozen=True, slots=True, kw_only=True)
class Infeasible:
    """Why no trial was feasible: the constraints no trial met, and the trial nearest to feasible."""

    unmet: tuple[str, ...]
    met_by: dict[str, int]
    nearest: TrialRecord


def infeasible(records: Sequence[TrialRecord]) -> Infeasible:
    """The report of a search with no feasible trial (`records` not empty)."""
    met_by = {name: sum(1 for r in records if r.constraints[i] <= 0) for i, name in enumerate(CONSTRAINTS)}
    unmet = tuple(name for name, count in met_by.items() if count == 0)
    nearest = min(
        records,
        key=lambda r: (len(r.why), math.fsum(max(v, 0.0) for v in r.constraints), r.trial),
    )
    return Infeasible(unmet=unmet, met_by=met_by, nearest=nearest)
