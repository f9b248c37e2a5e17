"""Gemini API `Content`s (`{role: user | model, parts}`), as OpenAI chat messages: the history
the Gemini CLI sends (`gemini_cli`), a `/chat save` checkpoint, a `generateContent` request.

A part is `text` (a `thought` when flagged), `functionCall` `{id, name, args}`,
`functionResponse` `{id, name, response, parts}`, `inlineData` `{mimeType, data}` (base64),
`fileData`, or another kind (`executableCode`, ...); field names may be the JSON's camelCase or
the Python SDK's snake_case (`adk_events.get`).

Mapping rules:
- A `model` content is an assistant message: its texts joined as written (the API streams a
  text in pieces), its thoughts as reasoning, its calls with their `args` as JSON text.
- A `user` content is a user message (texts and images), but for its function responses: each
  is a tool message, in order; media or text sent beside them in the same content (a tool's
  picture, where the model takes none inside a response) join the last of those results, so
  they reach the model with the results, as they did, and no new turn begins (a note says so).
- A response `{"output": <text>}` (the CLI's wrapping of a tool's text) is that text, `{"error":
  <text>}` is that text as an error result (the CLI records a failed and a cancelled call so);
  any other response is its JSON text, counted in a note. Media inside a response (`parts`)
  are images of its result.
- A call without an id (older API versions, checkpoints) gets `<turn>-<part index>`, the turn
  naming its content; a response answers a call of the last model content before it: the call
  of its id, or, without an id, the earliest unanswered call of its name, as the API pairs them.
  A response to a call already answered (the CLI may record a result twice) is counted, not
  replayed; one that answers no call of that content (none, or one an earlier model content
  made) is an error at its line. A call no response answers before the next model content is
  replayed as the CLI sends it, unanswered (the replay gives it an empty result and says so).
- Images are `data:` URLs; other inline media, file references and other kinds of part are
  counted as skipped.

Invariants:
- Every shape error is a `TraceError` at the content's line; what is not replayed is counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.workloads.importers.adk_events import get, inline_image
from ctxlab.workloads.importers.base import (
    Report,
    Wire,
    assistant,
    call,
    content,
    json_kind,
    text_part,
    tool,
    user,
)

ROLES = frozenset({"user", "model"})
_FLAGS = frozenset(
    {"thought", "thoughtSignature", "thought_signature", "text", "partMetadata", "part_metadata"}
)
OTHER_RESPONSE = (
    'function responses other than {"output": <text>} or {"error": <text>} are replayed as their JSON text'
)
BESIDE = (
    "media or text sent beside function responses in one content join the last result, so that they "
    "reach the model with the results and no new turn begins"
)


@dataclass(frozen=True, slots=True)
class Turn:
    """A content to send: its role, its parts (each a JSON object), the line it was read at, and
    the name that makes ids for its calls without one."""

    role: str
    parts: tuple[Mapping[str, Any], ...]
    line: int | None
    key: str


@dataclass(slots=True)
class Pairing:
    """The calls sent so far: those of the last model content still unanswered, in order, as
    (id, name), those answered, and those an earlier model content left unanswered."""

    report: Report
    open: list[tuple[str, str]] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)
    left: set[str] = field(default_factory=set)

    def close(self) -> None:
        """A new model content: the calls still open stay unanswered, and no response answers them."""
        self.left.update(call_id for call_id, _ in self.open)
        self.open.clear()

    def answer(self, response: Mapping[str, Any], line: int | None) -> str | None:
        """The id of the call a response answers; None for a call answered already (counted).

        Raises:
            TraceError: the response answers no call of the last model content before it.
        """
        given, name = response.get("id"), response.get("name")
        if isinstance(given, str) and given:
            found = next((i for i, (cid, _) in enumerate(self.open) if cid == given), None)
        else:
            found = next((i for i, (_, cname) in enumerate(self.open) if cname == name), None)
        if found is not None:
            call_id = self.open.pop(found)[0]
            self.answered.add(call_id)
            return call_id
        if given in self.answered:
            self.report.skip("function response to a call answered already (recorded twice)")
            return None
        said = f"a function response to {name!r} ({given or 'no id'})"
        if given in self.left:
            raise self.report.error(
                line,
                f"{said} answers a call of an earlier model content, not of the last one before it: "
                "the API pairs a response only with a call of the model content just before it",
            )
        raise self.report.error(line, f"{said} answers no call of the model content before it")


def parts_of(value: object) -> list[Mapping[str, Any]]:
    """A genai `PartListUnion` as its parts: text stands for a text part, one part for a list of it.

    Raises:
        TypeError: an item that is neither text nor a part (a shape error, located by the caller).
    """
    items = value if isinstance(value, list) else [] if value is None else [value]
    out: list[Mapping[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            out.append({"text": item})
        elif isinstance(item, Mapping):
            out.append(item)
        else:
            raise TypeError(f"a part is {type(item).__name__}, not text or an object")
    return out


def is_content(value: object) -> bool:
    """Whether a value is a genai `Content` and nothing else: a `user` or `model` role and parts."""
    if not isinstance(value, Mapping) or not set(value) <= {"role", "parts"}:
        return False
    return value.get("role") in ROLES and isinstance(value.get("parts"), list)


def is_contents(value: object) -> bool:
    """Whether a value is a non-empty list of what is shaped as `Content`s (the first eight
    checked: a role and parts alone, whatever they hold; the reader refuses one that is no
    `Content`, naming it, rather than the file being taken for another format)."""
    return isinstance(value, list) and bool(value) and all(_shaped_as_content(v) for v in value[:8])


def _shaped_as_content(value: object) -> bool:
    """A role Gemini writes (or its older `function`, refused when read) and parts alone, none
    with a `type` (an AI SDK UI message has the same keys, and typed parts)."""
    if not isinstance(value, Mapping) or set(value) != {"role", "parts"}:
        return False
    parts = value["parts"] if isinstance(value["parts"], list) else []
    return value["role"] in {*ROLES, "function"} and not any(
        isinstance(part, Mapping) and isinstance(part.get("type"), str) for part in parts
    )


def messages(turns: Iterable[Turn], report: Report) -> Iterator[Wire]:
    """The contents, in order, as OpenAI chat messages (see the module docstring)."""
    pairing = Pairing(report)
    for turn in turns:
        if turn.role == "model":
            pairing.close()
            yield _assistant(turn, pairing)
        elif turn.role == "user":
            yield from _user(turn, pairing)
        else:
            raise report.error(turn.line, f"a content's role is {turn.role!r}, not 'user' or 'model'")


def _assistant(turn: Turn, pairing: Pairing) -> Wire:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[Wire] = []
    for index, part in enumerate(turn.parts):
        called, text = get(part, "function_call"), _text(part, turn.line, pairing.report)
        if called is not None:
            given, name = called.get("id"), called["name"]
            call_id = given if isinstance(given, str) and given else f"{turn.key}-{index}"
            if not isinstance(name, str):
                raise pairing.report.error(turn.line, "a function call without a string `name`")
            pairing.open.append((call_id, name))
            calls.append(call(call_id, name, called.get("args") or {}))
        elif isinstance(text, str):
            (reasoning if part.get("thought") else texts).append(text)
        else:
            pairing.report.skip(f"model part {_kind(part)!r}")
    return assistant("".join(texts), calls, "".join(reasoning))


def _user(turn: Turn, pairing: Pairing) -> Iterator[Wire]:
    """A user content: its function responses as tool messages, the rest as a user message or,
    beside responses, in the last result."""
    results: list[Wire] = []
    rest: list[Wire] = []
    for part in turn.parts:
        answered = get(part, "function_response")
        if answered is not None:
            result = _result(answered, turn.line, pairing)
            results += [result] if result is not None else []
        else:
            rest += _user_part(part, turn.line, pairing.report)
    if results and rest:
        pairing.report.note_once(BESIDE)
        last = results[-1]
        body = last["content"]
        results[-1] = {**last, "content": [*([text_part(body)] if isinstance(body, str) else body), *rest]}
    elif rest:
        yield user(content(rest))
    yield from results


def _result(answered: Mapping[str, Any], line: int | None, pairing: Pairing) -> Wire | None:
    """A function response as a tool message (None for a call answered already)."""
    call_id = pairing.answer(answered, line)
    if call_id is None:
        return None
    response = answered.get("response")
    error = isinstance(response, Mapping) and response.get("error") not in (None, "", False)
    said = _said(response, pairing.report)
    media = [
        image
        for part in parts_of(answered.get("parts"))
        for image in _user_part(part, line, pairing.report)
        if image["type"] != "text"
    ]
    return tool(call_id, content([text_part(said), *media]) if media else said, error=error)


def _said(response: object, report: Report) -> str:
    """A response's text: its `output` or `error` text alone, else its JSON text (noted)."""
    if isinstance(response, Mapping) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return value
    report.note_once(OTHER_RESPONSE)
    return json.dumps(response, ensure_ascii=False)


def _user_part(part: Mapping[str, Any], line: int | None, report: Report) -> list[Wire]:
    """A part of a user content: a text or an image part (none for a thought or other media)."""
    text, blob = _text(part, line, report), get(part, "inline_data")
    if isinstance(text, str) and not part.get("thought"):
        return [text_part(text)]
    if blob is not None:
        image = inline_image(blob, "a part", line, report)
        return [image] if image is not None else []
    report.skip(f"user part {_kind(part)!r}")
    return []


def _text(part: Mapping[str, Any], line: int | None, report: Report) -> str | None:
    """A part's text; None when it has none.

    Raises:
        TraceError: its `text` is of another kind than text (it would be lost).
    """
    text = part.get("text")
    if text is None or isinstance(text, str):
        return text
    raise report.error(line, f"a part's text is {json_kind(text)}, not text")


def _kind(part: Mapping[str, Any]) -> str:
    """A part's kind: its first field that holds something, besides flags."""
    if part.get("thought") and isinstance(part.get("text"), str):
        return "thought"
    return next((key for key, v in part.items() if v is not None and key not in _FLAGS), "empty")
