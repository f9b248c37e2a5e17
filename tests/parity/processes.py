"""Running a driver script in fresh interpreters: what a parity driver writes must not depend on
the process (hash seeds, import order), so each driver's test runs it twice and compares."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def outputs_under_two_hash_seeds(script: str) -> tuple[str, str]:
    """The standard output of `python -c script` run from the checkout under two hash seeds."""
    first, second = (
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    )
    return first, second
