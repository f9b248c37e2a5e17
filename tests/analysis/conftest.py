"""Small results for the analysis tests, run through the same path as `ctxlab run`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxlab.analysis.results import Results
from ctxlab.replay import run_document


def retrieval(name: str, *, context_size: int, rounds: int, kind: str = "prose") -> dict[str, Any]:
    """ch08's retrieval workload with an early-trigger AgentScope, its defaults, and no management."""
    return {
        "name": name,
        "description": "Retrieval rounds for the analysis tests.",
        "workload": {
            "generator": {"name": "retrieval", "params": {"rounds": rounds, "kind": kind}},
            "probes": [
                {"kind": "fact", "key": "port", "value": "The port is 5433.", "where": "turn 0 round 1"}
            ],
        },
        "model": {"context_size": context_size, "summarizer": {"kind": "extractive"}},
        "strategies": [
            {"name": "early", "preset": "agentscope", "context": {"trigger_ratio": 0.5}},
            {"name": "agentscope", "preset": "agentscope"},
            {"name": "none", "preset": "none"},
        ],
        "record_requests": True,
    }


@pytest.fixture(scope="session")
def retrieval_results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    """Five retrieval rounds (about 7,600 tokens) in a 6,000-token window: `none` goes over it."""
    return run_document(retrieval("retrieval", context_size=6000, rounds=5), tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="session")
def json_results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    """The same with JSON results in a window they fit in: every strategy is safe."""
    document = retrieval("retrieval-json", context_size=16000, rounds=3, kind="json")
    return run_document(document, tmp_path_factory.mktemp("tiny-json"))


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A folder for results written during one test."""
    return tmp_path
