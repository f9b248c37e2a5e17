"""ctxlab's LangChain counter, trimmer and transcript against the installed langchain-core
1.8.3 on generated histories."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langchain_core.messages.utils import (
    count_tokens_approximately,
    get_buffer_string,
    trim_messages,
)

from ctxlab.core.messages.blocks import TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.presets.lc_count import ANTHROPIC_CHARS_PER_TOKEN, ApproxParams, count_tokens
from ctxlab.presets.lc_messages import LCCall, LCMessage, lc_answer, lc_view, trim_last, xml_transcript
from tests.parity.lc_bridge import from_langchain, to_langchain

TEXT = st.text(alphabet=st.sampled_from([*"abc xyz<>&\"'\n{}", "上", "下", "é", "\t"]), max_size=120)
IDS = st.text(alphabet="abcdef0123456789_-", min_size=1, max_size=80)
ARGS = st.dictionaries(
    st.sampled_from(["query", "path", "n", "上"]),
    st.one_of(TEXT, st.integers(-5, 10**6), st.booleans(), st.none(), st.floats(-1e3, 1e3)),
    max_size=3,
)
PROVIDERS = st.sampled_from([None, "openai", "openai", "anthropic"])


@st.composite
def lc_messages(draw: st.DrawFn) -> LCMessage:
    kind = draw(st.sampled_from(["human", "ai", "ai", "tool", "system"]))
    name = draw(st.one_of(st.none(), st.just(""), TEXT))
    if draw(st.integers(0, 4)) == 0 and kind != "tool":
        parts = draw(
            st.lists(
                st.one_of(
                    st.builds(lambda t: {"type": "text", "text": t}, TEXT),
                    st.just({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}),
                ),
                max_size=3,
            )
        )
        content: str | tuple[dict[str, object], ...] = tuple(parts)
    else:
        content = draw(TEXT)
    if kind == "ai":
        calls = tuple(
            LCCall(name=draw(st.sampled_from(["retrieve", "ls"])), args=json.dumps(draw(ARGS)), id=draw(IDS))
            for _ in range(draw(st.integers(0, 3)))
        )
        total = draw(st.one_of(st.none(), st.integers(1, 5000)))
        return LCMessage(
            kind="ai",
            content=content,
            tool_calls=calls,
            name=name,
            provider=draw(PROVIDERS),
            total_tokens=total,
        )
    if kind == "tool":
        return LCMessage(kind="tool", content=content, tool_call_id=draw(IDS), name=name)
    return LCMessage(kind=kind, content=content, name=name)  # type: ignore[arg-type]


HISTORIES = st.lists(lc_messages(), max_size=12)
TOOLS = st.lists(
    st.builds(
        lambda n, d: {"type": "function", "function": {"name": n, "description": d, "parameters": {}}},
        st.sampled_from(["ls", "grep"]),
        TEXT,
    ),
    max_size=3,
)


COUNTER_PARAMS = st.builds(
    ApproxParams,
    chars_per_token=st.sampled_from([4.0, ANTHROPIC_CHARS_PER_TOKEN, 2.5]),
    extra_tokens_per_message=st.sampled_from([3.0, 0.0, 2.5]),
    count_name=st.booleans(),
    use_usage_metadata_scaling=st.booleans(),
)


@settings(max_examples=150)
@given(HISTORIES, COUNTER_PARAMS, TOOLS)
def test_counter_equals_count_tokens_approximately(
    history: list[LCMessage], params: ApproxParams, tools: list[dict[str, object]]
) -> None:
    for size in range(len(history) + 1):  # a growing history, as a run counts it (the sum resumes)
        theirs = count_tokens_approximately(
            [to_langchain(m) for m in history[:size]],
            chars_per_token=params.chars_per_token,
            extra_tokens_per_message=params.extra_tokens_per_message,
            count_name=params.count_name,
            use_usage_metadata_scaling=params.use_usage_metadata_scaling,
            tools=tools or None,
        )
        assert count_tokens(history[:size], params, tools) == theirs


def test_counter_counts_roles_ids_and_the_repr_of_calls() -> None:
    call = LCCall(name="ls", args='{"path": "."}', id="call_1")
    ai = LCMessage(kind="ai", content="", tool_calls=(call,))
    tool = LCMessage(kind="tool", content="a.py", tool_call_id="call_1")
    # "assistant" + repr of the call list; "tool" + result + id; each rounded up, + 3
    assert count_tokens([ai]) == -(-(9 + 76) // 4) + 3
    assert count_tokens([tool]) == -(-(4 + 4 + 6) // 4) + 3


def test_usage_scaling_is_clamped_to_a_quarter_more() -> None:
    human = LCMessage(kind="human", content="x" * 40)
    ai = LCMessage(kind="ai", content="y" * 40, provider="openai", total_tokens=10_000)
    scaled = count_tokens([human, ai], ApproxParams(use_usage_metadata_scaling=True))
    assert scaled == -(-(count_tokens([human, ai]) * 125) // 100)


@settings(max_examples=150)
@given(st.lists(lc_messages(), max_size=10), st.integers(0, 300), st.booleans())
def test_trim_equals_trim_messages(history: list[LCMessage], limit: int, scaling: bool) -> None:
    params = ApproxParams(use_usage_metadata_scaling=scaling)
    theirs = trim_messages(
        [to_langchain(m) for m in history],
        max_tokens=limit,
        token_counter=lambda ms: count_tokens_approximately(ms, use_usage_metadata_scaling=scaling),
        start_on="human",
        strategy="last",
        allow_partial=True,
        include_system=True,
    )
    ours = trim_last(history, limit, lambda ms: count_tokens(ms, params))
    assert [(m.kind, m.content) for m in ours] == [
        (from_langchain(m).kind, from_langchain(m).content) for m in theirs
    ]


@settings(max_examples=150)
@given(HISTORIES)
def test_transcript_equals_get_buffer_string_xml(history: list[LCMessage]) -> None:
    assert xml_transcript(history) == get_buffer_string([to_langchain(m) for m in history], format="xml")


def test_view_of_a_stored_reply_is_one_message_per_call_batch_and_result() -> None:
    reply = Message(
        role="assistant",
        blocks=(
            TextBlock(text="looking"),
            ToolCallBlock(id="c1", name="ls", input='{"path": "."}'),
            ToolCallBlock(id="c2", name="ls", input="{}"),
            ToolResultBlock(id="c1", name="ls", output=(TextBlock(text="a"),)),
            ToolResultBlock(id="c2", name="ls", output=(TextBlock(text="b"),)),
            TextBlock(text="done"),
        ),
    )
    view = lc_view([text_message("user", "list"), reply])
    assert [(m.kind, m.content, [c.id for c in m.tool_calls], m.tool_call_id) for m in view] == [
        ("human", "list", [], ""),
        ("ai", "looking", ["c1", "c2"], ""),
        ("tool", "a", [], "c1"),
        ("tool", "b", [], "c2"),
        ("ai", "done", [], ""),
    ]


def test_deviation_an_anthropic_chat_model_s_thinking_blocks_are_not_modelled() -> None:
    """L27: the lab keeps no thinking for LangChain (`lc_answer`), as an OpenAI-compatible chat
    model's `reasoning_content` (in `additional_kwargs`) is neither sent nor counted. An Anthropic
    chat model (`anthropic: true`) keeps its thinking as a block of the AI message's content, which
    `count_tokens_approximately` counts (the `repr` of a block it does not know): not modelled."""
    thinking = {"type": "thinking", "thinking": "Weigh the passages first.", "signature": "sig"}
    text = {"type": "text", "text": "Looking."}
    openai_compatible = AIMessage(content="Looking.", additional_kwargs={"reasoning_content": "Weigh."})
    assert count_tokens_approximately([openai_compatible]) == count_tokens_approximately(
        [AIMessage(content="Looking.")]
    )
    anthropic = AIMessage(content=[thinking, text])
    assert count_tokens_approximately([anthropic]) > count_tokens_approximately([AIMessage(content=[text])])
    answer = lc_answer((ThinkingBlock(thinking="Weigh the passages first."), TextBlock(text="Looking.")))
    assert answer == (TextBlock(text="Looking."),)
    assert lc_answer((ThinkingBlock(thinking="Weigh."),)) == (TextBlock(text=""),)
