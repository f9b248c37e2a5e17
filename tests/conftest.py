"""Shared test set-up: Hypothesis profiles and the location of the shared transcripts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=60,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", deadline=None, max_examples=30)
settings.register_profile(  # `make mutation`: one test run per mutant, so fewer examples, same each time
    "mutation",
    derandomize=True,
    deadline=None,
    max_examples=20,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
if "HYPOTHESIS_PROFILE" in os.environ:  # the --hypothesis-profile option wins otherwise
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CTXLAB_SHARED", ROOT.parent / "shared"))
TRACES = SHARED / "traces"


@pytest.fixture
def traces_dir() -> Path:
    """The shared real transcripts; tests using them skip where the folder is absent."""
    if not TRACES.is_dir():
        pytest.skip(f"shared transcripts not found at {TRACES} (set CTXLAB_SHARED to its parent)")
    return TRACES
