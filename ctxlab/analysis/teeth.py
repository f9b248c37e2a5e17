"""The teeth of a sawtooth: what each compression of a run did, call by call.

A tooth is the climb of input tokens up to a compression, the summary request(s) sent to make
it, and the drop after it. `teeth` lists them from one run's calls and the results' events;
`describe` says each in words.

Invariants:
- A tooth ends at the first reasoning call with a `compressed` event; the summary calls
  since the previous reasoning call are its summary attempts (none when the strategy edits the
  context without a summary).
- Shares are of the run's window; a summary request above the window is one a provider that
  enforces the window would reject, whatever the lab's fake summarizer answered.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ctxlab.analysis.results import has_event
from ctxlab.core.events import EventKind

_COMPRESSED = "_compressed"


def _marked(calls: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """The calls in call order, each marked with whether a compression came right before it."""
    marked = calls.assign(**{_COMPRESSED: has_event(calls, events, EventKind.COMPRESSED)})
    return marked.sort_values("call_index")


def teeth(calls: pd.DataFrame, events: pd.DataFrame, *, window: int) -> pd.DataFrame:
    """One row per compression of one run's calls (in call order): the peak reasoning call before
    it, its summary attempts, and the first call after it. `events` is the results' events table.

    >>> calls = pd.DataFrame({"run_id": "r", "call_index": [0, 1, 2, 3], "kind": ["reasoning",
    ...     "reasoning", "summary", "reasoning"], "input_tokens": [100, 3100, 4700, 190]})
    >>> events = pd.DataFrame({"run_id": ["r"], "call_index": [3], "kind": ["compressed"]})
    >>> columns = ["peak_call", "peak_tokens", "summary_tokens", "after_tokens"]
    >>> teeth(calls, events, window=4000)[columns].values.tolist()
    [[1, 3100, 4700, 190]]
    """
    rows: list[dict[str, Any]] = []
    peak: tuple[int, int] | None = None
    summaries: list[int] = []
    for call in _marked(calls, events).to_dict("records"):
        tokens, index = int(call["input_tokens"]), int(call["call_index"])
        if call["kind"] == "summary":
            summaries.append(tokens)
            continue
        if call[_COMPRESSED]:
            rows.append(_tooth(len(rows) + 1, peak, summaries, (index, tokens), window))
        summaries = []
        peak = (index, tokens)
    frame = pd.DataFrame(rows, columns=list(_COLUMNS))
    integers = [c for c in _COLUMNS if c not in ("summary_share", "summary_over_window")]
    return frame.astype(
        {**dict.fromkeys(integers, "Int64"), "summary_share": "Float64", "summary_over_window": bool}
    )


_COLUMNS = (
    "tooth",
    "peak_call",
    "peak_tokens",
    "summary_attempts",
    "summary_tokens",
    "summary_share",
    "summary_over_window",
    "after_call",
    "after_tokens",
    "drop",
)


def _tooth(
    number: int, peak: tuple[int, int] | None, summaries: list[int], after: tuple[int, int], window: int
) -> dict[str, Any]:
    summary = max(summaries) if summaries else None
    return {
        "tooth": number,
        "peak_call": None if peak is None else peak[0],
        "peak_tokens": None if peak is None else peak[1],
        "summary_attempts": len(summaries),
        "summary_tokens": summary,
        "summary_share": None if summary is None else summary / window,
        "summary_over_window": summary is not None and summary > window,
        "after_call": after[0],
        "after_tokens": after[1],
        "drop": None if peak is None else peak[1] - after[1],
    }


def describe(table: pd.DataFrame, *, window: int, trigger: float | None) -> list[str]:
    """Each tooth in words, as Markdown bullets."""
    threshold = f" (trigger {trigger:g} × {window:,} = {trigger * window:,.0f})" if trigger else ""
    lines = []
    for row in table.to_dict("records"):
        climb = (
            f"the context had grown to {int(row['peak_tokens']):,} tokens by call {int(row['peak_call'])}, "
            f"and the next request would have crossed the trigger{threshold}"
            if not pd.isna(row["peak_call"])
            else "before the first request, the context was already over the trigger"
        )
        if row["summary_attempts"]:
            share = f"{row['summary_share']:.0%} of the window"
            over = (
                f", **{share}: a provider would reject it**" if row["summary_over_window"] else f", {share}"
            )
            summary = f"the summary request was {int(row['summary_tokens']):,} tokens{over}"
        else:
            summary = "no summary was requested"
        lines.append(
            f"- **Tooth {row['tooth']}**: {climb}; {summary}; call {row['after_call']} then sent "
            f"{int(row['after_tokens']):,} tokens."
        )
    return lines


def growth(calls: pd.DataFrame, events: pd.DataFrame) -> int:
    """The median growth of input tokens from one reasoning call to the next, between
    compressions (0 when the context never grew). `events` is the results' events table.

    >>> calls = pd.DataFrame({"run_id": "r", "call_index": [0, 1, 2], "kind": ["reasoning"] * 3,
    ...     "input_tokens": [88, 1596, 3104]})
    >>> growth(calls, pd.DataFrame(columns=["run_id", "call_index", "kind"]))
    1508
    """
    marked = _marked(calls, events)
    reasoning = marked[marked["kind"] == "reasoning"]
    tokens = reasoning["input_tokens"].astype("int64").tolist()
    fresh = [not compressed for compressed in reasoning[_COMPRESSED]]
    steps = [b - a for a, b, ok in zip(tokens, tokens[1:], fresh[1:], strict=False) if ok and b > a]
    return int(pd.Series(steps).median()) if steps else 0


def fitting_trigger(table: pd.DataFrame, *, window: int) -> float | None:
    """The highest trigger at which this run's summary requests would have fit in the window.

    A summary request is the tooth's top plus what the compression adds to it (the last round's
    results and the summary prompt); with the top just under `trigger × window`, the request fits
    when `trigger ≤ 1 − added / window`. None when no summary was requested.

    >>> tooth = pd.DataFrame({"peak_tokens": [3104], "summary_tokens": [4743]})
    >>> round(fitting_trigger(tooth, window=4000), 3)
    0.59
    """
    added = (table["summary_tokens"].astype("Float64") - table["peak_tokens"].astype("Float64")).dropna()
    if added.empty:
        return None
    return 1 - float(added.max()) / window


def series(calls: pd.DataFrame) -> str:
    """Input tokens per call in order, summary calls in brackets (the ch08 book's notation).

    >>> calls = pd.DataFrame({"call_index": [0, 1, 2], "kind": ["reasoning", "summary", "reasoning"],
    ...     "input_tokens": [3104, 4743, 187]})
    >>> series(calls)
    '3,104 → [4,743] → 187'
    """
    ordered = calls.sort_values("call_index")
    return " → ".join(
        f"[{int(t):,}]" if k == "summary" else f"{int(t):,}"
        for k, t in zip(ordered["kind"], ordered["input_tokens"], strict=True)
    )
