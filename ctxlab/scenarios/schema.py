"""The scenario file (README.md, Scenario files) as pydantic models: workload, model, prices,
strategies, sweep.

Invariants:
- Every model forbids unknown keys, at every depth; the JSON Schema for editors is generated
  from these models (`scenario_json_schema`), so the two never disagree.
- The strategy and summarizer unions are built from the registry (`ctxlab.scenarios.registry`):
  a new preset needs no change here. An unknown preset or summarizer kind is reported at its
  own field with the known names and a "did you mean".
- A workload has exactly one source: `script`, `generator` or `trace`. Trace and tool files are
  read relative to the scenario's folder when a `base_dir` is in the validation context, and
  their texts are kept in the context's `files` (a missing or unreadable file is a load error).
- Every sweep path names a field (checked against these models with the document's own
  strategy names and generator), and every sweep list holds one or more distinct values.
- Strategy names are unique within a scenario.
"""

from __future__ import annotations

import datetime as dt
import json
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from ctxlab.core.world.script import Script
from ctxlab.engine.trace import Convention
from ctxlab.presets.entries import NAME_PATTERN, StrategyEntry
from ctxlab.presets.registry import ENTRIES
from ctxlab.problems import Loc, Problem, WorkloadError, located_error
from ctxlab.scenarios.fields import DelegateSpec, StrategyField, SummarizerField
from ctxlab.scenarios.registry import SUMMARIZERS, preset_problem, summarizer_problem
from ctxlab.scenarios.summarizers import FixedSummarizerSpec
from ctxlab.scenarios.sweep import SweepPathError, resolve
from ctxlab.scenarios.tune import TuneSpec, tune_problems
from ctxlab.workloads.format import ProbeSpec, ScriptSpec, check_timezone
from ctxlab.workloads.generators import GeneratorSpec
from ctxlab.workloads.importers import ImportFormat, detect_file, read_any, replay_text
from ctxlab.workloads.probes import Planted, Probe, plant
from ctxlab.workloads.trace import TraceError, TraceWorkload, load_tools, parse_tools

MAX_GRID_POINTS = 10_000
"""More points than this is a mistake in a scenario file (or belongs in a script of its own)."""

Tokenizer = Literal["agentscope", "o200k_base", "cl100k_base"]


class Section(BaseModel):
    """Base of the scenario's own sections: frozen, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ClockSpec(Section):
    """When the virtual clock starts, and in which zone."""

    start: dt.datetime = Field(
        default=dt.datetime(2026, 1, 1),
        description="ISO date and time; without an offset it is read in `timezone`.",
    )
    timezone: str = Field(default="UTC", description="IANA zone, e.g. UTC or Asia/Shanghai.")

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        return check_timezone(value)

    def aware_start(self) -> dt.datetime:
        """The start with its zone (a start without an offset is read in `timezone`)."""
        if self.start.tzinfo is not None:
            return self.start
        return self.start.replace(tzinfo=zoneinfo.ZoneInfo(self.timezone))


class TraceSpec(Section):
    """A transcript to replay: OpenAI chat JSONL, or any format `ctxlab import` reads (detected
    from the file's content unless `format` is given)."""

    path: str = Field(min_length=1, description="The transcript file, relative to the scenario's folder.")
    tools: str | None = Field(
        default=None,
        description="A JSON file of tool schemas; default: the file's own, else inferred from the calls.",
    )
    name: str | None = Field(default=None, description="The workload's name; default: the file's stem.")
    format: ImportFormat | None = Field(
        default=None, description="The transcript's format; default: detected from its content."
    )

    @model_serializer(mode="wrap")
    def _without_default_format(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No `format` key when detected, so results written before formats existed keep their hashes."""
        data: dict[str, Any] = handler(self)
        if data.get("format") is None:
            data.pop("format", None)
        return data

    @model_validator(mode="after")
    def _readable(self, info: ValidationInfo) -> TraceSpec:
        context = info.context or {}
        if "base_dir" not in context:
            return self
        base, files = Path(context["base_dir"]), context.setdefault("files", {})
        checked = context.setdefault("checked", set())
        if (self.path, self.tools) in checked:
            return self
        problems = _file_problems(self, base, files, context.setdefault("trace_warnings", {}))
        if problems:
            raise located_error("TraceSpec", problems)
        checked.add((self.path, self.tools))
        return self


def _file_problems(
    trace: TraceSpec, base: Path, files: dict[str, str], warnings: dict[str, tuple[str, ...]]
) -> list[tuple[Loc, str, object]]:
    """Read the trace and tools files once each; the problems, located at their fields. What an
    importer could not map (not for the lab's own OpenAI chat JSONL) goes to `warnings`, by path."""
    wanted = [("path", trace.path)] + ([("tools", trace.tools)] if trace.tools else [])
    for field, written in wanted:
        full = base / written
        if written in files:
            continue
        if not full.is_file():
            return [
                (
                    (field,),
                    f"no such file {str(full)!r}; paths are relative to the scenario's folder",
                    written,
                )
            ]
        try:
            files[written] = full.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            return [((field,), f"cannot read {str(full)!r}: {error}", written)]
    try:
        tools = load_tools(base / trace.tools) if trace.tools else ()
        replayed = read_any(base / trace.path, fmt=trace.format, tools=tools)
        if not detect_file(base / trace.path, trace.format)[1]:
            warnings[trace.path] = replayed.notes
    except TraceError as error:
        field = "tools" if trace.tools and error.source == str(base / trace.tools) else "path"
        return [((field,), f"cannot replay: {error}", getattr(trace, field))]
    return []


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """A built workload: the script (probes planted, clock set), its probes, and the source's own
    protocol violations (a replayed transcript's; none for scripts and generators)."""

    script: Script
    probes: tuple[Probe, ...]
    source_violations: int


class WorkloadSpec(Section):
    """What the user and the tools say: exactly one of `script`, `generator` or `trace`."""

    clock: ClockSpec = Field(default_factory=ClockSpec, description="The virtual clock's start.")
    probes: list[ProbeSpec] = Field(default_factory=list, description="Facts, rules and artifacts to plant.")
    script: ScriptSpec | None = Field(default=None, description="Turns, rounds and tool calls written out.")
    generator: GeneratorSpec | None = Field(default=None, description="A named, seeded generator.")
    trace: TraceSpec | None = Field(default=None, description="A real transcript to replay.")

    @model_validator(mode="after")
    def _one_source(self) -> WorkloadSpec:
        given = [name for name in ("script", "generator", "trace") if getattr(self, name) is not None]
        if len(given) == 1:
            return self
        loc: Loc = (given[1],) if given else ()
        message = (
            f"a workload has exactly one source, but {' and '.join(given)} are both given; keep one"
            if given
            else "a workload needs one source: script, generator or trace; add one"
        )
        raise located_error("WorkloadSpec", [(loc, message, None)])

    def build(self, seed: int, files: Mapping[str, str]) -> Workload:
        """The workload's script for `seed`, reading trace and tool files from `files` (their texts).

        Building is a pure function of its inputs, so the last few workloads built in this process
        are kept: loading checks a workload by building it, and the run in the same process that
        follows (or the next strategy on the same workload) takes the same value back.

        Raises:
            WorkloadError: a probe cannot be planted; problems are located inside this section.
        """
        key = (seed, self.model_dump_json(), tuple(sorted(files.items())))
        built = _BUILT.get(key)
        if built is None:
            built = self._build(seed, files)
            _BUILT[key] = built
            while len(_BUILT) > BUILT_KEPT:
                del _BUILT[next(iter(_BUILT))]
        return built

    def _build(self, seed: int, files: Mapping[str, str]) -> Workload:
        start, zone = self.clock.aware_start(), self.clock.timezone
        violations = 0
        probes: tuple[Probe, ...] = ()
        if self.script is not None:
            script = self.script.to_script(seed, start=start, timezone=zone)
        elif self.generator is not None:
            planted = _prefixed(lambda: self.generator.generate(seed), ("generator",))  # type: ignore[union-attr]
            script, probes = replace(planted.script, start=start, timezone=zone), planted.probes
        else:
            assert self.trace is not None
            replayed = replay_trace(self.trace, files)
            script, violations = (
                replace(replayed.script, start=start, timezone=zone),
                len(replayed.source_violations),
            )
        planted = _prefixed(lambda: plant(script, [p.probe() for p in self.probes]), ())
        return Workload(script=planted.script, probes=probes + planted.probes, source_violations=violations)


BUILT_KEPT = 4
"""How many built workloads a process keeps (`WorkloadSpec.build`)."""
_BUILT: dict[tuple[int, str, tuple[tuple[str, str], ...]], Workload] = {}


def _prefixed(build: Callable[[], Planted], prefix: Loc) -> Planted:
    try:
        return build()
    except WorkloadError as error:
        problems = [Problem(loc=(*prefix, *p.loc), message=p.message) for p in error.problems]
        raise WorkloadError(problems) from None


def replay_trace(trace: TraceSpec, files: Mapping[str, str]) -> TraceWorkload:
    """The workload of a transcript whose text (and tool file's text) is in `files`."""
    tools = parse_tools(json.loads(files[trace.tools]), source=trace.tools) if trace.tools else ()
    name = trace.name or Path(trace.path).stem
    return replay_text(files[trace.path], trace.path, fmt=trace.format, tools=tools, name=name)


class NeedSpec(Section):
    """A planted probe the agent needs before a round: when it is gone, the agent looks for it."""

    key: str = Field(description="The probe's key (it must be planted in workload.probes).")
    turn: int = Field(ge=0, description="The turn (0-based) that needs it.")
    round: int = Field(default=0, ge=0, description="Needed before this round of the turn (0-based).")


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

    input: float = Field(default=1.0, ge=0, description="Uncached input, per million tokens.")
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

    name: str = Field(pattern=NAME_PATTERN, description="Results go to <out>/<name>/.")
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
                f"(planted: {', '.join(sorted(keys)) or 'none'})",
                need.key,
            )
            for i, need in enumerate(agent.needs)
            if need.key not in keys
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
    for key, values in data["sweep"].items():
        try:
            resolve(str(key), data, Scenario, entry_model)
        except SweepPathError as error:
            problems.append((("sweep", key), f"sweep path {key!r} names nothing: {error}", key))
            continue
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
        key = json.dumps(value, sort_keys=True, default=str)
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
    schema = Scenario.model_json_schema()
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
