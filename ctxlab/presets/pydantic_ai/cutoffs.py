"""Where the harness may cut a pydantic-ai history (`view.PAMessage`): never between a tool call
and its return near the cut, and, cutting by tokens, keeping the calls the kept returns answer.

Invariants:
- Every function is pure; a cutoff is an index into the history (0: no cut).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxlab.presets.pydantic_ai.view import CHARS_PER_TOKEN, PAMessage, estimate_tokens, message_chars

TOOL_PAIR_SEARCH_RANGE = 5


def is_safe_cutoff(history: Sequence[PAMessage], cutoff: int) -> bool:
    """Whether cutting before `cutoff` leaves no call of a nearby response apart from its return.

    Only responses within `TOOL_PAIR_SEARCH_RANGE` messages either side of the cut are looked at.
    """
    if cutoff >= len(history):
        return True
    for i in range(
        max(0, cutoff - TOOL_PAIR_SEARCH_RANGE), min(len(history), cutoff + TOOL_PAIR_SEARCH_RANGE)
    ):
        if history[i].is_request:
            continue
        calls = set(history[i].call_ids())
        if not calls:
            continue
        for j in range(i + 1, len(history)):
            if (
                history[j].is_request
                and calls & set(history[j].return_ids())
                and (i < cutoff) != (j < cutoff)
            ):
                return False
    return True


def find_safe_cutoff(history: Sequence[PAMessage], keep: int) -> int:
    """Where the tail of `keep` messages (at least one) starts, moved back to a safe cut (0: no cut)."""
    keep = max(keep, 1)
    if len(history) <= keep:
        return 0
    for index in range(len(history) - keep, -1, -1):
        if is_safe_cutoff(history, index):
            return index
    return 0


def _with_call_dependencies(history: Sequence[PAMessage], cutoff: int) -> int:
    """The cut moved back so that every return kept keeps the nearest earlier call it answers."""
    calls: dict[str, int] = {}
    earliest: list[int] = []
    for index, message in enumerate(history):
        first = index
        if message.is_request:
            for call_id in message.return_ids():
                first = min(first, calls.get(call_id, index))
        else:
            for call_id in message.call_ids():
                calls[call_id] = index
        earliest.append(first)
    for index in range(len(history) - 1, -1, -1):
        if index < cutoff:
            break
        cutoff = min(cutoff, earliest[index])
    return cutoff


def find_token_cutoff(history: Sequence[PAMessage], target: int, instructions: str) -> int:
    """Where the shortest tail holding `target` tokens of message text starts (with the calls its
    returns need); a zero target keeps the tail that fits in nothing, the instructions counted."""
    if target > 0:

        def tail(start: int) -> int:
            return message_chars(history[start:]) // CHARS_PER_TOKEN

        lo, hi = 0, len(history)
        while lo < hi:
            mid = (lo + hi) // 2
            if tail(mid) >= target:
                lo = mid + 1
            else:
                hi = mid
        return _with_call_dependencies(history, max(0, lo - 1))
    if not history or estimate_tokens(history, instructions) <= 0:
        return 0
    lo, hi, candidate = 0, len(history), len(history)
    while lo < hi:
        mid = (lo + hi) // 2
        if estimate_tokens(history[mid:], instructions) <= 0:
            candidate, hi = mid, mid
        else:
            lo = mid + 1
    candidate = min(candidate, max(0, len(history) - 1))
    for index in range(candidate, -1, -1):
        if is_safe_cutoff(history, index):
            return index
    return 0


def first_user_request(history: Sequence[PAMessage]) -> int | None:
    """The index of the first request holding a user prompt."""
    return next(
        (i for i, m in enumerate(history) if m.is_request and any(p.kind == "user" for p in m.parts)), None
    )
