"""The OpenHands SDK's driver as a fixture of the parity tests that run it (one process for the
session: its import takes many seconds)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

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
