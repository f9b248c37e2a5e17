"""The sawtooth of a run with sub-agents: the parent's calls and each sub-agent's, in the order
they were made.

A sub-agent runs inside one of its parent's tool calls, so its calls come after the parent's
call whose answer delegated to it (`calls.delegated_at`) and before the parent's next call.
`timeline` puts every call of a run in that order; `sawtooth` draws the parent and each
sub-agent as its own line on that axis.

Invariants:
- `timeline` is a pure function of the rows: a parent call, then (depth first, in the order
  they started) the calls of the sub-agents its answer started, then the parent's next call.
- The figure follows `plots`' style and invariants (title, labelled axes, a legend; the same
  rows give the same bytes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ctxlab.analysis.plots import COMPRESSION, REASONING, WINDOW, line_colours, styled, token_axes
from ctxlab.analysis.results import has_event
from ctxlab.core.events import EventKind
from ctxlab.experiments.measures import PARENT

MAX_LABELS = 6
"""More sub-agents than this share one legend entry."""


def timeline(calls: pd.DataFrame, subagents: pd.DataFrame) -> np.ndarray:
    """The place of every row of `calls` (the parent's) then of `subagents` in the order the calls
    were made.

    >>> calls = pd.DataFrame({"agent": ["parent"] * 3, "call_index": [0, 1, 2]})
    >>> subs = pd.DataFrame({"agent": ["sub-1", "sub-1", "sub-1.1", "sub-2"],
    ...     "call_index": [0, 1, 0, 0], "delegated_at": [0, 0, 0, 1]})
    >>> timeline(calls, subs).tolist()
    [0, 4, 6, 1, 3, 2, 5]
    """
    indexes: dict[str, list[int]] = {PARENT: sorted(int(i) for i in calls["call_index"])}
    children: dict[tuple[str, int], list[str]] = {}
    for agent, rows in subagents.groupby("agent", sort=False):
        name = str(agent)
        indexes[name] = sorted(int(i) for i in rows["call_index"])
        parent = name.rsplit(".", 1)[0] if "." in name else PARENT
        children.setdefault((parent, int(rows["delegated_at"].iloc[0])), []).append(name)
    order: dict[tuple[str, int], int] = {}

    def visit(agent: str) -> None:
        for index in indexes[agent]:
            order[(agent, index)] = len(order)
            for child in children.get((agent, index), []):
                visit(child)

    visit(PARENT)
    keys = [(PARENT, int(i)) for i in calls["call_index"]]
    keys += [(str(a), int(i)) for a, i in zip(subagents["agent"], subagents["call_index"], strict=True)]
    return np.array([order[key] for key in keys], dtype=int)


def had_event(calls: pd.DataFrame, events: pd.DataFrame, kind: EventKind) -> np.ndarray:
    """Per row of sub-agents' `calls`, whether its call had an event of `kind` (matched on run,
    agent and call index)."""
    chosen = events[events["kind"] == kind.value]
    keys = set(zip(chosen["run_id"], chosen["agent"], chosen["call_index"].astype(int), strict=True))
    rows = zip(calls["run_id"], calls["agent"], calls["call_index"].astype(int), strict=True)
    return np.array([row in keys for row in rows], dtype=bool)


@styled
def sawtooth(
    calls: pd.DataFrame,
    events: pd.DataFrame,
    subagents: pd.DataFrame,
    subagent_events: pd.DataFrame,
    *,
    title: str,
    window: int,
    subagent_window: int,
) -> Figure:
    """Input tokens per call of one run and of its sub-agents, every call in the order it was made.

    The parent is one line; each sub-agent its own (one legend entry for all of them past
    `MAX_LABELS`). Dashed vertical lines mark the parent's compressions, dotted ones in a
    sub-agent's colour its compressions; the sub-agents' window is drawn when it differs.
    """
    figure = Figure(figsize=(8, 4.2), layout="constrained")
    axes = figure.add_subplot()
    places = timeline(calls, subagents)
    own, theirs = places[: len(calls)], places[len(calls) :]
    axes.plot(
        own, calls["input_tokens"].astype(float), color=REASONING, linewidth=1, marker="o", markersize=4
    )
    axes.plot([], [], color=REASONING, marker="o", label="parent")
    for n, x in enumerate(own[has_event(calls, events, EventKind.COMPRESSED).to_numpy()]):
        label = "parent compression" if n == 0 else None
        axes.axvline(x - 0.5, color=COMPRESSION, linestyle="--", linewidth=0.9, label=label)
    agents = list(dict.fromkeys(subagents["agent"].astype(str)))
    compressed = had_event(subagents, subagent_events, EventKind.COMPRESSED)
    for agent, colour in zip(agents, line_colours(len(agents) + 1)[1:], strict=True):
        mask = (subagents["agent"] == agent).to_numpy(dtype=bool)
        label = (
            f"sub-agent {agent}"
            if len(agents) <= MAX_LABELS
            else ("sub-agents" if agent == agents[0] else None)
        )
        tokens = subagents.loc[mask, "input_tokens"].astype(float)
        axes.plot(theirs[mask], tokens, color=colour, linewidth=1, marker=".", label=label)
        for x in theirs[mask & compressed]:
            axes.axvline(x - 0.5, color=colour, linestyle=":", linewidth=0.9)
    axes.axhline(window, color=WINDOW, linewidth=1.2, label=f"window {window:,}")
    if subagent_window != window:
        axes.axhline(
            subagent_window,
            color=WINDOW,
            linestyle="-.",
            linewidth=1,
            label=f"sub-agent window {subagent_window:,}",
        )
    token_axes(axes, title, "model call (parent and sub-agents, in the order made)")
    return figure
