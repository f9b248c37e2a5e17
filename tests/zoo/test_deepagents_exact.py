"""The `deepagents` preset's pieces against deepagents 0.7.32's own functions, its parameters as
scenarios write them, its texts and its loop limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from deepagents.middleware import _message_eviction as eviction
from deepagents.middleware.summarization import SummarizationMiddleware
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.presets.deepagents.eviction import (
    content_preview,
    evicted,
    human_path,
    human_to_evict,
    humans_evicted,
    preview_note,
    should_evict,
)
from ctxlab.presets.deepagents.preset import LANGGRAPH_LOOP_LIMIT, DeepAgentsParams
from ctxlab.presets.deepagents.summary import truncated_input
from ctxlab.presets.entries import entry_params
from ctxlab.presets.limits import loop_limit
from ctxlab.presets.registry import ENTRIES, PRESETS
from ctxlab.texts import load_texts
from ctxlab.texts.deepagents import CTXLAB_DEEPAGENTS_TEXTS, deepagents_texts

LINE = st.text(alphabet="ab \t中é", max_size=1200)
CONTENT = st.lists(LINE, max_size=30).map("\n".join)


def entry(**fields: Any) -> DeepAgentsParams:
    validated = ENTRIES["deepagents"].model_validate({"preset": "deepagents", **fields})
    params = entry_params(validated)
    assert isinstance(params, DeepAgentsParams)
    return params


def test_parameters_nest_as_deepagents_names_them() -> None:
    params = entry(
        filesystem={"tool_token_limit_before_evict": 500},
        summarization={
            "trigger": [["tokens", 4000], {"tokens": 3000, "messages": 10}],
            "keep": ["messages", 6],
            "trim_tokens_to_summarize": 4000,
            "truncate_args_settings": {
                "trigger": ["messages", 20],
                "keep": ["messages", 20],
                "max_length": 99,
            },
        },
    )
    assert params.filesystem.tool_token_limit_before_evict == 500
    assert params.summarization.keep == ContextSize("messages", 6)
    assert params.summarization.truncate_args_settings.max_length == 99
    assert entry() == DeepAgentsParams()  # the defaults create_summarization_middleware sets


@pytest.mark.parametrize(
    "bad",
    [
        {"summarization": {"trigger": ["tokenz", 4000]}},
        {"summarization": {"keep": ["fraction", 1.5]}},
        {"summarization": {"truncate_args_settings": {"keep": ["messages", 0]}}},
    ],
)
def test_a_broken_setting_is_refused_when_the_scenario_loads(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        entry(**bad)


def test_texts_deepagents_reads_the_package_s_strings_and_tools() -> None:
    texts = deepagents_texts()
    assert texts.evicted_stub == eviction._TOO_LARGE_TOOL_MSG
    built = SummarizationMiddleware._build_new_messages_with_path(None, "S", "/p")[0].content  # type: ignore[arg-type]
    assert texts.summary_message.format(summary="S", path="/p") == built
    names = [t.schema.name for t in texts.tools]
    assert names == ["ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep", "task"]
    assert [t.schema.name for t in CTXLAB_DEEPAGENTS_TEXTS.tools] == names  # the lab's own, same names
    assert sum(t.counted_chars for t in texts.tools) // 4 > 2600  # what deepagents counts of them


@given(CONTENT)
def test_the_preview_and_its_note_equal_deepagents(content: str) -> None:
    texts = deepagents_texts()
    theirs = eviction._create_content_preview(content)
    ours = content_preview(content, texts)
    assert (ours.text, ours.lines_omitted, ours.lines_clipped) == (
        theirs.text,
        theirs.lines_omitted,
        theirs.lines_clipped,
    )
    expected = eviction._preview_note(lines_omitted=theirs.lines_omitted, lines_clipped=theirs.lines_clipped)
    assert preview_note(ours, texts) == expected


@given(CONTENT, st.sampled_from(["c1", "call.with/odd\\chars", "x" * 40, "y" * 200]))
def test_the_stub_equals_deepagents(content: str, call_id: str) -> None:
    result = ToolResultBlock(id=call_id, name="retrieve", output=(TextBlock(text=content),))
    stub = evicted(result, deepagents_texts())
    path = "/large_tool_results/" + eviction.sanitize_tool_call_id(call_id)
    message = ToolMessage(content=content, tool_call_id=call_id)
    theirs = eviction._render_too_large_tool_msg(tool_call_id=call_id, file_path=path, content_str=content)
    assert stub.output == (TextBlock(text=theirs),)
    assert eviction._extract_text_from_message(message) == content


@given(CONTENT)
def test_an_evicted_user_message_is_shown_as_deepagents_shows_it(content: str) -> None:
    from deepagents.middleware import filesystem
    from langchain_core.messages import HumanMessage

    from ctxlab.core.messages.message import text_message

    path = human_path(7)
    message = text_message("user", content, id="m1")
    (shown,) = humans_evicted((message,), {"m1": path}, deepagents_texts())
    theirs = filesystem._build_truncated_human_message(HumanMessage(content=content), path)
    assert shown.blocks == (TextBlock(text=theirs.content),)  # type: ignore[arg-type]
    limit = max(1, len(content) // 4)
    assert human_to_evict((message,), {}, limit) == (message if len(content) > 4 * limit else None)
    assert human_to_evict((message,), {}, None) is None
    assert human_to_evict((message,), {"m1": path}, 1) is None  # evicted once


def test_file_tools_are_never_evicted_and_none_disables_eviction() -> None:
    big = "x" * 90_000
    assert should_evict(ToolResultBlock(id="c", name="bash", output=(TextBlock(text=big),)), 20_000)
    assert not should_evict(ToolResultBlock(id="c", name="bash", output=(TextBlock(text=big),)), None)
    assert not should_evict(ToolResultBlock(id="c", name="read_file", output=(TextBlock(text=big),)), 20_000)
    assert not should_evict(
        ToolResultBlock(id="c", name="bash", output=(TextBlock(text=big[:80_000]),)), 20_000
    )


@given(
    st.sampled_from(["write_file", "edit_file", "retrieve"]),
    st.dictionaries(
        st.sampled_from(["file_path", "content", "n"]), st.one_of(st.integers(), LINE), max_size=3
    ),
    st.integers(0, 300),
)
def test_argument_truncation_equals_truncate_tool_call(name: str, args: dict[str, Any], limit: int) -> None:
    middleware = SummarizationMiddleware.__new__(SummarizationMiddleware)
    middleware._max_arg_length, middleware._truncation_text = limit, "...(argument truncated)"
    call = ToolCallBlock(id="c1", name=name, input=json.dumps(args, ensure_ascii=False))
    ours = truncated_input(call, limit, "...(argument truncated)")
    theirs = middleware._truncate_tool_call({"name": name, "args": args, "id": "c1", "type": "tool_call"})
    if name == "retrieve" or theirs["args"] == args:
        assert ours is None
    else:
        assert ours is not None and json.loads(ours) == theirs["args"]


def test_the_request_is_counted_with_its_system_prompt_and_tools() -> None:
    strategy = PRESETS["deepagents"].strategy(texts=load_texts("deepagents"))
    tools = tuple(t.schema for t in deepagents_texts().tools)
    from ctxlab.core.messages.message import text_message

    counter = strategy.request_counter
    assert counter is not None
    got = counter((text_message("system", "You research."), text_message("user", "hi")), tools)
    chars = sum(t.counted_chars for t in deepagents_texts().tools)
    expected = count_tokens_approximately([("system", "You research."), ("user", "hi")]) + -(-chars // 4)
    assert got == expected


def test_the_family_loop_limit_applies_unless_the_scenario_sets_one() -> None:
    def validated(**fields: Any) -> Any:
        return ENTRIES["deepagents"].model_validate({"preset": "deepagents", **fields})

    assert loop_limit(validated()) == loop_limit(validated(react={})) == LANGGRAPH_LOOP_LIMIT
    assert loop_limit(validated(react={"max_iters": 7})) == 7


def test_a_request_that_grew_is_counted_by_what_it_gained(monkeypatch: pytest.MonkeyPatch) -> None:
    """A history past `LINEAGE_WORTH` grows a message at every call; each request is counted as
    a fresh read counts it, and without comparing the whole history with the one before (the
    count resumes where the request's context grew from the last)."""
    from ctxlab.core.messages import resumable
    from ctxlab.core.messages.latest import REQUESTS
    from ctxlab.core.messages.message import LINEAGE_WORTH, extended, same_leading, text_message

    compared: list[int] = []

    def counted_same_leading(a: Any, b: Any) -> int:
        compared.append(same_leading(a, b))
        return compared[-1]

    monkeypatch.setattr(resumable, "same_leading", counted_same_leading)
    strategy = PRESETS["deepagents"].strategy(texts=load_texts("deepagents"))
    counter = strategy.request_counter
    assert counter is not None
    system = (text_message("system", "You research."),)
    context: tuple[Any, ...] = ()
    counts = []
    for i in range(LINEAGE_WORTH + 200):
        # grown as the engine grows a history: noted as beginning with the one before
        context = extended(context, (text_message("user" if i % 2 else "assistant", f"m{i} " * (i % 7)),))
        if i == LINEAGE_WORTH:  # a shorter history is compared, which costs less than its lineage
            compared.clear()
        counts.append(counter(REQUESTS(system, context), ()))
    assert sum(compared) < 20 * 200  # not the history's length at every call
    resumable.forget()
    assert counts[-1] == counter(REQUESTS(system, context), ())
    plain = [("system", "You research.")] + [(m.role, m.blocks[0].text) for m in context]
    assert counts[-1] == count_tokens_approximately(plain)
