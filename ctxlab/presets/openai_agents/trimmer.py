"""`ToolOutputTrimmer` of openai-agents 0.24.0 (`agents/extensions/tool_output_trimmer.py`), on
the messages of a request.

The trimmer is a `call_model_input_filter`: before every model call it edits the input items the
SDK is about to send, never what the session stores. Seen on ctxlab's messages, each user message
is one input item, and every assistant text, call and result is one item of its own.

Invariants:
- The boundary is the `recent_turns`-th user message from the end; when there are fewer user
  messages, or the boundary is the first item, nothing is trimmed.
- Only results before the boundary are trimmed, each on its own: a result of a tool in
  `trimmable_tools` (all tools when None; the name comes from the call in the same request, and a
  result whose call is not there has none), whose output is one text (or nothing) longer than
  `max_output_chars` characters (code points, not bytes), becomes the notice with its first
  `preview_chars` characters, unless the notice would not be shorter than the output. Any other
  output (several parts, or data) is the SDK's structured output, trimmed as the SDK trims one
  (`structured.structured_notice`): to a header and a preview of its texts, its images and files
  dropped.
- Call ids, tool names and result states are kept; nothing else changes, and the untouched
  messages stay the same objects; a trimmed message is the same copy at every request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import Block, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.edits import replace_blocks, with_output
from ctxlab.core.messages.latest import Distinct, Leading
from ctxlab.core.messages.memo import IdentityMemo, LeadingConcat
from ctxlab.core.messages.message import Message, call_ids, extended, result_ids
from ctxlab.core.messages.units import BlockRef
from ctxlab.core.settings import SettingError
from ctxlab.presets.openai_agents.structured import api_parts, structured_notice
from ctxlab.texts.agents_structured import StructuredNotices


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutputTrimmerParams:
    """`ToolOutputTrimmer`'s settings, named and defaulted as the SDK's.

    Attributes:
        recent_turns: the last this many user messages, and everything after the earliest of
            them, are never trimmed (2; at least 1).
        max_output_chars: outputs longer than this many characters are trimmed (500; at least 1).
        preview_chars: characters of the output kept in the notice (200; at least 0).
        trimmable_tools: only these tools' outputs are trimmed (None: every tool's).
    """

    recent_turns: int = 2
    max_output_chars: int = 500
    preview_chars: int = 200
    trimmable_tools: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.recent_turns < 1:
            raise SettingError(("recent_turns",), f"recent_turns must be >= 1, got {self.recent_turns}")
        if self.max_output_chars < 1:
            raise SettingError(
                ("max_output_chars",), f"max_output_chars must be >= 1, got {self.max_output_chars}"
            )
        if self.preview_chars < 0:
            raise SettingError(("preview_chars",), f"preview_chars must be >= 0, got {self.preview_chars}")


@dataclass(frozen=True, slots=True, kw_only=True)
class TrimNotice:
    """What replaces a trimmed output.

    Attributes:
        template: `str.format` with `name`, `chars`, `preview_chars` and `preview`.
        unknown_tool: the name shown when the result's call is not in the request.
        structured: the notices of a trimmed structured output.
    """

    template: str
    unknown_tool: str
    structured: StructuredNotices


@dataclass(frozen=True, slots=True, kw_only=True)
class Trimmed:
    """The request's messages after trimming, and the call ids of the results trimmed."""

    messages: tuple[Message, ...]
    trimmed: tuple[str, ...] = ()


def recent_boundary(messages: Sequence[Message], recent_turns: int) -> int:
    """The index of the message where the recent part starts (0: nothing is old).

    >>> from ctxlab.core.messages.message import text_message as m
    >>> recent_boundary([m("user", "a"), m("assistant", "b"), m("user", "c")], 1)
    2
    >>> recent_boundary([m("user", "a"), m("assistant", "b"), m("user", "c")], 2)
    0
    """
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            seen += 1
            if seen >= recent_turns:
                return index
    return 0


def _tool_names(messages: Sequence[Message]) -> dict[str, str]:
    return {
        block.id: block.name
        for message in messages
        for block in message.blocks
        if isinstance(block, ToolCallBlock) and block.id
    }


def trim_notice(text: str, name: str, params: ToolOutputTrimmerParams, notice: TrimNotice) -> str | None:
    """The notice that replaces `text`, or None when it stays (short enough, or the notice would
    not be shorter)."""
    if len(text) <= params.max_output_chars:
        return None
    summary = notice.template.format(
        name=name or notice.unknown_tool,
        chars=len(text),
        preview_chars=params.preview_chars,
        preview=text[: params.preview_chars],
    )
    return summary if len(summary) < len(text) else None


def _single_text(result: ToolResultBlock) -> str | None:
    """The output as the SDK's string output: one text, or nothing at all (None: a structured
    output)."""
    match result.output:
        case ():
            return ""
        case (TextBlock(text=text),):
            return text
        case _:
            return None


def result_notice(
    result: ToolResultBlock, name: str, params: ToolOutputTrimmerParams, notice: TrimNotice
) -> str | None:
    """The text that replaces `result`'s output, or None when it stays: a string output's notice
    (`trim_notice`), or a structured output's (`structured.structured_notice`)."""
    text = _single_text(result)
    if text is not None:
        return trim_notice(text, name, params, notice)
    return structured_notice(
        api_parts(result.output),
        name or notice.unknown_tool,
        max_output_chars=params.max_output_chars,
        preview_chars=params.preview_chars,
        notices=notice.structured,
    )


def trim_tool_outputs(
    messages: tuple[Message, ...], params: ToolOutputTrimmerParams, notice: TrimNotice
) -> Trimmed:
    """`ToolOutputTrimmer.__call__` on a request's messages (see the module invariants).

    A result's name is its call's anywhere in the request. When no id of an old message's calls
    and results is also another message's, nor a later call's (as in every run the engine plays:
    a reply holds its calls and their results, and ids are unique), each old message's name for
    a result is its own, so each old message is trimmed on its own, once (`_trimmed_message`),
    and the old part's copies are kept (`LeadingConcat`): a step costs what changed, not the
    history. Otherwise the whole request's names are read at once.
    """
    boundary = recent_boundary(messages, params.recent_turns)
    if boundary == 0:
        return Trimmed(messages=messages)
    old, recent = _old_part(messages, boundary), messages[boundary:]
    if not _names_are_local(old, recent):
        return _trim_before(messages, boundary, _tool_names(messages), params, notice)
    trimmed = _trimmed_ids(old, params, notice)
    if not trimmed:
        return Trimmed(messages=messages)
    return Trimmed(messages=extended(_trimmed_copies(old, params, notice), recent), trimmed=trimmed)


def _trim_before(
    messages: tuple[Message, ...],
    boundary: int,
    names: dict[str, str],
    params: ToolOutputTrimmerParams,
    notice: TrimNotice,
) -> Trimmed:
    """The results before `boundary` trimmed, each named by `names` after its call id."""
    edits: dict[BlockRef, Block] = {}
    trimmed: list[str] = []
    for m, message in enumerate(messages[:boundary]):
        for b, block in enumerate(message.blocks):
            if not isinstance(block, ToolResultBlock):
                continue
            name = names.get(block.id, "")
            if params.trimmable_tools is not None and (not name or name not in params.trimmable_tools):
                continue
            summary = result_notice(block, name, params, notice)
            if summary is not None:
                edits[BlockRef(m, b)] = with_output(block, summary)
                trimmed.append(block.id)
    if not edits:
        return Trimmed(messages=messages)
    return Trimmed(messages=replace_blocks(messages, edits), trimmed=tuple(trimmed))


def _names_are_local(old: Sequence[Message], recent: Sequence[Message]) -> bool:
    """Whether every old result's call, if the request has one, is in the result's own message:
    no id of an old message's calls and results is also another old message's, nor a recent
    call's."""
    ids = _distinct(_old_ids(old))
    return ids is not None and all(ids.isdisjoint(call_ids(message)) for message in recent)


def _own_ids(message: Message) -> tuple[str, ...]:
    """The distinct ids of `message`'s calls and results (an empty id names no call)."""
    return tuple(dict.fromkeys(i for i in (*call_ids(message), *result_ids(message)) if i))


_old_part = Leading()
"""The part before the recent turns (the very tuple while it is unchanged: a turn)."""

_old_ids = LeadingConcat[Message, str](lambda message, _at, _before: _own_ids(message))
"""`_own_ids` of every message of the old part, in order (the very tuple while it is unchanged)."""


_distinct = Distinct[str]()
"""The set of an old part's ids, None when one is in two messages: extended by the ids a new
turn added to the old part (`latest.Distinct`)."""


def _trim_own(message: Message, params: ToolOutputTrimmerParams, notice: TrimNotice) -> Trimmed:
    return _trim_before((message,), 1, _tool_names((message,)), params, notice)


_trimmed_message = IdentityMemo[Message, Trimmed](_trim_own)
"""An old message trimmed with its own calls' names: `_trimmed_message(message, params, notice)`."""

_trimmed_copies = LeadingConcat[Message, Message](
    lambda message, _at, _before, params, notice: _trimmed_message(message, params, notice).messages
)
"""The old part with each message trimmed on its own (the very tuple while it is unchanged)."""

_trimmed_ids = LeadingConcat[Message, str](
    lambda message, _at, _before, params, notice: _trimmed_message(message, params, notice).trimmed
)
"""The ids of the results `_trimmed_copies` trimmed, in order."""
