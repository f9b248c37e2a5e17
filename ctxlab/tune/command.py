"""`ctxlab tune SCENARIO.yaml...`: search each file's `tune:` space, write `<out>/<name>/tune/`.

Exit codes: 0 a feasible setting was found and written for every file; 1 none was for some file
(the report says which constraint no trial met and the nearest trial; nothing is written for it);
2 bad input in any file (nothing is searched), or Optuna is not installed (the message says
`pip install 'ctxlab[tune]'`); 130 interrupted, 143 terminated (the study is kept and the same command
resumes it).

Invariants:
- The progress bar (the best feasible value so far) goes to stderr, on a terminal only; results
  and the summary to stdout.
- The study's journal lives beside the results (`<out>/.<name>.tune-<study>.journal`) while the
  search runs, and moves into `tune/study.journal` with the results.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ctxlab.cli.base import (
    BadInput,
    Commands,
    Terminated,
    in_file,
    out_dir,
    positive,
    refuse_lone_scheduler,
)

if TYPE_CHECKING:  # the loader and the run path are imported when the command runs (quick `--help`)
    from concurrent.futures import Executor

    from ctxlab.problems import Problem
    from ctxlab.scenarios.load import LoadedScenario
    from ctxlab.scenarios.located import Located
    from ctxlab.tune.measure import TrialRecord
    from ctxlab.tune.search import Budget, Plan, SearchResult

EXAMPLES = """examples:
  ctxlab tune scenarios/compare-coding.yaml                   the file's tune: section, its trials
  ctxlab tune a.yaml b.yaml --workers 2 --batch 2             several files, one after the other
  ctxlab tune my.yaml --trials 30 --workers 2 --timeout 600   a budget of trials and of seconds
  ctxlab tune my.yaml --trace session.jsonl --context-size 128000   the same search on a transcript
"""


def add_tune(commands: Commands) -> None:
    """The `tune` subcommand's parser."""
    tune = commands.add_parser(
        "tune",
        help="search a scenario's tune: section for the cheapest safe setting",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Search the presets and parameter ranges each scenario's tune: section declares for "
        "the setting that minimises its objective under its constraints (Optuna, seeded TPE); "
        "writes <out>/<name>/tune/. Needs the tune extra: pip install 'ctxlab[tune]'.",
    )
    tune.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    tune.add_argument(
        "--trials", type=_trials, default=None, metavar="N", help="trials (default: the file's)"
    )
    tune.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help="stop starting trials after this long"
    )
    tune.add_argument(
        "--workers",
        type=positive,
        default=1,
        metavar="N",
        help="processes that run a batch's trials side by side (default: 1)",
    )
    tune.add_argument(
        "--batch",
        type=positive,
        default=None,
        metavar="N",
        help="trials asked together (default: --workers); the same seed and batch give the same "
        "trials whatever --workers",
    )
    tune.add_argument(
        "--executor", choices=("local", "dask"), default="local", help="local processes or Dask"
    )
    tune.add_argument(
        "--scheduler", default=None, metavar="ADDR", help="Dask scheduler (default: a LocalCluster)"
    )
    tune.add_argument("--trace", default=None, metavar="TRANSCRIPT", help="search on this transcript instead")
    tune.add_argument("--tools", default=None, metavar="FILE", help="with --trace: the tool schemas (JSON)")
    tune.add_argument(
        "--context-size", type=positive, default=None, metavar="N", help="with --trace: the window in tokens"
    )
    tune.add_argument("--out", default="results", metavar="DIR", help="results root (default: results)")
    tune.add_argument("--quiet", action="store_true", help="print nothing but errors")
    tune.add_argument(
        "--redraw",
        action="store_true",
        help="draw every figure, also where the figures in place were drawn from the same trials",
    )
    tune.set_defaults(handler=cmd_tune)


def _load(args: argparse.Namespace, path: Path) -> LoadedScenario:
    from ctxlab.problems import ScenarioError
    from ctxlab.scenarios.load import load_located
    from ctxlab.scenarios.located import parse_yaml
    from ctxlab.scenarios.text import read_text

    try:
        located = parse_yaml(read_text(path), str(path))
        if args.trace is not None:
            located = _on_trace(located, args)
        return load_located(located, path.parent)
    except ScenarioError as error:
        raise BadInput([_told(p, args) for p in error.problems]) from None


def _told(problem: Problem, args: argparse.Namespace) -> str:
    """A problem of a scenario, told by what the user gave where `--trace` replaced its workload:
    the transcript's own problems at `--trace FILE` (or `--tools`), not at the file's `trace:`
    line, and a probe's with a word that the turns it names are the transcript's."""
    if args.trace is None:
        return str(problem)
    if problem.loc[:3] == ("workload", "trace", "tools"):
        return f"--tools {args.tools}: {problem.message}"
    if problem.loc[:2] == ("workload", "trace"):
        return f"--trace {args.trace}: {problem.message}"
    if problem.loc[:2] == ("workload", "probes"):
        return f"{problem} (the probes' turns are now the --trace transcript's)"
    return str(problem)


def _on_trace(located: Located, args: argparse.Namespace) -> Located:
    """The scenario with the transcript as its workload (its probes and clock kept)."""
    from ctxlab.scenarios.located import Located
    from ctxlab.scenarios.registry import scenario_name

    trace = in_file(args.trace, "transcript file", "give a transcript", "--trace")
    if not isinstance(located.data, dict):
        return located
    doc = dict(located.data)
    spec: dict[str, Any] = {"path": str(trace.resolve())}
    if args.tools:
        spec["tools"] = str(Path(args.tools).resolve())
    workload = doc.get("workload")
    kept = (
        {k: v for k, v in workload.items() if k in ("probes", "clock")} if isinstance(workload, dict) else {}
    )
    doc["workload"] = {**kept, "trace": spec}
    doc["name"] = scenario_name(trace)
    if args.context_size is not None:
        doc["model"] = {**(doc.get("model") or {}), "context_size": args.context_size}
    return Located(file=located.file, data=doc, positions=located.positions)


def _plan(args: argparse.Namespace, path: Path, err: TextIO) -> Plan:
    from ctxlab.tune.search import Plan

    loaded = _load(args, path)
    tune = loaded.scenario.tune
    if tune is None:
        raise BadInput([f"{loaded.source}:1:1: has no tune: section; add one (README.md, Tuning)"])
    for warning in () if args.quiet else loaded.warnings:  # as `run --quiet`: errors alone
        print(_told(warning, args), file=err)
    return Plan(loaded=loaded, document=loaded.document, tune=tune)


class _Progress:
    """A tqdm bar with the best feasible value so far, on a terminal only."""

    def __init__(self, total: int, objective: str, *, quiet: bool, err: TextIO) -> None:
        self.bar: Any = None
        self.best: float | None = None
        self.objective = objective
        if not quiet and err.isatty():
            from tqdm import tqdm

            tqdm.monitor_interval = 0  # no monitor thread: workers are forked only from a lone thread
            self.bar = tqdm(total=total, unit="trial", desc="tuning", file=err, leave=False)

    def tick(self, record: TrialRecord) -> None:
        if self.bar is None:
            return
        if record.feasible and record.objective is not None:
            self.best = record.objective if self.best is None else min(self.best, record.objective)
        shown = "none yet" if self.best is None else f"{self.best:.6g}"
        self.bar.set_postfix_str(f"best feasible {self.objective}: {shown}", refresh=False)
        self.bar.update(1)
        self.bar.refresh()  # a batch's trials arrive together, faster than tqdm's own redraw interval

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _trials(text: str) -> int:
    """A trial budget, as a file's `trials:` may give it: 1 to `MAX_TRIALS`."""
    from ctxlab.scenarios.tune import MAX_TRIALS

    value = positive(text)
    if value > MAX_TRIALS:
        raise argparse.ArgumentTypeError(f"{value} is above {MAX_TRIALS:,}, the most a study runs")
    return value


def journal_path(out: Path, plan: Plan, batch: int) -> Path:
    """Where the study is kept while it runs; a finished study's journal is taken back from its
    results folder, so a larger --trials extends it."""
    from ctxlab.tune.journal import is_journal
    from ctxlab.tune.search import study_key

    name, key = plan.loaded.name, study_key(plan, batch)
    journal = out / f".{name}.tune-{key}.journal"
    finished = out / name / "tune"
    kept = (finished / "study.journal").is_file() and (finished / "tune.json").is_file()
    same = kept and _finished_study(finished / "tune.json") == f"{name}-{key}"
    # an edited journal is not resumed: the search starts afresh
    if not journal.exists() and same and is_journal(finished / "study.journal"):
        shutil.copyfile(finished / "study.journal", journal)
    return journal


def _finished_study(summary: Path) -> object:
    """The study a finished search's `tune.json` names; None when the file cannot say (edited,
    cut short): its search then starts afresh, and its folder is written anew."""
    try:
        read = json.loads(summary.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return read.get("study") if isinstance(read, dict) else None


def _check_options(args: argparse.Namespace) -> Path:
    """The results root, once the options are known to fit together (and Optuna is there)."""
    from ctxlab.tune.search import OptunaMissing, optuna_module

    try:
        optuna_module()
    except OptunaMissing as missing:
        raise BadInput([str(missing)]) from None
    if args.timeout is not None and not args.timeout >= 0:  # nan too
        raise BadInput([f"--timeout {args.timeout}: give seconds, 0 or more"])
    if (args.tools or args.context_size) and args.trace is None:
        raise BadInput(["--tools and --context-size go with --trace TRANSCRIPT"])
    if args.trace is not None and len(args.scenarios) > 1:
        raise BadInput(["--trace goes with one SCENARIO: it replaces that file's workload"])
    refuse_lone_scheduler(args)
    return out_dir(args.out)


def cmd_tune(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Search each file in turn on one pool of workers; write its results or report that nothing
    was feasible. Every file is loaded before any search starts."""
    from ctxlab.cli.running import given_twice
    from ctxlab.experiments.executors import ExecutorUnavailableError, local_pool
    from ctxlab.tune.search import Budget

    root = _check_options(args)
    twice = given_twice(args.scenarios)
    if twice:
        raise BadInput(twice)
    plans = [_plan(args, Path(path), err) for path in args.scenarios]
    _refuse_clashes(plans, root)
    made_root = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    workers = args.workers
    pool = local_pool(workers) if args.executor == "local" and workers > 1 else None
    codes: list[int] = []
    unfinished: list[Callable[[], int]] = []
    try:
        for plan in plans:
            budget = Budget(
                trials=args.trials or plan.tune.trials,
                workers=workers,
                batch=args.batch,
                timeout=args.timeout,
                executor=args.executor,
                scheduler=args.scheduler,
            )
            unfinished.append(
                _tune_one(plan, budget, root, pool, quiet=args.quiet, redraw=args.redraw, out=out, err=err)
            )
            while len(unfinished) > 1:  # the previous file's, its figures drawn meanwhile
                codes.append(unfinished.pop(0)())
        while unfinished:
            codes.append(unfinished.pop(0)())
    except ExecutorUnavailableError as unavailable:
        raise BadInput([str(unavailable)]) from None
    except _Interrupted as interrupted:
        codes.append(interrupted.code)
    finally:
        codes.extend(_settle(unfinished))
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    _index(root, codes, quiet=args.quiet, out=out, made_root=made_root)
    return next((code for code in codes if code in (130, 143)), max(codes))


def _refuse_clashes(plans: Sequence[Plan], root: Path) -> None:
    """Before any search: two files of one name (both would write the same folder, as `run`
    refuses them), or a folder where a search's results go that is a file."""
    from ctxlab.cli.running import shared_names
    from ctxlab.experiments.replace import unreplaceable

    problems = shared_names([plan.loaded for plan in plans])
    for plan in plans:
        scenario = root / plan.loaded.name
        if scenario.exists() and not scenario.is_dir():
            problems.append(f"{scenario}: is a file where results go; move it or choose another --out")
        elif (why := unreplaceable(scenario / "tune")) is not None:
            problems.append(why)
    if problems:
        raise BadInput(problems)


def _settle(unfinished: Sequence[Callable[[], int]]) -> list[int]:
    """Finish what an interruption or error left: a folder whose figures are drawn is put in place;
    one whose drawing failed is removed, its study kept to resume."""
    codes: list[int] = []
    for finish in unfinished:
        try:
            codes.append(finish())
        except BaseException:  # already leaving; the folder cleaned itself up
            continue
    return codes


def _index(root: Path, codes: Sequence[int], *, quiet: bool, out: TextIO, made_root: bool) -> None:
    """The results index, written once for every folder written (it reads the whole root)."""
    from ctxlab.analysis.report import write_index

    if 0 in codes:
        index = write_index(root)
        if not quiet:
            print(f"index: {index}", file=out)
    elif made_root and not any(root.iterdir()):
        root.rmdir()


class _Interrupted(Exception):
    """A search was interrupted (its study kept, and said so), with the exit code to give: 130
    for Ctrl-C, 143 for SIGTERM."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _tune_one(
    plan: Plan,
    budget: Budget,
    root: Path,
    pool: Executor | None,
    *,
    quiet: bool,
    redraw: bool,
    out: TextIO,
    err: TextIO,
) -> Callable[[], int]:
    """One file's search; returns what finishes it (the index aside), giving 0 when its results
    are written or 1 when nothing was feasible. With a pool, a worker draws the figures while the
    caller searches the next file."""
    from ctxlab.tune.journal import JournalError
    from ctxlab.tune.measure import best
    from ctxlab.tune.output import Report, stop_note, write_report
    from ctxlab.tune.search import baseline, search, study_key

    journal = journal_path(root, plan, budget.batch_size)
    progress = _Progress(budget.trials, plan.tune.objective, quiet=quiet, err=err)
    try:
        result = search(plan, budget, journal, progress.tick, pool)
        own = tuple(baseline(plan, budget, pool))
    except JournalError as unreadable:
        raise BadInput([str(unreadable)]) from None
    except KeyboardInterrupt as stop:
        progress.close()
        said = "terminated" if isinstance(stop, Terminated) else "interrupted"
        print(f"{said}: the study is kept in {journal}; the same command resumes it", file=err)
        raise _Interrupted(143 if isinstance(stop, Terminated) else 130) from None
    finally:
        progress.close()
    if best(result.records) is None:
        _report_infeasible(plan, result, err)
        journal.unlink(missing_ok=True)
        return lambda: 1
    study = f"{plan.loaded.name}-{study_key(plan, budget.batch_size)}"
    report = Report(plan=plan, budget=budget, result=result, baseline=own, study=study)
    complete = write_report(root, report, journal, pool, redraw=redraw)

    def finish() -> int:
        folder = complete()
        if not quiet:
            _print_summary(folder, plan, result, budget, out)
        if result.stopped == "timeout":
            print(f"note: {stop_note(result, budget)}", file=err)
        return 0

    return finish


def _print_summary(folder: Path, plan: Plan, result: SearchResult, budget: Budget, out: TextIO) -> None:
    from ctxlab.tune.measure import best
    from ctxlab.tune.output import stop_note

    top = best(result.records)
    assert top is not None
    print(f"{folder}/: {stop_note(result, budget)}; {result.runs} distinct runs", file=out)
    value = "not measured" if top.objective is None else f"{top.objective:.6g}"
    print(
        f"best feasible: trial {top.trial}, {top.candidate} {json.dumps(top.params)}: "
        f"{plan.tune.objective} {value}",
        file=out,
    )
    print(f"rerun it: ctxlab run {folder / 'best.yaml'}", file=out)


def _report_infeasible(plan: Plan, result: SearchResult, err: TextIO) -> None:
    from ctxlab.tune.measure import CONSTRAINTS, infeasible

    if not result.records:
        print(f"{plan.loaded.source}: no trial ran; nothing was written", file=err)
        return
    found = infeasible(result.records)
    print(
        f"{plan.loaded.source}: no setting met every constraint in {len(result.records)} trials; "
        "nothing was written",
        file=err,
    )
    for name in CONSTRAINTS:
        mark = "  <- no trial met it" if name in found.unmet else ""
        print(f"  {name}: met by {found.met_by[name]} of {len(result.records)} trials{mark}", file=err)
    near = found.nearest
    print(
        f"  nearest: trial {near.trial}, {near.candidate} {json.dumps(near.params)}: {'; '.join(near.why)}",
        file=err,
    )
    print("  widen the space, relax the constraints, or raise --trials", file=err)
