"""A loaded scenario expanded into run configs: one per grid point and strategy, in grid order.

A run config is plain data (picklable, JSON-able): the resolved settings of one run, its
`config_hash` and `run_id`, its `param.*` columns, and the files its workload reads (by path and
digest, their texts read again where a run needs them: `ctxlab.scenarios.sources`).

Invariants:
- The resolved config holds everything a run depends on, defaults filled in: seed, workload (a
  generator's parameters resolved), model, prices, the strategy entry, the `delegate:` section
  when the scenario has one, and the sha256 of every file the workload reads. Names,
  descriptions and where files live are not part of it.
- `config_hash` is the first 12 hex digits of the sha256 of the config's canonical JSON (keys
  sorted, no spaces, UTF-8); `run_id` is `<strategy>-<config_hash>`. The same settings give the
  same id in any scenario, on any machine.
- Runs are ordered by grid point, then by the strategy's place in the file. A run whose config
  equals an earlier one's (a point that differs only in another strategy's settings) is kept
  once, at its first place.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.core.wire.views import WireName
from ctxlab.presets.entries import StrategyEntry
from ctxlab.presets.registry import flatten
from ctxlab.scenarios.load import LoadedScenario, ScenarioPoint
from ctxlab.scenarios.schema import Scenario
from ctxlab.scenarios.sources import SourceFiles


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    """One run to execute: its identity, its resolved settings, and the files it reads."""

    scenario: str
    index: int
    run_id: str
    strategy: str
    config_hash: str
    config: dict[str, Any]
    params: dict[str, Any]
    files: SourceFiles = field(default_factory=SourceFiles)
    record_requests: bool = False
    wire: WireName = "openai"


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the same value always gives the same text.

    >>> canonical_json({"b": 1, "a": [0.8, "中"]})
    '{"a":[0.8,"中"],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def config_hash(config: Mapping[str, Any]) -> str:
    """The first 12 hex digits of the sha256 of the config's canonical JSON."""
    return hashlib.sha256(canonical_json(config).encode("utf-8")).hexdigest()[:12]


def resolved_config(scenario: Scenario, entry: StrategyEntry, digests: Mapping[str, str]) -> dict[str, Any]:
    """Everything one run depends on, defaults filled in; `digests` are the sha256 of the
    scenario's files, by path."""
    workload = scenario.workload.model_dump(mode="json")
    if scenario.workload.generator is not None:
        workload["generator"]["params"] = scenario.workload.generator.resolved_params()
    config: dict[str, Any] = {
        "seed": scenario.seed,
        "workload": workload,
        "model": scenario.model.model_dump(mode="json"),
        "prices": scenario.prices.model_dump(mode="json"),
        "strategy": entry.model_dump(mode="json"),
    }
    if scenario.delegate is not None:  # only when written, so other runs keep their hashes
        config["delegate"] = scenario.delegate.model_dump(mode="json")
    used = _used_files(scenario)
    if used:
        config["files"] = {path: digests[path] for path in used}
    return config


def located_nowhere(config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` as its hash reads it: the files a run reads (a transcript, its tool schemas)
    known by their sha256 alone, not by the path they were given at, so the same bytes and
    settings give the same run id wherever the file lies and however it was named."""
    files = config.get("files")
    if not files:
        return dict(config)
    trace = dict(config["workload"]["trace"])
    for key in ("path", "tools"):
        if trace.get(key) is not None:
            trace[key] = files[trace[key]]
    kept = {key: value for key, value in config.items() if key != "files"}
    return {**kept, "workload": {**config["workload"], "trace": trace}}


def _used_files(scenario: Scenario) -> list[str]:
    trace = scenario.workload.trace
    if trace is None:
        return []
    return [trace.path] + ([trace.tools] if trace.tools else [])


def expand(
    loaded: LoadedScenario, *, record_requests: bool | None = None, wire: WireName = "openai"
) -> tuple[RunConfig, ...]:
    """The runs of a loaded scenario, in grid order, duplicates dropped.

    `record_requests` overrides the scenario's setting when given; `wire` is the API form the
    requests are recorded in.
    """
    runs: list[RunConfig] = []
    seen: set[str] = set()
    record = loaded.scenario.record_requests if record_requests is None else record_requests
    digests = loaded.files.digests
    for point in loaded.points:
        for position, entry in enumerate(point.scenario.strategies):
            config = resolved_config(point.scenario, entry, digests)
            digest = config_hash(located_nowhere(config))
            run_id = f"{entry.name}-{digest}"
            if run_id in seen:
                continue
            seen.add(run_id)
            runs.append(
                RunConfig(
                    scenario=loaded.name,
                    index=len(runs),
                    run_id=run_id,
                    strategy=entry.name,
                    config_hash=digest,
                    config=config,
                    params=run_params(point, position, entry.name),
                    files=loaded.files.only(_used_files(point.scenario)),
                    record_requests=record,
                    wire=wire,
                )
            )
    return tuple(runs)


def run_params(point: ScenarioPoint, position: int, name: str) -> dict[str, Any]:
    """The `param.*` values of one run: swept paths first (in sweep order), then set ones.

    A strategy's own settings are named `strategy.<field>` (whatever its name), so runs of
    different strategies share columns; another strategy's settings are left out.
    """
    params: dict[str, Any] = {}
    for key, value in point.assignments:
        column = param_column(key, name)
        if column is not None:
            params[column] = value
    for column, value in _set_params(point.document, position):
        params.setdefault(column, value)
    return params


def param_column(key: str, strategy: str) -> str | None:
    """The column a sweep path fills for a run of `strategy` (None: another strategy's setting).

    >>> param_column("strategies.a.context.trigger_ratio", "a"), param_column("model.context_size", "a")
    ('strategy.context.trigger_ratio', 'model.context_size')
    >>> param_column("strategies.b.context.trigger_ratio", "a") is None
    True
    """
    if not key.startswith("strategies."):
        return key
    _, owner, rest = key.split(".", 2)
    return f"strategy.{rest}" if owner == strategy else None


def _set_params(doc: Mapping[str, Any], position: int) -> Iterator[tuple[str, Any]]:
    """Leaves written in the document that describe a run: model, the strategy, `delegate`, the
    workload's source."""
    yield from flatten(doc.get("model") or {}, "model")
    entries = doc.get("strategies") or []
    entry = entries[position] if position < len(entries) and isinstance(entries[position], dict) else {}
    yield "strategy.preset", entry.get("preset")
    for column, value in flatten({k: v for k, v in entry.items() if k not in ("name", "preset")}, "strategy"):
        if column != "strategy":
            yield column, value
    if isinstance(doc.get("delegate"), dict) and doc["delegate"]:
        yield from flatten(doc["delegate"], "delegate")
    workload = doc.get("workload") or {}
    for section in ("generator", "trace", "clock"):
        if isinstance(workload.get(section), dict):
            yield from flatten(workload[section], f"workload.{section}")
