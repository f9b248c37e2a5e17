"""Instructions per model call of the bench workload, counted by valgrind's callgrind.

Seconds on a shared two-core machine move by a tenth or more between minutes, so a change that
saves 2% of a call cannot be told from noise by timing it; an instruction count is the same
on a busy machine as on an idle one (for the same interpreter, code and input; hash seeds are
fixed). A call's count is measured as the difference between a process that runs the 200-reply
workload three times and one that runs it once, after the same warm-up run, so start-up,
imports and building the script cancel out.

    python benchmarks/instructions.py                  # both meters, as a run has them
    python benchmarks/instructions.py --meters none    # the engine alone
    python benchmarks/instructions.py --root ../old    # another checkout of the lab, to compare

Each count takes about a minute and a half (callgrind runs the interpreter some fifty times
slower). It is a developer's tool, not a figure of `make bench`: instructions are not time
(a cache miss costs more than an add), so a change is kept for the seconds `make bench` shows.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPLIES = 200
_COUNT = re.compile(r"Collected : (\d+)")

_RUNS = """
import sys
sys.path.insert(0, {root!r})
from benchmarks.measures import lab_run
from benchmarks.workload import replies
script = replies({replies})
calls = len(lab_run({replies}, script=script).calls)
for _ in range({runs}):
    lab_run({replies}, script=script, meters={meters!r})
print(calls)
"""


def counted(root: Path, runs: int, meters: str) -> tuple[int, int]:
    """Instructions of a process running the workload once to warm up and then `runs` times,
    and the number of model calls of one run."""
    code = _RUNS.format(root=str(root), replies=REPLIES, runs=runs, meters=meters)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = _COUNT.search(done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1)), int(done.stdout.split()[-1])


def per_call(root: Path, meters: str) -> float:
    """Instructions per model call of one run of the workload."""
    once, calls = counted(root, 1, meters)
    thrice, _ = counted(root, 3, meters)
    return (thrice - once) / 2 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--meters", choices=("both", "protocol", "cache", "none"), default="both")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout of the lab to count")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("instructions.py: valgrind is not installed (Debian: apt-get install valgrind)")
    count = per_call(args.root.resolve(), args.meters)
    print(f"{args.root}: {count / 1000:,.1f} k instructions per model call ({args.meters} meters)")


if __name__ == "__main__":
    main()
