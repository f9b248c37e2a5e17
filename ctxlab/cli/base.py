"""What every `ctxlab` command shares: the bad-input error, option types and the options several
commands take."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class BadInput(Exception):
    """Input that cannot be used; the messages say where and how to fix it."""

    def __init__(self, messages: Sequence[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = tuple(messages)


Commands = Any  # argparse's subparsers action (its type is private)

RAW = argparse.RawDescriptionHelpFormatter


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1")
    return value


def out_dir(value: str) -> Path:
    out = Path(value)
    if out.exists() and not out.is_dir():
        raise BadInput([f"--out {value}: is a file; give a folder for the results"])
    return out


def add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="results", metavar="DIR", help="results root (default: results)")
    parser.add_argument(
        "--record-requests", action="store_true", help="write every request to requests/<run_id>.jsonl.gz"
    )
    parser.add_argument(
        "--wire",
        choices=("openai", "anthropic"),
        default="openai",
        help="the API form requests are recorded in (anthropic: requests/<run_id>.anthropic.jsonl.gz)",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
