"""Results do not depend on the Python version (docs/architecture.md, Determinism).

The lab's own environment is Python 3.11; `make test` also builds the OpenHands SDK's, Python 3.12
or later. Shipped scenarios run under both give the same measures, call rows and request bytes
run for run. A run that needs a package only the lab's environment has (the real tokenizers)
fails there for that alone and is left out; most runs remain to compare.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxlab.texts.openhands import interpreter
from tests.experiments.runs_digest import ROOT, runs_of

SCENARIOS = ("compare-research.yaml", "zoo-coding.yaml", "replayed-transcript.yaml")


def _other_python() -> Path:
    try:
        python = interpreter()
    except FileNotFoundError:
        pytest.skip("no Python 3.12+ environment (make openhands-env)")
    version = subprocess.run(
        [str(python), "-c", "import sys; print(sys.version_info >= (3, 12))"],
        capture_output=True,
        text=True,
        check=True,
    )
    if version.stdout.strip() != "True" or sys.version_info >= (3, 12):
        pytest.skip("needs this Python before 3.12 and the other at 3.12 or later")
    return python


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_scenario_gives_the_same_results_before_and_after_python_312(name: str) -> None:
    """Python 3.12 changed `sum` of floats (compensated) and `gzip.compress`'s header: a run's
    cost and every request file differed between 3.11 and 3.12 until the lab made its own."""
    path = ROOT / "scenarios" / name
    done = subprocess.run(
        [str(_other_python()), str(Path(__file__).with_name("runs_digest.py")), str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    there = json.loads(done.stdout)
    here = json.loads(json.dumps(runs_of(path), sort_keys=True, default=str))
    assert [run["run_id"] for run in there] == [run["run_id"] for run in here]
    missing = [r for r in there if r["status"] == "failed" and "ModuleNotFoundError" in r["error"]]
    compared = [(a, b) for a, b in zip(here, there, strict=True) if b not in missing]
    assert 2 * len(compared) >= len(here) and all(a["status"] == "ok" for a, _ in compared)
    for ours, theirs in compared:
        assert ours == theirs, ours["run_id"]
