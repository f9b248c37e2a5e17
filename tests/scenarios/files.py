"""Small scenario files for tests, written into a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def long_reply(folder: Path, rounds: int) -> Path:
    """A transcript of one request answered after `rounds` tool rounds."""
    lines: list[dict[str, Any]] = [{"role": "user", "content": "Fix the parser."}]
    for i in range(rounds):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        lines += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"line {i}"},
        ]
    lines.append({"role": "assistant", "content": "Fixed."})
    path = folder / "long.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
