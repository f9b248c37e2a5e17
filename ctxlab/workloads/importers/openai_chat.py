"""OpenAI chat messages (the lab's own replay format): JSONL, one message a line, or a JSON list
of messages; and conversations held one a line, fine-tuning files and Chat Completions request
logs (`chat_log`). Messages are imported as they are, legacy function calls in the current form
and the content parts the replay leaves out counted (`chat_log.checked`);
`ctxlab.workloads.trace` maps them.

Invariants:
- The first entry decides how the file is read: a message, or a list of messages, makes a file
  of messages; anything else, conversations (`chat_log.read_conversations`).
- Only a file of one message a line is the lab's own JSONL (`is_message`), read as it was
  before importers existed (`ctxlab.workloads.trace.read_trace`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping

from ctxlab.workloads.importers.base import Entry, Report, Wire, one_conversation
from ctxlab.workloads.importers.chat_log import checked, is_conversation_log, read_conversations


def is_message(value: object) -> bool:
    """An OpenAI chat message: an object with a `role`."""
    return isinstance(value, Mapping) and "role" in value


def _messages(value: object) -> bool:
    """A JSON list of messages (a list of requests is conversations)."""
    return isinstance(value, list) and not any(isinstance(m, Mapping) and "messages" in m for m in value)


def is_openai_chat(values: list[object]) -> bool:
    """JSONL whose first line is a message, a JSON list of messages, or conversations held one a
    line (`chat_log.is_conversation_log`)."""
    first = values[0] if values else None
    if isinstance(first, list) and first and all(is_message(m) for m in first):
        return True
    return is_message(first) or is_conversation_log(values)


def read_openai_chat(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages as written, each checked to be one (see the module docstring); a file of
    messages is one conversation, so only session 0 of it.

    Raises:
        SessionError: a session past 0 of a file of messages.
    """
    first = next(entries, None)
    if first is None:
        return
    rest = itertools.chain([first], entries)
    if not (is_message(first.value) or _messages(first.value)):
        yield from read_conversations(rest, report)
        return
    if report.session:
        raise one_conversation(report.source, "a file of OpenAI chat messages", report.session)
    yield from checked(_labelled(rest), report)  # one pass: a legacy call's result may follow it


def _labelled(entries: Iterator[Entry]) -> Iterator[tuple[tuple[int, str], object]]:
    """Each message with its line and, in a list, its index."""
    for number, value in entries:
        if isinstance(value, list):
            yield from (((number, f"item {index}: "), item) for index, item in enumerate(value))
        else:
            yield (number, ""), value
