"""The sweep measure: many runs of the benchmark workload through `ctxlab.experiments`' executors.

The scenario is built here as a document (JSON is YAML) and goes the way a scenario file goes:
loaded and validated, expanded into run configs by its sweep grid, executed by `run_all`. The
grid crosses window, trigger and reserve (4 × 4 × 4 = 64 runs); every run is the workload of
`benchmarks.workload` at a smaller size, so the runs differ only in how often they compress.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.workload import RESULT_BYTES
from ctxlab.experiments.executors import run_all
from ctxlab.experiments.grid import RunConfig, expand
from ctxlab.scenarios.load import load_located
from ctxlab.scenarios.located import parse_yaml

SYSTEM_PROMPT = "You are a research assistant."
REPLIES = 150
"""Replies per run: enough that a run's work outweighs handing it to a worker process."""

AXES: dict[str, list[Any]] = {
    "model.context_size": [8192, 16384, 32768, 65536],
    "strategies.agentscope.context.trigger_ratio": [0.6, 0.7, 0.8, 0.9],
    "strategies.agentscope.context.reserve_ratio": [0.05, 0.1, 0.2, 0.3],
}


def scenario_document(replies: int, axes: dict[str, list[Any]]) -> dict[str, Any]:
    """The sweep scenario: `replies` replies of one retrieve call (4,000-byte result) and an answer."""

    def call(i: int) -> dict[str, Any]:
        return {"tool": "retrieve", "input": {"query": f"question {i}"}, "result": {"bytes": RESULT_BYTES}}

    turns = [
        {
            "user": f"Question {i}: what do the sources say?",
            "rounds": [{"calls": [call(i)]}],
            "final": f"Answer {i}.",
        }
        for i in range(replies)
    ]
    tool = {
        "name": "retrieve",
        "description": "Retrieve passages matching a query.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    }
    return {
        "name": "bench-sweep",
        "description": "The benchmark workload swept over window, trigger and reserve.",
        "seed": 0,
        "workload": {"script": {"system_prompt": SYSTEM_PROMPT, "tools": [tool], "turns": turns}},
        "model": {"context_size": 32768, "summarizer": {"kind": "fixed"}},
        "strategies": [
            {"name": "agentscope", "preset": "agentscope", "texts": "agentscope", "workspace": "memory"}
        ],
        "sweep": axes,
    }


def sweep_configs(runs: int, replies: int = REPLIES) -> tuple[RunConfig, ...]:
    """The first `runs` run configs of the sweep (64 at most)."""
    located = parse_yaml(json.dumps(scenario_document(replies, AXES)), "<bench-sweep>")
    configs = expand(load_located(located, Path.cwd()))
    return tuple(itertools.islice(configs, runs))


def sweep_seconds(runs: int, workers: int) -> float:
    """Wall time of executing `runs` configs of the sweep on `workers` processes (loading excluded).

    Wall time, not process time: the work happens in worker processes. Every run must succeed.
    """
    configs = sweep_configs(runs)
    start = time.perf_counter()
    results = run_all(configs, workers=workers)
    elapsed = time.perf_counter() - start
    failed = [r.run_id for r in results if r.status != "ok"]
    if failed:
        raise RuntimeError(f"sweep runs failed: {', '.join(failed)}")
    return elapsed
