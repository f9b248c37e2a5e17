"""The real transcripts the parity tests replay through each preset and its package: every
importer sample (`tests/data/importers`, one or more of each format the lab reads) and the
vendored public agent traces (`tests/data/traces`, the lab's canonical JSONL), by their path
under `tests/data`, sorted (importer samples first)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parents[1] / "data"
TRANSCRIPTS = sorted(
    path.relative_to(DATA).as_posix()
    for path in (*DATA.glob("importers/*/*"), *DATA.glob("traces/*.jsonl"))
    if path.suffix in {".json", ".jsonl", ".traj"}
)
