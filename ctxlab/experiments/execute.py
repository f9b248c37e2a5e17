"""Executing one run config: build the workload, models, strategy and workspace, run, measure.

`execute` is what every executor calls, in this process, a local worker process or a Dask
worker; its input and output are plain picklable data.

Invariants:
- `execute` never raises for a problem of the run: a run that raises (while building or while
  running) comes back `failed` with `Type: message` as its error, the calls recorded before the
  failure, and the traceback for the manifest. Other runs are not affected.
- The result depends only on the config: no wall clock, no global random state, no file outside
  a per-run temporary folder (the `directory` workspace, removed afterwards). Request files are
  gzip streams with no timestamp and no file name, so their bytes are the same on every worker.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sysconfig
import tempfile
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SkipValidation

from ctxlab.core.events import Event
from ctxlab.core.messages.model import ChatModel
from ctxlab.core.messages.tokens import AgentScopeEstimator, TokenCounter
from ctxlab.core.wire.views import WireName, anthropic_of_openai, anthropic_tool
from ctxlab.core.world.retention import RetentionSnapshot
from ctxlab.core.world.script import Script, assign_call_ids
from ctxlab.engine.cache import PromptCacheMeter
from ctxlab.engine.env import CacheMeter, Env
from ctxlab.engine.hooks import BuiltinTool, RunSettings
from ctxlab.engine.loop import labelled_subagents
from ctxlab.engine.retention import RetentionTracker
from ctxlab.engine.session import Session, SubagentSetup, assemble
from ctxlab.engine.tools import READ_TOOL, ReadOffloaded, with_read_tool
from ctxlab.engine.trace import CallRecord
from ctxlab.engine.workspace import InMemoryWorkspace, Workspace
from ctxlab.experiments.grid import RunConfig
from ctxlab.experiments.gzipped import gzipped_parts
from ctxlab.experiments.measures import PARENT, call_row, event_rows, run_measures, trailing_event_rows
from ctxlab.experiments.workspace import DirectoryWorkspace
from ctxlab.models.policy import Need, PolicyModel
from ctxlab.models.scripted import ScriptModel
from ctxlab.presets.entries import StrategyEntry, WorkspaceKind
from ctxlab.presets.limits import loop_limit
from ctxlab.presets.registry import build_strategy
from ctxlab.scenarios.fields import DelegateSpec, StrategyField
from ctxlab.scenarios.schema import ModelSpec, PricesSpec, Tokenizer
from ctxlab.scenarios.workload import Workload, WorkloadSpec
from ctxlab.texts import Texts, load_texts

Status = Literal["ok", "failed"]


class RunSpec(BaseModel):
    """A resolved run config, validated again where it runs."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    seed: int
    workload: WorkloadSpec
    model: ModelSpec
    prices: PricesSpec
    strategy: StrategyField
    delegate: DelegateSpec | None = None
    files: SkipValidation[Mapping[str, str]] = {}  # a run's `SourceFiles`: validating would read them


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """What one run produced, as plain data."""

    run_id: str
    index: int
    status: Status
    error: str = ""
    traceback: str = ""
    measures: dict[str, Any] = field(default_factory=dict)
    calls: tuple[dict[str, Any], ...] = ()
    events: tuple[dict[str, Any], ...] = ()
    requests_gz: bytes | None = None
    requests_wire: WireName = "openai"
    cache_metered: bool = False
    retention: tuple[dict[str, Any], ...] = ()
    probes: int = 0
    warnings: tuple[str, ...] = ()
    """What the engine warned of during the run (a compaction flagged for making no progress, a
    breaker that stopped compacting), each naming its call; a sub-agent's prefixed with its label."""


def cache_meter(counter: TokenCounter) -> CacheMeter | None:
    """The prompt-cache meter of a run (the one switch: None would leave the cache columns empty
    and bill every input token at the input price, see `measures.call_cost`)."""
    return PromptCacheMeter(counter)


def counter_for(tokenizer: Tokenizer) -> TokenCounter:
    """The token counter a scenario names."""
    if tokenizer == "agentscope":
        return AgentScopeEstimator()
    from ctxlab.tokenizers import BpeCounter

    return BpeCounter(tokenizer)


@contextlib.contextmanager
def workspace_for(kind: WorkspaceKind) -> Iterator[Workspace | None]:
    """The run's workspace; a `directory` one lives in a temporary folder removed afterwards."""
    if kind == "none":
        yield None
    elif kind == "memory":
        yield InMemoryWorkspace()
    else:
        with tempfile.TemporaryDirectory(prefix="ctxlab-workspace-") as root:
            yield DirectoryWorkspace(root=Path(root))


def offloaded_bytes(workspace: Workspace | None) -> int:
    """Bytes a workspace has stored."""
    if isinstance(workspace, InMemoryWorkspace):
        return workspace.total_bytes()
    if isinstance(workspace, DirectoryWorkspace):
        return workspace.written
    return 0


def agent_for(spec: RunSpec, script: Script, workload: Workload, texts: Texts) -> Agent:
    """The fake agent a run's `model.agent` asks for, with the tools it needs."""
    agent = spec.model.agent
    if agent.kind == "script":
        return Agent(model=ScriptModel(script, requests=None), script=script, builtins={})
    needs = tuple(Need(key=n.key, turn=n.turn, round=n.round) for n in agent.needs)
    script = with_read_tool(script, texts)
    model = PolicyModel.for_texts(
        script,
        texts,
        probes=tuple(workload.probes),
        needs=needs,
        relist_after_compression=agent.relist_after_compression,
        max_rereads=agent.max_rereads,
        requests=None,
    )
    return Agent(model=model, script=script, builtins={READ_TOOL: ReadOffloaded(texts)})


@dataclass(frozen=True, slots=True)
class Agent:
    """The agent's model, the script it plays, and the built-in tools it needs."""

    model: ChatModel
    script: Script
    builtins: dict[str, BuiltinTool]


def portable_traceback(error: BaseException) -> str:
    """The traceback of `error` with each file named from the folder its code is installed in
    (the checkout, the environment's packages, the standard library), so the manifests of one run
    on two machines are the same bytes."""
    text = "".join(traceback.format_exception(error))
    for root in _CODE_ROOTS:
        text = text.replace(f'File "{root}{os.sep}', 'File "')
    return text


_INSTALLED = (sysconfig.get_paths()[kind] for kind in ("purelib", "platlib", "stdlib"))
_CODE_ROOTS = sorted({str(Path(__file__).resolve().parents[2]), *_INSTALLED}, key=len, reverse=True)
"""Where the code a run executes is installed, longest first (a package folder inside the checkout
or the environment is stripped before the folder around it)."""


def subagent_setup(spec: RunSpec, workload: Workload) -> SubagentSetup | None:
    """How the run's sub-agents run, from its `delegate:` section (None: as their parent)."""
    delegate = spec.delegate
    if delegate is None:
        return None
    entry: StrategyEntry = delegate.strategy or spec.strategy
    texts = load_texts(entry.texts)
    strategy = build_strategy(entry, texts)
    summarizer = delegate.summarizer or spec.model.summarizer
    return SubagentSetup(
        strategy=strategy,
        context_size=delegate.context_size or spec.model.context_size,
        summarizer=lambda _script: summarizer.build(texts=texts, probes=workload.probes, seed=spec.seed),
        texts=texts,
        settings=RunSettings(
            max_iters=loop_limit(entry),
            max_iters_hint=texts.max_iters_hint,
            max_iters_source=texts.max_iters_source,
        ),
        breaker_limit=entry.summary_breaker,
    )


def _prepare(spec: RunSpec, workspace: Workspace | None, record_requests: bool) -> _Run:
    workload = spec.workload.build(spec.seed, spec.files)
    entry: StrategyEntry = spec.strategy
    texts = load_texts(entry.texts)
    agent = agent_for(spec, assign_call_ids(workload.script), workload, texts)
    counter = counter_for(spec.model.tokenizer)
    strategy = build_strategy(entry, texts)
    session = assemble(
        agent.script,
        strategy,
        model=agent.model,
        summarizer=spec.model.summarizer.build(texts=texts, probes=workload.probes, seed=spec.seed),
        texts=texts,
        context_size=spec.model.context_size,
        counter=counter,
        workspace=workspace,
        settings=RunSettings(
            max_iters=loop_limit(entry),
            max_iters_hint=texts.max_iters_hint,
            max_iters_source=texts.max_iters_source,
        ),
        builtins=agent.builtins,
        record_requests=record_requests,
        breaker_limit=entry.summary_breaker,
        cache=cache_meter(counter),
        probes=workload.probes,
        subagent_model=ScriptModel,
        subagent=subagent_setup(spec, workload),
    )
    return _Run(spec=spec, workload=workload, session=session)


@dataclass(frozen=True, slots=True)
class _Run:
    """One run set up: its spec, workload and session (the records survive a failure)."""

    spec: RunSpec
    workload: Workload
    session: Session

    @property
    def env(self) -> Env:
        return self.session.env

    @property
    def tracker(self) -> RetentionTracker | None:
        return self.session.tracker


def execute(config: RunConfig) -> RunResult:
    """Run one config; never raises for the run's own failures (they come back `failed`)."""
    try:
        spec = RunSpec.model_validate({**config.config, "files": config.files})
    except Exception as error:  # a config that no longer validates is this run's failure
        return _failed(config, error, ())
    with workspace_for(spec.strategy.workspace) as workspace:
        try:
            run = _prepare(spec, workspace, config.record_requests)
        except Exception as error:
            return _failed(config, error, ())
        try:
            snapshots = run.session.run().retention
        except Exception as error:
            return _failed(config, error, tuple(run.env.recorder.calls), run, workspace)
        else:
            return _result(config, run, workspace, "ok", snapshots=snapshots)
        finally:  # the records are read: the run's objects go now, not at a full collection
            run.session.release()


def _rows(
    config: RunConfig,
    run: _Run,
    calls: tuple[CallRecord, ...],
    *,
    agent: str = PARENT,
    delegated_at: int | None = None,
    context_size: int | None = None,
) -> tuple[dict[str, Any], ...]:
    metered = run.env.cache is not None
    return tuple(
        call_row(
            config.run_id,
            record,
            convention=run.spec.model.summary_token_count,
            context_size=context_size or run.spec.model.context_size,
            cache_metered=metered,
            agent=agent,
            delegated_at=delegated_at,
        )
        for record in calls
    )


@dataclass(frozen=True, slots=True)
class _Subagent:
    """One sub-agent's label, the parent call that delegated to it, its window and calls."""

    label: str
    delegated_at: int | None
    context_size: int
    calls: tuple[CallRecord, ...]
    trailing: tuple[Event, ...]  # recorded after its last call


def _subagents(run: _Run) -> tuple[_Subagent, ...]:
    return tuple(
        _Subagent(
            label=label,
            delegated_at=child.delegated_at,
            context_size=child.env.context_size,
            calls=tuple(child.env.recorder.calls),
            trailing=tuple(child.env.recorder.pending_events),
        )
        for label, child in labelled_subagents(run.session.loop)
    )


def _result(
    config: RunConfig,
    run: _Run,
    workspace: Workspace | None,
    status: Status,
    *,
    error: BaseException | None = None,
    calls: tuple[CallRecord, ...] | None = None,
    snapshots: tuple[RetentionSnapshot, ...] = (),
) -> RunResult:
    records = tuple(run.env.recorder.calls) if calls is None else calls
    rows = _rows(config, run, records)
    events = tuple(row for record in records for row in event_rows(config.run_id, record))
    events += trailing_event_rows(config.run_id, len(records), tuple(run.env.recorder.pending_events))
    subagents = _subagents(run)
    sub_rows = tuple(
        row
        for s in subagents
        for row in _rows(
            config, run, s.calls, agent=s.label, delegated_at=s.delegated_at, context_size=s.context_size
        )
    )
    sub_events = tuple(
        row
        for s in subagents
        for row in (
            *(row for record in s.calls for row in event_rows(config.run_id, record, s.label)),
            *trailing_event_rows(config.run_id, len(s.calls), s.trailing, s.label),
        )
    )
    measures = run_measures(
        rows,
        events=events,
        prices=run.spec.prices.model_dump(),
        compressions=run.env.recorder.compressions,
        offloaded_bytes=offloaded_bytes(workspace),
        source_violations=run.workload.source_violations,
        retention=snapshots[-1].scores if snapshots and snapshots[-1].final else None,
        subagent_rows=sub_rows,
    )
    return RunResult(
        run_id=config.run_id,
        index=config.index,
        status=status,
        error=_error_text(error) if error else "",
        traceback=portable_traceback(error) if error else "",
        measures=measures,
        calls=rows + sub_rows,
        events=events + sub_events,
        requests_gz=request_file(records, config.wire, subagents) if config.record_requests else None,
        requests_wire=config.wire,
        cache_metered=run.env.cache is not None,
        retention=tuple(
            snapshot_summary(s) for s in (snapshots or (run.tracker.snapshots if run.tracker else ()))
        ),
        probes=len(run.workload.probes),
        warnings=_run_warnings(run),
    )


def _run_warnings(run: _Run) -> tuple[str, ...]:
    """The engine's warnings of the run, then of each sub-agent (labelled), in the order made."""
    own = tuple(run.env.recorder.warnings)
    subs = tuple(
        f"{label}: {warning}"
        for label, child in labelled_subagents(run.session.loop)
        for warning in child.env.recorder.warnings
    )
    return own + subs


def snapshot_summary(snapshot: RetentionSnapshot) -> dict[str, Any]:
    """A retention snapshot as plain data: when, and the share of each kind retained."""
    scores = snapshot.scores
    out: dict[str, Any] = {
        "before_call": snapshot.before_call,
        "compressions": snapshot.compressions,
        "final": snapshot.final,
    }
    for kind, score in (("facts", scores.facts), ("rules", scores.rules), ("artifacts", scores.artifacts)):
        out[kind] = score.retention
        out[f"{kind}_offload_only"] = score.offload_share
    return out


def _failed(
    config: RunConfig,
    error: BaseException,
    calls: tuple[CallRecord, ...],
    run: _Run | None = None,
    workspace: Workspace | None = None,
) -> RunResult:
    if run is not None:
        return _result(config, run, workspace, "failed", error=error, calls=calls)
    return RunResult(
        run_id=config.run_id,
        index=config.index,
        status="failed",
        error=_error_text(error),
        traceback=portable_traceback(error),
    )


def _error_text(error: BaseException) -> str:
    """The error as `runs.csv` says it, with its notes (where it was raised: a sub-agent's)."""
    notes = "".join(f" ({note})" for note in getattr(error, "__notes__", ()))
    return f"{type(error).__name__}: {error}{notes}"


def request_file(
    calls: tuple[CallRecord, ...], wire: WireName = "openai", subagents: Sequence[_Subagent] = ()
) -> bytes:
    """`requests/<run_id>.jsonl.gz` (`<run_id>.anthropic.jsonl.gz` for the Anthropic form): one
    line per call, the run's own and then each sub-agent's (in `calls.csv`'s order, naming its
    `agent` and `delegated_at`), gzip without timestamp or name.

    The OpenAI form holds `messages` and `tools` as an OpenAI-compatible endpoint receives them;
    the Anthropic form holds `system`, `messages` and `tools` as the Messages API receives them.
    """
    own = (_request_line(record, wire) for record in calls)
    delegated = (
        _request_line(record, wire, {"agent": sub.label, "delegated_at": sub.delegated_at})
        for sub in subagents
        for record in sub.calls
    )
    return gzipped_parts(itertools.chain(own, delegated))


def _request_line(record: CallRecord, wire: WireName, agent: Mapping[str, Any] | None = None) -> bytes:
    """One call's line of its run's request file (a sub-agent's names it, `agent`)."""
    request = record.request or {"messages": [], "tools": []}
    if wire == "anthropic":
        system, turns = anthropic_of_openai(request["messages"])
        tools = [anthropic_tool(tool) for tool in request["tools"]]
        request = {"system": system, "messages": turns, "tools": tools}
    line = {"call_index": record.call_index, "kind": record.kind, **(agent or {}), **request}
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def request_file_name(run_id: str, wire: WireName) -> str:
    """The name of a run's request file in `requests/`."""
    return f"{run_id}.jsonl.gz" if wire == "openai" else f"{run_id}.{wire}.jsonl.gz"
