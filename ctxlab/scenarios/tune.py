"""The `tune:` section of a scenario file (README.md, Tuning): what `ctxlab tune` searches, for
what, under which constraints.

Invariants:
- Like every section, unknown keys are refused at every depth, and every problem is located at
  its own field (`tune.space[0].params.context.trigger_ratio.low`).
- A parameter is a dotted path into its preset's scenario entry, checked as a sweep path is
  (`strategies.<name>.<path>`): a path that names nothing, or a strategy's `name` or `preset`,
  is refused at load time, with a "did you mean".
- Every bound and choice is checked against the preset's own rules for that field at load time
  (a trigger ratio above 0.9 fails there), and so is a value inside a range of decimals (so
  `{low: 1, high: 5.0}` for a whole-number setting fails there too); rules across fields (reserve
  below trigger) are checked per trial, where a sampled combination that breaks one is an
  infeasible trial.
- A range is a float range unless its bounds (and step) are whole numbers, which make it an
  integer range, whose bounds lie within `MAX_WHOLE` either way; `log: true` needs a positive
  low bound; a step leaves at most `MAX_STEPS` steps (a finer one is no decimal setting, and
  exact arithmetic on it fails).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, StrictInt, ValidationError, model_validator

from ctxlab.presets.entries import NAME_MAX_LENGTH
from ctxlab.presets.registry import ENTRIES
from ctxlab.problems import NAME_PATTERN, Loc, explain, located_error
from ctxlab.scenarios.registry import preset_problem
from ctxlab.scenarios.section import Section
from ctxlab.scenarios.sweep import SweepPathError, overlap_message, overlapping, resolve, set_at

Objective = Literal["cost", "total_input_tokens", "peak_input_tokens"]
Provider = Literal["openai", "anthropic", "bedrock"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "bedrock")
FIRST_PARTY: tuple[Provider, ...] = ("openai", "anthropic")  # the default; Bedrock is stricter
MAX_TRIALS = 10_000
MAX_STEPS = 10**15
MAX_WHOLE = 2**53
"""The largest whole number, either way, an integer range may reach: Optuna samples integer
ranges through floating point, which holds every whole number only up to 2^53."""


def _repeated(choices: Sequence[Any]) -> tuple[Any, Any] | None:
    """The first choice equal to one before it, with that one (`1.0` equals `1`, and `true` does
    too: the sampler gives the first of equal choices back, so a later one is never tried)."""
    for k, later in enumerate(choices):
        for earlier in choices[:k]:
            if later == earlier:
                return later, earlier
    return None


def _a_number(value: Any) -> Any:
    """Only numbers pass (not true or false): one message for a value that is neither a whole
    number nor a decimal, rather than one per kind of number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number; use a number, e.g. 0.5 or 4000")
    return value


Number = Annotated[StrictInt | float, BeforeValidator(_a_number)]


def last_step(low: float, high: float, step: float) -> float:
    """The highest value whole steps reach from `low` without passing `high`, in the decimal
    digits written (where Optuna's search of the range stops).

    >>> last_step(0.05, 0.45, 0.1), last_step(0.05, 0.45, 0.5), last_step(1000, 9001, 2000)
    (0.45, 0.05, 9000)
    """
    start, stride = Decimal(str(low)), Decimal(str(step))
    last = start + (Decimal(str(high)) - start) // stride * stride
    return int(last) if isinstance(low, int) and isinstance(step, int) else float(last)


class ParamSpec(Section):
    """One searched parameter: a range (`low`, `high`, optional `log` or `step`) or `choices`."""

    low: Number | None = Field(default=None, description="The smallest value (a range).")
    high: Number | None = Field(default=None, description="The largest value (a range).")
    log: bool = Field(default=False, description="Sample the range on a log scale (low must be above 0).")
    step: Number | None = Field(default=None, gt=0, description="Sample the range in steps of this size.")
    choices: list[Any] | None = Field(default=None, min_length=1, description="The values to choose from.")

    @property
    def integer(self) -> bool:
        """An integer range: whole-number bounds (and step)."""
        bounds = (self.low, self.high, *(() if self.step is None else (self.step,)))
        return self.choices is None and all(isinstance(v, int) for v in bounds)

    @model_validator(mode="after")
    def _one_form(self) -> ParamSpec:
        problems: list[tuple[Loc, str, object]] = []
        ranged = self.low is not None or self.high is not None
        if self.choices is not None and (ranged or self.log or self.step is not None):
            problems.append(((), "give either choices or a range (low, high), not both", None))
        elif self.choices is None and (self.low is None or self.high is None):
            missing = "high" if self.low is not None else "low"
            problems.append(((missing,), "is required for a range; or give choices: [...] instead", None))
        elif self.low is not None and self.high is not None:
            problems.extend(self._range_problems(self.low, self.high))
        repeated = _repeated(self.choices) if self.choices is not None else None
        if repeated is not None:
            later, earlier = repeated
            told = "" if repr(later) == repr(earlier) else f" ({later!r} equals {earlier!r})"
            problems.append((("choices",), f"repeats a value{told}; list each value once", self.choices))
        if problems:
            raise located_error("ParamSpec", problems)
        return self

    def _range_problems(self, low: float, high: float) -> list[tuple[Loc, str, object]]:
        if low >= high:
            message = f"{high!r} is not above low {low!r}; raise high above low, or lower low below high"
            return [(("high",), message, high)]
        if self.log and low <= 0:
            message = f"{low!r}: a log range needs a low bound above 0; raise low, or drop log"
            return [(("low",), message, low)]
        if self.log and self.step is not None:
            return [(("step",), "a log range has no step; drop one of them", self.step)]
        if self.integer:
            beyond = [(key, value) for key, value in (("low", low), ("high", high)) if abs(value) > MAX_WHOLE]
            if beyond:
                key, value = beyond[0]
                message = (
                    f"{value!r} is beyond {MAX_WHOLE:,} (2^53) either way, where Optuna, which samples "
                    "whole numbers through floating point, cannot hold them; give a range within it"
                )
                return [((key,), message, value)]
        if self.step is not None and (high - low) / self.step > MAX_STEPS:
            message = (
                f"{self.step!r} cuts the range {low!r} to {high!r} into more than 10^15 steps, more "
                f"than a {'whole-number' if self.integer else 'decimal'} setting's search can tell "
                "apart; use a larger step, or no step"
            )
            return [(("step",), message, self.step)]
        last = None if self.step is None else last_step(low, high, self.step)
        if last is not None and last != high:
            message = (
                f"{self.step!r} does not divide the range {low!r} to {high!r}, so Optuna would "
                f"search only up to {last!r}; make high - low a multiple of the step"
            )
            return [(("step",), message, self.step)]
        return []

    def values(self) -> list[Any]:
        """The values whose own rules are checked at load time: the choices, or both bounds."""
        return list(self.choices) if self.choices is not None else [self.low, self.high]


class ConstraintsSpec(Section):
    """What a setting must meet to count: a run never fails, and these hold."""

    providers: list[Provider] = Field(
        default_factory=lambda: list(FIRST_PARTY),
        description="No request may break these providers' tool-call rules (openai, anthropic; "
        "add bedrock for Bedrock's Converse API, which also wants a user message first).",
    )
    over_window: int = Field(default=0, ge=0, description="The most requests allowed over the window.")
    retention: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="The least retention of planted probes (the lowest of facts, rules and artifacts "
        "measured); needs probes in the workload.",
    )


class SpaceEntry(Section):
    """One preset to search, with the settings searched and the settings held fixed."""

    preset: str = Field(description="The preset (see `ctxlab presets`).")
    name: str | None = Field(
        default=None,
        pattern=NAME_PATTERN,
        max_length=NAME_MAX_LENGTH,
        description="The candidate's name; default: the preset's.",
    )
    params: dict[str, ParamSpec] = Field(
        default_factory=dict,
        description="Dotted path in the preset's entry -> a range {low, high, log, step} or {choices}.",
    )
    fixed: dict[str, Any] = Field(
        default_factory=dict, description="Dotted path in the preset's entry -> a value held fixed."
    )

    @property
    def label(self) -> str:
        """The candidate's name (the preset's when not given)."""
        return self.name or self.preset


class TuneSpec(Section):
    """`ctxlab tune`'s search: the objective, the constraints, the budget and the space."""

    objective: Objective = Field(
        default="cost",
        description="What to minimise: cost (with prompt caching), total_input_tokens or peak_input_tokens.",
    )
    constraints: ConstraintsSpec = Field(default_factory=ConstraintsSpec)
    trials: int = Field(default=50, ge=1, le=MAX_TRIALS, description="How many settings to try.")
    seed: int = Field(default=0, ge=0, description="Seeds the sampler.")
    space: list[SpaceEntry] = Field(min_length=1, description="The presets to search and their parameters.")


EntryModel = Callable[[object], Any]


def tune_problems(data: dict[str, Any], root: type[BaseModel], entry_model: EntryModel) -> list[Any]:
    """Problems of a raw `tune:` section that its own models cannot see: paths into the presets'
    entries, bounds and choices a preset refuses, repeated candidate names, and a sweep beside it."""
    tune = data.get("tune")
    if not isinstance(tune, dict):
        return []
    problems: list[tuple[Loc, str, object]] = []
    if data.get("sweep"):
        message = (
            "cannot be combined with a sweep: tune searches one workload and model; "
            "move the sweep to another file, or search the swept setting here"
        )
        problems.append((("tune",), message, None))
    problems.extend(_probe_problems(data, tune))
    space = tune.get("space")
    seen: dict[str, int] = {}
    for i, entry in enumerate(space if isinstance(space, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("preset"), str):
            continue
        preset = entry["preset"]
        found = preset_problem(preset)
        if found:
            problems.append((("tune", "space", i, "preset"), found, preset))
            continue
        named = entry.get("name")
        label = named if isinstance(named, str) and named else preset  # another name's type is told
        if label in seen:
            message = f"candidate {label!r} is also tune.space[{seen[label]}]'s; give each its own `name`"
            problems.append((("tune", "space", i, "name"), message, label))
        seen.setdefault(label, i)
        problems.extend(_entry_problems(("tune", "space", i), preset, entry, root, entry_model))
    return problems


def _probe_problems(data: dict[str, Any], tune: dict[str, Any]) -> list[tuple[Loc, str, object]]:
    """A retention floor with no probe planted to measure it."""
    constraints = tune.get("constraints")
    floor = constraints.get("retention") if isinstance(constraints, dict) else None
    if floor is None:
        return []
    workload = _mapping(data.get("workload"))
    params = _mapping(_mapping(workload.get("generator")).get("params"))
    if workload.get("probes") or params.get("probes"):
        return []
    message = "needs planted probes to measure; plant some in workload.probes, or drop the floor"
    return [(("tune", "constraints", "retention"), message, floor)]


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _entry_problems(
    at: Loc, preset: str, entry: dict[str, Any], root: type[BaseModel], entry_model: EntryModel
) -> list[tuple[Loc, str, object]]:
    problems: list[tuple[Loc, str, object]] = []
    named: dict[str, Loc] = {}
    for section in ("params", "fixed"):
        given = entry.get(section)
        for key, spec in (given if isinstance(given, dict) else {}).items():
            try:
                loc = setting_loc(preset, str(key), root, entry_model)
            except SweepPathError as error:
                said = str(error).replace("strategies.candidate.", "").replace("strategies.candidate", "it")
                problems.append(((*at, section, key), f"names no setting of preset {preset!r}: {said}", key))
                continue
            other = overlapping(loc, named)
            if other is not None:
                problems.append(((*at, section, key), overlap_message("setting", other), key))
            named[str(key)] = loc
            values = _values(spec) if section == "params" else [((), spec)]
            refusals = [(index, value, refused(preset, loc, value)) for index, value in values]
            problems.extend(((*at, section, key, *i), why, v) for i, v, why in refusals if why)
            inside = _inside(spec) if section == "params" and not any(why for *_, why in refusals) else None
            refusal = None if inside is None else refused(preset, loc, inside)
            if refusal:
                message = (
                    f"a range with a decimal bound samples decimals such as {inside!r}, and {refusal}; "
                    "write low and high as whole numbers to search whole numbers"
                )
                problems.append(((*at, section, key), message, spec))
    return problems


def setting_loc(preset: str, key: str, root: type[BaseModel], entry_model: EntryModel) -> Loc:
    """The path `key` names inside an entry of `preset` (as a sweep path under the strategy).

    Raises:
        SweepPathError: it names nothing, or a setting that cannot vary (`name`, `preset`).
    """
    doc = {"strategies": [{"name": "candidate", "preset": preset}]}
    loc = resolve(f"strategies.candidate.{key}", doc, root, entry_model)
    return loc[2:]


def _values(spec: object) -> list[tuple[Loc, Any]]:
    """A raw parameter's values to check, each with its path in the parameter."""
    if not isinstance(spec, dict):
        return []
    try:
        parsed = ParamSpec.model_validate(spec)
    except ValidationError:
        return []  # the section's own validation reports it
    if parsed.choices is not None:
        return [(("choices", i), value) for i, value in enumerate(parsed.choices)]
    return [(("low",), parsed.low), (("high",), parsed.high)]


def _inside(spec: object) -> float | None:
    """A value strictly inside a raw parameter's range of decimals (no step: Optuna samples any
    float there), or None for choices, whole-number or stepped ranges and what does not parse."""
    values = dict(_values(spec))
    low, high = values.get(("low",)), values.get(("high",))
    stepped = isinstance(spec, dict) and spec.get("step") is not None
    if low is None or high is None or stepped or (isinstance(low, int) and isinstance(high, int)):
        return None
    return float(low + (high - low) / 3)


def refused(preset: str, loc: Loc, value: Any) -> str | None:
    """Why `preset`'s entry refuses `value` at `loc`, or None (rules across fields are not checked)."""
    entry = set_at({"name": "candidate", "preset": preset}, loc, value)
    try:
        ENTRIES[preset].model_validate(entry)
    except ValidationError as error:
        for item in error.errors():
            where = tuple(k for k in item["loc"] if isinstance(k, str | int))
            if where[: len(loc)] == loc and where:
                return f"preset {preset!r} refuses it: {explain(item)}"
    return None


PROBES_PER_ENTRY = 64
"""The most settings of one space entry tried at load time (`probe_settings`)."""


def probe_settings(entry: SpaceEntry) -> list[tuple[tuple[str, Any], ...]] | None:
    """Searched values that stand for `entry`'s whole space: each parameter at its bounds and
    middle, or at each choice, in every combination (None: more than `PROBES_PER_ENTRY`).

    The presets' rules across settings bound one setting by others, so a space in which none of
    these settings can run is taken to hold no setting that can.
    """
    grids = [[(path, value) for value in _probe_values(spec)] for path, spec in entry.params.items()]
    if math.prod(len(grid) for grid in grids) > PROBES_PER_ENTRY:
        return None
    return list(itertools.product(*grids))


def _probe_values(spec: ParamSpec) -> list[Any]:
    if spec.choices is not None:
        return list(spec.choices)
    assert spec.low is not None and spec.high is not None
    low, high = spec.low, spec.high
    if spec.log:
        middle: Any = math.sqrt(low * high)
    elif spec.step is not None:
        middle = low + spec.step * math.floor((high - low) / spec.step / 2)
    else:
        middle = (low + high) / 2
    if spec.integer:
        middle = int(middle)
    return list(dict.fromkeys([low, middle, high]))


def candidate_entry(
    entry: SpaceEntry,
    label: str,
    values: Sequence[tuple[str, Any]],
    root: type[BaseModel],
    entry_model: EntryModel,
) -> dict[str, Any]:
    """The strategy entry of a candidate: its name and preset, the fixed settings, the values."""
    out: dict[str, Any] = {"name": label, "preset": entry.preset}
    for path, value in [*entry.fixed.items(), *values]:
        out = set_at(out, setting_loc(entry.preset, path, root, entry_model), value)
    return out


def unrunnable_message(entry: SpaceEntry, reason: str) -> str:
    """The problem of a space entry none of whose probe settings can run, for `reason`."""
    if entry.params:
        return (
            f"no setting of candidate {entry.label!r} can run: every one tried (each searched "
            f"setting at its bounds and middle, or each choice) is refused: {reason}; change the "
            "ranges or the fixed settings so they can agree"
        )
    if entry.fixed:
        return f"these settings break a rule together: {reason}; change one of them"
    return f"its trial cannot run: {reason}"
