"""The study: trials asked of Optuna's seeded TPE sampler in batches, run on the lab's one run
path, told back with their constraints; kept in a journal so an interrupted search resumes.

Invariants:
- Deterministic for a seed and a batch size (`--batch`, by default the worker count; how many
  processes run a batch changes nothing): before each batch the sampler is
  made anew, seeded from the tune seed and the number of trials already told, so a trial depends
  only on the trials before it. A search interrupted and resumed gives the same trials, in the
  same order, as one never interrupted.
- Every trial's record (its setting, measures and verdict) is kept with the trial in the study,
  so resuming reruns nothing; trials asked but never told (the interrupted batch) are marked
  failed and asked again. A batch's trials are told together, once all of its runs are done.
- A setting run before (the same run id) is not run again: its result is reused, so the runs
  executed can be fewer than the trials.
- The budget stops the search only between batches: after `trials` trials, when every setting of
  a finite space was tried, or (`timeout`, wall-clock seconds) when the time is up, which
  `SearchResult.stopped` says, since then the trials depend on the machine's speed.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ctxlab.experiments.execute import RunResult
from ctxlab.experiments.executors import ExecutorName
from ctxlab.experiments.grid import canonical_json, expand
from ctxlab.experiments.run import run_grids
from ctxlab.problems import ScenarioError
from ctxlab.scenarios.load import LoadedScenario, load_located
from ctxlab.scenarios.located import Located
from ctxlab.scenarios.tune import TuneSpec
from ctxlab.tune.measure import CONSTRAINTS, TrialRecord, invalid_record, run_record
from ctxlab.tune.space import Candidate, space_size, suggest, trial_document

RECORD = "ctxlab_record"
"""The user attribute of an Optuna trial that holds its record."""
INSTALL = "pip install 'ctxlab[tune]'"
Stopped = Literal["trials", "timeout", "exhausted"]


class OptunaMissing(RuntimeError):
    """Optuna is not installed."""


def optuna_module() -> Any:
    """The optuna package, quiet.

    Raises:
        OptunaMissing: it is not installed (the message says how to install it).
    """
    try:
        import optuna
    except ModuleNotFoundError:
        raise OptunaMissing(
            f"ctxlab tune needs Optuna, which is not installed; install the tune extra: {INSTALL}"
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What to search: the scenario (as loaded, and its document) and its tune section."""

    loaded: LoadedScenario
    document: dict[str, Any]
    tune: TuneSpec

    @property
    def base_dir(self) -> Path:
        """Where the scenario's relative paths start."""
        return self.loaded.base_dir


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """How much to search, and where trials run: `batch` trials are asked together (None: as
    many as `workers`); the trials depend on the batch size, never on the workers."""

    trials: int
    workers: int
    batch: int | None = None
    timeout: float | None = None
    executor: ExecutorName = "local"
    scheduler: str | None = None

    @property
    def batch_size(self) -> int:
        """Trials asked of the sampler together."""
        return self.batch or self.workers


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult:
    """The trials in order, the runs executed for them, and why the search stopped."""

    records: tuple[TrialRecord, ...]
    runs: int
    stopped: Stopped
    resumed: int
    importance: dict[str, float]


OnRecord = Callable[[TrialRecord], None]


def study_key(plan: Plan, batch: int) -> str:
    """Names the study: the scenario's document and tune section (the trial budget aside) and the
    batch size, so the same search resumes and any other starts afresh."""
    tune = plan.tune.model_dump(mode="json", exclude={"trials"})
    document = {k: v for k, v in plan.document.items() if k != "tune"}
    files = plan.loaded.files.digests
    text = canonical_json({"document": document, "tune": tune, "batch": batch, "files": files})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def batch_seed(seed: int, told: int) -> int:
    """The sampler's seed for the batch after `told` trials.

    >>> batch_seed(0, 0) == batch_seed(0, 0) != batch_seed(0, 1)
    True
    """
    return int(hashlib.sha256(f"{seed}:{told}".encode()).hexdigest()[:8], 16)


def journal_storage(journal: Path) -> Any:
    """Optuna's storage in the journal file `journal` (made when new), appended unsynced
    (`ctxlab.tune.journal`)."""
    optuna_module()
    from optuna.storages import JournalStorage

    from ctxlab.tune.journal import AppendedJournal

    return JournalStorage(AppendedJournal(journal))


def told_records(study: Any) -> list[TrialRecord]:
    """The records of the trials told so far, in trial order; trials asked but never told (an
    interrupted batch) are marked failed, to be asked again."""
    optuna = optuna_module()
    records = []
    for trial in study.get_trials(deepcopy=False):
        if RECORD in trial.user_attrs:
            records.append(TrialRecord.from_json(trial.user_attrs[RECORD]))
        elif trial.state == optuna.trial.TrialState.RUNNING:
            study.tell(trial.number, state=optuna.trial.TrialState.FAIL)
    return records


def load_trial(plan: Plan, candidate: Candidate) -> LoadedScenario | str:
    """The scenario of `candidate`'s trial, or why it cannot load (its settings break a rule)."""
    doc = trial_document(plan.document, plan.tune.space, candidate)
    try:
        return load_located(Located(file=plan.loaded.source, data=doc, positions={}), plan.base_dir)
    except ScenarioError as error:
        return "; ".join(f"{p.field}: {p.message}" for p in error.problems)


class _Runner:
    """Runs candidates on the run path, each distinct run once."""

    def __init__(
        self, plan: Plan, budget: Budget, known: Sequence[TrialRecord], pool: Executor | None
    ) -> None:
        self.plan, self.budget, self.pool = plan, budget, pool
        self.results: dict[str, TrialRecord] = {r.run_id: r for r in known if r.run_id}

    def evaluate(self, first: int, candidates: Sequence[Candidate]) -> list[TrialRecord]:
        """The records of trials `first`, `first + 1`, ... for `candidates`."""
        tune = self.plan.tune
        loaded = [load_trial(self.plan, c) for c in candidates]
        new: dict[str, LoadedScenario] = {}
        for item in loaded:
            if isinstance(item, LoadedScenario):
                run_id = expand(item)[0].run_id
                if run_id not in self.results:
                    new.setdefault(run_id, item)
        fresh: dict[str, RunResult] = {}
        if new:
            outcomes = run_grids(
                list(new.values()),
                executor=self.budget.executor,
                workers=self.budget.workers,
                scheduler=self.budget.scheduler,
                pool=self.pool,
            )
            fresh = {o.results[0].run_id: o.results[0] for o in outcomes}
        records = []
        for offset, (candidate, item) in enumerate(zip(candidates, loaded, strict=True)):
            number = first + offset
            if isinstance(item, str):
                records.append(invalid_record(number, candidate, item, tune))
                continue
            run_id = expand(item)[0].run_id
            if run_id in fresh:
                record = run_record(number, candidate, fresh[run_id], tune)
                self.results[run_id] = record
            else:
                known = self.results[run_id]
                record = TrialRecord.from_json(
                    {**known.to_json(), "trial": number, "params": candidate.params()}
                )
            records.append(record)
        return records


def search(
    plan: Plan,
    budget: Budget,
    journal: Path,
    on_record: OnRecord | None = None,
    pool: Executor | None = None,
) -> SearchResult:
    """Run the search kept in `journal` to its budget; returns every trial told, in order.
    `pool` (`executors.local_pool`) runs every batch, instead of a pool per batch."""
    from ctxlab.tune.journal import JournalError

    optuna = optuna_module()
    name = f"{plan.loaded.name}-{study_key(plan, budget.batch_size)}"
    try:  # Optuna replays the whole journal here
        storage = journal_storage(journal)
        study = optuna.create_study(
            study_name=name, storage=storage, direction="minimize", load_if_exists=True
        )
        records = told_records(study)
    except (KeyError, TypeError, AttributeError, IndexError) as error:  # JSON lines but no study's logs
        raise JournalError(journal, None) from error
    resumed = len(records)
    runner = _Runner(plan, budget, records, pool)
    size = space_size(plan.tune.space)
    tried = {_setting(r) for r in records}
    start = time.monotonic()
    stopped: Stopped = "trials"
    while len(records) < budget.trials:
        if size is not None and len(tried) >= size:
            stopped = "exhausted"
            break
        if budget.timeout is not None and time.monotonic() - start >= budget.timeout:
            stopped = "timeout"
            break
        sampler = optuna.samplers.TPESampler(
            seed=batch_seed(plan.tune.seed, len(records)),
            multivariate=True,
            group=True,
        )
        study = optuna.load_study(study_name=name, storage=storage, sampler=sampler)
        asked = [study.ask() for _ in range(min(budget.batch_size, budget.trials - len(records)))]
        candidates = [suggest(trial, plan.tune.space) for trial in asked]
        for trial, record in zip(asked, runner.evaluate(len(records), candidates), strict=True):
            for constraint, value in zip(CONSTRAINTS, record.constraints, strict=True):
                trial.set_constraint(constraint, value)
            trial.set_user_attr(RECORD, record.to_json())
            if record.objective is None:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            else:
                study.tell(trial, record.objective)
            records.append(record)
            tried.add(_setting(record))
        for record in records[-len(asked) :]:
            if on_record is not None:
                on_record(record)
    kept = records[: budget.trials]  # a finished study of more trials: the first, as a fresh search
    return SearchResult(
        records=tuple(kept),
        runs=len({r.run_id for r in kept if r.run_id}),  # each distinct run, run once
        stopped=stopped,
        resumed=min(resumed, len(kept)),
        importance=param_importance(study, len(kept)),
    )


def param_importance(study: Any, trials: int) -> dict[str, float]:
    """How much each parameter matters for reaching the best tenth of the objective's values among
    the feasible trials of the first `trials` (Optuna's PED-ANOVA, which needs no random source),
    the most important first and equals by name; empty when too few feasible trials vary to say."""
    optuna = optuna_module()
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    records = [t.user_attrs.get(RECORD, {}) for t in complete]
    feasible = [
        t for t, r in zip(complete, records, strict=True) if r.get("why") == [] and r["trial"] < trials
    ]
    if len(feasible) < 2:
        return {}
    among = optuna.create_study(direction="minimize")
    among.add_trials(feasible)
    try:
        with warnings.catch_warnings():  # "quantiles select the same set of trials": equal values say it
            warnings.simplefilter("ignore", UserWarning)
            found = optuna.importance.get_param_importances(
                among, evaluator=optuna.importance.PedAnovaImportanceEvaluator()
            )
    except (ValueError, RuntimeError):
        return {}
    rounded = {str(name): round(float(value), 6) for name, value in found.items()}
    # Optuna orders equal importances as its parameter set iterates, which moves with the hash seed
    return dict(sorted(rounded.items(), key=lambda item: (-item[1], item[0])))


def baseline(plan: Plan, budget: Budget, pool: Executor | None = None) -> list[TrialRecord]:
    """The scenario's own strategies, run and judged as trials are (what the report compares with)."""
    (outcome,) = run_grids(
        [plan.loaded],
        executor=budget.executor,
        workers=budget.workers,
        scheduler=budget.scheduler,
        pool=pool,
    )
    records = []
    for index, (config, result) in enumerate(zip(outcome.configs, outcome.results, strict=True)):
        own = Candidate(label=config.strategy, preset=str(config.config["strategy"]["preset"]), values=())
        records.append(run_record(index, own, result, plan.tune))
    return records


def _setting(record: TrialRecord) -> str:
    return canonical_json([record.candidate, record.params])
