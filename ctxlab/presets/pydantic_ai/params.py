"""The settings of pydantic-ai-harness 0.62.0's compaction capabilities, named and defaulted as the
package names and defaults them (`ClearToolResults`, `SlidingWindowCompaction`,
`SummarizingCompaction`).

Each capability triggers on `max_messages`, `max_tokens` or `max_fraction` of the model's window
(`context_window` overrides the window; the lab's model window stands for the one the package
resolves from the model). The package refuses a capability with none of the three; the lab's
entry with none never compacts, so a preset's defaults stay buildable (a declared deviation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.settings import SettingError

REQUEST_LIMIT = 50
"""pydantic-ai's default `UsageLimits.request_limit` (pydantic-ai-slim 2.62.0)."""
LATE: tuple[str, ...] = ("request_limit",)
"""Settings added after results were published (`ctxlab.presets.entries.LATE_FIELDS`)."""


def _check_trigger(
    max_messages: int | None, max_tokens: int | None, max_fraction: float | None, context_window: int | None
) -> None:
    """The package's checks of a trigger (all three unset: the lab never compacts)."""
    if max_messages is not None and max_messages < 1:
        raise SettingError(("max_messages",), "max_messages must be positive.")
    if max_tokens is not None and max_fraction is not None:
        raise ValueError("Set at most one of max_tokens or max_fraction.")
    if max_tokens is not None and max_tokens < 1:
        raise SettingError(("max_tokens",), "max_tokens must be positive.")
    if max_fraction is not None and not 0 < max_fraction <= 1:
        raise SettingError(("max_fraction",), "max_fraction must be greater than 0 and at most 1.")
    if context_window is not None and context_window < 1:
        raise SettingError(("context_window",), "context_window must be positive.")


def _check_request_limit(request_limit: int | None) -> None:
    if request_limit is not None and request_limit < 1:
        raise SettingError(
            ("request_limit",),
            f"request_limit={request_limit}: a run could make no request; give 1 or more, or null "
            "for no limit",
        )


def token_trigger(
    max_tokens: int | None, max_fraction: float | None, context_window: int | None, window: int
) -> int | None:
    """The token threshold of a request: `max_tokens`, or the fraction of the window (at least 1).

    >>> token_trigger(None, 0.5, None, 1001), token_trigger(None, 0.5, 10, 1001)
    (500, 5)
    """
    if max_tokens is not None:
        return max_tokens
    if max_fraction is None:
        return None
    return max(1, int((context_window if context_window is not None else window) * max_fraction))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClearToolResultsParams:
    """`ClearToolResults` settings, with the harness's defaults.

    Attributes:
        max_messages: clear when more messages than this follow the newest cleared result (none: off).
        max_tokens: clear when the harness's estimate is above this (none: off).
        max_fraction: clear when the estimate is above this fraction of the window (none: off).
        context_window: the window a fraction applies to (none: the model's).
        keep_pairs: the newest tool call / return pairs left untouched (3).
        placeholder: what a cleared result holds (none: the text set's; the harness's
            `[tool result cleared]` under `texts: pydantic-ai`).
        exclude_tools: tools whose results are never cleared.
        clear_tool_inputs: also blank the cleared calls' arguments to `{}`.
        min_clear_tokens: clear only when that reclaims at least this many tokens (none: always).
        request_limit: pydantic-ai's `UsageLimits.request_limit`: the most model requests one
            run (a user turn) makes, summary requests included; the request past it ends the run
            with an error (50; none: no limit).
    """

    max_messages: int | None = None
    max_tokens: int | None = None
    max_fraction: float | None = None
    context_window: int | None = None
    keep_pairs: int = 3
    placeholder: str | None = None
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool = False
    min_clear_tokens: int | None = None
    request_limit: int | None = REQUEST_LIMIT
    __late_fields__: ClassVar[tuple[str, ...]] = LATE

    def __post_init__(self) -> None:
        _check_trigger(self.max_messages, self.max_tokens, self.max_fraction, self.context_window)
        _check_request_limit(self.request_limit)
        if self.keep_pairs < 0:
            raise SettingError(("keep_pairs",), "keep_pairs must be non-negative.")
        if self.min_clear_tokens is not None and self.min_clear_tokens < 0:
            raise SettingError(("min_clear_tokens",), "min_clear_tokens must be non-negative.")


@dataclass(frozen=True, slots=True, kw_only=True)
class SlidingWindowParams:
    """`SlidingWindowCompaction` settings, with the harness's defaults.

    Attributes:
        max_messages: trim when there are more messages than this (none: off).
        max_tokens: trim when the harness's estimate is above this (none: off).
        max_fraction: trim when the estimate is above this fraction of the window (none: off).
        context_window: the window a fraction applies to (none: the model's).
        keep_messages: the messages kept (40; the newest is always kept).
        keep_tokens: keep the shortest tail holding this many tokens instead (none: `keep_messages`).
        preserve_first_user_message: keep the first user request ahead of the tail.
        request_limit: pydantic-ai's `UsageLimits.request_limit`: the most model requests one
            run (a user turn) makes, summary requests included; the request past it ends the run
            with an error (50; none: no limit).
    """

    max_messages: int | None = None
    max_tokens: int | None = None
    max_fraction: float | None = None
    context_window: int | None = None
    keep_messages: int = 40
    keep_tokens: int | None = None
    preserve_first_user_message: bool = True
    request_limit: int | None = REQUEST_LIMIT
    __late_fields__: ClassVar[tuple[str, ...]] = LATE

    def __post_init__(self) -> None:
        _check_trigger(self.max_messages, self.max_tokens, self.max_fraction, self.context_window)
        _check_request_limit(self.request_limit)
        if self.keep_messages < 0:
            raise SettingError(("keep_messages",), "keep_messages must be non-negative.")
        if self.keep_tokens is not None and self.keep_tokens < 0:
            raise SettingError(("keep_tokens",), "keep_tokens must be non-negative.")


@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizingParams:
    """`SummarizingCompaction` settings, with the harness's defaults.

    Attributes:
        max_messages: summarize when there are more messages than this (none: off).
        max_tokens: summarize when the harness's estimate is above this (none: off).
        max_fraction: summarize when the estimate is above this fraction of the window (none: off).
        context_window: the window a fraction applies to (none: the model's).
        keep_messages: the messages kept after the summary (20).
        keep_tokens: keep the shortest tail holding this many tokens instead (none: `keep_messages`).
        preserve_first_user_message: keep the first user request ahead of the summary.
        incremental: update the newest earlier summary instead of summarizing it again.
        tool_return_max_chars: tool results cut to this many characters in the transcript (500;
            none: whole).
        request_limit: pydantic-ai's `UsageLimits.request_limit`: the most model requests one
            run (a user turn) makes, summary requests included; the request past it ends the run
            with an error (50; none: no limit).
    """

    max_messages: int | None = None
    max_tokens: int | None = None
    max_fraction: float | None = None
    context_window: int | None = None
    keep_messages: int = 20
    keep_tokens: int | None = None
    preserve_first_user_message: bool = True
    incremental: bool = True
    tool_return_max_chars: int | None = 500
    request_limit: int | None = REQUEST_LIMIT
    __late_fields__: ClassVar[tuple[str, ...]] = LATE

    def __post_init__(self) -> None:
        _check_trigger(self.max_messages, self.max_tokens, self.max_fraction, self.context_window)
        _check_request_limit(self.request_limit)
        if self.keep_messages < 0:
            raise SettingError(("keep_messages",), "keep_messages must be non-negative.")
        if self.keep_tokens is not None and self.keep_tokens < 0:
            raise SettingError(("keep_tokens",), "keep_tokens must be non-negative.")
        if self.tool_return_max_chars is not None and self.tool_return_max_chars < 1:
            raise SettingError(("tool_return_max_chars",), "tool_return_max_chars must be positive.")
