"""`max_image_num`: the oldest images over the cap are replaced by a short text notice.

AgentScope 2.0.11 enforces the cap before every reasoning step. It is two steps here so that the
engine can store the images between them without core doing I/O:

    cap = plan_image_cap(context, max_images)
    urls = tuple(site.own_url if site.own_url is not None else store(site.image) for site in cap.removed)
    context = apply_image_cap(context, cap, urls, texts)

where `store` is the engine's: the URL a workspace saved the image at, or None (no workspace, or
it gave no URL). A URL image is never stored, as in AgentScope, even when its URL is empty.

Invariants:
- Images are the data blocks whose media type starts with `image/`, found in context order: at the
  top level of any message (user messages too), inside tool-result outputs and inside part-tuple
  hints. The summary is not part of the context and is never searched; audio, pdf and other data
  are never touched.
- The oldest `found - max_images` images are removed; nothing else changes. Each becomes a notice
  naming the URL it can be found at, or saying it was removed when there is none: a
  `HintBlock(source=None)` for a top-level image in a non-user message, a `TextBlock` elsewhere
  (user messages hold only text and data, tool results and hint tuples only parts).
- Applying a plan to its own context leaves at most `max_images` images (none when `max_images`
  is zero or negative), so planning again on the result removes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, assert_never

from ctxlab.core.messages.blocks import (
    Block,
    DataBlock,
    HintBlock,
    Part,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.message import Message, Role
from ctxlab.core.messages.templates import fill


class ImageTexts(Protocol):
    """The texts an image notice is made of (`ctxlab.texts.Texts` has them)."""

    @property
    def image_name(self) -> str:
        """The image's name as written in a notice, with a `{name}` placeholder."""
        ...

    @property
    def image_offloaded(self) -> str:
        """The notice for an image found at a URL: `{name}` (the filled name or "") and `{url}`."""
        ...

    @property
    def image_removed(self) -> str:
        """The notice for an image with no URL: `{name}` (the filled name or "")."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageSite:
    """Where one image sits: `context[message].blocks[block]`, then `[part]` of the tool-result
    output or hint tuple holding it (None for a top-level image)."""

    message: int
    block: int
    part: int | None
    image: DataBlock
    role: Role

    @property
    def own_url(self) -> str | None:
        """The image's own URL when its source is one; otherwise a workspace must give one."""
        return self.image.source if self.image.kind == "url" else None

    @property
    def notice_is_hint(self) -> bool:
        """True when the notice replacing this image is a hint block, not a text part."""
        return self.part is None and self.role != "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageCap:
    """The plan for one context: how many images it holds and which, oldest first, are removed."""

    found: int
    removed: tuple[ImageSite, ...]


def find_images(context: Sequence[Message]) -> tuple[ImageSite, ...]:
    """Every image of `context`, in context order.

    >>> img = DataBlock(media_type="image/png", source="aGk=", kind="base64")
    >>> hint = HintBlock(hint=(TextBlock(text="see"), img))
    >>> [(s.message, s.block, s.part) for s in find_images([Message(role="assistant", blocks=(img, hint))])]
    [(0, 0, None), (0, 1, 1)]
    """
    return tuple(site for index, message in enumerate(context) for site in _message_images(index, message))


class _Found(NamedTuple):
    part: int | None
    image: DataBlock


def _message_images(index: int, message: Message) -> Iterator[ImageSite]:
    for position, block in enumerate(message.blocks):
        for found in _block_images(block):
            yield ImageSite(
                message=index, block=position, part=found.part, image=found.image, role=message.role
            )


def _block_images(block: Block) -> Iterator[_Found]:
    match block:
        case DataBlock():
            if block.is_image:
                yield _Found(part=None, image=block)
        case ToolResultBlock(output=parts) | HintBlock(hint=tuple() as parts):
            for part, sub in enumerate(parts):
                if isinstance(sub, DataBlock) and sub.is_image:
                    yield _Found(part=part, image=sub)
        case HintBlock() | TextBlock() | ThinkingBlock() | ToolCallBlock():
            return
        case _:
            assert_never(block)


def plan_image_cap(context: Sequence[Message], max_images: int) -> ImageCap:
    """The images of `context` to remove so that at most `max_images` remain, oldest first.

    A negative `max_images` removes every image, like zero.

    >>> img = DataBlock(media_type="image/png", source="https://x.test/a.png")
    >>> cap = plan_image_cap([Message(role="user", blocks=(img, img, img))], 1)
    >>> cap.found, [s.block for s in cap.removed]
    (3, [0, 1])
    """
    sites = find_images(context)
    excess = len(sites) - max_images
    return ImageCap(found=len(sites), removed=sites[:excess] if excess > 0 else ())


def image_notice(image: DataBlock, url: str | None, texts: ImageTexts) -> str:
    """The text that replaces `image`: where it can be found, or that it was removed.

    An empty name or URL counts as none.

    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(image_name="'{name}' ", image_offloaded="[{name}at {url}]",
    ...                     image_removed="[{name}gone]")
    >>> img = DataBlock(media_type="image/png", source="aGk=", kind="base64", name="fig")
    >>> image_notice(img, "ws://1", t), image_notice(img, None, t)
    ("['fig' at ws://1]", "['fig' gone]")
    """
    name = fill(texts.image_name, name=image.name) if image.name else ""
    if url:
        return fill(texts.image_offloaded, name=name, url=url)
    return fill(texts.image_removed, name=name)


def apply_image_cap(
    context: Sequence[Message], cap: ImageCap, urls: Sequence[str | None], texts: ImageTexts
) -> tuple[Message, ...]:
    """`context` with every image of `cap.removed` replaced by its notice.

    Args:
        context: The context `cap` was planned on.
        cap: The plan.
        urls: For each removed image, in order, the URL it can be found at: its own URL when its
            source is one, else the URL a workspace stored it at, else None.
        texts: The text set.

    Raises:
        ValueError: `urls` does not match `cap.removed`, or the context is not the one planned on.
    """
    if len(urls) != len(cap.removed):
        raise ValueError(
            f"apply_image_cap: got {len(urls)} urls for {len(cap.removed)} removed images; give one "
            "url (or None) per entry of cap.removed, in order"
        )
    messages = list(context)
    for site, url in zip(cap.removed, urls, strict=True):
        if site.message >= len(messages):
            raise _mismatch(site, "no such message")
        messages[site.message] = _replace_site(messages[site.message], site, url, texts)
    return tuple(messages)


def _replace_site(message: Message, site: ImageSite, url: str | None, texts: ImageTexts) -> Message:
    blocks = message.blocks
    if site.block >= len(blocks):
        raise _mismatch(site, "no such block")
    notice = image_notice(site.image, url, texts)
    new: Block
    if site.part is not None:
        new = _replace_part(blocks[site.block], site, TextBlock(text=notice))
    elif blocks[site.block] != site.image:
        raise _mismatch(site, "the block there is not the planned image")
    elif site.notice_is_hint:
        new = HintBlock(hint=notice, source=None)
    else:
        new = TextBlock(text=notice)
    return message.with_blocks((*blocks[: site.block], new, *blocks[site.block + 1 :]))


def _replace_part(block: Block, site: ImageSite, notice: TextBlock) -> Block:
    assert site.part is not None
    match block:
        case ToolResultBlock(output=parts):
            output = _replaced(parts, site, notice)
            return ToolResultBlock(id=block.id, name=block.name, output=output, state=block.state)
        case HintBlock(hint=tuple() as parts):
            return HintBlock(hint=_replaced(parts, site, notice), source=block.source)
        case HintBlock() | TextBlock() | ThinkingBlock() | ToolCallBlock() | DataBlock():
            raise _mismatch(site, "the block there holds no parts")
        case _:
            assert_never(block)


def _replaced(parts: tuple[Part, ...], site: ImageSite, notice: TextBlock) -> tuple[Part, ...]:
    assert site.part is not None
    if site.part >= len(parts) or parts[site.part] != site.image:
        raise _mismatch(site, "the part there is not the planned image")
    return (*parts[: site.part], notice, *parts[site.part + 1 :])


def _mismatch(site: ImageSite, what: str) -> ValueError:
    where = f"context[{site.message}].blocks[{site.block}]"
    if site.part is not None:
        where += f".parts[{site.part}]"
    return ValueError(f"apply_image_cap: {where}: {what}; apply a plan only to the context it was planned on")
