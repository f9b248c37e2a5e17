"""What every `ctxlab` command shares: the bad-input error, option types and the options several
commands take."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO


class BadInput(Exception):
    """Input that cannot be used; the messages say where and how to fix it."""

    def __init__(self, messages: Sequence[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = tuple(messages)


def refuse_lone_scheduler(args: argparse.Namespace) -> None:
    """Refuse `--scheduler` without `--executor dask`: the runs would go to local processes and
    the command would succeed, leaving the user to believe they ran on the cluster."""
    if args.scheduler is not None and args.executor != "dask":
        raise BadInput([f"--scheduler {args.scheduler}: a Dask scheduler needs --executor dask; add it"])


Commands = Any  # argparse's subparsers action (its type is private)

RAW = argparse.RawDescriptionHelpFormatter


LARGEST = 2**63 - 1
"""The largest whole number an option takes: results hold 64-bit integers, as a scenario file's
values do (`scenarios.located.INT64`)."""


def positive(text: str) -> int:
    return _at_least(text, 1)


def natural(text: str) -> int:
    """A count from 0 (an index)."""
    return _at_least(text, 0)


def _at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{value} is below {least}")
    if value > LARGEST:
        raise argparse.ArgumentTypeError(f"{value} is above {LARGEST:,}, the largest a result holds")
    return value


def out_dir(value: str) -> Path:
    """The results root `--out` names, refused before any run when results cannot go there: it,
    or the nearest of its parents that exists (the folders made for it start there), is a file
    or a folder this user may not write in; or its `index.md` is not a file."""
    out = Path(value)
    if out.exists() and not out.is_dir():
        raise BadInput([f"--out {value}: is a file; give a folder for the results"])
    _refuse_inside_a_file(out, "--out")
    _refuse_unwritable(out, "--out", value)
    index = out / "index.md"
    if index.exists() and not index.is_file():
        raise BadInput([f"--out {value}: its index.md is not a file; move it away, or give another folder"])
    return out


def in_file(value: str, name: str, give: str, option: str = "") -> Path:
    """The file an argument (or an `option`) names to be read, refused before any work with why
    it is no file: missing (`name` says what was looked for: "no such transcript file"), a
    folder, a device or pipe (/dev/stdin), or a symbolic link to nothing (its target missing, or
    a loop)."""
    from ctxlab.workloads.files import why_no_file  # the readers load only for a command reading a file

    path = Path(value)
    why = why_no_file(path)
    if why is None:
        return path
    if why == "does not exist":
        why = f"no such {name}"
    raise BadInput([f"{option} {value}: {why}; {give}" if option else f"{value}: {why}; {give}"])


def out_file(value: str, option: str) -> Path:
    """A file an option names to be written, refused before any work when the nearest of its
    parents that exists is a file (no folder can be made inside it), or when it exists and is not
    a regular file or a folder (files are written beside their path and renamed over it, which
    would replace a device such as /dev/null)."""
    path = Path(value)
    _refuse_inside_a_file(path, option)
    if path.exists() and not path.is_file() and not path.is_dir():
        raise BadInput([f"{option} {path}: is not a regular file (a device or a pipe); give the file's path"])
    _refuse_unwritable(path.parent, option, value)
    return path


def _refuse_unwritable(folder: Path, option: str, value: str) -> None:
    """Refuse `folder` (or, before it is made, the nearest of its parents that exists) when this
    user may not write in it: said before any work, not as an errno after it."""
    start = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    if start.is_dir() and not os.access(start, os.W_OK | os.X_OK):
        why = f"{start} may not be written by this user; give a folder you may write"
        raise BadInput([f"{option} {value}: {why}"])


def _refuse_inside_a_file(path: Path, option: str) -> None:
    blocking = next((parent for parent in path.parents if parent.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise BadInput(
            [f"{option} {path}: {blocking} is a file, so no folder can be made inside it; give another"]
        )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers", type=positive, default=None, metavar="N", help="worker processes (default: cores)"
    )
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
    parser.add_argument("--no-plots", action="store_true", help="skip the figures")
    parser.add_argument(
        "--svg", action="store_true", help="draw every figure as SVG too (PNG only by default)"
    )
    parser.add_argument(
        "--redraw",
        action="store_true",
        help="draw every figure, also where the figures in place were drawn from the same results",
    )


def refuse_idle_figure_options(args: argparse.Namespace) -> None:
    """Refuse `--svg` and `--redraw` beside `--no-plots`, which draws no figure (said before
    anything is read, as `--wire` without a recorded request is)."""
    idle = [option for option, given in (("--svg", args.svg), ("--redraw", args.redraw)) if given]
    if idle and args.no_plots:
        raise BadInput(
            [f"{option}: --no-plots draws no figure, so it would change nothing; give one" for option in idle]
        )


def shows_progress(*, quiet: bool, err: TextIO) -> bool:
    """Whether `Progress` would draw a bar (not quiet, on a terminal): only then are its phases'
    totals read, so a caller may skip counting them otherwise."""
    return not quiet and err.isatty()


class Progress:
    """A tqdm bar on a terminal that counts each phase in turn (`(description, unit, total)`,
    such as the runs and then the scenarios drawn), skipping empty ones; a no-op otherwise (never
    written to a pipe or a file). Each `step` counts one unit of the current phase."""

    def __init__(self, phases: Sequence[tuple[str, str, int]], *, quiet: bool, err: TextIO) -> None:
        self.phases = [phase for phase in phases if phase[2] > 0]
        self.bar: Any = None
        if shows_progress(quiet=quiet, err=err) and sum(total for _, _, total in self.phases) > 1:
            from tqdm import tqdm

            tqdm.monitor_interval = 0  # no monitor thread: workers are forked only from a lone thread
            description, unit, total = self.phases.pop(0)
            self.bar = tqdm(total=total, unit=unit, desc=description, file=err, leave=False)

    def __enter__(self) -> Progress:
        return self

    def step(self, done: object = None) -> None:
        """One more unit of the current phase is done; after its last, the next phase starts."""
        if self.bar is None:
            return
        self.bar.update(1)
        self.bar.refresh()  # every step: a phase's units can come faster than tqdm redraws
        if self.bar.n >= self.bar.total and self.phases:
            description, unit, total = self.phases.pop(0)
            self.bar.unit = unit
            self.bar.set_description(description, refresh=False)
            self.bar.reset(total=total)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


class ReaderGone:
    """A command's output stream that outlives its reader: once a write or flush finds the pipe
    closed (`ctxlab run ... | head -1`), the rest is dropped and the command finishes its work
    (every results folder and the index written) and returns its own exit code. The stream's
    descriptor is pointed at the null device then, so the interpreter's last flush is quiet. A
    stream closed before the command started (`>&-`: Python's None) is gone from the start.
    Everything else is the stream's own (`encoding`); `isatty` is false for a stream gone."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self.gone = stream is None

    def write(self, text: str) -> int:
        if not self.gone and self._stream is not None:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._lost()
        return len(text)

    def flush(self) -> None:
        if not self.gone and self._stream is not None:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._lost()

    def isatty(self) -> bool:
        return not self.gone and self._stream is not None and self._stream.isatty()

    def _lost(self) -> None:
        self.gone, stream = True, self._stream
        with contextlib.suppress(OSError, ValueError, AttributeError):  # a stream with no descriptor
            null = os.open(os.devnull, os.O_WRONLY)
            if stream is not None:
                os.dup2(null, stream.fileno())
            os.close(null)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_stream":  # copying or unpickling: no stream yet
            raise AttributeError(name)
        return getattr(self._stream, name)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, `timeout`, a job scheduler's stop), handled as Ctrl-C is: what is being
    written is discarded rather than left half-written."""


@contextlib.contextmanager
def terminated_as_interrupted() -> Iterator[None]:
    """While the command runs, SIGTERM raises `Terminated` in this process (not in worker
    processes that inherit the handler: they end as SIGTERM ends them); outside the main thread,
    where no handler can be set, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def terminated(signum: int, frame: object) -> None:
        if os.getpid() != owner:  # a forked worker: end as the signal ends a process
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Terminated

    before = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:  # None: a handler set outside Python, which cannot be put back from here
        signal.signal(signal.SIGTERM, signal.SIG_DFL if before is None else before)
