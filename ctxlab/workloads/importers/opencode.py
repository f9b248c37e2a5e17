"""OpenCode sessions (`opencode export <sessionID>`: one JSON document `{info, messages, todos}`,
each message `{info, parts}`) as OpenAI chat messages, sent as OpenCode sends a session's history
to a chat-completions model (anomalyco/opencode, formerly sst/opencode, at
007a9409bafea06d6b9084ff1f6d1fe9f5e3a803: the message and part schemas, `toModelMessages` and
`filterCompacted` in `packages/opencode/src/session/message-v2.ts`; the export in
`packages/opencode/src/cli/cmd/export.ts`). OpenCode makes AI SDK `UIMessage`s of its messages
and hands them to the SDK's `convertToModelMessages`: the `UIMessage`s built here go the same way
(`ctxlab.workloads.importers.ai_sdk_ui`, then `ai_sdk.chat`). A session of OpenCode's own
database is rebuilt into the same messages (`opencode_store`) and mapped by `session_wires` too.

Mapping rules:
- History: the newest completed compaction cuts it. A user message holding a `compaction` part,
  answered by a `summary` assistant message that finished without an error, starts what is sent.
  When its `tail_start_id` names a message before it, the messages from that one on are kept
  too, sent after the request and its summary, as OpenCode's later `filterCompacted` orders them
  (at 007a9409 that function was mid-change); an id naming no message before it keeps every
  message. Each message left out is counted.
- A user message is its `text` parts (an `ignored` one counted) and its `file` parts (a
  `text/plain` or directory file counted: OpenCode sends the text it read from it as a synthetic
  text part beside it); a `compaction` part is OpenCode's fixed question for the summary, a
  `subtask` part its fixed line; `agent` parts are counted.
- An assistant message that ended in an error is left out, counted (unless it was aborted after
  writing more than reasoning). Its `step-start` parts split it into steps, each an assistant
  message (its `text` joined, its `reasoning` apart, its calls) and the results of its calls.
- A `tool` part is a call (`callID`, `tool`, `state.input`) and, by `state.status`: `completed`
  its `output` (`[Old tool result content cleared]` once OpenCode pruned it, `time.compacted`);
  `error` an error result of its `error` (a call interrupted with an output keeps the output);
  `pending` and `running` OpenCode's interrupted error result (noted). A completed call's image
  and PDF attachments are sent after the assistant message as a user message, as OpenCode does
  for a chat-completions provider; its other attachments join its output as the AI SDK's
  `content` output, as JSON.
- Counted, never sent: `step-finish`, `snapshot`, `patch`, `retry` and assistant `file`/`agent`
  parts. The export holds no system prompt and no tool schemas (noted).

Invariants:
- Detection takes a document of `info` and `messages` whose messages are `{info: {id, role},
  parts}`: a shape only OpenCode writes.
- A message, part or tool state of a shape OpenCode never writes is an error at its line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ctxlab.workloads.importers.ai_sdk import chat
from ctxlab.workloads.importers.ai_sdk_ui import model_messages
from ctxlab.workloads.importers.base import Calls, Entry, Report, Wire, field_of, listed, one_conversation
from ctxlab.workloads.importers.js_json import js_json

ROLES = ("user", "assistant")
PARTS = frozenset(
    {"text", "subtask", "reasoning", "file", "tool", "step-start", "step-finish", "snapshot", "patch"}
    | {"agent", "retry", "compaction"}
)
STATUSES = ("pending", "running", "completed", "error")
SUMMARY_QUESTION = "What did we do so far?"
SUBTASK_LINE = "The following tool was executed by the user"
CLEARED = "[Old tool result content cleared]"
INTERRUPTED = "[Tool execution was interrupted]"
ATTACHED = "Attached image(s) from tool result:"
TEXT_FILES = ("text/plain", "application/x-directory")
NO_SYSTEM = (
    "an OpenCode session holds no system prompt or tool schemas (OpenCode builds them anew each "
    "request): none is replayed"
)
UNFINISHED = "a call still pending or running gets OpenCode's interrupted error result, as OpenCode sends it"
PRUNED = f"tool outputs OpenCode pruned (time.compacted) are sent as its placeholder {CLEARED!r}"
DETECT_MESSAGES = 8


def _is_message(value: object) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(field_of(value, "info", "id"), str)
        and field_of(value, "info", "role") in ROLES
        and isinstance(value.get("parts"), list)
    )


def is_opencode(values: list[object]) -> bool:
    """Whether the first entry is an OpenCode export (see the module docstring)."""
    first = values[0] if values else None
    messages = field_of(first, "messages")
    return (
        isinstance(field_of(first, "info", "id"), str)
        and isinstance(messages, list)
        and bool(messages)
        and all(_is_message(m) for m in messages[:DETECT_MESSAGES])
    )


def read_opencode(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages OpenCode sends for an exported session (see the module docstring).

    Raises:
        SessionError: a session past 0 (an export holds one session).
    """
    if report.session:
        raise one_conversation(report.source, "an OpenCode export", report.session)
    first = next(entries, None)
    if first is None:
        return
    number, value = first
    for line, _ in entries:
        raise report.error(line, "an OpenCode export is one JSON document; this is a second one")
    messages = field_of(value, "messages")
    if not isinstance(messages, list):
        raise report.error(number, "not an OpenCode export: expected {info, messages}")
    yield from session_wires(messages, [number] * len(messages), report)


def session_wires(messages: list[Any], numbers: Sequence[int], report: Report) -> Iterator[Wire]:
    """The messages OpenCode sends for a session's `messages` (`{info, parts}` each, oldest
    first), as the module docstring maps them: an export's or a database's (`opencode_store`).
    `numbers[i]` is the entry number a problem of message `i` is told at."""
    report.note_once(NO_SYSTEM)
    calls = Calls(report)
    order = _checked_order(messages, numbers, report)
    for _ in range(len(messages) - len(order)):
        report.skip("message before a completed compaction")
    for index, message in _each_in(order, messages, report):
        number = numbers[index]
        for ui in _ui_messages(message, f"messages[{index}]", number, report):
            for made in model_messages(ui, f"messages[{index}]", number, report):
                yield from chat(made, f"messages[{index}]", number, calls)


def _checked_order(messages: list[Any], numbers: Sequence[int], report: Report) -> list[int]:
    """Every message checked for its shape, then the indices of those sent, in the order sent."""
    for index, message in report.each(messages):
        if not _is_message(message):
            raise report.error(
                numbers[index],
                f"messages[{index}] is no OpenCode message: expected {{info: {{id, role}}, parts}}",
            )
        for k, part in enumerate(message["parts"]):
            kind = field_of(part, "type")
            if kind not in PARTS:
                raise report.error(
                    numbers[index], f"messages[{index}].parts[{k}] is no OpenCode part (its type is {kind!r})"
                )
    return _reordered(messages, _kept(messages))


def _each_in(order: list[int], messages: list[Any], report: Report) -> Iterator[tuple[int, Any]]:
    """Each message of `order` with its index, noted as the one being read until the loop ends,
    as `Report.each` notes an item, so a problem is told at that message's line."""
    for index in order:
        report.item = (messages, index)
        yield index, messages[index]
    report.item = None


def _kept(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """The messages OpenCode's `filterCompacted` keeps, oldest first: walking back from the
    newest, up to the newest compaction request a summary completed, or on to the message its
    `tail_start_id` names; every message when that id names none before it."""
    completed: set[object] = set()
    retain: object = None
    for index in range(len(messages) - 1, -1, -1):
        info, parts = messages[index]["info"], messages[index]["parts"]
        if retain is not None:
            if info["id"] == retain:
                return list(range(index, len(messages)))
            continue
        cut = next((p for p in parts if p["type"] == "compaction"), None)
        if info["role"] == "user" and info["id"] in completed and cut is not None:
            retain = cut.get("tail_start_id")
            if not retain or retain == info["id"]:
                return list(range(index, len(messages)))
        elif _completed_summary(info):
            completed.add(info.get("parentID"))
    return list(range(len(messages)))


def _completed_summary(info: Mapping[str, Any]) -> bool:
    return (
        info["role"] == "assistant"
        and bool(info.get("summary"))
        and bool(info.get("finish"))
        and not info.get("error")
    )


def _reordered(messages: Sequence[Mapping[str, Any]], kept: list[int]) -> list[int]:
    """`kept` as OpenCode orders it for the model: where the newest compaction request naming a
    tail has its summary after it and that tail before it, the request and its summary come
    first, then the tail, then what followed the summary; else `kept` as it is."""
    rows = [messages[k] for k in kept]
    marked = [at for at, m in enumerate(rows) if _tail_of(m) is not None]
    if not marked:
        return kept
    at = marked[-1]
    marker, tail_id = rows[at]["info"]["id"], _tail_of(rows[at])
    summary = next((k for k in range(at + 1, len(rows)) if _summary_of(rows[k]["info"], marker)), -1)
    tail = next((k for k, m in enumerate(rows) if m["info"]["id"] == tail_id), -1)
    if 0 <= tail < at < summary:
        return [*kept[at : summary + 1], *kept[tail:at], *kept[summary + 1 :]]
    return kept


def _tail_of(message: Mapping[str, Any]) -> object:
    """The `tail_start_id` a user message's compaction part names, or None (no such part or id)."""
    if message["info"]["role"] != "user":
        return None
    cut = next((p for p in message["parts"] if p["type"] == "compaction"), None)
    return None if cut is None else cut.get("tail_start_id")


def _summary_of(info: Mapping[str, Any], marker: object) -> bool:
    return info["role"] == "assistant" and bool(info.get("summary")) and info.get("parentID") == marker


def _ui_messages(message: Mapping[str, Any], where: str, number: int, report: Report) -> Iterator[Wire]:
    """The `UIMessage`s OpenCode makes of one message (none for one it leaves out)."""
    info, parts = message["info"], message["parts"]
    extra: list[Wire] = []  # a tool's media, sent after the message as a user message
    if info["role"] == "user":
        made = [p for part in parts for p in _user_part(part, report)]
    elif _failed(info, parts):
        report.skip("assistant message that ended in an error")
        return
    else:
        made = [
            p
            for k, part in enumerate(parts)
            for p in _assistant_part(part, f"{where}.parts[{k}]", number, report, extra)
        ]
    if not any(p["type"] != "step-start" for p in made):
        report.skip(f"{info['role']} message with nothing OpenCode sends")
        return
    yield {"role": info["role"], "parts": made}
    if extra:
        yield {"role": "user", "parts": [{"type": "text", "text": ATTACHED}, *extra]}


def _failed(info: Mapping[str, Any], parts: list[Mapping[str, Any]]) -> bool:
    error = info.get("error")
    if not error:
        return False
    aborted = field_of(error, "name") == "MessageAbortedError"
    return not (aborted and any(p["type"] not in ("step-start", "reasoning") for p in parts))


def _user_part(part: Mapping[str, Any], report: Report) -> list[Wire]:
    kind = part["type"]
    if kind == "text" and not part.get("ignored"):
        return [{"type": "text", "text": part.get("text")}]
    if kind == "file" and part.get("mime") not in TEXT_FILES:
        return [{"type": "file", "mediaType": part.get("mime"), "url": part.get("url")}]
    if kind == "compaction":
        return [{"type": "text", "text": SUMMARY_QUESTION}]
    if kind == "subtask":
        return [{"type": "text", "text": SUBTASK_LINE}]
    what = "ignored text" if kind == "text" else f"{part.get('mime')} file" if kind == "file" else kind
    report.skip(f"{what} part in a user message")
    return []


def _assistant_part(
    part: Mapping[str, Any], where: str, number: int, report: Report, media: list[Wire]
) -> list[Wire]:
    kind = part["type"]
    if kind in ("text", "reasoning"):
        return [{"type": kind, "text": part.get("text")}]
    if kind == "step-start":
        return [{"type": "step-start"}]
    if kind == "tool":
        return [_tool(part, where, number, report, media)]
    report.skip(f"{kind} part in an assistant message")
    return []


def _tool(part: Mapping[str, Any], where: str, number: int, report: Report, media: list[Wire]) -> Wire:
    """The AI SDK tool part of an OpenCode tool part; a completed call's media attachments are
    appended to `media`."""
    state, name, call_id = part.get("state"), part.get("tool"), part.get("callID")
    status = field_of(state, "status")
    if not isinstance(state, Mapping) or status not in STATUSES:
        raise report.error(
            number, f"{where}: a tool part's state.status is {status!r}; OpenCode writes {STATUSES}"
        )
    if not isinstance(name, str) or not name:
        raise report.error(number, f"{where}: a tool part names no tool ('tool')")
    made: Wire = {"type": f"tool-{name}", "toolCallId": call_id, "input": state.get("input")}
    if field_of(part, "metadata", "providerExecuted"):
        made["providerExecuted"] = True
    if status == "completed":
        return {**made, "state": "output-available", "output": _output(state, where, number, report, media)}
    kept = (
        field_of(state, "metadata", "output") if field_of(state, "metadata", "interrupted") is True else None
    )
    if isinstance(kept, str):
        return {**made, "state": "output-available", "output": kept}
    if status == "error":
        return {**made, "state": "output-error", "errorText": state.get("error")}
    report.note_once(UNFINISHED)
    return {**made, "state": "output-error", "errorText": INTERRUPTED}


def _output(state: Mapping[str, Any], where: str, number: int, report: Report, media: list[Wire]) -> str:
    """A completed call's output as OpenCode sends it to a chat-completions model."""
    if field_of(state, "time", "compacted"):
        report.note_once(PRUNED)
        return CLEARED
    text = state.get("output")
    if not isinstance(text, str):
        raise report.error(number, f"{where}: a completed tool part's state.output is not text")
    kept: list[Mapping[str, Any]] = []
    for attachment in listed(state.get("attachments")):
        mime, url = field_of(attachment, "mime"), field_of(attachment, "url")
        if not isinstance(mime, str) or not isinstance(url, str):
            raise report.error(number, f"{where}: a tool attachment without its 'mime' and 'url'")
        if mime.startswith("image/") or mime == "application/pdf":
            media.append({"type": "file", "mediaType": mime, "url": url})
        else:
            kept.append(attachment)
    if not kept:
        return text
    inline = [a for a in kept if a["url"].startswith("data:") and "," in a["url"]]
    for _ in range(len(kept) - len(inline)):  # its data is not in the file: the output goes without it
        report.skip("tool attachment given by URL, not data")
    body = [{"type": "media", "mediaType": a["mime"], "data": a["url"].split(",", 1)[1]} for a in inline]
    return js_json([{"type": "text", "text": text}, *body])
