"""`ToolOutputTrimmer` on structured tool outputs (CHECKLIST OA6): the lab's pure trimming
(`presets/openai_agents/structured.py`) against the SDK's own method on generated parts, refused
ones included; the notices read from the package; the lab's wording; a result with an image
trimmed in a run."""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolResultBlock
from ctxlab.core.world.script import ScriptedRound
from ctxlab.presets.openai_agents.preset import TrimmerParams, build_trimmer
from ctxlab.presets.openai_agents.structured import api_parts, payload_of, structured_notice
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.texts.agents import openai_agents_texts
from ctxlab.texts.agents_structured import CTXLAB_STRUCTURED_NOTICES
from tests.zoo.runs import run, text, tool_call, turns

WORDS = st.sampled_from(["", "a", "Screenshot:", "第一段\n第二段", "{x}", "y" * 90, "z" * 700])
URL = st.sampled_from(["https://x.test/a.png", "data:image/png;base64,iVBORw0KGgo=", "u" * 300, ""])


def _text_part() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda t: {"type": "input_text", "text": t}, WORDS)


def _image_part() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("input_image")},
        optional={
            "image_url": URL,
            "file_id": st.sampled_from(["file-1", "f" * 40]),
            "detail": st.sampled_from(["low", "high", "auto", "max"]),
        },
    )


def _file_part() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("input_file")},
        optional={
            "file_data": st.sampled_from(["data:application/pdf;base64,JVBERi0=", "d" * 200]),
            "file_url": URL,
            "file_id": st.just("file-2"),
            "filename": st.sampled_from(["report.pdf", ""]),
        },
    )


ODD = st.sampled_from(
    [
        "text",
        {"type": "input_text", "text": 3},
        {"type": "input_text"},
        {"type": "input_audio", "data": "x"},
        {"text": "no type"},
        {"type": "input_text", "text": "a", "extra": "b"},
        {"type": "input_image", "image_url": "x", "detail": None},
        {"type": 7},
    ]
)


def parts() -> st.SearchStrategy[list[Any]]:
    valid = st.one_of(_text_part(), _text_part(), _image_part(), _file_part())
    return st.one_of(
        st.lists(valid, max_size=5),
        st.lists(st.one_of(valid, ODD), min_size=1, max_size=4),
    )


def sdk_output(found: list[Any], name: str, max_output_chars: int, preview_chars: int) -> str | None:
    from agents.extensions.tool_output_trimmer import ToolOutputTrimmer

    sdk = ToolOutputTrimmer(max_output_chars=max_output_chars, preview_chars=preview_chars)
    item = {"type": "function_call_output", "call_id": "c", "output": found}
    theirs, _ = sdk._trim_function_call_output(item, (name,) if name else ())
    return None if theirs is None else str(theirs["output"])


@settings(max_examples=400, deadline=None)
@given(
    found=parts(),
    name=st.sampled_from(["", "look", "a_rather_long_tool_name", "{n}"]),
    max_output_chars=st.one_of(st.integers(1, 12), st.integers(13, 120), st.sampled_from([500, 2000])),
    preview_chars=st.sampled_from([0, 1, 5, 200, 1000]),
)
def test_the_structured_notice_and_when_it_applies_equal_the_sdk_s(
    found: list[Any], name: str, max_output_chars: int, preview_chars: int
) -> None:
    own = openai_agents_texts()
    ours = structured_notice(
        found,
        name or own.unknown_tool,
        max_output_chars=max_output_chars,
        preview_chars=preview_chars,
        notices=own.structured,
    )
    assert ours == sdk_output(found, name, max_output_chars, preview_chars)
    assert ours is None or len(ours) <= max_output_chars
    refused = payload_of(found) is None
    event("refused" if refused else "kept whole" if ours is None else "trimmed")


def test_the_package_s_notices_are_read_and_differ_from_the_lab_s() -> None:
    own = openai_agents_texts().structured
    assert own != CTXLAB_STRUCTURED_NOTICES
    assert (own.image_kind, own.file_kind) == ("input_image", "input_file")
    shot = [{"type": "input_text", "text": "Shot: " * 20}, {"type": "input_image", "image_url": "u" * 50}]
    for limit in range(1, 200):  # every header the SDK falls back through, and the minimal one cut
        ours = structured_notice(shot, "look", max_output_chars=limit, preview_chars=30, notices=own)
        assert ours == sdk_output(shot, "look", limit, 30)


def test_refused_outputs_stay_whole() -> None:
    assert payload_of([]) is None
    assert payload_of([{"type": "input_image", "detail": "low"}]) is None  # no image_url nor file_id
    assert payload_of([{"type": "input_file", "filename": "a.pdf"}]) is None  # no content
    counted = payload_of([{"type": "input_image", "file_id": "f-1", "detail": "high"}])
    assert counted is not None and counted.chars == len("f-1high")  # every field's value counts


def test_the_lab_s_wording_keeps_the_sdk_s_budget() -> None:
    shot = [{"type": "input_text", "text": "x" * 100}, {"type": "input_file", "file_data": "d" * 100}]
    for limit in range(1, 150):
        ours = structured_notice(
            shot, "look", max_output_chars=limit, preview_chars=50, notices=CTXLAB_STRUCTURED_NOTICES
        )
        assert ours is not None and len(ours) <= limit
    assert (
        structured_notice(
            shot, "look", max_output_chars=3, preview_chars=5, notices=CTXLAB_STRUCTURED_NOTICES
        )
        == "[ou"
    )


def test_a_result_s_parts_as_the_sdk_holds_them() -> None:
    pdf = DataBlock(media_type="application/pdf", source="JVBERi0=", kind="base64", name="r.pdf")
    linked = DataBlock(media_type="application/pdf", source="https://x.test/r.pdf")
    image = DataBlock(media_type="image/png", source="https://x.test/a.png")
    assert api_parts((TextBlock(text="a"), pdf, linked, image)) == (
        {"type": "input_text", "text": "a"},
        {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0=", "filename": "r.pdf"},
        {"type": "input_file", "file_url": "https://x.test/r.pdf"},
        {"type": "input_image", "image_url": "https://x.test/a.png"},
    )


def test_a_result_with_an_image_is_trimmed_in_the_request_only() -> None:
    image = DataBlock(media_type="image/png", source="i" * 400, kind="base64")
    look = ScriptedRound(calls=(tool_call("retrieve", '{"q": 1}', (*text(300), image)),))
    script = turns((look,), (ScriptedRound(calls=(tool_call("retrieve", '{"q": 2}', text(10)),)),), ())
    ran = run(build_trimmer(TrimmerParams(), CTXLAB_TEXTS), script)
    stored = [b for m in ran.outcome.state.context for b in m.blocks if isinstance(b, ToolResultBlock)]
    assert stored[0].output[-1] == image  # the session keeps the whole output
    sent = [b for m in ran.sent()[-1] for b in m.blocks if isinstance(b, ToolResultBlock)]
    assert len(sent[0].output) == 1 and isinstance(sent[0].output[0], TextBlock)
    assert (
        sent[0].output[0].text.startswith("[retrieve returned 722 characters, 200 kept, left out 1 image]\n")
    )
    assert ran.events().count("cleared") == 1 and ran.violations() == []
