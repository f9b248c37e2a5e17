"""The decisions of pydantic-ai-harness 0.62.0's compaction capabilities, on the history as
pydantic-ai holds it (`ctxlab.presets.pydantic_ai.view`).

Each function takes a history and settings and says what the capability does to it: which tool
results `ClearToolResults` blanks, where `SlidingWindowCompaction` cuts and what it keeps, what
`SummarizingCompaction` summarizes, keeps and sends its summarizer. Nothing here reads a clock or a
model: the steps (`ctxlab.presets.pydantic_ai.steps`) apply the decisions to the stored context.

Source modules: `pydantic_ai_harness/compaction/_shared.py` (cutoffs, tool pairs, clearing),
`_clear_tool_results.py`, `_sliding_window_compaction.py`, `_summarizing_compaction.py`
(transcript, kept first user message, incremental update). The transcript's truncation marker
`[...]` is quoted from the harness (MIT licence).

Invariants:
- A kept history is the original one with whole messages or parts left out, in order; only a
  summary request is new (its part has `unit == -1`).
- Tool calls and their returns are never parted by a cut near them (`is_safe_cutoff`).
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.presets.pydantic_ai.cutoffs import find_safe_cutoff, find_token_cutoff, first_user_request
from ctxlab.presets.pydantic_ai.view import PAMessage, PAPart, estimate_tokens, message_chars

TRUNCATION_MARKER = "[...]"
CLEARED_ARGS = "{}"
_TAG_OPENER = re.compile(
    r"<(?=\s*(?:/\s*)?(?:messages?|previous-summary|harness_data)(?:[\s/>]|$))", re.IGNORECASE
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClearPlan:
    """The tool results to blank (by call id) and the calls whose arguments become `{}`."""

    results: frozenset[str] = frozenset()
    inputs: frozenset[str] = frozenset()


def tool_pairs(history: Sequence[PAMessage]) -> list[PAPart]:
    """The tool returns whose call is in the history, in the order they appear."""
    calls = {
        p.call_id for m in history if not m.is_request for p in m.parts if p.kind == "call" and p.call_id
    }
    return [p for m in history if m.is_request for p in m.parts if p.kind == "return" and p.call_id in calls]


def since_last_clear(history: Sequence[PAMessage], placeholder: str) -> int:
    """Messages after the newest request holding a cleared result (the whole history when none)."""
    for back, message in enumerate(reversed(history)):
        if message.is_request and any(p.kind == "return" and p.text == placeholder for p in message.parts):
            return back
    return len(history)


def clear_plan(
    history: Sequence[PAMessage], *, keep_pairs: int, exclude_tools: Sequence[str], clear_inputs: bool
) -> ClearPlan:
    """Every result but the newest `keep_pairs`, except the excluded tools' (`ClearToolResults.compact`)."""
    pairs = tool_pairs(history)
    clearable = [p for p in pairs[: max(0, len(pairs) - keep_pairs)] if p.name not in exclude_tools]
    ids = frozenset(p.call_id for p in clearable)
    return ClearPlan(results=ids, inputs=ids if clear_inputs else frozenset())


def cleared(history: Sequence[PAMessage], plan: ClearPlan, placeholder: str) -> tuple[PAMessage, ...]:
    """The history with the planned results and inputs blanked (already blank ones untouched); a
    message with no part blanked is kept as the same object, so what changed is found by identity."""
    out = []
    for message in history:
        parts = tuple(_cleared_part(part, plan, placeholder) for part in message.parts)
        out.append(message if parts == message.parts else PAMessage(kind=message.kind, parts=parts))
    return tuple(out)


def _cleared_part(part: PAPart, plan: ClearPlan, placeholder: str) -> PAPart:
    if part.kind == "return" and part.call_id in plan.results and part.text != placeholder:
        return dataclasses.replace(part, text=placeholder)
    if part.kind == "call" and part.call_id in plan.inputs and part.text != CLEARED_ARGS:
        return dataclasses.replace(part, text=CLEARED_ARGS)
    return part


def chars_cleared(history: Sequence[PAMessage], new: Sequence[PAMessage]) -> int:
    """How many counted characters `cleared` took from `history` to make `new`."""
    changed = [(m, n) for m, n in zip(history, new, strict=True) if m is not n]
    return message_chars([m for m, _ in changed]) - message_chars([n for _, n in changed])


def window_cutoff(
    history: Sequence[PAMessage], *, keep_messages: int, keep_tokens: int | None, instructions: str
) -> int:
    """Where `SlidingWindowCompaction` and `SummarizingCompaction` start the kept tail."""
    if keep_tokens is not None:
        return find_token_cutoff(history, keep_tokens, instructions)
    return find_safe_cutoff(history, keep_messages)


def slid(history: Sequence[PAMessage], cutoff: int, *, preserve_first_user: bool) -> tuple[PAMessage, ...]:
    """The tail from `cutoff`, after the first user request when it was cut off and is to be kept."""
    tail = tuple(history[cutoff:])
    first = first_user_request(history)
    if preserve_first_user and first is not None and first < cutoff:
        return (history[first], *tail)
    return tail


def kept_first_user(message: PAMessage) -> PAMessage:
    """The first user request as a summary keeps it: its parts up to the first summary after the
    user's prompt, without summaries (what follows belongs to later turns)."""
    parts = message.parts
    turn = next((i for i, p in enumerate(parts) if p.kind == "user"), 0)
    end = next((i for i in range(turn, len(parts)) if parts[i].kind == "summary"), len(parts))
    return PAMessage(kind="request", parts=tuple(p for p in parts[:end] if p.kind != "summary"))


def previous_summary(history: Sequence[PAMessage]) -> str | None:
    """The newest summary in the history."""
    for message in reversed(history):
        for part in reversed(message.parts):
            if part.kind == "summary" and part.text:
                return part.text
    return None


def without_summaries(history: Sequence[PAMessage]) -> tuple[PAMessage, ...]:
    """The history without summary parts; a request left empty goes."""
    out = []
    for message in history:
        if message.is_request and any(p.kind == "summary" for p in message.parts):
            parts = tuple(p for p in message.parts if p.kind != "summary")
            if parts:
                out.append(PAMessage(kind="request", parts=parts))
            continue
        out.append(message)
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryPlan:
    """What a summary replaces, and what it keeps.

    Attributes:
        span: the messages summarized.
        first: the first user request kept ahead of the summary (None: none).
        preserved: the kept tail.
        previous: the earlier summary this one updates (incremental), or None.
    """

    span: tuple[PAMessage, ...]
    first: PAMessage | None
    preserved: tuple[PAMessage, ...]
    previous: str | None


def summary_plan(
    history: Sequence[PAMessage],
    cutoff: int,
    *,
    preserve_first_user: bool,
    keep_tokens: int | None,
    incremental: bool,
) -> SummaryPlan | None:
    """`SummarizingCompaction.compact` up to the summary call; None when it does nothing."""
    if cutoff <= 0:
        return None
    span, preserved = tuple(history[:cutoff]), tuple(history[cutoff:])
    first = None
    index = first_user_request(history)
    if preserve_first_user and index is not None and index < cutoff:
        first = kept_first_user(history[index])
    if keep_tokens and all(_adds_nothing(m, first) for m in span):
        return None  # re-summarizing only an earlier summary would cost a call on every request
    previous = previous_summary(history) if incremental else None
    if previous is not None:
        preserved = without_summaries(preserved)
    return SummaryPlan(span=span, first=first, preserved=preserved, previous=previous)


def _adds_nothing(message: PAMessage, first: PAMessage | None) -> bool:
    if first is not None and message == first:
        return True
    return message.is_request and all(p.kind == "summary" for p in message.parts)


def neutralize(text: str) -> str:
    """The transcript's own tags escaped, so content cannot open or close one."""
    return _TAG_OPENER.sub("&lt;", text)


def truncate(text: str, max_chars: int) -> str:
    """`text` cut to `max_chars` characters, the marker counted within them."""
    if len(text) <= max_chars:
        return text
    if max_chars <= len(TRUNCATION_MARKER):
        return TRUNCATION_MARKER[:max_chars]
    return f"{text[: max_chars - len(TRUNCATION_MARKER)]}{TRUNCATION_MARKER}"


def _element(role: str, content: str, *, name: str | None = None, max_chars: int | None = None) -> str:
    attrs = f' name="{html.escape(name)}"' if name is not None else ""
    body = neutralize(content)
    if max_chars is not None:
        body = truncate(body, max_chars)
    return f'<message role="{role}"{attrs}>\n{body}\n</message>'


def transcript(history: Sequence[PAMessage], *, skip_summary: bool, tool_return_max_chars: int | None) -> str:
    """The span as the summarizer reads it: one element per part (`format_transcript`)."""
    elements = []
    for message in history:
        for part in message.parts:
            match part.kind:
                case "user":
                    elements.append(_element("user", part.text if part.shown is None else part.shown))
                case "summary" if not skip_summary and part.text:
                    elements.append(_element("summary", part.text))
                case "return":
                    elements.append(
                        _element("tool_return", part.text, name=part.name, max_chars=tool_return_max_chars)
                    )
                case "text":
                    elements.append(_element("assistant", part.text))
                case "call":
                    elements.append(_element("tool_call", part.text, name=part.name))
    return "\n".join(elements)


def summary_prompt(
    plan: SummaryPlan, *, prompt: str, incremental_text: str, tool_return_max_chars: int | None
) -> str:
    """The user prompt of the summary request."""
    formatted = transcript(
        plan.span, skip_summary=plan.previous is not None, tool_return_max_chars=tool_return_max_chars
    )
    text = prompt.format(messages=formatted)
    if plan.previous is not None:
        previous = f"<previous-summary>\n{neutralize(plan.previous)}\n</previous-summary>"
        text = f"{text}\n\n{incremental_text}\n\n{previous}"
    return text


def over_trigger(
    history: Sequence[PAMessage], *, max_messages: int | None, max_tokens: int | None, instructions: str
) -> bool:
    """Whether the history is over either threshold (`exceeds`)."""
    if max_messages is not None and len(history) > max_messages:
        return True
    return max_tokens is not None and estimate_tokens(history, instructions) > max_tokens
