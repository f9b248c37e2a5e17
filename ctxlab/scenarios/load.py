"""Loading a scenario file: the located document, the validated scenario, its sweep grid, warnings.

Invariants:
- Nothing is run or written: loading reads the scenario file and the files it names, and either
  returns a `LoadedScenario` or raises `ScenarioError` with every problem located at
  `file:line:col`, the field path, the value, the rule and the fix.
- Every grid point is validated as a whole scenario, so a combination that breaks a cross-field
  rule (a swept trigger below the reserve) fails at load time. Its problem is located at the
  sweep value that caused it, and says which combination it was.
- Points are in grid order (`ctxlab.scenarios.sweep.grid`); a scenario without a sweep has one.
- Warnings (legal but suspicious settings) are located the same way and never stop a load.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ctxlab.presets.entries import StrategyEntry
from ctxlab.presets.registry import build_strategy
from ctxlab.problems import Loc, Problem, ScenarioError, WorkloadError, as_written, describe_errors
from ctxlab.scenarios.located import Located, parse_yaml
from ctxlab.scenarios.rounds import RoundsCut, delegated_rounds, rounds_cut, scripted_rounds
from ctxlab.scenarios.schema import Scenario, entry_model
from ctxlab.scenarios.sources import SourceFiles
from ctxlab.scenarios.sweep import (
    Axis,
    description_at,
    fields_at,
    grid,
    resolve,
    run_setting_at,
    set_at,
    setting_at,
)
from ctxlab.scenarios.text import read_text
from ctxlab.scenarios.tune import candidate_entry, probe_settings, unrunnable_message
from ctxlab.scenarios.unused import unused_settings
from ctxlab.scenarios.validated import clean_loc, validated_scenario
from ctxlab.texts import load_texts
from ctxlab.workloads.format import BUILTIN_TOOLS, ScriptSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioPoint:
    """One grid point: the swept values it sets, its document, and the scenario it validates to."""

    index: int
    picks: tuple[int, ...]
    assignments: tuple[tuple[str, Any], ...]
    document: dict[str, Any]
    scenario: Scenario


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedScenario:
    """A validated scenario file and everything needed to run it. The files its workloads read
    are known by path and digest (`SourceFiles`): a run reads one again only when its process no
    longer keeps what was built from it, and refuses it if it changed."""

    source: str
    base_dir: Path
    scenario: Scenario
    document: dict[str, Any]
    axes: tuple[Axis, ...]
    points: tuple[ScenarioPoint, ...]
    warnings: tuple[Problem, ...]
    files: SourceFiles

    @property
    def name(self) -> str:
        """The scenario's name (its results folder)."""
        return self.scenario.name


def load_scenario(path: Path) -> LoadedScenario:
    """Read, parse and validate one scenario file and its whole grid.

    Raises:
        ScenarioError: every problem found, located.
    """
    located = parse_yaml(read_text(path), str(path))
    return load_located(located, path.parent)


def load_located(located: Located, base_dir: Path) -> LoadedScenario:
    """Validate a parsed document whose relative file paths start at `base_dir`."""
    if not isinstance(located.data, dict):
        kind = type(located.data).__name__
        message = (
            f"is a {kind}, not a mapping of scenario keys; write `key: value` lines (name:, workload:, "
            "model:, strategies:) as the files in scenarios/ do"
        )
        raise ScenarioError([located.locate(Problem(loc=(), message=message))])
    # shared by every validation below (each gets a copy of the dict, holding these same ones)
    context: dict[str, Any] = {"base_dir": base_dir, "files": {}, "digests": {}, "trace_warnings": {}}
    doc: dict[str, Any] = located.data
    scenario = validated_scenario(located, context)
    axes = tuple(
        Axis(key=key, loc=resolve(key, doc, Scenario, entry_model), values=tuple(values))
        for key, values in scenario.sweep.items()
    )
    points = _points(located, scenario, axes, context)
    _check_repeats(located, points, axes, context["digests"])
    files = SourceFiles.of_texts(base_dir, context["files"], context["digests"])
    rounds, delegated = _check_workloads(located, points, axes, files)
    _check_needs(located, points, axes, rounds)
    _check_texts(located, points, axes)
    warnings = _dedupe(w for point in points for w in _warnings(located, point, axes))
    warnings += _dedupe(
        w
        for point, scripted, sub in zip(points, rounds, delegated, strict=True)
        for w in _cut_warnings(located, point, axes, scripted, sub)
    )
    warnings += _trace_warnings(located, scenario, context["trace_warnings"])
    warnings += _undeclared_tools(located, scenario)
    warnings += unused_settings(located, scenario)
    loaded = LoadedScenario(
        source=located.file,
        base_dir=base_dir,
        scenario=scenario,
        document=doc,
        axes=axes,
        points=points,
        warnings=tuple(warnings),
        files=files.released(),
    )
    _check_tune(located, loaded)
    return loaded


def _check_tune(located: Located, loaded: LoadedScenario) -> None:
    """Refuse a `tune:` space entry none of whose probe settings can load (`probe_settings`):
    settings valid one by one that break a rule together would make every trial invalid."""
    tune = loaded.scenario.tune
    problems = []
    for index, entry in enumerate(tune.space if tune is not None else ()):
        reasons = [
            _trial_refusal(loaded, candidate_entry(entry, entry.label, values, Scenario, entry_model))
            for values in probe_settings(entry) or ()
        ]
        if reasons and all(reasons):
            section = ("fixed",) if entry.fixed else ("params",) if entry.params else ()
            message = unrunnable_message(entry, str(reasons[0]))
            problems.append(located.locate(Problem(loc=("tune", "space", index, *section), message=message)))
    if problems:
        raise ScenarioError(problems)


def _trial_refusal(loaded: LoadedScenario, strategy: dict[str, Any]) -> str | None:
    """Why the file's workload and model with `strategy` alone cannot load, or None."""
    doc = {k: v for k, v in loaded.document.items() if k not in ("sweep", "tune")}
    trial = Located(file=loaded.source, data={**doc, "strategies": [strategy]}, positions={})
    try:
        load_located(trial, loaded.base_dir)
    except ScenarioError as error:
        return "; ".join(f"{p.field.removeprefix('strategies[0].')}: {p.message}" for p in error.problems)
    return None


def _points(
    located: Located, scenario: Scenario, axes: tuple[Axis, ...], context: dict[str, Any]
) -> tuple[ScenarioPoint, ...]:
    if not axes:
        return (ScenarioPoint(index=0, picks=(), assignments=(), document=located.data, scenario=scenario),)
    points: list[ScenarioPoint] = []
    problems: list[Problem] = []
    for point in grid(axes):
        doc: dict[str, Any] = located.data
        assignments = tuple(
            (axis.key, axis.values[pick]) for axis, pick in zip(axes, point.picks, strict=True)
        )
        for axis, pick in zip(axes, point.picks, strict=True):
            doc = set_at(doc, axis.loc, axis.values[pick])
        try:
            validated = Scenario.model_validate(doc, context=context)
        except ValidationError as error:
            at_point = Located(file=located.file, data=doc, positions=located.positions)
            described = partial(description_at, doc=doc, root=Scenario, entry_model=entry_model)
            keys = partial(fields_at, doc=doc, root=Scenario, entry_model=entry_model)
            found = describe_errors(
                error, Scenario, clean=clean_loc, keys=keys, document=doc, describe=described
            )
            problems.extend(_relocate(at_point.locate(p), located, axes, point.picks) for p in found)
            continue
        points.append(
            ScenarioPoint(
                index=point.index,
                picks=point.picks,
                assignments=assignments,
                document=doc,
                scenario=validated,
            )
        )
    if problems:
        raise ScenarioError(_dedupe(problems))
    return tuple(points)


def _check_repeats(
    located: Located, points: tuple[ScenarioPoint, ...], axes: tuple[Axis, ...], digests: Mapping[str, str]
) -> None:
    """Refuse a sweep value that validates to the same setting as an earlier one of its axis
    (`[4000, "4000"]`, `[{}, {trigger_ratio: 0.8}]`, two paths to files of the same bytes):
    its runs would equal the earlier value's and be dropped as repeats, so the sweep would
    silently have fewer points than written. Each axis is compared along the points where
    every other axis takes its first value; a file counts by its sha256 (`digests`)."""
    by_picks = {point.picks: point for point in points}
    problems: list[Problem] = []
    for k, axis in enumerate(axes):
        seen: dict[str, int] = {}
        written: dict[int, str | None] = {}  # each value's setting as written, paths as paths
        for j in range(len(axis.values)):
            picks = tuple(j if a == k else 0 for a in range(len(axes)))
            scenario = by_picks[picks].scenario
            setting, written[j] = run_setting_at(scenario, axis.loc, digests), setting_at(scenario, axis.loc)
            if setting is None:
                continue
            if setting in seen:
                i = seen[setting]
                files = "" if written[i] == written[j] else " (a file counts by its bytes, not its path)"
                earlier = f"{axis.key}[{i}] ({as_written(axis.values[i])})"
                message = (
                    f"reads as the same setting as {earlier}{files}, so its runs would repeat that value's "
                    "and be dropped; list each setting once"
                )
                problems.append(located.locate(Problem(loc=("sweep", axis.key, j), message=message)))
            seen.setdefault(setting, j)
    if problems:
        raise ScenarioError(problems)


def _check_workloads(
    located: Located, points: tuple[ScenarioPoint, ...], axes: tuple[Axis, ...], files: SourceFiles
) -> tuple[list[list[int]], list[list[int]]]:
    """Build each distinct workload once, so a probe that cannot be planted fails at load time;
    each point's rounds per scripted turn (`scripted_rounds`), and per delegated script's turn
    (`delegated_rounds`).

    The workloads are built last to first: the process keeps the last few built
    (`workload.BUILT_KEPT`, within `workload.KEPT_CHARS`), and so keeps those of the grid's
    first points, which the runs, in grid order, take back instead of building them again.
    Problems are told in grid order."""
    keys = [f"{p.scenario.seed}:{p.scenario.workload.as_json}" for p in points]
    firsts = {key: point for key, point in reversed(list(zip(keys, points, strict=True)))}
    built: dict[str, tuple[list[int], list[int]]] = {}
    failed: dict[str, list[Problem]] = {}
    for key, point in firsts.items():
        try:
            workload = point.scenario.workload.build(point.scenario.seed, files)
            built[key] = (scripted_rounds(workload), delegated_rounds(workload))
        except WorkloadError as error:
            built[key] = ([], [])
            failed[key] = [_workload_problem(located, axes, point, found) for found in error.problems]
    if failed:
        in_order = dict.fromkeys(keys)
        raise ScenarioError(_dedupe(p for key in in_order if key in failed for p in failed[key]))
    return [built[key][0] for key in keys], [built[key][1] for key in keys]


def _workload_problem(
    located: Located, axes: tuple[Axis, ...], point: ScenarioPoint, found: Problem
) -> Problem:
    """A problem of a point's workload, located in the file (at the sweep value that made it)."""
    problem = located.locate(Problem(loc=("workload", *found.loc), message=found.message))
    return _relocate(problem, located, axes, point.picks) if axes else problem


def _check_texts(located: Located, points: tuple[ScenarioPoint, ...], axes: tuple[Axis, ...]) -> None:
    """Every strategy can be built with its texts: a text set read from another environment (the
    OpenHands SDK's, Google ADK's) needs that environment, and its absence is the file's problem
    at the entry's `texts`, not an error of the run."""
    problems: list[Problem] = []
    tried: dict[str, str | None] = {}
    for point in points:
        scenario = point.scenario
        delegate = scenario.delegate.strategy if scenario.delegate is not None else None
        entries: list[tuple[Loc, StrategyEntry]] = [
            (("strategies", i), e) for i, e in enumerate(scenario.strategies)
        ]
        entries += [(("delegate", "strategy"), delegate)] if delegate is not None else []
        for at, entry in entries:
            key = entry.model_dump_json()
            if key not in tried:
                tried[key] = _unbuildable(entry)
            if tried[key] is not None:
                problem = located.locate(Problem(loc=(*at, "texts"), message=str(tried[key])))
                problems.append(_relocate(problem, located, axes, point.picks) if axes else problem)
    if problems:
        raise ScenarioError(_dedupe(problems))


def _unbuildable(entry: StrategyEntry) -> str | None:
    """Why `entry`'s strategy cannot be built here (its texts cannot be read), or None."""
    try:
        build_strategy(entry, load_texts(entry.texts))
    except (OSError, LookupError) as error:
        return str(error)
    return None


def _check_needs(
    located: Located, points: tuple[ScenarioPoint, ...], axes: tuple[Axis, ...], rounds: list[list[int]]
) -> None:
    """A policy agent's need at a turn or round the workload does not have would never come due."""
    problems: list[Problem] = []
    for point, scripted in zip(points, rounds, strict=True):
        agent = point.scenario.model.agent
        if agent.kind != "policy":
            continue
        for i, need in enumerate(agent.needs):
            at: Loc = ("model", "agent", "needs", i)
            if need.turn >= len(scripted):
                field, message = (
                    "turn",
                    (
                        f"turn {need.turn} does not exist: the workload has {len(scripted)} turn(s), "
                        f"0 to {len(scripted) - 1}, so this need would never come due; name one of them"
                    ),
                )
            elif need.round > scripted[need.turn]:
                field, message = (
                    "round",
                    (
                        f"round {need.round} does not exist: turn {need.turn} scripts {scripted[need.turn]} "
                        f"round(s), so this need would never come due; use 0 to {scripted[need.turn] - 1}, "
                        f"or {scripted[need.turn]} for before the turn's final answer"
                    ),
                )
            else:
                continue
            problem = located.locate(Problem(loc=(*at, field), message=message))
            problems.append(_relocate(problem, located, axes, point.picks, ("workload",)))
    if problems:
        raise ScenarioError(_dedupe(problems))


CHOOSERS = ("kind", "name", "format")
"""Keys whose value chooses what the rest of their section means: a summarizer's `kind` its
fields, a generator's `name` its params, a trace's `format` how its file is read."""


def _related(problem: Loc, axis: Loc) -> bool:
    """Whether a swept value can cause a problem at `problem`: one holds the other, or the
    axis is a chooser (`CHOOSERS`) of the section the problem is in."""
    shorter = min(len(problem), len(axis))
    if problem[:shorter] == axis[:shorter]:
        return True
    return axis[-1] in CHOOSERS and problem[: len(axis) - 1] == axis[:-1]


def _relocate(
    problem: Problem,
    located: Located,
    axes: tuple[Axis, ...],
    picks: tuple[int, ...],
    shapes: Loc | None = None,
) -> Problem:
    """A grid point's problem, located at the (first) sweep value that caused it (a value under
    `shapes` counts as a cause too: the workload, for a need of its turns)."""
    related = [
        (axis, pick)
        for axis, pick in zip(axes, picks, strict=True)
        if _related(problem.loc, axis.loc) or (shapes is not None and axis.loc[: len(shapes)] == shapes)
    ]
    if not related:
        return problem
    axis, pick = related[0]
    combination = ", ".join(f"{a.key} = {as_written(a.values[p])}" for a, p in related)
    message = f"with {combination}: {problem.field}: {problem.message}"
    return located.locate(Problem(loc=("sweep", axis.key, pick), message=message))


def _warnings(located: Located, point: ScenarioPoint, axes: tuple[Axis, ...]) -> Iterator[Problem]:
    for i, entry in enumerate(point.scenario.strategies):
        for warning in entry.warnings():
            path: Loc = ("strategies", i, *warning.loc)
            problem = located.locate(Problem(loc=path, message=f"warning: {warning.message}"))
            yield _relocate(problem, located, axes, point.picks) if axes else problem


def _undeclared_tools(located: Located, scenario: Scenario) -> tuple[Problem, ...]:
    """A warning for each script (the workload's, a sub-agent's) that calls tools but declares
    none: every request after its first call holds a tool call with no tools offered, which the
    Anthropic and Bedrock rules count (`undeclared_tools`) in every run; the lab's own tools
    (`BUILTIN_TOOLS`) are left aside."""
    script = scenario.workload.script
    return tuple(_script_warnings(located, script, ("workload", "script"))) if script else ()


def _script_warnings(located: Located, script: ScriptSpec, loc: Loc) -> Iterator[Problem]:
    calls = list(script.calls())
    called = list(dict.fromkeys(call.tool for _, call in calls if call.tool not in BUILTIN_TOOLS))
    if called and not script.tools and not script.tool_groups:
        message = (
            f"warning: the script calls {', '.join(map(repr, called))} but declares no tools, so its "
            "requests hold tool calls with no tools offered, which the Anthropic and Bedrock APIs refuse "
            "(every run counts them in violations_anthropic); declare them: "
            "tools: [{name: ..., description: ...}]"
        )
        yield located.locate(Problem(loc=loc, message=message))
    for at, call in calls:
        if call.delegate is not None:
            yield from _script_warnings(located, call.delegate, (*loc, *at, "delegate"))


def with_every_round(loaded: LoadedScenario) -> tuple[LoadedScenario, list[tuple[str, RoundsCut]]]:
    """`loaded` with each strategy's `react.max_iters` raised where it would cut a scripted turn
    short and the document does not set one, so every scripted round plays (a replayed
    transcript); and each raise, as (the entry's preset, its cut). A step limit is left as set
    (the loader's warning names it).
    """
    doc = loaded.document
    needed: dict[int, RoundsCut] = {}
    for point in loaded.points:
        scenario = point.scenario
        rounds = scripted_rounds(scenario.workload.build(scenario.seed, loaded.files))
        for cut in rounds_cut(scenario.strategies, rounds):
            unset = "max_iters" not in (doc["strategies"][cut.strategy].get("react") or {})
            best = needed.get(cut.strategy)
            if unset and not cut.limit.steps and (best is None or cut.needed > best.needed):
                needed[cut.strategy] = cut
    if not needed:
        return loaded, []
    strategies = [
        {**entry, "react": {**(entry.get("react") or {}), "max_iters": needed[i].needed}}
        if i in needed
        else entry
        for i, entry in enumerate(doc["strategies"])
    ]
    raised = load_located(
        Located(file=loaded.source, data={**doc, "strategies": strategies}, positions={}), loaded.base_dir
    )
    return raised, [(doc["strategies"][i]["preset"], cut) for i, cut in sorted(needed.items())]


def _cut_warnings(
    located: Located,
    point: ScenarioPoint,
    axes: tuple[Axis, ...],
    rounds: Sequence[int],
    delegated: Sequence[int] = (),
) -> Iterator[Problem]:
    """The scripted rounds each strategy never plays; sub-agents' scripts under the limit they
    run with: `delegate.strategy`'s where it is set, else their parent's."""
    strategies = point.scenario.strategies
    delegate = point.scenario.delegate.strategy if point.scenario.delegate is not None else None
    checks: list[tuple[Sequence[StrategyEntry], Sequence[int], Loc, str]] = [(strategies, rounds, (), "")]
    if delegated:
        sub = ([delegate], ("delegate", "strategy")) if delegate is not None else (strategies, ())
        checks.append((sub[0], delegated, sub[1], "a sub-agent's script: "))
    for entries, scripted, at, scripts in checks:
        for cut in rounds_cut(entries, scripted):
            place: Loc = at or ("strategies", cut.strategy)
            path: Loc = (*place, *cut.limit.setting.split("."))
            message = f"warning: {cut.message(entries[cut.strategy].preset, scripts)}"
            problem = located.locate(Problem(loc=path, message=message))
            yield _relocate(problem, located, axes, point.picks) if axes else problem


def _trace_warnings(
    located: Located, scenario: Scenario, found: Mapping[str, Sequence[str]]
) -> list[Problem]:
    """What the transcript's importer skipped or repaired, at the trace's path."""
    trace = scenario.workload.trace
    if trace is None:
        return []
    loc: Loc = ("workload", "trace", "path")
    return [
        located.locate(Problem(loc=loc, message=f"warning: {note}")) for note in found.get(trace.path, ())
    ]


def _dedupe(problems: Iterator[Problem] | Sequence[Problem]) -> list[Problem]:
    out: list[Problem] = []
    for problem in problems:
        if problem not in out:
            out.append(problem)
    return out
