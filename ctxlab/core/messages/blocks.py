"""Content blocks: the atoms of every message the lab stores or sends.

Invariants:
- Blocks are immutable values; equality is by content.
- Every block caches its size as a `Tally`: the UTF-8 bytes of the text pieces a token counter
  reads (text, thinking, hint text, tool-call input, tool-result text) and the number of data
  blocks (images, audio) it holds. Sizes are computed once, at construction.
- Tool names and ids are never part of a block's size: counters do not read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Literal, NamedTuple, Protocol, assert_never

ResultState = Literal["success", "error", "running"]
SourceKind = Literal["url", "base64"]


class Tally(NamedTuple):
    """Additive size of some content: UTF-8 bytes of counted text, and data blocks.

    >>> Tally(3, 0) + Tally(4, 1)
    Tally(nbytes=7, ndata=1)
    """

    nbytes: int
    ndata: int

    def __add__(self, other: object) -> Tally:
        assert isinstance(other, Tally)
        return tally_of((self.nbytes + other.nbytes, self.ndata + other.ndata))

    def __sub__(self, other: Tally) -> Tally:
        return tally_of((self.nbytes - other.nbytes, self.ndata - other.ndata))


tally_of: Callable[[tuple[int, int]], Tally] = partial(tuple.__new__, Tally)
"""`Tally(nbytes, ndata)` of the pair `(nbytes, ndata)`, made without the Python frame of the
named tuple's constructor: a run makes tallies by the million, a score of them a model call."""

ZERO = Tally(0, 0)


def utf8_len(text: str) -> int:
    """Byte length of `text` in UTF-8.

    >>> utf8_len("a中")
    4
    """
    return len(text.encode("utf-8"))


def _set_tally(block: object, tally: Tally) -> None:
    object.__setattr__(block, "tally", tally)


@dataclass(frozen=True, slots=True, kw_only=True)
class TextBlock:
    """Plain text."""

    text: str
    tally: Tally = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _set_tally(self, tally_of((utf8_len(self.text), 0)))


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingBlock:
    """Model reasoning. Counted; the OpenAI view drops it unless `wire_field` names the field of
    its assistant message it is sent in (`reasoning_content`, as DeepSeek and Kimi return it,
    for the frameworks that send it back)."""

    thinking: str
    wire_field: str | None = None
    tally: Tally = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _set_tally(self, Tally(utf8_len(self.thinking), 0))


@dataclass(frozen=True, slots=True, kw_only=True)
class DataBlock:
    """Binary content (image, audio, pdf) given by URL or base64 payload.

    Counters charge a flat amount per data block, whatever its size or media type.
    """

    media_type: str
    source: str
    kind: SourceKind = "url"
    name: str | None = None
    tally: Tally = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _set_tally(self, Tally(0, 1))

    @property
    def is_image(self) -> bool:
        """True for `image/*` media types."""
        return self.media_type.startswith("image/")


Part = TextBlock | DataBlock
"""What a tool result or a multimodal hint holds."""


class Sized(Protocol):
    """Anything that caches its size as a tally (blocks, parts, messages)."""

    @property
    def tally(self) -> Tally:
        """The cached size."""
        ...


def sum_tallies(items: Iterable[Sized]) -> Tally:
    """Sum of the tallies of `items` (ZERO when empty)."""
    nbytes = ndata = 0
    for item in items:
        nbytes += item.tally.nbytes
        ndata += item.tally.ndata
    return tally_of((nbytes, ndata))


@dataclass(frozen=True, slots=True, kw_only=True)
class HintBlock:
    """A runtime hint. Stored inside assistant messages; providers see it as user text."""

    hint: str | tuple[Part, ...]
    source: str | None = None
    tally: Tally = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.hint, str):
            _set_tally(self, Tally(utf8_len(self.hint), 0))
        else:
            _set_tally(self, sum_tallies(self.hint))

    @property
    def text(self) -> str:
        """The hint's text: the string, or its text parts joined with nothing between."""
        if isinstance(self.hint, str):
            return self.hint
        return "".join(p.text for p in self.hint if isinstance(p, TextBlock))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallBlock:
    """A tool call. `input` is the raw JSON argument string the model produced."""

    id: str
    name: str
    input: str
    tally: Tally = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _set_tally(self, tally_of((utf8_len(self.input), 0)))

    @classmethod
    def of(cls, id: str, name: str, arguments: object) -> ToolCallBlock:
        """A call whose input is `json.dumps(arguments, ensure_ascii=False)`.

        >>> ToolCallBlock.of("c1", "Read", {"file_path": "a.py"}).input
        '{"file_path": "a.py"}'
        """
        return cls(id=id, name=name, input=json.dumps(arguments, ensure_ascii=False))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultBlock:
    """The result of the call with the same `id`. `listed`: the OpenAI view sends its texts as a
    list of text parts even when there is one (a framework that sends a structured output's texts
    so sets it on the result it sends; a stored result never has it)."""

    id: str
    name: str
    output: tuple[Part, ...]
    state: ResultState = "success"
    listed: bool = False
    tally: Tally = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _set_tally(self, sum_tallies(self.output))

    @property
    def text(self) -> str:
        """The text parts of the output, joined with nothing between."""
        return "".join(p.text for p in self.output if isinstance(p, TextBlock))


Block = TextBlock | ThinkingBlock | HintBlock | ToolCallBlock | ToolResultBlock | DataBlock


def with_arguments(blocks: tuple[Block, ...], rewrite: Callable[[str], str]) -> tuple[Block, ...]:
    """`blocks` with each call's input rewritten (as a framework keeps or re-serializes it); a
    block left as it was is the same object.

    >>> call = ToolCallBlock(id="c1", name="Read", input='{"a":1}')
    >>> with_arguments((call,), lambda raw: json.dumps(json.loads(raw)))[0].input
    '{"a": 1}'
    """
    return tuple(_with_input(block, rewrite) for block in blocks)


def _with_input(block: Block, rewrite: Callable[[str], str]) -> Block:
    if not isinstance(block, ToolCallBlock):
        return block
    written = rewrite(block.input)
    return block if written == block.input else ToolCallBlock(id=block.id, name=block.name, input=written)


def with_thinking_sent(blocks: tuple[Block, ...], field: str) -> tuple[Block, ...]:
    """`blocks` with their thinking sent in the assistant message's `field` (a framework that
    sends a model's reasoning back); `blocks` itself when nothing changes.

    >>> with_thinking_sent((ThinkingBlock(thinking="hm"),), "reasoning_content")[0].wire_field
    'reasoning_content'
    """
    if not any(isinstance(block, ThinkingBlock) and block.wire_field != field for block in blocks):
        return blocks
    return tuple(
        ThinkingBlock(thinking=block.thinking, wire_field=field)
        if isinstance(block, ThinkingBlock) and block.wire_field != field
        else block
        for block in blocks
    )


def block_kind(block: Block) -> str:
    """A short name for the block's type, as used in traces and parity checks.

    >>> block_kind(TextBlock(text="x"))
    'text'
    """
    match block:
        case TextBlock():
            return "text"
        case ThinkingBlock():
            return "thinking"
        case HintBlock():
            return "hint"
        case ToolCallBlock():
            return "tool_call"
        case ToolResultBlock():
            return "tool_result"
        case DataBlock():
            return "data"
        case _:
            assert_never(block)


def text_pieces(block: Block) -> tuple[str, ...]:
    """The text pieces a counter reads from `block`, in order."""
    match block:
        case TextBlock(text=text) | ThinkingBlock(thinking=text) | ToolCallBlock(input=text):
            return (text,)
        case HintBlock(hint=str() as text):
            return (text,)
        case HintBlock(hint=parts) | ToolResultBlock(output=parts):
            return tuple(p.text for p in parts if isinstance(p, TextBlock))
        case DataBlock():
            return ()
        case _:
            assert_never(block)


def data_parts(block: Block) -> tuple[DataBlock, ...]:
    """The data blocks `block` is or holds, in order."""
    match block:
        case DataBlock():
            return (block,)
        case HintBlock(hint=str()):
            return ()
        case HintBlock(hint=parts) | ToolResultBlock(output=parts):
            return tuple(p for p in parts if isinstance(p, DataBlock))
        case TextBlock() | ThinkingBlock() | ToolCallBlock():
            return ()
        case _:
            assert_never(block)
