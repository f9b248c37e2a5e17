"""OpenAI Responses API request logs, as OpenAI chat messages; their items are read by
`responses.ItemMapper`.

A request log is a JSON request, a JSON list of requests, or JSONL with one request a line, each
possibly wrapped as `{"request": {...}, "response": {...}}` (or `body`/`params`), or followed
by its response as the next entry (`object: response`). The request holding the conversation
(its `instructions` and `input`) is the last of the chain ending latest among chains of two
requests or more, as in an Anthropic log (`chains`), so a side request a client sends after its
agent's last (a title) is not taken for it; the others are counted and skipped, and a logged
response's `output` items end it. A request that continues a response by
`previous_response_id` sends only what is new: its conversation is the chain's requests' inputs,
each followed by its response's output, oldest first (a chain onto a response the log does not
hold is an error at that request's line); `instructions` and `tools` are the last request's, as
the API does not carry them over. A request that adds to a `conversation` (an id, or `{id}`)
sends only what is new too: its conversation is every logged request of that conversation, in
order, each followed by its response's output (what the conversation held before the first
logged one is not in the file, and a note says so). A request of a stored `prompt` (which may
set the model and instructions) is a request too; the prompt's text is not in the log, as a
note says.

A request whose call failed (a response of `status: failed` with its `error`, or an error body
such as `{"error": {"message", "type", "param", "code"}}`, wrapped with it or the entry after it;
`request_log` lists the shapes) is counted as `failed request (<code, else type>)` and joins no
chain, nor its `conversation` (`request_log` says why): the retry after it sends its input
again, and a log whose last request failed gives the conversation as a model last answered it.
An error entry that follows no request awaiting a response is an error at its line, as such a
response is, and so is a request whose `previous_response_id` names a failed response (no model
answered it, so nothing continues it), saying so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    field_of,
    json_kind,
    listed,
    object_of,
    schema,
    system,
    text_of,
)
from ctxlab.workloads.importers.chains import Chains, Choice, tell
from ctxlab.workloads.importers.request_log import (
    failed,
    failure,
    is_error,
    nothing_to_replay,
    unawaited,
    unwrap,
)
from ctxlab.workloads.importers.responses import ItemMapper, flat_name


def is_responses_request(value: object) -> bool:
    """An OpenAI Responses request: `input`, with `model`, `instructions` or a stored `prompt`
    (which may set both)."""
    request, _ = unwrap(value[-1] if isinstance(value, list) and value else value)
    if not request or "input" not in request:
        return False
    return bool({"model", "instructions", "prompt"} & request.keys())


@dataclass(frozen=True, slots=True)
class Link:
    """One logged request of a conversation chained with `previous_response_id`: its line, the
    response it continues, and its own items (its input, then its response's output)."""

    line: int
    previous: str | None
    items: tuple[Any, ...]


def _link(number: int, request: Mapping[str, Any], response: object, report: Report) -> Link:
    """A logged request's link.

    Raises:
        TraceError: its `input` is neither a string nor a list of items.
    """
    given = request.get("input")
    if given is not None and not isinstance(given, str | list):
        raise report.error(number, f"'input' must be a string or a list of items, got {type(given).__name__}")
    items: list[Any] = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
    if isinstance(response, Mapping):
        items.extend(response.get("output") or [])
    previous = request.get("previous_response_id")
    return Link(number, previous if isinstance(previous, str) else None, tuple(items))


def is_response(value: object) -> bool:
    """A Responses API response logged as an entry of its own (`object: response`, its
    `output`; a request has `input` instead)."""
    return (
        isinstance(value, Mapping)
        and value.get("object") == "response"
        and isinstance(value.get("output"), list)
        and "input" not in value
    )


def is_responses_log(values: list[object]) -> bool:
    """A request log: its last entry that is neither a response nor an error a Responses
    request."""
    requests = [value for value in values if not (is_response(value) or is_error(value))]
    return bool(requests) and is_responses_request(requests[-1])


Pending = tuple[int, object, int]
"""A logged request's line, the request (wrapped with its response when one was logged), and the
line it ends on (its response's, when logged as the entry after it)."""


def _requests(entries: Iterator[Entry], report: Report) -> Iterator[Pending]:
    """Each logged request, with its response (or error) when the log holds one: wrapped with
    it, or the entry right after it.

    Raises:
        TraceError: a response or an error that follows no request awaiting one.
    """
    pending: Pending | None = None
    for number, value in entries:
        for item in value if isinstance(value, list) else [value]:
            if is_response(item) or is_error(item):
                pending = _answered(pending, item, number, report)
                continue
            if pending is not None:
                yield pending
            pending = number, item, number
    if pending is not None:
        yield pending


def _answered(pending: Pending | None, response: object, number: int, report: Report) -> Pending:
    """The request read last, wrapped with the response or error logged as the entry after it.

    Raises:
        TraceError: no request without a response comes right before the response.
    """
    request, logged = unwrap(pending[1]) if pending is not None else (None, None)
    if pending is None or request is None or logged is not None:
        raise unawaited("Responses", response, number, report)
    return pending[0], {"request": request, "response": response}, number


def _last_with_chain(
    entries: Iterator[Entry], report: Report, known: dict[str, Any]
) -> tuple[int, object, tuple[Link, ...]] | None:
    """The request holding the conversation, with the links it continues, oldest first (none when
    it sends the whole conversation); `known` gets every logged response's output items that have
    an `id`, for `item_reference`.

    The request is the last of the chain ending latest among chains of two requests or more,
    as for an Anthropic log (`chains`): a side request asked once (a title, a summary) that a
    client sends after its agent's last one is not the conversation. A request continues the
    one whose response its `previous_response_id` names, the one before it in its
    `conversation`, or one whose whole `input` its own begins with (a client that resends the
    conversation). Only the previous request is kept until a request chains onto a response;
    from then on, every request with a logged response id is kept (each sends only what is new,
    so they hold the conversation once). So is every request of a `conversation`, for the same
    reason. The other requests are counted as skipped.
    """
    kept: dict[str, Link] = {}
    threads: dict[str, list[Link]] = {}
    orders: dict[str, int] = {}  # a response's id, or a conversation's, -> its request's order
    chains: Chains[tuple[int, object]] = Chains()
    chained, last = False, None
    failed_ids: set[str] = set()  # the ids of responses whose call failed
    for number, value, end in _requests(entries, report):
        request, response = unwrap(value)
        if request is None:
            continue
        last = end
        if _failed(response, report):
            if isinstance(field_of(response, "id"), str):
                failed_ids.add(field_of(response, "id"))
            continue
        link = _link(number, request, response, report)
        chained = chained or link.previous is not None
        if not chained:
            kept.clear()
        thread = _conversation(request)
        after = orders.get(link.previous or "") if thread is None else orders.get(thread)
        order = len(chains.links)
        given = request.get("input")
        messages = given if isinstance(given, list) else [given]
        chains.add(number, messages, (number, value), after=after, answer=_answer_texts(response))
        response_id = field_of(response, "id")
        if isinstance(response_id, str):
            kept[response_id] = link
            orders[response_id] = order
        if thread is not None:
            threads.setdefault(thread, []).append(link)
            orders[thread] = order
        known.update(_identified(field_of(response, "output")))
    choice = chains.choice()
    if choice is None:
        if last is not None:
            raise nothing_to_replay(last, "Responses request", report)
        return None
    number, value = choice.payload
    request, _ = unwrap(value)
    thread = _conversation(request)
    chain = (
        threads[thread][:-1] if thread is not None else _previous(request, kept, number, report, failed_ids)
    )
    _tell(choice, len(chain), thread, report)
    return number, value, tuple(chain)


def _answer_texts(response: object) -> Iterator[str]:
    """What a logged response wrote that a later request may carry (`chains`): its messages' text
    parts, and a `compaction` item's encrypted summary, which a client sends back as it was."""
    for item in field_of(response, "output") or []:
        if field_of(item, "type") == "compaction":
            yield text_of(field_of(item, "encrypted_content"))
        elif field_of(item, "type") == "message" and isinstance(parts := field_of(item, "content"), list):
            yield from (text_of(field_of(part, "text")) for part in parts)


def _failed(response: object, report: Report) -> bool:
    """Whether a request's call failed (`request_log`), counted: it joins no chain, nor the
    conversation it names, whose retry sends its input again."""
    name = failure(response)
    if name is not None:
        report.skip(failed(name))
    return name is not None


def _tell(choice: Choice[tuple[int, object]], replayed: int, thread: str | None, report: Report) -> None:
    """Count the requests not taken (`replayed` of its chain are), and say which was taken."""
    tell(choice, report, replayed=replayed)
    if replayed and thread is not None:
        report.notes.append(
            f"the last request continues {replayed} earlier request(s) of conversation {thread!r}; "
            "any items it held before the first logged request are not in the file"
        )
    elif replayed:
        report.notes.append(
            f"the last request continues {replayed} earlier request(s) by previous_response_id"
        )


def _conversation(request: object) -> str | None:
    """The id of the conversation a request adds to (`conversation`: an id or `{id}`), if any."""
    thread = field_of(request, "conversation")
    thread = field_of(thread, "id") if isinstance(thread, Mapping) else thread
    return thread if isinstance(thread, str) else None


def _previous(
    request: object, kept: dict[str, Link], line: int, report: Report, failed_ids: set[str]
) -> list[Link]:
    """The links a request continues by `previous_response_id`, oldest first.

    Raises:
        TraceError: a link names a response the log does not hold, or one whose call failed
            (`failed_ids`: no model answered it, so nothing continues it).
    """
    chain: list[Link] = []
    previous = field_of(request, "previous_response_id")
    while isinstance(previous, str):
        at = chain[-1].line if chain else line
        if previous in kept and (kept[previous] in chain or kept[previous].line == line):
            raise report.error(
                at,
                f"previous_response_id {previous!r} leads back to a request already in the chain, so "
                "the chain loops; a request continues an earlier response only (are ids repeated?)",
            )
        if previous in failed_ids:
            raise report.error(
                at,
                f"previous_response_id {previous!r} names a response whose call failed; no model "
                "answered it, so no request continues it (a retry names the last answered response)",
            )
        if previous not in kept:
            raise report.error(
                at,
                f"previous_response_id {previous!r} names no logged response; the conversation before it "
                "is not in the file",
            )
        chain.append(kept[previous])
        previous = kept[previous].previous
    return chain[::-1]


def _identified(items: object) -> Iterator[tuple[str, Any]]:
    for item in items if isinstance(items, list) else []:
        if isinstance(field_of(item, "id"), str):
            yield item["id"], item


def _tool_schemas(item: object, report: Report, namespace: object = None) -> None:
    """The schemas of a request's tool: a function's, or each function's of a `namespace`
    (named by `flat_name`); any other tool is counted."""
    kind = field_of(item, "type")
    if kind == "namespace" and namespace is None:
        for inner in field_of(item, "tools") or []:
            _tool_schemas(inner, report, field_of(item, "name"))
        return
    given = field_of(item, "name")
    name = flat_name(namespace, given) if isinstance(given, str) and given else None
    found = schema(name, field_of(item, "description"), field_of(item, "parameters"))
    if found is None or kind != "function":
        report.skip(f"tool of type {kind!r}")
    else:
        report.tools.append(found)


def _instructions(value: object, number: int, report: Report) -> str:
    """A request's `instructions`: text, or the input messages the API takes there too (system
    or developer messages, their roles not read: each is the system prompt's), their texts joined
    by a blank line ('' when there are none).

    Raises:
        TraceError: a value of another kind, at the request's line.
    """
    if value is None or isinstance(value, str):
        return value or ""
    if not isinstance(value, list):
        raise report.error(number, f"'instructions' is {json_kind(value)}, not text or a list of messages")
    texts = []
    for item in value:
        body = object_of(item).get("content")
        if isinstance(body, str):
            texts.append(body)
        else:
            texts.append("".join(text_of(object_of(part).get("text")) for part in listed(body)))
    return "\n\n".join(text for text in texts if text)


def read_responses_log(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The conversation of the last request of a log (see the module docstring)."""
    known: dict[str, Any] = {}
    found = _last_with_chain(entries, report, known)
    if found is None:
        return
    number, value, chain = found
    request, response = unwrap(value)
    if request is None or "input" not in request:
        raise report.error(number, "not an OpenAI Responses request: expected an object with 'input'")
    for item in request.get("tools") or []:
        _tool_schemas(item, report)
    prompt = _instructions(request.get("instructions"), number, report)
    if prompt:
        yield system(prompt)
    if isinstance(request.get("prompt"), Mapping):
        report.notes.append(
            f"the request uses the stored prompt {field_of(request, 'prompt', 'id')!r}: its text is "
            "not in the file, so the replay lacks what it adds (instructions, messages)"
        )
    mapper = ItemMapper(report, Calls(report), known=known)
    for link in (*chain, _link(number, request, response, report)):
        for item in link.items:
            yield from mapper.item(item, link.line)
    yield from mapper.flush()
