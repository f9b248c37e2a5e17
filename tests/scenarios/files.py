"""Small scenario files for tests, written into a temporary folder."""

from __future__ import annotations

from pathlib import Path

TINY = """\
name: tiny
description: Four retrieval rounds in a small window.
workload:
  generator: {name: retrieval, params: {rounds: 4}}
model:
  context_size: 4000
strategies:
  - preset: agentscope
"""

SWEPT = """\
name: swept
workload:
  generator: {name: retrieval, params: {rounds: 6}}
model:
  context_size: 4000
strategies:
  - name: agentscope
    preset: agentscope
  - name: none
    preset: none
sweep:
  model.context_size: [4000, 6000]
  strategies.agentscope.context.trigger_ratio: [0.6, 0.8]
record_requests: true
"""


def write(folder: Path, text: str | bytes, name: str = "scenario.yaml") -> Path:
    """Write `text` to `folder/name` and return the path."""
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path
