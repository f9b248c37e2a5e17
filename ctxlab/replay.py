"""Running scenarios from Python: a scenario document, one run again with changes, a transcript
through every preset. Each writes an ordinary results folder (no figures) and loads it, through
the same path as `ctxlab run` (`ctxlab.experiments.run.run_scenarios`).

This is what notebooks use to run what is not in the results yet (a user's transcript, a run
counted with a real tokenizer); everything else they read from `ctxlab run`'s results.

Invariants:
- A document goes through the same loading, checks, grid expansion, execution and result files
  as `ctxlab run`, so its folder is what the command would write for the same file.
- Runs execute in this process, one after another: no worker processes to start from a kernel.
- `rerun_document` keeps everything a run depended on (seed, resolved workload, model, prices,
  strategy settings, the sub-agents' `delegate` section) and changes only what it is told.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ctxlab.analysis.results import Results, load_results
from ctxlab.experiments.run import run_scenarios
from ctxlab.presets.registry import PRESETS
from ctxlab.scenarios.load import load_located, with_every_round
from ctxlab.scenarios.located import Located
from ctxlab.scenarios.registry import scenario_name
from ctxlab.scenarios.schema import Tokenizer

SOURCE = "<notebook>"
REPLAY_SHARE = 0.6
"""A transcript replayed without a given window gets this share of its unmanaged peak."""


def run_document(
    document: Mapping[str, Any], out: Path, *, base_dir: Path = Path(), every_round: bool = False
) -> Results:
    """Run a scenario document (the YAML file's content as a mapping) and load its results.

    Relative file paths in the document start at `base_dir`. The folder is `out/<name>/`.
    `every_round` raises a strategy's `react.max_iters` where it would cut a scripted turn short
    and the document sets none, as `ctxlab replay` does (`with_every_round`).

    Raises:
        ScenarioError: the document does not load (located messages, as `ctxlab validate` gives).
    """
    loaded = load_located(
        Located(file=SOURCE, data=copy.deepcopy(dict(document)), positions={}, lined=False), base_dir
    )
    if every_round:
        loaded, _ = with_every_round(loaded)
    (run,) = run_scenarios([loaded], out, workers=1)
    return load_results(run.written.folder)


def _set_dotted(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set `a.b.c` in nested mappings, creating the mappings on the way."""
    *parents, last = path.split(".")
    node = doc
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


def rerun_document(
    results: Results,
    run_id: str,
    *,
    tokenizer: Tokenizer | None = None,
    record_requests: bool = True,
    name: str | None = None,
) -> dict[str, Any]:
    """The document of one run of `results`, to run again with another counter.

    Trace workloads keep their paths, which are relative to the original scenario file: give
    that file's folder as `base_dir` when running the document.
    """
    entry = results.run_settings(run_id)
    resolved = copy.deepcopy(results.manifest["resolved_scenario"])
    row = results.runs.loc[results.runs["run_id"] == run_id].iloc[0]
    workload = {"workload": resolved["workload"]}
    for path, value in entry.get("params", {}).items():
        if path.startswith("workload."):
            _set_dotted(workload, path, value)
    model = dict(entry["model"])
    if tokenizer is not None:
        model["tokenizer"] = tokenizer
    return {
        "name": name or f"{results.name}-rerun",
        "description": f"Run {run_id} of {results.name} again.",
        "seed": int(row["seed"]),
        "workload": workload["workload"],
        "model": model,
        "prices": results.manifest["prices"],
        "strategies": [entry["strategy_settings"]],
        "record_requests": record_requests,
    } | ({"delegate": entry["delegate"]} if entry.get("delegate") is not None else {})


def rerun(
    results: Results, run_id: str, out: Path, *, tokenizer: Tokenizer | None = None, base_dir: Path = Path()
) -> Results:
    """Run one run of `results` again (optionally counted by `tokenizer`), recording its requests."""
    document = rerun_document(results, run_id, tokenizer=tokenizer, name=f"{run_id}-{tokenizer or 'same'}")
    return run_document(document, out, base_dir=base_dir)


def transcript_document(
    transcript: Path,
    *,
    context_size: int,
    tools: Path | None = None,
    presets: Iterable[str] | None = None,
    name: str | None = None,
    fmt: str | None = None,
) -> dict[str, Any]:
    """A scenario replaying a transcript through presets at their defaults (every registered
    preset unless named: None; an empty list names none, which the scenario refuses). The
    transcript is OpenAI chat JSONL or any format `ctxlab import` reads, detected from its
    content unless `fmt` names it."""
    names = list(PRESETS) if presets is None else list(presets)
    through = "every preset" if presets is None else ", ".join(names)
    trace: dict[str, Any] = {"path": str(transcript.resolve())}
    if tools is not None:
        trace["tools"] = str(tools.resolve())
    if fmt is not None:
        trace["format"] = fmt
    return {
        "name": name or scenario_name(transcript),
        "description": f"{transcript.name} replayed through {through}, each at its defaults.",
        "workload": {"trace": trace},
        "model": {"context_size": context_size},
        "strategies": [{"name": p, "preset": p, **REQUIRED_SETTINGS.get(p, {})} for p in names],
    }


REQUIRED_SETTINGS: dict[str, dict[str, Any]] = {"swe-agent": {"n": 5}}
"""Settings a preset's source leaves without a default, at the value its paper uses."""


def replay_window(transcript: Path, out: Path, *, tools: Path | None = None, fmt: str | None = None) -> int:
    """A window the transcript must be managed in: `REPLAY_SHARE` of its peak request with no
    management, rounded to hundreds (at least 100)."""
    probe = transcript_document(
        transcript, context_size=10**9, tools=tools, presets=["none"], name="transcript-unmanaged", fmt=fmt
    )
    peak = int(run_document(probe, out, every_round=True).runs["peak_input_tokens"].max())
    return max(100, round(peak * REPLAY_SHARE / 100) * 100)


def replay_transcript(
    transcript: Path,
    out: Path,
    *,
    context_size: int | None = None,
    tools: Path | None = None,
    presets: Iterable[str] | None = None,
    fmt: str | None = None,
) -> Results:
    """Replay a transcript (any supported format) through presets, every recorded round of it
    (`run_document`'s `every_round`); without a window (None), `replay_window` chooses one.

    Raises:
        ValueError: `presets` names none (None runs every preset).
    """
    if presets is not None:
        presets = list(presets)
        if not presets:
            raise ValueError("presets names none; name at least one, or leave it out to replay through all")
    size = replay_window(transcript, out, tools=tools, fmt=fmt) if context_size is None else context_size
    document = transcript_document(transcript, context_size=size, tools=tools, presets=presets, fmt=fmt)
    return run_document(document, out, every_round=True)
