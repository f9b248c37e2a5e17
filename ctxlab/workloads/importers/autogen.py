"""AutoGen (autogen-agentchat, autogen-core) saved state, as OpenAI chat messages, mapped as
AutoGen's model clients send an agent's model context to a chat model.

What AutoGen saves (`json.dumps` of `await agent.save_state()` or `await team.save_state()`):
- An `AssistantAgentState`: `{type, version, llm_context: {messages}}`, the messages of the agent's
  model context.
- A `TeamState`: `{type, version, agent_states}`, one state per participant keyed by its name
  (a `ChatAgentContainerState` holding the agent's `agent_state` and the `message_buffer` of
  team messages it has not yet read), then the group chat manager's state (its `message_thread`).
  A `SocietyOfMindAgentState` holds its inner team's state (`inner_team_state`).
- The messages alone: a model context's `save_state()` (`{messages}`), or a JSON list of them
  (`[m.model_dump(mode="json") for m in await model_context.get_messages()]`), or JSONL of one
  message (or one list) a line.

A message is one of autogen-core's LLM messages, told by its `type`: `SystemMessage` (`content`
text), `UserMessage` (`content` text, or a list of text and images `{"data": <base64>}`, and its
`source`), `AssistantMessage` (`content` text, or a list of calls `{id, name, arguments}` with
`arguments` JSON text; `thought`; `source`) and `FunctionExecutionResultMessage` (`content` a
list of results `{call_id, content, is_error, name}`).

Mapping rules:
- Each agent's model context is one conversation: a team file holds one per agent with a model
  context, counted by `--session N` from 0 in the file's order (the team's participants as it
  lists them, depth first into an inner team); a note names the agent replayed. The manager's
  thread (the team's messages as events, not a model's context), each message waiting in an
  agent's buffer, and an agent state with no model context (a user proxy) are counted.
- The agent keeps its system message apart from its model context and does not save it: a
  conversation that opens with no `SystemMessage` has no system prompt, and a note says so. A
  `SystemMessage` in the context (memory the agent added) is a system message where it stands.
- A user message is its text and images (a `data:` URL of the type the bytes' signature tells:
  PNG, which AutoGen writes, JPEG, GIF or WebP; other bytes are counted). Its `source` (the user,
  or the team member who spoke) is not replayed, as no reader replays a sender's name.
- An assistant message of calls is one message with those calls, their `arguments` as given;
  its `thought` is its text, as AutoGen's model clients send it (the text a model wrote with its
  calls). A text message's `thought` is the reasoning AutoGen kept of a reasoning model, never
  text (its clients do not send it back).
- Each execution result is a tool message answering its call, `is_error` an error result.

Invariants:
- A file holds one saved state, or messages: a state followed by anything, a message of another
  `type`, or a field of a shape AutoGen never writes is an error at its line (inside a document,
  the line of the message being read); a result must answer a call before it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    base64_bytes,
    beyond,
    call,
    content,
    data_url,
    image_part,
    system,
    text_part,
    tool,
    user,
)

TYPES = ("SystemMessage", "UserMessage", "AssistantMessage", "FunctionExecutionResultMessage")
STATES = frozenset({"AssistantAgentState", "TeamState", "SocietyOfMindAgentState"})
"""The states `save_state()` of an agent or a team writes at the top of a file."""
SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
DETECT_MESSAGES = 5
"""How many messages of a list detection looks at."""
EXPECTED = (
    "not AutoGen saved state: expected an agent's or a team's save_state() "
    "(AssistantAgentState, TeamState) or autogen-core LLM messages (a 'type' of "
    f"{', '.join(TYPES)})"
)
NO_PROMPT = (
    "the conversation opens with no system message: an AutoGen agent keeps its system message "
    "apart from its model context and does not save it, so none is replayed"
)
ONE_STATE = "an AutoGen state file holds one saved state, and nothing after it"


def is_message(value: object) -> bool:
    """Whether `value` is an autogen-core LLM message as JSON: its `type` one of the four."""
    return isinstance(value, Mapping) and value.get("type") in TYPES and "content" in value


def is_state(value: object) -> bool:
    """Whether `value` is the saved state of an agent or a team, told by its `type` (a state of
    another shape inside is told when it is read, not taken for another format)."""
    return isinstance(value, Mapping) and value.get("type") in STATES


def messages_of(value: object) -> list[Any] | None:
    """The messages of an entry that holds messages: a list of them (an AutoGen message among
    its first, so that one of another shape is told at its place), one message, or a model
    context's state `{messages}`."""
    if isinstance(value, Mapping) and set(value) == {"messages"}:
        value = value["messages"]
    if isinstance(value, list):
        return value if any(is_message(m) for m in value[:DETECT_MESSAGES]) else None
    return [value] if is_message(value) else None


def is_autogen(values: list[object]) -> bool:
    """Whether a file's first entry is AutoGen saved state or autogen-core LLM messages."""
    return bool(values) and (is_state(values[0]) or messages_of(values[0]) is not None)


def read_autogen(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of the file's conversation `report.session` (see the module docstring)."""
    calls = Calls(report)
    for position, (number, value) in enumerate(entries):
        if position == 0 and is_state(value):
            yield from _state(value, number, calls)
            after = next(entries, None)
            if after is not None:
                raise report.error(after.number, ONE_STATE)
            return
        listed = messages_of(value)
        if listed is None:
            raise report.error(number, EXPECTED)
        if report.session:
            raise beyond(report, 1, "agent contexts")
        if position == 0:
            _note_prompt(listed, report)
        yield from _messages(listed, number, calls)


def _state(state: Mapping[str, Any], number: int, calls: Calls) -> Iterator[Wire]:
    """The context of the agent `report.session` of a saved state, the others counted."""
    report = calls.report
    contexts = list(_contexts(state, "", number, report))
    if report.session >= len(contexts):
        raise beyond(report, len(contexts), "agent contexts")
    if len(contexts) > 1 or report.session:
        names = ", ".join(repr(name) for name, _ in contexts)
        report.notes.append(
            f"the model context of agent {contexts[report.session][0]!r} is replayed: context "
            f"{report.session} of the file's {len(contexts)} ({names}; counted from 0)"
        )
    for _ in contexts[1:]:
        report.skip("model context of another agent")
    chosen = contexts[report.session][1]
    _note_prompt(chosen, report)
    yield from _messages(chosen, number, calls)


def _contexts(state: object, name: str, number: int, report: Report) -> Iterator[tuple[str, list[Any]]]:
    """Each model context a state holds, named by its agent's path in the team, in file order."""
    if not isinstance(state, Mapping):
        whose = f"the state of {name!r}" if name else "the state"
        raise report.error(number, f"{whose} is {type(state).__name__}, not an object")
    kind = state.get("type")
    if "llm_context" in state or kind == "AssistantAgentState":
        yield name or "agent", _context_messages(state.get("llm_context"), name, number, report)
    elif kind == "TeamState" or "agent_states" in state:
        members = state.get("agent_states")
        if not isinstance(members, Mapping):
            raise report.error(
                number, f"{name or 'the team'}: 'agent_states' is not an object of agent states"
            )
        for member, held in members.items():
            yield from _contexts(held, f"{name}/{member}" if name else str(member), number, report)
    elif kind == "ChatAgentContainerState":
        buffered = state.get("message_buffer")
        for _ in buffered if isinstance(buffered, list) else ():
            report.skip("team message in an agent's buffer (not yet in its model context)")
        yield from _contexts(state.get("agent_state"), name, number, report)
    elif kind == "SocietyOfMindAgentState":
        yield from _contexts(state.get("inner_team_state"), name, number, report)
    elif "message_thread" in state:
        report.skip(f"team manager's message thread ({kind}, not a model context)")
    else:
        report.skip(f"{kind if isinstance(kind, str) else 'untyped'} agent state (no model context)")


def _context_messages(context: object, name: str, number: int, report: Report) -> list[Any]:
    messages = context.get("messages") if isinstance(context, Mapping) else None
    if not isinstance(messages, list):
        raise report.error(
            number, f"{name or 'the agent'}: 'llm_context' is not an object with a 'messages' list"
        )
    return messages


def _note_prompt(listed: list[Any], report: Report) -> None:
    """Note that the conversation has no system prompt, unless it opens with a system message."""
    if not listed or not isinstance(listed[0], Mapping) or listed[0].get("type") != "SystemMessage":
        report.note_once(NO_PROMPT)


def _messages(listed: list[Any], number: int, calls: Calls) -> Iterator[Wire]:
    """The OpenAI chat messages of a list of LLM messages, each told at its own line."""
    report = calls.report
    for index, message in report.each(listed):
        where = f"message {index}"
        if not is_message(message):
            raise report.error(number, f"{where} is not an autogen-core LLM message: {_wrong(message)}")
        yield from _message(message, where, number, calls)


def _wrong(message: object) -> str:
    if not isinstance(message, Mapping):
        return f"it is {type(message).__name__}, not an object"
    if message.get("type") not in TYPES:
        return f"its type is {message.get('type')!r}; AutoGen writes {', '.join(TYPES)}"
    return "it has no 'content'"


def _message(message: Mapping[str, Any], where: str, number: int, calls: Calls) -> Iterator[Wire]:
    report, kind, body = calls.report, message["type"], message["content"]
    if kind == "SystemMessage":
        yield system(_text(body, f"{where}.content", number, report))
    elif kind == "UserMessage":
        yield user(_user(body, where, number, report))
    elif kind == "AssistantMessage":
        yield from _assistant(message, where, number, calls)
    else:
        yield from _results(body, where, number, calls)


def _text(value: object, where: str, number: int, report: Report) -> str:
    if not isinstance(value, str):
        raise report.error(number, f"{where} is {type(value).__name__}, not text")
    return value


def _user(body: object, where: str, number: int, report: Report) -> str | list[Wire]:
    """A user message's text, or its text and image parts."""
    if isinstance(body, str):
        return body
    if not isinstance(body, list):
        raise report.error(
            number, f"{where}: a user message's content is not text or a list of text and images"
        )
    parts: list[Wire] = []
    for k, item in enumerate(body):
        if isinstance(item, str):
            parts.append(text_part(item))
            continue
        url = _image(item, f"{where}.content[{k}]", number, report)
        if url is not None:
            parts.append(image_part(url))
    return content(parts)


def _image(item: object, where: str, number: int, report: Report) -> str | None:
    """An image's `data:` URL, or None for bytes of no image type a chat model takes (counted).

    Raises:
        TraceError: not an image `{"data": <base64>}`, or its data not base64.
    """
    data = item.get("data") if isinstance(item, Mapping) else None
    if not isinstance(data, str):
        raise report.error(number, f"{where} is neither text nor an image {{'data': <base64>}}")
    raw = base64_bytes(data)
    if raw is None:
        raise report.error(number, f"{where}: an image's 'data' is not base64 text")
    media = _media(raw)
    if media is None:
        report.skip("user image of no PNG, JPEG, GIF or WebP bytes (not replayed as an image)")
        return None
    return data_url(media, data)


def _media(raw: bytes) -> str | None:
    """The image type the bytes' signature tells, or None."""
    if raw.startswith(b"RIFF") and raw[8:12] == b"WEBP":
        return "image/webp"
    return next((media for signature, media in SIGNATURES if raw.startswith(signature)), None)


def _assistant(message: Mapping[str, Any], where: str, number: int, calls: Calls) -> Iterator[Wire]:
    """An assistant message: its text, or its calls with the thought as their text."""
    report, body = calls.report, message["content"]
    thought = message.get("thought")
    if thought is not None and not isinstance(thought, str):
        raise report.error(number, f"{where}.thought is {type(thought).__name__}, not text or null")
    if isinstance(body, str):
        yield assistant(body, reasoning=thought or "")
        return
    if not isinstance(body, list):
        raise report.error(number, f"{where}: an assistant message's content is not text or a list of calls")
    if not body:
        report.skip("assistant message with an empty list of calls")
        return
    listed = [_call(item, f"{where}.content[{k}]", number, calls) for k, item in enumerate(body)]
    yield assistant(thought or "", listed)


def _call(item: object, where: str, number: int, calls: Calls) -> Wire:
    report = calls.report
    fields = item if isinstance(item, Mapping) else {}
    if not isinstance(item, Mapping) or not all(isinstance(fields.get(k), str) for k in ("id", "name")):
        raise report.error(
            number, f"{where} is not a call {{id, name, arguments}} with its id and name as text"
        )
    arguments = _text(fields.get("arguments"), f"{where}.arguments", number, report)
    return call(calls.declare(fields["id"]), fields["name"], arguments)


def _results(body: object, where: str, number: int, calls: Calls) -> Iterator[Wire]:
    """Each execution result a tool message answering its call."""
    report = calls.report
    if not isinstance(body, list):
        raise report.error(number, f"{where}: an execution result message's content is not a list of results")
    if not body:
        report.skip("execution result message with no results")
    for k, result in enumerate(body):
        at = f"{where}.content[{k}]"
        if not isinstance(result, Mapping):
            raise report.error(number, f"{at} is {type(result).__name__}, not a result {{call_id, content}}")
        call_id = calls.answer(result.get("call_id"), number, key=f"{at}.call_id")
        yield tool(
            call_id,
            _text(result.get("content"), f"{at}.content", number, report),
            error=bool(result.get("is_error")),
        )
