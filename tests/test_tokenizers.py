"""Real BPE counters follow the same additive protocol as the estimator."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import Block, DataBlock, Tally, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.tokenizers import BpeCounter, bpe_tokens


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_counts_text_tools_and_data(encoding: str) -> None:
    counter = BpeCounter(encoding)  # type: ignore[arg-type]
    msgs = [
        text_message("user", "hello world"),
        Message(
            role="assistant",
            blocks=(
                ToolResultBlock(
                    id="a",
                    name="t",
                    output=(TextBlock(text="hello world"), DataBlock(media_type="image/png", source="u")),
                ),
            ),
        ),
    ]
    tools = (ToolSchema.of("f", "d", {"type": "object"}),)
    hello = counter.text_tokens("hello world")
    assert hello == 2
    assert counter.count(msgs, ()) == 2 * hello + 2000
    assert counter.count(msgs, tools) > counter.count(msgs, ())
    blocks = [b for m in msgs for b in m.blocks]
    assert counter.total(sum_tallies_of(counter, blocks), ()) == counter.count(msgs, ())


def sum_tallies_of(counter: BpeCounter, blocks: list[Block]) -> Tally:
    total = Tally(0, 0)
    for block in blocks:
        total = total + counter.measure(block)
    return total


@given(st.integers(0, 10**6), st.integers(0, 50), st.integers(0, 4), st.integers(0, 3), st.booleans())
def test_a_smaller_tally_never_counts_more(
    tokens: int, ndata: int, fewer: int, fewer_data: int, with_tools: bool
) -> None:
    counter = BpeCounter("o200k_base")
    tools = (ToolSchema(name="t", description="d"),) if with_tools else ()
    smaller = Tally(max(tokens - fewer, 0), max(ndata - fewer_data, 0))
    assert counter.total(smaller, tools) <= counter.total(Tally(tokens, ndata), tools)


def test_encodings_differ_on_chinese() -> None:
    # Measured: 180 CJK characters (540 bytes; the byte estimate says 135) are 140 o200k tokens
    # and 200 cl100k tokens, so the byte estimate undercounts Chinese for both encodings.
    text = "上下文工程让智能体在长任务中不迷路。" * 10
    assert BpeCounter("o200k_base").text_tokens(text) == 140
    assert BpeCounter("cl100k_base").text_tokens(text) == 200


def _package_count(encoding: str, text: str) -> int:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return len(bpe_openai.get_encoding(encoding).encode_ordinary(text))


@given(
    st.sampled_from(["o200k_base", "cl100k_base"]),
    st.text(alphabet=st.characters(codec=None, blacklist_categories=()), max_size=300)
    | st.sampled_from(["", " ", "\ud800 lone", "a\udfffb", "你好，世界", "def f(x):\n\treturn x  # ok\r\n"]),
)
def test_a_text_counts_as_the_package_encodes_it(encoding: str, text: str) -> None:
    """`bpe_tokens` (the compiled tokenizer, loaded alone) agrees with the package's
    `encode_ordinary`, lone surrogates included."""
    assert bpe_tokens(encoding, text) == _package_count(encoding, text)


def test_counting_does_not_import_the_package_and_the_package_still_works_after() -> None:
    """The package's import reads every encoding's table in Python; counting needs none of it."""
    code = (
        "import sys, warnings\n"
        "from ctxlab.tokenizers import bpe_tokens\n"
        "n = bpe_tokens('cl100k_base', 'hello world')\n"
        "print(n, 'bpe_openai' in sys.modules)\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        "import bpe_openai\n"
        "print(len(bpe_openai.get_encoding('cl100k_base').encode_ordinary('hello world')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    assert out.stdout.split() == ["2", "False", "2"]
