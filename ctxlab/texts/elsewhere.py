"""Texts of a package installed in another Python environment (one the lab's interpreter cannot
import: the OpenHands SDK needs Python 3.12+, Google ADK pins versions the other peers cannot
share). A reader script runs in that environment's interpreter and prints the texts as JSON;
what it printed is cached per installed package (`ctxlab.texts.cache`).

Invariants:
- The interpreter is the environment the Makefile builds (`.venv-<name>`), or the one an
  environment variable names; a missing one is a `FileNotFoundError` saying how to make it.
- Texts are only ever taken from the pinned version: another is a `LookupError` naming the fix.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxlab.texts import cache as text_cache

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """Where a package lives and how the lab reaches it.

    Attributes:
        texts: the text set's name (`texts: <name>`), for messages.
        distribution: the pinned distribution and its `version`.
        module: the import name whose folder fingerprints the cache (`subfolder` inside it).
        venv: the environment's folder under the checkout; `variable` names another interpreter.
        make: the Makefile target that builds it.
        requirement: what the environment needs, for messages ("a Python >= 3.12 environment").
        env: extra environment variables the reader needs.
    """

    texts: str
    distribution: str
    version: str
    module: str
    venv: str
    variable: str
    make: str
    requirement: str = "its own environment"
    subfolder: str = ""
    env: Mapping[str, str] = field(default_factory=dict)

    def interpreter(self) -> Path:
        """The environment's Python.

        Raises:
            FileNotFoundError: there is none; the message says how to make one.
        """
        named = os.environ.get(self.variable)
        path = Path(named) if named else ROOT / self.venv / "bin" / "python"
        if not path.exists():
            raise FileNotFoundError(
                f"texts: {self.texts} needs {self.distribution}=={self.version} in {self.requirement} and "
                f"{path} does not exist; run `make {self.make}` or set {self.variable} to an interpreter "
                "that has it"
            )
        return path

    def run(self, python: Path, code: str) -> str:
        """What `code` prints in the environment.

        Raises:
            LookupError: it failed (the end of its error output is in the message).
        """
        done = subprocess.run(
            [str(python), "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, **self.env},
            check=False,
        )
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines() or ["no error output"]
            raise LookupError(
                f"reading the texts of {self.distribution} with {python} failed ({lines[-1][-300:]}); "
                f"run `make {self.make}`, or set {self.variable} to an interpreter with "
                f"{self.distribution}=={self.version}"
            )
        return done.stdout

    def folder(self, python: Path) -> Path:
        """Where the package lives in the environment (found without importing it)."""
        found = f"importlib.util.find_spec({self.module!r}).submodule_search_locations[0]"
        code = f"import importlib.util; print({found})"
        return Path(self.run(python, code).strip()) / self.subfolder

    def read(self, reader: str, reader_file: Path) -> dict[str, Any]:
        """The texts `reader` prints (a JSON object with the package's `version`), from the cache
        or read afresh; the `version` key is left out.

        Raises:
            FileNotFoundError: no environment.
            LookupError: the package cannot be read, or it is not the pinned version.
        """
        python = self.interpreter()
        name = f"{self.texts}-texts"
        key = text_cache.fingerprint(self.folder(python), (reader_file, Path(__file__)))
        stored = text_cache.load(name, key)
        data: dict[str, Any] = stored if stored is not None else json.loads(self.run(python, reader))
        if data.get("version") != self.version:
            raise LookupError(
                f"texts: {self.texts} is pinned to {self.distribution}=={self.version}; {python} has "
                f"{data.get('version')}: run `make {self.make}` again"
            )
        if stored is None:
            text_cache.store(name, key, data)
        return {k: v for k, v in data.items() if k != "version"}
