"""The real transcripts the parity tests replay through each preset and its package: every
importer sample (`tests/data/importers`, one or more of each format the lab reads: files, the
databases and agent files, and the folders that hold a store) and the vendored public agent
traces (`tests/data/traces`, the lab's canonical JSONL), by their path under `tests/data`, sorted
(importer samples first)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parents[1] / "data"
SUFFIXES = frozenset({".json", ".jsonl", ".traj", ".af", ".db", ".sqlite"})
"""The files the importers read; the samples' generators, licences and notices are not."""


def _transcript(path: Path) -> bool:
    """A file of a format the lab imports, or a folder holding a store: OpenCode's storage (its
    `session/` folder) or a strands session (its `session.json`)."""
    if path.is_dir():
        return (path / "session").is_dir() or (path / "session.json").is_file()
    return path.suffix in SUFFIXES


TRANSCRIPTS = sorted(
    path.relative_to(DATA).as_posix()
    for path in (*DATA.glob("importers/*/*"), *DATA.glob("traces/*.jsonl"))
    if _transcript(path)
)
