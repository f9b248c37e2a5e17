"""Odd but real shapes of the OpenAI chat, OpenAI Responses, SWE-agent, mini-swe-agent and
LangGraph transcripts: each is replayed as its agent sent it, or refused at its file and line,
never replayed with part of what the model was sent left out unsaid."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from tests.workloads.importing import lines, run_cli

SYSTEM = {"role": "system", "content": "You list files."}
USER = {"role": "user", "content": "List the files."}


def requests_of(tmp_path: Path, name: str, text: str) -> list[dict[str, Any]]:
    """The requests `ctxlab replay --preset none --record-requests` sends for a transcript."""
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    results = tmp_path / "results"
    code, _, err = run_cli(
        "replay", str(source), "--out", str(results), "--preset", "none", "--quiet", "--no-plots",
        "--record-requests",
    )  # fmt: skip
    assert code == 0, err
    (recorded,) = results.glob("*/requests/*.jsonl.gz")
    with gzip.open(recorded, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def last_messages(tmp_path: Path, name: str, text: str) -> list[dict[str, Any]]:
    """The messages of the last request the replay sends."""
    return list(requests_of(tmp_path, name, text)[-1]["messages"])


# ---------------------------------------------------------------------------------------------
# OpenAI chat


def test_chat_an_assistant_refusal_is_the_text_the_replay_sends_back(tmp_path: Path) -> None:
    refusal = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    text = "\n".join(lines(SYSTEM, USER, refusal, {"role": "user", "content": "Why not?"}))
    sent = last_messages(tmp_path, "chat.jsonl", text)
    assert {"role": "assistant", "content": "I can't help with that."} in sent
