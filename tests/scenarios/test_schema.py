"""The scenario schema, the registry of names, sweep paths and loading whole grids."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.presets.agentscope.entry import AgentScopeEntry
from ctxlab.presets.agentscope.strategy import AgentScopeStrategy
from ctxlab.presets.none.preset import NoStrategy
from ctxlab.presets.registry import ENTRIES, PRESETS, build_strategy, entry_defaults
from ctxlab.problems import ScenarioError
from ctxlab.scenarios.load import load_scenario
from ctxlab.scenarios.registry import SUMMARIZERS, preset_problem
from ctxlab.scenarios.schema import Scenario, entry_model
from ctxlab.scenarios.sweep import SweepPathError, resolve, set_at
from ctxlab.scenarios.unused import POLICY_ONLY
from ctxlab.texts import CTXLAB_TEXTS
from tests.scenarios.files import SWEPT, TINY, write


def problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    return [str(p) for p in caught.value.problems]


# ---------------------------------------------------------------------------------------------
# Registry


def test_every_preset_builds_a_strategy_named_after_its_entry() -> None:
    for name, preset in PRESETS.items():
        required = {"n": 5} if name == "swe-agent" else {}  # SWE-agent's n has no default
        entry = ENTRIES[name].model_validate({"preset": name, "name": f"my-{name}", **required})
        strategy = build_strategy(entry, CTXLAB_TEXTS)
        assert strategy.name == f"my-{name}"
        assert "t" in [tool.name for tool in strategy.tools((ToolSchema.of("t", "", {}),))]
        assert preset.summary and preset.source


def test_every_preset_is_placed_under_its_own_name() -> None:
    assert [preset.name for preset in PRESETS.values()] == list(PRESETS) == list(ENTRIES)
    assert "agentscope" in PRESETS and "agentscop" not in PRESETS
    with pytest.raises(KeyError):
        PRESETS["agentscop"]


LOADS_ONE_FAMILY = """
import sys
from pathlib import Path
from ctxlab.experiments.grid import expand
from ctxlab.experiments.execute import execute
from ctxlab.scenarios.load import load_scenario
[config] = expand(load_scenario(Path(sys.argv[1])))
assert execute(config).status == "ok"
print(sorted({m.split(".")[2] for m in sys.modules if m.startswith("ctxlab.presets.") and m.count(".") > 2}))
"""


def test_a_scenario_loads_and_runs_with_only_the_family_of_its_preset(tmp_path: Path) -> None:
    path = write(tmp_path, TINY.replace("preset: agentscope", "preset: sliding-window"))
    assert "sliding-window" in path.read_text(encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", LOADS_ONE_FAMILY, str(path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split("\n")[0] == "['sliding_window']"


def test_agentscope_entry_maps_every_context_field_onto_the_strategy() -> None:
    entry = AgentScopeEntry.model_validate(
        {
            "preset": "agentscope",
            "context": {
                "trigger_ratio": 0.7,
                "reserve_ratio": 0.2,
                "tool_result_limit": 900,
                "max_image_num": 2,
            },
            "injection": {
                "time_format": "%Y-%m-%d %H:%M",
                "timezone": "Asia/Shanghai",
                "context_buffer_ratio": 0.1,
            },
            "task_tools": True,
        }
    )
    strategy = build_strategy(entry, CTXLAB_TEXTS)
    assert isinstance(strategy, AgentScopeStrategy)
    p = strategy.params
    assert (p.trigger_ratio, p.reserve_ratio, p.tool_result_limit, p.max_image_num) == (0.7, 0.2, 900, 2)
    assert (p.injection.time_format, p.injection.timezone) == ("%Y-%m-%d %H:%M", "Asia/Shanghai")
    assert p.context_buffer_ratio == 0.1  # the deprecated injection override wins, as in AgentScope
    assert p.task_tools and "TaskCreate" in strategy.builtins()


def test_none_preset_changes_nothing() -> None:
    strategy = build_strategy(ENTRIES["none"].model_validate({"preset": "none"}), CTXLAB_TEXTS)
    assert isinstance(strategy, NoStrategy) and strategy.system_prompt("p") == "p"


def test_defaults_are_the_sources() -> None:
    defaults = entry_defaults("agentscope")
    assert defaults["context.trigger_ratio"] == 0.8
    assert defaults["context.reserve_ratio"] == 0.1
    assert defaults["context.tool_result_limit"] == 50000
    assert defaults["context.max_image_num"] == 5
    assert defaults["injection.time_interval"] == 0.5
    assert entry_defaults("none") == {}


def test_unknown_and_planned_names() -> None:
    assert preset_problem("agentscope") is None
    assert "did you mean 'agentscope'" in str(preset_problem("agentscop"))
    assert preset_problem("nonoka") is None and preset_problem("sliding-window") is None
    assert "did you mean 'nonoka'" in str(preset_problem("nonok"))
    assert list(SUMMARIZERS) == ["fixed", "extractive"]


# ---------------------------------------------------------------------------------------------
# Schema rules


def test_a_tiny_scenario_loads_with_defaults(tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path, TINY))
    scenario = loaded.scenario
    assert scenario.name == "tiny" and scenario.seed == 0
    assert scenario.strategies[0].name == "agentscope"
    assert scenario.model.summary_token_count == "as_sent"
    assert scenario.prices.input == 1.0 and scenario.prices.output == 4.0
    assert len(loaded.points) == 1 and loaded.warnings == ()


NO_TOOLS = """\
name: no-tools
workload:
  script:
    turns:
      - user: hi
        rounds:
          - calls: [{tool: lookup, input: {q: x}, result: found}, {tool: TaskList}]
model:
  context_size: 8000
strategies:
  - preset: none
"""


def test_a_script_that_calls_tools_but_declares_none_is_warned_of(tmp_path: Path) -> None:
    """Its requests hold tool calls with no tools offered: every run counts the Anthropic and
    Bedrock refusal, so loading says why, naming the tools to declare (the lab's own left aside)."""
    (warning,) = load_scenario(write(tmp_path, NO_TOOLS)).warnings
    assert str(warning).endswith(
        ":3:3: workload.script: warning: the script calls 'lookup' but declares no tools, so its "
        "requests hold tool calls with no tools offered, which the Anthropic and Bedrock APIs refuse "
        "(every run counts them in violations_anthropic); declare them: "
        "tools: [{name: ..., description: ...}]"
    )
    declared = NO_TOOLS.replace("  script:\n", "  script:\n    tools: [{name: lookup}]\n")
    assert load_scenario(write(tmp_path, declared, "declared.yaml")).warnings == ()
    sub = "{tool: ask, delegate: {turns: [{user: go, rounds: [{calls: [{tool: grep, result: hit}]}]}]}}"
    delegated = declared.replace("{tool: TaskList}", sub).replace(
        "[{name: lookup}]", "[{name: lookup}, {name: ask}]"
    )
    (nested,) = load_scenario(write(tmp_path, delegated, "delegated.yaml")).warnings
    assert "workload.script.turns[0].rounds[0].calls[1].delegate: warning: the script calls 'grep'" in str(
        nested
    )


def test_strategy_names_must_differ(tmp_path: Path) -> None:
    text = TINY.replace("  - preset: agentscope\n", "  - preset: agentscope\n  - preset: agentscope\n")
    (message,) = problems(write(tmp_path, text))
    assert ":9:5: strategies[1].name: strategy name 'agentscope' is also strategies[0]'s" in message


def test_a_workload_has_exactly_one_source(tmp_path: Path) -> None:
    both = TINY.replace("workload:\n", "workload:\n  script: {turns: [{user: hi}]}\n")
    (message,) = problems(write(tmp_path, both))
    assert ":5:3: workload.generator: a workload has exactly one source, but script and generator" in message
    none = TINY.replace("  generator: {name: retrieval, params: {rounds: 4}}\n", "  probes: []\n")
    assert any("a workload needs one source" in m for m in problems(write(tmp_path, none)))


def test_unknown_key_inside_the_right_preset_suggests_from_that_preset(tmp_path: Path) -> None:
    text = TINY + "  - {preset: none, texts: ctxlab, contxt: {}}\n"
    (message,) = problems(write(tmp_path, text))
    assert "strategies[1].contxt: unknown key 'contxt'" in message
    assert "did you mean" not in message  # `none` has no `context`
    text = TINY.replace("  - preset: agentscope\n", "  - {preset: agentscope, contxt: {}}\n")
    (message,) = problems(write(tmp_path, text))
    assert "did you mean 'context'?" in message


def test_summary_template_must_render_the_schema_fields(tmp_path: Path) -> None:
    text = TINY.replace(
        "  - preset: agentscope\n", "  - preset: agentscope\n    context: {summary_template: '# {task}'}\n"
    )
    (message,) = problems(write(tmp_path, text))
    assert "strategies[0].context.summary_template" in message and "{task}" in message


def test_buffer_must_sit_below_the_trigger_when_injection_is_on(tmp_path: Path) -> None:
    text = TINY.replace(
        "  - preset: agentscope\n",
        "  - preset: agentscope\n"
        "    context: {trigger_ratio: 0.5, reserve_ratio: 0.1, context_buffer_ratio: 0.6}\n",
    )
    (message,) = problems(write(tmp_path, text))
    assert "strategies[0].context.context_buffer_ratio: context_buffer_ratio 0.6 must be below" in message


def test_unknown_timezone_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    text = TINY.replace(
        "  - preset: agentscope\n", "  - preset: agentscope\n    injection: {timezone: Asia/Shanghia}\n"
    )
    (message,) = problems(write(tmp_path, text))
    assert "injection.timezone" in message and "did you mean 'Asia/Shanghai'" in message


def test_a_date_less_time_format_loads_with_a_located_warning(tmp_path: Path) -> None:
    text = TINY.replace(
        "  - preset: agentscope\n", "  - preset: agentscope\n    injection: {time_format: '%H:%M'}\n"
    )
    path = write(tmp_path, text)
    (warning,) = load_scenario(path).warnings
    assert str(warning).startswith(
        f"{path}:9:17: strategies[0].injection.time_format: warning: '%H:%M' has no"
    )


def test_an_input_price_that_bills_no_call_loads_with_a_located_warning(tmp_path: Path) -> None:
    """Every run meters the prompt cache, so a changed or swept `prices.input` would change
    nothing; the price spelled out at its default, or beside a `cache_write`, is no mistake."""
    priced = TINY.replace("model:\n", "prices: {input: 3.0, output: 15.0}\nmodel:\n")
    path = write(tmp_path, priced + "sweep:\n  prices.input: [2.0, 3.0]\n")
    assert [str(w).split(": warning: ")[0] for w in load_scenario(path).warnings] == [
        f"{path}:5:10: prices.input",
        f"{path}:11:3: sweep.prices.input",
    ]
    assert "set cache_write to the price of uncached input" in str(load_scenario(path).warnings[0])
    written_out = TINY.replace("model:\n", "prices: {input: 1.0, cache_write: 1.25}\nmodel:\n")
    assert load_scenario(write(tmp_path, written_out)).warnings == ()
    # a provider's whole price table (uncached input billed at the cache_write it gives)
    table = TINY.replace(
        "model:\n", "prices: {input: 3, cached_read: 0.3, cache_write: 3.75, output: 15}\nmodel:\n"
    )
    assert load_scenario(write(tmp_path, table)).warnings == ()


def test_a_sub_agent_strategy_s_own_workspace_loads_with_a_located_warning(tmp_path: Path) -> None:
    """Sub-agents run in their parent's workspace, so a `delegate.strategy` workspace is never read."""
    text = TINY + "delegate:\n  strategy: {preset: agentscope, workspace: none}\n"
    path = write(tmp_path, text)
    (warning,) = load_scenario(path).warnings
    assert str(warning) == (
        f"{path}:10:34: delegate.strategy.workspace: warning: not used: sub-agents run in their parent's "
        "workspace, the parent entry's workspace; set it there"
    )


def test_a_policy_agents_setting_under_a_script_agent_loads_with_a_located_warning(tmp_path: Path) -> None:
    """A script agent plays the workload as written: `needs` and the rest are read by a policy
    agent alone; their defaults, as a resolved document writes them, warn of nothing."""
    agent = "  agent: {kind: script, needs: [{key: k, turn: 0}], max_rereads: 3, "
    agent += "relist_after_compression: false}\n"
    probes = "workload:\n  probes: [{key: k, value: v, where: system}]\n"
    text = TINY.replace("  context_size: 4000\n", "  context_size: 4000\n" + agent).replace(
        "workload:\n", probes
    )
    path = write(tmp_path, text)
    warnings = [str(w).split(": warning: ") for w in load_scenario(path).warnings]
    assert [(where.rsplit(":", 3)[1:], why) for where, why in warnings] == [
        (["8", "25", " model.agent.needs"], POLICY_ONLY.removeprefix("warning: ")),
        (["8", "69", " model.agent.relist_after_compression"], POLICY_ONLY.removeprefix("warning: ")),
    ]
    defaults = "  agent: {kind: script, needs: [], max_rereads: 3, relist_after_compression: true}\n"
    assert (
        load_scenario(
            write(tmp_path, TINY.replace("  context_size: 4000\n", "  context_size: 4000\n" + defaults))
        ).warnings
        == ()
    )


def test_summarizer_fields_are_checked(tmp_path: Path) -> None:
    text = TINY.replace(
        "  context_size: 4000\n", "  context_size: 4000\n  summarizer: {fields: {task_overveiw: x}}\n"
    )
    (message,) = problems(write(tmp_path, text))
    assert "did you mean 'task_overview'" in message
    text = TINY.replace("  context_size: 4000\n", "  context_size: 4000\n  summarizer: {kind: extractiv}\n")
    (message,) = problems(write(tmp_path, text))
    assert (
        "model.summarizer.kind: unknown summarizer kind 'extractiv' (did you mean 'extractive'?)" in message
    )
    text = TINY.replace(
        "  context_size: 4000\n", "  context_size: 4000\n  summarizer: {kind: extractive, fields: {}}\n"
    )
    (message,) = problems(write(tmp_path, text))
    assert "model.summarizer.fields: unknown key 'fields'" in message


def test_a_probe_that_cannot_be_planted_fails_at_load(tmp_path: Path) -> None:
    text = TINY.replace("workload:\n", "workload:\n  probes: [{key: port, value: '5432', where: turn 3}]\n")
    (message,) = problems(write(tmp_path, text))
    assert ":4:39: workload.probes[0].where: cannot plant at 'turn 3'" in message


def test_a_probe_key_given_twice_fails_at_load(tmp_path: Path) -> None:
    probe = "{key: port, value: '5432', where: system}"
    probes = f"  probes: [{probe}, {probe.replace('5432', '6543')}]\n"
    (message,) = problems(write(tmp_path, TINY.replace("workload:\n", "workload:\n" + probes)))
    assert ":4:56: workload.probes[1].key: repeats the key 'port' of probes[0]" in message


# ---------------------------------------------------------------------------------------------
# Sweep paths


CALL = {"tool": "r", "result": {"bytes": 5}, "delegate": {"turns": [{"user": "u"}]}}
DOC = {
    "workload": {
        "generator": {"name": "retrieval"},
        "script": {"turns": [{"user": {"bytes": 3}, "rounds": [{"calls": [CALL]}]}]},
    },
    "model": {"context_size": 10},
    "strategies": [{"preset": "agentscope", "name": "a"}, {"preset": "none"}],
}


@pytest.mark.parametrize(
    ("key", "loc"),
    [
        ("model.context_size", ("model", "context_size")),
        ("seed", ("seed",)),
        ("strategies.a.context.trigger_ratio", ("strategies", 0, "context", "trigger_ratio")),
        ("strategies.a.injection.time_format", ("strategies", 0, "injection", "time_format")),
        ("strategies.none.workspace", ("strategies", 1, "workspace")),
        ("workload.generator.params.rounds", ("workload", "generator", "params", "rounds")),
        ("workload.script.turns.0.user.bytes", ("workload", "script", "turns", 0, "user", "bytes")),
        (  # an optional size form (a call's result), and a nested script's
            "workload.script.turns.0.rounds.0.calls.0.result.bytes",
            ("workload", "script", "turns", 0, "rounds", 0, "calls", 0, "result", "bytes"),
        ),
        (
            "workload.script.turns.0.rounds.0.calls.0.delegate.turns.0.user",
            ("workload", "script", "turns", 0, "rounds", 0, "calls", 0, "delegate", "turns", 0, "user"),
        ),
        (
            "workload.script.turns.0.rounds.0.text.tokens",
            ("workload", "script", "turns", 0, "rounds", 0, "text", "tokens"),
        ),
        ("model.summarizer.fail_on", ("model", "summarizer", "fail_on")),
        ("prices.output", ("prices", "output")),
    ],
)
def test_sweep_paths_resolve_to_document_paths(key: str, loc: tuple[str | int, ...]) -> None:
    assert resolve(key, DOC, Scenario, entry_model) == loc


@pytest.mark.parametrize(
    ("key", "needle"),
    [
        ("model.context_sise", "'context_sise' is not a field here (did you mean 'context_size'?)"),
        ("strategies.b.context.trigger_ratio", "no strategy is named 'b'"),
        ("strategies.none.context.trigger_ratio", "'context' is not a field here"),
        ("workload.generator.params.roundz", "did you mean 'rounds'?"),
        ("workload.script.turns.3.user", "item 3 does not exist (the list has 1)"),
        ("model.context_size.x", "this holds a single value (a whole number), so it has no 'x'"),
        ("model.tokenizer.x", "a single value (one of 'agentscope', 'o200k_base', 'cl100k_base')"),
        ("strategies.a.preset", "cannot be swept"),
        ("name", "cannot be swept"),
        ("strategies.a", "sweep a setting of a strategy"),
        ("model..x", "empty part"),
    ],
)
def test_sweep_paths_that_name_nothing(key: str, needle: str) -> None:
    with pytest.raises(SweepPathError, match=None) as caught:
        resolve(key, DOC, Scenario, entry_model)
    assert needle in str(caught.value)


def test_set_at_copies_and_creates_missing_sections() -> None:
    out = set_at(DOC, ("strategies", 0, "context", "trigger_ratio"), 0.5)
    assert out["strategies"][0]["context"] == {"trigger_ratio": 0.5}
    assert "context" not in DOC["strategies"][0]  # type: ignore[index]


def test_grid_points_are_in_sweep_order_last_axis_fastest(tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path, SWEPT))
    assert [dict(p.assignments) for p in loaded.points] == [
        {"model.context_size": 4000, "strategies.agentscope.context.trigger_ratio": 0.6},
        {"model.context_size": 4000, "strategies.agentscope.context.trigger_ratio": 0.8},
        {"model.context_size": 6000, "strategies.agentscope.context.trigger_ratio": 0.6},
        {"model.context_size": 6000, "strategies.agentscope.context.trigger_ratio": 0.8},
    ]
    assert [p.scenario.strategies[0].context.trigger_ratio for p in loaded.points] == [0.6, 0.8, 0.6, 0.8]  # type: ignore[attr-defined]


def test_a_combination_that_breaks_a_rule_is_located_at_its_sweep_value(tmp_path: Path) -> None:
    text = SWEPT.replace("trigger_ratio: [0.6, 0.8]", "trigger_ratio: [0.05, 0.8]")
    path = write(tmp_path, text)
    (message,) = problems(path)
    assert message.startswith(f"{path}:13:49: sweep.strategies.agentscope.context.trigger_ratio[0]: with ")
    assert (
        "strategies.agentscope.context.trigger_ratio = 0.05: strategies[0].context: reserve_ratio 0.1"
        in message
    )


def test_sweep_lists_need_distinct_values(tmp_path: Path) -> None:
    path = write(tmp_path, SWEPT.replace("[4000, 6000]", "[4000, 4000]"))
    (message,) = problems(path)
    assert "sweep.model.context_size[1]: repeats an earlier value" in message
    path = write(tmp_path, SWEPT.replace("[4000, 6000]", "[]"))
    assert any("has no values" in m for m in problems(path))
    path = write(tmp_path, SWEPT.replace("[4000, 6000]", "[4000, 4000.0]"))  # one value once read
    assert any("sweep.model.context_size[1]: repeats an earlier value" in m for m in problems(path))


@pytest.mark.parametrize(
    ("inner", "outer"),
    [
        ("workload.generator.params.rounds: [4, 5]", "workload.generator.params: [{rounds: 6}]"),
        ("strategies.agentscope.context.trigger_ratio: [0.6]", "strategies.agentscope.context: [{}]"),
        ("model.context_size: [5000]", "model: [{context_size: 3000}]"),
    ],
)
def test_sweep_paths_that_overlap_are_refused(tmp_path: Path, inner: str, outer: str) -> None:
    """Two paths where one holds the other would overwrite each other's values at every point."""
    for first, second in ((inner, outer), (outer, inner)):
        head = SWEPT.split("sweep:")[0]
        path = write(tmp_path, f"{head}sweep:\n  {first}\n  {second}\n")
        second_key, first_key = second.split(":")[0], first.split(":")[0]
        assert f"sweep.{second_key}: overlaps the sweep path {first_key!r}" in "\n".join(problems(path))


def test_the_design_example_loads_and_runs_verbatim() -> None:
    from ctxlab.experiments.execute import execute
    from ctxlab.experiments.grid import expand

    loaded = load_scenario(Path(__file__).parent / "design_example.yaml")
    assert [dict(p.assignments)["model.context_size"] for p in loaded.points] == [
        1000000,
        1000000,
        4000,
        4000,
    ]
    results = [execute(config) for config in expand(loaded)]
    assert [r.status for r in results] == ["ok"] * 4
    for result in results:
        assert result.measures["violations_openai"] == result.measures["violations_anthropic"] == 0
        assert result.measures["retention_facts"] is not None  # the db-port probe is measured
        assert any("injected:" in row["events"] for row in result.calls)


@pytest.mark.parametrize(
    ("trigger", "expected"),
    [
        # the form the value took is the one told, at the value's own path
        ('["fraction", "x"]', "summarization.trigger[1]: 'x' is invalid: Input should be a valid number"),
        ('["fractio", 0.5]', "summarization.trigger[0]: 'fractio' is not allowed; use 'messages', 'tokens'"),
        ('[["fraction", 0.5], {tokens: a}]', "summarization.trigger[1].tokens: 'a' is invalid"),
        ("{tokens: 5, messages: x}", "summarization.trigger.messages: 'x' is invalid"),
        # no form took it: said once, with what the setting takes
        ("5", "summarization.trigger: 5 fits none of the forms this setting takes (when to summarize:"),
        # an item of the list form: said with what the list's setting takes
        (
            "[[fraction, 0.5, 3]]",
            "summarization.trigger[0]: ['fraction', 0.5, 3] fits none of the forms this setting takes "
            "(when to summarize:",
        ),
    ],
)
def test_a_value_no_form_of_a_setting_takes_is_told_once_by_the_form_it_came_closest_to(
    tmp_path: Path, trigger: str, expected: str
) -> None:
    text = TINY.replace(
        "  - preset: agentscope\n", f"  - preset: deepagents\n    summarization: {{trigger: {trigger}}}\n"
    )
    (message,) = problems(write(tmp_path, text))
    assert f"strategies[0].{expected}" in message, message
    assert "ContextSize" not in message and "dict[" not in message and "tuple[" not in message
