"""The `ctxlab` command line (README.md, The `ctxlab` command); `python -m ctxlab` is the same.

Exit codes: 0 ok; 1 a run failed (its results are still written, marked failed); 2 bad input;
130 interrupted (Ctrl-C), 143 terminated (SIGTERM): a folder not yet complete is discarded.

Invariants:
- Bad input (a scenario, trace or option that cannot be used) exits 2 with located messages on
  stderr, no traceback, and writes nothing: every input is loaded and checked before any run.
- Warnings go to stderr; results and summaries to stdout; `--quiet` keeps stdout empty.
- A progress bar is shown only when stderr is a terminal.

One module per group of commands (`scenarios`, `transcripts`, `tools`, and `ctxlab.tune.command`),
what they share in `base` and `running`; this module builds the parser and runs a command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO, cast

from ctxlab import __version__
from ctxlab.cli import scenarios, tools, transcripts
from ctxlab.cli.base import RAW, BadInput, Commands, ReaderGone, Terminated, terminated_as_interrupted
from ctxlab.experiments.collector import collecting_less

EPILOG = """examples:
  ctxlab validate scenarios/*.yaml
  ctxlab run scenarios/*.yaml --out results
  ctxlab replay session.jsonl --context-size 32000
  ctxlab import run.traj --out session.jsonl
  ctxlab tune my-scenario.yaml --trials 40
  ctxlab plot results
  ctxlab presets -v
  ctxlab schema

exit codes: 0 ok, 1 a run failed, 2 bad input (a located message, nothing written)
"""


def _add_tune(commands: Commands) -> None:
    from ctxlab.tune.command import add_tune

    add_tune(commands)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `ctxlab` command."""
    parser = argparse.ArgumentParser(
        prog="ctxlab",
        description="A deterministic lab for context engineering: run scenario files, replay transcripts, "
        "and measure what every context-management strategy sends.",
        epilog=EPILOG,
        formatter_class=RAW,
    )
    parser.add_argument("--version", action="version", version=f"ctxlab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (
        scenarios.add_validate,
        scenarios.add_run,
        transcripts.add_replay,
        transcripts.add_import,
        _add_tune,
        tools.add_tools,
    ):
        add(commands)
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command; returns the exit code (0 ok, 1 a run failed, 2 bad input)."""
    out, err = cast(TextIO, ReaderGone(out or sys.stdout)), cast(TextIO, ReaderGone(err or sys.stderr))
    args = build_parser().parse_args(argv)
    try:
        with collecting_less(), terminated_as_interrupted():
            code: int = args.handler(args, out, err)
    except BadInput as bad:
        for message in bad.messages:
            print(message, file=err)
        return 2
    except KeyboardInterrupt as stop:
        # said the same whenever the interruption came: each folder is put in place whole or not at all
        said = "terminated" if isinstance(stop, Terminated) else "interrupted"
        print(f"{said}: a results folder not yet complete was discarded; those in place stay", file=err)
        return 143 if isinstance(stop, Terminated) else 130
    except OSError as error:
        print(f"ctxlab: {error}", file=err)
        return 1
    return code
