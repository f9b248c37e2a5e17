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
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxlab.core.messages.blocks import Block, Tally, data_parts, text_pieces
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import DATA_BLOCK_TOKENS, measure_all
from ctxlab.core.messages.tools import ToolSchema, tools_json

EncodingName = Literal["o200k_base", "cl100k_base"]
BINDINGS = "bpe_openai._bindings"
MISSING = (
    "real tokenizers need the bpe-openai package; install the 'tokenizers' extra "
    "(pip install 'ctxlab[tokenizers]')"
)


def bpe_tokens(encoding: str, text: str) -> int:
    """Tokens of `text` in bpe-openai's `encoding`: `len(get_encoding(encoding).encode_ordinary(text))`.

    Text the UTF-8 codec refuses (a lone surrogate) is first mended as the package mends it. A
    text of any length is counted (the package's own wrapper refuses a million characters or
    more than its chunk limit of tokens in one call).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return len(bpe_encoder(encoding).encode(text)) if text else 0


@functools.cache
def bpe_encoder(encoding: str) -> Any:
    """bpe-openai's Rust tokenizer of `encoding`, loaded without importing the package.

    Importing `bpe_openai` reads the tables of all three of its encodings in Python, about a
    second and a half of every process that counts with it; the compiled tokenizers carry their
    own. The compiled module is registered under its own name, so the package, if something
    imports it later, uses this same module.
    """
    module = sys.modules.get(BINDINGS) or _load_bindings()
    return module.tokenizer_for_encoding(encoding)


def _load_bindings() -> Any:
    package = importlib.util.find_spec("bpe_openai")  # found, not imported
    if package is None or not package.submodule_search_locations:
        raise ModuleNotFoundError(MISSING)
    spec = importlib.machinery.PathFinder.find_spec(BINDINGS, list(package.submodule_search_locations))
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"bpe-openai is installed without its compiled tokenizer; {MISSING}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[BINDINGS] = module
    spec.loader.exec_module(module)
    return module


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
            cached = bpe_tokens(self.encoding, text)
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
