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
  are skipped; all are counted in the warnings.
- A line of a `type` this importer does not know (Codex adds rollout kinds from one version to
  the next) is skipped and counted too, unless its `payload` is a conversation item (a message,
  a call, an output, reasoning): then it is an error, as it may hold conversation. A line
  without a string `type` is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ctxlab.workloads.importers.base import Calls, Entry, Report, Wire, field_of
from ctxlab.workloads.importers.responses import CALLS, OUTPUTS, ItemMapper

SKIPPED = frozenset({"event_msg", "session_meta", "turn_context", "compacted"})
KINDS = SKIPPED | {"response_item"}
CONVERSATION_ITEMS = CALLS | OUTPUTS | {"message", "reasoning"}
_EXPECTED = f"expected one of {', '.join(sorted(KINDS))}"


def is_codex(values: list[object]) -> bool:
    """Entries of a rollout: typed lines with a `payload` (the first line decides)."""
    first = values[0] if values else None
    return isinstance(first, Mapping) and first.get("type") in KINDS and "payload" in first


def read_codex(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of a rollout (see the module docstring).

    Raises:
        TraceError: at a line that cannot be a rollout's; and, when no line was conversation, at
            the first line of an unknown kind (the file is then likely of another format, such
            as a session log forced with `--format codex`).
    """
    mapper = ItemMapper(report, Calls(report))
    unknown: list[tuple[int, object]] = []
    found = False
    for number, value in entries:
        kind = field_of(value, "type")
        if kind not in KINDS or not isinstance(value, Mapping):
            _skip_unknown(value, kind, number, report)
            unknown[:] = unknown or [(number, kind)]
        elif kind in SKIPPED:
            report.skip(str(kind))
        else:
            for wire in mapper.item(value.get("payload"), number):
                found = True
                yield wire
    for wire in mapper.flush():
        found = True
        yield wire
    if not found and unknown:
        raise report.error(unknown[0][0], f"unknown entry type {unknown[0][1]!r}; {_EXPECTED}")


def _skip_unknown(value: object, kind: object, number: int, report: Report) -> None:
    """Count a line of a kind not known here, or raise when it has no string `type` or its
    payload is a conversation item."""
    if not isinstance(value, Mapping) or not isinstance(kind, str):
        raise report.error(number, f"unknown entry type {kind!r}; {_EXPECTED}")
    payload = value.get("payload")
    if isinstance(payload, Mapping) and (payload.get("type") in CONVERSATION_ITEMS or "role" in payload):
        raise report.error(number, f"unknown entry type {kind!r} carries a conversation item; {_EXPECTED}")
    report.skip(f"{kind} (an entry type not known here)")
