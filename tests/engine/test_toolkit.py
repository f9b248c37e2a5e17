"""Tool groups and skills in the engine: what is offered and counted, what runs, and the
scenario format that describes them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given

from ctxlab.core.agentscope.toolkit import ACTIVE_GROUPS, RESET_TOOLS, inactive_refusal
from ctxlab.core.messages.blocks import ToolCallBlock, ToolResultBlock, text_pieces
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.world.script import Script, assign_call_ids
from ctxlab.core.world.toolkit import group_of
from ctxlab.engine.middleware import Acted, ActingNext, Middleware, ModelNext, Reasoned, ReasoningNext
from ctxlab.engine.session import assemble
from ctxlab.engine.state import EpisodeState, memo
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.strategy import AgentScopeStrategy
from ctxlab.problems import WorkloadError
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.format import parse_script
from tests.parity.lab import params_of
from tests.parity.spec import ParityConfig
from tests.parity.workloads import toolkit_cases


@dataclass
class Watch(Middleware):
    """Records every call with the groups active when it ran and its result, and every
    reasoning request's tools with the groups active when it was sent."""

    acted: list[tuple[ToolCallBlock, tuple[str, ...], ToolResultBlock]] = field(default_factory=list)
    sent: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    _active: tuple[str, ...] = ()

    def on_acting(self, state: EpisodeState, call: ToolCallBlock, next: ActingNext) -> Acted:
        acted = next(state, call)
        self.acted.append((call, memo(state, ACTIVE_GROUPS, ()), acted.result))
        return acted

    def on_reasoning(self, state: EpisodeState, tool_choice: str, next: ReasoningNext) -> Reasoned:
        self._active = memo(state, ACTIVE_GROUPS, ())
        return next(state, tool_choice)

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        self.sent.append((tuple(t.name for t in request.tools), self._active))
        return next(request)


def run_watched(script: Script, config: ParityConfig) -> Watch:
    watch = Watch()
    session = assemble(
        script,
        AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params_of(config)),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields=dict(config.summary_fields)),
        texts=CTXLAB_TEXTS,
        context_size=config.context_size,
        counter=AgentScopeEstimator(),
        middlewares=(watch,),
    )
    session.run()
    return watch


@given(toolkit_cases())
def test_a_tool_of_an_inactive_group_never_runs_and_only_active_schemas_are_sent(
    case: tuple[Script, ParityConfig],
) -> None:
    script, config = case
    watch = run_watched(script, config)
    scripted = {c.id: c for c in script.calls()}
    for call, active, result in watch.acted:
        group = group_of(script.tool_groups, call.name)
        if group is None or group.name in active:
            continue
        refusal = inactive_refusal(script.tool_groups, call.name, active, CTXLAB_TEXTS)
        assert result.state == "error"
        assert "".join(text_pieces(result)) == refusal
        planted = scripted[call.id].result or ()
        assert result.output != planted
    for names, active in watch.sent:
        group_tools = {t.name for g in script.tool_groups for t in g.tools}
        offered = {t.name for g in script.tool_groups if g.name in active for t in g.tools}
        assert group_tools & set(names) == offered
        assert (RESET_TOOLS in names) == bool(script.tool_groups)


def toolkit_script(**extra: Any) -> dict[str, Any]:
    return {
        "system_prompt": "You help.",
        "tools": [{"name": "search"}],
        "tool_groups": [
            {"name": "db", "description": "Query the database.", "tools": [{"name": "sql"}]},
            {"name": "mail", "description": "Send mail.", "instructions": "", "tools": [{"name": "send"}]},
        ],
        "skills": [{"name": "report", "description": "Write a report.", "markdown": {"bytes": 300}}],
        "turns": [
            {
                "user": "Count the users.",
                "rounds": [
                    {"calls": [{"tool": "sql", "input": {"q": "x"}, "result": "ignored while inactive"}]},
                    {"calls": [{"tool": "reset_tools", "input": {"db": True}}]},
                    {"calls": [{"tool": "Skill", "input": {"skill": "report"}}]},
                    {"calls": [{"tool": "sql", "input": {"q": "x"}, "result": "42"}]},
                ],
                "final": "42 users.",
            }
        ],
        **extra,
    }


def run_text(script: Script) -> list[str]:
    session = assemble(
        script,
        AgentScopeStrategy(texts=CTXLAB_TEXTS),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields={}),
        texts=CTXLAB_TEXTS,
        context_size=100_000,
    )
    outcome = session.run()
    return [
        "".join(text_pieces(b))
        for m in outcome.state.context
        for b in m.blocks
        if isinstance(b, ToolResultBlock)
    ]


def test_a_scenario_script_describes_groups_and_skills() -> None:
    script = assign_call_ids(parse_script(toolkit_script()).to_script(seed=0))
    assert [g.name for g in script.tool_groups] == ["db", "mail"]
    assert script.tool_groups[1].instructions == "" and script.tool_groups[0].instructions is None
    assert script.skills[0].dir == "skills/report" and len(script.skills[0].markdown) == 300
    results = run_text(script)
    assert results[0] == inactive_refusal(script.tool_groups, "sql", (), CTXLAB_TEXTS)
    assert results[1] == "Active tool groups: db."
    assert results[2] == script.skills[0].markdown
    assert results[3] == "42"


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"tool_groups": [{"name": "basic", "description": "d", "tools": [{"name": "x"}]}]}, "basic group"),
        ({"tool_groups": [{"name": "g", "description": "d", "tools": [{"name": "search"}]}]}, "one place"),
    ],
)
def test_group_mistakes_are_reported(change: dict[str, Any], fragment: str) -> None:
    data = toolkit_script()
    data.update(change)
    data["turns"] = [{"user": "hi"}]
    with pytest.raises(WorkloadError, match=fragment):
        parse_script(data)


def test_toolkit_calls_carry_no_result_and_readable_inputs() -> None:
    data = toolkit_script()
    rounds = data["turns"][0]["rounds"]
    rounds[1]["calls"][0]["result"] = "no"
    rounds[2]["calls"][0]["input"] = {"name": "report"}
    rounds.append({"calls": [{"tool": "reset_tools", "input": {"db": "yes"}}]})
    with pytest.raises(WorkloadError) as error:
        parse_script(data)
    text = str(error.value)
    assert "drop `result`" in text and "skill's name" in text and "true or false" in text


def test_tools_and_the_prompt_without_a_toolkit_are_unchanged() -> None:
    data = toolkit_script()
    del data["tool_groups"], data["skills"]
    data["turns"][0]["rounds"] = [{"calls": [{"tool": "search", "input": {}, "result": "r"}]}]
    script = assign_call_ids(parse_script(data).to_script(seed=0))
    session = assemble(
        script,
        AgentScopeStrategy(texts=CTXLAB_TEXTS),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields={}),
        texts=CTXLAB_TEXTS,
        context_size=100_000,
    )
    assert session.loop.frame.system_prompt == "You help."
    assert [t.name for t in session.loop.frame.tools] == ["search"]
    assert json.loads(session.loop.frame.tools[0].parameters) == {"type": "object", "properties": {}}
    assert run_text(script) == ["r"]
