"""The Isolate notebook's analyses: what tool groups save against sending every schema, what one
activation costs, and how delegating searches to sub-agents compares with doing them inline.

Everything is read from a scenario's results (`runs.csv`, `calls.csv`); nothing is run here.
`tool_groups` reads the `tool-groups` scenario (the `grouped` sweep), `delegation` the
`delegated-research` one (the `delegate` sweep), `retention` the `delegated-retention` one (the
same sweep, facts planted in the findings, sub-agents with their own settings).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ctxlab.analysis import agents
from ctxlab.analysis.results import Results

GROUPED = "param.workload.generator.params.grouped"
DELEGATE = "param.workload.generator.params.delegate"


def _flag(results: Results, column: str, value: bool) -> pd.Series:
    """The first run whose swept `column` is `value`.

    Raises:
        ValueError: the scenario has no such run (its sweep was edited to one side only).
    """
    if column not in results.runs.columns:
        raise ValueError(
            f"{results.name}: no run sweeps {column.removeprefix('param.')}; sweep it over [false, true]"
        )
    runs = results.runs.loc[results.runs[column].astype(str).str.lower() == str(value).lower()]
    if runs.empty:
        raise ValueError(
            f"{results.name}: no run with {column.removeprefix('param.')} = {str(value).lower()}; the "
            "comparison needs both, so sweep it over [false, true]"
        )
    return runs.iloc[0]


def tool_groups(results: Results) -> pd.DataFrame:
    """Per variant: reasoning calls, peak, total input tokens and cost, and the mean input tokens
    of the requests that activate a group (the first call of each turn, when grouped)."""
    rows = []
    for grouped in (False, True):
        run = _flag(results, GROUPED, grouped)
        calls = results.calls.loc[results.calls["run_id"] == run["run_id"]]
        first = calls.loc[calls["iteration"] == 0, "input_tokens"]
        rows.append(
            {
                "schemas": "groups on demand" if grouped else "all 40 sent",
                "calls": int(run["calls"]),
                "peak_input_tokens": int(run["peak_input_tokens"]),
                "total_input_tokens": int(run["total_input_tokens"]),
                "cost": float(run["cost"]),
                "activation_request_tokens": float(first.mean()) if grouped else None,
            }
        )
    return pd.DataFrame(rows).set_index("schemas")


def delegation(results: Results) -> pd.DataFrame:
    """Per variant: the parent's peak, total and cost, the sub-agents' calls, tokens and cost, and
    the two together."""
    rows = []
    for delegate in (False, True):
        run = _flag(results, DELEGATE, delegate)
        rows.append(
            {
                "searches": "delegated to sub-agents" if delegate else "inline",
                "parent_peak": int(run["peak_input_tokens"]),
                "parent_total": int(run["total_input_tokens"]),
                "parent_compressions": int(run["compressions"]),
                "subagent_calls": int(run["subagent_calls"]),
                "subagent_input_tokens": int(run["subagent_input_tokens"]),
                "all_input_tokens": int(run["total_input_tokens"]) + int(run["subagent_input_tokens"]),
                "all_cost": float(run["cost"]) + float(run["subagent_cost"]),
            }
        )
    return pd.DataFrame(rows).set_index("searches")


def retention(results: Results) -> pd.DataFrame:
    """Per variant: the share of the facts planted in the findings that the parent's last request
    still shows, the parent's compressions and peak, and the tokens and cost of parent and
    sub-agents together."""
    rows = []
    for delegate in (False, True):
        run = _flag(results, DELEGATE, delegate)
        rows.append(
            {
                "searches": "delegated to sub-agents" if delegate else "inline",
                "retention_facts": float(run["retention_facts"]),
                "parent_compressions": int(run["compressions"]),
                "parent_peak": int(run["peak_input_tokens"]),
                "all_input_tokens": int(run["total_input_tokens"]) + int(run["subagent_input_tokens"]),
                "all_cost": float(run["cost"]) + float(run["subagent_cost"]),
            }
        )
    return pd.DataFrame(rows).set_index("searches")


def retention_answer(kept: pd.DataFrame) -> str:
    """The retention answer, with the numbers."""
    inline, sub = kept.iloc[0], kept.iloc[1]
    return (
        f"- **Retention.** With facts planted in the findings, the parent's last request still showed "
        f"{float(inline['retention_facts']):.0%} of them when the searches ran inline "
        f"({_n(inline['parent_compressions'])} compression(s), peak {_n(inline['parent_peak'])}) and "
        f"{float(sub['retention_facts']):.0%} when they were delegated "
        f"({_n(sub['parent_compressions'])} compression(s), peak {_n(sub['parent_peak'])}); all calls "
        f"together used {_n(inline['all_input_tokens'])} vs {_n(sub['all_input_tokens'])} input tokens."
    )


def parent_series(results: Results, column: str, labels: dict[bool, str]) -> Figure:
    """Input tokens of the agent's own calls, in order, one line per variant."""
    figure = Figure(figsize=(7, 3.2))
    axes = figure.subplots()
    for value, label in labels.items():
        run = _flag(results, column, value)
        calls = results.calls.loc[results.calls["run_id"] == run["run_id"]].sort_values("call_index")
        axes.plot(calls["call_index"], calls["input_tokens"], marker="o", label=label)
    axes.set_xlabel("call")
    axes.set_ylabel("input tokens")
    axes.legend()
    return figure


def delegated_sawtooth(results: Results) -> Figure:
    """The delegated run's input tokens per call: the parent and each of its sub-agents, every
    call in the order it was made, with the parent's window and the sub-agents' own."""
    run_id = str(_flag(results, DELEGATE, True)["run_id"])
    settings = results.run_settings(run_id)
    window = int(settings["model"]["context_size"])
    return agents.sawtooth(
        results.calls[results.calls["run_id"] == run_id],
        results.events,
        results.subagent_calls[results.subagent_calls["run_id"] == run_id],
        results.subagent_events,
        title=f"{results.name}: delegated searches, parent and sub-agents",
        window=window,
        subagent_window=int(settings.get("delegate", {}).get("context_size") or window),
    )


def _n(value: object) -> str:
    return f"{int(float(str(value))):,}"


def answer(groups: pd.DataFrame, delegated: pd.DataFrame) -> list[str]:
    """The answer, with the numbers."""
    every, on_demand = groups.iloc[0], groups.iloc[1]
    saved = int(every["total_input_tokens"]) - int(on_demand["total_input_tokens"])
    extra_calls = int(on_demand["calls"]) - int(every["calls"])
    inline, sub = delegated.iloc[0], delegated.iloc[1]
    return [
        f"- **Tool groups.** Sending all 40 schemas, the run used {_n(every['total_input_tokens'])} "
        f"input tokens (peak {_n(every['peak_input_tokens'])}); activating one group per turn, "
        f"{_n(on_demand['total_input_tokens'])} (peak {_n(on_demand['peak_input_tokens'])}): "
        f"{saved:,} fewer ({saved / int(every['total_input_tokens']):.0%}), cost "
        f"{float(every['cost']):.4f} → {float(on_demand['cost']):.4f}. One activation costs one extra "
        f"call ({extra_calls} over the run) whose request averages "
        f"{_n(on_demand['activation_request_tokens'])} tokens.",
        f"- **Sub-agents.** Inline, the agent's context peaked at {_n(inline['parent_peak'])} tokens "
        f"({_n(inline['parent_compressions'])} compression(s)) and the run used "
        f"{_n(inline['all_input_tokens'])} input tokens (cost {float(inline['all_cost']):.4f}); "
        f"delegated, the parent peaked at {_n(sub['parent_peak'])} and used {_n(sub['parent_total'])}, "
        f"its {_n(sub['subagent_calls'])} sub-agent calls {_n(sub['subagent_input_tokens'])}: "
        f"{_n(sub['all_input_tokens'])} in all (cost {float(sub['all_cost']):.4f}).",
    ]
