"""One AgentScope-style compression: trigger, split, summary request, overflow retry, apply.

The summary call itself is the engine's (it talks to a model); everything around it is here, as
pure steps over values, so a compression is applied all at once or not at all:

1. `check_trigger`: the full request (system prompt after hooks, summary, context, tool schemas)
   is counted; compression runs iff `count >= trigger_ratio * context_size` (a float).
2. `plan_compression`: an empty context over the trigger is an error (the system prompt, summary
   and tools alone are too big). Otherwise split with `reserve_ratio * context_size`; if nothing
   would be compressed, split again with a budget of 0 (not re-checked, as in AgentScope). Build
   the summary request and its pre-flight count (messages + schema tool); the overflow flag is
   set when that count is above the window (strict).
3. `overflow_retry_request`: only after a failed summary call with the flag set: drop the oldest
   compressible messages one at a time until the request (+ schema tool) is below
   `context_size * trigger_ratio` (strict), or all are dropped. Dropped messages still leave the
   context, unsummarised.
4. `apply_compression`: the new summary (rendered fields, or on failure the previous summary, or
   the truncation text), the offload reminder added once, the reserved context, and the empty
   usage-carrier message AgentScope adds when the reply message was compressed away or the
   context became empty (it counts 0 tokens but is one context message; the reply's later blocks
   go into it). No re-check follows: the next call may still be over the trigger.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from ctxlab.core.agentscope.split import Split, SplitInput, split_context
from ctxlab.core.agentscope.summary import Summary, SummaryRequest, build_summary_request
from ctxlab.core.messages.blocks import Block, HintBlock, Tally, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.latest import Running
from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.message import fixed_messages as fixed_messages  # noqa: PLC0414 (an explicit re-export)
from ctxlab.core.messages.tokens import TokenCounter, measure_all
from ctxlab.core.messages.tools import ToolSchema


class EmptyContextError(RuntimeError):
    """The request is over the trigger with an empty context: nothing can be compressed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompressionInput:
    """The state a compression reads."""

    system_prompt: str | None
    summary: Summary
    context: tuple[Message, ...]
    tools: tuple[ToolSchema, ...]
    context_size: int
    trigger_ratio: float
    reserve_ratio: float
    unfinished: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerCheck:
    """The request's tokens against the threshold."""

    tokens: int
    threshold: float

    @property
    def triggered(self) -> bool:
        """Compression runs at or above the threshold."""
        return self.tokens >= self.threshold


@dataclass(frozen=True, slots=True, kw_only=True)
class CompressionPlan:
    """What a compression will summarise and keep, and the request that asks for the summary."""

    split: Split
    zero_reserve_retry: bool
    request: SummaryRequest
    preflight_tokens: int
    overflow: bool


def check_trigger(
    inp: CompressionInput, counter: TokenCounter, context_tally: Tally | None = None
) -> TriggerCheck:
    """Count the full request and compare it with `trigger_ratio * context_size`.

    `context_tally` may carry the context's running size so the count costs O(1).
    """
    context = measure_all(counter, inp.context) if context_tally is None else context_tally
    size = measure_all(counter, fixed_messages(inp.system_prompt, inp.summary)) + context
    return TriggerCheck(tokens=counter.total(size, inp.tools), threshold=inp.trigger_ratio * inp.context_size)


def empty_context_message(inp: CompressionInput, threshold: float) -> str:
    """AgentScope's error text for an empty context over the trigger (threshold as a float)."""
    suffix = "and the compression summary " if inp.summary else ""
    return (
        f"The system prompt {suffix}exceed(s) the compression threshold ({threshold} tokens), "
        "cannot be compressed."
    )


def plan_compression(
    inp: CompressionInput,
    counter: TokenCounter,
    *,
    prompt: str,
    schema_tool: ToolSchema,
    instructions: tuple[HintBlock, ...] = (),
) -> CompressionPlan:
    """Split the context and build the summary request (steps 2 of the module docstring).

    Raises:
        EmptyContextError: the context is empty.
    """
    if not inp.context:
        threshold = inp.trigger_ratio * inp.context_size
        raise EmptyContextError(empty_context_message(inp, threshold))
    fixed = measure_all(counter, fixed_messages(inp.system_prompt, inp.summary))
    split_input = SplitInput(
        fixed=fixed,
        context=inp.context,
        tools=inp.tools,
        budget=inp.reserve_ratio * inp.context_size,
        unfinished=inp.unfinished,
    )
    split = split_context(split_input, counter)
    retry = not split.compress
    if retry:
        split = split_context(replace(split_input, budget=0.0), counter)
    request = build_summary_request(
        system_prompt=inp.system_prompt,
        old_summary=inp.summary,
        compress=split.compress,
        instructions=instructions,
        prompt=prompt,
        schema_tool=schema_tool,
    )
    preflight = counter.count(request.messages, (schema_tool,))
    return CompressionPlan(
        split=split,
        zero_reserve_retry=retry,
        request=request,
        preflight_tokens=preflight,
        overflow=preflight > inp.context_size,
    )


def overflow_retry_request(
    plan: CompressionPlan, inp: CompressionInput, counter: TokenCounter
) -> SummaryRequest:
    """The retry request without the oldest compressible messages (step 3)."""
    messages = plan.request.messages
    head = len(fixed_messages(inp.system_prompt, inp.summary))
    count = len(plan.split.compress)
    tools = (plan.request.schema_tool,)
    limit = inp.context_size * inp.trigger_ratio
    kept = messages
    for dropped in range(1, count + 1):
        kept = messages[:head] + messages[head + dropped :]
        if counter.count(kept, tools) < limit:
            break
    return SummaryRequest(messages=kept, schema_tool=plan.request.schema_tool)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyMark:
    """Which message is the current reply's, and whether it carries usage yet.

    AgentScope keeps token usage on the reply message; compression preserves it through an empty
    carrier message, which changes the context's message count.
    """

    reply_id: str
    has_usage: bool
    name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Applied:
    """The state after a compression."""

    summary: Summary
    context: tuple[Message, ...]
    reply: ReplyMark


def new_summary(rendered: str | None, previous: Summary, truncated_text: str) -> Summary:
    """The summary after a compression: the rendered one, else the previous, else the fallback."""
    if rendered is not None:
        return rendered
    return previous or truncated_text


def apply_compression(
    plan: CompressionPlan, summary: Summary, reply: ReplyMark, *, summary_succeeded: bool
) -> Applied:
    """Replace the context by the reserved part and add the usage carrier where AgentScope does."""
    context = plan.split.reserve
    carrier = Message(role="assistant", blocks=(), id=reply.reply_id, name=reply.name)
    if reply.has_usage and not _is_reply(context, reply.reply_id):
        context = (*context, carrier)
    if summary_succeeded and not context:
        context = (carrier,)
    has_usage = reply.has_usage or (summary_succeeded and _is_reply(context, reply.reply_id))
    mark = ReplyMark(reply_id=reply.reply_id, has_usage=has_usage, name=reply.name)
    return Applied(summary=summary, context=context, reply=mark)


def _is_reply(context: tuple[Message, ...], reply_id: str) -> bool:
    return bool(context) and context[-1].role == "assistant" and context[-1].id == reply_id


def reserved_read_paths(reserve: tuple[Message, ...], read_tool: str = "Read") -> frozenset[str]:
    """`file_path` arguments of the reserved calls named exactly `read_tool` (unparsable skipped).

    After a compression the read cache keeps only these paths, so writing or editing a file
    whose read was summarised away needs a fresh read.
    """
    paths: set[str] = set()
    for message in reserve:
        for block in message.blocks:
            if isinstance(block, ToolCallBlock) and block.name == read_tool:
                try:
                    arguments = json.loads(block.input)
                except json.JSONDecodeError:
                    continue
                if isinstance(arguments, dict) and isinstance(arguments.get("file_path"), str):
                    paths.add(arguments["file_path"])
    return frozenset(paths)


def unfinished_call_ids(context: tuple[Message, ...], reply_id: str) -> frozenset[str]:
    """Calls of the current reply message that have no result yet."""
    if not _is_reply(context, reply_id):
        return frozenset()
    blocks = context[-1].blocks
    if len(blocks) >= RESUMED_BLOCKS:  # a reply grows by a round at every call
        return _unanswered(blocks)
    answered = {b.id for b in blocks if isinstance(b, ToolResultBlock)}
    return frozenset(b.id for b in blocks if isinstance(b, ToolCallBlock) and b.id not in answered)


class _Unanswered:
    """The ids of the calls among the blocks taken that no block taken answers (a result before
    its call answers it too), kept as blocks come."""

    __slots__ = ("answered", "open")

    def __init__(self) -> None:
        self.open: set[str] = set()
        self.answered: set[str] = set()

    def take(self, block: Block) -> None:
        if isinstance(block, ToolCallBlock):
            if block.id not in self.answered:
                self.open.add(block.id)
        elif isinstance(block, ToolResultBlock):
            self.answered.add(block.id)
            self.open.discard(block.id)

    def value(self) -> frozenset[str]:
        return frozenset(self.open)


_unanswered = Running[frozenset[str]](_Unanswered)
