"""Gemini CLI sessions (`~/.gemini/tmp/<project hash>/chats/session-*.jsonl`, older ones
`session-*.json`) and `/chat save` checkpoints (`checkpoint-<tag>.json`), as OpenAI chat messages;
a Gemini API `generateContent` request body too, the same `Content`s (`gemini_contents`).

A session holds the CLI's records of a conversation: `{sessionId, projectHash, startTime,
lastUpdated, messages}` as one JSON document (the older form), or a JSONL log whose first line is
that metadata and whose later lines are message records (appended again, under the same `id`,
each time the CLI updates one), `{"$set": {...}}` metadata updates (a `messages` list among them
replaces every record) and `{"$rewindTo": <id>}` (drops that record and all after it, or every
record when no record has the id). A message record has an `id`, a `type` (`user`, `gemini`,
`info`, `error`, `warning`) and a `content` (a genai `PartListUnion`); a `gemini` record may list
`toolCalls` `{id, name, args, result, status}` (its `result` the function response parts the
tool gave), `thoughts` `{subject, description}`, `tokens` and `model`.

Mapping rules (as the CLI rebuilds the model's history when it resumes a session, in
google-gemini/gemini-cli `packages/core/src/utils/sessionUtils.ts`):
- `info`, `error` and `warning` records are shown, never sent: counted, not replayed. So is a
  `user` record whose text is empty, a slash command (`/...`), a `?` query or context the CLI
  adds anew on resume (`<session_context>`, `<hook_context>`).
- A `user` record is a `user` content of its parts (its text, images, function responses).
- A `gemini` record whose content holds function calls or thoughts is a `model` content of
  those parts; otherwise its `thoughts` (as `**subject** description`), its content and a call
  for each of its `toolCalls` make it. Then the results of its `toolCalls` (text as
  `{"output": text}`, or the parts recorded) are a `user` content after it; a call with no
  result (interrupted) has none. Newer CLI versions also record the results as a `user` record
  of the parts sent: those answer calls answered already, and are counted, not replayed twice.
- A checkpoint is a JSON list of `Content`s (or `{history, authType}`), replayed whole: its first
  content is the environment context the CLI sent first.
- A request body `{contents, systemInstruction, tools, ...}`: its system instruction is the
  system prompt, its function declarations the tool schemas: a `parametersJsonSchema` as it
  is, a `parameters` (the API's OpenAPI-style `Schema`) as JSON Schema (`json_schema`).
- A session holds no system prompt (the CLI builds it anew each run): none is replayed (noted).

Invariants:
- A session's records are held until the log ends, as the CLI holds them, since a later line may
  replace or drop an earlier one; a checkpoint or request is one document, read whole anyway.
- Every shape error is a `TraceError` at the line of the record (or, in a document, the item)
  being read; a line that is none of the CLI's records is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.problems import as_written
from ctxlab.workloads.importers import gemini_contents
from ctxlab.workloads.importers.base import Entry, Report, Wire, json_kind, schema, system, text_of
from ctxlab.workloads.importers.gemini_contents import ROLES, Turn, is_content, is_contents, parts_of

SHOWN = frozenset({"info", "error", "warning"})
IGNORED_PROMPTS = ("/", "?", "<session_context>", "<hook_context>")
REQUEST_KEYS = frozenset(
    {
        "contents",
        "systemInstruction",
        "system_instruction",
        "tools",
        "toolConfig",
        "tool_config",
        "generationConfig",
        "generation_config",
        "safetySettings",
        "safety_settings",
        "cachedContent",
        "cached_content",
        "labels",
        "model",
    }
)
EXPECTED = (
    "not a Gemini CLI session line: expected a message record (an `id`), a `$set` update, a "
    "`$rewindTo` or the session's metadata (`sessionId`, `projectHash`)"
)
NO_SYSTEM = "a Gemini CLI session holds no system prompt (the CLI builds it anew each run): none is replayed"


def _is_session(value: object) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("projectHash"), str)
    )


def _is_checkpoint(value: object) -> bool:
    if is_contents(value):
        return True
    return (
        isinstance(value, Mapping)
        and set(value) <= {"history", "authType"}
        and is_contents(value.get("history"))
    )


def _is_request(value: object) -> bool:
    if not isinstance(value, Mapping) or not set(value) <= REQUEST_KEYS:
        return False
    contents = value.get("contents")
    return isinstance(contents, list) and bool(contents) and all(is_content(c) for c in contents[:8])


def is_gemini_cli(values: list[object]) -> bool:
    """Whether the first entry is a session (its metadata), a checkpoint or a request body."""
    first = values[0] if values else None
    return _is_session(first) or _is_checkpoint(first) or _is_request(first)


def read_gemini_cli(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages the CLI sends for a session, a checkpoint or a request (the module docstring)."""
    first = next(entries, None)
    if first is None:
        return
    number, value = first
    if _is_session(value):
        report.note_once(NO_SYSTEM)
        records = _Records(report)
        records.metadata(value, number)
        for line, record in entries:
            records.read(record, line)
        yield from gemini_contents.messages(_session_turns(records, report), report)
        return
    for line, _ in entries:
        raise report.error(line, "a checkpoint or a request is one JSON document; this is a second one")
    yield from _document(value, number, report)


# ---------------------------------------------------------------------------------------------
# A session's records


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a record was read: its line, and the list holding it in a document (with its index)."""

    line: int
    item: tuple[object, int] | None


class _Records:
    """A session's message records by id, in the order the CLI keeps them (a record written
    again keeps its place), with where each was read."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.by_id: dict[str, tuple[Mapping[str, Any], _Place]] = {}

    def read(self, record: object, line: int) -> None:
        """One line of the log after the first."""
        if not isinstance(record, Mapping):
            raise self.report.error(line, EXPECTED)
        if isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"])
        elif isinstance(record.get("$set"), Mapping):
            listed = record["$set"].get("messages")
            if isinstance(listed, list):
                self.by_id.clear()
                self._each(listed, line)
        elif isinstance(record.get("id"), str):
            self._add(record, _Place(line, None))
        elif _is_session(record):
            self.metadata(record, line)
        else:
            raise self.report.error(line, EXPECTED)

    def metadata(self, value: Mapping[str, Any], line: int) -> None:
        """The session's metadata, with the messages an older session file holds in it."""
        listed = value.get("messages")
        if listed is not None:
            self._each(listed, line)

    def _each(self, listed: list[Any], line: int) -> None:
        for index, record in self.report.each(listed):
            if not isinstance(record, Mapping) or not isinstance(record.get("id"), str):
                raise self.report.error(line, "a message record without a string `id`")
            self._add(record, _Place(line, (listed, index)))

    def _add(self, record: Mapping[str, Any], place: _Place) -> None:
        kind = record.get("type")
        if kind not in SHOWN | {"user", "gemini"}:
            self.report.item = place.item
            raise self.report.error(
                place.line,
                f"a message record of type {kind!r}; expected user, gemini, info, error or warning",
            )
        self.by_id[record["id"]] = (record, place)

    def _rewind(self, to: str) -> None:
        ids = list(self.by_id)
        kept = ids[: ids.index(to)] if to in self.by_id else []
        for gone in ids[len(kept) :]:
            del self.by_id[gone]
            self.report.skip("message record dropped by a rewind")


def _session_turns(records: _Records, report: Report) -> Iterator[Turn]:
    """The contents the CLI sends for a session's records (see the module docstring)."""
    for record, place in list(records.by_id.values()):
        report.item = place.item  # a problem is told at the record's own line
        kind, key = record["type"], record["id"]
        parts = parts_of(record.get("content") or None)  # the CLI reads empty content as no parts
        if kind in SHOWN:
            report.skip(f"{kind} record (shown, never sent)")
        elif kind == "user" and _ignored(parts):
            report.skip("user record the CLI does not resend (a command or context added anew)")
        elif kind == "user":
            yield Turn("user", tuple(parts), place.line, key)
        else:
            yield from _gemini(record, parts, place.line)
    report.item = None


def _ignored(parts: list[Mapping[str, Any]]) -> bool:
    said = "".join(text_of(p.get("text")) if "text" in p else "[part]" for p in parts).strip()
    return not said or said.startswith(IGNORED_PROMPTS)


def _gemini(record: Mapping[str, Any], parts: list[Mapping[str, Any]], line: int) -> Iterator[Turn]:
    """A `gemini` record's model content, then its tool calls' results."""
    key, calls = record["id"], record.get("toolCalls") or []
    if not any("functionCall" in p or "function_call" in p or p.get("thought") for p in parts):
        thoughts = [_thought(t) for t in record.get("thoughts") or []]
        called = [{"functionCall": {"id": c["id"], "name": c["name"], "args": c.get("args")}} for c in calls]
        parts = [*thoughts, *parts, *called]
    if not parts:
        return
    yield Turn("model", tuple(parts), line, key)
    results = [part for c in calls if c.get("result") for part in _result_parts(c)]
    if results:
        yield Turn("user", tuple(results), line, f"{key}_response")


def _thought(thought: Mapping[str, Any]) -> Mapping[str, Any]:
    subject, description = text_of(thought.get("subject")), text_of(thought["description"])
    return {"text": f"**{subject}** {description}" if subject else description, "thought": True}


def _result_parts(tool_call: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    result = tool_call["result"]
    if isinstance(result, str):
        response = {"id": tool_call["id"], "name": tool_call["name"], "response": {"output": result}}
        return [{"functionResponse": response}]
    return parts_of(result)


# ---------------------------------------------------------------------------------------------
# A checkpoint or a request: one document of contents


def _document(value: Any, number: int, report: Report) -> Iterator[Wire]:
    if _is_request(value):
        contents, instruction = (
            value["contents"],
            value.get("systemInstruction", value.get("system_instruction")),
        )
        _declare(value.get("tools") or [], report)
        where = "contents"
    elif _is_checkpoint(value):
        contents, instruction = value if isinstance(value, list) else value["history"], None
        where = "history" if isinstance(value, Mapping) else "contents"
    else:
        raise report.error(
            number, "not a Gemini CLI checkpoint or request: expected a JSON list of contents ({role, parts})"
        )
    said = "".join(text_of(p.get("text")) for p in parts_of(_parts(instruction)))
    if said:
        yield system(said)
    yield from gemini_contents.messages(_content_turns(contents, where, number, report), report)


def _parts(instruction: object) -> object:
    """A system instruction's parts: it may be a content, a part, a list of parts, or text."""
    return instruction.get("parts", instruction) if isinstance(instruction, Mapping) else instruction


def _content_turns(contents: list[Any], where: str, number: int, report: Report) -> Iterator[Turn]:
    for index, item in report.each(contents):
        if not is_content(item):
            raise report.error(number, f"{where}[{index}]: {_not_content(item)}")
        yield Turn(item["role"], tuple(parts_of(item["parts"])), number, f"content{index}")


def _not_content(item: object) -> str:
    """Why an item is no genai `Content` ({role: user | model, parts: [...]})."""
    if not isinstance(item, Mapping) or set(item) != {"role", "parts"}:
        return "is not a content ({role: user | model, parts})"
    if item["role"] not in ROLES:
        return f"its role is {as_written(item['role'])}, not 'user' or 'model'"
    return f"its parts are {json_kind(item['parts'])}, not a list of parts"


_COUNTS = frozenset({"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"})
"""A `Schema`'s int64 fields, which the API's JSON writes as strings."""


def json_schema(value: object) -> object:
    """A Gemini API `Schema` as the JSON Schema it stands for: its `type` names in lower case
    (`OBJECT` is `object`; `TYPE_UNSPECIFIED` names none), `nullable` a `null` type beside its
    own, int64 counts as numbers, `propertyOrdering` (an order for generation alone) left out;
    every other keyword, and any value that is no schema, as it is.

    >>> json_schema({"type": "OBJECT", "properties": {"n": {"type": "INTEGER", "nullable": True}}})
    {'type': 'object', 'properties': {'n': {'type': ['integer', 'null']}}}
    """
    if not isinstance(value, Mapping):
        return value
    out: dict[str, object] = {}
    for key, item in value.items():
        if key == "type" and isinstance(item, str):
            if item.upper() != "TYPE_UNSPECIFIED":
                out[key] = item.lower()
        elif key == "properties" and isinstance(item, Mapping):
            out[key] = {name: json_schema(inner) for name, inner in item.items()}
        elif key in {"items", "anyOf"}:
            out[key] = [json_schema(i) for i in item] if isinstance(item, list) else json_schema(item)
        elif key in _COUNTS and isinstance(item, str) and item.isdigit():
            out[key] = int(item)
        elif key not in {"propertyOrdering", "nullable"}:
            out[key] = item
    if value.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _declare(tools: list[Any], report: Report) -> None:
    """The function declarations of a request's tools, as the report's tool schemas."""
    for entry in tools:
        for declared in entry.get("functionDeclarations") or entry.get("function_declarations") or []:
            given = declared.get("parametersJsonSchema")
            parameters = given if given is not None else json_schema(declared.get("parameters"))
            found = schema(declared.get("name"), declared.get("description"), parameters)
            if found is not None:
                report.tools.append(found)
