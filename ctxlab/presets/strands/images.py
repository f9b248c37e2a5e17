"""Images as strands-agents 1.62's OpenAI provider sends them, and a cut result's texts.

strands keeps a user's image and a tool's image as `image` content blocks (a format and the
image's bytes). Its OpenAI provider (`models/openai.py`) sends them so:
- every image as its bytes base64 encoded anew (`format_request_message_content`);
- a tool result's adjacent texts joined with a newline, the result a string when all it holds is
  text (`format_request_tool_message`);
- a result holding images as a list: its texts and then a notice that the image follows, the
  images themselves in a user message of their own after the tool messages of the strands
  message (one user message per such result, in order: `_split_tool_message_images`).

A cut result (`ctxlab.presets.strands.window.cut_result`) keeps its parts as strands keeps its
items (each text cut on its own, an image become a text), so only the request joins them.

`sent_images` gives a request in that form: a run of stored results is one strands message;
each result's images become a hint of parts after the run (a user message in the OpenAI view).
The notice is the text set's (`StrandsTexts.image_notice`; the package's under `texts: strands`).

Invariants: request-only (the stored context keeps every result's images, which the sliding
window's cut reads); a message that needs no change is the same object, and a context holding no
data and no cut image (`needs_form`, from the state's tally and memo) is sent as it is at no cost;
no tool message is dropped.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import Block, DataBlock, HintBlock, Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.mapped import MappedAlong
from ctxlab.core.messages.message import Message
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, memo
from ctxlab.presets.steps import Edit, Step

IMAGES_CUT = "strands.images_cut"
"""The state's memo set once a cut made an image of a result a text: that result then holds
several texts and no data, which the provider joins."""


def needs_form(state: EpisodeState) -> bool:
    """Whether a request of the state may be sent otherwise than stored: its context holds data
    (the tally counts it), or a cut made an image a text. False for nearly every context."""
    return state.context_tally.ndata > 0 or memo(state, IMAGES_CUT, False)


def sent_image(part: Part) -> Part:
    """A base64 image with its bytes encoded anew (the same object when that changes nothing).

    >>> sent_image(DataBlock(media_type="image/png", source="iVBO\\nRw==", kind="base64")).source
    'iVBORw=='
    """
    if not isinstance(part, DataBlock) or part.kind != "base64" or not part.is_image:
        return part
    fresh = base64.b64encode(base64.b64decode(part.source)).decode("ascii")
    return (
        part if fresh == part.source else DataBlock(media_type=part.media_type, source=fresh, kind="base64")
    )


def sent_result(result: ToolResultBlock, notice: str) -> tuple[ToolResultBlock, tuple[Part, ...]]:
    """The result as the provider's tool message, and the images that follow it.

    >>> r = ToolResultBlock(id="c", name="t", output=(TextBlock(text="a"), TextBlock(text="b")))
    >>> sent_result(r, "N")[0].output
    (TextBlock(text='a\\nb'),)
    """
    texts: list[str] = []
    images: list[Part] = []
    adjacent = False
    for part in result.output:
        if isinstance(part, TextBlock):
            if adjacent:
                texts[-1] += "\n" + part.text
            else:
                texts.append(part.text)
            adjacent = True
            continue
        images.append(sent_image(part))
        adjacent = False
    if not images:
        if len(result.output) <= 1:
            return result, ()
        output: tuple[Part, ...] = (TextBlock(text=texts[0]),)
        return ToolResultBlock(id=result.id, name=result.name, output=output, state=result.state), ()
    listed = (*(TextBlock(text=t) for t in texts), TextBlock(text=notice))
    sent = ToolResultBlock(id=result.id, name=result.name, output=listed, state=result.state, listed=True)
    return sent, tuple(images)


def _sent_message_of(message: Message, notice: str) -> Message:
    blocks: list[Block] = []
    moved: list[Block] = []  # the images of the run of results being read, one hint per result
    changed = False
    for block in message.blocks:
        if moved and not isinstance(block, ToolResultBlock):
            blocks += moved
            moved = []
        sent: Block = block
        if isinstance(block, ToolResultBlock):
            sent, images = sent_result(block, notice)
            if images:
                moved.append(HintBlock(hint=images))
        elif isinstance(block, DataBlock):
            sent = sent_image(block)
        changed = changed or sent is not block
        blocks.append(sent)
    blocks += moved
    return message.with_blocks(tuple(blocks)) if changed else message


sent_images = MappedAlong[Message](_sent_message_of)
"""`sent_images(messages, notice)`: `messages` as strands' OpenAI provider sends them (see the
module docstring); `messages` itself when nothing changes."""


def sent_request(messages: tuple[Message, ...], state: EpisodeState, notice: str) -> tuple[Message, ...]:
    """`sent_images` of a request of `state`, at no cost when the state `needs_form` not."""
    return sent_images(messages, notice) if needs_form(state) else messages


@dataclass(frozen=True, slots=True)
class SentImages(Step):
    """Images and cut results as the OpenAI provider sends them, the last edit of every request
    (request-only)."""

    notice: str
    key: ClassVar[str] = "strands_images"
    event: ClassVar[EventKind] = EventKind.CLEARED
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request in the provider's form (the request itself when it `needs_form` not)."""
        return Edit(messages=sent_request(messages, state, self.notice))
