"""Real BPE token counters (o200k, cl100k) behind the `TokenCounter` protocol.

An edge module: it needs the optional `bpe-openai` package (`pip install 'ctxlab[tokenizers]'`).

Invariants:
- `BpeCounter` is additive like every counter: a block's size is the tokens of its text pieces
  counted one piece at a time (a provider tokenizes each message part on its own); data blocks
  cost `data_block_tokens` each; the tool list is counted as its JSON text.
- Per-message formatting overhead is not counted, the same convention as the byte estimator, so
  the two differ only in how they turn text into tokens.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxlab.core.messages.blocks import Block, Tally, data_parts, text_pieces
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import DATA_BLOCK_TOKENS, measure_all
from ctxlab.core.messages.tools import ToolSchema, tools_json

EncodingName = Literal["o200k_base", "cl100k_base"]


@functools.cache
def _encoding(name: str) -> Any:
    # The package reads its data through a deprecated importlib API, at import and on loading.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import bpe_openai
        except ModuleNotFoundError as missing:
            raise ModuleNotFoundError(
                "real tokenizers need the bpe-openai package; install the 'tokenizers' extra "
                "(pip install 'ctxlab[tokenizers]')"
            ) from missing
        return bpe_openai.get_encoding(name)


@dataclass(frozen=True, slots=True)
class BpeCounter:
    """Counts with a real OpenAI BPE encoding. `Tally.nbytes` carries tokens, not bytes."""

    encoding: EncodingName = "o200k_base"
    data_block_tokens: int = DATA_BLOCK_TOKENS
    _cache: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def text_tokens(self, text: str) -> int:
        """Tokens of one text piece (memoised: runs resend the same pieces many times)."""
        cached = self._cache.get(text)
        if cached is None:
            cached = len(_encoding(self.encoding).encode_ordinary(text))
            self._cache[text] = cached
        return cached

    def measure(self, block: Block) -> Tally:
        """Tokens of the block's text pieces, and its data blocks."""
        tokens = sum(self.text_tokens(piece) for piece in text_pieces(block))
        return Tally(tokens, len(data_parts(block)))

    def measure_message(self, message: Message) -> Tally:
        """The sum of the message's block sizes."""
        total = Tally(0, 0)
        for block in message.blocks:
            total = total + self.measure(block)
        return total

    def total(self, tally: Tally, tools: tuple[ToolSchema, ...]) -> int:
        """Tokens of content of size `tally` sent with `tools`."""
        tool_tokens = self.text_tokens(tools_json(tools)) if tools else 0
        return tally.nbytes + tool_tokens + tally.ndata * self.data_block_tokens

    def count(self, messages: Sequence[Message], tools: tuple[ToolSchema, ...]) -> int:
        """Tokens of `messages` sent with `tools`."""
        return self.total(measure_all(self, messages), tools)
