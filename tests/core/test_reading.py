"""Reading requests back: the summary message, a summary request's parts, template values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.compress import fixed_messages
from ctxlab.core.agentscope.summary import build_summary_request, render_summary, summary_tool
from ctxlab.core.messages.blocks import HintBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.world.reading import (
    format_fields,
    placeholder_values,
    read_summary_request,
    request_summary,
    visible_text,
)
from ctxlab.texts import CTXLAB_TEXTS, SUMMARY_FIELDS, Texts, agentscope_texts, fill

TOOL = summary_tool("{}", "Summarise.")
SPAN = (
    text_message("user", "Fix the bug.", id="msg-0001"),
    Message(
        role="assistant",
        id="reply-0002",
        blocks=(
            ToolCallBlock(id="c1", name="Read", input='{"file_path": "a.py"}'),
            ToolResultBlock(id="c1", name="Read", output=(TextBlock(text="body"),)),
        ),
    ),
)


def text_sets() -> list[Texts]:
    try:
        return [CTXLAB_TEXTS, agentscope_texts()]
    except ModuleNotFoundError:
        return [CTXLAB_TEXTS]


def test_visible_text_holds_every_piece() -> None:
    text = visible_text(SPAN)
    assert all(piece in text for piece in ("Fix the bug.", '"file_path": "a.py"', "body"))


def test_the_summary_is_the_id_less_user_message_after_the_system_prompt() -> None:
    assert request_summary(fixed_messages("sys", "the summary")) == "the summary"
    assert request_summary((*fixed_messages("sys", ""), *SPAN)) == ""


@pytest.mark.parametrize("old", ["", "old summary"])
@pytest.mark.parametrize("hints", [(), (HintBlock(hint="focus on tests", source="user"),)])
def test_a_summary_request_reads_back_into_its_parts(old: str, hints: tuple[HintBlock, ...]) -> None:
    request = build_summary_request(
        system_prompt="sys",
        old_summary=old,
        compress=SPAN,
        instructions=hints,
        prompt="Summarise now.",
        schema_tool=TOOL,
    )
    for messages in (request.messages, request.as_sent("Call the tool.")):
        parts = read_summary_request(messages)
        assert (parts.system_prompt, parts.old_summary, parts.compressed) == ("sys", old, SPAN)
        assert parts.instructions == hints
        assert parts.prompt.startswith("Summarise now.")


def test_other_shapes_are_read_leniently() -> None:
    bare = read_summary_request((text_message("system", "s"),))
    assert (bare.system_prompt, bare.old_summary, bare.compressed, bare.prompt) == ("s", "", (), "")
    no_system = read_summary_request((*SPAN, text_message("user", "Summarise.")))
    assert (no_system.system_prompt, no_system.compressed, no_system.prompt) == ("", SPAN, "Summarise.")
    no_prompt = read_summary_request((text_message("system", "s"), *SPAN[1:]))
    assert (no_prompt.compressed, no_prompt.prompt) == (SPAN[1:], "")
    assert read_summary_request(()).compressed == ()
    prompt_only = read_summary_request((text_message("system", "s"), text_message("user", "Summarise.")))
    assert (prompt_only.old_summary, prompt_only.prompt) == ("", "Summarise.")  # the prompt, not a summary


@pytest.mark.parametrize("texts", text_sets())
@given(path=st.from_regex(r"offload/[a-z0-9-]{1,12}\.(json|txt)", fullmatch=True))
def test_reminder_paths_read_back(texts: Texts, path: str) -> None:
    for template in (texts.context_offload_reminder, texts.tool_result_offload):
        text = f"before {fill(template, path=path)} and again {fill(template, path='offload/x.txt')}"
        assert placeholder_values(template, "path", text) == (path, "offload/x.txt")


def test_placeholder_values_of_an_absent_name_are_empty() -> None:
    assert placeholder_values("saved at {path}", "url", "saved at x") == ()


field_values = st.text(alphabet=st.sampled_from([*"abc -:/.()", "\n", "中"]), max_size=40).filter(
    lambda v: "#" not in v
)


@pytest.mark.parametrize("texts", text_sets())
@given(values=st.fixed_dictionaries({f: field_values for f in SUMMARY_FIELDS}), rest=st.text(max_size=20))
def test_rendered_summaries_read_back(texts: Texts, values: dict[str, str], rest: str) -> None:
    rendered = render_summary(texts.summary_template, values)
    read = format_fields(texts.summary_template, rendered + rest)
    assert read is not None
    assert read.fields == values
    assert read.rest == rest


def test_format_fields_of_a_foreign_text_is_none() -> None:
    assert format_fields(CTXLAB_TEXTS.summary_template, CTXLAB_TEXTS.truncated_summary) is None


def test_a_template_ending_in_a_field_takes_the_rest() -> None:
    read = format_fields("A {a} B {b}", "A 1 B 2 and more")
    assert read is not None and read.fields == {"a": "1", "b": "2 and more"} and read.rest == ""
