"""OpenHands event streams and evaluation outputs, as OpenAI chat messages.

An event stream is a JSON list of events; an evaluation output (`output.jsonl`) holds one record
per line, each with the task's `instruction` and its `history` of events. An event is an action
(`action`: `message`, `run`, `edit`, ...) or an observation (`observation`: `run`, `read`, ...),
from a `source` (`user`, `agent`, `environment`). Function-calling agents attach
`tool_call_metadata` to both: the tool call's id and the model response that made it.

Mapping rules:
- The `system` action is the system prompt; its `args.tools` are the tool schemas.
- A record's first user message is its `instruction` (placed first when the history has none
  before the agent acts); other user `message` actions are user messages (their `image_urls`
  image parts).
- An agent action with `tool_call_metadata` is the assistant message of its model response (the
  response's text, reasoning apart, and all its tool calls, so parallel calls stay one message);
  the further actions of the same response add nothing. Without a model response, the action's
  own call (its `function_name`, `tool_call_id` and `args`) is used.
- An observation with `tool_call_metadata` is the result of that call: its raw `content`, with
  no added exit-code line (an `error` observation is an error result).
- A response's message waits for the results of its calls (`batches`): what came between a call
  and its observation (a message the user typed while a command ran) is replayed before the
  calls' message, whose results follow it at once in the order of its calls, as OpenHands sends
  them; a call with no observation anywhere is not waited for.
- An agent `message` action without metadata is assistant text.
- What the user did in the session's terminal (a user `run` action, and the `run` observation
  without a call that holds its output) is user text: the command, then its output (OpenHands
  adds a lead-in line to each, not replayed). Other user actions are user text of their
  `message`. An `error` or `user_rejected` observation without a call is user text too: OpenHands
  sends it to the model as a user message.
- Recalls (OpenHands renders them with its prompt templates, which the file does not hold),
  state changes, condensation events and the other observations without a call are skipped and
  counted. Only the first record of an
  evaluation output is read (each record is its own session); the rest are counted.

The OpenHands agent SDK writes its events with a `kind` instead (`SystemPromptEvent`,
`MessageEvent`, `ActionEvent`, `ObservationEvent`, `AgentErrorEvent`, `UserRejectObservation`,
`Condensation`, ...), mapped by the same rules: the actions of one `llm_response_id` are one
assistant message (its `thought` the text, `reasoning_content` the reasoning, else its
`thinking_blocks` or its Responses reasoning item's texts, each `tool_call` a call); a system
prompt's `dynamic_context` follows the prompt, and a message's or an observation's
`extended_content` its content (images kept), as the SDK sends them; an observation's result is
its raw `output` (or its `content` text), an error when the observation says so, its images
kept; an agent error is the error result of its call, and a user's rejection too, in the SDK's
words (`Action rejected: <reason>`, its default reason where none was kept); adjacent user
messages are one, their parts in order, as the SDK sends them; the instruction is the first user message,
placed first when the history has none before the agent acts; what came between a call and its
observation goes before the calls' message, as above (the SDK sends it between them, where the
protocol has no room for it). Events the SDK never converts to
LLM messages (conversation errors, hook runs, token and completion logs, security analyses,
interrupts, state updates) are skipped and counted, as are condensations.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    call,
    content,
    field_of,
    image_part,
    listed,
    name_of,
    object_of,
    schema,
    system,
    text_of,
    text_only,
    text_part,
    tool,
    user,
)
from ctxlab.workloads.importers.batches import held_until_answered

SKIPPED_ACTIONS = frozenset(
    {"recall", "change_agent_state", "condensation", "condensation_request", "null", "pause", "resume"}
)
KNOWN_ACTIONS = frozenset(
    {
        "system",
        "message",
        "run",
        "run_ipython",
        "read",
        "write",
        "edit",
        "browse",
        "browse_interactive",
        "think",
        "finish",
        "reject",
        "delegate",
        "call_tool_mcp",
        "mcp",
        "task_tracking",
        "loop_recovery",
    }
)


SDK_UNSUFFIXED = frozenset({"Condensation", "CondensationRequest", "UserRejectObservation"})
"""The agent SDK's event kinds whose names do not end in `Event`."""


def _is_event(value: object) -> bool:
    """A classic event (an `action` or `observation`) or an agent-SDK one (its `kind`)."""
    if not isinstance(value, Mapping) or "source" not in value:
        return False
    kind = str(value.get("kind", ""))
    return "action" in value or "observation" in value or kind.endswith("Event") or kind in SDK_UNSUFFIXED


def is_event_stream(value: object) -> bool:
    """A JSON list of OpenHands events."""
    return isinstance(value, list) and bool(value) and all(_is_event(e) for e in value[:5])


def is_record(value: object) -> bool:
    """An evaluation output record: `instruction` and a `history` of events."""
    return isinstance(value, Mapping) and isinstance(value.get("history"), list) and "instruction" in value


def read_openhands(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of an event stream or of the first record of an evaluation output."""
    first = True
    for number, value in entries:
        if not first:
            report.skip("further evaluation record")
            continue
        first = False
        if is_record(value):
            instruction = text_of(value.get("instruction")) or None
            yield from _dispatch(value["history"], number, report, instruction)
        elif is_event_stream(value):
            yield from _dispatch(value, number, report, None)
        else:
            raise report.error(number, "not an OpenHands record (instruction, history) or event list")


def _dispatch(events: Sequence[Any], number: int, report: Report, instruction: str | None) -> Iterator[Wire]:
    """Events with a `kind` are the agent SDK's; the others the classic event stream's."""
    sdk = bool(events) and isinstance(events[0], Mapping) and "kind" in events[0]
    messages = (_sdk_events if sdk else _events)(events, number, report, instruction)
    yield from held_until_answered(list(messages), report)


def _events(events: Sequence[Any], number: int, report: Report, instruction: str | None) -> Iterator[Wire]:
    calls = Calls(report)
    responses: set[str] = set()
    for index, event in report.each(events):
        if not isinstance(event, Mapping):
            raise report.error(number, f"event {index} is not an object")
        metadata = event.get("tool_call_metadata")
        if "observation" in event:
            yield from _observation(event, calls, number)
            continue
        kind, source = event.get("action"), event.get("source")
        if kind in SKIPPED_ACTIONS:
            report.skip(f"action:{kind}")
        elif kind == "system":
            yield _system(event, report)
        elif isinstance(metadata, Mapping):
            wire = _response(event, metadata, responses)
            if wire is not None:
                for item in wire.get("tool_calls", []):
                    calls.declare(item["id"])
                yield from _instructed(instruction, wire)
                instruction = None
        elif source == "user" and kind in KNOWN_ACTIONS:
            yield _user_action(event, instruction if kind == "message" else None)
            instruction = None if kind == "message" else instruction
        elif kind in {"message", "finish"} and source == "agent":
            yield from _instructed(instruction, assistant(_message_text(event)))
            instruction = None
        elif kind in KNOWN_ACTIONS:
            raise report.error(
                number,
                f"event {index}: a {kind!r} action without tool_call_metadata (an OpenHands agent "
                "without function calling) cannot be mapped to a tool call",
            )
        else:
            raise report.error(number, f"event {index}: unknown action {kind!r}")


def _instructed(instruction: str | None, wire: Wire) -> Iterator[Wire]:
    """An agent's message, after the record's instruction when no user message has given it (a
    history that opens with the agent's turn): the model was sent the task first."""
    if instruction is not None:
        yield user(instruction)
    yield wire


USER_OBSERVATIONS = frozenset({"run", "error", "user_rejected"})
"""Observations without a call that OpenHands sends to the model as user messages."""


def _observation(event: Mapping[str, Any], calls: Calls, number: int) -> Iterator[Wire]:
    metadata = event.get("tool_call_metadata")
    kind = event.get("observation")
    if isinstance(metadata, Mapping) and metadata.get("tool_call_id"):
        yield tool(
            calls.answer(metadata["tool_call_id"], number, key="tool_call_metadata.tool_call_id"),
            text_of(event.get("content")),
            error=kind == "error",
        )
    elif kind in USER_OBSERVATIONS:
        yield user(text_of(event.get("content")))
    else:
        calls.report.skip(f"observation:{kind}")


def _user_action(event: Mapping[str, Any], instruction: str | None) -> Wire:
    """A user's message (the record's instruction in place of the first one's text), or the
    command a user ran in the terminal, or another user action's `message`."""
    kind, args = event.get("action"), event.get("args")
    if kind == "run" and isinstance(field_of(args, "command"), str):
        return user(field_of(args, "command"))
    if kind != "message":
        return user(text_of(event.get("message")))
    text = instruction if instruction is not None else _message_text(event)
    images = [image_part(str(u)) for u in field_of(args, "image_urls") or []]
    return user([text_part(text), *images] if images else text)


def _system(event: Mapping[str, Any], report: Report) -> Wire:
    for item in field_of(event, "args", "tools") or []:
        function = item.get("function", item) if isinstance(item, Mapping) else {}
        found = schema(function.get("name"), function.get("description"), function.get("parameters"))
        if found is not None:
            report.tools.append(found)
    return system(text_of(field_of(event, "args", "content")) or text_of(event.get("message")))


def _message_text(event: Mapping[str, Any]) -> str:
    args = event.get("args")
    found = field_of(args, "content")
    if isinstance(found, str):
        return found
    return text_of(field_of(args, "final_thought")) or text_of(event.get("message"))


def _response(event: Mapping[str, Any], metadata: Mapping[str, Any], seen: set[str]) -> Wire | None:
    """The assistant message of the action's model response, None when already given."""
    response = metadata.get("model_response")
    rid = field_of(response, "id")
    message = None
    choices = field_of(response, "choices")
    if isinstance(choices, list) and choices:
        message = field_of(choices[0], "message")
    if isinstance(message, Mapping):
        if isinstance(rid, str):
            if rid in seen:
                return None
            seen.add(rid)
        calls = [_called(object_of(item)) for item in listed(message.get("tool_calls"))]
        return assistant(text_of(message.get("content")), calls, text_of(message.get("reasoning_content")))
    args = event.get("args")
    arguments = json.dumps(args, ensure_ascii=False) if isinstance(args, Mapping) else "{}"
    single = call(str(metadata.get("tool_call_id")), str(metadata.get("function_name")), arguments)
    return assistant(text_of(field_of(args, "thought")), [single])


SDK_SKIPPED = frozenset(
    {
        "ACPToolCallEvent",
        "Condensation",
        "CondensationRequest",
        "CondensationSummaryEvent",
        "ConversationErrorEvent",
        "ConversationStateUpdateEvent",
        "HookExecutionEvent",
        "InterruptEvent",
        "LLMCompletionLogEvent",
        "PauseEvent",
        "SecurityAnalysisEvent",
        "StreamingDeltaEvent",
        "TokenEvent",
    }
)
"""The agent SDK's events (1.58.2) that are not converted to LLM messages (not an
`LLMConvertibleEvent`: errors, hooks, tokens, logs, state), and its condensation events."""


def _called(item: Mapping[str, Any]) -> Wire:
    """A `tool_calls` item of a model response: its id, function name and arguments."""
    function = object_of(item["function"])
    return call(str(item.get("id")), name_of(function), function.get("arguments") or "{}")


def _sdk_text(parts: object) -> str:
    """The text of a list of `TextContent` parts (a part may be a string, or null), or a string.

    Raises:
        TypeError: a value of another kind (`base.text_of`).
    """
    if not isinstance(parts, list):
        return text_of(parts)
    return "".join(text_of(p if p is None or isinstance(p, str) else object_of(p).get("text")) for p in parts)


def _sdk_reasoning(holder: object) -> str:
    """The reasoning of an action or a message: its `reasoning_content`, else its Anthropic
    `thinking_blocks`, else its Responses reasoning item's summary and content."""
    found = text_of(field_of(holder, "reasoning_content"))
    blocks = field_of(holder, "thinking_blocks")
    if not found and blocks is not None:
        found = "\n\n".join(t for t in (text_of(object_of(b).get("thinking")) for b in listed(blocks)) if t)
    item = field_of(holder, "responses_reasoning_item")
    if not found and isinstance(item, Mapping):
        texts = [*(item.get("summary") or []), *(item.get("content") or [])]
        found = "\n\n".join(
            t for t in (p if isinstance(p, str) else text_of(field_of(p, "text")) for p in texts) if t
        )
    return found


REJECTED = "User rejected the action"
"""The reason of a `UserRejectObservation` that gives none (the SDK's default)."""


def _with_extension(output: str | list[Wire], event: Mapping[str, Any]) -> str | list[Wire]:
    """An observation's result with its event's `extended_content` after it (what the agent
    context adds, such as the rules a touched path triggers), as the SDK sends it."""
    extended = _extended(event)
    if not extended:
        return output
    own = [text_part(output)] if isinstance(output, str) else output
    return content([*own, *extended])


def _extended(event: Mapping[str, Any]) -> list[Wire]:
    """An event's `extended_content`, as text parts (none when it has none)."""
    return [text_part(text_of(object_of(p).get("text"))) for p in listed(event.get("extended_content"))]


def _sdk_output(observation: object, report: Report) -> str | list[Wire]:
    """An observation's result: its raw `output`, else its `content` (text and image parts),
    else its `message`."""
    output = field_of(observation, "output")
    if isinstance(output, str):
        return output
    if output is not None and not isinstance(output, list):
        text_of(output)  # raises: a number or an object is no output the SDK writes
    found = field_of(observation, "content")
    if isinstance(found, list):
        return _sdk_parts(found, report)
    return _sdk_text(found) if found is not None else text_of(field_of(observation, "message"))


def _sdk_parts(parts: list[Any], report: Report) -> str | list[Wire]:
    """`_sdk_part_list` as content."""
    return content(_sdk_part_list(parts, report))


def _sdk_part_list(parts: list[Any], report: Report) -> list[Wire]:
    """`TextContent` and `ImageContent` (each of its `image_urls`) as content parts; other parts
    are counted."""
    found: list[Wire] = []
    for part in parts:
        kind = field_of(part, "type")
        urls = field_of(part, "image_urls")
        if kind == "text":
            found.append(text_part(text_of(field_of(part, "text"))))
        elif kind == "image" and isinstance(urls, list):
            found.extend(image_part(str(url)) for url in urls)
        else:
            report.skip(f"content part {kind!r}")
    return found


@dataclass(slots=True)
class _Sdk:
    """Maps agent-SDK events one at a time, holding back the actions of one model response."""

    report: Report
    calls: Calls
    number: int
    instruction: str | None
    held: tuple[object, Wire] | None = None

    def flush(self) -> Iterator[Wire]:
        if self.held is not None:
            yield self.held[1]
        self.held = None

    def first_user(self, own: list[Wire], extra: Sequence[Wire] = ()) -> Wire:
        """A user message of its own parts and then `extra`; the first one's text is the
        record's instruction (its other parts kept)."""
        if self.instruction is not None:
            own = [text_part(self.instruction), *(p for p in own if p["type"] != "text")]
            self.instruction = None
        return user(content([*own, *extra]))

    def message(self, event: Mapping[str, Any]) -> Wire:
        """A `MessageEvent`: its message's content, then its `extended_content` (the text the
        agent context adds, which the SDK sends with it)."""
        message = event.get("llm_message")
        found = field_of(message, "content")
        own = _sdk_part_list(found, self.report) if isinstance(found, list) else [text_part(_sdk_text(found))]
        extra = _extended(event)
        if event.get("source") == "user":
            return self.first_user(own, extra)
        text = text_only(content([*own, *extra]), self.report, "assistant")
        return assistant(text, (), _sdk_reasoning(message))

    def action(self, event: Mapping[str, Any]) -> Iterator[Wire]:
        if self.instruction is not None:
            yield self.first_user([])
        call_id = self.calls.declare(str(event.get("tool_call_id")))
        tool_call = event.get("tool_call")
        arguments = (object_of(tool_call).get("arguments") if tool_call is not None else None) or "{}"
        made = call(call_id, str(event.get("tool_name")), arguments)
        response = event.get("llm_response_id")
        if self.held is not None and self.held[0] == response:
            self.held[1]["tool_calls"].append(made)
            return
        yield from self.flush()
        text = _sdk_text(event.get("thought"))
        self.held = (response, assistant(text, [made], _sdk_reasoning(event)))

    def other(self, event: Mapping[str, Any], kind: object, index: int) -> Iterator[Wire]:
        yield from self.flush()
        if kind == "ObservationEvent":
            observation = event.get("observation")
            flag = field_of(observation, "error")
            error = flag not in (None, False, "") or field_of(observation, "is_error") is True
            call_id = self.calls.answer(event.get("tool_call_id"), self.number, key="tool_call_id")
            output = _with_extension(_sdk_output(observation, self.report), event)
            yield tool(call_id, output, error=error)
        elif kind in {"AgentErrorEvent", "UserRejectObservation"}:
            if kind == "AgentErrorEvent":
                said = text_of(event.get("error"))
            else:  # the SDK's words for a rejection, its default reason where none was kept
                said = f"Action rejected: {text_of(event.get('rejection_reason')) or REJECTED}"
            yield tool(
                self.calls.answer(event.get("tool_call_id"), self.number, key="tool_call_id"),
                said,
                error=True,
            )
        elif kind == "MessageEvent":
            yield self.message(event)
        elif kind == "SystemPromptEvent":
            # dynamic_context is the system message's second block when the SDK sends it
            prompt = _sdk_text([event.get("system_prompt"), event.get("dynamic_context")])
            yield _system({"args": {"content": prompt, "tools": event.get("tools")}}, self.report)
        elif kind in SDK_SKIPPED:
            self.report.skip(str(kind))
        else:
            raise self.report.error(self.number, f"event {index}: unknown event kind {kind!r}")


def _sdk_events(
    events: Sequence[Any], number: int, report: Report, instruction: str | None
) -> Iterator[Wire]:
    """The messages of agent-SDK events (see the module docstring)."""
    yield from _users_merged(_sdk_messages(events, number, report, instruction))


def _sdk_messages(
    events: Sequence[Any], number: int, report: Report, instruction: str | None
) -> Iterator[Wire]:
    mapper = _Sdk(report=report, calls=Calls(report), number=number, instruction=instruction)
    for index, event in report.each(events):
        if not isinstance(event, Mapping):
            raise report.error(number, f"event {index} is not an object")
        kind = event.get("kind")
        if kind == "ActionEvent":
            yield from mapper.action(event)
        else:
            yield from mapper.other(event, kind, index)
    yield from mapper.flush()


def _users_merged(messages: Iterator[Wire]) -> Iterator[Wire]:
    """`messages` with each run of user messages sent as one, its parts in order, as the SDK
    sends adjacent plain user turns (`events_to_messages`)."""
    held: Wire | None = None
    for message in messages:
        if held is not None and message["role"] == "user":
            held = user(content([*_parts(held["content"]), *_parts(message["content"])]))
            continue
        if held is not None:
            yield held
        held = message if message["role"] == "user" else None
        if held is None:
            yield message
    if held is not None:
        yield held


def _parts(body: str | list[Wire]) -> list[Wire]:
    return [text_part(body)] if isinstance(body, str) else list(body)
