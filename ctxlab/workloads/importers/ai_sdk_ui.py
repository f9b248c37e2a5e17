"""Vercel AI SDK `UIMessage`s (what `useChat` apps persist) as the `ModelMessage`s the SDK's
`convertToModelMessages` makes of them (`packages/ai/src/ui/convert-to-model-messages.ts` of
vercel/ai at ed857f50f112e23930b0c2dd8d532cc8bebbc911); `ctxlab.workloads.importers.ai_sdk` maps
those to chat messages.

Mapping rules:
- A system message is its text parts joined with nothing between (its other parts counted); a
  user message its text and file parts (a file's `url` as its data).
- An assistant message is split into steps at its `step-start` parts: each step is one assistant
  model message (its text, reasoning, files and tool calls, in part order), followed by one tool
  model message with the results of its tool parts, in part order.
- A tool part (`tool-<name>`, or `dynamic-tool` with its `toolName`) is a call with its `input`
  (an `output-error` part's `rawInput` when it has no input) and, by its `state`:
  `output-available` a result (text as is, any other value as JSON); `output-error` an error
  result of its `errorText`; `output-denied` an error result of the approval's reason (or the SDK's
  fixed text); `approval-responded` and denied, a denial.
- A part whose call has no result in the history is dropped, call and all, and counted:
  `input-streaming` (the SDK never sends it), and `input-available`, `approval-requested` and an
  approved `approval-responded` (the SDK sends the call, then refuses a request whose call has no
  result unless `ignoreIncompleteToolCalls` drops it first, as here; an approved call runs
  before the request, and its result is not in the history).
- A provider-executed tool part stays in the assistant message, call and result (the chat mapping
  counts both: a chat model's tools are the agent's own).
- Counted, not sent: `data-*` parts (sent only through an app's own `convertDataPart`), sources,
  and, in a user message, parts the SDK does not send (reasoning, tools).

Invariants:
- A part of a type or state the SDK never writes, or a tool part without its `toolCallId`, is an
  error at its line (`Report.error`, the message's line inside a document).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers.base import Report, Wire
from ctxlab.workloads.importers.js_json import js_json

DENIED = "Tool call execution denied."
"""The SDK's text for a denied call with no reason."""
UNANSWERED = frozenset({"input-available", "approval-requested"})
STATES = UNANSWERED | {"input-streaming", "approval-responded", "output-available", "output-error"}
STATES |= {"output-denied"}
CONTENT = frozenset({"text", "reasoning", "file", "reasoning-file", "custom"})
"""Parts an assistant step sends as they are."""
DROPPED = frozenset({"source-url", "source-document"})
"""Parts the SDK never sends."""
INCOMPLETE = (
    "tool calls with no result in the history (input-available, approval-requested, approved "
    "approval-responded) are dropped, as convertToModelMessages' ignoreIncompleteToolCalls drops "
    "them (without it the SDK refuses the request: MissingToolResultsError)"
)


def is_tool_part(kind: str) -> bool:
    """A tool part's type: `tool-<name>` or `dynamic-tool`."""
    return kind == "dynamic-tool" or kind.startswith("tool-")


def known(kind: object) -> bool:
    """A part type a `UIMessage` holds."""
    return isinstance(kind, str) and (
        kind in CONTENT | DROPPED | {"step-start"} or is_tool_part(kind) or kind.startswith("data-")
    )


def model_messages(message: Mapping[str, Any], where: str, number: int, report: Report) -> Iterator[Wire]:
    """The `ModelMessage`s of one `UIMessage` (see the module docstring)."""
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise report.error(number, f"{where}: its 'parts' are not a list")
    for k, part in enumerate(parts):
        if not isinstance(part, Mapping) or not known(part.get("type")):
            got = part.get("type") if isinstance(part, Mapping) else part
            raise report.error(number, f"{where}.parts[{k}] is no AI SDK UI part (its type is {got!r})")
    role = message["role"]
    if role == "system":
        yield {"role": "system", "content": _system_text(parts, where, number, report)}
    elif role == "user":
        yield {"role": "user", "content": _user_parts(parts, report)}
    else:
        for step in _steps(parts):
            yield from _step(step, where, number, report)


def _system_text(parts: list[Mapping[str, Any]], where: str, number: int, report: Report) -> str:
    """A system message's text parts joined; its other parts counted."""
    texts: list[str] = []
    for k, part in enumerate(parts):
        if part["type"] != "text":
            report.skip(f"UI part {_kind(part)!r} in a system message")
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            raise report.error(number, f"{where}.parts[{k}]: a text part's 'text' is not text")
    return "".join(texts)


def _user_parts(parts: list[Mapping[str, Any]], report: Report) -> list[Wire]:
    out: list[Wire] = []
    for part in parts:
        if part["type"] == "text":
            out.append({"type": "text", "text": part.get("text")})
        elif part["type"] == "file":
            out.append({"type": "file", "mediaType": part.get("mediaType"), "data": part.get("url")})
        else:
            report.skip(f"UI part {_kind(part)!r} in a user message")
    return out


def _kind(part: Mapping[str, Any]) -> str:
    """A part's type for the counts: every tool part as `tool-<name>`, every data part as one."""
    kind = str(part["type"])
    return "tool-<name>" if is_tool_part(kind) else "data-<name>" if kind.startswith("data-") else kind


def _steps(parts: list[Mapping[str, Any]]) -> Iterator[list[Mapping[str, Any]]]:
    """The parts between `step-start` parts (none of them empty)."""
    step: list[Mapping[str, Any]] = []
    for part in parts:
        if part["type"] == "step-start":
            if step:
                yield step
            step = []
        else:
            step.append(part)
    if step:
        yield step


def _step(step: list[Mapping[str, Any]], where: str, number: int, report: Report) -> Iterator[Wire]:
    """One step's assistant model message and the tool model message of its results."""
    content: list[Wire] = []
    results: list[Wire] = []
    for part in step:
        kind = part["type"]
        if kind in CONTENT:
            content.append(dict(part))
        elif is_tool_part(kind):
            content.extend(_tool(part, where, number, report, results))
        else:
            report.skip(f"UI part {_kind(part)!r} in an assistant message")
    if content:
        yield {"role": "assistant", "content": content}
    if results:
        yield {"role": "tool", "content": results}


def _tool(
    part: Mapping[str, Any], where: str, number: int, report: Report, results: list[Wire]
) -> list[Wire]:
    """The assistant parts of one tool part, its result appended to `results` (or, run by the
    provider, among the assistant parts)."""
    state, call_id = part.get("state"), part.get("toolCallId")
    if state not in STATES:
        raise report.error(
            number, f"{where}: a tool part's state is {state!r}; the SDK writes {sorted(STATES)}"
        )
    if not isinstance(call_id, str) or not call_id:
        raise report.error(
            number, f"{where}: a tool part has no 'toolCallId'; its result could not answer it"
        )
    approval = _approval(part)
    if state == "input-streaming" or state in UNANSWERED or approval.get("approved") is True:
        report.skip(f"tool part in state {state} (no result)")
        if state != "input-streaming":
            report.note_once(INCOMPLETE)
        return []
    name = part.get("toolName") if part["type"] == "dynamic-tool" else str(part["type"])[len("tool-") :]
    executed = part.get("providerExecuted") is True
    made: Wire = {"type": "tool-call", "toolCallId": call_id, "toolName": name, "providerExecuted": executed}
    given = part.get("input")
    if state == "output-error" and given is None:
        given = part.get("rawInput")  # neither: no input, sent as `{}`
    if given is not None or (state != "output-error" and "input" in part):
        made["input"] = given
    result = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": _output(part)}
    if executed and state != "approval-responded":
        return [made, result]
    results.append(result)
    return [made]


def _approval(part: Mapping[str, Any]) -> Mapping[str, Any]:
    found = part.get("approval")
    return found if isinstance(found, Mapping) else {}


def _output(part: Mapping[str, Any]) -> Wire:
    """The model output of a tool part's result (`createToolModelOutput`, no tool's own mapping)."""
    state = part["state"]
    approval = _approval(part)
    if state == "approval-responded":
        return {"type": "execution-denied", "reason": approval.get("reason")}
    if state == "output-denied":
        reason = approval.get("reason")
        return {"type": "error-text", "value": DENIED if reason is None else reason}
    if state == "output-error":
        kind = "error-json" if part.get("providerExecuted") is True else "error-text"
        error = part.get("errorText")
        return {"type": kind, "value": error if kind == "error-json" else _error_text(error)}
    output = part.get("output")
    return {"type": "text", "value": output} if isinstance(output, str) else {"type": "json", "value": output}


def _error_text(error: object) -> str:
    """An error as the SDK's `getErrorMessage` tells it: null as its fixed text, text as is, any
    other value as JSON."""
    if error is None:
        return "unknown error"
    return error if isinstance(error, str) else js_json(error)
