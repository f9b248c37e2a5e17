"""The Tune notebook's analyses: what the tuned setting saves against each baseline, what the
retention floor costs, and the answer's words, on a search made up here."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ctxlab.analysis import tuning


def _trial(
    number: int, candidate: str, cost: float, retention: float | None, why: str = ""
) -> dict[str, Any]:
    return {
        "trial": number,
        "candidate": candidate,
        "preset": candidate,
        "objective": cost,
        "cost": cost,
        "total_input_tokens": int(cost * 1000),
        "peak_input_tokens": 100,
        "retention": retention,
        "violations_openai": 0,
        "violations_anthropic": 0,
        "over_window_calls": 3 if why.startswith("over_window") else 0,
        "feasible": not why,
        "why": why or None,
        "run_id": f"{candidate}-{number}",
    }


def search(retention_floor: float | None = 1.0) -> tuning.Tuned:
    lost = "retention: 0 below the floor 1.0"
    trials = pd.DataFrame(
        [
            _trial(0, "agentscope", 1.0, 1.0),
            _trial(1, "nonoka", 0.5, 0.0, lost),
            _trial(2, "nonoka", 0.4, 0.0, f"over_window: 3 requests over the window (allowed 0); {lost}"),
        ]
    )
    baseline = pd.DataFrame(
        [_trial(0, "agentscope", 2.0, 1.0), _trial(1, "nonoka", 0.8, 1.0, "over_window: 3 requests")]
    )
    summary = {
        "scenario": "made-up",
        "objective": "cost",
        "constraints": {"providers": ["openai"], "over_window": 0, "retention": retention_floor},
        "trials": 3,
        "runs": 3,
        "feasible_trials": 1,
        "best": {"trial": 0, "candidate": "agentscope", "params": {"agentscope.context.trigger_ratio": 0.6}},
    }
    settings = {"agentscope-0": "defaults", "nonoka-1": "defaults"}
    return tuning.Tuned(name="made-up", summary=summary, trials=trials, baseline=baseline, settings=settings)


def test_against_gives_the_saving_against_each_baseline_and_its_verdict() -> None:
    table = tuning.against(search())
    assert list(table.index) == [tuning.TUNED, "agentscope", "nonoka"]
    assert table.loc["agentscope", "saving"] == 0.5
    assert table.loc["nonoka", "saving"] == -0.25
    assert table.loc[tuning.TUNED, "settings"] == "agentscope: context.trigger_ratio 0.6"
    assert not table.loc["nonoka", "feasible"] and table.loc["nonoka", "over_window_calls"] == 3


def test_the_floor_s_price_is_the_cheapest_trial_that_broke_only_the_floor() -> None:
    cheaper = tuning.floor_price(search())
    assert cheaper is not None and int(cheaper["trial"]) == 1  # trial 2 is cheaper but over the window


def test_the_answer_says_each_saving_and_what_the_floor_costs() -> None:
    text = "\n".join(tuning.answer([search()]))
    assert "`agentscope` (defaults): cost 2.0000, the tuned setting saves 50%" in text
    assert "`nonoka` (defaults): cost 0.8000, the tuned setting costs 25% more" in text
    assert "trial 1 (`nonoka`) met every other constraint at cost 0.5000, 50% less" in text
    assert "kept 0%" in text


def test_the_overview_compares_with_the_tuned_preset_s_defaults() -> None:
    row = tuning.overview([search()]).loc["made-up"]
    assert row["defaults cost"] == 2.0 and row["saving vs defaults"] == 0.5
    assert row["cheapest feasible baseline"] == "agentscope"


def test_shares_are_shown_in_percent() -> None:
    shown = tuning.in_percent(tuning.against(search()))
    assert shown.loc["agentscope", "saving %"] == 50.0 and shown.loc["nonoka", "retention %"] == 100.0
    assert "cost" in shown.columns and "saving" not in shown.columns
