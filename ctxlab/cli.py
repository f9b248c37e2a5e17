"""The `ctxlab` command line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ctxlab import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `ctxlab` command."""
    parser = argparse.ArgumentParser(
        prog="ctxlab",
        description="A deterministic lab for context engineering.",
    )
    parser.add_argument("--version", action="version", version=f"ctxlab {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code (0 ok, 1 a run failed, 2 bad input)."""
    build_parser().parse_args(argv)
    return 0
