"""A scenario's `workload:` section: its one source (a script, a generator or a transcript),
the clock, the probes to plant, and how it is built into a `Script`.

Invariants:
- A workload has exactly one source: `script`, `generator` or `trace`. Trace and tool files are
  read relative to the scenario's folder when a `base_dir` is in the validation context, and
  their texts and sha256 digests are kept in the context's `files` and `digests` (a missing or
  unreadable file is a load error).
- Building is a pure function of the section, the seed and the files' texts; a process keeps
  the last few built (`BUILT_KEPT`), and the last few transcripts replayed (`REPLAYS_KEPT`),
  each within `KEPT_CHARS` of text between them, by the texts' digests: checking a trace
  replays it, and building its workload takes that replay back without asking for the text
  again (`ctxlab.scenarios.sources`).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, held_chars
from ctxlab.problems import Loc, Problem, WorkloadError, located_error
from ctxlab.scenarios.section import Section
from ctxlab.scenarios.sources import digest_of, digests_of, source_text, text_sha256
from ctxlab.workloads.files import is_folder, unreadable, why_no_file
from ctxlab.workloads.format import ProbeSpec, ScriptSpec, check_timezone
from ctxlab.workloads.generators import GeneratorSpec
from ctxlab.workloads.limits import filler_budget
from ctxlab.workloads.probes import Planted, Probe, plant
from ctxlab.workloads.trace import ImportFormat, TraceError, TraceWorkload, load_tools, parse_tools

K = TypeVar("K")
W = TypeVar("W", "Workload", TraceWorkload)  # what `_kept` keeps: a value with a script


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

    @model_validator(mode="after")
    def _shown_everywhere(self) -> ClockSpec:
        """A start the run can show in any zone: a run shows its clock in the scenario's zone, a
        turn's and a strategy's, so one within a day of year 1 or 9999 would fail mid-run."""
        if not within_dates(self.aware_start()):
            message = (
                f"{self.start.isoformat()} (in {self.timezone}) is within a day of the dates a run can "
                "show (years 1 to 9999, in every zone); start after 0001-01-02 and before 9999-12-31"
            )
            raise located_error("ClockSpec", [(("start",), message, self.start.isoformat())])
        return self

    @field_validator("start", mode="before")
    @classmethod
    def _written_date(cls, value: Any) -> Any:
        """A date and time as text only: pydantic reads a number, or a quoted one, as seconds
        since 1970, so `start: 2026` would silently be 1970-01-01T00:33:46."""
        if isinstance(value, bool | int | float) or (isinstance(value, str) and _numeric(value)):
            what = "a yes/no value" if isinstance(value, bool) else "a number"
            raise ValueError(
                f"{value!r} is {what}, not a date and time; write an ISO date and time such as "
                "2026-01-01T09:00:00"
            )
        return value

    def aware_start(self) -> dt.datetime:
        """The start with its zone (a start without an offset is read in `timezone`)."""
        if self.start.tzinfo is not None:
            return self.start
        return self.start.replace(tzinfo=zoneinfo.ZoneInfo(self.timezone))


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


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
    session: int = Field(
        default=0,
        ge=0,
        description="Which conversation of a file holding several (tau-bench, tau2, JSONL of "
        "trajectories, threads or fine-tuning lines) to replay, counted from 0 in file order.",
    )

    @model_serializer(mode="wrap")
    def _without_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No `format` key when detected, no `session` key for the first, so results written
        before either existed keep their hashes."""
        data: dict[str, Any] = handler(self)
        if data.get("format") is None:
            data.pop("format", None)
        if data.get("session") == 0:
            data.pop("session", None)
        return data

    @model_validator(mode="after")
    def _readable(self, info: ValidationInfo) -> TraceSpec:
        context = info.context or {}
        if "base_dir" not in context:
            return self
        base, files = Path(context["base_dir"]), context.setdefault("files", {})
        checked = context.setdefault("checked", set())
        if (self.path, self.tools, self.session) in checked:
            return self
        digests, warnings = context.setdefault("digests", {}), context.setdefault("trace_warnings", {})
        problems = _file_problems(self, base, files, digests, warnings)
        if problems:
            raise located_error("TraceSpec", problems)
        checked.add((self.path, self.tools, self.session))
        return self


def _not_a_file(full: Path, written: str) -> str | None:
    """Why `full` (`written` in the file) is no file to read, or None when it is a regular file."""
    why = why_no_file(full)
    if why is None:
        return None
    shown = _shown(full)
    if why == "is a folder":
        return f"{shown} is a folder; give the transcript file inside it"
    if why != "does not exist":
        return f"{shown} {why}; give the path of an existing file"
    home = (
        " (~ is not expanded: write the path from the scenario's folder)" if written.startswith("~") else ""
    )
    return (
        f"no such file {shown}; give the path of an existing file, relative to the scenario's folder "
        f"or absolute{home}"
    )


def _shown(path: Path) -> str:
    """A path as a message shows it: quoted, and cut when too long to read."""
    text = str(path)
    return repr(text) if len(text) <= 200 else repr(text[:160]) + f"... ({len(text):,} characters)"


def _file_problems(
    trace: TraceSpec,
    base: Path,
    files: dict[str, str],
    digests: dict[str, str],
    warnings: dict[str, tuple[str, ...]],
) -> list[tuple[Loc, str, object]]:
    """Read the trace and tools files once each (their texts to `files`, their sha256 to
    `digests`); the problems, located at their fields. What an importer could not map (not for
    the lab's own OpenAI chat JSONL) goes to `warnings`, by path."""
    from ctxlab.workloads.importers.base import SessionError  # the readers load for a transcript

    wanted = [("path", trace.path)] + ([("tools", trace.tools)] if trace.tools else [])
    for field, written in wanted:
        full = base / written
        if written in files:
            continue
        missing = None if field == "path" and is_folder(full) else _not_a_file(full, written)
        if missing is not None:
            return [((field,), missing, written)]
        try:
            files[written] = source_text(full)
            digests[written] = text_sha256(files[written])
        except OSError as error:
            return [((field,), f"cannot read {str(full)!r}: {error}", written)]
        except UnicodeDecodeError as error:
            return [((field,), f"cannot read {str(full)!r}: {unreadable(full.read_bytes(), error)}", written)]
        except TraceError as error:
            return [((field,), f"cannot replay: {error}", written)]
    try:
        tools = load_tools(base / trace.tools) if trace.tools else ()
        text, source = files[trace.path], str(base / trace.path)  # replayed from the text just read
        digest = digests.get(trace.path) or text_sha256(text)  # read under a context of its own
        replayed = _replay(lambda: text, digest, source, trace=trace, tools=tools)
        warnings[trace.path] = replayed.notes
    except SessionError as error:
        return [(("session",), f"cannot replay: {error}", trace.session)]
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

    @functools.cached_property
    def as_json(self) -> str:
        """The section as JSON, a generator's parameters with their defaults filled in (as a
        run's config holds them): equal texts build the same workload for a seed, and the run
        finds the workload its loading built. Worked out once per section (a long script's is
        long, and loading and the run both key by it)."""
        if self.generator is None:
            return self.model_dump_json()
        resolved = self.generator.model_copy(update={"params": self.generator.resolved_params()})
        return self.model_copy(update={"generator": resolved}).model_dump_json()

    def build(self, seed: int, files: Mapping[str, str]) -> Workload:
        """The workload's script for `seed`, reading trace and tool files from `files` (their texts).

        Building is a pure function of its inputs, so the last few workloads built in this process
        are kept: loading checks a workload by building it, and the run in the same process that
        follows (or the next strategy on the same workload) takes the same value back.

        Raises:
            WorkloadError: a probe cannot be planted; problems are located inside this section.
        """
        key = (seed, self.as_json, tuple(sorted(digests_of(files).items())))
        return _kept(_BUILT, key, lambda: self._build(seed, files), BUILT_KEPT)

    def _build(self, seed: int, files: Mapping[str, str]) -> Workload:
        with filler_budget():
            return self._build_within_budget(seed, files)

    def _build_within_budget(self, seed: int, files: Mapping[str, str]) -> Workload:
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
        late = _clock_problem(script, ("script",) if self.script is not None else ())
        if late is not None:
            raise WorkloadError([late])
        planted = _prefixed(lambda: plant(script, [p.probe() for p in self.probes], probes), ())
        return Workload(script=planted.script, probes=probes + planted.probes, source_violations=violations)


EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC) + dt.timedelta(days=1)
LATEST = dt.datetime.max.replace(tzinfo=dt.UTC) - dt.timedelta(days=1)
"""The instants a run's clock may reach: a day inside the years 1 to 9999, so that the instant
shows in every zone (offsets are under a day)."""


def within_dates(instant: dt.datetime) -> bool:
    """Whether a timezone-aware instant lies between `EARLIEST` and `LATEST`."""
    return EARLIEST <= instant <= LATEST


def _clock_problem(script: Script, at: Loc) -> Problem | None:
    """Where the script's clock, moved turn by turn and round by round as the engine moves it,
    would leave the dates a run can show (`within_dates`), or None."""
    instant = script.start
    for i, turn in enumerate(script.turns):
        for advance in (turn.advance_seconds, *(r.advance_seconds for r in turn.rounds)):
            if not advance:
                continue
            try:
                instant += dt.timedelta(seconds=advance)
                inside = within_dates(instant)
            except OverflowError:
                inside = False
            if not inside:
                start = script.start.isoformat()
                message = (
                    f"the clock advanced here leaves the years 1 to 9999, less a day at each end so that "
                    f"every zone can show it (from {start}); advance it less"
                )
                return Problem(loc=(*at, "turns", i), message=message)
    return None


BUILT_KEPT = 4
"""How many built workloads a process keeps (`WorkloadSpec.build`)."""
KEPT_CHARS = 64 * 1024 * 1024
"""How much text the workloads a process keeps may hold between them (`held_chars` of their
scripts), the built ones and the replayed transcripts each: past it the oldest go, and the
newest stays whatever its size. Four workloads of the largest filler a scenario may ask for
(`MAX_WORKLOAD_BYTES`) would otherwise keep a gigabyte through a sweep's runs."""
_BUILT: dict[tuple[int, str, tuple[tuple[str, str], ...]], tuple[Workload, int]] = {}
"""Built workloads by seed, section and the sha256 of each file's text (not the texts: a long
transcript's would be held for as long as its workload is kept)."""


def forget_kept() -> None:
    """Forget the workloads and transcripts this process keeps, so that the next load reads and
    builds as a fresh process would (a benchmark's repeats)."""
    _BUILT.clear()
    _REPLAYED.clear()


def _prefixed(build: Callable[[], Planted], prefix: Loc) -> Planted:
    try:
        return build()
    except WorkloadError as error:
        problems = [Problem(loc=(*prefix, *p.loc), message=p.message) for p in error.problems]
        raise WorkloadError(problems) from None


def replay_trace(trace: TraceSpec, files: Mapping[str, str]) -> TraceWorkload:
    """The workload of a transcript whose text (and tool file's text) is in `files`; a replay
    this process keeps is given again without the transcript's text being asked for."""
    tools = parse_tools(json.loads(files[trace.tools]), source=trace.tools) if trace.tools else ()
    return _replay(
        lambda: files[trace.path], digest_of(files, trace.path), trace.path, trace=trace, tools=tools
    )


def _trace_name(trace: TraceSpec) -> str:
    return trace.name or Path(trace.path).stem


REPLAYS_KEPT = 2
"""How many replayed transcripts a process keeps (`_replay`)."""
_REPLAYED: dict[tuple[str, str | None, tuple[ToolSchema, ...], str, int], tuple[TraceWorkload, int]] = {}
"""Replayed transcripts by the sha256 of the text, the format, the tools, the name and the session."""


def _replay(
    text: Callable[[], str], digest: str, source: str, *, trace: TraceSpec, tools: tuple[ToolSchema, ...]
) -> TraceWorkload:
    """`replay_text` of the text `text()` gives (whose sha256 is `digest`) as `trace` reads it,
    the same value again for the same digest, format, tools, name and session. `source` is not
    part of the key: it only names the file in a `TraceError`, and a failed replay is not kept."""
    fmt, name, session = trace.format, _trace_name(trace), trace.session
    key = (digest, fmt, tools, name, session)

    def make() -> TraceWorkload:
        from ctxlab.workloads.importers import replay_text  # the readers load for a transcript

        return replay_text(text(), source, fmt=fmt, tools=tools, name=name, session=session)

    return _kept(_REPLAYED, key, make, REPLAYS_KEPT)


def _kept(kept: dict[K, tuple[W, int]], key: K, make: Callable[[], W], limit: int) -> W:
    """`kept[key]`'s workload, made by `make` when missing and kept with the text its script
    holds; the oldest entries go while there are more than `limit` or their texts add up to
    more than `KEPT_CHARS`, the newest staying (a workload `make` fails to make is not kept)."""
    found = kept.get(key)
    if found is None:
        made = make()
        found = kept[key] = (made, held_chars(made.script))
        while len(kept) > limit or (len(kept) > 1 and sum(chars for _, chars in kept.values()) > KEPT_CHARS):
            del kept[next(iter(kept))]
    return found[0]
