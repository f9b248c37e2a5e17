"""The image cap: which images are found, which are removed, and what replaces them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.images import ImageCap, apply_image_cap, find_images, image_notice, plan_image_cap
from ctxlab.core.messages.blocks import (
    DataBlock,
    HintBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import DATA_BLOCK_TOKENS, AgentScopeEstimator
from ctxlab.texts import CTXLAB_TEXTS, fill
from tests.strategies import messages

ESTIMATOR = AgentScopeEstimator()


def png(source: str = "aGk=", *, name: str | None = None) -> DataBlock:
    kind = "url" if "://" in source else "base64"
    return DataBlock(media_type="image/png", source=source, kind=kind, name=name)


AUDIO = DataBlock(media_type="audio/mpeg", source="aGk=", kind="base64")
PDF = DataBlock(media_type="application/pdf", source="https://x.test/a.pdf")


def capped(
    context: list[Message], max_images: int, urls: list[str | None] | None = None
) -> tuple[Message, ...]:
    cap = plan_image_cap(context, max_images)
    given_urls = urls if urls is not None else [site.own_url for site in cap.removed]
    return apply_image_cap(context, cap, given_urls, CTXLAB_TEXTS)


def removed_notice(name: str | None = None) -> str:
    return fill(CTXLAB_TEXTS.image_removed, name=fill(CTXLAB_TEXTS.image_name, name=name) if name else "")


def offloaded_notice(url: str, name: str | None = None) -> str:
    named = fill(CTXLAB_TEXTS.image_name, name=name) if name else ""
    return fill(CTXLAB_TEXTS.image_offloaded, name=named, url=url)


# ---- finding ------------------------------------------------------------------------------------


def test_images_are_found_everywhere_in_context_order() -> None:
    a, b, c, d, e = (png(f"https://x.test/{i}.png") for i in "abcde")
    context = [
        Message(role="user", blocks=(TextBlock(text="look"), a)),
        Message(
            role="assistant",
            blocks=(
                HintBlock(hint=(TextBlock(text="bg"), b)),
                ToolCallBlock(id="c1", name="shot", input="{}"),
                ToolResultBlock(id="c1", name="shot", output=(TextBlock(text="t"), c, d)),
                e,
            ),
        ),
    ]
    sites = find_images(context)
    assert [s.image for s in sites] == [a, b, c, d, e]
    assert [(s.message, s.block, s.part) for s in sites] == [
        (0, 1, None),
        (1, 0, 1),
        (1, 2, 1),
        (1, 2, 2),
        (1, 3, None),
    ]
    assert [s.role for s in sites] == ["user", "assistant", "assistant", "assistant", "assistant"]


def test_other_data_and_string_hints_are_not_images() -> None:
    context = [
        Message(role="user", blocks=(AUDIO, PDF)),
        Message(
            role="assistant",
            blocks=(
                HintBlock(hint="an image: data:image/png"),
                ToolResultBlock(id="c", name="t", output=(AUDIO,)),
            ),
        ),
    ]
    assert find_images(context) == ()
    assert capped(context, 0) == tuple(context)


# ---- planning -----------------------------------------------------------------------------------


def test_the_oldest_images_over_the_cap_are_removed() -> None:
    images = [png(f"https://x.test/{i}.png") for i in range(4)]
    cap = plan_image_cap([Message(role="user", blocks=tuple(images))], 1)
    assert cap.found == 4
    assert [s.image for s in cap.removed] == images[:3]


def test_at_or_under_the_cap_nothing_is_removed() -> None:
    context = [Message(role="user", blocks=(png(), png()))]
    assert plan_image_cap(context, 2) == ImageCap(found=2, removed=())
    assert capped(context, 2) == tuple(context)


def test_cap_zero_removes_every_image_and_a_negative_cap_too() -> None:
    context = [Message(role="user", blocks=(png(), png()))]
    assert len(plan_image_cap(context, 0).removed) == 2
    assert len(plan_image_cap(context, -3).removed) == 2


# ---- replacing ----------------------------------------------------------------------------------


def test_a_top_level_image_outside_user_messages_becomes_a_sourceless_hint() -> None:
    for role in ("assistant", "system"):
        out = capped([Message(role=role, blocks=(png(),))], 0)  # type: ignore[arg-type]
        assert out[0].blocks == (HintBlock(hint=removed_notice(), source=None),)


def test_a_top_level_image_in_a_user_message_becomes_text() -> None:
    out = capped([Message(role="user", blocks=(TextBlock(text="see"), png()))], 0)
    assert out[0].blocks == (TextBlock(text="see"), TextBlock(text=removed_notice()))


def test_nested_images_become_text_in_place() -> None:
    result = ToolResultBlock(id="c1", name="shot", output=(png(), TextBlock(text="t")), state="error")
    hint = HintBlock(hint=(TextBlock(text="bg"), png()), source="team")
    out = capped([Message(role="assistant", blocks=(result, hint), id="r1", name="bot")], 0)
    new_result, new_hint = out[0].blocks
    assert new_result == ToolResultBlock(
        id="c1", name="shot", output=(TextBlock(text=removed_notice()), TextBlock(text="t")), state="error"
    )
    assert new_hint == HintBlock(hint=(TextBlock(text="bg"), TextBlock(text=removed_notice())), source="team")
    assert (out[0].id, out[0].name, out[0].role) == ("r1", "bot", "assistant")


def test_a_url_image_names_its_own_url_and_a_stored_one_its_workspace_url() -> None:
    own, stored, lost = png("https://x.test/a.png", name="fig"), png("aGk="), png("aGk=", name="")
    cap = plan_image_cap([Message(role="user", blocks=(own, stored, lost))], 0)
    assert [s.own_url for s in cap.removed] == ["https://x.test/a.png", None, None]
    out = apply_image_cap(
        [Message(role="user", blocks=(own, stored, lost))],
        cap,
        [cap.removed[0].own_url, "ws://img/1.png", None],
        CTXLAB_TEXTS,
    )
    assert [b.text for b in out[0].blocks if isinstance(b, TextBlock)] == [
        offloaded_notice("https://x.test/a.png", "fig"),
        offloaded_notice("ws://img/1.png"),
        removed_notice(),
    ]


def test_an_empty_url_counts_as_none() -> None:
    assert (
        image_notice(png(), "", CTXLAB_TEXTS) == image_notice(png(), None, CTXLAB_TEXTS) == removed_notice()
    )


def test_a_name_holding_a_placeholder_is_written_as_it_is() -> None:
    url = "https://x.test/a.png"
    notice = image_notice(png(name="{url}"), url, CTXLAB_TEXTS)
    assert notice == CTXLAB_TEXTS.image_offloaded.replace("{url}", url).replace("{name}", "'{url}' ")


def test_removing_an_image_frees_its_tokens_less_the_notice() -> None:
    context = [Message(role="user", blocks=(png(),))]
    out = capped(context, 0)
    notice = removed_notice()
    assert ESTIMATOR.count(context, ()) == DATA_BLOCK_TOKENS
    assert ESTIMATOR.count(out, ()) == ESTIMATOR.text_tokens(notice)


def test_urls_must_match_the_plan() -> None:
    context = [Message(role="user", blocks=(png(), png()))]
    cap = plan_image_cap(context, 0)
    with pytest.raises(ValueError, match="got 1 urls for 2 removed images"):
        apply_image_cap(context, cap, [None], CTXLAB_TEXTS)


def test_a_plan_applies_only_to_its_own_context() -> None:
    cap = plan_image_cap([Message(role="user", blocks=(png(),))], 0)
    with pytest.raises(
        ValueError, match=r"context\[0\]\.blocks\[0\]: the block there is not the planned image"
    ):
        apply_image_cap([Message(role="user", blocks=(TextBlock(text="x"),))], cap, [None], CTXLAB_TEXTS)
    with pytest.raises(ValueError, match="no such message"):
        apply_image_cap([], cap, [None], CTXLAB_TEXTS)
    nested = plan_image_cap([Message(role="assistant", blocks=(HintBlock(hint=(png(),)),))], 0)
    with pytest.raises(ValueError, match=r"blocks\[0\]\.parts\[0\]: the part there"):
        apply_image_cap(
            [Message(role="assistant", blocks=(HintBlock(hint=(AUDIO,)),))], nested, [None], CTXLAB_TEXTS
        )
    with pytest.raises(ValueError, match="holds no parts"):
        apply_image_cap(
            [Message(role="assistant", blocks=(TextBlock(text="x"),))], nested, [None], CTXLAB_TEXTS
        )


# ---- properties ---------------------------------------------------------------------------------

caps = st.integers(-1, 6)


@given(st.lists(messages, max_size=5), caps)
def test_the_cap_is_idempotent(context: list[Message], max_images: int) -> None:
    once = capped(context, max_images)
    assert plan_image_cap(once, max_images).removed == ()
    assert capped(list(once), max_images) == once
    assert len(find_images(once)) == min(len(find_images(context)), max(0, max_images))


@given(st.lists(messages, max_size=5), caps)
def test_only_removed_images_change(context: list[Message], max_images: int) -> None:
    cap = plan_image_cap(context, max_images)
    out = apply_image_cap(context, cap, [None] * len(cap.removed), CTXLAB_TEXTS)
    touched = {(s.message, s.block) for s in cap.removed}
    assert len(out) == len(context)
    for i, (before, after) in enumerate(zip(context, out, strict=True)):
        assert (before.role, before.id, before.name, len(before.blocks)) == (
            after.role,
            after.id,
            after.name,
            len(after.blocks),
        )
        for j, (old, new) in enumerate(zip(before.blocks, after.blocks, strict=True)):
            assert (old == new) == ((i, j) not in touched)
    kept_images = [s.image for s in find_images(context)][len(cap.removed) :]
    assert [s.image for s in find_images(out)] == kept_images
