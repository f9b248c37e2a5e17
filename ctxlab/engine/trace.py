"""What a run records: every model call and every context event.

Invariants:
- One `CallRecord` per model API call, in call order, with 0-based `call_index`; each attempt of a
  summary invocation is its own record.
- Token counts are the lab's own counter's; for summary calls all three counting conventions are
  kept (`messages`, `preflight`, `as_sent`; docs/architecture.md, Counting conventions);
  reasoning calls count messages + tools, the same under every convention.
- `events` of a call are the context events since the previous call, in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ctxlab.core.agentscope.summary import Summary
from ctxlab.core.events import Event, EventKind
from ctxlab.core.messages.model import CallKind
from ctxlab.core.wire.protocol import Violation

Convention = Literal["as_sent", "preflight", "messages"]
CONVENTIONS: tuple[Convention, ...] = ("as_sent", "preflight", "messages")


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRecord:
    """One model API call as the lab saw it."""

    call_index: int
    kind: CallKind
    turn: int
    iteration: int
    tokens: dict[Convention, int]
    output_tokens: int
    context_messages: int
    summary_chars: int
    events: tuple[Event, ...] = ()
    violations: tuple[Violation, ...] = ()
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    request: dict[str, Any] | None = None
    strategy_tokens: int | None = None

    def input_tokens(self, convention: Convention) -> int:
        """Input tokens under a counting convention."""
        return self.tokens[convention]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompressionRecord:
    """One compression: where it happened and what it did."""

    before_call: int
    tokens_before: int
    threshold: float
    compressed_messages: int
    reserved_messages: int
    zero_reserve_retry: bool
    overflow: bool
    summary_ok: bool
    fallback: bool
    offload_path: str | None
    summary: Summary
    tokens_after: int
    floor_tokens: int = 0


@dataclass(slots=True)
class Recorder:
    """Collects records during a run (the engine's one mutable journal).

    `reasoning_calls` is how many of `calls` are reasoning calls, for every call recorded with
    `record` (the engine records every call so).
    """

    calls: list[CallRecord] = field(default_factory=list)
    compressions: list[CompressionRecord] = field(default_factory=list)
    pending_events: list[Event] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reasoning_calls: int = 0

    def record(self, call: CallRecord) -> None:
        """Add a finished model call to the journal."""
        self.calls.append(call)
        self.reasoning_calls += call.kind == "reasoning"

    def event(self, kind: EventKind, detail: str = "") -> None:
        """Note a context event, typed (`EventKind` and its detail, nothing else); it is attached to
        the next call.

        Raises:
            TypeError: `kind` is not an `EventKind`.
            ValueError: the detail does not fit the kind (`Event`'s invariants).
        """
        self.pending_events.append(Event(kind, detail))

    def take_events(self) -> tuple[Event, ...]:
        """The events since the last call, clearing them."""
        events, self.pending_events = tuple(self.pending_events), []
        return events

    @property
    def next_call_index(self) -> int:
        """The index the next call will have."""
        return len(self.calls)
