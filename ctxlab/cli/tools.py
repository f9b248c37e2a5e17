"""`ctxlab plot`, `ctxlab presets` and `ctxlab schema`: results redrawn, presets listed, the
scenario files' JSON Schema written."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ctxlab.cli.base import BadInput, Commands, Progress, out_file, positive


def cmd_plot(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Redraw the figures of a results folder (one scenario's, or a root of several)."""
    from ctxlab.analysis.folder_figures import plot_folders
    from ctxlab.analysis.folders import ResultsError, result_folders
    from ctxlab.analysis.report import read_runs, write_index
    from ctxlab.experiments.replace import unreplaceable

    root = Path(args.results)
    if not root.exists():
        raise BadInput([f"{root}: does not exist; give a results folder (`ctxlab run` writes one)"])
    folders = result_folders(root) if root.is_dir() else []
    if not folders:
        raise BadInput(
            [f"{root}: no results here (no manifest.json in it or its subfolders); run `ctxlab run` first"]
        )
    blocked = [why for why in (unreplaceable(f / "figures", "") for f in folders) if why is not None]
    if blocked:  # figures/ is the lab's: drawing replaces it whole
        raise BadInput(blocked)
    try:
        for folder in folders:  # as the index reads them (its `runs.csv`), so that it can show each
            read_runs(folder)
        with Progress([("drawing", "scenario", len(folders))], quiet=False, err=err) as progress:
            drawn = plot_folders(folders, svg=args.svg, workers=args.workers, on_drawn=progress.step)
    except ResultsError as error:  # every folder's figures are left as they were
        raise BadInput([str(error)]) from None
    for folder, written in zip(folders, drawn, strict=True):
        print(f"{folder}/figures/: {len(written)} file{'' if len(written) == 1 else 's'}", file=out)
    if folders != [root]:
        print(f"index: {write_index(root)}", file=out)
    return 0


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
            if preset.peers:
                print(f"{'':<{width}}  installed: {installed(preset.peers)}", file=out)
            print(f"{'':<{width}}  no system prompt: requests carry {preset.no_system}", file=out)
            if preset.loop_limit is not None:
                limit = (
                    f"react.max_iters defaults to {preset.loop_limit:,} rounds a reply, not AgentScope's 50"
                )
                print(f"{'':<{width}}  loop limit: {limit}", file=out)
            for note in preset.remarks:
                print(f"{'':<{width}}  note: {note}", file=out)
    return 0


def cmd_schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the JSON Schema of scenario files."""
    from ctxlab.scenarios.schema import scenario_json_schema

    path = out_file(args.out, "--out")
    if path.is_dir():
        raise BadInput([f"--out {path}: is a folder; give the schema file's path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(scenario_json_schema(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=out)
    return 0


def add_tools(commands: Commands) -> None:
    plot = commands.add_parser(
        "plot",
        help="redraw the figures of results",
        description="Redraw the figures of a results folder (one scenario's, or a root of several, "
        "whose index.md is rewritten).",
    )
    plot.add_argument("results", metavar="RESULTS_DIR")
    plot.add_argument("--svg", action="store_true", help="draw every figure as SVG too (PNG only by default)")
    plot.add_argument(
        "--workers", type=positive, default=None, metavar="N", help="worker processes (default: cores)"
    )
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
