"""`ctxlab replay` and `ctxlab import`: the transcripts agents write, replayed or converted."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ctxlab.cli.base import (
    RAW,
    BadInput,
    Commands,
    add_run_options,
    in_file,
    natural,
    out_dir,
    out_file,
    positive,
    refuse_idle_figure_options,
)
from ctxlab.cli.running import REPLAY_SOURCE, execute, execution_of

if TYPE_CHECKING:
    from ctxlab.problems import Loc, Problem

EXAMPLES_REPLAY = """examples:
  ctxlab replay session.jsonl --context-size 32000
  ctxlab replay session.jsonl --tools tools.json --set context.trigger_ratio=0.6 --record-requests
  ctxlab replay session.jsonl --preset none --set model.context_size=8000
  ctxlab replay session.jsonl --preset agentscope --preset none    both runs in one folder, compared
  ctxlab replay results.json --session 3          the fourth task run of a tau-bench results file
"""

EXAMPLES_IMPORT = """examples:
  ctxlab import ~/.claude/projects/-home-me-app/4f1c2d0e.jsonl --out session.jsonl
  ctxlab import run.traj --out session.jsonl        a SWE-agent trajectory
  ctxlab import requests.jsonl --format anthropic-messages --out session.jsonl
  ctxlab import results.json --session 3 --out run3.jsonl
                                                    the fourth run of a tau-bench or tau2 results file
  ctxlab import .claude-trace/log-2025-09-04-15-33-00.jsonl --out session.jsonl
                                                    Claude Code's API traffic, as claude-trace logs it
  ctxlab import team_state.json --session 1 --out planner.jsonl
                                                    the second agent of an AutoGen team's saved state
"""

REPLAY_CONTEXT_SIZE = 128_000

FORMAT_SUMMARIES = {
    "codex": "Codex CLI rollout (JSONL of response_item / event_msg lines)",
    "claude-code": "Claude Code session log (~/.claude/projects/*/*.jsonl)",
    "gemini-cli": "Gemini CLI session (chats/session-*.jsonl), /chat save checkpoint, or Gemini API contents",
    "opencode": (
        "OpenCode session export (`opencode export <sessionID>` JSON: info, messages with parts) "
        "or its session database (opencode.db) or older storage folder (storage/)"
    ),
    "google-adk": "Google ADK session (Session JSON, a list of its events, or a session database)",
    "openhands": "OpenHands event stream (JSON list) or evaluation output (output.jsonl)",
    "swe-agent": "SWE-agent trajectory (.traj)",
    "mini-swe-agent": "mini-swe-agent trajectory (messages JSON)",
    "langgraph": "LangGraph / LangChain thread (values.messages; or a SqliteSaver checkpoint db)",
    "tau-bench": "tau-bench results (a JSON list of task runs with their `traj`)",
    "tau2": "tau2-bench results (JSON with `simulations`; or one simulation's file)",
    "pydantic-ai": "pydantic-ai message history (all_messages_json(): JSON list of requests and responses)",
    "bedrock-converse": "Bedrock Converse messages (strands history, records or session folder; requests)",
    "agentscope": "AgentScope 2.0 agent state (`agent.state` as JSON: summary and context) or its messages",
    "autogen": "AutoGen saved state (an agent's or team's save_state() JSON) or its LLM messages",
    "letta": "Letta agent file (.af export): each agent's in-context messages, --session N per agent",
    "llamaindex": "LlamaIndex SimpleChatStore JSON or ChatMessage dumps (older `content` ones: --format)",
    "ai-sdk": "Vercel AI SDK UIMessage[] / ModelMessage[], or 4.x useChat Message[] / CoreMessage[]",
    "anthropic-messages": "Anthropic Messages API request log (JSON or JSONL; claude-trace's too)",
    "anthropic-history": "Anthropic messages list: Cline's / Roo Code's api_conversation_history.json",
    "openai-responses": "OpenAI Responses API request log (JSON or JSONL of requests)",
    "openai-agents": "OpenAI Agents SDK history (to_input_list() JSON, items a line, or SQLiteSession db)",
    "openai-chat": "OpenAI chat messages, one a line (the lab's replay format)",
}
"""Each format `import` and `replay` read (`ctxlab.workloads.importers.FORMATS`, in the same
order), in a line; kept here so that building the parser does not import the readers."""

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


_AS_A_FILE = "write a scenario file whose workload is `trace: {path: ...}` (README, Scenario files)"
_REPLAY_OWN = {
    "name": f"a replay is named after its transcript's file; to name it, {_AS_A_FILE}",
    "description": f"a replay describes itself; to describe it, {_AS_A_FILE}",
    "record_requests": "use --record-requests",
    "sweep": f"a replay runs one setting; to sweep, {_AS_A_FILE}",
    "tune": f"a replay runs one setting; to tune, {_AS_A_FILE} and run `ctxlab tune`",
}
"""What `--set` says of the top-level keys a replay sets itself."""

_OTHER_WORKLOAD = "a replay's workload is its transcript; to run another, write a scenario file"
_REPLAY_WORKLOAD = {
    "workload": f"{_OTHER_WORKLOAD}; set the transcript's own settings one by one (workload.clock.start=...)",
    "workload.trace": "the transcript is the replay's first argument; set its settings one by one",
    "workload.trace.path": "the transcript is the replay's first argument",
    "workload.trace.tools": "use --tools",
    "workload.trace.format": "use --format",
    "workload.trace.session": "use --session",
    "workload.script": _OTHER_WORKLOAD,
    "workload.generator": _OTHER_WORKLOAD,
}
"""What `--set` says of the workload settings a replay sets itself: these paths, and anything
within a script or generator."""


def _replay_document(args: argparse.Namespace) -> dict[str, Any]:
    from ctxlab.problems import ScenarioError
    from ctxlab.scenarios.located import parse_yaml
    from ctxlab.scenarios.registry import scenario_name
    from ctxlab.scenarios.sweep import SweepPathError, set_at

    twice = sorted({name for name in presets(args) if presets(args).count(name) > 1})
    if twice:
        raise BadInput([f"--preset {name}: given twice; give each preset once" for name in twice])
    trace = Path(args.trace)
    workload: dict[str, Any] = {"path": str(trace.resolve())}
    if args.tools:
        workload["tools"] = str(Path(args.tools).resolve())
    if args.format:
        workload["format"] = args.format
    if args.session:
        workload["session"] = args.session
    doc: dict[str, Any] = {
        "name": scenario_name(_session_named(trace, args.session)),
        "description": f"Replay of {trace.name} through {_named(presets(args))}.",
        "workload": {"trace": workload},
        "model": {"context_size": args.context_size or REPLAY_CONTEXT_SIZE},
        "strategies": [{"preset": preset} for preset in presets(args)],
        "record_requests": bool(args.record_requests),
    }
    messages: list[str] = []
    given: set[str] = set()
    for setting in args.set:
        path, _, text = setting.partition("=")
        refused = _refused_setting(setting, given, args)
        given.add(path)
        if refused:
            messages.append(f"--set {setting}: {refused}")
            continue
        try:
            value = parse_yaml(text or "''", f"--set {setting}").data
            for place in _places(path, doc, presets(args)):
                doc = set_at(doc, place, value)
        except SweepPathError as error:
            messages.append(f"--set {setting}: {path!r} names nothing: {error}")
        except ScenarioError as error:
            messages.extend(f"--set {setting}: {p.message}" for p in error.problems)
    if messages:
        raise BadInput(messages)
    return doc


def _session_named(trace: Path, session: int) -> Path:
    """The path a replay is named after: the transcript's, with `-session-N` after its stem for a
    conversation other than its first, so the replays of two conversations keep their folders."""
    return trace.with_name(f"{trace.stem}-session-{session}{trace.suffix}") if session else trace


def _replaced(folder: Path, trace: Mapping[str, Any]) -> str | None:
    """What `folder` holds when it is other than the replay of `trace` (the replay's own
    workload): another transcript's replay, or a scenario's results; None when it holds this
    replay (a replay rewrites its folder) or nothing the lab wrote."""
    from ctxlab.analysis.folders import ResultsError, read_manifest

    try:
        manifest = read_manifest(folder)
    except ResultsError:
        return None
    workload = (manifest.get("resolved_scenario") or {}).get("workload")
    held = workload.get("trace") if isinstance(workload, dict) else None
    if not isinstance(held, dict):
        return f"the results of {manifest.get('source') or 'a scenario'}"
    path, session = str(held.get("path")), held.get("session") or 0
    if path == trace["path"] and session == (trace.get("session") or 0):
        return None
    return f"the replay of {path}" + (f" (--session {session})" if session else "")


def presets(args: argparse.Namespace) -> list[str]:
    """The presets a replay runs, in the order given (`--preset` once or more; agentscope)."""
    return list(args.preset or ["agentscope"])


def _named(names: list[str]) -> str:
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    return f"the {listed} preset{'s' if len(names) > 1 else ''}"


def _places(path: str, doc: dict[str, Any], names: list[str]) -> list[Loc]:
    """Where a `--set` path goes: a top-level one as written; a strategy's setting in each
    chosen preset that has it (`context.trigger_ratio` in agentscope's entry, not none's).

    Raises:
        SweepPathError: no chosen preset has the setting (said of the first).
    """
    from ctxlab.scenarios.schema import Scenario, entry_model
    from ctxlab.scenarios.sweep import SweepPathError, resolve

    if path.split(".", 1)[0] in _ROOT_KEYS:
        return [resolve(path, doc, Scenario, entry_model)]
    places, first = [], None
    for name in names:
        try:
            places.append(resolve(f"strategies.{name}.{path}", doc, Scenario, entry_model))
        except SweepPathError as error:
            first = first or error
    if not places and first is not None:
        raise first
    return places


def _refused_setting(setting: str, given: set[str], args: argparse.Namespace) -> str | None:
    """Why a `--set` cannot set a replay's scenario as written (`given`: the paths set before
    it), or None."""
    path, equals, text = setting.partition("=")
    root = path.split(".", 1)[0]
    if not equals or not path:
        return "write PATH=VALUE, e.g. context.trigger_ratio=0.6"
    if path in given:
        return f"{path} is set twice; give each setting once"
    if path == "model.context_size" and args.context_size is not None:
        return f"the window is --context-size {args.context_size}; give one"
    if path == "preset":
        return f"choose the strategy with --preset {text or 'NAME'}"
    workload = ".".join(path.split(".")[:2]) if root == "workload" else path
    if path in _REPLAY_WORKLOAD or workload in ("workload.script", "workload.generator"):
        return _REPLAY_WORKLOAD.get(path) or _REPLAY_WORKLOAD[workload]
    return _REPLAY_OWN.get(root)


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Replay one transcript through a preset."""
    refuse_idle_figure_options(args)
    from ctxlab.problems import ScenarioError
    from ctxlab.scenarios.load import load_located, with_every_round
    from ctxlab.scenarios.located import Located
    from ctxlab.workloads.files import is_folder

    out_dir(args.out)
    if not is_folder(Path(args.trace)):  # a directory is a store of conversations (strands, OpenCode)
        in_file(args.trace, "transcript file", "give a transcript (`ctxlab import --help` lists the formats)")
    if args.tools is not None:
        in_file(args.tools, "file", "give the JSON list of the transcript's tool schemas", "--tools")
    doc = _replay_document(args)
    try:
        loaded = load_located(Located(file=REPLAY_SOURCE, data=doc, positions={}, lined=False), Path.cwd())
    except ScenarioError as error:
        raise BadInput([_told(p, args) for p in error.problems]) from None
    loaded, raised = with_every_round(loaded)
    replaced = _replaced(Path(args.out) / loaded.name, doc["workload"]["trace"])
    if not args.quiet:
        if replaced is not None:
            folder = Path(args.out) / loaded.name
            print(f"ctxlab replay: note: {folder}/ held {replaced}; it is replaced", file=err)
        for warning in loaded.warnings:
            print(_told(warning, args), file=err)
        for preset, cut in raised:
            print(
                f"ctxlab replay: note: the transcript's longest reply has {cut.longest:,} rounds, over "
                f"{preset}'s limit of {cut.limit.rounds:,} (react.max_iters); it is raised to "
                f"{cut.needed:,} so every recorded round is replayed (--set react.max_iters="
                f"{cut.limit.rounds} keeps the preset's)",
                file=err,
            )
    return execute([loaded], execution_of(args), out, err)


def _told(problem: Problem, args: argparse.Namespace) -> str:
    """A problem of the replay's scenario, told by what the user gave on the command line: the
    transcript, the option, or `--preset NAME` and the setting (`--set PATH=VALUE`)."""
    from ctxlab.problems import format_loc

    loc, message = problem.loc, problem.message
    options = {
        ("workload", "trace", "path"): args.trace,
        ("workload", "trace", "tools"): f"--tools {args.tools}",
        ("workload", "trace", "session"): f"--session {args.session}",
        ("workload", "trace", "format"): f"--format {args.format}",
        ("model", "context_size"): _window_option(args),
    }
    given_as = next((told for at, told in options.items() if loc[: len(at)] == at), None)
    if given_as is not None:
        return f"{REPLAY_SOURCE}: {given_as}: {message}"
    if loc[:1] == ("strategies",) and len(loc) > 2:
        setting = format_loc(loc[2:])
        given = f"; give it with {_whole_setting(loc[2:])}" if "required but missing" in message else ""
        preset = presets(args)[loc[1]] if isinstance(loc[1], int) else loc[1]
        return f"{REPLAY_SOURCE}: --preset {preset}: {setting}: {message}{given}"
    return str(problem)


def _window_option(args: argparse.Namespace) -> str:
    """How the replay's window was given: `--context-size`, or the `--set` that set it."""
    setting = next((s for s in args.set if s.startswith("model.context_size=")), None)
    return f"--set {setting}" if args.context_size is None and setting else "--context-size"


def _whole_setting(loc: Loc) -> str:
    """The `--set` that gives a missing setting: its own path, or for an item of a list (`--set`
    takes no index) the whole list's (`--set trigger=VALUE` for `trigger[1]`)."""
    from ctxlab.problems import format_loc

    item = next((i for i, key in enumerate(loc) if isinstance(key, int)), len(loc))
    whole = format_loc(loc[:item])
    return f"--set {whole}=VALUE" if item == len(loc) else f"the whole value: --set {whole}=VALUE"


def cmd_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Convert a transcript of any supported format to the OpenAI chat JSONL the lab replays."""
    from ctxlab.workloads.files import is_folder
    from ctxlab.workloads.importers import write_jsonl
    from ctxlab.workloads.trace import TraceError

    source = Path(args.transcript)
    if not is_folder(source):  # a directory is a store of conversations (strands, OpenCode)
        in_file(args.transcript, "transcript file", "give a transcript file")
    target = out_file(args.out, "--out")
    if target.is_dir():
        raise BadInput([f"--out {target}: is a folder; give the JSONL file's path"])
    if target.resolve() == source.resolve():
        raise BadInput([f"--out {target}: is the transcript itself; give another path"])
    tools_out = out_file(args.tools_out, "--tools-out") if args.tools_out else None
    if tools_out is not None and tools_out.is_dir():
        raise BadInput([f"--tools-out {tools_out}: is a folder; give the JSON file's path"])
    if tools_out is not None and tools_out.resolve() in (source.resolve(), target.resolve()):
        what = "the transcript itself" if tools_out.resolve() == source.resolve() else "the --out file"
        raise BadInput([f"--tools-out {tools_out}: is {what}; give another path"])
    try:
        fmt, count, report = write_jsonl(source, target, args.format, session=args.session)
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


def add_replay(commands: Commands) -> None:
    replay = commands.add_parser(
        "replay",
        help="replay a transcript (OpenAI chat JSONL or any format `import` reads)",
        epilog=EXAMPLES_REPLAY,
        formatter_class=RAW,
        description="Replay a transcript through a preset; writes <out>/<trace name>/.",
    )
    replay.add_argument("trace", metavar="TRACE")
    replay.add_argument(
        "--preset",
        action="append",
        default=None,
        metavar="PRESET",
        help="the strategy (default: agentscope; see `ctxlab presets`); give it more than once to "
        "compare presets in one folder",
    )
    replay.add_argument(
        "--context-size",
        type=positive,
        default=None,
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
        "--tools",
        default=None,
        metavar="FILE",
        help="tool schemas the transcript used (a JSON list, or JSONL: one a line)",
    )
    add_format_option(replay)
    add_session_option(replay)
    add_run_options(replay)
    replay.set_defaults(handler=cmd_replay)


def add_format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=list(FORMAT_SUMMARIES),
        default=None,
        help="the transcript's format (default: detected from its content)",
    )


def add_session_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--session",
        type=natural,
        default=0,
        metavar="N",
        help="which conversation of a file holding several (tau-bench and tau2 results, JSONL of "
        "trajectories, threads or fine-tuning lines; a session database's sessions, each branch of an "
        "AdvancedSQLiteSession's apart, main first; a strands session folder's agents) to read, counted "
        "from 0 in file order (default: 0, the first)",
    )


def add_import(commands: Commands) -> None:
    formats = "\n".join(f"  {name:<20}{summary}" for name, summary in FORMAT_SUMMARIES.items())
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
    add_format_option(command)
    add_session_option(command)
    command.add_argument("--quiet", action="store_true", help="print nothing but errors and warnings")
    command.set_defaults(handler=cmd_import)
