"""Workloads: what the fake model and the user say, as core `Script` values (docs/architecture.md,
Workloads).

Three sources, one result: a `script:` section of a scenario (`format`), a named generator
(`generators`), or a replayed transcript (`trace`; agents' own logs read by `importers`).
Filler text is exact in size and deterministic (`filler`); retention probes are planted at named
places (`probes`).

Invariants:
- Everything here is an edge module over `ctxlab.core`: it may use pydantic, never the engine.
- The same input and seed give an identical `Script`, in any process, on any machine.
"""

from ctxlab.problems import Problem, WorkloadError
from ctxlab.workloads.format import BUILTIN_TOOLS, ProbeSpec, ScriptSpec, parse_script
from ctxlab.workloads.generators import GENERATORS, Generator, GeneratorSpec, generate, get_generator
from ctxlab.workloads.probes import Planted, Probe, plant
from ctxlab.workloads.trace import TraceError, TraceWorkload, load_tools, map_wire, read_trace
from ctxlab.workloads.transcript import script_messages, script_transcript

__all__ = [
    "BUILTIN_TOOLS",
    "GENERATORS",
    "Generator",
    "GeneratorSpec",
    "Planted",
    "Probe",
    "ProbeSpec",
    "Problem",
    "ScriptSpec",
    "TraceError",
    "TraceWorkload",
    "WorkloadError",
    "generate",
    "get_generator",
    "load_tools",
    "map_wire",
    "parse_script",
    "plant",
    "read_trace",
    "script_messages",
    "script_transcript",
]
