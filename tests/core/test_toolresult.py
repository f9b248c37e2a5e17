"""Tool-result truncation: the boundary scan, the proportional cut, the reminder, and invariants."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.toolresult import (
    ResultSplit,
    attach_reminder,
    merge_text_parts,
    parts_tokens,
    split_tool_result,
    truncation_reminder,
)
from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.texts import CTXLAB_TEXTS
from tests.strategies import ALPHABET

ESTIMATOR = AgentScopeEstimator()
IMAGE = DataBlock(media_type="image/png", source="aGVsbG8=", kind="base64")
T = TextBlock


def result(*parts: Part, state: str = "success") -> ToolResultBlock:
    return ToolResultBlock(id="call_1", name="read", output=parts, state=state)  # type: ignore[arg-type]


def split(limit: int, *parts: Part) -> ResultSplit | None:
    return split_tool_result(result(*parts), limit, ESTIMATOR)


def sides(limit: int, *parts: Part) -> tuple[tuple[Part, ...], tuple[Part, ...]]:
    cut = split(limit, *parts)
    assert cut is not None
    return cut.kept.output, cut.offloaded.output


# ---- merging ------------------------------------------------------------------------------------


def test_merge_joins_runs_of_text_only() -> None:
    assert merge_text_parts((T(text="a"), T(text="b"), IMAGE, T(text="c"), T(text="d"))) == (
        T(text="ab"),
        IMAGE,
        T(text="cd"),
    )
    assert merge_text_parts((T(text="a"), IMAGE, T(text="c"))) == (T(text="a"), IMAGE, T(text="c"))
    assert merge_text_parts((IMAGE, IMAGE)) == (IMAGE, IMAGE)
    assert merge_text_parts(()) == ()


# ---- when nothing is cut ------------------------------------------------------------------------


def test_a_result_at_the_limit_is_kept_whole() -> None:
    assert parts_tokens((T(text="x" * 400),), ESTIMATOR) == 100
    assert split(100, T(text="x" * 400)) is None
    assert split(99, T(text="x" * 400)) is not None


def test_the_output_alone_is_counted() -> None:
    # Ids and names are not counted: a huge name does not push a small output over.
    block = ToolResultBlock(id="c" * 1000, name="n" * 1000, output=(T(text="abcd"),))
    assert split_tool_result(block, 1, ESTIMATOR) is None


def test_an_empty_output_is_never_split_even_over_a_negative_limit() -> None:
    assert split(-1) is None
    assert split(0) is None


# ---- the cut ------------------------------------------------------------------------------------


def test_a_single_text_block_is_cut_by_the_budget_share() -> None:
    # 12000 bytes = 3000 tokens; a limit of 1000 keeps a third of the characters.
    kept, offloaded = sides(1000, T(text="x" * 12000))
    assert kept == (T(text="x" * 4000),)
    assert offloaded == (T(text="x" * 8000),)


def test_split_keeps_id_name_and_state() -> None:
    cut = split_tool_result(result(T(text="x" * 400), state="error"), 10, ESTIMATOR)
    assert cut is not None
    for side in (cut.kept, cut.offloaded):
        assert (side.id, side.name, side.state) == ("call_1", "read", "error")


def test_a_failed_tool_result_is_truncated_like_any_other() -> None:
    assert split_tool_result(result(T(text="E" * 400), state="error"), 20, ESTIMATOR) is not None


def test_a_data_block_at_the_boundary_moves_whole_to_the_offloaded_side() -> None:
    a, b = T(text="a" * 40), T(text="b" * 40)
    assert sides(50, a, IMAGE, b) == ((a,), (IMAGE, b))


def test_the_prefix_search_is_strict_at_a_tie() -> None:
    # [image] counts exactly 2000: at a limit of 2000 it does not fit, so the image is the
    # boundary and everything goes; one more token and the image stays, with 1 token of text.
    text = T(text="x" * 40)
    assert sides(2000, IMAGE, text) == ((), (IMAGE, text))
    assert sides(2001, IMAGE, text) == ((IMAGE, T(text="x" * 4)), (T(text="x" * 36),))


def test_a_text_boundary_after_an_image_gets_what_is_left() -> None:
    head, tail = T(text="a" * 8), T(text="b" * 400)
    # [head, image] counts 2002, not under 2002: the image is the boundary.
    assert sides(2002, head, IMAGE, tail) == ((head,), (IMAGE, tail))
    # Under 2003 it fits; the text gets 1 token of a 100-token block: 4 of 400 characters.
    assert sides(2003, head, IMAGE, tail) == ((head, IMAGE, T(text="b" * 4)), (T(text="b" * 396),))


def test_the_kept_piece_joins_the_last_kept_text() -> None:
    assert sides(10, T(text="x" * 8), T(text="y" * 400)) == (
        (T(text="x" * 8 + "y" * 32),),
        (T(text="y" * 368),),
    )


def test_the_cut_off_rest_joins_the_first_offloaded_text_or_leads() -> None:
    assert sides(10, T(text="y" * 400), T(text="z" * 40)) == (
        (T(text="y" * 40),),
        (T(text="y" * 360 + "z" * 40),),
    )
    assert sides(10, T(text="y" * 400), IMAGE) == ((T(text="y" * 40),), (T(text="y" * 360), IMAGE))


def test_all_image_results() -> None:
    assert sides(1999, IMAGE) == ((), (IMAGE,))
    assert sides(2000, IMAGE, IMAGE) == ((), (IMAGE, IMAGE))
    assert sides(2001, IMAGE, IMAGE) == ((IMAGE,), (IMAGE,))


def test_limit_zero_keeps_nothing_of_a_counted_text() -> None:
    assert split(0, T(text="a")) is None  # 1 byte is 0 tokens: not over
    assert sides(0, T(text="ab")) == ((), (T(text="ab"),))


def test_quirk_index_0_is_never_tested_so_the_first_block_is_the_default_boundary() -> None:
    # At a limit <= 0 not even the empty prefix is under the limit, yet block 0 is the
    # boundary; its negative share is clamped to zero characters.
    assert sides(-5, T(text="a" * 40), IMAGE) == ((), (T(text="a" * 40), IMAGE))
    assert sides(-5, IMAGE, T(text="a" * 40)) == ((), (IMAGE, T(text="a" * 40)))


def test_quirk_a_zero_token_boundary_text_keeps_nothing_without_budget() -> None:
    # "a" adds 0 tokens (delta 0) and the budget is 0: AgentScope's delta <= 0 rule keeps none.
    assert sides(0, T(text="a"), IMAGE) == ((), (T(text="a"), IMAGE))


def test_quirk_characters_not_bytes() -> None:
    # 100 CJK characters then 100 ASCII: 400 bytes, 100 tokens. Half the budget keeps half the
    # characters, which are the 300 CJK bytes: 75 tokens against a limit of 50.
    kept, _ = sides(50, T(text="中" * 100 + "a" * 100))
    assert kept == (T(text="中" * 100),)
    assert parts_tokens(kept, ESTIMATOR) == 75
    kept, _ = sides(50, T(text="a" * 100 + "中" * 100))
    assert parts_tokens(kept, ESTIMATOR) == 25


def test_quirk_the_float_share_can_keep_one_character_less() -> None:
    # 88 characters are 22 tokens; 15/22*88 is exactly 60, but the float product is 59.99...
    kept, offloaded = sides(15, T(text="x" * 88))
    assert kept == (T(text="x" * 59),)
    assert offloaded == (T(text="x" * 29),)


# ---- the reminder -------------------------------------------------------------------------------


def test_reminder_names_the_path_only_when_given() -> None:
    with_path = truncation_reminder(CTXLAB_TEXTS, "offload/c1.txt")
    without = truncation_reminder(CTXLAB_TEXTS, None)
    assert "offload/c1.txt" in with_path and "offload/c1.txt" not in without
    assert "{" not in without and without.startswith("\n<<<TRUNCATED>>>\n")
    assert truncation_reminder(CTXLAB_TEXTS, "") != without  # an empty path is still a path


def test_reminder_without_a_path_is_the_template_with_nothing_in_place_of_the_sentence() -> None:
    texts = SimpleNamespace(
        tool_result_truncated="[cut{offload_reminder}]", tool_result_offload=" see {path}"
    )
    assert truncation_reminder(texts, None) == "[cut]"
    assert truncation_reminder(texts, "r/1.txt") == "[cut see r/1.txt]"
    assert truncation_reminder(texts, "") == "[cut see ]"


def test_reminder_fills_a_path_with_braces_as_it_is() -> None:
    assert "dir/{offload_reminder}/x" in truncation_reminder(CTXLAB_TEXTS, "dir/{offload_reminder}/x")


def test_reminder_joins_the_last_text_or_follows_as_a_new_text() -> None:
    assert attach_reminder(result(IMAGE, T(text="a")), "!").output == (IMAGE, T(text="a!"))
    assert attach_reminder(result(T(text="a"), IMAGE), "!").output == (T(text="a"), IMAGE, T(text="!"))
    assert attach_reminder(result(), "!").output == (T(text="!"),)


def test_quirk_reminder_exceeds_the_limit() -> None:
    cut = split(1000, T(text="x" * 12000))
    assert cut is not None
    kept = attach_reminder(cut.kept, truncation_reminder(CTXLAB_TEXTS, "offload/c1.txt"))
    assert parts_tokens(cut.kept.output, ESTIMATOR) == 1000
    assert parts_tokens(kept.output, ESTIMATOR) > 1000


# ---- properties ---------------------------------------------------------------------------------

long_texts = st.one_of(
    st.text(alphabet=ALPHABET, max_size=40),
    st.builds(lambda s, n: s * n, st.text(alphabet=ALPHABET, min_size=1, max_size=8), st.integers(1, 150)),
)
parts = st.lists(st.one_of(st.builds(T, text=long_texts), st.just(IMAGE)), max_size=6).map(tuple)
limits = st.integers(-5, 4500)


def _without_empty_texts(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    return tuple(p for p in parts if not (isinstance(p, TextBlock) and not p.text))


@given(parts, limits)
def test_split_is_byte_exact(output: tuple[Part, ...], limit: int) -> None:
    original = result(*output)
    cut = split_tool_result(original, limit, ESTIMATOR)
    if cut is None:
        return
    assert cut.kept.text + cut.offloaded.text == original.text
    rejoined = merge_text_parts(cut.kept.output + cut.offloaded.output)
    assert _without_empty_texts(rejoined) == _without_empty_texts(merge_text_parts(output))
    assert len(rejoined) >= len(merge_text_parts(output)) - 1  # at most the boundary text is gone
    assert cut.offloaded.output  # a split always cuts something off


def test_an_empty_boundary_text_is_dropped_as_agentscope_drops_it() -> None:
    cut = split(0, T(text=""), IMAGE)
    assert cut is not None
    assert cut.kept.output == ()
    assert cut.offloaded.output == (IMAGE,)


@given(parts, limits)
def test_kept_part_is_never_larger_than_the_original(output: tuple[Part, ...], limit: int) -> None:
    cut = split(limit, *output)
    if cut is not None:
        assert parts_tokens(cut.kept.output, ESTIMATOR) <= parts_tokens(output, ESTIMATOR)
        assert cut.kept.tally.nbytes <= result(*output).tally.nbytes
        assert cut.kept.tally.ndata <= result(*output).tally.ndata


@given(parts, limits)
def test_a_result_is_split_exactly_when_it_is_over_the_limit(output: tuple[Part, ...], limit: int) -> None:
    over = bool(output) and parts_tokens(output, ESTIMATOR) > limit
    cut = split(limit, *output)
    if not over:
        assert cut is None
    elif cut is None:  # nothing to cut off: the boundary is an empty text that ends the output
        assert isinstance(output[-1], T) and not output[-1].text


def test_a_result_over_the_limit_only_by_an_empty_text_is_kept_whole_as_agentscope_keeps_it() -> None:
    # Over a negative limit an empty text is "over" at 0 tokens, but its cut leaves nothing to
    # offload, and AgentScope then returns the result as it was.
    assert split(-1, T(text="")) is None
    assert split(-1, T(text="a"), T(text="")) is not None


@given(parts, limits, st.one_of(st.none(), st.text(alphabet=ALPHABET, max_size=20)))
def test_the_reminder_is_the_only_addition(output: tuple[Part, ...], limit: int, path: str | None) -> None:
    cut = split(limit, *output)
    if cut is not None:
        reminder = truncation_reminder(CTXLAB_TEXTS, path)
        kept = attach_reminder(cut.kept, reminder)
        assert kept.text == cut.kept.text + reminder
        assert kept.tally.ndata == cut.kept.tally.ndata


def test_the_boundary_is_found_at_any_distance_from_the_end() -> None:
    # The prefix before the text (one image, 2,000 tokens) is under the limit and the text crosses
    # it: the text is cut, the image before it kept, the image after it offloaded.
    text = T(text="a" * 40)  # 10 tokens: 5 of them fit, so 20 characters
    assert sides(2005, IMAGE, text, IMAGE) == ((IMAGE, T(text="a" * 20)), (T(text="a" * 20), IMAGE))


def test_an_unmerged_text_after_the_cut_takes_the_offloaded_tail_and_nothing_after_it_is_lost() -> None:
    # Outputs are merged before they are split; one that is not still loses nothing.
    a, b = T(text="a" * 40), T(text="b" * 40)
    assert sides(5, a, b, IMAGE) == ((T(text="a" * 20),), (T(text="a" * 20 + "b" * 40), IMAGE))


def test_an_unmerged_text_before_the_cut_takes_the_kept_head_and_nothing_before_it_is_lost() -> None:
    # [image, a] counts 2,010 tokens, under 2,015: b is the boundary and 5 of its 10 tokens fit.
    a, b = T(text="a" * 40), T(text="b" * 40)
    assert sides(2015, IMAGE, a, b) == ((IMAGE, T(text="a" * 40 + "b" * 20)), (T(text="b" * 20),))
