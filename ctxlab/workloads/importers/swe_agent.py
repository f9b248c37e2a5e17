"""SWE-agent trajectories (`.traj`) and mini-swe-agent trajectories, as OpenAI chat messages.

A SWE-agent `.traj` is one JSON object whose `history` lists what the model was sent: messages
with `role`, `content`, and, with function calling, `tool_calls` on actions and `tool_call_ids`
on observations (older files write both as Python literals in a string). A mini-swe-agent
trajectory is a JSON list of messages, or an object with `messages` (`trajectory_format`
`mini-swe-agent-*`); mini-swe-agent 2 calls its `bash` tool with `tool_calls` answered by `tool`
messages (`tool_call_id`), or writes its commands in `mswea_bash_command` blocks, and ends every
run with an `exit` message holding the exit status.

Mapping rules:
- System messages are system messages; user messages are user messages, demonstrations
  (`is_demo`) included, since the model was sent them (they are counted in the notes).
- An action with `tool_calls` is an assistant message with those calls, its text the message's
  `content`; an observation with `tool_call_ids` is the result of each (the first id gets the
  content, any further id an empty result, noted).
- An action written as text (no function calling) is one call per step of the tool
  `swe_agent_action` with arguments `{"action": "<the action text>"}`; the assistant text is the
  step's `thought` (the response without the action). The user message that follows it is its
  observation, the call's result. mini-swe-agent steps follow the same rule: the action is what
  mini-swe-agent 2 recorded it ran (`extra.actions`), else (mini-swe-agent 1, which records
  nothing) the one fenced `bash` (or `mswea_bash_command`) block of the response; the text is
  the response without that block. Call ids are `step-<index in history>`.
- A response with no action, or (mini-swe-agent) with an empty `extra.actions`, or without it
  more than one block, is a format error the agent answered with an error message, not run: it
  is assistant text, and the message after it is user text.
- An assistant message's `reasoning_content` (mini-swe-agent 2 keeps the provider's), else the
  text of its `thinking_blocks` (an Anthropic model's, as SWE-agent and litellm keep them), is
  its reasoning, kept apart from its text.
- A JSONL file of several trajectories, one a line, is read from its line `--session N` (0, the
  first, unless given); the others are runs of their own, counted.
- mini-swe-agent's `exit` message is the run's end, never sent to the model: it is skipped and
  counted, its exit status in the notes.
- With a Responses-API model, mini-swe-agent 2 keeps each model response whole (`object:
  response`, its `output` items) and each observation as a `function_call_output` item; both
  are read as the Responses request logs' items are (`importers.responses`), in place.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
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
    session_entry,
    system,
    text_of,
    text_only,
    text_part,
    tool,
    user,
)
from ctxlab.workloads.importers.responses import CALLS, OUTPUTS, ItemMapper

ACTION_TOOL = "swe_agent_action"
BASH_BLOCK = re.compile(r"```(?:mswea_bash_command|bash)\s*\n(.*?)\n```", re.DOTALL)
TEXT_PARTS = frozenset({"text", "input_text", "output_text", None})
"""The types of a text part (litellm's, the Responses API's; none at all)."""
OBSERVED = "<returncode>"
"""How mini-swe-agent's observation of a command begins (its templates' `action_observation`)."""


def is_swe_agent(value: object) -> bool:
    """A `.traj` object: a `history` list of role messages."""
    history = value.get("history") if isinstance(value, Mapping) else None
    return (
        isinstance(history, list)
        and bool(history)
        and all(isinstance(m, Mapping) and "role" in m for m in history[:5])
        and "instruction" not in value  # type: ignore[operator]
    )


def mini_messages(value: object) -> list[Any] | None:
    """The messages of a mini-swe-agent trajectory, or None when `value` is not one."""
    if isinstance(value, Mapping):
        messages = value.get("messages")
        marked = str(value.get("trajectory_format", "")).startswith("mini-swe-agent")
        return messages if isinstance(messages, list) and (marked or "info" in value) else None
    if isinstance(value, list) and value and all(isinstance(m, Mapping) and "role" in m for m in value):
        return value if _runs_commands(value) else None
    return None


def _runs_commands(messages: list[Any]) -> bool:
    """Whether a bare list of messages is mini-swe-agent's rather than an OpenAI chat list: a
    response holds a `mswea_bash_command` block, or a `bash` block the next message answers with
    mini-swe-agent's observation (`<returncode>`). A chat whose assistant shows a command in a
    `bash` block, to a user who answers, is not a run."""
    for index, message in enumerate(messages):
        text = message.get("content") if message.get("role") == "assistant" else None
        if not isinstance(text, str) or BASH_BLOCK.search(text) is None:
            continue
        after = messages[index + 1].get("content") if index + 1 < len(messages) else None
        if "```mswea_bash_command" in text or (isinstance(after, str) and after.startswith(OBSERVED)):
            return True
    return False


def _listed(value: object) -> list[Any]:
    """A list field, also when an older file wrote it as a Python literal in a string."""
    if isinstance(value, str) and value.strip():
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return []
    return list(value) if isinstance(value, list) else []


def _body(value: object, report: Report) -> str | list[Wire]:
    """A message's content: a string, or text and image parts (a string, or a `TEXT_PARTS` part
    with its `text`, is text); any other part (audio, a file) is counted."""
    if not isinstance(value, list):
        return text_of(value)
    parts: list[Wire] = []
    for item in value:
        kind = field_of(item, "type")
        if isinstance(item, str):
            parts.append(text_part(item))
        elif kind == "image_url":
            url = field_of(item, "image_url")
            parts.append(image_part(str(field_of(url, "url") if isinstance(url, Mapping) else url)))
        elif kind in TEXT_PARTS and isinstance(field_of(item, "text"), str):
            parts.append(text_part(item["text"]))
        else:
            report.skip(f"content part {kind!r}")
    return content(parts)


def read_swe_agent(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of a SWE-agent `.traj` (see the module docstring)."""
    for number, value in session_entry(entries, report, "further trajectory"):
        if not is_swe_agent(value):
            raise report.error(number, "not a SWE-agent trajectory: expected an object with a 'history' list")
        yield from _history(value["history"], number, report, mini=False)


def read_mini(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of a mini-swe-agent trajectory (see the module docstring)."""
    for number, value in session_entry(entries, report, "further trajectory"):
        messages = mini_messages(value)
        if messages is None:
            raise report.error(number, "not a mini-swe-agent trajectory: expected a list of messages")
        yield from _history(messages, number, report, mini=True)


def _history(history: Sequence[Any], number: int, report: Report, *, mini: bool) -> Iterator[Wire]:
    calls = Calls(report)
    items = ItemMapper(report, calls)  # mini-swe-agent 2 on a Responses-API model
    waiting: str | None = None  # the id of a text action whose observation comes next
    for index, message in report.each(history):
        if not isinstance(message, Mapping):
            raise report.error(number, f"history[{index}] is not a message object")
        if mini and _in_responses_form(message):
            waiting = None
            for item in message.get("output") or () if message.get("object") == "response" else (message,):
                yield from items.item(item, number)
            continue
        yield from items.flush()
        role = message.get("role")
        if waiting is not None and role in {"user", "tool"} and not message.get("tool_call_ids"):
            yield tool(
                calls.answer(waiting, number, key="tool_call_ids"), _body(message.get("content"), report)
            )
            waiting = None
            continue
        wires, waiting = _by_role(message, index, number, calls, mini=mini)
        yield from wires
    yield from items.flush()
    demos = sum(1 for m in history if m.get("role") == "user" and m.get("is_demo"))
    if demos:
        report.notes.append(
            f"{demos} demonstration message(s) (is_demo) kept as user text: the model was sent them"
        )


def _by_role(
    message: Mapping[str, Any], index: int, number: int, calls: Calls, *, mini: bool
) -> tuple[list[Wire], str | None]:
    """The messages of one chat message, and the id of its text action when it has one."""
    role, report = message.get("role"), calls.report
    if role == "system":
        return [system(text_only(_body(message.get("content"), report), report, "system"))], None
    if role == "user":
        return [user(_body(message.get("content"), report))], None
    if role == "assistant":
        wire, waiting = _action(message, index, report, mini=mini)
        for item in wire.get("tool_calls", []):
            calls.declare(item["id"])
        return [wire], waiting
    if role == "tool":
        return list(_observation(message, index, calls, number, mini=mini)), None
    if role == "exit" and mini:
        report.skip("exit message (the run's end)")
        status = text_of(field_of(message, "extra", "exit_status")) or text_of(message.get("content"))
        report.notes.append(f"the run ended with exit status {status!r}")
        return [], None
    raise report.error(number, f"history[{index}]: unknown role {role!r}")


def _in_responses_form(message: Mapping[str, Any]) -> bool:
    """A model response (`object: response`, its `output` items) or a call's output item, as
    mini-swe-agent 2 keeps them with a Responses-API model."""
    return message.get("object") == "response" or message.get("type") in CALLS | OUTPUTS


def _observation(
    message: Mapping[str, Any], index: int, calls: Calls, number: int, *, mini: bool
) -> Iterator[Wire]:
    """The tool messages of an observation: its content for its first call, '' for the others;
    an error names the id's field where the file has it (`messages` is mini-swe-agent's list)."""
    ids = _listed(message.get("tool_call_ids")) or [message.get("tool_call_id")]
    field = "tool_call_ids" if "tool_call_ids" in message else "tool_call_id"
    key = f"{'messages' if mini else 'history'}[{index}].{field}"
    body = _body(message.get("content"), calls.report)
    for k, call_id in enumerate(ids):
        yield tool(calls.answer(call_id, number, key=key), body if k == 0 else "")
    if len(ids) > 1:
        calls.report.notes.append(f"history[{index}]: one observation for {len(ids)} calls; the first has it")


def _thinking(blocks: object) -> str:
    """The text of a message's `thinking` blocks ('' for none)."""
    if not isinstance(blocks, list):
        return ""
    return "\n\n".join(t for t in (text_of(field_of(b, "thinking")) for b in blocks) if t)


def _mini_action(message: Mapping[str, Any], text: str) -> tuple[str, str] | None:
    """A mini-swe-agent step's action and its text without the action's block, or None when it
    ran none. mini-swe-agent 2 records what it ran (`extra.actions`): a step of none (a format
    error: no block, or several; its `extra` then has no `actions`) ran nothing, whatever fenced
    code its text shows. mini-swe-agent
    1 records nothing: its action is the text's one fenced `bash` block (none, or several, is its
    format error)."""
    extra = message.get("extra")
    if isinstance(extra, Mapping):  # mini-swe-agent 2's step, which keeps `actions` when it ran any
        recorded = extra.get("actions")
        commands = [text_of(field_of(a, "command")) for a in recorded] if isinstance(recorded, list) else []
        if not commands:
            return None
        action = "\n".join(commands)
        block = next((b for b in BASH_BLOCK.finditer(text) if b.group(1) == action), None)
        return action, text if block is None else (text[: block.start()] + text[block.end() :]).strip()
    blocks = list(BASH_BLOCK.finditer(text))
    if len(blocks) != 1:
        return None
    return blocks[0].group(1), (text[: blocks[0].start()] + text[blocks[0].end() :]).strip()


def _action(message: Mapping[str, Any], index: int, report: Report, *, mini: bool) -> tuple[Wire, str | None]:
    """The assistant message of a step, and the id of its text action when it has one."""
    listed = _listed(message.get("tool_calls"))
    text = text_only(_body(message.get("content"), report), report, "assistant")
    reasoning = text_of(message.get("reasoning_content")) or _thinking(message.get("thinking_blocks"))
    if listed:
        calls = []
        for item in listed:
            function = item.get("function", {}) if isinstance(item, Mapping) else {}
            calls.append(
                call(str(item.get("id")), str(function.get("name")), function.get("arguments", "{}"))
            )
        return assistant(text, calls, reasoning), None
    if mini:
        found = _mini_action(message, text)
        if found is None:
            return assistant(text, (), reasoning), None
        action, text = found
    else:
        action = text_of(message.get("action"))
        if not action.strip():
            return assistant(text, (), reasoning), None
        text = text_of(message["thought"]) if isinstance(message.get("thought"), str) else text
    call_id = f"step-{index}"
    return assistant(text, [call(call_id, ACTION_TOOL, {"action": action})], reasoning), call_id
