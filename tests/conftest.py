"""Shared test set-up: Hypothesis profiles and the location of the vendored real transcripts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

collect_ignore = ["data"]
"""Vendored fixtures (transcripts, a vendored source file the parity tests load): never collected."""

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

TRACES = Path(__file__).resolve().parent / "data" / "traces"


@pytest.fixture
def traces_dir() -> Path:
    """The six real transcripts vendored in tests/data/traces (provenance and licences: NOTICE.md there)."""
    return TRACES
