"""Large tool results evicted to files, with a head-and-tail preview left in the context.

Source: deepagents `FilesystemMiddleware` eviction of large tool results (`middleware/filesystem.py`,
`_message_eviction.py`).

Invariant: an evicted result keeps its call, id, name and place; only its text changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.core.compaction.clearing import result_units
from ctxlab.core.messages.blocks import DataBlock, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.units import (
    BlockRef,
    result_block,
    result_ref,
    view_units,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LargeResultParams:
    """deepagents eviction of large tool results to files.

    Attributes:
        token_limit: evict when the result's text is longer than `token_limit * chars_per_token`
            characters (deepagents: 20,000 tokens at 4 characters per token).
        chars_per_token: deepagents' conservative estimate (4).
        head_lines: preview lines from the start (5).
        tail_lines: preview lines from the end (5).
        line_chars: preview lines are clipped to this many characters (1000).
        exclude_tools: tools never evicted (deepagents: ls, glob, grep, read_file, edit_file,
            write_file).
        directory: where the files go (`/large_tool_results`).
        stub: the result's new text; `{call_id}`, `{path}`, `{preview}`.
        marker: the preview line standing for the middle; `{omitted}` lines.
    """

    token_limit: int = 20_000
    chars_per_token: int = 4
    head_lines: int = 5
    tail_lines: int = 5
    line_chars: int = 1000
    exclude_tools: tuple[str, ...] = ("ls", "glob", "grep", "read_file", "edit_file", "write_file")
    directory: str = "/large_tool_results"
    stub: str = (
        "The result of tool call {call_id} was too large for the context and is saved at {path}. "
        "Read it from there a part at a time (with an offset and a limit). Its first and last "
        "lines:\n\n{preview}\n"
    )
    marker: str = "... [{omitted} lines omitted] ..."


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultOffload:
    """An eviction intent: write `content` to a file (suggested `path`), then apply it."""

    call_id: str
    path: str
    content: str


def plan_result_offload(
    result: ToolResultBlock, params: LargeResultParams = LargeResultParams()
) -> ResultOffload | None:
    """The eviction intent for `result`, or None when it is small enough or its tool is excluded.

    The text measured and saved is the result's text parts joined by newlines.
    """
    if result.name in params.exclude_tools:
        return None
    text = "\n".join(p.text for p in result.output if isinstance(p, TextBlock))
    if len(text) <= params.token_limit * params.chars_per_token:
        return None
    name = result.id.replace(".", "_").replace("/", "_").replace("\\", "_")
    return ResultOffload(call_id=result.id, path=f"{params.directory}/{name}", content=text)


def apply_result_offload(
    result: ToolResultBlock,
    offload: ResultOffload,
    path: str | None = None,
    params: LargeResultParams = LargeResultParams(),
) -> ToolResultBlock:
    """`result` once its content is saved at `path` (default: the suggested one): the stub with
    a head and tail preview; images and other data stay."""
    stub = fill(
        params.stub,
        call_id=offload.call_id,
        path=path or offload.path,
        preview=result_preview(offload.content, params),
    )
    data = tuple(p for p in result.output if isinstance(p, DataBlock))
    return ToolResultBlock(
        id=result.id, name=result.name, output=(TextBlock(text=stub), *data), state=result.state
    )


def result_preview(text: str, params: LargeResultParams = LargeResultParams()) -> str:
    """Numbered head and tail lines of `text`, with a marker for the lines between.

    >>> print(result_preview("a\\nb\\nc", LargeResultParams(head_lines=1, tail_lines=1)))
         1	a
    ... [1 lines omitted] ...
         3	c
    """
    lines = text.splitlines()
    clip = params.line_chars

    def numbered(chunk: Sequence[str], first: int) -> str:
        return "\n".join(f"{first + k:6d}\t{line[:clip]}" for k, line in enumerate(chunk))

    if len(lines) <= params.head_lines + params.tail_lines:
        return numbered(lines, 1)
    omitted = len(lines) - params.head_lines - params.tail_lines
    head = numbered(lines[: params.head_lines], 1)
    tail = numbered(lines[-params.tail_lines :], len(lines) - params.tail_lines + 1)
    return f"{head}\n{fill(params.marker, omitted=omitted)}\n{tail}"


def plan_result_offloads(
    messages: Sequence[Message], params: LargeResultParams = LargeResultParams()
) -> tuple[tuple[BlockRef, ResultOffload], ...]:
    """Every result of the context that deepagents would evict, with where it lives."""
    plans = []
    for unit in result_units(view_units(messages)):
        offload = plan_result_offload(result_block(messages, unit), params)
        if offload is not None:
            plans.append((result_ref(unit), offload))
    return tuple(plans)
