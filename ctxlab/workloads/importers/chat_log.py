"""OpenAI chat conversations held one a line: fine-tuning and eval files, and Chat Completions
request logs; and the check every OpenAI chat message passes (`checked`).

- A fine-tuning file holds one conversation a line, `{"messages": [...], "tools"?: [...]}`
  (OpenAI's chat fine-tuning format). The conversation of line `--session N` (0, the first,
  unless given; blank lines not counted) is read, and its `tools`
  (and the legacy `functions`) are the declared tool schemas; each further line is a
  conversation of its own, counted and not read, as other formats' further sessions are.
  `parallel_tool_calls` and any other key are request settings the replay has no use for.
  A preference (DPO) line, `{"input": {"messages", "tools"?}, "preferred_output": [...],
  "non_preferred_output": [...]}`, is the conversation its input holds followed by its preferred
  output; the non-preferred output is counted, message by message, and not read.
- A request log holds Chat Completions requests, `{"model": ..., "messages": [...], "tools"?}`,
  each possibly wrapped with its response (`{"request", "response"}`, or `body`/`params`) or
  followed by it as the next entry (`object: chat.completion`). As in an Anthropic log
  (`chains`), the conversation is the last request of the chain ending latest among chains of
  two requests or more; the others are counted, and a note names the line taken. Its logged
  response's first choice is the conversation's last message (further choices are counted).
  A request whose call failed (its response an error, such as the API's `{"error": {"message",
  "type", "param", "code"}}`, wrapped with it or the entry after it; `request_log` lists the
  shapes) is counted as `failed request (<code, else type>)` and joins no chain (`request_log`
  says why): the retry after it is the conversation's next request, and a log whose last request
  failed gives the conversation as a model last answered it. An error entry that follows no
  request awaiting a response is an error at its line, as such a response is.
- A file is a request log when its first entry names a `model`, is wrapped, is an error or is a
  JSON list of requests, or when its second entry is a response or an error or continues the
  first (a log written without the model); otherwise it is a fine-tuning file.

Invariants:
- Every message is read as the replay reads it (`parse_message`), after its legacy function
  calling is put in the current form (`chat_legacy`); a message that cannot be read is an error
  at its line, naming the message. Content parts the replay leaves out (audio, files) are
  removed from the message and counted by type.
- Memory holds one line of a fine-tuning file, and of a log what `chains` holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast

from ctxlab.core.messages.tools import NotJSONError
from ctxlab.workloads.chat_legacy import current_form
from ctxlab.workloads.chat_message import UNREPLAYED_PARTS, parse_message
from ctxlab.workloads.importers.base import (
    Entry,
    Report,
    Wire,
    field_of,
    one_conversation,
    schema,
    session_entry,
    text_of,
)
from ctxlab.workloads.importers.chains import Chains, prefix_digests, tell
from ctxlab.workloads.importers.dialect import is_completion
from ctxlab.workloads.importers.request_log import (
    failed,
    failure,
    is_error,
    nothing_to_replay,
    unawaited,
    unwrap,
)

Where = tuple[int, str]
"""A message's line, and how the error names it (`item 2: `, `messages[3]: `)."""
Logged = tuple[Mapping[str, Any], object]
"""A logged request and its response (None when none was logged)."""


def checked(messages: Iterable[tuple[Where, object]], report: Report) -> Iterator[Wire]:
    """Each message as the replay reads it (see the module docstring).

    Raises:
        TraceError: at its line, a message the replay cannot read.
    """
    for (line, name), wire in current_form(messages, lambda at, why: report.error(at[0], at[1] + why)):
        try:
            message = parse_message(wire)
        except ValueError as error:
            raise report.error(line, f"{name}{error}") from None
        for kind in message.unreplayed:
            report.skip(f"content part {kind!r}")
        read = dict(cast(Mapping[str, Any], wire))  # parse_message took it: an object
        yield _without_unreplayed(read) if message.unreplayed else read


def _without_unreplayed(wire: Wire) -> Wire:
    kept = [p for p in wire["content"] if not (isinstance(p, Mapping) and p.get("type") in UNREPLAYED_PARTS)]
    return {**wire, "content": kept}


def is_conversation_log(values: list[object]) -> bool:
    """Entries holding conversations, not messages: each (after its wrapper), when it is no
    response (nor a streamed one's chunk, nor an error), has `messages`, a list of messages with
    a role, and no Responses `input`."""
    flat = [item for value in values for item in (value if isinstance(value, list) else [value])]
    held = [v for v in flat if not (is_completion(v) or _chunk(v) or is_error(v))]
    return bool(held) and all(preference_input(v) is not None or _conversation(unwrap(v)[0]) for v in held)


def preference_input(value: object) -> Mapping[str, Any] | None:
    """The `input` of a preference (DPO) line, which holds its `messages` (and `tools`); None
    for any other value."""
    inner = field_of(value, "input")
    if not isinstance(field_of(value, "preferred_output"), list) or not isinstance(inner, Mapping):
        return None
    return inner if isinstance(inner.get("messages"), list) else None


def _chunk(value: object) -> bool:
    """A streamed response's chunk: a log's entry, refused when read, saying what to log."""
    return bool(field_of(value, "object") == "chat.completion.chunk")


def _conversation(request: Mapping[str, Any] | None) -> bool:
    messages = field_of(request, "messages")
    return (
        request is not None
        and "input" not in request
        and isinstance(messages, list)
        and all(isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in messages)
    )


def read_conversations(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of a fine-tuning file (its line `report.session`) or of a request log (one
    conversation, so only session 0; see the module docstring).

    Raises:
        SessionError: a session past 0 of a request log.
    """
    head = list(itertools.islice(entries, 2))
    rest = itertools.chain(head, entries)
    if not _logged([e.value for e in head]):
        yield from _read_examples(rest, report)
    elif report.session:
        raise one_conversation(report.source, "a Chat Completions request log", report.session)
    else:
        yield from read_log(rest, report)


def _logged(head: list[object]) -> bool:
    """Whether the first two entries are a request log's (see the module docstring)."""
    first = head[0] if head else None
    request, _ = unwrap(first)
    if isinstance(first, list) or is_completion(first) or is_error(first) or request is None:
        return True
    if request is not first or "model" in request:
        return True
    second = head[1] if len(head) > 1 else None
    later, _ = unwrap(second)
    if is_completion(second) or is_error(second) or later is None:
        return second is not None
    return _continues(field_of(later, "messages"), field_of(request, "messages"))


def _continues(later: object, earlier: object) -> bool:
    """Whether `later` messages begin with all of `earlier`'s and have more."""
    if not isinstance(later, list) or not isinstance(earlier, list) or not earlier:
        return False
    return (
        len(later) > len(earlier) and prefix_digests(later)[len(earlier) - 1] == prefix_digests(earlier)[-1]
    )


def _read_examples(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    for number, value in session_entry(entries, report, "further conversation (a line of its own)"):
        preferred = preference_input(value)
        if preferred is not None:
            yield from _read_preference(preferred, value, number, report)
            continue
        if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
            raise report.error(number, "a conversation line needs a 'messages' list of OpenAI chat messages")
        _declare(value, number, report)
        yield from checked(
            (((number, f"messages[{i}]: "), m) for i, m in enumerate(value["messages"])), report
        )


def _read_preference(
    preferred: Mapping[str, Any], value: Mapping[str, Any], number: int, report: Report
) -> Iterator[Wire]:
    """A preference line's conversation: its input's messages, then its preferred output."""
    _declare(preferred, number, report)
    rejected = value.get("non_preferred_output")
    if isinstance(rejected, list) and rejected:
        report.skipped["non-preferred output message (a preference line's rejected answer)"] += len(rejected)
    listed = [((number, f"input.messages[{i}]: "), m) for i, m in enumerate(preferred["messages"])]
    listed += [((number, f"preferred_output[{i}]: "), m) for i, m in enumerate(value["preferred_output"])]
    yield from checked(listed, report)


def _declare(request: Mapping[str, Any], number: int, report: Report) -> None:
    """The tool schemas a request or conversation declares: each function of its `tools` and of
    the legacy `functions`; any other tool (custom, built-in) is counted.

    Raises:
        TraceError: a tool whose parameters hold NaN or Infinity.
    """
    for item in _list(request, "tools"):
        kind = field_of(item, "type")
        _schema(field_of(item, "function") if kind == "function" else item, kind, number, report)
    for item in _list(request, "functions"):
        _schema(item, "function", number, report)


def _schema(declared: object, kind: object, number: int, report: Report) -> None:
    name, description = field_of(declared, "name"), field_of(declared, "description")
    try:
        found = schema(name, description, field_of(declared, "parameters"))
    except NotJSONError as error:
        raise report.error(number, str(error)) from None
    if found is None or kind != "function":
        report.skip(f"tool of type {kind!r}" if kind != "function" else "function tool without a name")
    else:
        report.tools.append(found)


def _list(value: Mapping[str, Any], key: str) -> list[Any]:
    found = value.get(key)
    return found if isinstance(found, list) else []


def read_log(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of a request log: the last request of the chain ending latest."""
    chains: Chains[Logged] = Chains()
    pending: tuple[int, Logged] | None = None  # the last request read, until its response may follow
    last = None
    for number, value in entries:
        last = number
        for item in value if isinstance(value, list) else [value]:
            if is_completion(item) or is_error(item):
                pending = _answered(pending, item, number, report)
                continue
            _chain(chains, pending, report)
            pending = number, _request(item, number, report)
    _chain(chains, pending, report)
    choice = chains.choice()
    if choice is None:
        if last is not None:
            raise nothing_to_replay(last, "Chat Completions request", report)
        return
    tell(choice, report)
    request, response = choice.payload
    _declare(request, choice.line, report)
    listed = [((choice.line, f"messages[{i}]: "), m) for i, m in enumerate(request["messages"])]
    answer = [((choice.line, "the response's message: "), m) for m in _answer(response, report)]
    yield from checked([*listed, *answer], report)


def _request(item: object, number: int, report: Report) -> Logged:
    """A log's entry read as a request and its wrapped response.

    Raises:
        TraceError: an entry that is no Chat Completions request.
    """
    request, response = unwrap(item)
    if request is None or not isinstance(request.get("messages"), list):
        raise report.error(
            number,
            "not an OpenAI Chat Completions request: expected an object with 'messages' (a streamed "
            "chunk, object chat.completion.chunk, is not read: log the whole response)",
        )
    return request, response


def _chain(chains: Chains[Logged], pending: tuple[int, Logged] | None, report: Report) -> None:
    """Add a request read to the chains, or count it when its call failed (`request_log`)."""
    if pending is None:
        return
    number, (request, response) = pending
    if (name := failure(response)) is not None:
        report.skip(failed(name))
    else:
        chains.add(number, request["messages"], (request, response), answer=_answer_texts(response))


def _answer_texts(response: object) -> list[str]:
    """The text of a logged response's first choice, which a later request may carry (`chains`)."""
    choices = field_of(response, "choices")
    body = field_of(choices[0] if isinstance(choices, list) and choices else None, "message", "content")
    if isinstance(body, list):
        return [text_of(field_of(part, "text")) for part in body]
    return [text_of(body)]


def _answered(
    pending: tuple[int, Logged] | None, response: object, number: int, report: Report
) -> tuple[int, Logged]:
    """The request read last, answered by the response or error logged as the entry after it.

    Raises:
        TraceError: no request without a response comes right before the response.
    """
    if pending is None or pending[1][1] is not None:
        raise unawaited("Chat Completions", response, number, report)
    return pending[0], (pending[1][0], response)


def _answer(response: object, report: Report) -> list[object]:
    """The message of a logged response's first choice (none when no response was logged);
    further choices, and a response without a message, are counted."""
    if response is None:
        return []
    choices = field_of(response, "choices")
    message = field_of(choices[0], "message") if isinstance(choices, list) and choices else None
    for _ in (choices or [])[1:] if isinstance(choices, list) else []:
        report.skip("further choice of a response (n > 1)")
    if not isinstance(message, Mapping):
        report.skip("logged response without a message")
        return []
    return [{"role": "assistant", **message}]
