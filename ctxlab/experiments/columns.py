"""The columns of `runs`, `calls` and `events` (docs/architecture.md, Results): names, types, and
what each one means.

One table serves the writers (order and types of the CSV and Parquet files), the manifest (which
describes every column), and the README.

Invariants:
- Column order is fixed here; `param.<path>` columns go between `seed` and `calls`.
- Types are `string`, `int`, `float` or `bool`; an empty cell means "not measured" or "not
  applicable", and the manifest's `unmeasured` says which and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ctxlab.core.events import EventKind

ColumnType = Literal["string", "int", "float", "bool"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Column:
    """One column of a results table."""

    name: str
    type: ColumnType
    meaning: str


RUN_HEAD = (
    Column(name="run_id", type="string", meaning="`<strategy>-<config_hash>`"),
    Column(name="strategy", type="string", meaning="the strategy's name in the scenario"),
    Column(
        name="config_hash",
        type="string",
        meaning="sha256 of the run's resolved config (canonical JSON), 12 hex",
    ),
    Column(name="seed", type="int", meaning="the scenario's seed"),
)
"""Columns before the `param.*` columns."""

RUN_MEASURES = (
    Column(name="calls", type="int", meaning="model calls, summary attempts included"),
    Column(name="summary_calls", type="int", meaning="summary calls (each attempt counts)"),
    Column(name="peak_input_tokens", type="int", meaning="largest input_tokens of any call"),
    Column(name="final_input_tokens", type="int", meaning="input_tokens of the last call"),
    Column(name="total_input_tokens", type="int", meaning="sum of input_tokens over all calls"),
    Column(name="total_cached_tokens", type="int", meaning="sum of cached_tokens"),
    Column(name="cache_hit_rate", type="float", meaning="total_cached_tokens / total_input_tokens"),
    Column(
        name="cost",
        type="float",
        meaning="sum of the calls' cost under the scenario's prices (per million tokens)",
    ),
    Column(
        name="compressions",
        type="int",
        meaning="compactions the strategy recorded: each summary or fallback, and each cut of the stored "
        "history a family makes as one (strands' sliding window, nonoka's evictions); windows and "
        "clearings of the request alone are counted by their `dropped` and `cleared` events instead",
    ),
    Column(
        name="offloaded_bytes",
        type="int",
        meaning="bytes written to the run's workspace, which its sub-agents share (their offloads included)",
    ),
    Column(name="truncations", type="int", meaning="tool results cut at the tool-result limit"),
    Column(name="injections", type="int", meaning="runtime-state hints injected"),
    Column(
        name="violations_openai", type="int", meaning="OpenAI tool-call rule violations over all requests"
    ),
    Column(
        name="violations_anthropic",
        type="int",
        meaning="Anthropic tool-use rule violations over all requests",
    ),
    Column(
        name="violations_bedrock",
        type="int",
        meaning="Bedrock Converse rule violations over all requests (stricter: a user turn first)",
    ),
    Column(name="source_violations", type="int", meaning="violations in a replayed transcript itself"),
    Column(name="over_window_calls", type="int", meaning="calls whose input_tokens exceed context_size"),
    Column(
        name="retention_facts",
        type="float",
        meaning="share of the planted facts delivered so far that the last request still shows (context, "
        "summary or ledger) without a re-read",
    ),
    Column(name="retention_rules", type="float", meaning="the same for planted rules (user constraints)"),
    Column(
        name="retention_artifacts",
        type="float",
        meaning="the same for planted artifacts (paths, errors, ids)",
    ),
    Column(
        name="loop_warnings",
        type="int",
        meaning="compressions that reclaimed under 1% or left the request at or above the trigger (the next "
        "call compresses again)",
    ),
    Column(name="status", type="string", meaning="`ok`, or `failed` when the run raised"),
    Column(name="error", type="string", meaning="the exception of a failed run (`Type: message`)"),
    Column(
        name="subagent_calls",
        type="int",
        meaning="model calls made by sub-agents (delegated calls), summary attempts included; not in `calls`",
    ),
    Column(
        name="subagent_input_tokens",
        type="int",
        meaning="sum of input_tokens over the sub-agents' calls; not in `total_input_tokens`",
    ),
    Column(name="subagent_cost", type="float", meaning="the sub-agents' calls' cost; not in `cost`"),
)
"""Columns after the `param.*` columns."""

CALL_COLUMNS = (
    Column(name="run_id", type="string", meaning="the run"),
    Column(
        name="call_index", type="int", meaning="0-based, in call order (each agent numbers its own calls)"
    ),
    Column(name="kind", type="string", meaning="`reasoning` or `summary`"),
    Column(name="turn", type="int", meaning="0-based user turn"),
    Column(name="iteration", type="int", meaning="0-based iteration of the reply"),
    Column(
        name="input_tokens",
        type="int",
        meaning="request tokens; summary calls under `model.summary_token_count`, reasoning calls as "
        "messages + tools",
    ),
    Column(
        name="strategy_tokens",
        type="int",
        meaning="the strategy's own counter on a reasoning request as sent (LangChain's approximate count of "
        "its messages, Google ADK's characters // 4); empty where the strategy counts nothing or for "
        "summary calls",
    ),
    Column(name="cached_tokens", type="int", meaning="leading request tokens shared with an earlier request"),
    Column(name="output_tokens", type="int", meaning="the counter's count of the fake model's answer"),
    Column(
        name="context_messages",
        type="int",
        meaning="messages in the context (system prompt and summary excluded)",
    ),
    Column(name="summary_chars", type="int", meaning="characters of the summary in force"),
    Column(name="over_window", type="bool", meaning="input_tokens above context_size"),
    Column(
        name="events",
        type="string",
        meaning="`;`-joined context events since the previous call, in order (one row each in `events`)",
    ),
    Column(name="violations", type="string", meaning="`;`-joined `rule:index:call_id` of the request"),
    Column(
        name="agent",
        type="string",
        meaning="who made the call: `parent` (the run's agent; its calls make the `runs` totals), or a "
        "sub-agent by the order it started, `sub-1`, `sub-2`, ..., a sub-agent's own `sub-1.1`, ...",
    ),
    Column(
        name="delegated_at",
        type="int",
        meaning="a sub-agent's call: the `call_index` of the call of its delegating agent whose answer "
        "started it; empty for the parent's calls",
    ),
)

EVENT_COLUMNS = (
    Column(name="run_id", type="string", meaning="the run"),
    Column(
        name="call_index", type="int", meaning="the call the event is attached to (it happened before it)"
    ),
    Column(name="order", type="int", meaning="0-based position among the call's events"),
    Column(
        name="kind",
        type="string",
        meaning="the event's kind: one of " + ", ".join(f"`{kind.value}`" for kind in EventKind),
    ),
    Column(
        name="detail",
        type="string",
        meaning="what an `injected` event told (`current-time`, `tasks`, `context-length`, `tool-error`); "
        "empty for every other kind",
    ),
    Column(name="agent", type="string", meaning="the agent whose call it is attached to, as in `calls`"),
)
"""One row per context event: runs in config order, calls in call order, events in order."""

RETENTION_COLUMNS = ("retention_facts", "retention_rules", "retention_artifacts")
NO_PROBES = (
    "no probe of this kind reached the last request: none is planted (workload.probes or a "
    "generator's probes), the run ended before the place of each, or the run failed"
)
"""Why a retention column is empty in every row."""

CACHE_COLUMNS = ("cached_tokens", "total_cached_tokens", "cache_hit_rate")
CACHE_UNMEASURED = "no prompt-cache meter ran; cost is billed without caching"
"""Why the cache columns are empty when no cache meter runs."""
