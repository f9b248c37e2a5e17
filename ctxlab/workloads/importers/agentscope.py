"""AgentScope 2.0 agent state (`agent.state` saved as JSON, also under a stored session's `state`),
or its messages (`Msg` objects as JSON: a list of them, or one a line), as OpenAI chat messages.

An agent's state is `{session_id, summary, context, reply_context, permission_context,
tool_context, tasks_context, middle_context}`: `context` lists the messages the agent feeds its
model, `summary` the compressed summary of the messages a compression replaced (text, or a list of
`text` and `data` blocks; '' before any). A message is `{name, role, content, id, created_at,
...}`, its role `user`, `assistant` or `system`, its content a list of blocks: `text`, `thinking`,
`hint` (text, or a list of `text` and `data` blocks), `tool_call` (`id`, `name`, `input` the JSON
text of the arguments), `tool_result` (`id` of its call, `name`, `output` text or a list of `text`
and `data` blocks, `state`) and `data` (`source` `{type: url, url}` or `{type: base64, data}`,
each with its `media_type`). One reply of the agent is one assistant message holding every round
of it: its calls, their results, then the next round.

Mapping rules (as AgentScope's OpenAI chat formatter sends the messages):
- The summary, when not '', is a user message first: AgentScope sends it as a user message right
  after its system prompt, before the context. The messages it replaced are not in the file; a
  note says the summary is replayed. The state keeps no system prompt (the agent builds it from
  its configuration), so none is replayed.
- A user message is its text and images; a system message its text.
- An assistant message is split where the formatter splits it: at each run of `tool_result`
  blocks (the text and calls before it are an assistant message, each result a tool message) and
  at each `hint` (a user message at its place, as the formatter sends a hint). Its `thinking` is
  the reasoning of the piece it is in, never text.
- A result's `output` text is its content; a list is its text and image parts. A result whose
  `state` is `error`, `denied` or `interrupted` is an error result. A result must answer a call
  before it.
- Media that are not images (audio, video, a PDF), a medium in an assistant's own content, an
  assistant message with no blocks (the usage record AgentScope appends after a compression), a
  user message with none, and the tasks of the state's task list are counted, not replayed.
- Every other field (ids, times, usage, permission and tool contexts, middleware data) is
  not part of the conversation and is not read.

Invariants:
- A file holds one conversation: one state, or its messages. A block type, role or field of a
  shape AgentScope never writes is an error at its entry's line (inside a document, the line of
  the message being read).
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
    call,
    content,
    data_url,
    field_of,
    image_part,
    system,
    text_only,
    text_part,
    tool,
    user,
)

ROLES = ("user", "assistant", "system")
BLOCKS = frozenset({"text", "thinking", "hint", "tool_call", "tool_result", "data"})
FAILED = frozenset({"error", "denied", "interrupted"})
"""The states of a result that did not succeed."""
EXPECTED = (
    "not an AgentScope agent state: expected an object with 'session_id', 'summary' and a "
    "'context' list of messages, or AgentScope messages ('name', 'role', 'content' blocks)"
)
SUMMARY_NOTE = (
    "the compressed summary is replayed as the user message AgentScope sends it as, after the "
    "system prompt; the messages it replaced are not in the file"
)


def is_state(value: object) -> bool:
    """Whether `value` is an agent state (`AgentState` as JSON): a `session_id`, a `summary` and a
    `context` list, empty or with an AgentScope message among its first ones (a message of
    another shape among them is told when it is read, not taken for another format)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("session_id"), str):
        return False
    context = value.get("context")
    return (
        "summary" in value
        and isinstance(context, list)
        and (not context or any(is_msg(m) for m in context[:5]))
    )


def state_of(value: object) -> Mapping[str, Any] | None:
    """The agent state of an entry: itself, or the `state` of a stored session."""
    if is_state(value):
        assert isinstance(value, Mapping)
        return value
    held = value.get("state") if isinstance(value, Mapping) else None
    return held if isinstance(held, Mapping) and is_state(held) else None


def not_msg(value: object) -> str | None:
    """What keeps `value` from being an AgentScope message (`is_msg`), or None when it is one."""
    if not isinstance(value, Mapping):
        return f"is {type(value).__name__}, not an object"
    if value.get("role") not in ROLES:
        return f"its role is {value.get('role')!r}; AgentScope writes user, assistant or system"
    missing = [repr(key) for key in ("name", "id") if not isinstance(value.get(key), str)]
    missing += [] if "created_at" in value else ["'created_at'"]
    if missing:
        return f"it lacks {', '.join(missing)} (AgentScope writes a name and an id as text, a creation time)"
    blocks = value.get("content")
    if not isinstance(blocks, list):
        return f"its content is {type(blocks).__name__}, not a list of blocks"
    for k, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind not in BLOCKS:
            return f"content[{k}] is no block of AgentScope's types ({', '.join(sorted(BLOCKS))})"
    return None


def is_msg(value: object) -> bool:
    """Whether `value` is an AgentScope message as JSON: a name, a role, an id and a creation
    time, and content blocks of AgentScope's own types (`tool_call`, `data`: not Anthropic's)."""
    return not_msg(value) is None


def msgs_of(value: object) -> list[Any] | None:
    """The messages of an entry: a list of them, or one message (a line of a JSONL file)."""
    listed = value if isinstance(value, list) else [value]
    return listed if listed and all(is_msg(m) for m in listed[:5]) else None


def is_agentscope(values: list[object]) -> bool:
    """Whether a file's first entries are an agent state or AgentScope messages."""
    return bool(values) and (state_of(values[0]) is not None or msgs_of(values[0]) is not None)


def read_agentscope(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of an agent state, or of a file of messages (see the module docstring)."""
    calls = Calls(report)
    stated = False
    for position, (number, value) in enumerate(entries):
        if stated:
            raise report.error(number, "an AgentScope state file holds one agent state, and nothing after it")
        state = state_of(value) if position == 0 else None
        if state is not None:
            stated = True
            yield from _state(state, number, calls)
            continue
        listed = msgs_of(value)
        if listed is None:
            raise report.error(number, EXPECTED)
        for index, message in report.each(listed):
            yield from _message(message, index, number, calls)


def _state(state: Mapping[str, Any], number: int, calls: Calls) -> Iterator[Wire]:
    report = calls.report
    summary = state["summary"]
    if summary:
        report.note_once(SUMMARY_NOTE)
        yield user(_summary(summary, number, report))
    tasks = field_of(state, "tasks_context", "tasks")
    for _ in tasks if isinstance(tasks, list) else ():
        report.skip("task of the state's task list (not a message)")
    for index, message in report.each(state["context"]):
        yield from _message(message, index, number, calls)


def _summary(summary: object, number: int, report: Report) -> str | list[Wire]:
    if isinstance(summary, str):
        return summary
    if not isinstance(summary, list):
        raise report.error(number, f"'summary' is {type(summary).__name__}, not text or a list of blocks")
    return content(_parts(summary, "summary", number, report))


def _message(message: object, index: int, number: int, calls: Calls) -> Iterator[Wire]:
    """The OpenAI chat messages of one AgentScope message, the `index`-th of its list."""
    report, where = calls.report, f"message {index}"
    wrong = not_msg(message)
    if wrong is not None:
        raise report.error(number, f"{where} is not an AgentScope message: {wrong}")
    assert isinstance(message, Mapping)
    role, blocks = message["role"], message["content"]
    if role == "assistant":
        yield from _assistant(blocks, where, number, calls)
        return
    if any(block["type"] not in ("text", "data") for block in blocks):
        raise report.error(number, f"{where}: a {role} message holds only text and data blocks")
    if not blocks:
        report.skip(f"empty {role} message")
    elif role == "user":
        yield user(content(_parts(blocks, where, number, report)))
    else:
        yield system(text_only(content(_parts(blocks, where, number, report)), report, "system"))


class _Piece:
    """The assistant message being gathered: its text parts, calls and reasoning."""

    def __init__(self) -> None:
        self.parts: list[Wire] = []
        self.calls: list[Wire] = []
        self.reasoning: list[str] = []

    def flush(self, report: Report) -> Iterator[Wire]:
        """The gathered assistant message, if anything was gathered; the piece starts again."""
        if self.parts or self.calls or self.reasoning:
            text = text_only(content(self.parts), report, "assistant")
            yield assistant(text, self.calls, "\n".join(self.reasoning))
        self.parts, self.calls, self.reasoning = [], [], []


def _assistant(blocks: list[Any], where: str, number: int, calls: Calls) -> Iterator[Wire]:
    """An assistant message, split at its results and hints (the module docstring)."""
    report, piece = calls.report, _Piece()
    if not blocks:
        report.skip("empty assistant message (a usage record)")
    for k, block in enumerate(blocks):
        at, kind = f"{where}.content[{k}]", block["type"]
        if kind in ("tool_result", "hint"):
            yield from piece.flush(report)
            yield (
                _result(block, at, number, calls)
                if kind == "tool_result"
                else _hint(block, at, number, report)
            )
        elif kind == "thinking":
            piece.reasoning.append(_text(block, "thinking", at, number, report))
        elif kind == "tool_call":
            piece.calls.append(_call(block, at, number, calls))
        else:
            piece.parts.extend(_parts([block], at, number, report))
    yield from piece.flush(report)


def _text(block: Mapping[str, Any], key: str, where: str, number: int, report: Report) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise report.error(number, f"{where}: a {block['type']} block's {key!r} is not text")
    return value


def _call(block: Mapping[str, Any], where: str, number: int, calls: Calls) -> Wire:
    report = calls.report
    call_id, name = _text(block, "id", where, number, report), _text(block, "name", where, number, report)
    return call(calls.declare(call_id), name, _text(block, "input", where, number, report))


def _result(block: Mapping[str, Any], where: str, number: int, calls: Calls) -> Wire:
    report = calls.report
    call_id = calls.answer(block.get("id"), number, key=f"{where}.id")
    output = block.get("output")
    if isinstance(output, str):
        body: str | list[Wire] = output
    elif isinstance(output, list):
        body = content(_parts(output, f"{where}.output", number, report))
    else:
        raise report.error(number, f"{where}: a tool result's 'output' is not text or a list of blocks")
    return tool(call_id, body, error=block.get("state") in FAILED)


def _hint(block: Mapping[str, Any], where: str, number: int, report: Report) -> Wire:
    hint = block.get("hint")
    if isinstance(hint, str):
        return user(hint)
    if not isinstance(hint, list):
        raise report.error(number, f"{where}: a hint block's 'hint' is not text or a list of blocks")
    return user(content(_parts(hint, f"{where}.hint", number, report)))


def _parts(blocks: list[Any], where: str, number: int, report: Report) -> list[Wire]:
    """Text and data blocks as OpenAI parts: text, and images; other media counted."""
    parts: list[Wire] = []
    for k, block in enumerate(blocks):
        at = f"{where}[{k}]"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            parts.append(text_part(_text(block, "text", at, number, report)))
        elif kind == "data":
            url, media = _source(block, at, number, report)
            if media.startswith("image/"):
                parts.append(image_part(url))
            else:
                report.skip(f"{media.split('/')[0]} data block ({media}, not replayed as an image)")
        else:
            raise report.error(number, f"{at} is not a text or data block")
    return parts


def _source(block: Mapping[str, Any], where: str, number: int, report: Report) -> tuple[str, str]:
    """A data block's URL (a `data:` URL for base64) and media type."""
    source = block.get("source")
    media = source.get("media_type") if isinstance(source, Mapping) else None
    kind = source.get("type") if isinstance(source, Mapping) else None
    payload = source.get("url" if kind == "url" else "data") if isinstance(source, Mapping) else None
    if kind not in ("url", "base64") or not isinstance(media, str) or not isinstance(payload, str):
        raise report.error(number, f"{where}: a data block's 'source' is not a URL or base64 source")
    return (payload if kind == "url" else data_url(media, payload)), media
