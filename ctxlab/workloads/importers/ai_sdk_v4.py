"""Vercel AI SDK 4 `Message`s (what a `useChat` app on `ai` 4.x persists: `content`, optional
`parts`, `toolInvocations`, `experimental_attachments`) as the `CoreMessage`s its
`convertToCoreMessages` makes of them (ai 4.3.19, `core/prompt/convert-to-core-messages.ts`);
`ctxlab.workloads.importers.ai_sdk_core4` sends those on as the OpenAI chat provider does.

Mapping rules (ai 4.3.19):
- A system message is its `content`; a `data` message is counted, not sent.
- A user message is its `content` (with `parts`: their text parts only, other parts counted),
  followed by its `experimental_attachments` (`ai_sdk_core4.attachments`).
- An assistant message with `parts` is cut into blocks, each one assistant message (its text,
  reasoning, files and calls in part order) and, when it holds calls, one tool message of their
  results: a block ends where a text part follows a call, and where a call's `step` (0 when
  unset) is not the block's step (each block counts one step on, as the SDK counts them).
  `step-start` parts mark nothing here; sources are counted. A reasoning part's `details` are its
  reasoning (a redacted detail a `redacted-reasoning` part); an older part without details, its
  `reasoning` text.
- An assistant message without `parts` is its `content`, or, with `toolInvocations`, an
  assistant and a tool message per `step` (0 up to the greatest), and then its `content` as a
  message of its own; the file's last message puts its `content` first in step 0 instead.
- A call is answered when its invocation holds a `result` (the SDK reads nothing else). The SDK
  refuses a history with a call it does not answer (`MessageConversionError`); such calls
  (`partial-call`, `call`) are dropped here, call and all, before the blocks are cut, counted,
  and a note says so, as a 5.x history's unanswered calls are dropped.

Invariants:
- `tells` names the SDK generation a message's own shape tells (4, 5, or None when both write
  it alike), so a history of one generation is never read by the other's rules.
- A part, state or role AI SDK 4 never writes, or a field of the wrong type, is an error at the
  message's line (`Report.error`), told as `message N.parts[k]`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.problems import as_written
from ctxlab.workloads.importers.ai_sdk_core4 import attachments
from ctxlab.workloads.importers.base import Report, Wire, field_of

ROLES = ("system", "user", "assistant", "data")
"""The roles of a 4.x `Message`."""
PARTS = frozenset({"text", "reasoning", "tool-invocation", "source", "file", "step-start"})
STATES = frozenset({"partial-call", "call", "result"})
OWN_MESSAGE_KEYS = frozenset({"toolInvocations", "experimental_attachments"})
"""Fields only a 4.x `Message` has."""
CORE_OWN = {"tool-call": "args", "tool-result": "result", "image": "mimeType", "file": "mimeType"}
"""A 4.x `CoreMessage` part's field that its 5.x `ModelMessage` part renamed."""
LATER_OWN = {"tool-call": "input", "tool-result": "output", "image": "mediaType", "file": "mediaType"}
UNANSWERED = (
    "AI SDK 4 tool invocations with no result (partial-call, call) are dropped, call and all: "
    "convertToCoreMessages refuses a history holding one (MessageConversionError)"
)


# ---------------------------------------------------------------------------------------------
# Which generation a message is


def tells(message: Mapping[str, Any]) -> int | None:
    """4 for a message only AI SDK 4 writes, 5 for one only 5.x and later write, None for one
    both write alike (plain text, text parts)."""
    if message.get("role") == "data" or OWN_MESSAGE_KEYS & message.keys():
        return 4
    parts = message.get("parts")
    if isinstance(parts, list):
        return 4 if "content" in message or any(_v4_ui_part(p) for p in parts) else _later_ui(parts)
    body = message.get("content")
    if not isinstance(body, list):
        return None
    kinds = [(p["type"], p) for p in body if isinstance(p, Mapping) and isinstance(p.get("type"), str)]
    if any(kind == "redacted-reasoning" or CORE_OWN.get(kind, "") in p for kind, p in kinds):
        return 4
    return 5 if any(LATER_OWN.get(kind, "") in p for kind, p in kinds) else None


def _v4_ui_part(part: object) -> bool:
    kind = field_of(part, "type")
    return isinstance(part, Mapping) and (
        (kind == "tool-invocation" and "toolInvocation" in part)
        or kind == "source"
        or (kind == "reasoning" and "details" in part)
        or (kind == "file" and "mimeType" in part)
    )


def _later_ui(parts: list[object]) -> int | None:
    """5 when a part holds what only a 5.x `UIMessage` part holds, else None (text alike)."""
    plain = ("text", "step-start")
    return None if all(field_of(p, "type") in plain for p in parts) else 5


# ---------------------------------------------------------------------------------------------
# convertToCoreMessages


def core_messages(
    message: Mapping[str, Any], where: str, number: int, report: Report, *, last: bool
) -> Iterator[Wire]:
    """The `CoreMessage`s of one 4.x `Message` (see the module docstring); `last`: it is the
    history's last message."""
    role = message.get("role")
    if role not in ROLES:
        raise report.error(number, f"{where}: its role is {role!r}; an AI SDK 4 Message is one of {ROLES}")
    parts = message.get("parts")
    if parts is not None:
        _check_parts(parts, where, number, report)
    if role == "data":
        report.skip("AI SDK 4 data message")
    elif role == "system":
        yield {"role": "system", "content": message.get("content")}
    elif role == "user":
        yield _user(message, where, number, report)
    elif parts is not None:
        yield from _blocks(_answered(parts, report), where, number, report)
    else:
        yield from _legacy(message, where, number, report, last=last)


def _check_parts(parts: object, where: str, number: int, report: Report) -> None:
    if not isinstance(parts, list):
        raise report.error(number, f"{where}: its 'parts' are not a list")
    for k, part in enumerate(parts):
        kind = field_of(part, "type")
        if not isinstance(kind, str) or kind not in PARTS:
            raise report.error(number, f"{where}.parts[{k}] is no AI SDK 4 part (its type is {kind!r})")
        if kind == "tool-invocation":
            _check_invocation(field_of(part, "toolInvocation"), f"{where}.parts[{k}]", number, report)


def _check_invocation(invocation: object, where: str, number: int, report: Report) -> None:
    if not isinstance(invocation, Mapping):
        raise report.error(number, f"{where}: a tool invocation is not an object")
    if not isinstance(invocation.get("state"), str) or invocation["state"] not in STATES:
        raise report.error(
            number, f"{where}: a tool invocation's state is {invocation.get('state')!r}; "
            f"AI SDK 4 writes {sorted(STATES)}",
        )  # fmt: skip
    for key in ("toolCallId", "toolName"):
        if not isinstance(invocation.get(key), str) or not invocation[key]:
            raise report.error(number, f"{where}: a tool invocation's {key!r} is not a name")
    step = invocation.get("step", 0)
    if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step < 0):
        raise report.error(number, f"{where}: a tool invocation's 'step' is {step!r}, not a count")


def _user(message: Mapping[str, Any], where: str, number: int, report: Report) -> Wire:
    """Its text (all of `content`, or the text parts), then its attachments."""
    parts, body = message.get("parts"), message.get("content")
    if parts is not None:
        body = []
        for k, part in enumerate(parts):
            if part["type"] != "text":
                report.skip(f"AI SDK 4 {part['type']} part in a user message")
            elif isinstance(part.get("text"), str):
                body.append({"type": "text", "text": part["text"]})
            else:
                raise report.error(number, f"{where}.parts[{k}]: a text part's 'text' is not text")
    listed = message.get("experimental_attachments")
    if listed is None:
        return {"role": "user", "content": body}
    if not isinstance(listed, list):
        raise report.error(number, f"{where}: its 'experimental_attachments' are not a list")
    if not isinstance(body, list):
        body = [{"type": "text", "text": body}]
    made = attachments(listed, f"{where}.experimental_attachments", number, report)
    return {"role": "user", "content": [*body, *made]}


def _answered(parts: list[Mapping[str, Any]], report: Report) -> list[Mapping[str, Any]]:
    """The parts without the calls that hold no result (counted, noted)."""
    kept = [p for p in parts if p["type"] != "tool-invocation" or "result" in p["toolInvocation"]]
    for part in parts:
        if part["type"] == "tool-invocation" and "result" not in part["toolInvocation"]:
            report.skip(f"AI SDK 4 tool invocation in state {part['toolInvocation']['state']} (no result)")
            report.note_once(UNANSWERED)
    return kept


def _blocks(parts: list[Mapping[str, Any]], where: str, number: int, report: Report) -> Iterator[Wire]:
    """An assistant message's parts cut into blocks as the SDK cuts them (module docstring)."""
    block: list[Mapping[str, Any]] = []
    step, has_calls = 0, False
    for part in parts:
        kind = part["type"]
        if (kind == "text" and has_calls) or (kind == "tool-invocation" and _step(part) != step):
            yield from _block(block, where, number, report)
            block, step, has_calls = [], step + 1, False
        if kind in ("text", "file", "reasoning", "tool-invocation"):
            block.append(part)
            has_calls = has_calls or kind == "tool-invocation"
        elif kind == "source":
            report.skip("AI SDK 4 source part")
    yield from _block(block, where, number, report)


def _step(part: Mapping[str, Any]) -> int:
    step = part["toolInvocation"].get("step")
    return 0 if step is None else int(step)


def _block(block: list[Mapping[str, Any]], where: str, number: int, report: Report) -> Iterator[Wire]:
    """One block's assistant message, and the tool message of its calls' results."""
    made: list[Wire] = []
    for part in block:
        if part["type"] == "reasoning":
            made.extend(_reasoning(part, where, number, report))
        elif part["type"] == "tool-invocation":
            made.append(_call(part["toolInvocation"]))
        else:
            made.append(dict(part))
    yield {"role": "assistant", "content": made}
    results = [_result(p["toolInvocation"]) for p in block if p["type"] == "tool-invocation"]
    if results:
        yield {"role": "tool", "content": results}


def _reasoning(part: Mapping[str, Any], where: str, number: int, report: Report) -> list[Wire]:
    details = part.get("details")
    if details is None and isinstance(part.get("reasoning"), str):
        return [{"type": "reasoning", "text": part["reasoning"]}]
    if not isinstance(details, list):
        raise report.error(number, f"{where}: a reasoning part has no 'details' list")
    made: list[Wire] = []
    for detail in details:
        kind = field_of(detail, "type")
        if kind == "text":
            made.append({"type": "reasoning", "text": detail.get("text")})
        elif kind == "redacted":
            made.append({"type": "redacted-reasoning", "data": detail.get("data")})
        else:  # the SDK writes these two kinds alone
            raise report.error(
                number, f"{where}: a reasoning detail of type {as_written(kind)}; expected text or redacted"
            )
    return made


def _call(invocation: Mapping[str, Any]) -> Wire:
    made = {"type": "tool-call", "toolCallId": invocation["toolCallId"], "toolName": invocation["toolName"]}
    return {**made, "args": invocation["args"]} if "args" in invocation else made


def _result(invocation: Mapping[str, Any]) -> Wire:
    made = {"type": "tool-result", "toolCallId": invocation["toolCallId"]}
    return {**made, "toolName": invocation["toolName"], "result": invocation["result"]}


def _legacy(
    message: Mapping[str, Any], where: str, number: int, report: Report, *, last: bool
) -> Iterator[Wire]:
    """An assistant message without parts: its `toolInvocations` step by step, and its content."""
    body, listed = message.get("content"), message.get("toolInvocations")
    if message.get("reasoning"):
        report.skip("AI SDK 4 reasoning of a message without parts (convertToCoreMessages drops it)")
    if listed is None:
        listed = []
    if not isinstance(listed, list):
        raise report.error(number, f"{where}: its 'toolInvocations' are not a list")
    if listed and not isinstance(body, str):
        raise report.error(number, f"{where}: its 'content' is not text")
    for k, invocation in enumerate(listed):
        _check_invocation(invocation, f"{where}.toolInvocations[{k}]", number, report)
    parts = _answered([{"type": "tool-invocation", "toolInvocation": i} for i in listed], report)
    if not parts:
        yield {"role": "assistant", "content": body}
        return
    for step in sorted(
        {_step(p) for p in parts}
    ):  # the SDK counts up to the greatest; empty steps send nothing
        calls = [p["toolInvocation"] for p in parts if _step(p) == step]
        text = [{"type": "text", "text": body}] if last and body and step == 0 else []
        yield {"role": "assistant", "content": [*text, *(_call(c) for c in calls)]}
        yield {"role": "tool", "content": [_result(c) for c in calls]}
    if body and not last:
        yield {"role": "assistant", "content": body}
