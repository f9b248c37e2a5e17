"""Tool-result clearing and observation masking families, large-result eviction, sliding window.

Each family edits the stored context (results keep their id, name, state and place; only their
content changes), except the sliding window, which drops view messages. Sources, one per family:

- `clear_tool_uses`: Anthropic context editing `clear_tool_uses_20250919` (docs.claude.com,
  build-with-claude/context-editing; beta `context-management-2025-06-27`). Applied by the API to
  each request; the client keeps the full history (`persist=False`).
- `clear_tool_results`: LangChain `ClearToolUsesEdit` (langchain v1
  `agents/middleware/context_editing.py`); it edits the outgoing request only, so with a
  checkpointer it re-runs every turn (langchain #37815); PR #39265 persists the edit.
- `elide_observations`: SWE-agent `LastNObservations` (`sweagent/agent/history_processors.py`;
  `n` required, 5 in the paper and the 0.7 config). OpenHands' SDK has no observation masking;
  the Complexity Trap's masking (`openhands-hybrid`) is this one.
- `plan_result_offload` / `apply_result_offload`: deepagents `FilesystemMiddleware` eviction of
  large tool results (`middleware/filesystem.py`, `_message_eviction.py`).
- `slide_window`: a protocol-blind window, `trim_messages(strategy="last")` without
  `start_on="human"` (langchain #33245): it can orphan a result, and the lab must catch it.

Invariants:
- Every family but `slide_window` keeps each call and its result in place, so it never causes an
  `openai` or `anthropic` protocol violation.
- Placeholders and notices are ctxlab's own wording; their `{name}` placeholders are filled in one
  pass (`templates.fill`), so a value holding braces is inserted as it is.
- `elide_observations` is a request view: apply it to the full stored history before each
  request (as SWE-agent does), not to its own output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ctxlab.core.messages.blocks import Block, DataBlock, Tally, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.units import (
    BlockRef,
    Sizer,
    ViewUnit,
    call_blocks,
    drop_units,
    replace_blocks,
    result_block,
    result_ref,
    tally_after,
    unit_tallies,
    view_units,
    with_output,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Clearing:
    """A context after a clearing family ran.

    Attributes:
        messages: the edited context (the input itself when nothing changed).
        cleared: call ids whose results were replaced, oldest first.
        inputs_cleared: call ids whose inputs were replaced by `{}`.
        tokens_before: request tokens before (0 for families that do not count).
        tokens_after: request tokens after (0 for families that do not count).
    """

    messages: tuple[Message, ...]
    cleared: tuple[str, ...] = ()
    inputs_cleared: tuple[str, ...] = ()
    tokens_before: int = 0
    tokens_after: int = 0


def _cleared_input(call: ToolCallBlock) -> ToolCallBlock:
    return ToolCallBlock(id=call.id, name=call.name, input="{}")


def _results(units: Sequence[ViewUnit]) -> list[ViewUnit]:
    return [u for u in units if u.kind == "result"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AnthropicClearParams:
    """`clear_tool_uses_20250919` settings, with the API's defaults.

    Attributes:
        trigger: the edit applies once the prompt exceeds this (API default 100,000 input
            tokens).
        trigger_kind: `input_tokens`, or `tool_uses` to count tool calls instead.
        keep: the most recent tool uses (call/result pairs) kept intact (API default 3).
        clear_at_least: when the edit would reclaim fewer tokens than this, it is not applied
            (API default: none).
        exclude_tools: tools whose uses are never cleared.
        clear_tool_inputs: also clear the call's input: every call (True) or these tools.
        placeholder: what a cleared result holds.
        persist: False as the API works (history keeps full results; each request is edited
            anew); True keeps the edit in the stored context.
    """

    trigger: int = 100_000
    trigger_kind: Literal["input_tokens", "tool_uses"] = "input_tokens"
    keep: int = 3
    clear_at_least: int | None = None
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool | tuple[str, ...] = False
    placeholder: str = "[tool result cleared to free context]"
    persist: bool = False


def clear_tool_uses(
    messages: Sequence[Message], *, sizer: Sizer, params: AnthropicClearParams = AnthropicClearParams()
) -> Clearing:
    """Anthropic's tool-use clearing: once over the trigger, every result but the `keep` most
    recent becomes the placeholder, oldest first, unless that reclaims under `clear_at_least`.

    Tool uses are counted as answered calls; `keep` counts excluded tools too. A result already
    holding the placeholder is left alone (it matters only with `persist`).
    """
    calls = call_blocks(messages)
    pairs = [u for u in _results(view_units(messages)) if u.call_ids[0] in calls]
    tally = sizer.size(messages)
    before = sizer.tokens(tally)
    measure = before if params.trigger_kind == "input_tokens" else len(calls)
    if measure <= params.trigger:
        return Clearing(messages=tuple(messages), tokens_before=before, tokens_after=before)
    edits: dict[BlockRef, Block] = {}
    cleared: list[str] = []
    inputs: list[str] = []
    for unit in pairs[: max(len(pairs) - params.keep, 0)]:
        ref, call = calls[unit.call_ids[0]]
        result = result_block(messages, unit)
        if call.name in params.exclude_tools or result.output == (TextBlock(text=params.placeholder),):
            continue
        edits[result_ref(unit)] = with_output(result, params.placeholder)
        cleared.append(call.id)
        if _clears_input(params.clear_tool_inputs, call):
            edits[ref] = _cleared_input(call)
            inputs.append(call.id)
    after = sizer.tokens(_edited_tally(messages, edits, sizer, tally))
    if not edits or (params.clear_at_least is not None and before - after < params.clear_at_least):
        return Clearing(messages=tuple(messages), tokens_before=before, tokens_after=before)
    return Clearing(
        messages=replace_blocks(messages, edits),
        cleared=tuple(cleared),
        inputs_cleared=tuple(inputs),
        tokens_before=before,
        tokens_after=after,
    )


def _clears_input(setting: bool | tuple[str, ...], call: ToolCallBlock) -> bool:
    if call.input == "{}":
        return False
    return setting if isinstance(setting, bool) else call.name in setting


def _edited_tally(
    messages: Sequence[Message], edits: dict[BlockRef, Block], sizer: Sizer, tally: Tally
) -> Tally:
    old = [messages[ref.message].blocks[ref.block] for ref in edits]
    return tally_after(tally, sizer.counter, old, edits.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class LangChainClearParams:
    """`ClearToolUsesEdit` settings, with LangChain's defaults.

    Attributes:
        trigger: the edit runs when the request is above this many tokens (100,000).
        clear_at_least: when positive, stop clearing once this many tokens are reclaimed (0:
            clear every candidate). Note the opposite sense to Anthropic's parameter.
        keep: the most recent tool results never cleared (3).
        clear_tool_inputs: also replace the cleared calls' inputs by `{}` (False).
        exclude_tools: tools whose results are never cleared.
        placeholder: what a cleared result holds (LangChain writes a one-word marker).
        persist: False as LangChain works (the edit only reaches the outgoing request);
            True keeps it in the stored context (PR #39265).
    """

    trigger: int = 100_000
    clear_at_least: int = 0
    keep: int = 3
    clear_tool_inputs: bool = False
    exclude_tools: tuple[str, ...] = ()
    placeholder: str = "[result cleared]"
    persist: bool = False


def clear_tool_results(
    messages: Sequence[Message], *, sizer: Sizer, params: LangChainClearParams = LangChainClearParams()
) -> Clearing:
    """LangChain's clearing: above the trigger, clear results oldest first except the last `keep`.

    A result is cleared only when the nearest assistant view message before it declares its
    call; one already holding the placeholder is skipped.
    """
    tally = sizer.size(messages)
    before = sizer.tokens(tally)
    if before <= params.trigger:
        return Clearing(messages=tuple(messages), tokens_before=before, tokens_after=before)
    edits: dict[BlockRef, Block] = {}
    cleared: list[str] = []
    inputs: list[str] = []
    for unit, call_ref in _clear_candidates(messages, params.keep):
        result = result_block(messages, unit)
        call = messages[call_ref.message].blocks[call_ref.block]
        assert isinstance(call, ToolCallBlock)
        if result.output == (TextBlock(text=params.placeholder),) or (
            (result.name or call.name) in params.exclude_tools
        ):
            continue
        edits[result_ref(unit)] = with_output(result, params.placeholder)
        cleared.append(call.id)
        if params.clear_tool_inputs:
            edits[call_ref] = _cleared_input(call)
            inputs.append(call.id)
        if params.clear_at_least > 0:
            now = sizer.tokens(_edited_tally(messages, edits, sizer, tally))
            if before - now >= params.clear_at_least:
                break
    after = sizer.tokens(_edited_tally(messages, edits, sizer, tally))
    return Clearing(
        messages=replace_blocks(messages, edits),
        cleared=tuple(cleared),
        inputs_cleared=tuple(inputs),
        tokens_before=before,
        tokens_after=after,
    )


def _clear_candidates(messages: Sequence[Message], keep: int) -> list[tuple[ViewUnit, BlockRef]]:
    """Results before the last `keep`, each with its call in the nearest assistant view message."""
    units = view_units(messages)
    results = _results(units)
    candidates = results[: len(results) - keep] if keep < len(results) else []
    chosen = {u.index for u in candidates}
    out: list[tuple[ViewUnit, BlockRef]] = []
    assistant: ViewUnit | None = None
    for unit in units:
        if unit.role == "assistant":
            assistant = unit
        elif unit.index in chosen and assistant is not None and unit.call_ids[0] in assistant.call_ids:
            position = assistant.call_ids.index(unit.call_ids[0])
            calls = [
                i
                for i in assistant.blocks
                if isinstance(messages[assistant.message].blocks[i], ToolCallBlock)
            ]
            out.append((unit, BlockRef(assistant.message, calls[position])))
    return out


def _replace_results(messages: Sequence[Message], plan: Sequence[tuple[ViewUnit, str]]) -> Clearing:
    edits: dict[BlockRef, Block] = {}
    cleared: list[str] = []
    for unit, text in plan:
        result = result_block(messages, unit)
        if result.output != (TextBlock(text=text),):
            edits[result_ref(unit)] = with_output(result, text)
            cleared.append(result.id)
    return Clearing(messages=replace_blocks(messages, edits), cleared=tuple(cleared))


@dataclass(frozen=True, slots=True, kw_only=True)
class LastNObservationsParams:
    """SWE-agent `last_n_observations`.

    Attributes:
        n: observations kept in full; required and positive, as in SWE-agent (the paper: 5).
        polling: the kept count moves only every `polling` observations (SWE-agent: 1), which
            keeps between `n` and `n + polling` and breaks the cache less often.
        notice: what an elided result becomes; `{lines}` is its number of text lines.
        media_notice: appended when it held images or other data; `{count}` is how many.
    """

    n: int
    polling: int = 1
    notice: str = "[earlier tool output elided: {lines} lines]"
    media_notice: str = " [{count} attachments elided]"

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError(
                f"n={self.n}: SWE-agent keeps a positive number of observations (its own check); "
                "give n: 5 as in the paper, or another count above 0"
            )


def elide_observations(messages: Sequence[Message], params: LastNObservationsParams) -> Clearing:
    """Replace all but the last `n` observations by a one-line notice.

    As in SWE-agent the first observation is never elided: SWE-agent's first observation is the
    task itself (its instance template); here it is the first user message, and every tool
    result after it is an observation.
    """
    units = view_units(messages)
    first_user = next((u.index for u in units if u.kind == "user"), None)
    observations = [u for u in units if u.kind == "result" or u.index == first_user]
    count = len(observations)
    last_removed = max(0, (count // params.polling) * params.polling - params.n)
    plan = [
        (u, _notice(result_block(messages, u), params))
        for u in observations[1:last_removed]
        if u.kind == "result"
    ]
    return _replace_results(messages, plan)


def _notice(result: ToolResultBlock, params: LastNObservationsParams) -> str:
    lines = sum(len(p.text.splitlines()) for p in result.output if isinstance(p, TextBlock))
    data = sum(1 for p in result.output if isinstance(p, DataBlock))
    text = fill(params.notice, lines=lines)
    return text + fill(params.media_notice, count=data) if data else text


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
    for unit in _results(view_units(messages)):
        offload = plan_result_offload(result_block(messages, unit), params)
        if offload is not None:
            plans.append((result_ref(unit), offload))
    return tuple(plans)


@dataclass(frozen=True, slots=True, kw_only=True)
class SlidingWindowParams:
    """A protocol-blind window: drop view messages from the front while over `max_tokens`.

    Attributes:
        max_tokens: the request budget.
        keep_system: never drop system view messages.
        min_messages: never keep fewer view messages than this.
    """

    max_tokens: int = 8192
    keep_system: bool = True
    min_messages: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Window:
    """The context after the window: `dropped` view indices, and the request's tokens."""

    messages: tuple[Message, ...]
    dropped: tuple[int, ...]
    tokens: int


def slide_window(
    messages: Sequence[Message], *, sizer: Sizer, params: SlidingWindowParams = SlidingWindowParams()
) -> Window:
    """Drop view messages from the front, blind to calls and results, down to `max_tokens`."""
    units = view_units(messages)
    tallies = unit_tallies(messages, units, sizer.counter)
    tally = sizer.size(messages)
    dropped: list[int] = []
    for unit in units:
        if sizer.tokens(tally) <= params.max_tokens or len(units) - len(dropped) <= params.min_messages:
            break
        if params.keep_system and unit.kind == "system":
            continue
        dropped.append(unit.index)
        tally = tally - tallies[unit.index]
    kept = drop_units(messages, units, dropped)
    return Window(messages=kept, dropped=tuple(dropped), tokens=sizer.count(kept))
