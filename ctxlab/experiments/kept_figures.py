"""Figures kept from the results folder a new one replaces, when drawing them again would give
the same files.

A results folder's figures are a function of what the folder holds (its tables and manifest,
the manifest's creation time aside), of the code that draws them and of the drawing's options.
`inputs_digest` is a digest of all of these; the folder keeps it, with the digest of every
figure file, in `figures.json`. A rerun of a scenario whose results come out
the same (every run of a sweep an edit did not touch, every scenario of `make experiments` but
the edited one) then copies the figures in place instead of drawing them: drawing is most of
the time such a rerun takes.

Invariants:
- A kept figure is byte for byte the file drawing would write: figures are kept only when the
  inputs digest is the one recorded when they were drawn and every recorded file is in place
  with its recorded digest. Anything else (no record, other results, other code or library
  versions, other options, a file missing or changed) draws the figures anew.
- The digest reads only files: it is the same in every process and on every run of the same
  scenario with the same code, so the record is too (the folder's bytes stay reproducible).
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import ctxlab

RECORD = "figures.json"
"""The file of a results folder naming what its figures were drawn from."""
_NOT_INPUTS = frozenset({"figures", "tune", RECORD})
"""What of a results folder figures are not drawn from."""
_CREATED = re.compile(rb'^  "created": "[^"\n]*",\n', re.MULTILINE)
"""The manifest's creation time: a top-level key, the only line indented by exactly two spaces
that names it (the manifest is written indented by two spaces, a key per line)."""
_RENDERING = ("matplotlib", "numpy", "pandas", "pyarrow", "pillow")
"""Distributions whose versions the pixels and files of a figure may depend on."""


def drawing_options(svg: bool) -> str:
    """What a results folder's figures depend on beside its results: the formats drawn."""
    return "png+svg" if svg else "png"


def inputs_digest(folder: Path, options: str) -> str:
    """A digest of what the figures of the results in `folder` are drawn from: every file of it
    but its figures and tuning (the manifest without its creation time), the lab's code, the
    versions of the libraries that draw, and `options` (the drawing's own, e.g. which formats)."""
    return _digest(
        options,
        ((path.relative_to(folder).as_posix(), *_input(folder, path)) for path in _input_files(folder)),
    )


def data_digest(options: str, parts: Iterable[tuple[str, bytes]]) -> str:
    """A digest of named data figures are drawn from, with the lab's code, the versions of the
    libraries that draw and `options`: the inputs of figures drawn from data in memory (a tuning's)."""
    return _digest(options, ((name, len(data), (data,)) for name, data in parts))


def _digest(options: str, parts: Iterable[tuple[str, int, Iterable[bytes]]]) -> str:
    """The digest of named parts, each given by its size and its bytes in pieces: the same as of
    its bytes whole, however they are cut."""
    digest = hashlib.blake2b(digest_size=32)
    digest.update(f"ctxlab figures\0{options}\0{_code_digest()}\0{_libraries()}\0".encode())
    for name, size, pieces in parts:
        label = name.encode()
        digest.update(b"%d\0%s\0%d\0" % (len(label), label, size))
        for piece in pieces:
            digest.update(piece)
    return digest.hexdigest()


def _input(folder: Path, path: Path) -> tuple[int, Iterable[bytes]]:
    """A result file's size and bytes as its figures' digest reads them: the manifest without its
    creation time; any other file read a piece at a time, since a recorded run's requests can be
    hundreds of megabytes."""
    if path == folder / "manifest.json":
        data = _CREATED.sub(b"", path.read_bytes(), count=1)
        return len(data), (data,)
    return path.stat().st_size, _pieces(path)


_PIECE = 1 << 20
"""Bytes of a result file read at a time to digest it."""


def _pieces(path: Path) -> Iterator[bytes]:
    with path.open("rb") as file:
        while piece := file.read(_PIECE):
            yield piece


def record_drawn(folder: Path, inputs: str) -> None:
    """Note in `folder` that the files of its `figures/` were drawn from `inputs` (an
    `inputs_digest`)."""
    files = {path.name: _file_digest(path) for path in sorted((folder / "figures").iterdir())}
    record = {"inputs": inputs, "files": files}
    (folder / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def keep_drawn(previous: Path, into: Path, inputs: str) -> bool:
    """Copy `previous/figures/` into `into/figures/` when its figures were drawn from `inputs`
    and every one of them is as it was written; whether they were copied (nothing is written
    otherwise)."""
    figures = previous / "figures"
    record = _record(previous / RECORD)
    if record is None or record.get("inputs") != inputs:
        return False
    files = record.get("files")
    if not isinstance(files, Mapping) or not _all_as_written(figures, files):
        return False
    target = into / "figures"
    target.mkdir()
    for name in files:
        shutil.copyfile(figures / name, target / name)
    shutil.copyfile(previous / RECORD, into / RECORD)
    return True


def _all_as_written(figures: Path, files: Mapping[str, object]) -> bool:
    """Whether `figures/` holds exactly the files named, each of its recorded digest (a file
    that cannot be read is not)."""
    try:
        if {path.name for path in figures.iterdir()} != set(files):
            return False
        return all(_file_digest(figures / name) == digest for name, digest in files.items())
    except OSError:
        return False


def _record(path: Path) -> dict[str, object] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _input_files(folder: Path) -> Iterator[Path]:
    """The folder's files that figures are drawn from, in a fixed order."""
    for path in sorted(folder.iterdir()):
        if path.name in _NOT_INPUTS:
            continue
        if path.is_dir():
            yield from (p for p in sorted(path.rglob("*")) if p.is_file())
        else:
            yield path


def _file_digest(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=32)
    for piece in _pieces(path):
        digest.update(piece)
    return digest.hexdigest()


@functools.cache
def _code_digest() -> str:
    """A digest of the lab's source, read once per process: a change anywhere in it may change
    a figure."""
    package = Path(ctxlab.__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=32)
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix().encode()
        data = path.read_bytes()
        digest.update(b"%d\0%s\0%d\0" % (len(name), name, len(data)))
        digest.update(data)
    return digest.hexdigest()


@functools.cache
def _libraries() -> str:
    import importlib.metadata

    found = [f"python {platform.python_version()} {platform.machine()}"]
    for name in _RENDERING:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name} -")
    return ", ".join(found)
