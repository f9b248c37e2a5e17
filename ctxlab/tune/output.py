"""The `<out>/<scenario>/tune/` folder, written into a temporary folder and put in place whole.

Files: `trials.csv` (every trial: setting, measures, constraint values, verdict), `pareto.csv`
(the feasible trials no other beats on both cost and retention), `baseline.csv` (the file's own
strategies, judged the same way), `importance.csv`, `best.yaml` (the best setting as a scenario
file that reruns to the same numbers), `summary.md`, `tune.json`, `figures/` (history, Pareto
front, parameter importance), `figures.json` (what they were drawn from: a rerun with the same
trials keeps them) and `study.journal` (Optuna's study, to resume or inspect).

Invariants:
- Every file but `study.journal` depends only on the trials: the same seed, batch size and
  trials give the same bytes. `study.journal` is Optuna's log (it holds times).
- Nothing is written for a search without a feasible trial: the caller reports it instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from ctxlab.experiments.columns import Column, ColumnType
from ctxlab.experiments.kept_figures import data_digest, keep_drawn, record_drawn
from ctxlab.experiments.replace import replace_folder
from ctxlab.experiments.tables import Table, infer_type, write_csv
from ctxlab.tune.measure import CONSTRAINTS, TrialRecord, best, pareto_front
from ctxlab.tune.search import Budget, Plan, SearchResult
from ctxlab.tune.space import Candidate, space_size, trial_document

JOURNAL = "study.journal"
HEAD: tuple[tuple[str, ColumnType, str], ...] = (
    ("trial", "int", "the trial's number, in the order trials were asked (0-based)"),
    ("candidate", "string", "the candidate of the space (its name, or its preset's)"),
    ("preset", "string", "the candidate's preset"),
)
MEASURES: tuple[tuple[str, ColumnType, str], ...] = (
    ("objective", "float", "the value minimised (empty: the run measured nothing)"),
    ("cost", "float", "cost with prompt caching, in the scenario's price units"),
    ("total_input_tokens", "int", "input tokens over every call"),
    ("peak_input_tokens", "int", "the largest request"),
    ("retention", "float", "the lowest retention share of the planted probes (empty: none planted)"),
    ("violations_openai", "int", "requests' OpenAI tool-call rule violations"),
    ("violations_anthropic", "int", "requests' Anthropic tool-call rule violations"),
    ("violations_bedrock", "int", "requests' Bedrock Converse rule violations"),
    ("over_window_calls", "int", "requests over the window"),
    *(
        (f"constraint.{name}", "float", f"the {name} constraint's value (met at 0 or below)")
        for name in CONSTRAINTS
    ),
    ("status", "string", "ok, failed (the run raised) or invalid (the setting breaks a rule)"),
    ("feasible", "bool", "every constraint met"),
    ("why", "string", "the constraints not met, with the measured values"),
    ("run_id", "string", "the run's id (`<candidate>-<config_hash>`), as `ctxlab run` names it"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """What the search found, as the folder holds it."""

    plan: Plan
    budget: Budget
    result: SearchResult
    baseline: tuple[TrialRecord, ...]
    study: str


def param_names(plan: Plan) -> list[str]:
    """Every Optuna parameter of the space, in the file's order."""
    return [f"{entry.label}.{path}" for entry in plan.tune.space for path in entry.params]


def trials_table(records: Sequence[TrialRecord], names: Sequence[str]) -> Table:
    """One row per trial."""
    params = tuple(
        Column(
            name=f"param.{name}",
            type=infer_type([r.params.get(name) for r in records]),
            meaning=f"the trial's `{name}`",
        )
        for name in names
    )
    columns = (*(Column(name=n, type=t, meaning=m) for n, t, m in HEAD), *params)
    columns += tuple(Column(name=n, type=t, meaning=m) for n, t, m in MEASURES)
    return Table(columns=columns, rows=tuple(_row(r) for r in records))


def _row(record: TrialRecord) -> dict[str, Any]:
    row: dict[str, Any] = {"trial": record.trial, "candidate": record.candidate, "preset": record.preset}
    row.update({f"param.{k}": v for k, v in record.params.items()})
    row.update(record.measures)
    row.update({f"constraint.{n}": v for n, v in zip(CONSTRAINTS, record.constraints, strict=True)})
    row.update(
        objective=record.objective,
        retention=record.retention,
        status=record.status,
        feasible=record.feasible,
        why="; ".join(record.why) or None,
        run_id=record.run_id,
    )
    return row


def candidate_of(plan: Plan, record: TrialRecord) -> Candidate:
    """The setting a record was run with."""
    entry = next(e for e in plan.tune.space if e.label == record.candidate)
    values = tuple((path, record.params[f"{entry.label}.{path}"]) for path in entry.params)
    return Candidate(label=entry.label, preset=entry.preset, values=values)


def best_document(plan: Plan, record: TrialRecord, folder: Path) -> dict[str, Any]:
    """The scenario file of the best setting. A relative transcript path is made relative to
    `folder` (the numbers rerun the same; the run id, which holds the path, differs); an absolute
    one (`--trace`) is kept, so the rerun has the trial's run id too."""
    found = trial_document(plan.document, plan.tune.space, candidate_of(plan, record))
    doc = {
        "name": f"{plan.loaded.name}-tuned",
        "description": f"The best setting ctxlab tune found for {plan.loaded.name} (trial {record.trial}).",
        **{k: v for k, v in found.items() if k not in ("name", "description")},
    }
    trace = doc.get("workload", {}).get("trace")
    if isinstance(trace, dict):
        for key in ("path", "tools"):
            if trace.get(key) and not Path(str(trace[key])).is_absolute():
                target = (plan.base_dir / str(trace[key])).resolve()
                trace[key] = os.path.relpath(target, folder.resolve())
    return doc


def best_yaml(plan: Plan, record: TrialRecord, folder: Path) -> str:
    """`best.yaml`: a comment saying what it is, then the scenario."""
    tune = plan.tune
    objective = f"{tune.objective} {record.objective:.6g}" if record.objective is not None else tune.objective
    head = [
        f"# The best feasible setting `ctxlab tune` found for {plan.loaded.source}:",
        f"# trial {record.trial}, {record.candidate} ({record.preset}), {objective}.",
        "# Run it with `ctxlab run best.yaml`: it reruns to the same numbers (trials.csv, that trial's row).",
    ]
    body = yaml.safe_dump(best_document(plan, record, folder), sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(head) + "\n" + body


def write_report(
    out: Path, report: Report, journal: Path, pool: Executor | None = None, *, redraw: bool = False
) -> Callable[[], Path]:
    """Start writing `<out>/<scenario>/tune/` (the journal moved into it); returns what completes
    it, putting the folder in place whole and returning its path.

    With `pool`, a worker draws the figures (most of the work) until the folder is completed, so
    the caller can search the next file meanwhile; the bytes do not depend on which process drew.
    Figures drawn from the same data in the folder this one replaces are kept, unless `redraw`
    (`experiments.kept_figures`: `figures.json` records what they were drawn from).
    """
    name = report.plan.loaded.name
    final = out / name / "tune"
    temporary = out / name / f".tune.tmp-{os.getpid()}"
    made = not temporary.parent.exists()  # the scenario's folder, made here unless a run made it
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    try:
        front = _fill(temporary, report, final)
        shutil.copyfile(journal, temporary / JOURNAL)
        job = _figure_job(temporary / "figures", report, front)
        inputs = figure_inputs(job)
        kept = not redraw and keep_drawn(final, temporary, inputs)
        drawing = pool.submit(draw_report_figures, job) if pool is not None and not kept else None
        if drawing is None and not kept:
            draw_report_figures(job)
    except BaseException:
        _discard(temporary, made)
        raise

    def complete() -> Path:
        try:
            if drawing is not None:
                drawing.result()
            if not kept:
                record_drawn(temporary, inputs)
            replace_folder(temporary, final)
        except BaseException:
            _discard(temporary, made)
            raise
        journal.unlink()
        return final

    return complete


def _discard(temporary: Path, made: bool) -> None:
    """Remove an unfinished folder, and the scenario's folder holding it when this search made it
    and nothing else is in it (an interruption leaves no empty `<out>/<scenario>/`)."""
    shutil.rmtree(temporary, ignore_errors=True)
    if made:
        with contextlib.suppress(OSError):  # something else was put there meanwhile
            temporary.parent.rmdir()


def _fill(folder: Path, report: Report, final: Path) -> Sequence[TrialRecord]:
    """Every file but the figures and the journal; returns the Pareto front."""
    plan, records = report.plan, report.result.records
    names = param_names(plan)
    top = best(records)
    assert top is not None, "a report is written only when a trial is feasible"
    front = pareto_front(records)
    tables = {
        "trials": trials_table(records, names),
        "pareto": trials_table(front, names),
        "baseline": trials_table(report.baseline, []),
    }
    for stem, table in tables.items():
        write_csv(table, folder / f"{stem}.csv")
    importance = Table(
        columns=(
            Column(name="param", type="string", meaning="an Optuna parameter of the space"),
            Column(
                name="importance",
                type="float",
                meaning="how much it matters for the best tenth of feasible objective values (PED-ANOVA)",
            ),
        ),
        rows=tuple({"param": k, "importance": v} for k, v in report.result.importance.items()),
    )
    write_csv(importance, folder / "importance.csv")
    (folder / "best.yaml").write_text(best_yaml(plan, top, final), encoding="utf-8")
    summary = _summary(report, top, front)
    (folder / "tune.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (folder / "summary.md").write_text(summary_markdown(report, top, front), encoding="utf-8")
    return front


def _summary(report: Report, top: TrialRecord, front: Sequence[TrialRecord]) -> dict[str, Any]:
    plan, result = report.plan, report.result
    return {
        "scenario": plan.loaded.name,
        "source": plan.loaded.source,
        "objective": plan.tune.objective,
        "constraints": plan.tune.constraints.model_dump(mode="json"),
        "seed": plan.tune.seed,
        "batch": report.budget.batch_size,
        "trial_budget": report.budget.trials,
        "trials": len(result.records),
        "runs": result.runs,
        "space_size": space_size(plan.tune.space),
        "stopped": result.stopped,
        "study": report.study,
        "feasible_trials": sum(1 for r in result.records if r.feasible),
        "best": top.to_json(),
        "pareto": [r.trial for r in front],
        "baseline": [r.to_json() for r in report.baseline],
        "importance": report.result.importance,
    }


def stop_note(result: SearchResult, budget: Budget) -> str:
    """Why the search stopped, in words (a timeout's note says the trials depend on the machine)."""
    count = len(result.records)
    if result.stopped == "timeout":
        return (
            f"--timeout cut the search after {count} of {budget.trials} trials: how many trials fit depends "
            f"on this machine's speed; `--trials {count}` reproduces these results exactly"
        )
    if result.stopped == "exhausted":
        return f"every setting of the space was tried, after {count} of {budget.trials} trials"
    return f"{count} trials, as budgeted"


def _value(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def summary_markdown(report: Report, top: TrialRecord, front: Sequence[TrialRecord]) -> str:
    """`summary.md`: the best setting against the file's own strategies, the front, the stop."""
    plan, result = report.plan, report.result
    objective = plan.tune.objective
    lines = [
        f"# Tuning {plan.loaded.name}",
        "",
        f"Minimised `{objective}` over {len(result.records)} trials ({result.runs} distinct runs; "
        f"{stop_note(result, report.budget)}). Best feasible: trial {top.trial}, `{top.candidate}` "
        f"with {json.dumps(top.params)}: {objective} {_value(top.objective)}. "
        "Rerun it: `ctxlab run best.yaml`.",
        "",
        "| setting | objective | cost | total input tokens | peak input tokens | retention | feasible |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = [
        (f"**tuned** (trial {top.trial})", top),
        *((f"baseline `{r.candidate}`", r) for r in report.baseline),
    ]
    for label, r in rows:
        m = r.measures
        verdict = "yes" if r.feasible else f"no: {'; '.join(r.why)}"
        lines.append(
            f"| {label} | {_value(r.objective)} | {_value(m.get('cost'))} "
            f"| {_value(m.get('total_input_tokens'))} | {_value(m.get('peak_input_tokens'))} "
            f"| {_value(r.retention)} | {verdict} |"
        )
    lines += [""] + [_against(top, r, objective) for r in report.baseline if r.objective]
    lines += ["", "Pareto front (feasible trials, cost against retention):", ""]
    lines += [
        f"- trial {r.trial}: cost {_value(r.measures.get('cost'))}, retention {_value(r.retention)}"
        for r in front
    ]
    lines += ["", "![history](figures/history.png)", "", "![pareto](figures/pareto.png)", ""]
    lines += ["![importance](figures/importance.png)", ""]
    return "\n".join(lines)


def _against(top: TrialRecord, base: TrialRecord, objective: str) -> str:
    """What the tuned setting saves against one baseline, and what it keeps."""
    assert top.objective is not None and base.objective
    change = (base.objective - top.objective) / base.objective
    word = "lower" if change >= 0 else "higher"
    kept = f"retention {_value(top.retention)} against {_value(base.retention)}"
    verdict = "" if base.feasible else " (the baseline is not feasible)"
    return f"- against `{base.candidate}`: {objective} {abs(change):.1%} {word}, {kept}{verdict}"


@dataclass(frozen=True, slots=True)
class FigureJob:
    """What the figures of a tune folder are drawn from: plain data, sent to a worker as it is."""

    target: Path
    trials: pd.DataFrame
    front: pd.DataFrame
    importance: dict[str, float]
    objective: str
    title: str


def _figure_job(target: Path, report: Report, front: Sequence[TrialRecord]) -> FigureJob:
    return FigureJob(
        target=target,
        trials=pd.DataFrame([_row(r) for r in report.result.records]),
        front=pd.DataFrame([_row(r) for r in front]),
        importance=dict(report.result.importance),
        objective=report.plan.tune.objective,
        title=report.plan.loaded.name,
    )


def figure_inputs(job: FigureJob) -> str:
    """A digest of what `draw_report_figures` draws `job` from (its target aside), with the code
    and libraries that draw it."""
    parts = (
        ("trials", job.trials.to_csv().encode()),
        ("front", job.front.to_csv().encode()),
        ("importance", json.dumps(job.importance).encode()),
        ("objective", job.objective.encode()),
        ("title", job.title.encode()),
    )
    return data_digest("tune", parts)


def draw_report_figures(job: FigureJob) -> None:
    """Draw the history, Pareto front and parameter importance into `job.target` (matplotlib is
    imported by the process that draws: a rerun that keeps its figures does not import it)."""
    from ctxlab.analysis import tune as figures
    from ctxlab.analysis.plots import save

    title, target = job.title, job.target
    history = figures.history(job.trials, objective=job.objective, title=f"{title}: search")
    save(history, target, "history")
    save(figures.pareto(job.trials, job.front, title=f"{title}: cost against retention"), target, "pareto")
    save(figures.importance(job.importance, title=f"{title}: parameter importance"), target, "importance")
