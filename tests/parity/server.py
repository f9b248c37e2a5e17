"""A parity driver that runs in another Python environment, as a server process: one JSON
workload a line in, one JSON trace a line out."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ctxlab.texts.elsewhere import Environment


class DriverServer:
    """The driver `script` in `environment`'s interpreter; `close` ends it."""

    def __init__(self, environment: Environment, script: Path) -> None:
        self.process = subprocess.Popen(
            [str(environment.interpreter()), str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, **environment.env},
        )

    def run_raw(self, workload: dict[str, Any]) -> str:
        """The trace line of one workload, as the driver wrote it."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(workload) + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline()

    def run(self, workload: dict[str, Any]) -> dict[str, Any]:
        """The trace of one workload."""
        trace: dict[str, Any] = json.loads(self.run_raw(workload))
        assert "driver_error" not in trace, trace["driver_error"]
        return trace

    def close(self) -> None:
        """End the server (it stops at the end of its input)."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
