"""Context events: the typed record of what a strategy or the engine did to the context.

An event is a kind and, for the kinds that need one, a detail (`injected` says which runtime
state it injected). Events are recorded between model calls and attached to the next call
(`ctxlab.engine.trace`); the results write them as `;`-joined text in `calls.events` and one row
each in the `events` table. The vocabulary is pure (stdlib only), so the engine and the presets
that record events and the analyses that read them use the same names.

Invariants:
- Every event the lab records is an `EventKind`; nothing else reaches the recorder.
- A kind in `DETAILED` always has a non-empty detail; every other kind never has one.
- `str(event)` is the text the results have always shown: the kind, or `kind:detail`. It never
  holds a `;` (the separator of `calls.events`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class EventKind(StrEnum):
    """Every kind of context event, by the text the results show for it."""

    COMPRESSED = "compressed"
    """The older part of the stored context was replaced by a summary, or by a fallback when the
    summary failed. AgentScope, LangChain and DeepAgents, OpenHands' condenser, Nonoka, Strands'
    summarizing manager."""

    SUMMARY_FAILED = "summary_failed"
    """A summary call gave no usable summary; the strategy kept or cut the context without one.
    DeepAgents (the shared free-text step), OpenHands' condenser, Nonoka; LangChain's summary
    raises instead, after its retries."""

    SUMMARY_DISABLED = "summary_disabled"
    """After its limit of failed summaries in a row, the strategy stops asking for summaries and
    compacts deterministically from then on. Nonoka."""

    OVERFLOW_RETRY = "overflow_retry"
    """A summary request was over the window and is retried with less of the context. AgentScope."""

    OFFLOADED = "offloaded"
    """Content left the context for a workspace file (a cut tool result's rest, compressed
    messages, a large result replaced by a stub). AgentScope, DeepAgents."""

    TRUNCATED = "truncated"
    """A tool result was cut at the tool-result limit (AgentScope), or the oldest results to their
    ends after a refused request (Strands' sliding window)."""

    IMAGES_REMOVED = "images_removed"
    """Images were removed from the context. AgentScope."""

    INJECTED = "injected"
    """A runtime-state hint was appended to the reply; the detail names what it told
    (`current-time`, `tasks`, `context-length`, `tool-error`), one event each. AgentScope."""

    CLEARED = "cleared"
    """Tool results (or their calls) were replaced by placeholders, in the stored context or
    newly in the request. Anthropic's and LangChain's clearing, SWE-agent's elision (and so
    openhands-hybrid's masking), the OpenAI Agents SDK's `ToolOutputTrimmer` (a preview)."""

    DROPPED = "dropped"
    """The request newly leaves out messages that fall outside the window. Sliding window, Strands'
    sliding window (which removes them from the stored context), the
    OpenAI Agents SDK's session `limit`."""

    TRIMMED = "trimmed"
    """The request newly leaves out its oldest messages to fit. Nonoka."""

    MICROCOMPACTED = "microcompacted"
    """Superseded tool results were replaced by a placeholder. Nonoka."""

    EVICTED = "evicted"
    """Old tool results were evicted to the evidence ledger to make the context fit. Nonoka."""

    CHECKPOINTED = "checkpointed"
    """A summary was written to a workspace checkpoint; the context keeps its reference
    (`active_checkpoint: <path>`) and a one-line preview. Nonoka with `checkpoint`."""

    LEDGER_DROPPED = "ledger_dropped"
    """The evidence ledger was over its size and dropped its oldest items. Nonoka."""

    COMPACTION_STOPPED = "compaction_stopped"
    """After too many futile compactions in a row, the stoppable steps are skipped until the next
    user turn. Every strategy built from steps."""

    ITERATION_LIMIT = "iteration_limit"
    """The reply stopped at the framework's own limit of steps per reply, condensations
    included, without a forced answer. OpenHands (the SDK conversation's iteration limit)."""

    CONTEXT_OVERFLOW = "context_overflow"
    """The provider refused a request over the model's window; the strategy reduced the context
    and sent it again. Strands (its managers reduce only then, or after a turn)."""

    LOOP_WARNING = "loop_warning"
    """The engine flagged a compaction that reclaimed under 1% or left the request at or above its
    trigger (`ctxlab.engine.progress`). Every strategy that compacts."""


DETAILED = frozenset({EventKind.INJECTED})
"""The kinds whose events carry a detail."""


@dataclass(frozen=True, slots=True)
class Event:
    """One context event: its kind and, for the kinds in `DETAILED`, what it was about."""

    kind: EventKind
    detail: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, EventKind):
            raise TypeError(f"an event's kind is an EventKind, not {self.kind!r}")
        if (self.kind in DETAILED) != bool(self.detail):
            need = "needs a detail" if self.kind in DETAILED else "takes no detail"
            raise ValueError(f"event {self.kind.value!r} {need} (got {self.detail!r})")
        if ";" in self.detail:
            raise ValueError(f"an event's detail holds no ';' (got {self.detail!r})")

    def __str__(self) -> str:
        """The event as `calls.events` shows it: `kind` or `kind:detail`.

        >>> str(Event(EventKind.INJECTED, "tasks")), str(Event(EventKind.COMPRESSED))
        ('injected:tasks', 'compressed')
        """
        return f"{self.kind.value}:{self.detail}" if self.detail else self.kind.value


def joined(events: tuple[Event, ...]) -> str:
    """The events as one `calls.events` cell: their texts joined with `;`, in order.

    >>> joined((Event(EventKind.COMPRESSED), Event(EventKind.INJECTED, "current-time")))
    'compressed;injected:current-time'
    """
    return ";".join(map(str, events))
