"""Clearing old tool results: Anthropic's context editing, and the value every in-place clearing returns.

A clearing edits the stored context (results keep their id, name, state and place; only their
content changes). Sources:

- `clear_tool_uses`: Anthropic context editing `clear_tool_uses_20250919` (docs.claude.com,
  build-with-claude/context-editing; beta `context-management-2025-06-27`). Applied by the API to
  each request; the client keeps the full history (`persist=False`).

LangChain's `ClearToolUsesEdit` counts with LangChain's own counter, so it lives with its family
(`ctxlab.presets.langchain.exact`). The other families that edit results in place build on
`Clearing` and `replace_results`: observation elision (`observations`) and large-result eviction
(`large_results`); the protocol-blind window is `window`.

Invariants:
- A clearing keeps each call and its result in place, so it never causes an `openai` or
  `anthropic` protocol violation.
- Placeholders are ctxlab's own wording; their `{name}` placeholders are filled in one pass
  (`templates.fill`), so a value holding braces is inserted as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ctxlab.core.compaction.plans import Plans, Verdict
from ctxlab.core.messages.blocks import Block, Tally, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.edits import holds_only, replace_blocks, with_output
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
    tally_after,
)
from ctxlab.core.messages.tokens import TokenCounter
from ctxlab.core.messages.units import (
    BlockRef,
    ViewUnit,
    call_blocks,
    call_declarations,
    calls_by_id,
    result_block,
    result_ref,
    view_units,
)
from ctxlab.core.settings import SettingError


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


def result_units(units: Sequence[ViewUnit]) -> list[ViewUnit]:
    """The view units that are tool results, in order."""
    return [u for u in units if u.kind == "result"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AnthropicClearParams:
    """`clear_tool_uses_20250919` settings, with the API's defaults.

    Attributes:
        trigger: the edit applies once the prompt exceeds this (API default 100,000 input
            tokens); 0 or more.
        trigger_kind: `input_tokens`, or `tool_uses` to count tool calls instead.
        keep: the most recent tool uses (call/result pairs) kept intact (API default 3); 0 or
            more.
        clear_at_least: when the edit would reclaim fewer tokens than this, it is not applied
            (API default: none); 0 or more.
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

    def __post_init__(self) -> None:
        """The API's three numbers are counts, so none is negative (a scenario's typo would
        otherwise clear at every request or keep nothing, silently)."""
        for name in ("trigger", "keep", "clear_at_least"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise SettingError(
                    (name,),
                    f"{name}={value}: Anthropic's clear_tool_uses takes a count of "
                    f"{_COUNTED[name]} here, and a count is not negative; use 0 or more",
                )


_COUNTED = {
    "trigger": "input tokens or tool uses",
    "keep": "tool uses",
    "clear_at_least": "input tokens",
}


def clear_tool_uses(
    messages: Sequence[Message], *, sizer: Sizer, params: AnthropicClearParams = AnthropicClearParams()
) -> Clearing:
    """Anthropic's tool-use clearing: once over the trigger, every result but the `keep` most
    recent becomes the placeholder, oldest first, unless that reclaims under `clear_at_least`.

    Tool uses are counted as answered calls; `keep` counts excluded tools too. A result already
    holding the placeholder is left alone (it matters only with `persist`). The verdicts of the
    history last cleared are kept (`plans`), so a request costs what its history gained; with
    `clear_tool_inputs` the whole history is read at every call.
    """
    if params.clear_tool_inputs:
        return _cleared_at_once(messages, sizer, params)
    declared = call_declarations(messages)
    calls = calls_by_id(declared)
    tally = sizer.size(messages)
    before = sizer.tokens(tally)
    unchanged = Clearing(messages=tuple(messages), tokens_before=before, tokens_after=before)
    if (before if params.trigger_kind == "input_tokens" else len(calls)) <= params.trigger:
        return unchanged
    judge = _AnthropicJudge(calls, len(calls) == len(declared), params, sizer.counter)
    plan = _PLANS.plan(messages, (params, sizer.counter), judge)
    applied = plan.applied(params.keep)
    after = sizer.tokens(tally + plan.delta(applied))
    short = params.clear_at_least is not None and before - after < params.clear_at_least
    if not plan.clearing(applied) or short:
        return unchanged
    return Clearing(
        messages=plan.edited(messages, applied),
        cleared=plan.cleared_ids(applied),
        tokens_before=before,
        tokens_after=after,
    )


@dataclass(frozen=True, slots=True)
class _AnthropicJudge:
    """A result is a tool use when any message declares its call (the last declaration of the
    id); kept verdicts stand only while call ids are unique."""

    calls: Mapping[str, tuple[BlockRef, ToolCallBlock]]
    unique: bool
    params: AnthropicClearParams
    counter: TokenCounter

    def start(self) -> object:
        return None

    def resumable(self) -> bool:
        return self.unique

    def judge(self, message: Message, position: int, carry: object) -> tuple[list[Verdict], object]:
        return self.judge_from(message, position, carry, 0)

    def judge_from(
        self, message: Message, position: int, carry: object, first: int
    ) -> tuple[list[Verdict], object]:
        """The verdicts of the results at blocks `first` on: each result is a view unit of its
        own, judged from itself and the declaration of its call."""
        verdicts: list[Verdict] = []
        blocks = message.blocks
        for at in range(first, len(blocks)):
            result = blocks[at]
            if not isinstance(result, ToolResultBlock):
                continue
            ref, call_id = BlockRef(position, at), result.id
            found = self.calls.get(call_id)
            if found is None:
                verdicts.append(Verdict(ref, call_id, ranked=False, reads=position, awaits=call_id))
                continue
            call_ref, call = found
            reads = max(position, call_ref.message)
            if call.name in self.params.exclude_tools or holds_only(result, self.params.placeholder):
                verdicts.append(Verdict(ref, call.id, reads=reads))
                continue
            cleared = with_output(result, self.params.placeholder)
            delta = self.counter.measure(cleared) - self.counter.measure(result)
            verdicts.append(Verdict(ref, call.id, cleared=cleared, delta=delta, reads=reads))
        return verdicts, carry


_PLANS = Plans()


def _cleared_at_once(messages: Sequence[Message], sizer: Sizer, params: AnthropicClearParams) -> Clearing:
    """`clear_tool_uses` worked out from the whole history (inputs may be cleared too)."""
    calls = call_blocks(messages)
    pairs = [u for u in result_units(view_units(messages)) if u.call_ids[0] in calls]
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
        if call.name in params.exclude_tools or holds_only(result, params.placeholder):
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


def replace_results(messages: Sequence[Message], plan: Sequence[tuple[ViewUnit, str]]) -> Clearing:
    """`messages` with each planned result's output replaced by its text (calls kept in place)."""
    edits: dict[BlockRef, Block] = {}
    cleared: list[str] = []
    for unit, text in plan:
        result = result_block(messages, unit)
        if not holds_only(result, text):
            edits[result_ref(unit)] = with_output(result, text)
            cleared.append(result.id)
    return Clearing(messages=replace_blocks(messages, edits), cleared=tuple(cleared))
