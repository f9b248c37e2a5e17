"""What the importer tests share: the folder of transcript fixtures, the `ctxlab` command run in
this process, and entries written as JSONL lines."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from ctxlab.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"


def run_cli(*args: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of `ctxlab ARGS`."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def lines(*entries: Any) -> list[str]:
    """Each entry as one line of JSON, non-ASCII kept."""
    return [json.dumps(entry, ensure_ascii=False) for entry in entries]
