"""OpenAI Responses items, as OpenAI chat messages: what a Responses request log
(`responses_log`), a Codex CLI rollout and a mini-swe-agent 2 trajectory of a Responses model
hold.

Mapping rules for items (also Codex's):
- A `message` item (or an item with only `role` and `content`) is a message of its role;
  `developer` is `system` (one after the first message is user text at its place, as for every
  format); `input_text`/`output_text` parts join the text, `input_image` parts are image parts.
- `function_call` items are calls of the assistant message they follow (an assistant message
  and the calls after it are one message, so parallel calls stay together); `custom_tool_call`
  is a call with arguments `{"input": "<its input>"}`; a built-in tool's call is a call of that
  tool with its `action` (or `operation`, or `arguments`) as arguments: `local_shell_call` of
  `local_shell`, `shell_call` of `shell`, `apply_patch_call` of `apply_patch`, `computer_call`
  of `computer`, `tool_search_call` of `tool_search` (Codex). A call into a
  `namespace` (Codex offers each MCP server's tools as one, `mcp__<server>__`) is named as Codex
  names it where the namespace cannot stay apart (`flat_name`: `mcp__<server>__<tool>`, the name
  MCP tools had before namespaces), and so are the functions of a request's `namespace` tool.
- `function_call_output`, `custom_tool_call_output`, `local_shell_call_output`,
  `shell_call_output`, `apply_patch_call_output`, `computer_call_output` and
  `tool_search_output` items are the results of their `call_id`s (a `tool_search_output`
  without one answers the last tool search): the output string as recorded, or an output of
  content parts read as a message's (text and `input_image` parts; others counted), or a
  screenshot's image (one given by `file_id`, whose image the log lacks, is an empty result,
  counted), or a structured output's; a shell call's result is each command's stdout
  and stderr, a patch's that `failed` an error; a tool search's result is the JSON of the tools
  it found.
- A call the server runs carries its output: `mcp_call` is a call of its `name` answered by its
  `output` (its `error`, an error result), `code_interpreter_call` a call of `code_interpreter`
  with its `code`, answered by its logs and images, and a `file_search_call` that carries its
  `results` (the request asked for them: `include: ["file_search_call.results"]`) a call of
  `file_search` with its `queries`, answered by its results (`file_search_results`: a text
  part per result, its filename, its attributes as JSON and its text; a `failed` search an
  error result). Its assistant message ends there.
- A `refusal` part is the assistant's text.
- An `agent_message` (Codex's message from another agent) is a user message of its text parts
  joined by a line break, as Codex sends it to a model that does not take agent messages; one
  with encrypted content is counted.
- An `item_reference` is the item of that `id` among the logged responses' outputs (a request
  log keeps those items, as the API does); one the log does not hold is an error, but for a
  reasoning item's (`rs_`), which holds no readable text: counted.
- `reasoning` items are reasoning (their summary text, or the `reasoning_text` of their
  `content` when they have no summary, as open-weight models write them) of the next assistant
  message, kept apart from its text. A file search without its results (they are null unless
  the request asked for them) is counted as one. Other items (web searches, whose results the
  API does not return, at most their sources' URLs; MCP tool listings, ...) are counted and
  skipped.
- A `compaction` item (`/responses/compact`, or a request's `context_management` compaction)
  stands for the items before it, which the API no longer sent the model; its summary is
  encrypted, so it is counted and noted (`COMPACTED`), and the items before it are replayed: the
  replay's history is longer than the model's from there on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.workloads.importers.base import (
    Calls,
    Report,
    Wire,
    assistant,
    call,
    content,
    field_of,
    image_part,
    system,
    text_of,
    text_only,
    text_part,
    tool,
    user,
)

CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "computer_call",
        "tool_search_call",
        "shell_call",
        "apply_patch_call",
    }
)
OUTPUTS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "computer_call_output",
        "tool_search_output",
        "shell_call_output",
        "apply_patch_call_output",
    }
)
ANSWERED = frozenset({"mcp_call", "code_interpreter_call"})
"""Calls the server runs, each item carrying its own output (and `file_search_call`, when it
carries its `results`: `searched`)."""
BUILT_IN = {
    "local_shell_call": "local_shell",
    "computer_call": "computer",
    "tool_search_call": "tool_search",
    "code_interpreter_call": "code_interpreter",
    "shell_call": "shell",
    "apply_patch_call": "apply_patch",
    "file_search_call": "file_search",
}
"""The tool a built-in call item calls."""
COMPACTED = (
    "a Responses `compaction` item: the API sent the model its summary in place of every item before "
    "it, but the summary is encrypted, so it is not replayed and the items before it are: the replayed "
    "history is longer than what the model saw after the compaction (the strategies replayed decide "
    "what of it a request keeps)"
)


def _arguments(kind: str, item: Mapping[str, Any]) -> tuple[str, object]:
    """The tool name and the arguments of a call item."""
    if kind == "custom_tool_call":
        return flat_name(item.get("namespace"), item.get("name")), {"input": text_of(item.get("input"))}
    if kind == "code_interpreter_call":
        return BUILT_IN[kind], {"code": text_of(item.get("code"))}
    if kind == "file_search_call":
        return BUILT_IN[kind], {"queries": item.get("queries") or []}
    if kind in BUILT_IN:
        return BUILT_IN[kind], item.get("action") or item.get("operation") or item.get("arguments") or {}
    return flat_name(item.get("namespace"), item.get("name")), item.get("arguments") or "{}"


def _shell_output(value: object) -> str:
    """The text of a shell call's output: each command's stdout then stderr, a line apart (a
    string output as recorded)."""
    if not isinstance(value, list):
        return text_of(value)
    texts = (text_of(field_of(run, key)) for run in value for key in ("stdout", "stderr"))
    return "\n".join(text for text in texts if text)


UNSEARCHED = "item 'file_search_call' without its results (not asked for: include file_search_call.results)"
"""How a file search whose results the log does not hold is counted."""


def skipped(kind: object) -> str:
    """How an item no rule replays is counted (a file search without its results says so)."""
    return UNSEARCHED if kind == "file_search_call" else f"item {kind!r}"


def searched(item: Mapping[str, Any]) -> bool:
    """Whether `item` is a file search carrying its `results` (a list, maybe empty: the request
    asked for them with `include: ["file_search_call.results"]`; without it they are null)."""
    return item.get("type") == "file_search_call" and isinstance(item.get("results"), list)


def file_search_results(results: list[Any]) -> str | list[Wire]:
    """A file search's results as its tool result: a text part per result, in order, of its
    `filename` (its `file_id` when it has none), its `attributes` as JSON (keys sorted, non-ASCII
    kept; none when empty) and its `text`, a blank line between those present. One result is
    plain text, no result ''. The `score` is left out: it ranks the results, which keep their
    order."""
    parts: list[Wire] = []
    for result in results:
        head = text_of(field_of(result, "filename")) or text_of(field_of(result, "file_id"))
        attributes = field_of(result, "attributes")
        listed = json.dumps(attributes, ensure_ascii=False, sort_keys=True) if attributes else ""
        texts = (head, listed, text_of(field_of(result, "text")))
        parts.append(text_part("\n\n".join(text for text in texts if text)))
    return content(parts)


def flat_name(namespace: object, name: object) -> str:
    """A tool's name; one in a namespace (Codex's MCP tools: `mcp__<server>__`) is named as Codex
    names it where the namespace cannot stay apart: the namespace without trailing `_`, `__`,
    the name without leading `_`, as MCP tools were named before namespaces."""
    if isinstance(namespace, str) and namespace:
        return f"{namespace.rstrip('_')}__{str(name).lstrip('_')}"
    return str(name)


@dataclass(slots=True)
class ItemMapper:
    """Maps Responses items one at a time, holding back the assistant message being built."""

    report: Report
    calls: Calls
    texts: list[str] = field(default_factory=list)
    listed: list[Wire] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    open: bool = False
    known: Mapping[str, Any] = field(default_factory=dict)
    listed_id: str = ""
    search: str | None = None

    def flush(self) -> Iterator[Wire]:
        """The assistant message being built, if any."""
        if self.open:
            yield assistant("\n\n".join(self.texts), self.listed, "\n\n".join(self.reasoning))
        self.texts, self.listed, self.reasoning, self.open = [], [], [], False

    def item(self, item: object, line: int | None) -> Iterator[Wire]:
        """The messages completed by one item."""
        if not isinstance(item, Mapping):
            raise self.report.error(line, f"an item must be an object, got {type(item).__name__}")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            yield from self._message(item, line)
        elif kind == "reasoning":
            if self.listed:
                yield from self.flush()
            parts = item.get("summary") or item.get("content") or []
            self.reasoning.extend(text_of(field_of(p, "text")) for p in parts if isinstance(p, Mapping))
        elif kind in CALLS or kind in ANSWERED or searched(item):
            self.open = True
            listed, result = self.call_item(kind, item)
            self.listed.append(listed)
            if result is not None:
                yield from self.flush()
                yield result
        elif kind in OUTPUTS:
            yield from self.flush()
            answered = item.get("call_id") or (self.search if kind == "tool_search_output" else None)
            yield self.result(kind, item, self.calls.answer(answered, line, key="call_id"))
        elif kind == "item_reference":
            yield from self._reference(item.get("id"), line)
        elif kind == "agent_message":
            yield from self._agent_message(item.get("content"))
        elif kind == "compaction":
            self.report.skip("item 'compaction'")
            self.report.note_once(COMPACTED)
        else:
            self.report.skip(skipped(kind))

    def call_item(self, kind: str, item: Mapping[str, Any]) -> tuple[Wire, Wire | None]:
        """The call of a call item (`CALLS`, `ANSWERED`, or a file search that `searched`) and the
        result it carries when the server ran it, None when a later output item answers it (a
        `CALLS` item). The call is declared in `calls` before its result is made, so the result
        always has its call; the two stay in this order, with no assistant message between."""
        listed = self._call(kind, item)
        return listed, (None if kind in CALLS else self.result(kind, item, self.listed_id))

    def _call(self, kind: str, item: Mapping[str, Any]) -> Wire:
        """The call of a call item (the name the tool has for a built-in one)."""
        given = item.get("call_id") or item.get("id") or f"{kind}_{len(self.calls.ids)}"
        call_id = self.calls.declare(str(given))
        self.listed_id = call_id
        if kind == "tool_search_call":
            self.search = call_id
        name, arguments = _arguments(kind, item)
        return call(call_id, name, arguments)

    def result(self, kind: str, item: Mapping[str, Any], call_id: str) -> Wire:
        """The result of a call: an output item's, or that a server-run call carries."""
        if kind == "tool_search_output":
            return tool(call_id, json.dumps(item.get("tools") or [], ensure_ascii=False))
        if kind == "mcp_call" and item.get("error"):
            error = item["error"]
            return tool(call_id, error if isinstance(error, str) else json.dumps(error), error=True)
        if kind == "code_interpreter_call":
            return tool(call_id, self._interpreter(item.get("outputs")))
        if kind == "file_search_call":
            return tool(call_id, file_search_results(item["results"]), error=item.get("status") == "failed")
        if kind == "shell_call_output":
            return tool(call_id, _shell_output(item.get("output")))
        failed = kind == "apply_patch_call_output" and item.get("status") == "failed"
        return tool(call_id, self._output(item.get("output")), error=failed)

    def _interpreter(self, outputs: object) -> str | list[Wire]:
        """A code interpreter's outputs: its logs as text, its images as image parts."""
        parts: list[Wire] = []
        for output in outputs if isinstance(outputs, list) else []:
            if field_of(output, "type") == "logs":
                parts.append(text_part(text_of(output.get("logs"))))
            elif field_of(output, "type") == "image" and isinstance(output.get("url"), str):
                parts.append(image_part(output["url"]))
            else:
                self.report.skip(f"code interpreter output {field_of(output, 'type')!r}")
        return content(parts)

    def _agent_message(self, parts: object) -> Iterator[Wire]:
        """Another agent's message (Codex's sub-agents) as the user message of its text, as Codex
        sends it to a model that does not take agent messages; an encrypted one is counted."""
        listed = parts if isinstance(parts, list) else []
        if not listed or any(field_of(p, "type") != "input_text" for p in listed):
            self.report.skip("agent_message without plain text (encrypted)")
            return
        yield from self.flush()
        yield user("\n".join(text_of(p.get("text")) for p in listed))

    def _reference(self, ref: object, line: int | None) -> Iterator[Wire]:
        """The item an `item_reference` names, from the log's responses; one the log does not
        hold is an error, but for a reasoning item's (`rs_`), counted: it holds no text."""
        target = self.known.get(ref) if isinstance(ref, str) else None
        if target is not None and field_of(target, "type") != "item_reference":
            yield from self.item(target, line)
        elif isinstance(ref, str) and ref.startswith("rs_"):
            self.report.skip("item_reference to a reasoning item the log does not hold")
        else:
            raise self.report.error(
                line,
                f"item_reference {ref!r} names an item that no logged response holds; log each "
                "request with its response, or send the items themselves",
            )

    def _message(self, item: Mapping[str, Any], line: int | None) -> Iterator[Wire]:
        role, found = item.get("role"), item.get("content")
        if found is not None and not isinstance(found, str | list):
            kind = type(found).__name__
            raise self.report.error(line, f"a message's content is {kind}, not text or a list of parts")
        parts = self._parts(found)
        if role == "assistant":
            if self.listed:
                yield from self.flush()
            self.open = True
            self.texts.append(text_only(parts, self.report, "assistant"))
            return
        yield from self.flush()
        if role in {"system", "developer"}:
            yield system(text_only(parts, self.report, "system"))
        elif role == "user":
            yield user(parts)
        else:
            raise self.report.error(line, f"unknown message role {role!r}")

    def _output(self, value: object) -> str | list[Wire]:
        """A call's output: the string as recorded, or its content parts (text and images, as a
        message's), or a screenshot's image, or a structured output's `content` (or `output`)."""
        if isinstance(value, str):
            return value
        if isinstance(value, Mapping) and isinstance(value.get("image_url"), str):
            return [image_part(value["image_url"])]
        if isinstance(value, Mapping) and value.get("type") == "computer_screenshot":
            self.report.skip("screenshot given by file_id (the log does not hold its image)")
            return ""
        if isinstance(value, Mapping) and ("content" in value or "output" in value):
            return self._output(value.get("content") or value.get("output"))
        if isinstance(value, Mapping) and "type" in value:  # one content part, as a list of one
            return self._parts([value])
        if isinstance(value, list):
            return self._parts(value)
        return text_of(value)  # '' for null; a number, true or another object is no output

    def _parts(self, value: object) -> str | list[Wire]:
        if not isinstance(value, list):
            return text_of(value)
        parts: list[Wire] = []
        for part in value:
            kind = field_of(part, "type")
            if kind in {"input_text", "output_text", "text"}:
                parts.append(text_part(text_of(part.get("text"))))
            elif kind == "refusal":
                parts.append(text_part(text_of(part.get("refusal"))))
            elif kind == "input_image" and isinstance(part.get("image_url"), str):
                parts.append(image_part(part["image_url"]))
            else:
                self.report.skip(f"content part {kind!r}")
        return content(parts)
