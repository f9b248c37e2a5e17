"""The Google ADK presets' parameters: the app's `EventsCompactionConfig` (ADK 2.13.0,
`google/adk/apps/_configs.py`), the agent's name and its call limit (`RunConfig.max_llm_calls`),
each checked at load as ADK checks it."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ctxlab.core.settings import SettingError


@dataclass(frozen=True, slots=True, kw_only=True)
class EventsCompactionConfig:
    """ADK's `EventsCompactionConfig` (the summarizer is the agent's own model). ADK has no
    defaults: at least one pair must be set, each pair as a whole (ADK's own check).

    Attributes:
        compaction_interval: summarise once this many new invocations ended since the last
            compaction (the sliding window).
        overlap_size: invocations before the new ones that the window summarises again.
        token_threshold: summarise when the latest prompt token count is at or over this.
        event_retention_size: raw events kept unsummarised by the token trigger.
    """

    compaction_interval: int | None = None
    overlap_size: int | None = None
    token_threshold: int | None = None
    event_retention_size: int | None = None

    def __post_init__(self) -> None:
        for first, second in (
            ("token_threshold", "event_retention_size"),
            ("compaction_interval", "overlap_size"),
        ):
            given = [name for name in (first, second) if getattr(self, name) is not None]
            if len(given) == 1:
                missing = second if given == [first] else first
                raise SettingError(
                    (missing,),
                    f"{first} and {second} must be set together (ADK's EventsCompactionConfig has no "
                    f"default for either); {given[0]} is set, so set {missing} too",
                )
        if self.token_threshold is None and self.compaction_interval is None:
            raise ValueError(
                "set at least one compaction trigger: the token-threshold pair or the sliding-window pair"
            )
        for name, low in (("compaction_interval", 1), ("overlap_size", 0)):
            self._at_least(name, low)
        for name, low in (("token_threshold", 1), ("event_retention_size", 0)):
            self._at_least(name, low)

    def _at_least(self, name: str, low: int) -> None:
        value = getattr(self, name)
        if value is not None and value < low:
            raise SettingError((name,), f"{name} must be at least {low}, got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class AdkParams:
    """The app's compaction config, the agent's name and its call limit.

    Attributes:
        events_compaction_config: the `App`'s `EventsCompactionConfig`.
        agent_name: the `LlmAgent`'s name (in the identity instruction and the summary lines); a
            Python identifier other than `user`, as ADK requires.
        max_llm_calls: `RunConfig.max_llm_calls`, model calls per invocation; 0 or less: no
            limit, as in ADK (which warns); at most 2**63 - 2, ADK's own bound.
    """

    events_compaction_config: EventsCompactionConfig = field(
        default_factory=lambda: EventsCompactionConfig(compaction_interval=3, overlap_size=1)
    )
    agent_name: str = "agent"
    max_llm_calls: int = 500

    def __post_init__(self) -> None:
        if not self.agent_name.isidentifier() or self.agent_name == "user":
            raise SettingError(
                ("agent_name",),
                f"agent_name={self.agent_name!r}: ADK refuses it (an agent's name is a Python "
                "identifier, and 'user' is kept for the end user); use letters, digits and "
                "underscores, not starting with a digit, such as 'agent'",
            )
        if self.max_llm_calls >= sys.maxsize:
            raise SettingError(
                ("max_llm_calls",),
                f"max_llm_calls={self.max_llm_calls}: ADK refuses {sys.maxsize} and above (its own "
                "check); use 0 for no limit, or a smaller count",
            )

    @property
    def call_limit(self) -> int:
        """The steps a reply may take: `max_llm_calls`, or `NO_CALL_LIMIT` when it is 0 or less
        (ADK enforces no limit then)."""
        return self.max_llm_calls if self.max_llm_calls > 0 else NO_CALL_LIMIT


NO_CALL_LIMIT = sys.maxsize
"""A step limit no reply reaches: ADK's `max_llm_calls` of 0 or less, which enforces none."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AdkTokenParams(AdkParams):
    """The token-threshold form (ADK has no defaults: 100,000 tokens, 10 events are ctxlab's)."""

    events_compaction_config: EventsCompactionConfig = field(
        default_factory=lambda: EventsCompactionConfig(token_threshold=100_000, event_retention_size=10)
    )
