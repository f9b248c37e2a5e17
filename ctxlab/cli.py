"""The `ctxlab` command line (README.md, The `ctxlab` command); `python -m ctxlab` is the same.

Exit codes: 0 ok; 1 a run failed (its results are still written, marked failed); 2 bad input.

Invariants:
- Bad input (a scenario, trace or option that cannot be used) exits 2 with located messages on
  stderr, no traceback, and writes nothing: every input is loaded and checked before any run.
- Warnings go to stderr; results and summaries to stdout; `--quiet` keeps stdout empty.
- A progress bar is shown only when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from ctxlab import __version__
from ctxlab.core.wire.views import WireName
from ctxlab.problems import Problem, ScenarioError
from ctxlab.scenarios.load import LoadedScenario, load_located, load_scenario, scenario_name
from ctxlab.scenarios.located import Located, parse_yaml

EXAMPLES_RUN = """examples:
  ctxlab run scenarios/*.yaml                       every scenario, results in results/<name>/
  ctxlab run scenarios/trigger-reserve-sweep.yaml --workers 2 --out /tmp/results
  ctxlab run big-sweep.yaml --executor dask --scheduler tcp://10.0.0.5:8786
"""
EXAMPLES_REPLAY = """examples:
  ctxlab replay session.jsonl --context-size 32000
  ctxlab replay session.jsonl --tools tools.json --set context.trigger_ratio=0.6 --record-requests
  ctxlab replay session.jsonl --preset none --set model.context_size=8000
"""
EXAMPLES_IMPORT = """examples:
  ctxlab import ~/.claude/projects/-home-me-app/4f1c2d0e.jsonl --out session.jsonl
  ctxlab import run.traj --out session.jsonl        a SWE-agent trajectory
  ctxlab import requests.jsonl --format anthropic-messages --out session.jsonl
"""
EPILOG = """examples:
  ctxlab validate scenarios/*.yaml
  ctxlab run scenarios/*.yaml --out results
  ctxlab replay session.jsonl --context-size 32000
  ctxlab import run.traj --out session.jsonl
  ctxlab plot results
  ctxlab presets -v
  ctxlab schema

exit codes: 0 ok, 1 a run failed, 2 bad input (a located message, nothing written)
"""
REPLAY_CONTEXT_SIZE = 128_000


class BadInput(Exception):
    """Input that cannot be used; the messages say where and how to fix it."""

    def __init__(self, messages: Sequence[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = tuple(messages)


def _problem_text(problem: Problem) -> str:
    if problem.at is not None and problem.at.file == REPLAY_SOURCE:
        return f"ctxlab replay: {problem.field}: {problem.message}" if problem.loc else problem.message
    return str(problem)


def _load_all(paths: Sequence[str]) -> list[LoadedScenario]:
    loaded: list[LoadedScenario] = []
    messages: list[str] = []
    for path in paths:
        try:
            loaded.append(load_scenario(Path(path)))
        except ScenarioError as error:
            messages.extend(_problem_text(p) for p in error.problems)
    names: dict[str, str] = {}
    for item in loaded:
        if item.name in names:
            messages.append(
                f"{item.source}:1:1: name: {item.name!r} is also the name of {names[item.name]}; both would "
                "write the same results folder, so give each scenario its own name"
            )
        names.setdefault(item.name, item.source)
    if messages:
        raise BadInput(messages)
    return loaded


def _warn(loaded: Sequence[LoadedScenario], err: TextIO) -> None:
    for item in loaded:
        for warning in item.warnings:
            print(_problem_text(warning), file=err)


def cmd_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Check scenario files; print one line per file."""
    from ctxlab.experiments.grid import expand

    loaded = _load_all(args.scenarios)
    _warn(loaded, err)
    for item in loaded:
        runs = len(expand(item))
        print(f"ok: {item.source}: {item.name}, {runs} run{'s' if runs != 1 else ''}", file=out)
    return 0


def _out_dir(value: str) -> Path:
    out = Path(value)
    if out.exists() and not out.is_dir():
        raise BadInput([f"--out {value}: is a file; give a folder for the results"])
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Execution:
    """How `run` and `replay` execute and write: the options they share."""

    out_dir: str
    record_requests: bool = False
    wire: WireName = "openai"
    quiet: bool = False
    plots: bool = True
    svg: bool = False
    executor: Literal["local", "dask"] = "local"
    workers: int | None = None
    scheduler: str | None = None


def _execute(loaded: Sequence[LoadedScenario], how: Execution, out: TextIO, err: TextIO) -> int:
    """Run every scenario, write its folder and the index; 1 when a run failed."""
    from ctxlab.analysis.folder_figures import plot_folder
    from ctxlab.analysis.report import write_index
    from ctxlab.experiments.executors import ExecutorUnavailableError
    from ctxlab.experiments.grid import expand
    from ctxlab.experiments.run import run_scenarios

    root = _out_dir(how.out_dir)
    total = sum(len(expand(item)) for item in loaded)
    with _Progress(total, quiet=how.quiet, err=err) as tick:
        try:
            runs = run_scenarios(
                loaded,
                root,
                record_requests=True if how.record_requests else None,
                wire=how.wire,
                executor=how.executor,
                workers=how.workers,
                scheduler=how.scheduler,
                on_done=tick,
                plot=functools.partial(plot_folder, svg=how.svg) if how.plots else None,
            )
        except ExecutorUnavailableError as unavailable:
            raise BadInput([str(unavailable)]) from None
    failed = 0
    for run in runs:
        item, written = run.scenario, run.written
        failed += written.failed
        if written.plot_error:
            failed += 1
            print(f"{item.source}: the figures could not be drawn: {written.plot_error}", file=err)
        if not how.quiet:
            print(_summary(written.folder, run.results), file=out)
        for result in run.results:
            if result.status == "failed":
                print(f"{item.source}: run {result.run_id} failed: {result.error}", file=err)
    index = write_index(root)
    if not how.quiet:
        print(f"index: {index}", file=out)
    return 1 if failed else 0


def _summary(folder: Path, results: Sequence[Any]) -> str:
    failed = sum(1 for r in results if r.status == "failed")
    peaks = [
        r.measures.get("peak_input_tokens")
        for r in results
        if r.measures.get("peak_input_tokens") is not None
    ]
    peak = f", peak input {max(peaks):,} tokens" if peaks else ""
    status = f", {failed} FAILED" if failed else ""
    return f"{folder}/: {len(results)} run{'s' if len(results) != 1 else ''}{status}{peak}"


class _Progress:
    """A tqdm bar on a terminal; a no-op otherwise (never written to a pipe or a file)."""

    def __init__(self, total: int, *, quiet: bool, err: TextIO) -> None:
        self.bar: Any = None
        if not quiet and total > 1 and err.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="run", desc="running", file=err, leave=False)

    def __enter__(self) -> Any:
        return self.tick

    def tick(self, result: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run scenario files and write their results."""
    loaded = _load_all(args.scenarios)
    _out_dir(args.out)
    if not args.quiet:
        _warn(loaded, err)
    how = Execution(
        out_dir=args.out,
        record_requests=args.record_requests,
        wire=args.wire,
        quiet=args.quiet,
        plots=not args.no_plots,
        svg=args.svg,
        executor=args.executor,
        workers=args.workers,
        scheduler=args.scheduler,
    )
    return _execute(loaded, how, out, err)


REPLAY_SOURCE = "<replay>"
_ROOT_KEYS = {
    "name",
    "description",
    "seed",
    "workload",
    "model",
    "prices",
    "strategies",
    "sweep",
    "record_requests",
}


def _replay_document(args: argparse.Namespace) -> dict[str, Any]:
    from ctxlab.scenarios.schema import Scenario, entry_model
    from ctxlab.scenarios.sweep import SweepPathError, resolve, set_at

    trace = Path(args.trace)
    workload: dict[str, Any] = {"path": str(trace.resolve())}
    if args.tools:
        workload["tools"] = str(Path(args.tools).resolve())
    if args.format:
        workload["format"] = args.format
    doc: dict[str, Any] = {
        "name": scenario_name(trace),
        "description": f"Replay of {trace.name} through the {args.preset} preset.",
        "workload": {"trace": workload},
        "model": {"context_size": args.context_size},
        "strategies": [{"preset": args.preset}],
        "record_requests": bool(args.record_requests),
    }
    messages: list[str] = []
    for setting in args.set:
        path, equals, text = setting.partition("=")
        if not equals or not path:
            messages.append(f"--set {setting}: write PATH=VALUE, e.g. context.trigger_ratio=0.6")
            continue
        if path.split(".", 1)[0] not in _ROOT_KEYS:
            path = f"strategies.{args.preset}.{path}"
        try:
            value = parse_yaml(text or "''", f"--set {setting}").data
            doc = set_at(doc, resolve(path, doc, Scenario, entry_model), value)
        except SweepPathError as error:
            messages.append(f"--set {setting}: {path!r} names nothing: {error}")
        except ScenarioError as error:
            messages.extend(f"--set {setting}: {p.message}" for p in error.problems)
    if messages:
        raise BadInput(messages)
    return doc


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Replay one transcript through a preset."""
    _out_dir(args.out)
    if not Path(args.trace).is_file():
        raise BadInput(
            [
                f"{args.trace}: no such transcript file; give a transcript "
                "(`ctxlab import --help` lists the formats)"
            ]
        )
    doc = _replay_document(args)
    try:
        loaded = load_located(Located(file=REPLAY_SOURCE, data=doc, positions={}), Path.cwd())
    except ScenarioError as error:
        raise BadInput([_problem_text(p) for p in error.problems]) from None
    if not args.quiet:
        _warn([loaded], err)
    how = Execution(
        out_dir=args.out, record_requests=args.record_requests, wire=args.wire, quiet=args.quiet, workers=1
    )
    return _execute([loaded], how, out, err)


def cmd_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Convert a transcript of any supported format to the OpenAI chat JSONL the lab replays."""
    from ctxlab.workloads.importers import write_jsonl
    from ctxlab.workloads.trace import TraceError

    source, target = Path(args.transcript), Path(args.out)
    if not source.is_file():
        raise BadInput([f"{source}: no such transcript file"])
    if target.is_dir():
        raise BadInput([f"--out {target}: is a folder; give the JSONL file's path"])
    if target.resolve() == source.resolve():
        raise BadInput([f"--out {target}: is the transcript itself; give another path"])
    tools_out = Path(args.tools_out) if args.tools_out else None
    if tools_out is not None and tools_out.is_dir():
        raise BadInput([f"--tools-out {tools_out}: is a folder; give the JSON file's path"])
    try:
        fmt, count, report = write_jsonl(source, target, args.format)
    except TraceError as error:
        raise BadInput([str(error)]) from None
    for warning in report.warnings():
        print(f"{source}: warning: {warning}", file=err)
    if tools_out is not None:
        schemas = [schema.as_openai() for schema in report.tools]
        tools_out.write_text(json.dumps(schemas, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if not args.quiet:
        print(f"{target}: {count} messages from {source} ({fmt})", file=out)
        if report.tools and tools_out is None:
            print(
                f"the file declares {len(report.tools)} tool schemas; --tools-out FILE writes them", file=out
            )
    return 0


def cmd_plot(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Redraw the figures of a results folder (one scenario's, or a root of several)."""
    from ctxlab.analysis.folder_figures import plot_folder
    from ctxlab.analysis.report import write_index
    from ctxlab.analysis.results import result_folders

    root = Path(args.results)
    folders = result_folders(root) if root.is_dir() else []
    if not folders:
        raise BadInput(
            [f"{root}: no results here (no manifest.json in it or its subfolders); run `ctxlab run` first"]
        )
    for folder in folders:
        written = plot_folder(folder, svg=args.svg)
        print(f"{folder}/figures/: {len(written)} file{'' if len(written) == 1 else 's'}", file=out)
    if folders != [root]:
        print(f"index: {write_index(root)}", file=out)
    return 0


PEER_PACKAGES: dict[str, tuple[str, ...]] = {
    "agentscope": ("agentscope",),
    "langchain-clear": ("langchain", "langchain-core"),
    "langchain-summary": ("langchain", "langchain-core"),
    "deepagents": ("deepagents", "langchain", "langchain-core"),
}
"""The packages a preset is checked against call for call, by preset."""


def installed(packages: Sequence[str]) -> str:
    """The installed versions of `packages` ("name version", or "name not installed")."""
    from importlib import metadata

    shown = []
    for name in packages:
        try:
            shown.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            shown.append(f"{name} not installed")
    return ", ".join(shown)


def cmd_presets(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """One line per preset: its name, then its parameters with their defaults."""
    from ctxlab.presets.registry import PRESETS, entry_defaults

    width = max(len(name) for name in PRESETS)
    for preset in PRESETS.values():
        defaults = entry_defaults(preset.name).items()
        params = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in defaults)
        print(f"{preset.name:<{width}}  {params or '(no parameters)'}", file=out)
        if args.verbose:
            print(f"{'':<{width}}  {preset.summary}", file=out)
            print(f"{'':<{width}}  source: {preset.source}", file=out)
            if preset.name in PEER_PACKAGES:
                print(f"{'':<{width}}  installed: {installed(PEER_PACKAGES[preset.name])}", file=out)
            for note in preset.notes:
                print(f"{'':<{width}}  note: {note}", file=out)
    return 0


def cmd_schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the JSON Schema of scenario files."""
    from ctxlab.scenarios.schema import scenario_json_schema

    path = Path(args.out)
    if path.is_dir():
        raise BadInput([f"--out {path}: is a folder; give the schema file's path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(scenario_json_schema(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=out)
    return 0


def _add_run_options(parser: argparse.ArgumentParser) -> None:
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


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1")
    return value


Commands = Any  # argparse's subparsers action (its type is private)
RAW = argparse.RawDescriptionHelpFormatter


def _add_validate(commands: Commands) -> None:
    validate = commands.add_parser(
        "validate",
        help="check scenario files",
        description="Check scenario files: exit 0, or 2 with every problem located.",
    )
    validate.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    validate.set_defaults(handler=cmd_validate)


def _add_run(commands: Commands) -> None:
    run = commands.add_parser(
        "run",
        help="run scenario files",
        epilog=EXAMPLES_RUN,
        formatter_class=RAW,
        description="Run scenario files; each writes <out>/<name>/, and <out>/index.md links them.",
    )
    run.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    run.add_argument(
        "--workers", type=_positive, default=None, metavar="N", help="worker processes (default: cores)"
    )
    run.add_argument(
        "--executor", choices=("local", "dask"), default="local", help="local processes or a Dask cluster"
    )
    run.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="Dask scheduler, e.g. tcp://host:8786 (default: a LocalCluster)",
    )
    run.add_argument("--no-plots", action="store_true", help="skip the figures")
    run.add_argument("--svg", action="store_true", help="draw every figure as SVG too (PNG only by default)")
    _add_run_options(run)
    run.set_defaults(handler=cmd_run)


def _add_replay(commands: Commands) -> None:
    replay = commands.add_parser(
        "replay",
        help="replay a transcript (OpenAI chat JSONL or any format `import` reads)",
        epilog=EXAMPLES_REPLAY,
        formatter_class=RAW,
        description="Replay a transcript through a preset; writes <out>/<trace name>/.",
    )
    replay.add_argument("trace", metavar="TRACE")
    replay.add_argument(
        "--preset", default="agentscope", help="the strategy (default: agentscope; see `ctxlab presets`)"
    )
    replay.add_argument(
        "--context-size",
        type=_positive,
        default=REPLAY_CONTEXT_SIZE,
        metavar="N",
        help=f"the window in tokens (default: {REPLAY_CONTEXT_SIZE:,})",
    )
    replay.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="set a scenario field; a path outside the top-level keys is the strategy's "
        "(context.trigger_ratio=0.6); repeatable",
    )
    replay.add_argument(
        "--tools", default=None, metavar="FILE", help="tool schemas (a JSON list) the transcript used"
    )
    _add_format_option(replay)
    _add_run_options(replay)
    replay.set_defaults(handler=cmd_replay)


def _add_format_option(parser: argparse.ArgumentParser) -> None:
    from ctxlab.workloads.importers import FORMATS

    parser.add_argument(
        "--format",
        choices=list(FORMATS),
        default=None,
        help="the transcript's format (default: detected from its content)",
    )


def _add_import(commands: Commands) -> None:
    from ctxlab.workloads.importers import FORMATS

    formats = "\n".join(f"  {name:<20}{fmt.summary}" for name, fmt in FORMATS.items())
    command = commands.add_parser(
        "import",
        help="convert an agent's transcript to OpenAI chat JSONL",
        epilog=f"formats (detected from the content):\n{formats}\n\n{EXAMPLES_IMPORT}",
        formatter_class=RAW,
        description="Read a transcript your agent wrote and write the OpenAI chat JSONL the lab replays "
        "(one message a line), to inspect or edit it. Nothing is written when the file cannot be read; "
        "entries that are not part of the conversation are counted on stderr.",
    )
    command.add_argument("transcript", metavar="TRANSCRIPT")
    command.add_argument("--out", required=True, metavar="FILE.jsonl", help="where to write the JSONL")
    command.add_argument(
        "--tools-out",
        default=None,
        metavar="FILE.json",
        help="also write the tool schemas the file declares (the JSON list `replay --tools` reads)",
    )
    _add_format_option(command)
    command.add_argument("--quiet", action="store_true", help="print nothing but errors and warnings")
    command.set_defaults(handler=cmd_import)


def _add_tools(commands: Commands) -> None:
    plot = commands.add_parser(
        "plot",
        help="redraw the figures of results",
        description="Redraw the figures of a results folder (one scenario's, or a root of several, "
        "whose index.md is rewritten).",
    )
    plot.add_argument("results", metavar="RESULTS_DIR")
    plot.add_argument("--svg", action="store_true", help="draw every figure as SVG too (PNG only by default)")
    plot.set_defaults(handler=cmd_plot)
    presets = commands.add_parser("presets", help="list the presets and their parameters")
    presets.add_argument("-v", "--verbose", action="store_true", help="add each preset's summary and source")
    presets.set_defaults(handler=cmd_presets)
    schema = commands.add_parser("schema", help="write the JSON Schema of scenario files")
    schema.add_argument(
        "--out",
        default="scenarios/scenario.schema.json",
        metavar="PATH",
        help="where to write it (default: scenarios/scenario.schema.json)",
    )
    schema.set_defaults(handler=cmd_schema)


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
    for add in (_add_validate, _add_run, _add_replay, _add_import, _add_tools):
        add(commands)
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command; returns the exit code (0 ok, 1 a run failed, 2 bad input)."""
    out, err = out or sys.stdout, err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args, out, err)
    except BadInput as bad:
        for message in bad.messages:
            print(message, file=err)
        return 2
    except KeyboardInterrupt:
        print("interrupted: results being written were discarded; earlier results are untouched", file=err)
        return 130
    except OSError as error:
        print(f"ctxlab: {error}", file=err)
        return 1
    return code
