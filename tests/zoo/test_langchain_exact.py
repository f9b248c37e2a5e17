"""The exact LangChain presets' parameters as scenarios write them, their loop limit and texts."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock
from ctxlab.presets.entries import entry_params
from ctxlab.presets.langchain.preset import LANGGRAPH_LOOP_LIMIT
from ctxlab.presets.lc_messages import LCCall, LCMessage, lc_answer
from ctxlab.presets.lc_summary import clauses, safe_cutoff_point, should_summarize
from ctxlab.presets.limits import loop_limit
from ctxlab.presets.none.preset import NoStrategy
from ctxlab.presets.registry import ENTRIES, PRESETS
from ctxlab.texts import load_texts
from ctxlab.texts.langchain import CTXLAB_LANGCHAIN_TEXTS


def entry(**fields: Any) -> Any:
    return ENTRIES["langchain-summary"].model_validate({"preset": "langchain-summary", **fields})


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (["tokens", 4000], ((("tokens", 4000),),)),
        ([["tokens", 4000], ["messages", 50]], ((("tokens", 4000),), (("messages", 50),))),
        ({"tokens": 4000, "messages": 50}, ((("tokens", 4000), ("messages", 50)),)),
        ([{"tokens": 10}, ["fraction", 0.5]], ((("tokens", 10),), (("fraction", 0.5),))),
        (None, ()),
    ],
)
def test_every_trigger_form_reads_as_or_ed_clauses_of_and_ed_conditions(written: Any, expected: Any) -> None:
    assert clauses(entry_params(entry(trigger=written)).trigger) == expected


@pytest.mark.parametrize("bad", [["tokens", 0], ["fraction", 1.5], {"tokns": 3}, {}, ["messages", -1]])
def test_a_broken_trigger_is_refused_when_the_scenario_loads(bad: Any) -> None:
    with pytest.raises(ValueError, match="trigger"):
        entry(trigger=bad)


def test_keep_is_messages_tokens_or_a_fraction() -> None:
    assert entry_params(entry(keep=["fraction", 0.3])).keep == ("fraction", 0.3)
    with pytest.raises(ValueError, match="keep"):
        entry(keep=["messages", 0])


def test_a_negative_clearing_keep_is_refused_as_langchain_would_clear_only_the_oldest() -> None:
    """The reason for the refusal, on the real edit: `keep=-1` clears the oldest result alone."""
    from langchain.agents.middleware.context_editing import ClearToolUsesEdit
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.messages.utils import count_tokens_approximately

    messages: list[Any] = [HumanMessage("q")]
    for i in range(3):
        call = {"id": f"c{i}", "name": "read", "args": {}}
        messages += [AIMessage("", tool_calls=[call]), ToolMessage("x" * 400, tool_call_id=f"c{i}")]
    ClearToolUsesEdit(trigger=0, keep=-1, placeholder="-").apply(
        messages, count_tokens=count_tokens_approximately
    )
    assert [m.content == "-" for m in messages if isinstance(m, ToolMessage)] == [True, False, False]
    clear = ENTRIES["langchain-clear"]
    with pytest.raises(ValueError, match="keep=-1: LangChain's ClearToolUsesEdit slices with it"):
        clear.model_validate({"preset": "langchain-clear", "keep": -1})
    assert entry_params(clear.model_validate({"preset": "langchain-clear", "keep": 0})).keep == 0


@pytest.mark.parametrize("name", ["trigger", "clear_at_least"])
def test_a_negative_clearing_count_is_refused_as_langchain_reads_it_as_0(name: str) -> None:
    """The reason for the refusal, on the real edit: -1 clears exactly what 0 clears."""
    from langchain.agents.middleware.context_editing import ClearToolUsesEdit
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.messages.utils import count_tokens_approximately

    def cleared(value: int) -> list[bool]:
        messages: list[Any] = [HumanMessage("q")]
        for i in range(3):
            call = {"id": f"c{i}", "name": "read", "args": {}}
            messages += [AIMessage("", tool_calls=[call]), ToolMessage("x" * 400, tool_call_id=f"c{i}")]
        settings: dict[str, Any] = {"trigger": 0, "keep": 1, "placeholder": "-", name: value}
        ClearToolUsesEdit(**settings).apply(messages, count_tokens=count_tokens_approximately)
        return [m.content == "-" for m in messages if isinstance(m, ToolMessage)]

    assert cleared(-1) == cleared(0) == [True, True, False]
    clear = ENTRIES["langchain-clear"]
    with pytest.raises(ValueError, match=f"{name}=-1: a count of tokens is not negative"):
        clear.model_validate({"preset": "langchain-clear", name: -1})
    assert getattr(entry_params(clear.model_validate({"preset": "langchain-clear", name: 0})), name) == 0


def test_a_clause_holds_only_when_every_condition_does() -> None:
    both = clauses({"tokens": 100, "messages": 5})
    assert not should_summarize(both, count=4, tokens=500, window=1000)
    assert should_summarize(both, count=5, tokens=100, window=1000)
    either = clauses([("tokens", 100), ("fraction", 0.001)])
    assert should_summarize(either, count=1, tokens=1, window=1000)  # the fraction is at least 1 token


def test_a_cut_on_a_tool_message_moves_back_to_its_call() -> None:
    calls = LCMessage(kind="ai", tool_calls=(LCCall("ls", "{}", "a"), LCCall("ls", "{}", "b")))
    view = [
        LCMessage(kind="human", content="q"),
        calls,
        LCMessage(kind="tool", content="1", tool_call_id="a"),
        LCMessage(kind="tool", content="2", tool_call_id="b"),
        LCMessage(kind="ai", content="done"),
    ]
    assert safe_cutoff_point(view, 3) == 1 and safe_cutoff_point(view, 4) == 4
    orphan = [LCMessage(kind="human", content="q"), LCMessage(kind="tool", tool_call_id="x"), view[-1]]
    assert safe_cutoff_point(orphan, 1) == 2  # no call found: past the tool messages


def test_the_family_loop_limit_applies_unless_the_scenario_sets_one() -> None:
    assert loop_limit(entry()) == loop_limit(entry(react={})) == LANGGRAPH_LOOP_LIMIT
    assert loop_limit(entry(react={"max_iters": 7})) == 7


def test_texts_langchain_reads_the_package_s_strings() -> None:
    strategy = PRESETS["langchain-summary"].build(entry_params(entry()), load_texts("langchain"))
    texts = strategy.steps[0].texts  # type: ignore[attr-defined]
    assert texts != CTXLAB_LANGCHAIN_TEXTS and "{messages}" in texts.summary_prompt
    assert texts.summary_prefix.endswith("{summary}") and texts.placeholder == "[cleared]"
    mine = PRESETS["langchain-summary"].build(entry_params(entry()), load_texts("ctxlab"))
    assert mine.steps[0].texts == CTXLAB_LANGCHAIN_TEXTS  # type: ignore[attr-defined]


def test_presets_verbose_shows_the_source_and_installed_versions() -> None:
    import io

    from ctxlab.cli import main

    out = io.StringIO()
    assert main(["presets", "-v"], out=out) == 0
    text = out.getvalue()
    assert "source: langchain 1.5.0 agents/middleware/summarization.py" in text
    assert "installed: langchain " in text and "langchain-core " in text


def test_each_reasoning_call_records_langchain_s_count_beside_the_lab_s() -> None:
    from ctxlab.core.world.script import ScriptedRound
    from ctxlab.presets.langchain import preset as langchain
    from ctxlab.presets.lc_count import count_tokens
    from ctxlab.presets.lc_messages import lc_view
    from tests.zoo.runs import one_turn, run, text, tool_call

    rounds = [ScriptedRound(calls=(tool_call("retrieve", "{}", text(900)),)) for _ in range(6)]
    ran = run(langchain.CLEAR_PRESET.strategy(), one_turn(*rounds))
    sent = ran.sent()
    reasoning = [c for c in ran.outcome.calls if c.kind == "reasoning"]
    assert [c.strategy_tokens for c in reasoning] == [count_tokens(lc_view(s[1:])) for s in sent]
    assert all(c.strategy_tokens is None for c in ran.outcome.calls if c.kind != "reasoning")
    plain = run(NoStrategy(), one_turn(*rounds))
    assert all(c.strategy_tokens is None for c in plain.outcome.calls)


def test_a_kept_answer_writes_its_arguments_back_and_keeps_a_canonical_call_as_is() -> None:
    """L28: the stored call holds what every later request sends; a call already written so is
    the same object (the stored context keeps its identities)."""
    canonical = ToolCallBlock(id="c1", name="retrieve", input='{"query": "数据"}')
    spaced = ToolCallBlock(id="c2", name="retrieve", input=' {"query" : "\\u6570\\u636e", "k":1e3} ')
    text = TextBlock(text="Looking.")
    kept = lc_answer((text, canonical, spaced, ToolCallBlock(id="c3", name="figure", input="")))
    assert kept[0] is text and kept[1] is canonical
    assert [b.input for b in kept[2:]] == ['{"query": "数据", "k": 1000.0}', "{}"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("raw", "reason"), [("not json", "not JSON"), (" ", "not JSON"), ("[1]", "JSON but not an object")]
)
def test_arguments_langchain_holds_as_no_call_fail_naming_the_call(raw: str, reason: str) -> None:
    """L28 (deviation for text that is not JSON): the run fails there, naming the call."""
    with pytest.raises(ValueError, match=f"'c9' \\(retrieve\\): its arguments are {reason}"):
        lc_answer((ToolCallBlock(id="c9", name="retrieve", input=raw),))
