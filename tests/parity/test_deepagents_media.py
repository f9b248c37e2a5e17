"""The `deepagents` preset's media offload against deepagents 0.7.32: the inline media of the span
it summarizes, named in the summary prompt by the paths deepagents saves them at.

Two levels: the lab's `offloaded_media` against the package's own `_offload_inline_media` on
generated spans (user, tool and AI messages of texts, data-URL and URL images, files, payloads
that do not decode; the summary transcript and LangChain's count of the rewritten span, which the
trim reads), and the preset against the real `create_deep_agent` on scripts whose user messages
carry images, in the summarized span and in the kept part, call for call."""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import re
from collections.abc import Callable
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
from deepagents.backends.protocol import FileUploadResponse
from deepagents.middleware.summarization import SummarizationMiddleware
from hypothesis import event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import get_buffer_string
from langchain_core.messages.utils import count_tokens_approximately

from ctxlab.core.messages.blocks import DataBlock, Part, TextBlock
from ctxlab.core.world.script import Script
from ctxlab.presets.deepagents.media import MEDIA_DIR, offloaded_media
from ctxlab.presets.lc_count import count_tokens
from ctxlab.presets.lc_messages import LCCall, LCMessage, xml_transcript
from ctxlab.texts.deepagents import deepagents_texts
from tests.parity.da_driver import DAConfig
from tests.parity.lc_bridge import to_langchain
from tests.parity.test_deepagents_parity import compare, da_scripts
from tests.parity.workloads import retrieval_loop

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PAYLOADS = [PNG, base64.b64encode(b"hello").decode(), base64.b64encode(bytes(range(40))).decode()]
IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/*"]


def data_url(mime: str, payload: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{payload}"}}


parts = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["look <here> & there", "图", ""])),
    st.builds(data_url, st.sampled_from(IMAGE_TYPES), st.sampled_from(PAYLOADS)),
    st.sampled_from(
        [
            data_url("image/png", "aGVsbG8"),  # bad padding: does not decode
            {"type": "image_url", "image_url": {"url": "data:image/svg+xml,%3Csvg%2F%3E"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64"}},  # no payload
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            {"type": "file", "file": {"file_data": f"data:audio/mpeg;base64,{PAYLOADS[1]}"}},
            {"type": "file", "file": {"file_data": "data:text/plain,hi", "media_type": "text/plain"}},
            {"type": "file", "file": {"file_data": "https://example.com/a.pdf"}},
        ]
    ),
)


@st.composite
def messages(draw: st.DrawFn, n: int) -> LCMessage:
    kind = draw(st.sampled_from(["human", "tool", "ai"]))
    content: str | tuple[dict[str, Any], ...] = (
        draw(st.sampled_from(["plain", ""]))
        if draw(st.integers(0, 4)) == 0
        else tuple(draw(st.lists(parts, max_size=4)))
    )
    if kind == "ai":
        calls = tuple(
            LCCall(name="retrieve", args=f'{{"query": "q{n}{k}"}}', id=f"c{n}{k}")
            for k in range(draw(st.integers(0, 2)))
        )
        return LCMessage(kind="ai", content=content, tool_calls=calls)
    if kind == "tool":
        return LCMessage(kind="tool", content=content, tool_call_id=f"c{n}", name="retrieve")
    return LCMessage(kind="human", content=content)


@st.composite
def spans(draw: st.DrawFn) -> tuple[LCMessage, ...]:
    return tuple(draw(messages(n)) for n in range(draw(st.integers(1, 5))))


class Uploads:
    """A backend that keeps every file it is given."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        self.files.update(files)
        return [FileUploadResponse(path=path, error=None) for path, _ in files]


def theirs(span: tuple[LCMessage, ...]) -> tuple[list[Any], Uploads]:
    backend = Uploads()
    middleware = SimpleNamespace(_media_prefix=MEDIA_DIR)  # all the method reads of its instance
    rewritten, _ = SummarizationMiddleware._offload_inline_media(
        middleware,  # type: ignore[arg-type]
        backend,  # type: ignore[arg-type]
        [to_langchain(m) for m in span],
    )
    return rewritten, backend


@settings(max_examples=300, deadline=None)
@given(spans())
def test_the_span_is_rendered_and_counted_as_offload_inline_media_leaves_it(
    span: tuple[LCMessage, ...],
) -> None:
    rewritten, backend = theirs(span)
    ours = offloaded_media(span, deepagents_texts())
    assert xml_transcript(ours) == get_buffer_string(rewritten, format="xml")
    assert count_tokens(ours) == count_tokens_approximately(rewritten)
    named = set(re.findall(rf"{MEDIA_DIR}/[0-9a-f]{{16}}\.\w+", xml_transcript(ours)))
    assert named == set(backend.files)  # every file saved is named, and only those


def image(payload: str = PNG, mime: str = "image/png") -> DataBlock:
    return DataBlock(media_type=mime, source=payload, kind="base64")


def with_users(script: Script, users: list[tuple[Part, ...]]) -> Script:
    turns = tuple(replace(t, user=u) for t, u in zip(script.turns, users, strict=True))
    return replace(script, turns=turns)


def images_script() -> Script:
    """Three turns: a user image and a URL image, the same image again with another, then text."""
    base = retrieval_loop([300, 2000, 300], turns=3)
    second = base64.b64encode(b"\x89PNG second").decode()
    return with_users(
        base,
        [
            (
                TextBlock(text="Is this cloud over Paris?"),
                image(),
                DataBlock(media_type="image/png", source="https://example.com/r.png"),
            ),
            (TextBlock(text="And these?"), image(), image(second, "image/jpeg")),
            (TextBlock(text="Thanks."),),
        ],
    )


SUMMARIZING = DAConfig(
    window=16_000,
    defaults=False,
    trigger=("messages", 5),
    keep=("messages", 2),
    truncate_args_settings=None,
)


def test_a_user_image_in_the_summarized_span_is_named_by_its_digest() -> None:
    ours, _ = compare(images_script(), SUMMARIZING)
    digest = hashlib.sha256(base64.b64decode(PNG)).hexdigest()[:16]
    prompts = [c.messages[0].content for c in ours.calls if c.kind == "summary"]
    assert prompts and all(isinstance(p, str) for p in prompts)
    assert f'<image url="{MEDIA_DIR}/{digest}.png" />' in prompts[0]
    assert '<image url="https://example.com/r.png" />' in prompts[0]
    assert all("base64" not in str(p) for p in prompts)


def test_several_images_one_repeated_are_saved_once_per_content_and_kept_inline_in_the_tail() -> None:
    config = replace(SUMMARIZING, keep=("messages", 6), trim_tokens_to_summarize=300)
    ours, _ = compare(images_script(), config)
    kept = [
        m for c in ours.calls if c.kind == "reasoning" for m in c.messages if not isinstance(m.content, str)
    ]
    assert any("base64," in str(b) for m in kept for b in m.content)  # the kept part keeps the data


@st.composite
def image_cases(draw: st.DrawFn) -> tuple[Script, DAConfig]:
    script = draw(da_scripts(16_000))
    users = []
    for turn in script.turns:
        extra = draw(
            st.lists(st.builds(image, st.sampled_from(PAYLOADS), st.sampled_from(IMAGE_TYPES)), max_size=3)
        )
        users.append((*turn.user, *extra))
    config = DAConfig(
        window=16_000,
        defaults=False,
        trigger=("messages", draw(st.integers(3, 10))),
        keep=("messages", draw(st.integers(1, 6))),
        trim_tokens_to_summarize=draw(st.sampled_from([None, 150, 1000])),
        truncate_args_settings=None,
        tool_token_limit_before_evict=draw(st.sampled_from([20_000, 100])),
        human_message_token_limit_before_evict=draw(st.sampled_from([50_000, 40])),
    )
    return with_users(script, users), config


@settings(max_examples=20, deadline=None)
@given(image_cases())
def test_user_images_match_create_deep_agent(case: tuple[Script, DAConfig]) -> None:
    ours, _ = compare(*case)
    summaries = [str(c.messages[0].content) for c in ours.calls if c.kind == "summary"]
    event(f"media named in a summary: {any(MEDIA_DIR in s for s in summaries)}")


@pytest.mark.parametrize(
    ("machine", "named"),
    [
        pytest.param(lambda mime, strict=True: None, "bin", id="tables-knowing-no-type"),
        pytest.param(lambda mime, strict=True: ".img", "img", id="tables-naming-otherwise"),
    ],
)
def test_media_are_named_by_the_labs_table_whatever_the_machines_tables_say(
    monkeypatch: pytest.MonkeyPatch, machine: Callable[..., str | None], named: str
) -> None:
    """Row D26's declared deviation: deepagents names a medium by the machine's MIME tables (a
    WebP image is `.bin` where Python 3.11 reads no system table); the lab by its fixed table."""
    span = (LCMessage(kind="human", content=(data_url("image/webp", PNG),)),)
    monkeypatch.setattr(mimetypes, "guess_extension", machine)
    _, backend = theirs(span)
    digest = hashlib.sha256(base64.b64decode(PNG)).hexdigest()[:16]
    assert set(backend.files) == {f"{MEDIA_DIR}/{digest}.{named}"}
    assert f'<image url="{MEDIA_DIR}/{digest}.webp" />' in xml_transcript(
        offloaded_media(span, deepagents_texts())
    )
