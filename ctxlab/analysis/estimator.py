"""How far AgentScope's byte estimate is from real tokenizers, and what that does to a run.

Text samples (generated filler of every kind, or the pieces of a transcript) are counted by
the estimate and by real BPE encodings; recorded requests of a run are counted again by any
counter, so a run the estimate decided can be measured by what a provider would count.

Invariants:
- `error = estimate / real - 1`: negative when the estimate counts too few tokens (the request
  is larger than the agent believes), positive when it counts too many.
- Counting a recorded request with `AgentScopeEstimator` gives back the recorded input tokens
  (requests are stored as the provider receives them; nothing the estimate counts is lost).
- Generated samples depend only on their kind, size and seed.

Figures: `estimate_errors`, `fill_at_trigger` and `estimate_vs_real` draw the estimate against
real tokenizers; like `plots`, each takes frames and returns a `Figure`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from ctxlab.analysis import plots
from ctxlab.analysis.results import Results, has_event, iter_requests
from ctxlab.core.events import EventKind
from ctxlab.core.messages.tokens import AgentScopeEstimator, TokenCounter
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.views import from_openai
from ctxlab.workloads.files import text_lines
from ctxlab.workloads.filler import FILLER_KINDS, FillerKind, filler_at

ENCODINGS = ("o200k_base", "cl100k_base")
SIZES = (256, 1024, 4096, 16384)
"""Sample sizes in bytes: a short message, a tool result, a file, a long page."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """One text to count: its kind (a filler kind, or a transcript role) and where it is from."""

    kind: str
    source: str
    text: str


def generated_samples(
    kinds: Sequence[FillerKind] = FILLER_KINDS, sizes: Sequence[int] = SIZES, seeds: Iterable[int] = range(3)
) -> list[Sample]:
    """Filler of each kind, size and seed (deterministic).

    >>> [(s.kind, len(s.text.encode())) for s in generated_samples(["json"], [100], [0])]
    [('json', 100)]
    """
    seeds = list(seeds)
    return [
        Sample(
            kind=kind, source=f"generated {size} B, seed {seed}", text=filler_at(seed, "sample", kind, size)
        )
        for kind in kinds
        for size in sizes
        for seed in seeds
    ]


def _message_pieces(message: dict[str, Any]) -> Iterable[str]:
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        yield "".join(p.get("text", "") for p in content if isinstance(p, dict))
    for call in message.get("tool_calls") or ():
        yield str(call.get("function", {}).get("arguments", ""))


def transcript_samples(path: Path, *, min_bytes: int = 64) -> list[Sample]:
    """Every text piece of an OpenAI chat JSONL transcript of at least `min_bytes` bytes, its kind
    `transcript <role>` (one JSON message per line; a line may also hold `{"messages": [...]}`)."""
    samples = []
    for line in text_lines(path.read_text(encoding="utf-8")):  # not splitlines: U+2028 is JSON text
        if not line.strip():
            continue
        data = json.loads(line)
        messages = data.get("messages", [data]) if isinstance(data, dict) else []
        for message in messages:
            for piece in _message_pieces(message):
                if len(piece.encode("utf-8")) >= min_bytes:
                    role = message.get("role", "?")
                    samples.append(Sample(kind=f"transcript {role}", source=path.name, text=piece))
    return samples


def bpe_counter(encoding: str) -> TokenCounter:
    """A real tokenizer's counter (needs the `tokenizers` extra)."""
    from ctxlab.tokenizers import BpeCounter

    return BpeCounter(encoding)  # type: ignore[arg-type]


def count_samples(samples: Sequence[Sample], encodings: Sequence[str] = ENCODINGS) -> pd.DataFrame:
    """One row per sample: bytes, characters, the estimate, each encoding's count and the error."""
    estimator = AgentScopeEstimator()
    counters = {name: bpe_counter(name) for name in encodings}
    rows = []
    for sample in samples:
        row: dict[str, Any] = {
            "kind": sample.kind,
            "source": sample.source,
            "bytes": len(sample.text.encode("utf-8")),
            "chars": len(sample.text),
            "estimate": estimator.text_tokens(sample.text),
        }
        for name, counter in counters.items():
            real = counter.text_tokens(sample.text)  # type: ignore[attr-defined]
            row[name] = real
            row[f"error {name}"] = row["estimate"] / real - 1 if real else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def error_summary(counts: pd.DataFrame, encodings: Sequence[str] = ENCODINGS) -> pd.DataFrame:
    """Per kind and encoding: samples, real bytes per token, the error of all the kind's text
    counted together, and the median, smallest and largest error of one sample."""
    rows = []
    for kind, group in counts.groupby("kind", sort=False):
        for name in encodings:
            errors = group[f"error {name}"]
            rows.append(
                {
                    "kind": kind,
                    "encoding": name,
                    "samples": len(group),
                    "bytes per token": group["bytes"].sum() / group[name].sum(),
                    "error (all text)": group["estimate"].sum() / group[name].sum() - 1,
                    "median error": errors.median(),
                    "min error": errors.min(),
                    "max error": errors.max(),
                }
            )
    return pd.DataFrame(rows)


def _schema(tool: dict[str, Any]) -> ToolSchema:
    function = tool.get("function", tool)
    return ToolSchema.of(function["name"], function.get("description", ""), function.get("parameters", {}))


def recount(results: Results, run_id: str, counters: dict[str, TokenCounter]) -> pd.DataFrame:
    """Each recorded request of a run's own (not its sub-agents') counted again: one row per call
    with the recorded `input_tokens`, whether a compression came right before it (`compressed`),
    the estimate of the request as sent (`estimate`), and one column per counter."""
    calls = results.calls[results.calls["run_id"] == run_id]
    indexes = calls["call_index"].astype(int)
    recorded = dict(zip(indexes, calls["input_tokens"].astype(int), strict=True))
    compressed = dict(zip(indexes, has_event(calls, results.events, EventKind.COMPRESSED), strict=True))
    estimator = AgentScopeEstimator()
    rows = []
    for request in iter_requests(results, run_id):
        if "agent" in request:
            continue  # a sub-agent's, numbered in its own calls
        index = int(request["call_index"])
        messages = from_openai(request["messages"])
        tools = tuple(_schema(t) for t in request["tools"])
        row: dict[str, Any] = {
            "call_index": index,
            "kind": request["kind"],
            "recorded": recorded[index],
            "compressed": compressed[index],
            "estimate": estimator.count(messages, tools),
        }
        for name, counter in counters.items():
            row[name] = counter.count(messages, tools)
        rows.append(row)
    return pd.DataFrame(rows)


def trigger_fill(trigger: float, error: float) -> float:
    """The real share of the window when an estimate off by `error` reaches the trigger.

    The estimate is `real × (1 + error)`, so it reaches `trigger × window` when the real count
    is `trigger / (1 + error)` of the window.

    >>> round(trigger_fill(0.8, -0.2), 3), round(trigger_fill(0.8, 0.25), 3)
    (1.0, 0.64)
    """
    return trigger / (1 + error)


ERRORS = (-0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4)


def what_if(trigger: float, errors: Sequence[float] = ERRORS) -> pd.DataFrame:
    """For each error: how full the window really is when the trigger fires, and whether the
    request that fires it is already over the window."""
    fills = [trigger_fill(trigger, e) for e in errors]
    return pd.DataFrame(
        {
            "error": list(errors),
            "real fill at the trigger": fills,
            "over the window": [f > 1 for f in fills],
            "window wasted below the trigger": [max(0.0, trigger - f) for f in fills],
        }
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """When a run compressed and how large its requests really were."""

    compressions: int
    first_compression: int | None
    """Index of the first call after a compression (None: never compressed)."""
    peak_share: float
    over_window: int


def timing(calls: pd.DataFrame, *, tokens: str, window: int) -> Timing:
    """Compressions and request sizes of one run's calls as `recount` gives them (its
    `compressed` column), measured by column `tokens`."""
    compressed = [int(i) for i in calls.loc[calls["compressed"].astype(bool), "call_index"]]
    sizes = calls[tokens].astype("int64")
    return Timing(
        compressions=len(compressed),
        first_compression=compressed[0] if compressed else None,
        peak_share=float(sizes.max()) / window if len(sizes) else 0.0,
        over_window=int((sizes > window).sum()),
    )


def decided_by(estimated: Results, real: dict[str, Results], *, workload: str) -> pd.DataFrame:
    """One run decided by the estimate and by each real encoding, every request of both measured
    as sent by that encoding: one row per encoding with the estimate's error over the requests the
    estimate-decided run sent, and each run's compressions, first compression, peak and requests
    over the window. Both runs must have recorded their requests."""
    run_id = str(estimated.runs["run_id"].iloc[0])
    window = int(estimated.run_settings(run_id)["model"]["context_size"])
    counters = {name: bpe_counter(name) for name in real}
    counts = recount(estimated, run_id, counters)
    rows = []
    for name, decided in real.items():
        own = recount(decided, str(decided.runs["run_id"].iloc[0]), {name: counters[name]})
        by_estimate = timing(counts, tokens=name, window=window)
        by_real = timing(own, tokens=name, window=window)
        rows.append(
            {
                "workload": workload,
                "encoding": name,
                "error": counts["estimate"].sum() / counts[name].sum() - 1,
                "compressions (estimate decides)": by_estimate.compressions,
                "compressions (real decides)": by_real.compressions,
                "first compression (estimate)": by_estimate.first_compression,
                "first compression (real)": by_real.first_compression,
                "peak/window (estimate decides)": by_estimate.peak_share,
                "peak/window (real decides)": by_real.peak_share,
                "over window (estimate decides)": by_estimate.over_window,
                "over window (real decides)": by_real.over_window,
            }
        )
    return pd.DataFrame(rows)


PERCENT = FuncFormatter(lambda value, _: f"{value:.0%}")
ENCODING_COLOURS = ("#d62728", "#9467bd", "#8c564b")


@plots.styled
def estimate_errors(counts: pd.DataFrame, encodings: Sequence[str], *, title: str) -> Figure:
    """One panel per encoding: the error of the byte estimate on each sample, by kind of text."""
    kinds = list(dict.fromkeys(counts["kind"]))
    figure = Figure(figsize=(max(6.0, 0.9 * len(kinds) + 1.5), 3.4 * len(encodings)), layout="constrained")
    panels = figure.subplots(len(encodings), 1, squeeze=False)[:, 0]
    for axes, name in zip(panels, encodings, strict=True):
        errors = [counts.loc[counts["kind"] == k, f"error {name}"].dropna().to_numpy() for k in kinds]
        axes.boxplot(errors, positions=range(len(kinds)), widths=0.5, showfliers=False)
        for position, values in enumerate(errors):
            offsets = (np.arange(len(values)) % 7 - 3) * 0.04  # a fixed spread, no random jitter
            axes.scatter(position + offsets, values, s=8, alpha=0.6, color=plots.REASONING, zorder=3)
        axes.axhspan(-0.4, -0.2, color=plots.SUMMARY, alpha=0.08, label="estimate 20–40% low")
        axes.axhspan(0.2, 0.4, color=plots.RESERVE, alpha=0.08, label="estimate 20–40% high")
        axes.axhline(0, color=plots.WINDOW, linewidth=0.8)
        axes.set_xticks(range(len(kinds)), kinds, rotation=15, ha="right")
        axes.yaxis.set_major_formatter(PERCENT)
        axes.set_ylabel("estimate / real − 1")
        axes.set_title(f"against {name}")
        axes.legend(loc="upper right", fontsize=7)
    figure.suptitle(title)
    return figure


@plots.styled
def fill_at_trigger(frame: pd.DataFrame, *, trigger: float, title: str) -> Figure:
    """The real share of the window at which the trigger fires, against the estimate's error."""
    figure = Figure(figsize=(6, 3.6), layout="constrained")
    axes = figure.add_subplot()
    axes.plot(frame["error"], frame["real fill at the trigger"], marker="o", color=plots.REASONING)
    axes.axhline(1.0, color=plots.WINDOW, linewidth=1.2, label="the window")
    axes.axhline(trigger, color=plots.TRIGGER, linestyle="--", linewidth=1, label=f"trigger {trigger:g}")
    axes.axvspan(-1, -(1 - trigger), color=plots.SUMMARY, alpha=0.08, label="fires over the window")
    axes.set_xlim(float(frame["error"].min()) - 0.05, float(frame["error"].max()) + 0.05)
    axes.set_ylim(0, max(1.1, float(frame["real fill at the trigger"].max()) * 1.05))
    axes.xaxis.set_major_formatter(PERCENT)
    axes.yaxis.set_major_formatter(PERCENT)
    axes.set_xlabel("error of the estimate (estimate / real − 1)")
    axes.set_ylabel("real fill of the window when it fires")
    axes.legend(loc="upper right")
    axes.set_title(title)
    return figure


@plots.styled
def estimate_vs_real(
    counts: pd.DataFrame, encodings: Sequence[str], *, window: int, trigger: float | None, title: str
) -> Figure:
    """Per call of a run the estimate decided (`estimator.recount`'s rows): what the estimate
    counted, and what each real encoding counts for the same request; window and trigger lines,
    compressions (its `compressed` column) marked."""
    figure = Figure(figsize=(8, 4.2), layout="constrained")
    axes = figure.add_subplot()
    x = counts["call_index"].astype(int)
    axes.plot(x, counts["estimate"], color=plots.REASONING, marker=".", linewidth=1.3, label="estimate")
    for name, colour in zip(encodings, ENCODING_COLOURS, strict=False):
        axes.plot(x, counts[name], color=colour, marker=".", linewidth=1, label=name)
    for position, index in enumerate(x[counts["compressed"].astype(bool)]):
        axes.axvline(
            index - 0.5,
            color=plots.COMPRESSION,
            linestyle="--",
            linewidth=0.9,
            label="compression" if position == 0 else None,
        )
    axes.axhline(window, color=plots.WINDOW, linewidth=1.2, label=f"window {window:,}")
    if trigger is not None:
        axes.axhline(trigger * window, color=plots.TRIGGER, linestyle="--", linewidth=1, label="trigger")
    axes.set_xlabel("model call (0-based, in order)")
    axes.set_ylabel("input tokens per call")
    axes.yaxis.set_major_formatter(plots.THOUSANDS)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylim(bottom=0)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    axes.set_title(title)
    return figure
