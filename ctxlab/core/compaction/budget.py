"""Budget zones (window, reserve for output, trigger buffer) and prompt-only trimming.

Source: nonoka `WorkingMemory` (github.com/fyerfyer/Nonoka-agent, `nonoka/core/memory.py` @
73b4ea7; defaults 8192 / 4096 / 2048) and, for the last safety net, the prompt-copy trimming the
seed document quotes (`src/core/context.ts`): when even compaction cannot bring a request under
the window, trim a copy of the request, never the stored history.

Invariants:
- `target = max_tokens - reserve_output_tokens`, or `max_tokens` when the reserve leaves nothing;
  `trigger = max(max_tokens - compaction_buffer_tokens, target)`, so a buffer larger than the
  reserve can never put the trigger below the target (which would compact without progress).
- Compaction fires when the request is strictly above the trigger and aims at the target.
- `trim_prompt` only returns a copy: it never edits what it is given. It drops whole protocol
  units from the front (never a call without its results), never a system unit, and never a
  unit that reaches into the last `keep_last` view messages; the summary travels beside the
  context (in the sizer's overhead) and is never trimmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ctxlab.core.messages.blocks import ZERO
from ctxlab.core.messages.drops import drop_units
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
    unit_tallies,
)
from ctxlab.core.messages.units import protocol_units, view_units
from ctxlab.core.settings import SettingError

Zone = Literal["target", "buffer", "compact", "overflow"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetParams:
    """nonoka's three numbers (tokens).

    Attributes:
        max_tokens: the model's window; 1 or more.
        reserve_output_tokens: room kept for the model's reply; compaction aims below
            `max_tokens - reserve_output_tokens`; 1 or more.
        compaction_buffer_tokens: compaction fires this far below the window; 0 or more.

    The bounds are those of nonoka's `RuntimeLimits` (`max_context_tokens`,
    `reserve_output_tokens`, `compaction_buffer_tokens`), through which its runner sets them.
    """

    max_tokens: int = 8192
    reserve_output_tokens: int = 4096
    compaction_buffer_tokens: int = 2048

    def __post_init__(self) -> None:
        for name, low, fix in (
            ("max_tokens", 1, "give the window in tokens (nonoka: 8192)"),
            ("reserve_output_tokens", 1, "use 1 or more (nonoka: 4096)"),
            ("compaction_buffer_tokens", 0, "use 0 to compact only at the window, or more (nonoka: 2048)"),
        ):
            value = getattr(self, name)
            if value < low:
                raise SettingError(
                    (name,), f"{name}={value}: nonoka's runtime limits refuse a value below {low}; {fix}"
                )


class Zones(NamedTuple):
    """Where compaction aims (`target`), where it fires (`trigger`), and the window."""

    target: int
    trigger: int
    window: int


def zones(params: BudgetParams = BudgetParams()) -> Zones:
    """The target, trigger and window of `params`.

    >>> zones()
    Zones(target=4096, trigger=6144, window=8192)
    >>> zones(BudgetParams(max_tokens=1000, reserve_output_tokens=2000, compaction_buffer_tokens=100))
    Zones(target=1000, trigger=1000, window=1000)
    """
    target = params.max_tokens - params.reserve_output_tokens
    if target <= 0:
        target = params.max_tokens
    trigger = max(params.max_tokens - params.compaction_buffer_tokens, target)
    return Zones(target=target, trigger=trigger, window=params.max_tokens)


def should_compact(tokens: int, params: BudgetParams = BudgetParams()) -> bool:
    """True when a request of `tokens` is strictly above the trigger.

    >>> should_compact(6144), should_compact(6145)
    (False, True)
    """
    return tokens > zones(params).trigger


def zone_of(tokens: int, params: BudgetParams = BudgetParams()) -> Zone:
    """The zone a request of `tokens` is in.

    >>> [zone_of(n) for n in (4096, 4097, 6145, 8193)]
    ['target', 'buffer', 'compact', 'overflow']
    """
    target, trigger, window = zones(params)
    if tokens > window:
        return "overflow"
    if tokens > trigger:
        return "compact"
    return "target" if tokens <= target else "buffer"


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptTrimParams:
    """The last safety net: how many trailing view messages always stay (the seed: 2; 0 or more).

    Attributes:
        keep_last: trailing view messages never trimmed (2); 0 or more.
    """

    keep_last: int = 2

    def __post_init__(self) -> None:
        if self.keep_last < 0:
            raise SettingError(
                ("keep_last",),
                f"keep_last={self.keep_last}: a count of messages is not negative (below 0 it "
                "would keep none, as 0 does); use 0 to let every message be trimmed, or more",
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptTrim:
    """A trimmed copy of a request's context.

    Attributes:
        messages: the context to send for this one request (the stored one is unchanged).
        dropped: view indices (of the untrimmed context) left out of this request.
        tokens: tokens of the trimmed request (overhead and tools included).
        fits: whether `tokens` is at or under the limit.
    """

    messages: tuple[Message, ...]
    dropped: tuple[int, ...]
    tokens: int
    fits: bool


def trim_prompt(
    messages: Sequence[Message],
    *,
    limit: int,
    sizer: Sizer,
    params: PromptTrimParams = PromptTrimParams(),
) -> PromptTrim:
    """A copy of the context trimmed from the front until the request fits `limit`.

    Trimming stops at the first protocol unit it may not drop.
    """
    units = view_units(messages)
    tallies = unit_tallies(messages, sizer.counter)
    tally = sizer.size(messages)
    keep_from = len(units) - params.keep_last
    dropped: list[int] = []
    for group in protocol_units(units):
        if sizer.tokens(tally) <= limit or group.last >= keep_from:
            break
        if any(units[i].kind == "system" for i in group.units):
            continue
        dropped.extend(group.units)
        tally = tally - sum((tallies[i] for i in group.units), ZERO)
    trimmed = drop_units(messages, units, dropped)
    tokens = sizer.count(trimmed)
    return PromptTrim(messages=trimmed, dropped=tuple(sorted(dropped)), tokens=tokens, fits=tokens <= limit)
