"""Letta agent files (`.af`), as OpenAI chat messages: each agent's in-context messages, mapped
as Letta turns an agent's state into the chat request it sends (read without Letta).

What an agent file holds (Letta's `AgentFileSchema`, `letta/schemas/agent_file.py` at
letta-ai/letta 56ba9c25552605eec89de8ed3dc6394b625c1993): one JSON object with `agents`,
`groups`, `blocks`, `files`, `sources`, `tools` and `mcp_servers` (and `skills`, `metadata`,
`created_at`). An agent has its `name`, its `system` prompt, `tool_ids`, `block_ids`, its
`messages` (each with a file-local `id`, a `role`, `content` as a list of typed parts, and for
its role `tool_calls`, `tool_call_id`, `tool_returns`) and `in_context_message_ids`, the
messages its context holds, in order.

Mapping rules (after `Message.to_openai_dict` and `to_openai_dicts_from_list` in
`letta/schemas/message.py` at the same commit):
- Each agent is one conversation, `--session N` counting them from 0 in file order; a note names
  the agent. Its in-context messages are replayed in the order `in_context_message_ids` gives;
  the messages it keeps out of context (evicted by a summary, or older) are counted.
- A message's text is its `text` parts joined with a blank line, as Letta joins them. `system`
  is a system message where it stands: the first, compiled by Letta from the agent's `system`
  and its memory blocks, is replayed as compiled; an agent whose context opens with none has its
  `system` prompt as one, with a note. `user` and `summary` (a summary of evicted messages) are
  user messages, their images (`image` parts of a `url` or `base64` source) image parts.
- `assistant` (and an `approval` request with calls) is an assistant message: its text (the
  agent's inner thoughts beside its calls, or its answer), its `tool_calls` with their
  `arguments` text as stored (`send_message` and `request_heartbeat` among them, as the agent
  called them), and its `reasoning` and `summarized_reasoning` parts as reasoning, apart.
  Redacted and omitted reasoning parts are counted; a message of reasoning alone, or with
  nothing, and an approval response are counted, as Letta does not send them.
- An agent whose `llm_config` has `put_inner_thoughts_in_kwargs` on (and Letta leaves it on: not
  a `letta_v1_agent`, not an OpenAI reasoning model...) sends its inner thoughts in its calls, as
  Letta's OpenAI client builds the request (`letta_thoughts`, which cites the source): a message
  with `tool_calls` has `content` null and each call's arguments rewritten with `thinking` first
  (JSON, indented by 2); a plain answer keeps its text; each tool schema gains the `thinking`
  parameter, first. Arguments that are not a JSON object are kept as stored (counted), and a
  message with an empty `tool_calls` list is counted (Letta sends it empty).
- An agent whose `llm_config` has reasoning entirely off (`put_inner_thoughts_in_kwargs` off,
  `enable_reasoner` false, `max_reasoning_tokens` 0: `letta_thoughts.reasoning_off`, which cites
  the source) has the text of each `assistant` message with calls scrubbed before each request,
  as Letta does: the message is sent with no text (counted), its calls and reasoning kept; an
  `approval` request and a plain answer keep their text. The file itself keeps the text.
- `tool` is one tool message per entry of its `tool_returns` (its `func_response`, text parts
  joined by a line break, images counted), answering that entry's `tool_call_id`; a `status` of
  `error` is an error result. A message with no `tool_returns` (older files) is its content,
  answering its `tool_call_id`, an error when it is Letta's `{"status": "Failed", ...}`.
- The agent's tools (`tool_ids` among the file's `tools`) are its tool schemas.

Invariants:
- A file holds one agent file object; a second entry, an agent or a message of a shape Letta
  never writes, an in-context id naming no message, or a result answering no call before it (or
  a call answered already) is refused at its line (the line of the agent or message being read).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    beyond,
    call,
    data_url,
    image_part,
    schema,
    system,
    text_part,
    tool,
    user,
)
from ctxlab.workloads.importers.letta_thoughts import (
    KWARG,
    InKwargs,
    in_kwargs,
    reasoning_off,
    thoughts,
    with_parameter,
    with_thoughts,
)

KEYS = frozenset({"blocks", "tools", "mcp_servers"})
"""Keys of Letta's agent file, beside `agents`, that detection asks for (every export has them)."""
JOINED = "\n\n"
"""How Letta joins the text parts of a message."""
RETURN_JOINED = "\n"
"""How Letta joins the text parts of a tool's return."""
REASONING = frozenset({"reasoning", "summarized_reasoning"})
UNSENT = frozenset({"redacted_reasoning", "omitted_reasoning", "tool_call", "tool_return"})
ROLES = ("system", "user", "summary", "assistant", "approval", "tool")
EXPECTED = "not a Letta agent file: expected a JSON object with an 'agents' list (an .af export)"
ONE_FILE = "a Letta agent file is one JSON object, and nothing after it"


Mode = tuple[InKwargs | None, bool]
"""How the agent sends its inner thoughts: in its calls' arguments (None: not), and whether Letta
scrubs them from its messages with calls (reasoning entirely off)."""


@dataclass(frozen=True, slots=True)
class Parts:
    """A message's content, split as Letta sends it: texts, reasoning, and image parts."""

    texts: list[str]
    reasoning: list[str]
    images: list[Wire]


def is_letta(values: list[object]) -> bool:
    """Whether a file's first entry is a Letta agent file: an object with an `agents` list and
    Letta's other top-level keys."""
    first = values[0] if values else None
    return isinstance(first, Mapping) and isinstance(first.get("agents"), list) and set(first) >= KEYS


def read_letta(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The in-context messages of the file's agent `report.session` (see the module docstring)."""
    first = next(entries, None)
    if first is None:
        return
    agents = first.value.get("agents") if isinstance(first.value, Mapping) else None
    if not isinstance(agents, list):
        raise report.error(first.number, EXPECTED)
    after = next(entries, None)
    if after is not None:
        raise report.error(after.number, ONE_FILE)
    if report.session >= len(agents):
        raise beyond(report, len(agents), "agents")
    for _ in agents[1:]:
        report.skip("agent of the file not replayed")
    report.item = (agents, report.session)
    agent = agents[report.session]
    if not isinstance(agent, Mapping):
        raise report.error(first.number, f"agent {report.session} is {type(agent).__name__}, not an object")
    names = ", ".join(repr(a.get("name")) for a in agents if isinstance(a, Mapping))
    report.notes.append(
        f"agent {agent.get('name')!r} is replayed: agent {report.session} of the file's "
        f"{len(agents)} ({names}; counted from 0)"
    )
    kwargs = in_kwargs(agent)
    if kwargs is not None:
        report.notes.append(
            f"the agent's llm_config has put_inner_thoughts_in_kwargs on: its inner thoughts are a "
            f"'{KWARG}' argument of each call, and of each tool's parameters"
        )
    scrub = reasoning_off(agent)
    if scrub:
        report.notes.append(
            "the agent's llm_config has reasoning entirely off: Letta scrubs the text (inner thoughts) "
            "of its assistant messages with calls before each request"
        )
    report.tools.extend(_tools(first.value.get("tools"), agent.get("tool_ids"), kwargs))
    yield from _agent(agent, first.number, Calls(report, once=True), (kwargs, scrub))
    report.item = None


def _tools(declared: object, ids: object, kwargs: InKwargs | None) -> Iterator[ToolSchema]:
    """The schemas of the agent's tools: those of the file whose `id` it lists (all, if none),
    with the `thinking` parameter when the agent sends its thoughts in its calls."""
    for item in declared if isinstance(declared, list) else ():
        if not isinstance(item, Mapping) or (isinstance(ids, list) and item.get("id") not in ids):
            continue
        declared_schema = item.get("json_schema")
        fields = declared_schema if isinstance(declared_schema, Mapping) else {}
        parameters = fields.get("parameters")
        if kwargs is not None:
            parameters = with_parameter(
                parameters if isinstance(parameters, Mapping) else {"type": "object"}, kwargs.description
            )
        found = schema(fields.get("name", item.get("name")), fields.get("description"), parameters)
        if found is not None:
            yield found


def _agent(agent: Mapping[str, Any], number: int, calls: Calls, mode: Mode) -> Iterator[Wire]:
    """The agent's in-context messages in order, the others counted."""
    report = calls.report
    messages, ids = agent.get("messages"), agent.get("in_context_message_ids")
    if not isinstance(messages, list) or not isinstance(ids, list):
        raise report.error(
            number, "an agent has no 'messages' list or no 'in_context_message_ids' list (Letta exports both)"
        )
    order = _order(messages, ids, number, report)
    for _ in range(len(messages) - len(order)):
        report.skip("message not in the agent's context")
    first = messages[order[0]] if order else None
    if not isinstance(first, Mapping) or first.get("role") != "system":
        prompt = agent.get("system")
        if isinstance(prompt, str) and prompt:
            report.notes.append(
                "the agent's context opens with no system message: its 'system' prompt is replayed as one"
            )
            yield system(prompt)
    for index in order:
        report.item = (messages, index)
        where = f"message {messages[index].get('id')!r}"
        yield from _message(messages[index], where, number, calls, mode)


def _order(messages: list[Any], ids: list[Any], number: int, report: Report) -> list[int]:
    """The indices of the in-context messages, in the order `ids` lists them.

    Raises:
        TraceError: a message that is not an object with a text `id`, two messages of one id, or an
            in-context id that is not text, names no message or is listed twice.
    """
    index: dict[str, int] = {}
    for k, message in report.each(messages):
        key = message.get("id") if isinstance(message, Mapping) else None
        if not isinstance(key, str) or key in index:
            said = "has no text 'id'" if not isinstance(key, str) else f"repeats the id {key!r}"
            raise report.error(number, f"message {k} of the agent {said}")
        index[key] = k
    order: list[int] = []
    for k, key in report.each(ids):
        if not isinstance(key, str) or key not in index or index[key] in order:
            said = (
                "is listed twice"
                if isinstance(key, str) and key in index
                else "names no message of the agent"
            )
            raise report.error(number, f"in_context_message_ids[{k}] ({key!r}) {said}")
        order.append(index[key])
    return order


def _message(message: Mapping[str, Any], where: str, number: int, calls: Calls, mode: Mode) -> Iterator[Wire]:
    report, role = calls.report, message.get("role")
    if role not in ROLES:
        raise report.error(number, f"{where}: its role is {role!r}; Letta writes {', '.join(ROLES)}")
    if role == "tool":
        yield from _results(message, where, number, calls)
        return
    parts = _parts(message.get("content"), role, where, number, report)
    if role == "system":
        _count_images(parts, role, report)
        yield system(JOINED.join(parts.texts))
    elif role in ("user", "summary"):
        yield user(_user_content(parts))
    else:
        yield from _assistant(message, parts, where, number, calls, mode=mode)


def _parts(body: object, role: str, where: str, number: int, report: Report) -> Parts:
    """A message's content split into texts, reasoning and images (text alone: one text)."""
    if isinstance(body, str):
        return Parts([body], [], [])
    if not isinstance(body, list):
        raise report.error(number, f"{where}: its content is not a list of parts")
    parts = Parts([], [], [])
    for k, part in enumerate(body):
        kind = part.get("type") if isinstance(part, Mapping) else None
        at = f"{where}.content[{k}]"
        if kind == "text":
            parts.texts.append(_text(part.get("text"), f"{at}.text", number, report))
        elif kind in REASONING:
            parts.reasoning.append(_reasoning(part, at, number, report))
        elif kind == "image":
            _image(part.get("source"), parts, role, report)
        elif kind in UNSENT:
            report.skip(f"{role} message part {kind!r} (Letta does not send it)")
        else:
            raise report.error(number, f"{at} is not a content part Letta writes (its type is {kind!r})")
    return parts


def _text(value: object, where: str, number: int, report: Report) -> str:
    if not isinstance(value, str):
        raise report.error(number, f"{where} is {type(value).__name__}, not text")
    return value


def _reasoning(part: Mapping[str, Any], where: str, number: int, report: Report) -> str:
    """A reasoning part's text; a summarized one's summaries joined."""
    if part["type"] == "reasoning":
        return _text(part.get("reasoning"), f"{where}.reasoning", number, report)
    summary = part.get("summary")
    if not isinstance(summary, list):
        raise report.error(number, f"{where}.summary is not a list of summary parts")
    return JOINED.join(
        _text(
            item.get("text") if isinstance(item, Mapping) else None,
            f"{where}.summary[{k}].text",
            number,
            report,
        )
        for k, item in enumerate(summary)
    )


def _image(source: object, parts: Parts, role: str, report: Report) -> None:
    """An image part of a `url` source, or of base64 data with its media type; else counted (an
    image Letta keeps only in its file store)."""
    fields = source if isinstance(source, Mapping) else {}
    url, data, media = fields.get("url"), fields.get("data"), fields.get("media_type")
    if fields.get("type") == "url" and isinstance(url, str):
        parts.images.append(image_part(url))
    elif isinstance(data, str) and isinstance(media, str):
        parts.images.append(image_part(data_url(media, data)))
    else:
        report.skip(f"{role} image with no URL or data (kept in Letta's file store)")


def _count_images(parts: Parts, role: str, report: Report) -> None:
    for _ in parts.images:
        report.skip(f"{role} message part 'image'")


def _user_content(parts: Parts) -> str | list[Wire]:
    """A user message's text, or its text then its images as parts."""
    text = JOINED.join(parts.texts)
    if not parts.images:
        return text
    return ([text_part(text)] if parts.texts else []) + parts.images


def _assistant(
    message: Mapping[str, Any],
    parts: Parts,
    where: str,
    number: int,
    calls: Calls,
    *,
    mode: Mode,
) -> Iterator[Wire]:
    """An assistant message: its text, its calls and its reasoning; none when Letta sends none.
    With the thoughts in the calls' arguments, or scrubbed, a message with `tool_calls` has no text."""
    (kwargs, scrub), report, listed = mode, calls.report, message.get("tool_calls")
    if message["role"] == "approval" and listed is None:
        report.skip("approval response (Letta does not send it)")
        return
    if listed is not None and not isinstance(listed, list):
        raise report.error(number, f"{where}.tool_calls is not a list of calls or null")
    _count_images(parts, "assistant", report)
    made = [_call(item, f"{where}.tool_calls[{k}]", number, calls) for k, item in enumerate(listed or ())]
    reasoning = JOINED.join(parts.reasoning)
    if scrub and made and parts.texts and message["role"] == "assistant":
        report.skip("inner thoughts beside an assistant message's calls (Letta scrubs them, reasoning off)")
        parts = Parts([], parts.reasoning, parts.images)
    if kwargs is not None and listed is not None:
        if not made:
            report.skip("assistant message with an empty 'tool_calls' list (Letta sends it with no content)")
            return
        inner = thoughts(message.get("content"))
        moved = [_in_arguments(made_call, inner, report) for made_call in made]
        yield {**assistant("", moved, reasoning), "content": kwargs.content}
        return
    if not made and not parts.texts:
        report.skip("assistant message with no text and no calls (Letta does not send it)")
        return
    yield assistant(JOINED.join(parts.texts), made, reasoning)


def _in_arguments(made: Wire, inner: str | None, report: Report) -> Wire:
    """A call with the message's thoughts first of its arguments, as Letta rewrites them; as stored
    (counted) when its arguments are not a JSON object."""
    function = made["function"]
    arguments = with_thoughts(function["arguments"], inner)
    if arguments is None:
        report.skip(
            f"'{KWARG}' argument of a call whose arguments are not a JSON object (the call is sent as stored)"
        )
        return made
    return {**made, "function": {**function, "arguments": arguments}}


def _call(item: object, where: str, number: int, calls: Calls) -> Wire:
    """A call `{id, type, function: {name, arguments}}`, its arguments text as stored."""
    report = calls.report
    function = item.get("function") if isinstance(item, Mapping) else None
    call_id = item.get("id") if isinstance(item, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(call_id, str) or not isinstance(name, str) or not isinstance(function, Mapping):
        raise report.error(
            number, f"{where} is not a call {{id, function: {{name, arguments}}}} with text id and name"
        )
    arguments = _text(function.get("arguments"), f"{where}.function.arguments", number, report)
    return call(calls.declare(call_id), name, arguments)


def _results(message: Mapping[str, Any], where: str, number: int, calls: Calls) -> Iterator[Wire]:
    """A tool message per return, answering its call; an older message's content, answering its
    `tool_call_id`."""
    report, returns = calls.report, message.get("tool_returns")
    if returns is not None and not isinstance(returns, list):
        raise report.error(number, f"{where}.tool_returns is not a list of returns or null")
    if not returns:
        text = JOINED.join(_parts(message.get("content"), "tool", where, number, report).texts)
        call_id = calls.answer(message.get("tool_call_id"), number, key=f"{where}.tool_call_id")
        yield tool(call_id, text, error=_failed(text))
        return
    for k, returned in enumerate(returns):
        at = f"{where}.tool_returns[{k}]"
        if not isinstance(returned, Mapping):
            raise report.error(
                number, f"{at} is {type(returned).__name__}, not a return {{tool_call_id, status}}"
            )
        call_id = calls.answer(returned.get("tool_call_id"), number, key=f"{at}.tool_call_id")
        body = _response(returned.get("func_response"), at, number, report)
        yield tool(call_id, body, error=returned.get("status") == "error")


def _response(value: object, where: str, number: int, report: Report) -> str:
    """A return's text: as stored, or its text parts joined (images counted)."""
    if value is None or isinstance(value, str):
        return value or ""
    if not isinstance(value, list):
        raise report.error(number, f"{where}.func_response is not text or a list of parts")
    texts: list[str] = []
    for k, part in enumerate(value):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "image":
            report.skip("tool return image (Letta sends a placeholder)")
        else:
            texts.append(
                _text(
                    part.get("text") if kind == "text" else None,
                    f"{where}.func_response[{k}].text",
                    number,
                    report,
                )
            )
    return RETURN_JOINED.join(texts)


def _failed(text: str) -> bool:
    """Whether a result is Letta's packed failure, `{"status": "Failed", ...}` (text nested too
    deep to read as JSON is not)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, Mapping) and value.get("status") == "Failed"
