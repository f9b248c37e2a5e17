"""`ctxlab validate` and `ctxlab run`: scenario files checked, run and written."""

from __future__ import annotations

import argparse
from typing import TextIO

from ctxlab.cli.base import (
    RAW,
    Commands,
    add_run_options,
    out_dir,
    refuse_idle_figure_options,
    refuse_lone_scheduler,
)
from ctxlab.cli.running import execute, execution_of, load_all, warn

EXAMPLES_RUN = """examples:
  ctxlab run scenarios/*.yaml                       every scenario, results in results/<name>/
  ctxlab run scenarios/trigger-reserve-sweep.yaml --workers 2 --out /tmp/results
  ctxlab run big-sweep.yaml --executor dask --scheduler tcp://10.0.0.5:8786
"""


def cmd_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Check scenario files; print one line per file."""
    from ctxlab.experiments.grid import expand

    loaded = load_all(args.scenarios)
    warn(loaded, err)
    for item in loaded:
        runs = len(expand(item))
        print(f"ok: {item.source}: {item.name}, {runs} run{'s' if runs != 1 else ''}", file=out)
    return 0


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run scenario files and write their results."""
    refuse_lone_scheduler(args)
    refuse_idle_figure_options(args)
    loaded = load_all(args.scenarios)
    out_dir(args.out)
    if not args.quiet:
        warn(loaded, err)
    how = execution_of(args, executor=args.executor, scheduler=args.scheduler)
    return execute(loaded, how, out, err)


def add_validate(commands: Commands) -> None:
    validate = commands.add_parser(
        "validate",
        help="check scenario files",
        description="Check scenario files: exit 0, or 2 with every problem located.",
    )
    validate.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    validate.set_defaults(handler=cmd_validate)


def add_run(commands: Commands) -> None:
    run = commands.add_parser(
        "run",
        help="run scenario files",
        epilog=EXAMPLES_RUN,
        formatter_class=RAW,
        description="Run scenario files; each writes <out>/<name>/, and <out>/index.md links them.",
    )
    run.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    run.add_argument(
        "--executor", choices=("local", "dask"), default="local", help="local processes or a Dask cluster"
    )
    run.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="Dask scheduler, e.g. tcp://host:8786 (default: a LocalCluster)",
    )
    add_run_options(run)
    run.set_defaults(handler=cmd_run)
