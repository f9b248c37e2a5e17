"""OpenAI chat messages (the lab's own replay format): JSONL, one message a line, or a JSON list
of messages. Imported as they are; `ctxlab.workloads.trace` maps them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ctxlab.workloads.chat_message import parse_message
from ctxlab.workloads.importers.base import Entry, Report, Wire


def is_openai_chat(values: list[object]) -> bool:
    """JSONL whose first line is a message, or a JSON list of messages."""
    first = values[0] if values else None
    if isinstance(first, list):
        return bool(first) and all(isinstance(m, Mapping) and "role" in m for m in first)
    return isinstance(first, Mapping) and "role" in first


def read_openai_chat(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages as written, each checked to be one."""
    for number, value in entries:
        for index, item in enumerate(value if isinstance(value, list) else [value]):
            try:
                parse_message(item)
            except ValueError as error:
                where = f"item {index}: " if isinstance(value, list) else ""
                raise report.error(number, f"{where}{error}") from None
            yield dict(item)
