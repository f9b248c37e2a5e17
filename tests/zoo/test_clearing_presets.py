"""The clearing and masking presets through the engine: anthropic-clear, langchain-clear,
swe-agent and the protocol-blind sliding window."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.clearing import AnthropicClearParams
from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.events import Event, EventKind
from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.world.script import ScriptedRound
from ctxlab.presets.anthropic import preset as anthropic
from ctxlab.presets.deepagents import preset as deepagents
from ctxlab.presets.deepagents.eviction import result_text, should_evict
from ctxlab.presets.deepagents.preset import DeepAgentsParams, FilesystemSettings
from ctxlab.presets.langchain import preset as langchain
from ctxlab.presets.langchain.exact import LangChainClearParams
from ctxlab.presets.sliding_window import preset as sliding_window
from ctxlab.presets.swe_agent import preset as swe_agent
from ctxlab.problems import ScenarioError
from ctxlab.scenarios.load import load_scenario
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.texts.langchain import CTXLAB_LANGCHAIN_TEXTS
from tests.zoo.runs import one_turn, results_of, run, text, tool_call
from tests.zoo_strategies import IMAGE

CLEARED = AnthropicClearParams().placeholder
CLEARED_EVENT = Event(EventKind.CLEARED)


def search(k: int, tool: str = "retrieve", size: int = 4000) -> ScriptedRound:
    return ScriptedRound(calls=(tool_call(tool, f'{{"query": "q{k}"}}', text(size, tag=str(k % 10))),))


def shown(messages: tuple[Message, ...]) -> list[str]:
    return [b.text for m in messages for b in m.blocks if isinstance(b, ToolResultBlock)]


def calls_in(messages: tuple[Message, ...]) -> list[str]:
    return [b.input for m in messages for b in m.blocks if isinstance(b, ToolCallBlock)]


def test_anthropic_clearing_edits_each_request_past_the_trigger_and_keeps_the_history() -> None:
    strategy = anthropic.build(AnthropicClearParams(trigger=5000), CTXLAB_TEXTS)
    ran = run(strategy, one_turn(*(search(k) for k in range(10))))
    assert all(r.text != CLEARED for r in results_of(ran))  # the client keeps full results
    last = shown(ran.sent()[-1])
    assert last[:-3] == [CLEARED] * 7 and CLEARED not in last[-3:]  # all but the 3 newest
    # 1,000-token results: the history passes 5,000 tokens at the 5th result; from then on every
    # request (calls 5 to 10) clears one more result than the previous one.
    assert [c.call_index for c in ran.outcome.calls if CLEARED_EVENT in c.events] == [5, 6, 7, 8, 9, 10]
    assert max(ran.reasoning()[5:]) < 3500
    assert ran.violations() == []


def test_anthropic_clearing_skips_excluded_tools_and_can_clear_inputs() -> None:
    params = AnthropicClearParams(trigger=3000, exclude_tools=("grep",), clear_tool_inputs=True)
    rounds = [search(k, "grep" if k % 3 == 0 else "retrieve") for k in range(8)]
    ran = run(anthropic.build(params, CTXLAB_TEXTS), one_turn(*rounds))
    sent = ran.sent()[-1]
    results = [b for m in sent for b in m.blocks if isinstance(b, ToolResultBlock)]
    for k, result in enumerate(results[:-3]):
        assert (result.text == CLEARED) == (k % 3 != 0)
    assert calls_in(sent)[:-3] == ['{"query": "q0"}', "{}", "{}", '{"query": "q3"}', "{}"]


def test_clear_at_least_holds_the_edit_back_until_it_reclaims_enough() -> None:
    params = AnthropicClearParams(trigger=3000, clear_at_least=4500)
    ran = run(anthropic.build(params, CTXLAB_TEXTS), one_turn(*(search(k) for k in range(8))))
    first = next(i for i, c in enumerate(ran.outcome.calls) if CLEARED_EVENT in c.events)
    cleared_counts = [shown(sent).count(CLEARED) for sent in ran.sent()]
    assert cleared_counts[first] >= 5 and set(cleared_counts[:first]) == {0}  # ≥ 4500 tokens at once
    assert ran.reasoning()[first - 1] > 3000  # over the trigger but not worth clearing yet


def test_persisted_clearing_edits_the_stored_history_so_it_grows_back_before_clearing_again() -> None:
    params = AnthropicClearParams(trigger=5000, persist=True)
    ran = run(anthropic.build(params, CTXLAB_TEXTS), one_turn(*(search(k) for k in range(16))))
    stored = [r.text for r in results_of(ran)]
    assert CLEARED in stored
    assert ran.events().count("cleared") < 16 - 5
    assert ran.violations() == []


def test_langchain_clearing_is_request_only_and_runs_again_every_turn() -> None:
    """langchain #37815: the edit never reaches the stored state, so every request redoes it."""
    params = LangChainClearParams(trigger=5000)
    ran = run(langchain.build_clear(params, CTXLAB_TEXTS), one_turn(*(search(k) for k in range(10))))
    placeholder = CTXLAB_LANGCHAIN_TEXTS.placeholder
    assert all(r.text != placeholder for r in results_of(ran))
    assert shown(ran.sent()[-1]).count(placeholder) == 7
    persisted = run(
        langchain.build_clear(LangChainClearParams(trigger=5000, persist=True), CTXLAB_TEXTS),
        one_turn(*(search(k) for k in range(10))),
    )
    assert [r.text for r in results_of(persisted)].count(placeholder) >= 4  # PR #39265


def test_langchain_clear_at_least_stops_once_enough_is_reclaimed() -> None:
    params = LangChainClearParams(trigger=5000, clear_at_least=1500)
    ran = run(langchain.build_clear(params, CTXLAB_TEXTS), one_turn(*(search(k) for k in range(10))))
    placeholder = CTXLAB_LANGCHAIN_TEXTS.placeholder
    first = next(s for s in ran.sent() if placeholder in str(s))
    assert shown(first).count(placeholder) == 2  # 2 × 1,000 tokens ≥ 1,500: stop there


def test_swe_agent_shows_only_the_last_5_observations() -> None:
    ran = run(
        swe_agent.PRESET.strategy(LastNObservationsParams(n=5)), one_turn(*(search(k) for k in range(9)))
    )
    last = shown(ran.sent()[-1])
    assert ["elided" in t for t in last] == [True] * 4 + [False] * 5
    assert last[0] == LastNObservationsParams(n=5).notice.replace("{lines}", "1")
    assert all("elided" not in r.text for r in results_of(ran))


def test_the_sliding_window_orphans_results_and_the_lab_reports_it() -> None:
    rounds = [
        ScriptedRound(
            calls=(
                tool_call("retrieve", '{"query": "a"}', text(2000, "a")),
                tool_call("retrieve", '{"query": "b"}', text(2000, "b")),
            )
        )
        for _ in range(6)
    ]
    ran = run(sliding_window.PRESET.strategy(), one_turn(*rounds), window=3100)
    assert "dropped" in ran.events() and max(ran.reasoning()) <= 3100
    rules = {v.rule for c in ran.outcome.calls for v in c.violations}
    assert rules == {"openai", "anthropic", "bedrock"}, "a protocol-blind window must orphan something here"
    assert all(len(b.text) == 2000 for b in results_of(ran))  # the stored history is whole


# deepagents eviction: what is saved is exactly what the source saves --------------------------

multi_part = st.lists(
    st.one_of(st.builds(TextBlock, text=st.text("ab\n中", min_size=0, max_size=300)), st.just(IMAGE)),
    min_size=1,
    max_size=5,
)


@given(multi_part)
def test_deepagents_saves_a_multi_part_result_joined_by_newlines(output: list[Part]) -> None:
    """deepagents evicts the result's text parts joined by newlines (images stay in context); the
    tool's output reaches it with adjacent texts already one part, as the engine's tools return."""
    params = DeepAgentsParams(filesystem=FilesystemSettings(tool_token_limit_before_evict=10))
    script = one_turn(ScriptedRound(calls=(tool_call("bash", '{"command": "ls"}', tuple(output)),)))
    ran = run(deepagents.build(params, CTXLAB_TEXTS), script)
    runs = itertools.groupby(output, key=lambda p: isinstance(p, TextBlock))
    texts = ["".join(p.text for p in run if isinstance(p, TextBlock)) for is_text, run in runs if is_text]
    joined = "\n".join(texts)
    saved = [ran.workspace.read(path).decode("utf-8") for path in ran.workspace.files]
    assert saved == ([joined] if len(joined) > 40 else [])
    [kept] = results_of(ran)
    assert [p for p in kept.output if isinstance(p, DataBlock)] == [p for p in output if p == IMAGE]


def test_deepagents_joins_text_image_text_with_a_newline() -> None:
    big = ToolResultBlock(
        id="c1", name="bash", output=(TextBlock(text="a" * 50_000), IMAGE, TextBlock(text="b" * 50_000))
    )
    assert should_evict(big, 20_000)
    assert result_text(big) == "a" * 50_000 + "\n" + "b" * 50_000


def test_swe_agent_needs_n_as_its_source_does() -> None:
    with pytest.raises(TypeError):
        LastNObservationsParams()  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="give n: 5"):
        LastNObservationsParams(n=0)
    assert swe_agent.PRESET.defaults()["n"] == "(required)"


SCENARIO = """name: t
workload:
  generator: {name: swe_loop, params: {turns: 1, cycles: 1}}
model: {context_size: 16000}
strategies:
  - preset: swe-agent
    polling: 2
    bogus: 1
  - preset: openhands-hybrid
    masking: {polling: 2}
"""


def test_a_missing_n_is_located_and_suggests_the_paper_s_5(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    found = [str(p) for p in caught.value.problems]
    fix = "is required but missing; add it (n: 5, the SWE-agent paper's value)"
    assert f"{path}:6:5: strategies[0].n: {fix}" in found
    assert any(m.startswith(f"{path}:8:5: strategies[0].bogus: unknown key 'bogus'") for m in found)  # kept
    assert not any("strategies[1]" in m for m in found)  # the hybrid's masking keeps its own n: 10


def test_swe_agent_texts_write_swe_agent_s_own_notice() -> None:
    texts = dataclasses.replace(CTXLAB_TEXTS, name="swe-agent")
    ran = run(swe_agent.build(LastNObservationsParams(n=5), texts), one_turn(*(search(k) for k in range(9))))
    last = shown(ran.sent()[-1])
    assert last[0] == "Old environment output: (1 lines omitted)"


NEGATIVE_COUNT = """name: t
workload:
  generator: {name: swe_loop, params: {turns: 1, cycles: 1}}
model: {context_size: 16000}
strategies:
  - preset: anthropic-clear
    SETTING
"""


@pytest.mark.parametrize(
    ("setting", "counted"),
    [
        ("trigger: -1", "input tokens or tool uses"),
        ("keep: -1", "tool uses"),
        ("clear_at_least: -1", "input tokens"),
    ],
)
def test_anthropic_clearing_refuses_a_negative_count_at_load(
    tmp_path: Path, setting: str, counted: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(NEGATIVE_COUNT.replace("SETTING", setting), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    name = setting.partition(":")[0]
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:7:5: strategies[0].{name}: {name}=-1: Anthropic's clear_tool_uses takes a count of "
        f"{counted} here, and a count is not negative; use 0 or more"
    ]
