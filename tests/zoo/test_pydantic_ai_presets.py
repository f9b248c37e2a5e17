"""The pydantic-ai presets through the engine: what each capability does to the stored history,
the harness's counter, the texts read from the installed packages, and the declared deviations."""

from __future__ import annotations

import pytest

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.message import text_message
from ctxlab.core.world.script import ScriptedRound, assign_call_ids
from ctxlab.engine.session import run_script
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FailMode, FixedSummarizer
from ctxlab.presets.pydantic_ai import preset as pydantic_ai
from ctxlab.presets.pydantic_ai.cutoffs import find_safe_cutoff
from ctxlab.presets.pydantic_ai.params import ClearToolResultsParams, SlidingWindowParams, SummarizingParams
from ctxlab.presets.pydantic_ai.steps import HarnessStep
from ctxlab.presets.pydantic_ai.view import Frame, estimate_tokens, pa_view
from ctxlab.texts import CTXLAB_TEXTS, load_texts
from ctxlab.texts.pydantic_ai import CTXLAB_PYDANTIC_AI_TEXTS
from tests.zoo.runs import FIELDS, one_turn, results_of, run, text, tool_call, turns

FRAME = Frame(
    head=CTXLAB_PYDANTIC_AI_TEXTS.summary_head,
    tail=CTXLAB_PYDANTIC_AI_TEXTS.summary_tail,
    file_reference=CTXLAB_PYDANTIC_AI_TEXTS.file_reference,
)


def search(k: int, size: int = 400) -> ScriptedRound:
    return ScriptedRound(calls=(tool_call("retrieve", f'{{"query":"q{k}"}}', text(size, tag=str(k % 10))),))


def test_without_a_trigger_no_capability_ever_compacts() -> None:
    script = one_turn(*(search(k, 2000) for k in range(12)))
    for info in (pydantic_ai.CLEAR_PRESET, pydantic_ai.WINDOW_PRESET, pydantic_ai.SUMMARY_PRESET):
        ran = run(info.strategy(), script, window=4000)
        assert ran.events() == [] and all(c.kind == "reasoning" for c in ran.outcome.calls)


@pytest.mark.parametrize(
    "params",
    [
        lambda: ClearToolResultsParams(max_tokens=10, max_fraction=0.5),
        lambda: SlidingWindowParams(max_messages=0),
        lambda: SummarizingParams(max_fraction=1.5),
        lambda: SummarizingParams(max_messages=3, tool_return_max_chars=0),
        lambda: ClearToolResultsParams(max_messages=3, keep_pairs=-1),
        lambda: SlidingWindowParams(max_fraction=0.5, context_window=0),
    ],
)
def test_settings_the_harness_refuses_are_refused(params: object) -> None:
    with pytest.raises(ValueError):
        params()  # type: ignore[operator]


def test_the_history_is_requests_and_responses_and_a_round_s_results_are_one_request() -> None:
    parallel = ScriptedRound(
        text="Two at once.",
        calls=(tool_call("retrieve", '{"query":"a"}', text(40)), tool_call("figure", '{"n":1}', text(40))),
    )
    ran = run(pydantic_ai.CLEAR_PRESET.strategy(), one_turn(parallel, search(1)), window=4000)
    history = pa_view(ran.outcome.state.context, FRAME)
    assert [m.kind for m in history] == ["request", "response", "request", "response", "request", "response"]
    assert [p.kind for p in history[1].parts] == ["text", "call", "call"]
    assert [p.kind for p in history[2].parts] == ["return", "return"]
    chars = sum(len(s) for m in history for p in m.parts for s in p.segments())
    assert estimate_tokens(history, "abcd") == (chars + 4) // 4


def test_a_cutoff_never_parts_a_call_from_its_return() -> None:
    ran = run(pydantic_ai.CLEAR_PRESET.strategy(), one_turn(*(search(k) for k in range(4))), window=4000)
    history = pa_view(ran.outcome.state.context, FRAME)
    cut = find_safe_cutoff(history, 2)  # the last two are a result request and the final answer
    assert history[cut].kind == "response" and cut == len(history) - 3


def test_clearing_blanks_all_but_the_newest_results_in_the_stored_history() -> None:
    params = ClearToolResultsParams(max_tokens=300, keep_pairs=2)
    ran = run(
        pydantic_ai.build_clear(params, CTXLAB_TEXTS), one_turn(*(search(k) for k in range(8))), window=4000
    )
    outputs = [r.output for r in results_of(ran)]
    placeholder = (TextBlock(text=CTXLAB_PYDANTIC_AI_TEXTS.placeholder),)
    assert outputs[:6] == [placeholder] * 6 and placeholder not in outputs[6:]
    assert "cleared" in ran.events() and ran.violations() == []


def test_the_window_keeps_the_first_user_message_and_the_tail() -> None:
    params = SlidingWindowParams(max_messages=10, keep_messages=4)
    ran = run(
        pydantic_ai.build_window(params, CTXLAB_TEXTS), one_turn(*(search(k) for k in range(12))), window=8000
    )
    history = pa_view(ran.outcome.state.context, FRAME)
    assert history[0].parts[0].kind == "user" and len(history) <= 11
    assert "dropped" in ran.events() and ran.violations() == []


def test_a_summary_follows_the_first_user_request_and_is_counted_raw() -> None:
    params = SummarizingParams(max_messages=8, keep_messages=3)
    script = turns(tuple(search(k) for k in range(6)), tuple(search(k) for k in range(6, 12)))
    ran = run(pydantic_ai.build_summary(params, CTXLAB_TEXTS), script, window=8000)
    history = pa_view(ran.outcome.state.context, FRAME)
    kinds = [p.kind for m in history if m.kind == "request" for p in m.parts]
    assert kinds[0] == "user" and "summary" in kinds
    assert "compressed" in ran.events() and ran.violations() == []
    summary = next(p for m in history for p in m.parts if p.kind == "summary")
    assert not summary.text.startswith(FRAME.head)  # the harness counts the summary, not its frame
    strategy_tokens = [c.strategy_tokens for c in ran.outcome.calls if c.kind == "reasoning"]
    assert all(t is not None and t > 0 for t in strategy_tokens)


def test_texts_pydantic_ai_reads_the_packages_strings() -> None:
    strategy = pydantic_ai.build_clear(ClearToolResultsParams(max_messages=2), load_texts("pydantic-ai"))
    step = next(s for s in strategy.steps if isinstance(s, HarnessStep))  # after the request limit
    texts = step.texts
    assert texts.placeholder == "[tool result cleared]"
    assert "{messages}" in texts.summary_prompt and texts.summary_head.startswith("<conversation_summary>")
    assert texts.summary_tail.endswith("</conversation_summary>") and texts.instructions
    assert CTXLAB_PYDANTIC_AI_TEXTS.placeholder != texts.placeholder
    assert texts.file_reference == "See file {id}." and texts.file_close == "</tool_result>"  # PA26
    assert (
        texts.file_open
        == '<tool_result tool_name="{tool_name}" tool_call_id="{tool_call_id}" file_id="{file_id}">'
    )
    assert CTXLAB_PYDANTIC_AI_TEXTS.file_reference != texts.file_reference


@pytest.mark.parametrize(
    ("fail_mode", "answer", "feedback"),
    [
        ("no_tool_call", " ", CTXLAB_PYDANTIC_AI_TEXTS.blank_retry),
        ("empty", "", CTXLAB_PYDANTIC_AI_TEXTS.no_text_retry),
    ],
    ids=["whitespace", "no text"],
)
def test_a_blank_summary_is_asked_again_once_in_the_lab_s_wording(
    fail_mode: FailMode, answer: str, feedback: str
) -> None:
    """Under the lab's texts a blank summary is asked again once, after the blank answer, with the
    lab's feedback for its kind; a second blank answer ends the run."""
    strategy = pydantic_ai.build_summary(SummarizingParams(max_messages=4, keep_messages=2), CTXLAB_TEXTS)
    script = assign_call_ids(one_turn(*(search(k) for k in range(6))))
    summarizer = FixedSummarizer(fields=FIELDS, fail_on=frozenset({1}), fail_mode=fail_mode)
    with pytest.raises(ValueError, match="blank text"):
        run_script(
            script,
            strategy,
            model=ScriptModel(script),
            summarizer=summarizer,
            texts=CTXLAB_TEXTS,
            context_size=200_000,
        )
    assert summarizer.requests is not None and len(summarizer.requests) == 2
    first, second = (r.messages for r in summarizer.requests)
    assert second[: len(first)] == first and len(second) == len(first) + 2
    assert second[-2] == text_message("assistant", answer)
    assert second[-1] == text_message("user", feedback)


def test_the_notes_say_how_a_user_s_image_is_sent() -> None:
    from ctxlab.presets.pydantic_ai.preset import NOTES

    assert any("user's image" in note and "BinaryContent" in note for note in NOTES)


def test_the_notes_say_a_run_makes_at_most_50_requests() -> None:
    from ctxlab.presets.pydantic_ai.preset import NOTES

    assert any("50 requests" in note and "summary requests included" in note for note in NOTES)
