"""What the importer tests share: the folder of transcript fixtures, the `ctxlab` command run in
this process, and entries written as JSONL lines."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxlab.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"


def run_cli(*args: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of `ctxlab ARGS`."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def imported(path: Path, out: Path, *args: str) -> tuple[str, str, list[dict[str, Any]]]:
    """`ctxlab import PATH --out OUT ARGS`, which must succeed: its stdout, its stderr and the
    messages it wrote."""
    code, said, err = run_cli("import", str(path), "--out", str(out), *args)
    assert code == 0, err
    return said, err, [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def replayed_requests(path: Path, results: Path, *args: str) -> list[dict[str, Any]]:
    """The requests `ctxlab replay PATH --preset none --record-requests ARGS` sends, which must
    succeed (its results under `results`)."""
    code, _, err = run_cli(
        "replay", str(path), "--out", str(results), "--preset", "none", "--quiet", "--no-plots",
        "--record-requests", *args,
    )  # fmt: skip
    assert code == 0, err
    (recorded,) = results.glob("*/requests/*.jsonl.gz")
    with gzip.open(recorded, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def lines(*entries: Any) -> list[str]:
    """Each entry as one line of JSON, non-ASCII kept."""
    return [json.dumps(entry, ensure_ascii=False) for entry in entries]


CLAUDE_SESSION = "2cc1c994-1a4f-4a0b-aca7-41804577680f"


def claude_line(kind: str, uuid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    """A Claude Code session log line of `kind`, linked to `parent`, in the main conversation."""
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "uuid": uuid,
        "sessionId": CLAUDE_SESSION,
        **fields,
    }


def claude_prompt(uuid: str, parent: str | None, text: str) -> dict[str, Any]:
    """A prompt the user typed, as a Claude Code session log line."""
    return claude_line("user", uuid, parent, message={"role": "user", "content": text})


def assert_paired(messages: Sequence[Mapping[str, Any]]) -> None:
    """Every tool result answers a call made before it with only results between (OpenAI's
    rule), and every call gets its result."""
    waiting: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in waiting, message
            waiting.remove(message["tool_call_id"])
        else:
            assert not waiting, message  # a call's result comes before the next message
        waiting += [c["id"] for c in message.get("tool_calls", [])]
    assert not waiting
