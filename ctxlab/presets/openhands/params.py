"""The OpenHands presets' settings: the SDK's `LLMSummarizingCondenser` fields, the conversation's
iteration limit, and the hybrid's masking in front of the condenser.

Invariants:
- Every setting the SDK refuses is refused when the scenario loads, with the SDK's own bounds
  (`CondenserSettings.__post_init__`, `check_max_iterations`); the lab adds one of its own, an
  upper bound on `max_iterations` (`MAX_ITERATIONS`, a declared deviation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.settings import SettingError

DefaultSet = Literal["agent", "class"]
DEFAULT_SETS: dict[str, tuple[int, int]] = {"agent": (80, 4), "class": (240, 2)}
"""`default_condenser()` (the default agent's, 80 / 4) and the class's own (240 / 2)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CondenserSettings:
    """The `LLMSummarizingCondenser`'s settings.

    Attributes:
        defaults: which default set fills `max_size` and `keep_first` left unset: `agent`
            (`default_condenser()`, 80 / 4, what the SDK's default agent uses) or `class` (240 / 2).
        max_size: condense when the view holds more events than this.
        keep_first: events always kept at the start of the view, the system prompt included.
        max_tokens: condense when the request is over `min(max_tokens, the window)` tokens.
        minimum_progress: a condensation forgetting fewer than this share of the view is refused
            (between 0 and 1, both excluded).
        hard_reset_retries: summary attempts of a hard reset (1 or more).
        hard_reset_scaling: each retry cuts every event to this share of the previous cap
            (between 0 and 1, both excluded).

    The SDK's own field limits hold (`max_size` above 0, `keep_first` 0 or more, the ranges
    above), and `keep_first` below `max_size // 2 - 1`.
    """

    defaults: DefaultSet = "agent"
    max_size: int | None = None
    keep_first: int | None = None
    max_tokens: int | None = None
    minimum_progress: float = 0.1
    hard_reset_retries: int = 5
    hard_reset_scaling: float = 0.8

    def __post_init__(self) -> None:
        for name, holds, rule in (
            ("max_size", self.size > 0, "above 0"),
            ("keep_first", self.first >= 0, "0 or more"),
            ("minimum_progress", 0 < self.minimum_progress < 1, "between 0 and 1, both excluded"),
            ("hard_reset_retries", self.hard_reset_retries > 0, "1 or more"),
            ("hard_reset_scaling", 0 < self.hard_reset_scaling < 1, "between 0 and 1, both excluded"),
        ):
            if not holds:
                raise SettingError(
                    (name,),
                    f"condenser {name}={getattr(self, name)}: the SDK's LLMSummarizingCondenser "
                    f"refuses it (its own check); use a value {rule}",
                )
        if self.size // 2 - self.first - 1 <= 0:
            raise ValueError(
                f"condenser keep_first={self.first} leaves no room for a tail with max_size={self.size}: "
                "keep_first must be below max_size // 2 - 1 (the SDK's own check); lower keep_first or "
                "raise max_size"
            )

    @property
    def size(self) -> int:
        """`max_size` in force."""
        return self.max_size if self.max_size is not None else DEFAULT_SETS[self.defaults][0]

    @property
    def first(self) -> int:
        """`keep_first` in force."""
        return self.keep_first if self.keep_first is not None else DEFAULT_SETS[self.defaults][1]


MAX_ITERATIONS = 100_000
"""The most iterations a conversation may be given here (the SDK sets no upper bound): a window
the condensed view never fits in condenses again at every iteration, so a mistyped limit (1e9)
would run without end; no real run comes near it (declared as 2 in the parity checklist)."""


def check_max_iterations(max_iterations: int) -> None:
    """The conversation's iteration limit is 1 or more (the SDK's own check), and at most
    `MAX_ITERATIONS` (the lab's).

    Raises:
        SettingError: `max_iterations` is 0 or negative, or above `MAX_ITERATIONS`.
    """
    if max_iterations < 1:
        raise SettingError(
            ("max_iterations",),
            f"max_iterations={max_iterations}: the SDK's conversation refuses it (its own check: "
            "at least 1 iteration a run); use 1 or more (500 is the SDK's default)",
        )
    if max_iterations > MAX_ITERATIONS:
        raise SettingError(
            ("max_iterations",),
            f"max_iterations={max_iterations}: above the {MAX_ITERATIONS:,} a run may take here (a "
            "window the condensed view never fits in condenses at every iteration, so the run would "
            "not end); use a smaller limit (500 is the SDK's default)",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenHandsParams:
    """The SDK's condenser and the conversation's iteration limit (1 or more)."""

    condenser: CondenserSettings = field(default_factory=CondenserSettings)
    max_iterations: int = 500

    def __post_init__(self) -> None:
        check_max_iterations(self.max_iterations)


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridParams:
    """The Complexity Trap's hybrid: all but the last `n` observations elided (the paper's
    M = 10 turns, one observation each), then the SDK's condenser."""

    masking: LastNObservationsParams = field(default_factory=lambda: LastNObservationsParams(n=10))
    condenser: CondenserSettings = field(default_factory=CondenserSettings)
    max_iterations: int = 500

    def __post_init__(self) -> None:
        check_max_iterations(self.max_iterations)
