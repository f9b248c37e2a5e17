"""The zoo presets in scenario files: entries made from the parameter dataclasses, sweeps over
nested parameters, load-time checks, and runs with their loop warnings counted."""

from __future__ import annotations

import csv
import io
import pickle
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ctxlab.cli import main
from ctxlab.core.settings import SettingError
from ctxlab.presets.entries import attribute_docs, entry_params
from ctxlab.presets.nonoka.preset import NonokaParams
from ctxlab.presets.registry import ENTRIES, PRESETS, build_strategy, entry_defaults, params_of
from ctxlab.presets.steps import StepStrategy
from ctxlab.scenarios.load import ScenarioError, load_scenario
from ctxlab.texts import CTXLAB_TEXTS
from tests.scenarios.files import write
from tests.zoo.test_presets import REQUIRED

ZOO_SCENARIO = """\
name: zoo
description: Two zoo presets and a sweep over a nested parameter.
workload:
  generator: {name: swe_loop, params: {turns: 2, cycles: 3}}
model:
  context_size: 8000
strategies:
  - name: nk
    preset: nonoka
    budget: {max_tokens: 8000, reserve_output_tokens: 4000, compaction_buffer_tokens: 2000}
  - name: floor
    preset: langchain-summary
    keep: [messages, 2]
sweep:
  strategies.nk.budget.max_tokens: [6000, 8000]
"""


@pytest.mark.parametrize("info", list(PRESETS.values()), ids=list(PRESETS))
def test_an_entry_with_defaults_gives_the_dataclass_defaults_back(info: object) -> None:
    name = info.name  # type: ignore[attr-defined]
    required = REQUIRED.get(name, {})
    entry = ENTRIES[name].model_validate({"preset": name, "name": "mine", **required})
    assert params_of(entry) == info.params(**required)  # type: ignore[attr-defined]
    strategy = build_strategy(entry, CTXLAB_TEXTS)
    assert strategy.name == "mine"


def test_nested_parameters_and_their_descriptions_come_from_the_dataclass() -> None:
    entry = ENTRIES["nonoka"].model_validate(
        {"preset": "nonoka", "budget": {"max_tokens": 16_000}, "evict": {"max_bytes": 4096}}
    )
    params = entry_params(entry)
    assert isinstance(params, NonokaParams)
    assert (params.budget.max_tokens, params.budget.reserve_output_tokens, params.evict.max_bytes) == (
        16_000,
        4096,
        4096,
    )
    schema = ENTRIES["nonoka"].model_json_schema()
    assert "window" in str(schema) and attribute_docs(NonokaParams)["summarize"].startswith(
        "ask the summarizer"
    )
    assert entry_defaults("nonoka")["budget.max_tokens"] == 8192


@pytest.mark.parametrize(
    ("preset", "settings", "expected"),
    [
        (  # ADK has no defaults: the pairs ctxlab gives each preset stay where a mapping is silent
            "google-adk-window",
            {"events_compaction_config": {"compaction_interval": 2}},
            {
                "compaction_interval": 2,
                "overlap_size": 1,
                "token_threshold": None,
                "event_retention_size": None,
            },
        ),
        (
            "google-adk-tokens",
            {"events_compaction_config": {"token_threshold": 5000}},
            {
                "compaction_interval": None,
                "overlap_size": None,
                "token_threshold": 5000,
                "event_retention_size": 10,
            },
        ),
        (  # the window's pair beside the token pair's defaults
            "google-adk-tokens",
            {"events_compaction_config": {"compaction_interval": 4, "overlap_size": 0}},
            {
                "compaction_interval": 4,
                "overlap_size": 0,
                "token_threshold": 100_000,
                "event_retention_size": 10,
            },
        ),
        (  # the hybrid's n = 10 is its own, not the masking dataclass's (which has none)
            "openhands-hybrid",
            {"masking": {"keep_tools": ["Read"]}},
            {"n": 10, "keep_tools": ("Read",)},
        ),
    ],
)
def test_a_nested_mapping_keeps_the_presets_defaults_for_what_it_leaves_out(
    preset: str, settings: dict[str, Any], expected: dict[str, Any]
) -> None:
    """A mapping that sets some settings of a nested group keeps the values `ctxlab presets`
    shows for the others, also where the preset's default differs from the group's own."""
    entry = ENTRIES[preset].model_validate({"preset": preset, **settings})
    [(key, _)] = settings.items()
    group = getattr(entry_params(entry), key)
    assert {name: getattr(group, name) for name in expected} == expected
    full = ENTRIES[preset].model_validate({"preset": preset, key: getattr(entry, key).model_dump()})
    assert entry.model_dump() == full.model_dump()  # as if every setting were written out


def test_one_setting_of_a_group_the_preset_fills_can_be_swept(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ZOO_SCENARIO.replace(
            "    keep: [messages, 2]\n",
            "    keep: [messages, 2]\n  - {name: adk, preset: google-adk-window}\n",
        )
        + "  strategies.adk.events_compaction_config.compaction_interval: [2, 4]\n",
    )
    configs = {
        entry_params(entry).events_compaction_config
        for point in load_scenario(path).points
        for entry in point.scenario.strategies
        if entry.name == "adk"
    }
    assert {(c.compaction_interval, c.overlap_size) for c in configs} == {(2, 1), (4, 1)}


def test_unknown_keys_and_broken_rules_fail_at_load_time(tmp_path: Path) -> None:
    bad = ZOO_SCENARIO.replace("compaction_buffer_tokens: 2000", "compaction_bufer_tokens: 2000")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, bad))
    assert "compaction_bufer_tokens" in str(caught.value.problems[0])
    oh = "  - {name: oh, preset: openhands, condenser: {max_size: 6, keep_first: 3}}\n"
    broken = ZOO_SCENARIO.replace("sweep:\n", oh + "sweep:\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, broken))
    assert "leaves no room for a tail" in str(caught.value.problems[0])


def test_a_zoo_scenario_runs_sweeps_and_counts_loop_warnings(tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path, ZOO_SCENARIO))
    assert len(loaded.points) == 2  # the sweep varies `nk`; `floor` runs once
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", str(tmp_path / "scenario.yaml"), "--out", str(tmp_path / "r"), "--no-plots"], out=out, err=err
    )
    assert code == 0, err.getvalue()
    rows = list(csv.DictReader((tmp_path / "r" / "zoo" / "runs.csv").open(encoding="utf-8")))
    assert sorted(r["strategy"] for r in rows) == ["floor", "nk", "nk"]
    assert {r["param.strategy.budget.max_tokens"] for r in rows if r["strategy"] == "nk"} == {
        "6000",
        "8000",
    }
    assert all(r["status"] == "ok" and r["violations_openai"] == "0" for r in rows)
    assert all(r["cache_hit_rate"] for r in rows)
    calls = list(csv.DictReader((tmp_path / "r" / "zoo" / "calls.csv").open(encoding="utf-8")))
    for row in rows:
        events = [e for c in calls if c["run_id"] == row["run_id"] for e in c["events"].split(";")]
        assert int(row["loop_warnings"]) == events.count("loop_warning")


def test_zoo_strategies_are_step_strategies() -> None:
    entry = ENTRIES["openhands-hybrid"].model_validate({"preset": "openhands-hybrid"})
    assert isinstance(build_strategy(entry, CTXLAB_TEXTS), StepStrategy)


@pytest.mark.parametrize(
    ("preset", "setting", "needle"),
    [
        ("openhands", {"condenser": {"keep_first": -1}}, "condenser keep_first=-1: the SDK's"),
        ("openhands", {"condenser": {"max_size": 0}}, "condenser max_size=0: the SDK's"),
        ("openhands", {"condenser": {"minimum_progress": 0}}, "condenser minimum_progress=0.0: the SDK's"),
        ("openhands", {"condenser": {"minimum_progress": 1.5}}, "minimum_progress=1.5: the SDK's"),
        ("openhands", {"condenser": {"hard_reset_retries": 0}}, "condenser hard_reset_retries=0: the SDK's"),
        (
            "openhands",
            {"condenser": {"hard_reset_scaling": 1}},
            "condenser hard_reset_scaling=1.0: the SDK's",
        ),
        ("openhands", {"max_iterations": 0}, "max_iterations=0: the SDK's conversation refuses it"),
        ("openhands-hybrid", {"max_iterations": -1}, "max_iterations=-1: the SDK's conversation refuses"),
        ("openhands", {"max_iterations": 10**9}, "max_iterations=1000000000: above the 100,000 a run"),
        ("openhands-hybrid", {"condenser": {"hard_reset_scaling": -1}}, "hard_reset_scaling=-1.0: the SDK's"),
    ],
)
def test_openhands_settings_the_sdk_refuses_are_refused_at_load(
    preset: str, setting: dict[str, Any], needle: str
) -> None:
    """Each bound is the SDK's own (`LLMSummarizingCondenser`'s fields, the conversation's
    `max_iterations`); before, these loaded and a limit of 0 ran no call at all."""
    with pytest.raises(ValueError, match=re.escape(needle)):
        ENTRIES[preset].model_validate({"preset": preset, **setting})


@pytest.mark.parametrize(
    ("preset", "settings", "loc", "message"),
    [
        (
            "anthropic-clear",
            {"keep": -1},
            ("keep",),
            "keep=-1: Anthropic's clear_tool_uses takes a count of tool uses here, and a count is "
            "not negative; use 0 or more",
        ),
        (
            "openhands",
            {"condenser": {"hard_reset_retries": 0}},
            ("condenser", "hard_reset_retries"),
            "condenser hard_reset_retries=0: the SDK's LLMSummarizingCondenser refuses it (its own "
            "check); use a value 1 or more",
        ),
        (
            "deepagents",
            {"summarization": {"truncate_args_settings": {"keep": ["fraction", 2]}}},
            ("summarization", "truncate_args_settings", "keep"),
            "a truncate_args_settings keep fraction is in (0, 1], got 2.0; for 2 tokens write [tokens, 2]",
        ),
        (  # a trigger's condition is placed at its clause and its value
            "deepagents",
            {"summarization": {"trigger": [["tokens", 100], ["fraction", 4000]]}},
            ("summarization", "trigger", 1, 1),
            "a trigger fraction is in (0, 1], got 4000.0; for 4000 tokens write [tokens, 4000]",
        ),
        (
            "langchain-summary",
            {"trigger": {"tokens": 100, "messages": -2}},
            ("trigger", "messages"),
            "trigger thresholds are above 0, got -2.0; use a count of 1 or more",
        ),
        (
            "google-adk-window",
            {"events_compaction_config": {"compaction_interval": None, "overlap_size": None}},
            ("events_compaction_config",),
            "set at least one compaction trigger: the token-threshold pair or the sliding-window pair",
        ),
        (
            "pydantic-ai-clear",
            {"max_tokens": 100, "max_fraction": 0.5},
            (),
            "Set at most one of max_tokens or max_fraction.",
        ),
    ],
)
def test_a_broken_rule_is_placed_at_the_setting_it_names(
    preset: str, settings: dict[str, Any], loc: tuple[str, ...], message: str
) -> None:
    """A `SettingError` moves the error from the entry to its setting (a nested dataclass's under
    the field holding it; a rule of a whole nested dataclass at that field); a rule relating two
    top-level settings stays at the entry. The message is the check's own, word for word."""
    with pytest.raises(ValidationError) as caught:
        ENTRIES[preset].model_validate({"preset": preset, **settings})
    [error] = caught.value.errors()
    assert (error["loc"], str(error["ctx"]["error"])) == (loc, message)


def test_a_setting_error_survives_pickling_with_its_path() -> None:
    """Runs execute in worker processes, whose errors come back pickled."""
    error = SettingError(("condenser", "max_size"), "condenser max_size=0: use a value above 0")
    back = pickle.loads(pickle.dumps(error))
    assert (type(back), back.path, str(back)) == (SettingError, error.path, str(error))


@pytest.mark.parametrize(
    ("settings", "loc", "needle"),
    [
        ({"max_tokens": 0}, ("max_tokens",), "no request fits a budget of 0 tokens"),
        ({"max_tokens": -100}, ("max_tokens",), "use 1 or more, or leave it unset"),
        ({"min_messages": 0}, ("min_messages",), "leave the model nothing to answer"),
        ({"min_messages": -1}, ("min_messages",), "use 1 or more"),
    ],
)
def test_the_sliding_window_refuses_a_budget_or_floor_below_1(
    settings: dict[str, Any], loc: tuple[str, ...], needle: str
) -> None:
    """Before, these loaded: a budget of 0 or less dropped all it could on every call, and a
    floor of 0 or less could drop the latest message too."""
    with pytest.raises(ValidationError) as caught:
        ENTRIES["sliding-window"].model_validate({"preset": "sliding-window", **settings})
    [error] = caught.value.errors()
    assert error["loc"] == loc and needle in str(error["ctx"]["error"])
    edges = ENTRIES["sliding-window"].model_validate(
        {"preset": "sliding-window", "max_tokens": 1, "min_messages": 1}
    )
    assert (edges.max_tokens, edges.min_messages) == (1, 1)  # type: ignore[attr-defined]
