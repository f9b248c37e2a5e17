"""The vendored transcripts are the files their manifest describes, each with its licence notice."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

TRACES = Path(__file__).resolve().parent / "data" / "traces"


def manifest() -> list[dict[str, str]]:
    entries: list[dict[str, str]] = json.loads((TRACES / "manifest.json").read_text(encoding="utf-8"))
    return entries


def test_every_transcript_is_in_the_manifest_with_its_checksum() -> None:
    entries = manifest()
    assert sorted(e["file"] for e in entries) == sorted(p.name for p in TRACES.glob("*.jsonl"))
    assert len(entries) == 6
    for e in entries:
        assert hashlib.sha256((TRACES / e["file"]).read_bytes()).hexdigest() == e["sha256"], e["file"]


def test_the_notice_names_every_source_with_its_commit_licence_and_files() -> None:
    notice = (TRACES / "NOTICE.md").read_text(encoding="utf-8")
    for e in manifest():
        section = notice.split(f"## {e['repo']}\n", 1)[1].split("\n## ", 1)[0]
        assert e["commit"] in section and f"`{e['file']}`" in section, e["file"]
        assert e["license"] == "MIT" and "MIT License\n\nCopyright (c) " in section
        assert "The above copyright notice and this permission notice shall be included" in section


def test_the_fixture_points_into_the_repository(traces_dir: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    assert traces_dir == TRACES and traces_dir.is_relative_to(root) and traces_dir.is_dir()
