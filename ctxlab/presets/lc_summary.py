"""LangChain 1.5.0's summarization decisions, shared by the families that build on its
`SummarizationMiddleware` (the `langchain` and `deepagents` families).

Pure functions over the LangChain view (`ctxlab.presets.lc_messages`): the trigger as OR-ed
clauses of AND-ed conditions (`_should_summarize`), the safe cutoff that never separates a tool
message from its call (`_find_safe_cutoff_point`), and the kept tail in messages, tokens or a
fraction of the window (`_determine_cutoff_index`). Source: langchain 1.5.0
`agents/middleware/summarization.py`.

Invariants:
- A clause holds when every condition of it reaches its threshold (`>=`); a fraction is of the
  window, at least 1 token; no clause: never.
- A cutoff lands on a message that is not a tool message, or at the end of the view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, cast

from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.core.messages.model import ModelError
from ctxlab.core.settings import SettingError, SettingPath
from ctxlab.presets.lc_messages import Counter, LCMessage
from ctxlab.problems import did_you_mean

Metric = Literal["tokens", "messages", "fraction"]
Clause = dict[str, float]
TriggerForm = ContextSize | Clause | tuple[ContextSize | Clause, ...]
"""A trigger as LangChain takes it: one `(kind, value)`, one AND-clause mapping, or a list of
either (OR)."""

SUMMARY_ATTEMPTS = 3
"""`Runnable.with_retry`'s attempts, as the middleware configures it."""
FALLBACK_MESSAGES = 15
"""What the middleware summarizes when trimming fails: the last 15 messages."""


def clauses(trigger: TriggerForm | None) -> tuple[tuple[tuple[Metric, float], ...], ...]:
    """The trigger as OR-ed clauses of AND-ed conditions.

    >>> clauses(ContextSize("tokens", 4000))
    ((('tokens', 4000),),)
    >>> clauses(({"tokens": 4000, "messages": 10}, ContextSize("fraction", 0.8)))
    ((('tokens', 4000), ('messages', 10)), (('fraction', 0.8),))

    Raises:
        SettingError: an unknown metric, a value out of range, or an empty clause, at its place in
            the trigger (`[2, 1]`: the value of its third clause).
    """
    if trigger is None:
        return ()
    single = isinstance(trigger, Mapping) or (bool(trigger) and isinstance(trigger[0], str))
    items = cast(Sequence[ContextSize | Clause], (trigger,) if single else trigger)
    out = []
    for index, item in enumerate(items):
        at: SettingPath = () if single else (index,)
        if isinstance(item, Mapping):
            if not item:
                raise SettingError(at, "a trigger clause names at least one of tokens, messages, fraction")
            out.append(tuple(_condition(str(k), v, (*at, str(k)), (*at, str(k))) for k, v in item.items()))
        else:
            out.append((_condition(str(item[0]), item[1], (*at, 0), (*at, 1)),))
    return tuple(out)


def _condition(
    kind: str, value: float, metric_at: SettingPath, value_at: SettingPath
) -> tuple[Metric, float]:
    """One condition of a trigger, its metric's error at `metric_at` and its value's at `value_at`."""
    try:
        return checked(kind, value, "trigger")
    except ValueError as error:
        raise SettingError(value_at if kind in METRICS else metric_at, str(error)) from None


METRICS = ("tokens", "messages", "fraction")


def checked(kind: str, value: float, where: str) -> tuple[Metric, float]:
    """One condition, validated as LangChain validates it; a refusal says how to write it."""
    if kind == "fraction":
        if not 0 < value <= 1:
            fix = f"for {value:g} tokens write [tokens, {value:g}]" if value > 1 else "use a fraction above 0"
            raise ValueError(f"a {where} fraction is in (0, 1], got {value}; {fix}")
    elif kind in {"tokens", "messages"}:
        if value <= 0:
            raise ValueError(f"{where} thresholds are above 0, got {value}; use a count of 1 or more")
    else:
        raise ValueError(
            f"{where} metric {kind!r} is not one of tokens, messages, fraction{did_you_mean(kind, METRICS)}"
        )
    return cast(Metric, kind), value


def _window_threshold(window: int, value: float) -> int:
    return max(1, int(window * value))


def should_summarize(
    rules: tuple[tuple[tuple[Metric, float], ...], ...], count: int, tokens: int, window: int
) -> bool:
    """Whether any clause holds (every condition of it reached)."""
    for clause in rules:
        held = True
        for kind, value in clause:
            if kind == "messages":
                held = count >= value
            elif kind == "tokens":
                held = tokens >= value
            else:
                held = tokens >= _window_threshold(window, value)
            if not held:
                break
        if held:
            return True
    return False


def safe_cutoff_point(view: Sequence[LCMessage], cut: int) -> int:
    """A cut on a tool message moves back to the AI message that made one of the calls at the
    cut, or forward past the tool messages when none did."""
    if cut >= len(view) or view[cut].kind != "tool":
        return cut
    ids = set()
    end = cut
    while end < len(view) and view[end].kind == "tool":
        if view[end].tool_call_id:
            ids.add(view[end].tool_call_id)
        end += 1
    for i in range(cut - 1, -1, -1):
        message = view[i]
        if message.kind == "ai" and ids & {c.id for c in message.tool_calls if c.id}:
            return i
    return end


def keep_cutoff(
    view: Sequence[LCMessage], keep: ContextSize, window: int, counter: Counter, plain: Counter
) -> int:
    """Where the kept tail starts (`_determine_cutoff_index`)."""
    kind, value = keep
    n = len(view)
    if kind == "messages":
        return 0 if n <= value else safe_cutoff_point(view, n - int(value))
    target = max(1, int(value) if kind == "tokens" else int(window * value))
    if n == 0 or counter(view) <= target:
        return 0
    left, right, candidate = 0, n, n
    for _ in range(n.bit_length() + 1):
        if left >= right:
            break
        mid = (left + right) // 2
        if plain(view[mid:]) <= target:
            candidate, right = mid, mid
        else:
            left = mid + 1
    if candidate == n:
        candidate = left
    if candidate >= n:
        if n == 1:
            return 0
        candidate = n - 1
    return safe_cutoff_point(view, candidate)


def summary_failure(outcome_error: Exception | None) -> Exception:
    """The error a failed summary attempt raises: the model's, or the breaker's refusal to call it.

    A blank answer is no failure: LangChain strips it and goes on with an empty summary.
    """
    return outcome_error if outcome_error is not None else ModelError("the summary breaker is open")
