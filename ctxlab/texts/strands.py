"""strands-agents 1.62's own strings, read from the installed package at run time (`texts: strands`).

`StrandsTexts` are the strings the strands conversation managers send: the summarizer's system
prompt and the user request that closes a summary request; and the notice its OpenAI provider
puts in a tool message in place of the images it moves to a user message. `CTXLAB_STRANDS_TEXTS` is the lab's
own wording of them (used without `texts: strands`).

Nothing of the package is stored in this project: the system prompt is the package's constant;
the closing request lives inside the package's summary function, so it is read by calling that
function with a stand-in model that keeps what it is asked and answers nothing; the notice, by
having the provider split a stand-in tool message holding an image.

Importing this module imports no other package; `strands_texts()` imports strands and raises
ModuleNotFoundError when it is not installed (the `peers` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class StrandsTexts:
    """The strings a strands summary request carries (`texts: strands` reads the package's)."""

    summary_system_prompt: str
    summary_request: str
    image_notice: str


CTXLAB_STRANDS_TEXTS = StrandsTexts(
    summary_system_prompt=(
        "You write the notes that replace the older part of a conversation. Write them as terse "
        "bullet points in the third person: the topics and questions raised, every tool run and "
        "what it returned, code and technical facts, and what was learned. Do not reply to anyone "
        "and do not talk about which tools exist."
    ),
    summary_request="Write the notes for the conversation above.",
    image_notice="The tool returned an image; it is in the next user message.",
)


class _Asked(Exception):
    """Raised by the stand-in model once it has kept its request."""


@dataclass
class _StandIn:
    """A model that keeps the messages and system prompt it is streamed, then stops the call."""

    messages: list[Any] | None = None
    system_prompt: str | None = None

    def stream(self, messages: list[Any], tool_specs: object = None, system_prompt: str | None = None) -> Any:
        self.messages, self.system_prompt = list(messages), system_prompt
        return self._nothing()

    async def _nothing(self) -> AsyncIterator[dict[str, Any]]:
        if self.messages is not None:
            raise _Asked
        yield {}  # pragma: no cover (never reached: the request is always kept first)


@functools.cache
def strands_texts() -> StrandsTexts:
    """The summarizer's system prompt and closing request of the installed strands-agents."""
    from strands.agent.conversation_manager.compression import context_compression

    model = _StandIn()
    with contextlib.suppress(_Asked):
        asyncio.run(context_compression.generate_summary([], model))  # type: ignore[arg-type]
    assert model.messages is not None and model.system_prompt is not None
    (closing,) = model.messages
    (block,) = closing["content"]
    return StrandsTexts(
        summary_system_prompt=model.system_prompt, summary_request=block["text"], image_notice=_image_notice()
    )


def _image_notice() -> str:
    """The text the OpenAI provider leaves in a tool message whose image it moves out (its
    warning about the move is silenced)."""
    from strands.models import openai

    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,"}}
    logger = logging.getLogger(openai.__name__)
    disabled, logger.disabled = logger.disabled, True
    try:
        tool, _ = openai.OpenAIModel._split_tool_message_images(
            {"role": "tool", "tool_call_id": "stand-in", "content": [image]}
        )
    finally:
        logger.disabled = disabled
    (notice,) = tool["content"]
    return str(notice["text"])
