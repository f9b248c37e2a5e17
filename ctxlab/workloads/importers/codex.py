"""Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), as OpenAI chat
messages.

Each line is `{"timestamp", "type", "payload"}`. `response_item` lines hold the Responses items
the model was sent and returned (messages, reasoning, function calls and their outputs);
`event_msg` lines are the interface's copies of them (and token counts); `session_meta` and
`turn_context` describe the session; `compacted` marks a compaction.

Mapping rules (items as in `responses`):
- `response_item` payloads are mapped in order. The `<environment_context>` message (and the
  `<user_instructions>` one) stays a user message, as Codex sent it.
- `event_msg` copies of items are ignored; `session_meta`, `turn_context` and `compacted` lines
  are skipped; all are counted in the warnings. Any other `type` is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ctxlab.workloads.importers.base import Calls, Entry, Report, Wire, field_of
from ctxlab.workloads.importers.responses import ItemMapper

SKIPPED = frozenset({"event_msg", "session_meta", "turn_context", "compacted"})
KINDS = SKIPPED | {"response_item"}


def is_codex(values: list[object]) -> bool:
    """Entries of a rollout: typed lines with a `payload` (the first line decides)."""
    first = values[0] if values else None
    return isinstance(first, Mapping) and first.get("type") in KINDS and "payload" in first


def read_codex(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of a rollout (see the module docstring)."""
    mapper = ItemMapper(report, Calls(report))
    for number, value in entries:
        kind = field_of(value, "type")
        if kind not in KINDS or not isinstance(value, Mapping):
            raise report.error(
                number, f"unknown entry type {kind!r}; expected one of {', '.join(sorted(KINDS))}"
            )
        if kind in SKIPPED:
            report.skip(str(kind))
            continue
        yield from mapper.item(value.get("payload"), number)
    yield from mapper.flush()
