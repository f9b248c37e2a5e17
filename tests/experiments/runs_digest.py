"""Prints what every run of a scenario file gives, as JSON: run id, status, error, measures, and
digests of its call rows and request file. Run as a script by another Python
(`test_python_versions.py`), so it puts the checkout on its path itself."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def digest(value: object) -> str:
    """sha256 of `value` as canonical JSON (bytes as they are)."""
    data = value if isinstance(value, bytes) else json.dumps(value, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()


def runs_of(path: Path) -> list[dict[str, Any]]:
    """Every run of the scenario file at `path`, run here, with its requests recorded."""
    from ctxlab.experiments.execute import execute
    from ctxlab.experiments.grid import expand
    from ctxlab.scenarios.load import load_scenario

    runs = []
    for config in expand(load_scenario(path), record_requests=True):
        result = execute(config)
        runs.append(
            {
                "run_id": config.run_id,
                "status": result.status,
                "error": result.error,
                "measures": result.measures,
                "calls": digest(result.calls),
                "requests": digest(result.requests_gz or b""),
            }
        )
    return runs


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    print(json.dumps(runs_of(Path(sys.argv[1])), sort_keys=True, default=str))
