"""`make bench`: how fast ctxlab simulates, against the real agent loop and against itself.

Prints a table of every figure with its goal and writes `benchmarks/results.json`. Ratios are
measured side by side in one run (absolute times vary by machine). Times are CPU time of the
process doing the work (`time.process_time`, or the child's rusage for whole processes), each the
best of a few repetitions, so other work on a shared machine slows neither side; the sweep is
the exception, timed on the wall clock because its work happens in worker processes.

1. Against the real loop: the same 200-reply workload through `agentscope.agent.Agent` 2.0.11
   (the parity driver) and through ctxlab's `agentscope` preset with protocol checks and cache
   accounting on: time per model call, and whole process including start-up. Each side runs as
   its users run it: the lab with the garbage collector set as the `ctxlab` command and its
   workers set it (`ctxlab.experiments.collector`; a row shows the lab with Python's default
   collector too), the real loop with Python's default. Breakdown rows time the lab with no
   meter, with each meter alone, so a call's cost reads as the engine's and each meter's.
2. Flat and linear cost: per-call time late in a 5,000-reply run against early in it, and the
   cost of one compression as the context doubles from 2,500 to 20,000 blocks.
3. Long replies: one user turn answered in 500 and in 2,000 tool rounds (a coding agent's
   session), replayed through every preset in an 8,000-token window, each preset in a process of
   its own; the longer replay's CPU time over the shorter's. A per-call cost that stays flat keeps
   it at about 4: first without a strategy (`none`, the engine and its meters alone), then each
   preset's over that; and the peak memory of each preset's process (its longest replay), the
   worst against the same 300 MB as a 10,000-call run. The same for 500 and 2,000 user turns
   of one round each. And a history never compressed, as a reference: `none` at a window of
   10^8 tokens over 2,500 and 10,000 user turns, and over one reply of 2,500 and 10,000 rounds
   (every request the whole history; each step copies the immutable history once).
4. Sweeps: 64 runs on 2 worker processes against 1.
5. Memory: peak RSS of a 10,000-call run without request recording.
6. The user's path: the same workload written as a 2,000-reply scenario file and run with
   `ctxlab run FILE --no-plots --quiet`, whole process against the real loop's whole process on
   2,000 replies, and the share of ctxlab's time spent loading and building the workload (start-up
   included), with the share of start-up and the loader's imports alone beside it.
7. The main job: `make experiments` after set-up (every shipped scenario run and its figures
   drawn, then the tuned ones tuned), on the wall clock, the best of two; and one shipped
   scenario rerun with `ctxlab run`, figures drawn, as a user reruns a file they edited.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from benchmarks.measures import (  # noqa: E402
    FIELDS,
    LONG_REPLY_ROUNDS,
    LONG_REPLY_WINDOW,
    MANY_TURNS,
    NEVER_COMPRESSED,
    NEVER_COMPRESSED_WINDOW,
    best_in_turn,
    compression_scaling,
    lab_per_call,
    per_call_profile,
    real_per_call,
    sweep_speedup,
)
from benchmarks.workload import scenario_file  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results.json"


@dataclass(frozen=True)
class Figure:
    """One measured figure and its goal."""

    name: str
    value: float
    goal: str
    met: bool
    unit: str = ""

    def row(self) -> str:
        mark = "ok " if self.met else "MISS"
        return f"{mark}  {self.name:<58} {self.value:>10.2f} {self.unit:<6} goal {self.goal}"


def process_seconds(code: str) -> float:
    """CPU time (user + system) of a fresh Python process running `code`, start-up included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


PEAK_KB = """
import resource
try:  # the high-water mark of this program's own memory (Linux)
    with open("/proc/self/status", encoding="ascii") as status:
        print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")))
except OSError:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
"""Prints the peak resident memory of the process in kB. Linux's `ru_maxrss` is not that: it
keeps the high-water mark of the process that started the program (the memory it shared before
`exec`), so a child of a large parent reports the parent's size."""


def peak_rss_mb(code: str) -> float:
    """Peak resident memory of a fresh process running `code`, in MB."""
    probe = code + "\n" + PEAK_KB
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, cwd=ROOT, env=env, capture_output=True, text=True
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024


LAB_200 = "from benchmarks.measures import lab_run; lab_run(200)"
REAL_200 = "from benchmarks.measures import real_run; real_run(200)"
LAB_10K = "from benchmarks.measures import lab_run; lab_run(5000)"


def against_the_real_loop() -> list[Figure]:
    lab, bare, checked, cached, python_gc, real = best_in_turn(
        4,
        lambda: min(lab_per_call(200) for _ in range(2)),
        lambda: lab_per_call(200, meters="none"),
        lambda: lab_per_call(200, meters="protocol"),
        lambda: lab_per_call(200, meters="cache"),
        lambda: lab_per_call(200, collect_less=False),
        lambda: real_per_call(200),
    )
    lab_proc, real_proc = best_in_turn(2, lambda: process_seconds(LAB_200), lambda: process_seconds(REAL_200))
    return [
        Figure("ctxlab per model call", lab * 1e6, "<= 50", lab * 1e6 <= 50, "us"),
        Figure("  of which the engine (meters off)", bare * 1e6, "(breakdown)", True, "us"),
        Figure("  the engine with protocol checks alone", checked * 1e6, "(breakdown)", True, "us"),
        Figure("  the engine with cache accounting alone", cached * 1e6, "(breakdown)", True, "us"),
        Figure("  with Python's default garbage collector", python_gc * 1e6, "(breakdown)", True, "us"),
        Figure("agentscope per model call", real * 1e6, "(reference)", True, "us"),
        Figure("per-call speed-up over the real loop", real / lab, ">= 30x", real / lab >= 30, "x"),
        Figure(
            "whole-process speed-up (start-up included)",
            real_proc / lab_proc,
            ">= 10x",
            real_proc / lab_proc >= 10,
            "x",
        ),
    ]


def flat_and_linear() -> list[Figure]:
    profile = per_call_profile(5000)
    late_over_early = profile.late / profile.early
    sizes = (2500, 5000, 10000, 20000)
    compression, plain_pass = compression_scaling(sizes)
    worst, plain = max(compression), max(plain_pass)
    return [
        Figure(
            "per-call time, calls 9,900-10,000 over 100-200",
            late_over_early,
            "<= 1.5x",
            late_over_early <= 1.5,
            "x",
        ),
        Figure("one compression, cost per doubling of blocks (worst)", worst, "<= 2.3x", worst <= 2.3, "x"),
        Figure("  json.dumps of the same data, per doubling (worst)", plain, "(the machine)", True, "x"),
    ]


def sweeps() -> list[Figure]:
    speedup = sweep_speedup(64)
    return [Figure("64-run sweep, 2 workers over 1", speedup, ">= 1.7x", speedup >= 1.7, "x")]


def memory() -> list[Figure]:
    peak = peak_rss_mb(LAB_10K)
    return [Figure("peak RSS of a 10,000-call run", peak, "< 300", peak < 300, "MB")]


USER_REPLIES = 2000


def the_users_path() -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as folder:
        path = Path(folder) / "bench.yaml"
        path.write_text(scenario_file(USER_REPLIES, FIELDS), encoding="utf-8")
        argv = ["run", str(path), "--no-plots", "--quiet", "--out", folder]
        run = f"from ctxlab.cli import main; main({argv!r})"
        load = (  # as `ctxlab run` loads: the loader imported and run under its collector settings
            "from pathlib import Path\n"
            "from ctxlab.experiments.collector import collecting_less\n"
            "with collecting_less():\n"
            "    from ctxlab.scenarios.load import load_scenario\n"
            f"    load_scenario(Path({str(path)!r}))"
        )
        start = load.rsplit("\n", 1)[0]  # the same process up to the load itself
        real = f"from benchmarks.measures import real_run; real_run({USER_REPLIES})"
        lab_proc, load_proc, start_proc, real_proc = best_in_turn(
            2,
            lambda: process_seconds(run),
            lambda: process_seconds(load),
            lambda: process_seconds(start),
            lambda: process_seconds(real),
        )
    share = load_proc / lab_proc
    return [
        Figure(
            "scenario file, whole-process speed-up (2,000 replies)",
            real_proc / lab_proc,
            ">= 10x",
            real_proc / lab_proc >= 10,
            "x",
        ),
        Figure(
            "  loading and building the workload, share of ctxlab's time",
            share * 100,
            "< 20",
            share < 0.2,
            "%",
        ),
        Figure(
            "    of which start-up and the loader's imports",
            start_proc / lab_proc * 100,
            "(breakdown)",
            True,
            "%",
        ),
    ]


class Growth(NamedTuple):
    """A long reply's growth through one preset (the longer replay's time over the shorter's),
    the longer replay's CPU seconds, and the peak memory of the process replaying it."""

    ratio: float
    seconds: float
    peak_mb: float


def growth_apart(
    preset: str,
    repeats: int,
    rounds: tuple[int, int] = LONG_REPLY_ROUNDS,
    shape: str = "reply",
    window: int = LONG_REPLY_WINDOW,
) -> Growth:
    """`long_reply_seconds` in a process of its own, as `ctxlab replay` runs: what the bench's own
    process holds by then (the runs before) made every collection of the longer replay longer.
    The process's peak memory is that of its longest replay (each replay's results are freed)."""
    code = (
        "from benchmarks.measures import long_reply_seconds\n"
        f"print(*long_reply_seconds({preset!r}, {rounds!r}, repeats={repeats}, shape={shape!r}, "
        f"window={window}))\n" + PEAK_KB
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=ROOT, env=env, capture_output=True, text=True
    )
    short, long, peak_kb = done.stdout.split()[-3:]
    return Growth(float(long) / float(short), float(long), int(peak_kb) / 1024)


def long_replies() -> list[Figure]:
    from ctxlab.presets.registry import PRESETS

    short, long = LONG_REPLY_ROUNDS
    # `none` is a goal itself and every preset's yardstick, and cheap: the best of more repeats
    measured = {name: growth_apart(name, repeats=5 if name == "none" else 2) for name in PRESETS}
    growth = {name: m.ratio for name, m in measured.items()}
    floor = growth["none"]
    over = {name: value / floor for name, value in growth.items() if name != "none"}
    worst = max(over, key=over.__getitem__)
    heaviest = max(measured, key=lambda name: measured[name].peak_mb)
    peak = measured[heaviest].peak_mb
    cost = {name: m.seconds / measured["none"].seconds for name, m in measured.items()}
    dearest = max((name for name in cost if name != "none"), key=cost.__getitem__)
    flat = 1.25 * long / short
    return [
        Figure(
            f"long reply, {long:,} rounds over {short:,}, no strategy (none)",
            floor,
            f"<= {flat:g}x",
            floor <= flat,
            "x",
        ),
        Figure(
            f"  a preset's growth over none's, worst ({worst})",
            over[worst],
            "<= 1.5x",
            over[worst] <= 1.5,
            "x",
        ),
        Figure(
            f"  a preset's {long:,}-round replay, CPU time over none's, worst ({dearest})",
            cost[dearest],
            "(reference)",
            True,
            "x",
        ),
        Figure(
            f"  peak RSS replaying {long:,} rounds, worst ({heaviest}; none {measured['none'].peak_mb:.0f})",
            peak,
            "< 300",
            peak < 300,
            "MB",
        ),
        *(
            Figure(f"    {name} (time {cost[name]:.1f}x none's)", value, "(each)", True, "x")
            for name, value in growth.items()
        ),
    ]


def many_turns() -> list[Figure]:
    """The replay of many user turns (the history grows by whole messages, not inside one reply)
    through every preset: `none`'s growth against a flat cost per call, each preset's beside it."""
    from ctxlab.presets.registry import PRESETS

    short, long = MANY_TURNS
    measured = {
        name: growth_apart(name, repeats=5 if name == "none" else 2, rounds=MANY_TURNS, shape="turns")
        for name in PRESETS
    }
    floor = measured["none"].ratio
    over = {name: m.ratio / floor for name, m in measured.items() if name != "none"}
    worst = max(over, key=over.__getitem__)
    flat = 1.25 * long / short
    return [
        Figure(
            f"many turns, {long:,} over {short:,}, no strategy (none)",
            floor,
            f"<= {flat:g}x",
            floor <= flat,
            "x",
        ),
        Figure(f"  a preset's growth over none's, worst ({worst})", over[worst], "(reference)", True, "x"),
        *(
            Figure(f"    {name} ({m.seconds:.2f} s for {long:,} turns)", m.ratio, "(each)", True, "x")
            for name, m in measured.items()
        ),
    ]


def never_compressed() -> list[Figure]:
    """`none` at a window no transcript fills, so every request is the whole history: how the
    replay of many turns, and of one long reply, grows with the history (flat per call: the
    ratio of the lengths). A reference, not a goal: each step makes a new immutable tuple of the
    history, which costs a copy of it."""
    short, long = NEVER_COMPRESSED
    rows = []
    for shape, what in (("turns", "user turns"), ("reply", "rounds of one reply")):
        growth = growth_apart("none", 1, NEVER_COMPRESSED, shape, NEVER_COMPRESSED_WINDOW)
        rows.append(
            Figure(
                f"never compressed, {long:,} {what} over {short:,} (none; {growth.seconds:.1f} s)",
                growth.ratio,
                "(reference)",
                True,
                "x",
            )
        )
    return rows


def make_experiments_seconds(repeats: int = 2) -> float:
    """Wall seconds of what `make experiments` runs after set-up: `ctxlab run` over every shipped
    scenario, then `ctxlab tune` over those with a tune: section, into a fresh folder; the best
    of `repeats` (on the wall clock, a burst of other work on a shared machine lands in one)."""
    return min(_make_experiments_once() for _ in range(repeats))


def _make_experiments_once() -> float:
    scenarios = sorted(str(p) for p in (ROOT / "scenarios").glob("*.yaml"))
    tuned = [p for p in scenarios if "\ntune:" in "\n" + Path(p).read_text(encoding="utf-8")]
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as folder:
        commands = [["run", *scenarios, "--out", folder, "--quiet"]]
        if tuned:
            commands.append(["tune", *tuned, "--out", folder, "--batch", "2", "--workers", "2", "--quiet"])
        start = time.perf_counter()
        for command in commands:
            argv = [sys.executable, "-m", "ctxlab", *command]
            subprocess.run(argv, check=True, cwd=ROOT, capture_output=True)
        return time.perf_counter() - start


ONE_SCENARIO = "window-sweep.yaml"
"""A scenario a user reruns after an edit: 16 runs and their 18 figures."""


def one_scenario_seconds() -> tuple[float, float]:
    """Wall seconds of `ctxlab run` on one shipped scenario with its figures, into a new folder
    and again into that folder (its results unchanged, so its figures are kept), each the best
    of two."""
    drawn = kept = float("inf")
    for _ in range(2):
        with tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as folder:
            argv = [
                sys.executable,
                "-m",
                "ctxlab",
                "run",
                f"scenarios/{ONE_SCENARIO}",
                "--out",
                folder,
                "--quiet",
            ]
            seconds = []
            for _ in range(2):
                start = time.perf_counter()
                subprocess.run(argv, check=True, cwd=ROOT, capture_output=True)
                seconds.append(time.perf_counter() - start)
            drawn, kept = min(drawn, seconds[0]), min(kept, seconds[1])
    return drawn, kept


def the_main_job() -> list[Figure]:
    seconds, (one, again) = make_experiments_seconds(), one_scenario_seconds()
    return [
        Figure("make experiments after set-up (wall, 2 cores)", seconds, "< 30", seconds < 30, "s"),
        Figure(f"  ctxlab run {ONE_SCENARIO}, figures drawn (wall)", one, "(reference)", True, "s"),
        Figure("  the same again, results unchanged: figures kept (wall)", again, "(reference)", True, "s"),
    ]


def main() -> int:
    figures: list[Figure] = []
    sections = (
        against_the_real_loop,
        flat_and_linear,
        long_replies,
        many_turns,
        never_compressed,
        sweeps,
        memory,
        the_users_path,
        the_main_job,
    )
    for section in sections:
        figures.extend(section())
    print("\n".join(f.row() for f in figures))
    data = [f.__dict__ for f in figures]
    RESULTS.write_text(
        json.dumps({"cpus": os.cpu_count(), "figures": data}, indent=2) + "\n", encoding="utf-8"
    )
    print(f"\nwritten {RESULTS.relative_to(ROOT)}")
    return 0 if all(f.met for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
