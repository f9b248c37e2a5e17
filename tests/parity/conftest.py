"""The OpenHands SDK's driver as a fixture of the parity tests that run it (one process for the
session: its import takes many seconds)."""

from __future__ import annotations

import mimetypes
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxlab.presets.deepagents.extensions import EXTENSIONS
from tests.parity.openhands_side import OpenHandsDriver


def python_312() -> str | None:
    """A Python >= 3.12 interpreter on this machine (as `make openhands-env` looks), or None."""
    pyenv = sorted(Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python"))
    for candidate in ("python3.12", "python3.13", *map(str, pyenv)):
        found = shutil.which(candidate)
        if found is None:
            continue
        version = subprocess.run(
            [found, "-c", "import sys; print(sys.version_info >= (3, 12))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if version.stdout.strip() == "True":
            return found
    return None


@pytest.fixture(scope="session")
def driver() -> Iterator[OpenHandsDriver]:
    try:
        server = OpenHandsDriver()
    except FileNotFoundError as missing:
        found = python_312()
        if found is not None:  # the machine can run the SDK: a missing environment is a failure
            pytest.fail(f"{missing}; {found} is Python >= 3.12: run `make openhands-env`")
        pytest.skip(f"{missing}; no Python >= 3.12 on this machine (the issue allows the skip)")
    yield server
    server.close()


def _reference_extension(mime: str, strict: bool = True) -> str | None:
    """`mimetypes.guess_extension` as it answers on the machine `EXTENSIONS` was read from."""
    found = EXTENSIONS.get(mime.lower())
    return None if found is None else f".{found}"


_MACHINE_EXTENSION = mimetypes.guess_extension


@pytest.fixture(autouse=True, scope="session")
def reference_mime_tables() -> Iterator[None]:
    """deepagents names media by the machine's MIME tables, the lab by the table of the machine
    the parity tests were first run on (row D26): where this machine's tables name a type of that
    table otherwise, the package is run as it runs there, so its other behaviour is still compared."""
    differs = any(_MACHINE_EXTENSION(kind) != f".{ext}" for kind, ext in EXTENSIONS.items())
    with pytest.MonkeyPatch.context() as patch:
        if differs:
            patch.setattr(mimetypes, "guess_extension", _reference_extension)
        yield
