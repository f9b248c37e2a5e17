"""The files a scenario reads (transcripts, tool schemas), known by path and digest.

Loading reads each trace and tools file once and checks it; from then on a file is known by
where it was read and the sha256 of its text. A run that needs a text again (a workload its
process no longer keeps, a worker started afresh) reads the file again. So a loaded scenario,
its run configs and the keys of what a process keeps hold a few hundred bytes per file, not
the file: a long agent's transcript is tens of megabytes of text, which was held through the
whole run, and pickled into every run config sent to a worker.

Invariants:
- `files[path]` is the text whose sha256 is `files.digest(path)`, or `SourceChangedError`:
  a run replays exactly the text loading checked, or fails saying the file changed.
- A `SourceFiles` pickles as paths and digests, and its texts only when it holds them
  (`holding()`, for workers on other machines, which may not see the files).
- Nothing but `__getitem__` (and what calls it: `values`, `items`, `get`) reads a file;
  membership, length, iteration, equality and digests do not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

HASH_CHUNK = 1 << 20


def text_sha256(text: str) -> str:
    """The sha256 of a text's UTF-8 bytes, encoded a megabyte of characters at a time (so a large
    transcript is never copied whole).

    >>> text_sha256("中" * 3) == hashlib.sha256(("中" * 3).encode("utf-8")).hexdigest()
    True
    """
    digest = hashlib.sha256()
    for start in range(0, len(text), HASH_CHUNK):
        digest.update(text[start : start + HASH_CHUNK].encode("utf-8"))
    return digest.hexdigest()


def file_text(raw: bytes) -> str:
    """A trace or tools file's text: UTF-8, a leading byte-order mark dropped (it is no content).

    Raises:
        UnicodeDecodeError: the bytes are not UTF-8.
    """
    return raw.decode("utf-8-sig")


def source_text(path: Path) -> str:
    """The text of a trace or tools file (`file_text`), or of a store of conversations (a
    database, a session directory): its snapshot, whose sha256 is the store's digest
    (`ctxlab.workloads.importers.stores`).

    Raises:
        UnicodeDecodeError: the file's bytes are not UTF-8.
        OSError: the file cannot be read.
        TraceError: the store cannot be read.
    """
    from ctxlab.workloads.importers import stores  # the readers load for a transcript

    kind = stores.kind_of(path)
    if kind is not None:
        return stores.snapshot(kind, stores.records(path, kind))
    return file_text(path.read_bytes())


class SourceChangedError(RuntimeError):
    """A file a run reads again is gone, unreadable, or not the text loading checked."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where a file was read (`full`, absolute, so a worker in another folder finds it) and the
    sha256 of its text."""

    full: str
    digest: str


class SourceFiles(Mapping[str, str]):
    """The texts of a scenario's files by the path its document writes, each read again on
    demand and checked against its digest (or given from the texts held, while loading)."""

    __slots__ = ("_held", "_known")

    def __init__(self, known: Mapping[str, Source] | None = None, held: Mapping[str, str] | None = None):
        self._known: dict[str, Source] = dict(known or {})
        self._held: dict[str, str] | None = dict(held) if held is not None else None

    @classmethod
    def of_texts(cls, base: Path, texts: Mapping[str, str], digests: Mapping[str, str]) -> SourceFiles:
        """The files whose `texts` were read under `base`, holding those texts; `digests` are
        theirs where already known (the others are computed)."""
        known = {
            path: Source(str((base / path).absolute()), digests.get(path) or text_sha256(text))
            for path, text in texts.items()
        }
        return cls(known, texts)

    def __getitem__(self, path: str) -> str:
        if self._held is not None:
            return self._held[path]
        source = self._known[path]
        return _read_again(path, source)

    def __contains__(self, path: object) -> bool:
        return path in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._known)

    def __len__(self) -> int:
        return len(self._known)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SourceFiles):
            return self._known == other._known
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        held = ", texts held" if self._held is not None else ""
        return f"SourceFiles({sorted(self._known)}{held})"

    def __reduce__(self) -> tuple[type[SourceFiles], tuple[dict[str, Source], dict[str, str] | None]]:
        return (SourceFiles, (self._known, self._held))

    def digest(self, path: str) -> str:
        """The sha256 of the text of `path`, as loading read it."""
        return self._known[path].digest

    @property
    def digests(self) -> dict[str, str]:
        """Every file's sha256, by path."""
        return {path: source.digest for path, source in self._known.items()}

    def only(self, paths: Iterable[str]) -> SourceFiles:
        """These files and no others (texts held stay held)."""
        kept = {path: self._known[path] for path in paths}
        held = None if self._held is None else {path: self._held[path] for path in kept}
        return SourceFiles(kept, held)

    def released(self) -> SourceFiles:
        """The same files, their texts no longer held: read again when asked for."""
        return SourceFiles(self._known)

    def holding(self) -> SourceFiles:
        """The same files with their texts read and held, to be sent where the files may not be."""
        return SourceFiles(self._known, {path: self[path] for path in self._known})


def digests_of(files: Mapping[str, str]) -> dict[str, str]:
    """The sha256 of each text of `files`: known for `SourceFiles`, computed for a plain mapping."""
    if isinstance(files, SourceFiles):
        return files.digests
    return {path: text_sha256(text) for path, text in files.items()}


def digest_of(files: Mapping[str, str], path: str) -> str:
    """The sha256 of the text of `path` in `files`, read only when `files` does not know it."""
    if isinstance(files, SourceFiles):
        return files.digest(path)
    return text_sha256(files[path])


def _read_again(path: str, source: Source) -> str:
    from ctxlab.workloads.files import TraceError

    try:
        text = source_text(Path(source.full))
    except (OSError, UnicodeDecodeError, TraceError) as error:
        reason = (
            (error.strerror or str(error))
            if isinstance(error, OSError)
            else error.message
            if isinstance(error, TraceError)
            else "it is no longer UTF-8"
        )
        raise SourceChangedError(
            f"{path}: cannot read the file again ({reason}); the scenario read it at load time and the "
            "run reads it again: keep the file in place until the run ends"
        ) from None
    found = text_sha256(text)
    if found != source.digest:
        raise SourceChangedError(
            f"{path}: the file changed since the scenario was loaded (sha256 {source.digest[:12]}, "
            f"now {found[:12]}); run the scenario again to use the new text"
        )
    return text
