"""The scenario file (README.md, Scenario files) as pydantic models: workload, model, prices,
strategies, sweep.

Invariants:
- Every model forbids unknown keys, at every depth; the JSON Schema for editors is generated
  from these models (`scenario_json_schema`), so the two never disagree.
- The strategy and summarizer unions are built from the registry (`ctxlab.scenarios.registry`):
  a new preset needs no change here. An unknown preset or summarizer kind is reported at its
  own field with the known names and a "did you mean".
- The `workload:` section and how it is built live in `ctxlab.scenarios.workload`, the
  `tune:` section in `ctxlab.scenarios.tune`, the registry-built strategy and summarizer fields
  and `delegate:` in `ctxlab.scenarios.fields`.
- Every sweep path names a field (checked against these models with the document's own
  strategy names and generator), and every sweep list holds one or more distinct values (values
  that validate to the same setting are refused after validation, in `ctxlab.scenarios.load`).
- Strategy names are unique within a scenario.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import models_json_schema

from ctxlab.engine.trace import Convention
from ctxlab.presets.entries import NAME_MAX_LENGTH, StrategyEntry, workspace_need
from ctxlab.presets.registry import ENTRIES
from ctxlab.problems import NAME_PATTERN, Loc, located_error, name_list
from ctxlab.scenarios.fields import DelegateSpec, StrategyField, SummarizerField
from ctxlab.scenarios.registry import SUMMARIZERS, preset_problem, summarizer_problem
from ctxlab.scenarios.section import Section
from ctxlab.scenarios.summarizers import FixedSummarizerSpec
from ctxlab.scenarios.sweep import SweepPathError, overlap_message, overlapping, resolve
from ctxlab.scenarios.tune import TuneSpec, tune_problems
from ctxlab.scenarios.workload import WorkloadSpec

MAX_GRID_POINTS = 10_000
"""More points than this is a mistake in a scenario file (or belongs in a script of its own)."""

Tokenizer = Literal["agentscope", "o200k_base", "cl100k_base"]


class NeedSpec(Section):
    """A planted probe the agent needs before a round: when it is gone, the agent looks for it."""

    key: str = Field(description="The probe's key (it must be planted in workload.probes).")
    turn: int = Field(ge=0, description="The turn (0-based) that needs it; one the workload has.")
    round: int = Field(
        default=0,
        ge=0,
        description="Needed before this round of the turn (0-based); the turn's number of rounds: "
        "before its final answer. A round the turn does not have is refused.",
    )


class AgentSpec(Section):
    """How the fake agent answers reasoning calls.

    `script` plays the workload as written. `policy` plays it too, and reacts to what compression
    did: after a compression while tasks are open it first calls TaskList, and when a needed probe
    is no longer in the request it reads the offloaded file that holds it back (a built-in `Read`
    tool), so a run shows tokens per task as well as tokens per request.
    """

    kind: Literal["script", "policy"] = Field(default="script", description="script or policy.")
    needs: list[NeedSpec] = Field(
        default_factory=list, description="policy: probes the agent needs, and when."
    )
    relist_after_compression: bool = Field(
        default=True, description="policy: call TaskList after a compression while tasks are open."
    )
    max_rereads: int = Field(default=3, ge=0, description="policy: offloaded files read per missing probe.")


class ModelSpec(Section):
    """The fake model's window, the summarizer, and how summary calls are counted."""

    agent: AgentSpec = Field(default_factory=AgentSpec, description="How the agent answers reasoning calls.")
    context_size: int = Field(gt=0, description="The window in tokens.")
    summarizer: SummarizerField = Field(
        default_factory=FixedSummarizerSpec, description="Which fake summarizer answers summary requests."
    )
    summary_token_count: Convention = Field(
        default="as_sent",
        description="Which count of a summary request is its input_tokens: as_sent (what the provider "
        "receives), preflight (AgentScope's own estimate) or messages (the messages alone).",
    )
    tokenizer: Tokenizer = Field(
        default="agentscope",
        description="How tokens are counted: agentscope (its byte estimate) or a real BPE encoding "
        "(needs the tokenizers extra).",
    )

    @field_validator("summarizer", mode="before")
    @classmethod
    def _known_kind(cls, value: Any) -> Any:
        if isinstance(value, dict):
            problem = summarizer_problem(value.get("kind", "fixed"))
            if problem:
                raise located_error("ModelSpec", [(("kind",), problem, value.get("kind"))])
        return value


class PricesSpec(Section):
    """Prices per million tokens (relative units by default: input 1)."""

    input: float = Field(
        default=1.0,
        ge=0,
        description="Input where no prompt cache is metered; every ctxlab run meters one, so uncached "
        "input is billed at cache_write and this price bills nothing.",
    )
    cached_read: float = Field(default=0.1, ge=0, description="Input read from the prompt cache.")
    cache_write: float = Field(default=1.25, ge=0, description="Input written to the prompt cache.")
    output: float = Field(default=4.0, ge=0, description="Output tokens.")


def entry_model(entry: object) -> type[StrategyEntry]:
    """The model of a raw strategy entry (by its preset; the common one when unknown)."""
    preset = entry.get("preset") if isinstance(entry, dict) else None
    return ENTRIES[preset] if isinstance(preset, str) and preset in ENTRIES else StrategyEntry


class Scenario(Section):
    """One scenario file: a workload, a model, and the strategies to run on it."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        title="ctxlab scenario",
        json_schema_extra={
            "description": "A ctxlab scenario (README.md, Scenario files). Run it with `ctxlab run FILE`."
        },
    )

    name: str = Field(
        pattern=NAME_PATTERN, max_length=NAME_MAX_LENGTH, description="Results go to <out>/<name>/."
    )
    description: str = Field(default="", description="What this scenario asks, in one sentence.")
    seed: int = Field(default=0, ge=0, description="Seeds every generated text.")
    workload: WorkloadSpec
    model: ModelSpec
    prices: PricesSpec = Field(default_factory=PricesSpec)
    strategies: list[StrategyField] = Field(
        min_length=1, description="One or more strategies, each run on the same workload."
    )
    sweep: dict[str, list[Any]] = Field(
        default_factory=dict,
        description="Dotted path -> values; every combination is run (the last path varies fastest).",
    )
    record_requests: bool = Field(
        default=False, description="Write every request to requests/<run_id>.jsonl.gz."
    )
    delegate: DelegateSpec | None = Field(
        default=None,
        description="How sub-agents (delegated calls) run: their strategy, window and summarizer; "
        "default: the parent's.",
    )
    tune: TuneSpec | None = Field(
        default=None, description="What `ctxlab tune` searches (`ctxlab run` runs the strategies only)."
    )

    @model_serializer(mode="wrap")
    def _without_tune(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No `tune` key without a tune section: other files' resolved scenarios stay as they were."""
        data: dict[str, Any] = handler(self)
        if data.get("tune") is None:
            data.pop("tune", None)
        return data

    @field_validator("strategies", mode="before")
    @classmethod
    def _known_presets(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        problems: list[tuple[Loc, str, object]] = []
        for i, entry in enumerate(value):
            if isinstance(entry, dict) and "preset" in entry:
                problem = preset_problem(entry["preset"])
                if problem:
                    problems.append(((i, "preset"), problem, entry["preset"]))
        if problems:
            raise located_error("Scenario", problems)
        return value

    @model_validator(mode="before")
    @classmethod
    def _sweep_paths(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("sweep"), dict):
            return data
        problems = list(sweep_problems(data))
        if problems:
            raise located_error("Scenario", problems)
        return data

    @model_validator(mode="before")
    @classmethod
    def _tune_paths(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        problems = tune_problems(data, cls, entry_model)
        if problems:
            raise located_error("Scenario", problems)
        return data

    @model_validator(mode="after")
    def _needs_name_probes(self) -> Scenario:
        agent = self.model.agent
        if agent.kind != "policy":
            return self
        keys = {p.key for p in self.workload.probes}
        if self.workload.generator is not None:
            keys |= {
                str(p.get("key"))
                for p in self.workload.generator.params.get("probes", [])
                if isinstance(p, dict)
            }
        problems: list[tuple[Loc, str, object]] = [
            (
                ("model", "agent", "needs", i, "key"),
                f"names no planted probe; plant it in workload.probes "
                f"(planted: {name_list(sorted(keys)) or 'none'})",
                need.key,
            )
            for i, need in enumerate(agent.needs)
            if need.key not in keys
        ]
        if problems:
            raise located_error("Scenario", problems)
        return self

    @model_validator(mode="after")
    def _subagents_have_a_workspace(self) -> Scenario:
        """Sub-agents write to their parent's workspace: a parent without one cannot run a
        `delegate.strategy` that needs one."""
        entry = self.delegate.strategy if self.delegate is not None else None
        reason = workspace_need(entry) if entry is not None else None
        if not reason:
            return self
        message = (
            f"workspace: none keeps no files, but sub-agents run in their parent's workspace and "
            f"delegate.strategy's {reason}; use workspace: memory or directory"
        )
        problems: list[tuple[Loc, str, object]] = [
            (("strategies", i, "workspace"), message, parent.workspace)
            for i, parent in enumerate(self.strategies)
            if parent.workspace == "none"
        ]
        if problems:
            raise located_error("Scenario", problems)
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> Scenario:
        seen: dict[str, int] = {}
        problems: list[tuple[Loc, str, object]] = []
        for i, entry in enumerate(self.strategies):
            if entry.name in seen:
                message = (
                    f"strategy name {entry.name!r} is also strategies[{seen[entry.name]}]'s; give each "
                    "strategy its own `name`"
                )
                problems.append((("strategies", i, "name"), message, entry.name))
            seen.setdefault(entry.name, i)
        if problems:
            raise located_error("Scenario", problems)
        return self


def sweep_problems(data: dict[str, Any]) -> list[tuple[Loc, str, object]]:
    """Problems of the raw `sweep:` section: paths that name nothing, empty or repeated values."""
    problems: list[tuple[Loc, str, object]] = []
    size = 1
    named: dict[str, Loc] = {}
    for key, values in data["sweep"].items():
        try:
            loc = resolve(str(key), data, Scenario, entry_model)
        except SweepPathError as error:
            problems.append((("sweep", key), f"sweep path {key!r} names nothing: {error}", key))
            continue
        other = overlapping(loc, named)
        if other is not None:
            problems.append((("sweep", key), overlap_message("sweep path", other), key))
        named[str(key)] = loc
        if not isinstance(values, list):
            continue  # the field's type check reports it
        if not values:
            problems.append((("sweep", key), "has no values; list one or more", values))
        repeated = _first_repeat(values)
        if repeated is not None:
            problems.append(
                (("sweep", key, repeated), "repeats an earlier value; list each value once", None)
            )
        size *= max(len(values), 1)
    if size > MAX_GRID_POINTS:
        message = (
            f"the sweep has {size:,} combinations, over the limit of {MAX_GRID_POINTS:,}; sweep fewer values"
        )
        problems.append((("sweep",), message, None))
    return problems


def _first_repeat(values: list[Any]) -> int | None:
    seen: set[str] = set()
    for i, value in enumerate(values):
        same = int(value) if isinstance(value, float) and value.is_integer() else value  # 4000.0 is 4000
        key = json.dumps(same, sort_keys=True, default=str)
        if key in seen:
            return i
        seen.add(key)
    return None


def _chosen_by(field: str, models: dict[str, type[BaseModel]], default: str | None = None) -> dict[str, Any]:
    """A JSON Schema object that applies the model named by `field` (if/then per name, rather
    than pydantic's `oneOf`), so an editor reports a mistake inside the object, not "no match"."""
    tag: dict[str, Any] = {"enum": list(models), "description": f"Which {field}."}
    if default is not None:
        tag["default"] = default
    branches = []
    for name, model in models.items():
        condition: dict[str, Any] = {"properties": {field: {"const": name}}}
        if name != default:
            condition["required"] = [field]
        branches.append({"if": condition, "then": {"$ref": f"#/$defs/{model.__name__}"}})
    out: dict[str, Any] = {"type": "object", "properties": {field: tag}, "allOf": branches}
    if default is None:
        out["required"] = [field]
    return out


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of scenario files, for editors (`ctxlab schema`)."""
    # Every preset's entry model is defined beside the scenario's own parts.
    models: list[type[BaseModel]] = [Scenario, *ENTRIES.values()]
    _, together = models_json_schema([(m, "validation") for m in models], ref_template="#/$defs/{model}")
    defs = together["$defs"]
    schema = {"$defs": defs, **defs.pop(Scenario.__name__)}
    del defs[StrategyEntry.__name__]  # each entry is its preset's (`_chosen_by` below)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["properties"]["strategies"]["items"] = _chosen_by("preset", dict(ENTRIES))
    summarizer = schema["$defs"]["ModelSpec"]["properties"]["summarizer"]
    description = summarizer.get("description", "")
    chosen = _chosen_by("kind", {name: s.params for name, s in SUMMARIZERS.items()}, default="fixed")
    schema["$defs"]["ModelSpec"]["properties"]["summarizer"] = {"description": description, **chosen}
    delegate = schema["$defs"]["DelegateSpec"]["properties"]
    entries = schema["properties"]["strategies"]["items"]
    for field, union in (("strategy", entries), ("summarizer", chosen)):
        delegate[field] = {"description": delegate[field].get("description", ""), **union}
    return schema
