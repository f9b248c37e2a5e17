"""The image cap equals agentscope 2.0.11's `_limit_context_images` on the real agent."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.images import apply_image_cap, plan_image_cap
from ctxlab.core.messages.blocks import Block, DataBlock, HintBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.texts import agentscope_texts
from tests.parity.agent import RecordingOffloader, minimal_agent, normalized, run
from tests.parity.bridge import as_block, as_data, as_msg

# URLs as pydantic prints them back (AgentScope reads a URL source through `str(AnyUrl)`).
URLS = ["https://example.com/a.png", "workspace://img/b.png"]


@st.composite
def data(draw: st.DrawFn) -> DataBlock:
    media_type = draw(st.sampled_from(["image/png", "image/jpeg", "audio/mpeg", "application/pdf"]))
    name = draw(st.sampled_from([None, "", "fig", "{url} {name}", "图"]))
    if draw(st.booleans()):
        return DataBlock(media_type=media_type, source=draw(st.sampled_from(URLS)), kind="url", name=name)
    return DataBlock(media_type=media_type, source="aGVsbG8=", kind="base64", name=name)


part_lists = st.lists(
    st.one_of(st.builds(TextBlock, text=st.sampled_from(["t", "中"])), data()), max_size=3
).map(tuple)
blocks: st.SearchStrategy[Block] = st.one_of(
    data(),
    st.builds(TextBlock, text=st.just("x")),
    st.builds(HintBlock, hint=st.one_of(st.just("h"), part_lists), source=st.sampled_from([None, "team"])),
    st.builds(ToolResultBlock, id=st.just("c1"), name=st.just("shot"), output=part_lists),
)
contexts = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["user", "assistant", "system"]),
        blocks=st.lists(blocks, max_size=4).map(tuple),
    ),
    max_size=4,
)
offloaders = st.one_of(
    st.none(),
    st.lists(
        st.sampled_from([None, "workspace://stored/1.png", "https://cdn.example.com/x.png"]), max_size=6
    ),
)


@functools.cache
def image_agent() -> Any:
    return minimal_agent()


def agentscope_cap(context: list[Message], max_images: int, offloader: Any) -> list[Any]:
    from agentscope.agent import ContextConfig

    agent = image_agent()
    agent.offloader = offloader
    agent.state.context = [as_msg(m) for m in context]
    run(agent._limit_context_images(ContextConfig(max_image_num=max_images)))
    return [normalized(m.content) for m in agent.state.context]


def ours(
    context: list[Message], max_images: int, image_urls: list[str | None] | None
) -> tuple[list[Any], list[DataBlock]]:
    cap = plan_image_cap(context, max_images)
    stored = [site.image for site in cap.removed if site.own_url is None] if image_urls is not None else []
    workspace = iter(image_urls or [])
    urls = [
        site.own_url
        if site.own_url is not None
        else (next(workspace, None) if image_urls is not None else None)
        for site in cap.removed
    ]
    out = apply_image_cap(context, cap, urls, agentscope_texts())
    return [[normalized(as_block(b)) for b in m.blocks] for m in out], stored


@given(contexts, st.integers(0, 4), offloaders)
def test_image_cap_equals_agentscope(
    context: list[Message], max_images: int, image_urls: list[str | None] | None
) -> None:
    offloader = None if image_urls is None else RecordingOffloader(image_urls)
    expected, stored = ours(context, max_images, image_urls)
    assert expected == agentscope_cap(context, max_images, offloader)
    if offloader is not None:
        assert [normalized(b) for b in offloader.images] == [normalized(as_data(b)) for b in stored]


def test_quirk_user_images_become_text_and_others_sourceless_hints() -> None:
    image = DataBlock(media_type="image/png", source="aGVsbG8=", kind="base64")
    context = [Message(role=role, blocks=(image,)) for role in ("user", "assistant", "system")]
    theirs = agentscope_cap(context, 0, None)
    assert [blocks[0]["type"] for blocks in theirs] == ["text", "hint", "hint"]
    assert theirs[1][0]["source"] is theirs[2][0]["source"] is None
    assert ours(context, 0, None)[0] == theirs


def test_quirk_images_in_hint_tuples_and_tool_results_count() -> None:
    image = DataBlock(media_type="image/png", source="https://example.com/a.png", kind="url", name="fig")
    parts: tuple[Part, ...] = (TextBlock(text="t"), image)
    context = [
        Message(
            role="assistant",
            blocks=(HintBlock(hint=parts), ToolResultBlock(id="c", name="t", output=parts), image),
        )
    ]
    theirs = agentscope_cap(context, 1, None)
    assert theirs[0][0]["hint"][1]["type"] == theirs[0][1]["output"][1]["type"] == "text"
    assert theirs[0][2]["type"] == "data"  # the newest one stays
    assert ours(context, 1, None)[0] == theirs
