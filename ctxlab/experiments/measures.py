"""From a run's records to the rows of `calls`, `events` and `runs` (docs/architecture.md,
Results), and the cost of a call.

Invariants:
- A call's `input_tokens` is its count under the scenario's `summary_token_count` for summary
  calls, and messages + tools for reasoning calls (the same under every convention).
- Peaks and totals include summary calls. Counts of events and violations are over all calls;
  events are counted from the `events` rows, never from the `;`-joined `calls.events` text.
- A call's `events` cell and its `events` rows hold the same events in the same order.
- `call_cost` is the one place cost is computed. Without a cache meter (`cached` None) every
  input token is billed at the input price; with one, cached tokens at `cached_read` and the
  rest of the input at `cache_write` (uncached input is written to the cache). A run's cost adds
  its calls' costs in call order, one rounding a step (`added`): the same number on every Python.
- A run's own calls come first in `calls` and `events` (`agent` `parent`), then each
  sub-agent's (`agent` its label, `delegated_at` the parent's call that delegated to it); the
  `runs` row's totals, peaks and cost are the parent's, the sub-agents' are counted apart.
- Nothing is invented: a measure the run did not take is None (an empty cell): retention of a
  kind no probe was planted for, cached tokens without a cache meter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ctxlab.core.events import Event, EventKind, joined
from ctxlab.core.world.retention import RetentionScores
from ctxlab.engine.trace import CallRecord, CompressionRecord, Convention

PER_MILLION = 1_000_000
PARENT = "parent"
"""The `agent` of the run's own calls (a sub-agent's is its label, `sub-1`, `sub-1.2`, ...)."""


def added(values: Iterable[float]) -> float:
    """`values` added left to right, each sum rounded as it is made.

    Python 3.12 made `sum` of floats compensate its rounding, so `sum` of the same costs can end
    a unit in the last place apart on 3.11 and on 3.12 or later (0.07138364999999999 against
    0.07138365): results written under each would differ. This is the sum 3.11 makes, on every
    version (and, as `sum`, the integer 0 for no values: a run's columns keep their type).

    >>> added([0.1] * 10), added([])
    (0.9999999999999999, 0)
    """
    total: float = 0
    for value in values:
        total += value
    return total


def call_input_tokens(record: CallRecord, convention: Convention) -> int:
    """A call's input tokens as the results report them."""
    return record.tokens[convention] if record.kind == "summary" else record.tokens["as_sent"]


def call_cost(
    input_tokens: int, cached_tokens: int | None, output_tokens: int, prices: dict[str, float]
) -> float:
    """The cost of one call under `prices` (per million tokens).

    >>> prices = {"input": 1.0, "cached_read": 0.1, "cache_write": 1.25, "output": 4.0}
    >>> call_cost(1_000_000, None, 0, prices), call_cost(1_000_000, 600_000, 0, prices)
    (1.0, 0.56)
    """
    if cached_tokens is None:
        billed = input_tokens * prices["input"]
    else:
        cached = min(cached_tokens, input_tokens)
        billed = cached * prices["cached_read"] + (input_tokens - cached) * prices["cache_write"]
    return (billed + output_tokens * prices["output"]) / PER_MILLION


def call_row(
    run_id: str,
    record: CallRecord,
    *,
    convention: Convention,
    context_size: int,
    cache_metered: bool,
    agent: str = PARENT,
    delegated_at: int | None = None,
) -> dict[str, Any]:
    """One row of `calls` (`over_window` against the window of the agent that made the call)."""
    tokens = call_input_tokens(record, convention)
    return {
        "run_id": run_id,
        "call_index": record.call_index,
        "kind": record.kind,
        "turn": record.turn,
        "iteration": record.iteration,
        "input_tokens": tokens,
        "strategy_tokens": record.strategy_tokens,
        "cached_tokens": min(record.cached_tokens, tokens) if cache_metered else None,
        "output_tokens": record.output_tokens,
        "context_messages": record.context_messages,
        "summary_chars": record.summary_chars,
        "over_window": tokens > context_size,
        "events": joined(record.events),
        "violations": ";".join(f"{v.rule}:{v.index}:{v.call_id}" for v in record.violations),
        "agent": agent,
        "delegated_at": delegated_at,
    }


def event_rows(run_id: str, record: CallRecord, agent: str = PARENT) -> tuple[dict[str, Any], ...]:
    """The rows of `events` for one call of `agent`: one per event, `order` 0-based within the call."""
    return _event_rows(run_id, record.call_index, record.events, agent)


def trailing_event_rows(
    run_id: str, calls: int, events: Sequence[Event], agent: str = PARENT
) -> tuple[dict[str, Any], ...]:
    """The rows of `events` recorded after the run's last call (the last compression, its
    `loop_warning`, the `iteration_limit` that ended the reply): `call_index` is the index the
    next call would have had (`calls`), which no row of `calls` holds."""
    return _event_rows(run_id, calls, events, agent)


def _event_rows(
    run_id: str, call_index: int, events: Sequence[Event], agent: str
) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "run_id": run_id,
            "call_index": call_index,
            "order": order,
            "kind": event.kind.value,
            "detail": event.detail or None,
            "agent": agent,
        }
        for order, event in enumerate(events)
    )


def _count_events(events: Sequence[dict[str, Any]], kind: EventKind) -> int:
    return sum(1 for row in events if row["kind"] == kind)


def _count_violations(rows: Sequence[dict[str, Any]], rule: str) -> int:
    return sum(1 for row in rows for v in str(row["violations"]).split(";") if v.startswith(f"{rule}:"))


def loop_warnings(events: Sequence[dict[str, Any]]) -> int:
    """Compactions the engine flagged (`loop_warning` events): futile ones (under 1% reclaimed)
    and ones whose floor is at or above the trigger, so the next check compacts again. Each
    strategy judges its own compactions against its own trigger (`ctxlab.engine.progress`)."""
    return _count_events(events, EventKind.LOOP_WARNING)


def run_measures(
    rows: Sequence[dict[str, Any]],
    *,
    events: Sequence[dict[str, Any]],
    prices: dict[str, float],
    compressions: Sequence[CompressionRecord],
    offloaded_bytes: int,
    source_violations: int,
    retention: RetentionScores | None = None,
    subagent_rows: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The measured columns of one `runs` row, from its call and event rows and compressions, and
    the final retention snapshot's scores (None: no probe was planted, or the run did not finish).

    `subagent_rows` are the call rows of the run's sub-agents: counted apart, never in the
    parent's totals, peaks or cost."""
    tokens = [int(row["input_tokens"]) for row in rows]
    metered = bool(rows) and rows[0]["cached_tokens"] is not None
    cached = sum(int(row["cached_tokens"]) for row in rows) if metered else None
    total = sum(tokens)
    cost = added(
        call_cost(int(row["input_tokens"]), row["cached_tokens"], int(row["output_tokens"]), prices)
        for row in rows
    )
    return {
        "calls": len(rows),
        "summary_calls": sum(1 for row in rows if row["kind"] == "summary"),
        "peak_input_tokens": max(tokens) if tokens else None,
        "final_input_tokens": tokens[-1] if tokens else None,
        "total_input_tokens": total,
        "total_cached_tokens": cached,
        "cache_hit_rate": (cached / total if total else 0.0) if cached is not None else None,
        "cost": cost,
        "compressions": len(compressions),
        "offloaded_bytes": offloaded_bytes,
        "truncations": _count_events(events, EventKind.TRUNCATED),
        "injections": _count_events(events, EventKind.INJECTED),
        "violations_openai": _count_violations(rows, "openai"),
        "violations_anthropic": _count_violations(rows, "anthropic"),
        "violations_bedrock": _count_violations(rows, "bedrock"),
        "source_violations": source_violations,
        "over_window_calls": sum(1 for row in rows if row["over_window"]),
        "retention_facts": retention.facts.retention if retention else None,
        "retention_rules": retention.rules.retention if retention else None,
        "retention_artifacts": retention.artifacts.retention if retention else None,
        "loop_warnings": loop_warnings(events),
        "subagent_calls": len(subagent_rows),
        "subagent_input_tokens": sum(int(row["input_tokens"]) for row in subagent_rows),
        "subagent_cost": added(
            call_cost(int(row["input_tokens"]), row["cached_tokens"], int(row["output_tokens"]), prices)
            for row in subagent_rows
        ),
    }
